/* rt_kernels_b.cu — the second translation unit of rt_api: nvcc gives it its own fatbin, so the
 * program registers two (tests/hostcudart/rt_api.cu). Written once with include/ash_kernel.h. */
#include "ash_kernel.h"

/* p[i] += v for i < n (C++-mangled, as most kernels are) */
ASH_KERNEL_CXX(rt_add, _Z6rt_addPiii, int *, p, int, v, int, n)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        p[i] += v;
}

#ifdef __CUDACC__
/* a second-fatbin launcher, so the main file need not see this kernel's declaration */
void rt_add_launch(int *p, int v, int n, cudaStream_t s) { rt_add<<<3, 32, 0, s>>>(p, v, n); }
#endif
