/* ash_kernel.h — write a CUDA kernel once; nvcc compiles it to PTX, cc to a host implementation.
 *
 * Under nvcc (__CUDACC__) the macros expand to ordinary __global__ functions. Under a C compiler
 * they expand to the hostcuda kernel ABI (DESIGN.md §6): an exported function
 *     void hostcuda_kernel_<SYMBOL>(const hostcuda_dims *dims, void **params)
 * that unpacks `params` (the launch's kernelParams, one pointer per argument) and runs the body
 * once per (block, thread), serially, in order x fastest. The header itself has no dependency on
 * hostcuda: the ABI is a contract that hostcuda resolves by name.
 *
 * Host-mode limits (state them in the kernel's comment if you rely on them): no __shared__
 * memory, no __syncthreads, no warp intrinsics; atomics are plain read-modify-write (the body runs
 * on one host thread). Device helpers are `ASH_DEVICE` functions taking what they need as arguments.
 *
 *   ASH_KERNEL(sgd_update, float *, p, const float *, g, float, lr, int, n) {
 *       int i = ASH_THREAD_ID();
 *       if (i < n) p[i] -= lr * g[i];
 *   }
 *   ASH_KERNEL_CXX(scale, _Z5scalePfif, float *, p, int, n, float, s) { ... }  // C++-mangled name
 */
#ifndef ASH_KERNEL_H
#define ASH_KERNEL_H

/* argument pairs (TYPE, NAME) -> "TYPE NAME, ..." and "*(TYPE *)params[i], ..." (up to 12) */
#define ASH__P1(t, n) t n
#define ASH__A1(i, t, n) *(t *)ash__params[i]
#define ASH__P2(t, n, ...) t n, ASH__P1(__VA_ARGS__)
#define ASH__P3(t, n, ...) t n, ASH__P2(__VA_ARGS__)
#define ASH__P4(t, n, ...) t n, ASH__P3(__VA_ARGS__)
#define ASH__P5(t, n, ...) t n, ASH__P4(__VA_ARGS__)
#define ASH__P6(t, n, ...) t n, ASH__P5(__VA_ARGS__)
#define ASH__P7(t, n, ...) t n, ASH__P6(__VA_ARGS__)
#define ASH__P8(t, n, ...) t n, ASH__P7(__VA_ARGS__)
#define ASH__P9(t, n, ...) t n, ASH__P8(__VA_ARGS__)
#define ASH__P10(t, n, ...) t n, ASH__P9(__VA_ARGS__)
#define ASH__P11(t, n, ...) t n, ASH__P10(__VA_ARGS__)
#define ASH__P12(t, n, ...) t n, ASH__P11(__VA_ARGS__)
#define ASH__A2(i, t, n, ...) *(t *)ash__params[i], ASH__A1(i + 1, __VA_ARGS__)
#define ASH__A3(i, t, n, ...) *(t *)ash__params[i], ASH__A2(i + 1, __VA_ARGS__)
#define ASH__A4(i, t, n, ...) *(t *)ash__params[i], ASH__A3(i + 1, __VA_ARGS__)
#define ASH__A5(i, t, n, ...) *(t *)ash__params[i], ASH__A4(i + 1, __VA_ARGS__)
#define ASH__A6(i, t, n, ...) *(t *)ash__params[i], ASH__A5(i + 1, __VA_ARGS__)
#define ASH__A7(i, t, n, ...) *(t *)ash__params[i], ASH__A6(i + 1, __VA_ARGS__)
#define ASH__A8(i, t, n, ...) *(t *)ash__params[i], ASH__A7(i + 1, __VA_ARGS__)
#define ASH__A9(i, t, n, ...) *(t *)ash__params[i], ASH__A8(i + 1, __VA_ARGS__)
#define ASH__A10(i, t, n, ...) *(t *)ash__params[i], ASH__A9(i + 1, __VA_ARGS__)
#define ASH__A11(i, t, n, ...) *(t *)ash__params[i], ASH__A10(i + 1, __VA_ARGS__)
#define ASH__A12(i, t, n, ...) *(t *)ash__params[i], ASH__A11(i + 1, __VA_ARGS__)
#define ASH__NPAIRS(...) ASH__NP(__VA_ARGS__, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, \
                                 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0)
#define ASH__NP(a1, b1, a2, b2, a3, b3, a4, b4, a5, b5, a6, b6, a7, b7, a8, b8, a9, b9, a10,   \
                b10, a11, b11, a12, b12, N, ...) N
#define ASH__CAT(a, b) ASH__CAT2(a, b)
#define ASH__CAT2(a, b) a##b
#define ASH__PARAMS(...) ASH__CAT(ASH__P, ASH__NPAIRS(__VA_ARGS__))(__VA_ARGS__)
#define ASH__ARGS(...) ASH__CAT(ASH__A, ASH__NPAIRS(__VA_ARGS__))(0, __VA_ARGS__)

#ifdef __CUDACC__

#define ASH_DEVICE __device__ static __forceinline__
#define ASH_KERNEL(name, ...) extern "C" __global__ void name(ASH__PARAMS(__VA_ARGS__))
#define ASH_KERNEL_CXX(name, mangled, ...) __global__ void name(ASH__PARAMS(__VA_ARGS__))
#define ASH_THREAD_ID() ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define ASH_THREAD_COUNT() ((long long)gridDim.x * blockDim.x)

#else /* host implementation for hostcuda */

typedef struct hostcuda_dim3 {
    unsigned int x, y, z;
} hostcuda_dim3;

/* What hostcuda passes to every host kernel. */
typedef struct hostcuda_dims {
    hostcuda_dim3 grid;
    hostcuda_dim3 block;
    unsigned int shared_bytes;
} hostcuda_dims;

typedef struct ash__thread {
    hostcuda_dim3 grid, block, bidx, tidx;   /* gridDim, blockDim, blockIdx, threadIdx */
} ash__thread;

#define ASH_DEVICE static inline
#define __restrict__ restrict
#define gridDim (ash__t->grid)
#define blockDim (ash__t->block)
#define blockIdx (ash__t->bidx)
#define threadIdx (ash__t->tidx)
#define ASH_THREAD_ID() ((long long)blockIdx.x * blockDim.x + threadIdx.x)
#define ASH_THREAD_COUNT() ((long long)gridDim.x * blockDim.x)

#define ASH__HOST_KERNEL(name, symbol, ...)                                                      \
    static void ash__body_##name(const ash__thread *ash__t __attribute__((unused)), ASH__PARAMS(__VA_ARGS__));       \
    __attribute__((visibility("default"))) void hostcuda_kernel_##symbol(                      \
        const hostcuda_dims *ash__d, void **ash__params);                                       \
    void hostcuda_kernel_##symbol(const hostcuda_dims *ash__d, void **ash__params)              \
    {                                                                                          \
        ash__thread t = {.grid = ash__d->grid, .block = ash__d->block};                         \
        for (t.bidx.z = 0; t.bidx.z < ash__d->grid.z; t.bidx.z++            )                 \
        for (t.bidx.y = 0; t.bidx.y < ash__d->grid.y; t.bidx.y++            )                 \
        for (t.bidx.x = 0; t.bidx.x < ash__d->grid.x; t.bidx.x++            )                 \
        for (t.tidx.z = 0; t.tidx.z < ash__d->block.z; t.tidx.z++            )             \
        for (t.tidx.y = 0; t.tidx.y < ash__d->block.y; t.tidx.y++            )             \
        for (t.tidx.x = 0; t.tidx.x < ash__d->block.x; t.tidx.x++            )             \
            ash__body_##name(&t, ASH__ARGS(__VA_ARGS__));                                      \
    }                                                                                          \
    static void ash__body_##name(const ash__thread *ash__t __attribute__((unused)), ASH__PARAMS(__VA_ARGS__))

#define ASH_KERNEL(name, ...) ASH__HOST_KERNEL(name, name, __VA_ARGS__)
#define ASH_KERNEL_CXX(name, mangled, ...) ASH__HOST_KERNEL(name, mangled, __VA_ARGS__)

#endif /* __CUDACC__ */
#endif /* ASH_KERNEL_H */
