/* inspect_kernels.cu — the shim's own scan of a synced buffer for NaN/Inf, written once
 * (include/ash_kernel.h): nvcc -> build/shim/inspect_kernels.ptx, embedded in libaccelshim.so by
 * sync/inspect_ptx.S and loaded through the REAL driver (sync/inspect.c); cc ->
 * build/shim/libash_inspect_kernels_host.so, the hostcuda implementations (HOSTCUDA_KERNEL_LIBS).
 * Host-mode limits respected: no shared memory, no atomics, no synchronisation. Pass 1 (count):
 * block b owns the contiguous chunk [b*C, (b+1)*C), C = ceil(n / grid), and its threads stride
 * through it by blockDim (coalesced on a GPU; on hostcuda, where threads run one after another,
 * a chunk stays in cache); every thread counts NaN and Inf in its elements from the bit pattern
 * (exponent all ones: mantissa != 0 is NaN, == 0 is Inf; the same test for f32, f16 and bf16
 * through the masks) and writes its own pair partial[2*tid], partial[2*tid+1]. Pass 2 (fold): T threads fold the
 * `nparts` pairs into T pairs at out[2*t]; the host adds those T pairs after one small copy.
 */
#include "ash_kernel.h"

/* pass 1's body, for either element width (p: the elements, widened to 32 bits for the test) */
#define ASH_INSPECT_COUNT_BODY \
    { \
        unsigned long long nan = 0, inf = 0; \
        long long chunk = (n + gridDim.x - 1) / gridDim.x, lo = (long long)blockIdx.x * chunk; \
        long long hi = lo + chunk < n ? lo + chunk : n; \
        for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) { \
            unsigned int v = p[i]; \
            if ((v & expmask) == expmask) { \
                if (v & mantmask) \
                    nan++; \
                else \
                    inf++; \
            } \
        } \
        long long t = ASH_THREAD_ID(); \
        partial[2 * t] = nan; \
        partial[2 * t + 1] = inf; \
    }

ASH_KERNEL(ash_inspect_k_count32, const unsigned int *, p, long long, n, unsigned int, expmask,
           unsigned int, mantmask, unsigned long long *, partial)
ASH_INSPECT_COUNT_BODY

ASH_KERNEL(ash_inspect_k_count16, const unsigned short *, p, long long, n, unsigned int, expmask,
           unsigned int, mantmask, unsigned long long *, partial)
ASH_INSPECT_COUNT_BODY

ASH_KERNEL(ash_inspect_k_fold, const unsigned long long *, partial, long long, nparts,
           unsigned long long *, out)
{
    unsigned long long nan = 0, inf = 0;
    for (long long i = ASH_THREAD_ID(); i < nparts; i += ASH_THREAD_COUNT()) {
        nan += partial[2 * i];
        inf += partial[2 * i + 1];
    }
    long long t = ASH_THREAD_ID();
    out[2 * t] = nan;
    out[2 * t + 1] = inf;
}
