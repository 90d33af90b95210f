/* allreduce_kernels.cu — the one kernel of bench/allreduce_app.c, written once (include/ash_kernel.h):
 * nvcc builds build/bench/allreduce_kernels.ptx, cc builds the hostcuda implementation
 * (build/bench/liballreduce_kernels_host.so). Its launch is the benchmark's sync point: the policy
 * names it with `gradients: at: "ash_bench_consume", buffer: {arg: 0, count_arg: 1}`.
 * It only reads the last gradient (one thread), so a timed iteration is the all-reduce, not the kernel.
 */
#include "ash_kernel.h"

ASH_KERNEL(ash_bench_consume, const float *, grads, int, n, float *, out)
{
    if (ASH_THREAD_ID() == 0 && n > 0)
        out[0] = grads[n - 1];
}
