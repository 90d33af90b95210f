/* test_kernels.cu — kernels for hostcuda's own tests, written once with include/ash_kernel.h:
 * nvcc makes build/tests/hostcuda/test_kernels.ptx (what the tests load), cc makes the host
 * implementations in libtest_kernels_host.so (what hostcuda runs). Host-mode limits apply (no
 * shared memory, no __syncthreads). hc_no_host_impl exists only in the PTX, on purpose: the tests
 * check that asking for it fails with CUDA_ERROR_NOT_FOUND.
 */
#include "ash_kernel.h"
#ifndef __CUDACC__
#include <time.h>
#endif

ASH_KERNEL(hc_fill, float *, out, float, value, int, n)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        out[i] = value;
}

ASH_KERNEL(hc_saxpy, float *, y, const float *, x, float, a, int, n)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* one parameter of each size, to check offsets and value copies */
ASH_KERNEL(hc_mixed, long long *, out, char, c, short, s, int, i, double, d, long long, ll)
{
    if (ASH_THREAD_ID() == 0) {
        out[0] = c;
        out[1] = s;
        out[2] = i;
        out[3] = (long long)d;
        out[4] = ll;
    }
}

/* C++ linkage: the PTX entry is the mangled name */
ASH_KERNEL_CXX(hc_scale, _Z8hc_scalePfif, float *, p, int, n, float, s)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        p[i] *= s;
}

/* sleeps, then stores value: lets the stream tests observe work that has not finished yet */
ASH_KERNEL(hc_slow_store, int *, p, int, value, int, usec)
{
    if (ASH_THREAD_ID() == 0) {
#ifdef __CUDACC__
        for (int k = 0; k < usec; k++)
            __nanosleep(1000);
#else
        struct timespec ts = {usec / 1000000, (long)(usec % 1000000) * 1000};
        nanosleep(&ts, 0);
#endif
        p[0] = value;
    }
}

/* counts its own threads: out[0] += gridDim*blockDim over all dimensions */
ASH_KERNEL(hc_count_threads, int *, out)
{
    (void)blockIdx;
    out[0] += 1;
}

#ifdef __CUDACC__
extern "C" __global__ void hc_no_host_impl(int *p)
{
    *p = 1;
}
#endif
