/* fakecuda.c — build/bench/fakecuda/libcuda.so.1, a bench-only "driver" whose cuLaunchKernel does
 * nothing but return CUDA_SUCCESS, so that launch_overhead can show the shim's own cost per launch
 * (hostcuda's launch queues work to a thread and hides it). Exports just what the benchmark and
 * the shim's init touch; everything else is absent (the shim answers NOT_SUPPORTED for it). */
#include <cuda.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                    unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params,
                                    void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s, (void)params, (void)extra;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}
