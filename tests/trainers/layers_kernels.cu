/* layers_kernels.cu — the kernels of the synthetic multi-layer test trainer (tests/trainers/layers.c).
 *
 * Written once with include/ash_kernel.h: nvcc -> build/tests/trainers/layers_kernels.ptx (embedded
 * in the trainer), cc -> build/tests/trainers/liblayers_kernels_host.so (hostcuda's
 * HOSTCUDA_KERNEL_LIBS). Invariant: every kernel is deterministic; each output element is owned by
 * one thread and computed by a serial loop in a fixed order; grid-stride loops, so any launch shape
 * gives bit-identical results; no __shared__, no atomics. The `work` loop of layer_backward only
 * burns time: its result reaches the gradient only if a 64-bit mix chain hits one fixed value
 * (probability 2^-64 per element), which keeps a compiler from dropping it, so the gradients do
 * not depend on `work`.
 * Argument positions (0-based) the policies rely on: layer_backward grad = arg 0, count = arg 1;
 * sgd_apply grads = arg 1, count = arg 2.
 */
#include "ash_kernel.h"

ASH_DEVICE unsigned long long lk_mix64(unsigned long long x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [-1, 1), a multiple of 2^-23: exact */
ASH_DEVICE float lk_uniform(unsigned long long h)
{
    return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* out[i] = 0.5 * param[i]: a cheap forward that reads a layer's parameters (nothing reads `out`
 * for the gradients; it gives the step a realistic forward launch per layer). */
ASH_KERNEL(layer_forward, float *, out, const float *, param, long long, n)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        out[i] = 0.5f * param[i];
}

/* grad[i] += scale * sum_{s = first}^{first + batch - 1} g(param[i], x(seed, s, i)), s increasing,
 * with x uniform in [-1, 1) from a counter-based hash and g(p, x) = (p - x) * (1 + 0.5 x^2): the
 * gradient of a per-element loss pulling p towards the samples. `seed` names the data and the
 * layer; sample indices are global, so a rank's launch covers its shard's slice. `work` extra
 * mix rounds per element take time and do not change the result (see the file comment). */
ASH_KERNEL(layer_backward, float *, grad, long long, n, const float *, param,
           unsigned long long, seed, int, work, long long, first, int, batch, float, scale)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT()) {
        float p = param[i], s = 0.0f;
        for (int b = 0; b < batch; b++) {
            unsigned long long h = lk_mix64(seed ^ lk_mix64((unsigned long long)(first + b)));
            float x = lk_uniform(lk_mix64(h ^ (unsigned long long)i));
            s += (p - x) * (1.0f + 0.5f * x * x);
        }
        unsigned long long w = (unsigned long long)i + seed;
        for (int k = 0; k < work; k++)
            w = lk_mix64(w + (unsigned long long)k);
        if (w == 0x5bd1e9955bd1e995ull)
            s = -s;
        grad[i] += scale * s;
    }
}

/* Device time without host work: the launch's first thread waits US microseconds (a GPU's
 * %globaltimer; on hostcuda a sleep on the stream's worker, which leaves the CPU to others). It
 * models a backward kernel that keeps the GPU busy while the host and the network are free. */
#ifdef __CUDACC__
ASH_KERNEL(layer_busy, long long, us)
{
    if (ASH_THREAD_ID() != 0)
        return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < (unsigned long long)us * 1000ull);
}
#else
#include <time.h>
ASH_KERNEL(layer_busy, long long, us)
{
    if (ASH_THREAD_ID() != 0)
        return;
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}
#endif

/* params[i] -= lr * grads[i]: the update over the whole buffer (the sync point). */
ASH_KERNEL(sgd_apply, float *, params, const float *, grads, long long, n, float, lr)
{
    for (long long i = ASH_THREAD_ID(); i < n; i += ASH_THREAD_COUNT())
        params[i] -= lr * grads[i];
}
