// coop_kernels.cu — kernels for test_hc_coop: grid-wide sync (cooperative groups), device
// malloc/free (and new/delete, which nvcc lowers to them), deep recursion for the stack limit,
// device printf for the printf FIFO limit. nvcc -ptx; hostcuda interprets them (no host twins).
#include <cooperative_groups.h>
#include <stdio.h>

namespace cg = cooperative_groups;

// Each round every thread takes the value one block further on (another CTA's) and adds 1; a
// grid barrier separates the read from the write. After `rounds` rounds thread i holds
// buf0[(i + rounds * blockDim.x) % n] + rounds; a missing barrier mixes rounds.
extern "C" __global__ void co_shift(int *buf, int rounds)
{
    cg::grid_group g = cg::this_grid();
    int n = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < rounds; r++) {
        int v = buf[(i + blockDim.x) % n] + 1;
        g.sync();
        buf[i] = v;
        g.sync();
    }
}

// the same with CTA barriers only: the control that shows the check sees a missing grid barrier
extern "C" __global__ void co_shift_cta(int *buf, int rounds)
{
    int n = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < rounds; r++) {
        int v = buf[(i + blockDim.x) % n] + 1;
        __syncthreads();
        buf[i] = v;
        __syncthreads();
    }
}

// each thread: malloc(bytes), fill it with its index, keep the pointer (NULL when exhausted)
extern "C" __global__ void co_malloc(unsigned long long *ptrs, unsigned bytes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *p = (unsigned *)malloc(bytes);
    if (p)
        for (unsigned k = 0; k < bytes / 4; k++)
            p[k] = (unsigned)i * 1000u + k;
    ptrs[i] = (unsigned long long)p;
}

// a later launch: check what co_malloc wrote (bad[i] = words that differ), then free it
extern "C" __global__ void co_check_free(const unsigned long long *ptrs, unsigned bytes, int *bad)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *p = (unsigned *)ptrs[i];
    int b = 0;
    if (p) {
        for (unsigned k = 0; k < bytes / 4; k++)
            b += p[k] != (unsigned)i * 1000u + k;
        free(p);
    }
    bad[i] = b;
}

// free of an address malloc did not return (one thread), and free of a pointer twice
extern "C" __global__ void co_free_bad(unsigned long long a)
{
    if (threadIdx.x == 3)
        free((void *)a);
}

extern "C" __global__ void co_free_twice(int *out)
{
    int *p = (int *)malloc(64);
    out[0] = p != 0;
    free(p);
    free(p);
}

// new[] / delete[] in one thread: nvcc calls malloc / free
extern "C" __global__ void co_new(int *out, int n)
{
    int *a = new int[n];
    if (!a) {
        out[0] = -1;
        return;
    }
    for (int k = 0; k < n; k++)
        a[k] = k * k;
    int s = 0;
    for (int k = 0; k < n; k++)
        s += a[k];
    delete[] a;
    out[0] = s;
}

// recursion `depth` deep (the call stack grows with it; not a loop nvcc could turn it into):
// out[t] = f(depth) with f(0) = 0, f(d) = 3 f(d - 1) + d (mod 2^32)
__device__ __noinline__ unsigned co_rec(volatile int *scratch, int d)
{
    if (d == 0)
        return 0;
    scratch[d & 7] = d;
    unsigned r = co_rec(scratch, d - 1);
    return r * 3u + (unsigned)scratch[d & 7];
}

extern "C" __global__ void co_deep(unsigned *out, int depth)
{
    out[threadIdx.x] = co_rec((volatile int *)(out + 32 + 8 * threadIdx.x), depth);   /* out: 32 + 32 * 8 */
}

extern "C" __global__ void co_print(int lines)
{
    for (int k = 0; k < lines; k++)
        printf("line %03d of the printf FIFO test\n", k);
}

// virtual functions (vtables of function addresses, indirect calls) on objects new'd on the
// device: even threads get a Square, odd ones a Triple, so one warp's call has two targets
struct Shape {
    __device__ virtual int area(int x) const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    __device__ int area(int x) const override { return x * x; }
};
struct Triple : Shape {
    int k;
    __device__ Triple(int k_) : k(k_) {}
    __device__ int area(int x) const override { return 3 * x + k; }
};

extern "C" __global__ void co_virtual(int *out)
{
    int t = threadIdx.x;
    Shape *s = (t & 1) ? (Shape *)new Triple(t) : (Shape *)new Square();
    out[t] = s ? s->area(t + 1) : -1;
    delete s;
}

// a call through a function pointer the kernel picks, and through a bad one (bad != 0)
__device__ __noinline__ int co_twice(int x) { return 2 * x; }
__device__ __noinline__ int co_negate(int x) { return -x; }
extern "C" __global__ void co_fnptr(int *out, unsigned long long bad)
{
    int t = threadIdx.x;
    int (*f)(int) = (t % 3 == 0) ? co_negate : co_twice;
    if (bad)
        f = (int (*)(int))bad;
    out[t] = f(t + 10);
}
