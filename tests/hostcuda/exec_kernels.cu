/* exec_kernels.cu — kernels with no host twin, run by hostcuda's PTX interpreter in
 * tests/hostcuda/test_hc_exec.c (and test_hc_exec.sh): barriers and shared memory, divergence,
 * warp votes and shuffles, atomics across CTAs, dynamic shared memory, and the faults the
 * interpreter must report (out of bounds, barrier deadlock, assert, a kernel that never ends).
 * Integer data throughout, so every expected value is exact. */
#include <assert.h>
#include <cuda_bf16.h>
#include <stdio.h>

/* per block: sum of x[i] over the block's slice, through shared memory and shuffles */
extern "C" __global__ void ex_reduce(const int *x, int *out, int n)
{
    __shared__ int part[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        int w = threadIdx.x < (blockDim.x + 31) / 32 ? part[threadIdx.x] : 0;
        for (int o = 16; o > 0; o >>= 1)
            w += __shfl_xor_sync(0xffffffffu, w, o);
        if (threadIdx.x == 0)
            out[blockIdx.x] = w;
    }
}

/* divergent loops of different trip counts, then a barrier, then a neighbour read */
extern "C" __global__ void ex_diverge(int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x, acc = 0;
    if (t % 3 == 0) {
        for (int k = 0; k < t; k++)
            acc += k;
    } else if (t % 3 == 1) {
        for (int k = 0; k < 5; k++)
            acc -= t;
    } else {
        acc = t * t;
    }
    s[t] = acc;
    __syncthreads();
    out[t] = s[(t + 1) % blockDim.x] - acc;
}

/* votes, ballots, activemask and match in divergent code */
extern "C" __global__ void ex_vote(unsigned *out)
{
    int t = threadIdx.x;
    unsigned b = __ballot_sync(0xffffffffu, t & 1);
    int all = __all_sync(0xffffffffu, t < 32);
    int any = __any_sync(0xffffffffu, t == 7);
    unsigned act = 0;
    if (t < 10)
        act = __activemask();
    unsigned m = __match_any_sync(0xffffffffu, t / 8);
    out[t * 5 + 0] = b;
    out[t * 5 + 1] = (unsigned)all;
    out[t * 5 + 2] = (unsigned)any;
    out[t * 5 + 3] = act;
    out[t * 5 + 4] = m;
}

/* atomics from every thread of every block */
extern "C" __global__ void ex_atomics(unsigned *ctr, int *mx, float *fsum, unsigned *wrap, unsigned long long *u64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(ctr, 1u);
    atomicMax(mx, (i * 7919) % 1000);
    atomicAdd(fsum, 0.5f);
    atomicInc(wrap, 9u);
    atomicAdd(u64, (unsigned long long)i << 20);
    __shared__ unsigned sh;
    if (threadIdx.x == 0)
        sh = 0;
    __syncthreads();
    atomicAdd(&sh, 2u);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(ctr + 1, sh);
}

/* dynamic shared memory: reverse a block's slice */
extern "C" __global__ void ex_dynshared(const int *x, int *y)
{
    extern __shared__ int buf[];
    int t = threadIdx.x, b = blockIdx.x * blockDim.x;
    buf[t] = x[b + t];
    __syncthreads();
    y[b + t] = buf[blockDim.x - 1 - t];
}

/* faults */
extern "C" __global__ void ex_oob(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 37)
        p[n + 3] = 1.0f;   /* 12 bytes after the end of an n-float allocation */
}

extern "C" __global__ void ex_deadlock(int *p)
{
    /* warp 0 waits at barrier 1, warp 1 at barrier 2: each for 64 threads that never come */
    if (threadIdx.x < 32)
        asm volatile("bar.sync 1, 64;");
    else
        asm volatile("bar.sync 2, 64;");
    p[threadIdx.x] = 1;
}

extern "C" __global__ void ex_assert(const int *p)
{
    assert(p[threadIdx.x] == 0);
}

extern "C" __global__ void ex_printf(int base)
{
    printf("thread %d of block %d: %d %.2f\n", threadIdx.x, blockIdx.x, base + threadIdx.x, 0.25 * threadIdx.x);
}

extern "C" __global__ void ex_spin(volatile int *flag)
{
    while (*flag == 0)
        ;
}

/* device functions that stay calls: recursion to different depths per lane, a struct by value */
__device__ __noinline__ int ex_fib(int n)
{
    return n < 2 ? n : ex_fib(n - 1) + ex_fib(n - 2);
}

struct ex_pair {
    int a;
    float b;
};

__device__ __noinline__ ex_pair ex_mkpair(int x, float y)
{
    ex_pair p;
    p.a = x * 2 + 1;
    p.b = y + 1.0f;
    return p;
}

extern "C" __global__ void ex_calls(int *out, float *fout)
{
    int t = threadIdx.x;
    out[t] = ex_fib(t % 12);
    ex_pair p = ex_mkpair(t, 0.5f * t);
    out[32 + t] = p.a;
    fout[t] = p.b;
}

/* an elementwise kernel for the speed figure (test_hc_exec PTX bench) */
extern "C" __global__ void ex_axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* a grid-wide barrier (cooperative groups), launched with cuLaunchCooperativeKernel */
#include <cooperative_groups.h>
extern "C" __global__ void ex_gridsync(int *buf, int *out)
{
    cooperative_groups::grid_group g = cooperative_groups::this_grid();
    int n = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = 3 * i;
    g.sync();
    out[i] = buf[(i + blockDim.x) % n];
}

/* bf16 fused multiply-add with .relu (negative results become +0) */
extern "C" __global__ void ex_relu(const __nv_bfloat16 *a, __nv_bfloat16 *o)
{
    int t = threadIdx.x;
    o[t] = __hfma_relu(a[t], a[t + 32], a[t + 64]);
}
