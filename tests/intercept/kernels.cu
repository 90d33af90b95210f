/* kernels.cu — the kernels the intercept tests launch (written once: PTX by nvcc, host by cc).
 * ash_itest_fill: p[i] = v for i < n. */
#include "ash_kernel.h"

ASH_KERNEL(ash_itest_fill, int *, p, int, v, int, n)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        p[i] = v;
}
