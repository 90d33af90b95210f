/* rt_kernels_a.cu — kernels of the first fatbin of rt_api (tests/hostcudart/rt_api.cu), written
 * once with include/ash_kernel.h: nvcc puts them in rt_api's fatbin, cc makes their host twins
 * (librt_kernels_host.so, HOSTCUDA_KERNEL_LIBS). Grid-stride loops: any launch shape is correct. */
#include "ash_kernel.h"

/* p[i] = v + i for i < n */
ASH_KERNEL(rt_fill, int *, p, int, v, int, n)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        p[i] = v + (int)i;
}

/* writes through the pointer it is given: with a bad one, a fault on the device (rt_api fault).
 * Run from its PTX only (a host twin would take the host process down with it). */
ASH_KERNEL(rt_poke, int *, p, int, v)
{
    if (ASH_THREAD_ID() == 0)
        p[0] = v;
}
