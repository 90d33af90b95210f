/* kernels.cu — the kernels the intercept tests launch (written once: PTX by nvcc, host by cc).
 * ash_itest_fill: p[i] = v for i < n; ash_itest_grad / ash_itest_sgd: vmm_train.c and graph_train.c. */
#include "ash_kernel.h"

ASH_KERNEL(ash_itest_fill, int *, p, int, v, int, n)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        p[i] = v;
}

/* vmm_train.c's step: a gradient that depends on the shard (so ranks differ until they are
 * synchronised), and the SGD update the policy's sync point sits before. */
ASH_KERNEL(ash_itest_grad, float *, g, const float *, w, int, n, int, shard, int, step)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        g[i] = 0.25f * w[i] + 0.01f * (float)((i * 7 + shard * 13 + step * 3) % 11) - 0.05f;
}

ASH_KERNEL(ash_itest_sgd, float *, w, const float *, g, int, n, float, lr)
{
    long long i = ASH_THREAD_ID();
    if (i < n)
        w[i] -= lr * g[i];
}
