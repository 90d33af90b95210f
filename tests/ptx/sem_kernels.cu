/* sem_kernels.cu — kernels for tests/ptx/test_ptx_sem.c: the SIMT semantics a CUDA program relies
 * on, each written in ordinary CUDA C++ (what nvcc emits for it is what the interpreter must run):
 * special registers, warp shuffles (every mode, segment widths, the predicate output), votes,
 * match, redux, barriers (aligned, named with a thread count, with exited threads), atomics on
 * global and shared memory, divergence and reconvergence, recursion, local arrays, structs by
 * value, dynamic shared memory and initialised module globals. Results go to plain arrays the
 * test compares with a C model. Built with nvcc -ptx -arch=compute_90 (bf16x2 atomics); PTX only.
 */
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define TID (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))
#define BID (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))
#define NTH (blockDim.x * blockDim.y * blockDim.z)
#define GTID (BID * NTH + TID)

/* 16 words per thread: tid.xyz, ntid.xyz, ctaid.xyz, nctaid.xyz, laneid, lanemask_lt, _le, _eq */
extern "C" __global__ void s_special(unsigned *out)
{
    unsigned *o = out + 16 * GTID, lane, lt, le, eq, gt, ge;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
    asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
    asm("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
    o[0] = threadIdx.x, o[1] = threadIdx.y, o[2] = threadIdx.z;
    o[3] = blockDim.x, o[4] = blockDim.y, o[5] = blockDim.z;
    o[6] = blockIdx.x, o[7] = blockIdx.y, o[8] = blockIdx.z;
    o[9] = gridDim.x, o[10] = gridDim.y, o[11] = gridDim.z;
    o[12] = lane, o[13] = lt, o[14] = le;
    unsigned smid, nsmid, warpid, nwarpid;
    unsigned long long c0, c1, g0, g1;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsmid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
    asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(nwarpid));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    /* o[15]: bit 0 smid < nsmid, 1 warpid < nwarpid, 2 clock64 monotonic, 3 globaltimer monotonic,
     * 4 lanemask_eq = 1 << laneid, 5 lanemask_gt = ~lanemask_le, 6 lanemask_ge = ~lanemask_lt */
    o[15] = (smid < nsmid) | (warpid < nwarpid) << 1 | (c1 >= c0) << 2 | (g1 >= g0) << 3 |
            (eq == 1u << lane) << 4 | (gt == ~le) << 5 | (ge == ~lt) << 6;
}

/* shuffles: per thread 12 results (value, predicate) for idx/up/down/bfly at widths 32, 8 */
extern "C" __global__ void s_shfl(const int *in, int *out, int delta)
{
    int t = GTID, v = in[t], *o = out + 24 * t, k = 0;
    o[k++] = __shfl_sync(0xffffffff, v, (threadIdx.x * 7 + delta) & 31);
    o[k++] = __shfl_sync(0xffffffff, v, delta + 3, 8);
    o[k++] = __shfl_up_sync(0xffffffff, v, delta);
    o[k++] = __shfl_up_sync(0xffffffff, v, delta, 8);
    o[k++] = __shfl_down_sync(0xffffffff, v, delta);
    o[k++] = __shfl_down_sync(0xffffffff, v, delta, 16);
    o[k++] = __shfl_xor_sync(0xffffffff, v, delta);
    o[k++] = __shfl_xor_sync(0xffffffff, v, delta, 4);
    k += 8;   /* o[8..15]: the predicate forms, written by s_shfl_pred */
    /* a 64-bit value through two shuffles, and a float */
    long long w = ((long long)v << 32) | (unsigned)(v * 3);
    long long ws = __shfl_down_sync(0xffffffff, w, 1);
    o[k++] = (int)(ws >> 32), o[k++] = (int)ws;
    float f = __shfl_xor_sync(0xffffffff, (float)v * 0.5f, 16);
    o[k++] = __float_as_int(f);
    for (; k < 24; k++)
        o[k] = 0;
}

/* the predicate outputs of shfl.sync, written out in PTX: o[8..15] of s_shfl's layout */
extern "C" __global__ void s_shfl_pred(const int *in, int *out, int delta)
{
    int t = GTID, v = in[t], *o = out + 24 * t, k = 8;
    int r, p;
    asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, 0, 0xffffffff; selp.s32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(v), "r"(delta));
    o[k++] = r, o[k++] = p;
    asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, 0x1f, 0xffffffff; selp.s32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(v), "r"(delta));
    o[k++] = r, o[k++] = p;
    asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, 0x181f, 0xffffffff; selp.s32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(v), "r"(delta + 5));
    o[k++] = r, o[k++] = p;
    asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, 0x1c1f, 0xffffffff; selp.s32 %1, 1, 0, q; }"
                 : "=r"(r), "=r"(p) : "r"(v), "r"(delta));
    o[k++] = r, o[k++] = p;
}

/* a shfl.sync that reads lanes not executing it (cuda-samples' reduction, reduce7): lanes 0..7 of
 * each warp reduce with mask 0xff and offsets 16..1, so offsets 16 and 8 (and lanes 4..7 at 4)
 * read lanes that branched away; a GPU returns 0 for them in practice */
extern "C" __global__ void s_shfl_inactive(const int *in, int *out)
{
    int t = GTID, v = in[t];
    out[t] = -1;
    if ((threadIdx.x & 31) < 8) {
        for (int d = 16; d > 0; d >>= 1)
            v += __shfl_down_sync(0xff, v, d);
        out[t] = v;
    }
}

/* votes, match, redux; the even lanes of odd warps branch off first (divergent votes) */
extern "C" __global__ void s_vote(const int *in, unsigned *out)
{
    int t = GTID, v = in[t];
    unsigned *o = out + 12 * t;
    o[0] = __all_sync(0xffffffff, v > 0);
    o[1] = __any_sync(0xffffffff, v > 100);
    o[2] = __ballot_sync(0xffffffff, v & 1);
    o[3] = 0;   /* vote.uni: s_vote_uni */
    o[4] = __match_any_sync(0xffffffff, v % 5);
    int pred;
    o[5] = __match_all_sync(0xffffffff, v / 1000, &pred);
    o[6] = pred;
    o[7] = __reduce_add_sync(0xffffffff, (unsigned)v);
    o[8] = __reduce_max_sync(0xffffffff, (unsigned)v);
    o[9] = __reduce_or_sync(0xffffffff, (unsigned)v);
    if ((threadIdx.x >> 5) & 1 && !(threadIdx.x & 1)) {
        o[10] = __activemask();
        o[11] = __ballot_sync(0x55555555, v & 2);
    } else {
        o[10] = __activemask();
        o[11] = 0;
    }
}

/* vote.sync.uni, written out in PTX (nvcc emits no uni form): o[3] of s_vote's layout */
extern "C" __global__ void s_vote_uni(const int *in, unsigned *out)
{
    int t = GTID, v = in[t];
    unsigned uni;
    asm volatile("{ .reg .pred p, q; setp.gt.s32 p, %1, 50; vote.sync.uni.pred q, p, 0xffffffff; selp.u32 %0, 1, 0, q; }"
                 : "=r"(uni) : "r"(v));
    out[12 * t + 3] = uni;
}

/* barriers: a shared rotate after __syncthreads; warps 0-1 meet on barrier 1 with a count of 64
 * while the others meet on barrier 2 with the rest; then the upper half of the block exits and
 * the lower half still meets at barrier.sync 0 (exited threads no longer count) */
extern "C" __global__ void s_barrier(const int *in, int *out)
{
    __shared__ int s[1024];
    __shared__ int t1[1024];
    __shared__ int u[1024];
    unsigned t = threadIdx.x, n = blockDim.x;
    int *o = out + 4 * (blockIdx.x * n + t);
    s[t] = in[blockIdx.x * n + t];
    __syncthreads();
    o[0] = s[(t + 1) % n];
    t1[t] = s[t] * 2;
    if (t < 64) {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        o[1] = t1[63 - t];
    } else {
        asm volatile("barrier.sync 2, %0;" ::"r"(n - 64) : "memory");
        o[1] = t1[64 + (t - 64 + 1) % (n - 64)];
    }
    if (t >= n / 2)
        return;
    u[t] = s[t] + 1000;
    asm volatile("barrier.sync 0;" ::: "memory");
    o[2] = u[n / 2 - 1 - t];
    __syncthreads();
    o[3] = __syncthreads_count(u[t] & 1) + 10000 * __syncthreads_or(u[t] == 1000 + 7);
}

/* atomics: every thread adds to global and shared counters; shared totals are folded into gl[] */
struct atom_out {
    int add_s32, min_s32, max_s32, and_b, or_b, xor_b;
    unsigned add_u32, inc_u32, dec_u32, exch_sum_lo, cas_wins, min_u32, max_u32;
    unsigned long long add_u64, min_u64, max_u64;
    long long min_s64, max_s64;
    float add_f32;
    double add_f64;
    __half2 add_h2;
    __nv_bfloat162 add_bh2;
};
extern "C" __global__ void s_atomics(struct atom_out *g, const int *in, int *slots, int nslots, int *fold,
                                     unsigned long long *exch_sum, int shared_too)
{
    __shared__ struct atom_out sh;
    int t = GTID, v = in[t];
    if (threadIdx.x == 0) {
        sh.add_s32 = 0, sh.add_f32 = 0, sh.add_u64 = 0, sh.inc_u32 = 0, sh.max_s32 = -2147483647 - 1;
        sh.add_f64 = 0, sh.cas_wins = 0;
    }
    __syncthreads();
    struct atom_out *targets[2] = {g, &sh};
    for (int k = 0; k < 1 + shared_too; k++) {
        struct atom_out *a = targets[k];
        atomicAdd(&a->add_s32, v);
        atomicAdd(&a->add_f32, (float)(v % 64));
        atomicAdd(&a->add_f64, (double)v * 0.25);
        atomicAdd(&a->add_u64, (unsigned long long)v << 20);
        atomicInc(&a->inc_u32, 6);
        atomicMax(&a->max_s32, v * 37 % 1001 - 500);
    }
    atomicSub(&g->add_u32, (unsigned)v);
    atomicMin(&g->min_s32, v * 37 % 1001 - 500);
    atomicMin(&g->min_u32, (unsigned)(v * 7919));
    atomicMax(&g->max_u32, (unsigned)(v * 7919));
    atomicMin(&g->min_u64, (unsigned long long)v * 0x100000001ull);
    atomicMax(&g->max_u64, (unsigned long long)v * 0x100000001ull);
    atomicMin(&g->min_s64, -(long long)v * 0x10000ll);
    atomicMax(&g->max_s64, (long long)v * 0x10000ll);
    atomicDec(&g->dec_u32, 9);
    atomicAnd(&g->and_b, ~(1 << (v % 31)));
    atomicOr(&g->or_b, 1 << (v % 29));
    atomicXor(&g->xor_b, v);
    unsigned old = atomicExch(&g->exch_sum_lo, (unsigned)t);
    atomicAdd(exch_sum, (unsigned long long)old);
    if (atomicCAS(&slots[t % nslots], -1, t) == -1)
        atomicAdd(&g->cas_wins, 1u);
    atomicAdd(&g->add_h2, __halves2half2(__float2half((float)(v % 8)), __float2half(1.0f)));
    if (shared_too && threadIdx.x < 32) {
        int c = atomicCAS(&sh.cas_wins, 0u, 1u);
        (void)c;
    }
    __syncthreads();
    if (shared_too && threadIdx.x == 0) {
        /* the shared totals, one block's worth each */
        int *f = fold + 8 * BID;
        f[0] = sh.add_s32, f[1] = __float_as_int(sh.add_f32), f[2] = (int)(sh.add_u64 >> 20);
        f[3] = (int)sh.inc_u32, f[4] = sh.max_s32, f[5] = (int)sh.cas_wins, f[6] = (int)(sh.add_f64 * 4.0);
        f[7] = 0;
    }
}

/* bf16x2 atomic add on its own (low: 1 where v % 4 == 0, high: 0.5) */
extern "C" __global__ void s_atomic_bf16x2(__nv_bfloat162 *g, const int *in)
{
    int v = in[GTID];
    atomicAdd(g, __floats2bfloat162_rn(v % 4 == 0 ? 1.0f : 0.0f, 0.5f));
}

/* divergence: nested branches by lane, per-lane trip counts, early return, warp reduction */
extern "C" __global__ void s_diverge(const int *in, int *out)
{
    int t = GTID, lane = threadIdx.x & 31, v = in[t];
    int *o = out + 6 * t;
    int a = 0;
    if (lane & 1) {
        if (lane % 3 == 0)
            a = v * 3;
        else
            a = v + 1;
    } else {
        for (int k = 0; k < lane; k++)
            a += k ^ v;
        if (a & 4)
            a = -a;
    }
    o[0] = a;
    int s = 0;
    for (int k = 0; k < (v & 15); k++) {   /* per-lane trip count */
        if (k == 11)
            break;
        s += k * lane;
    }
    o[1] = s;
    unsigned m = __activemask();
    o[2] = (int)m;
    /* warp-synchronous tree reduction */
    int r = v;
    for (int d = 16; d > 0; d >>= 1)
        r += __shfl_down_sync(0xffffffff, r, d);
    o[3] = __shfl_sync(0xffffffff, r, 0);
    o[4] = 0, o[5] = 0;
    if (lane >= 20)
        return;   /* early exit: lanes 20..31 leave */
    unsigned act = __activemask();
    int q = __reduce_add_sync(act, (unsigned)v);
    o[4] = (int)act;
    o[5] = q;
}

/* recursion, a local array indexed at run time, and a struct by value */
struct sparam {
    int a;
    double b;
    char c;
    float v[3];
    long long w;
};
__device__ __noinline__ int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
__device__ __noinline__ long long ack_sum(int depth, long long acc)
{
    if (depth == 0)
        return acc;
    return ack_sum(depth - 1, acc * 3 + depth);
}
extern "C" __global__ void s_calls(const int *in, long long *out, struct sparam p)
{
    int t = GTID, v = in[t];
    long long *o = out + 8 * t;
    o[0] = fib(v % 16);
    o[1] = ack_sum(v % 40, 1);
    int loc[64];
    for (int i = 0; i < 64; i++)
        loc[(i * 7 + v) & 63] = i * i - v;
    o[2] = loc[v & 63] + loc[(v * 5) & 63];
    o[3] = p.a + t, o[4] = (long long)(p.b * 4.0), o[5] = p.c;
    o[6] = (long long)(p.v[0] + p.v[1] * 10 + p.v[2] * 100), o[7] = p.w ^ t;
}

/* dynamic shared memory: each block reverses its slice of n elements in extern shared memory */
extern "C" __global__ void s_dynshared(const float *in, float *out, int n)
{
    extern __shared__ float dyn[];
    const float *src = in + blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        dyn[i] = src[i];
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[blockIdx.x * n + i] = dyn[n - 1 - i] * 2.0f;
}

/* module globals with initialisers: read, then updated; the host reads them via cuModuleGetGlobal */
__device__ int g_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ float g_scale = 2.5f;
__constant__ int c_bias[4] = {100, 200, 300, 400};
__device__ unsigned long long g_counter;
extern "C" __global__ void s_globals(int *out)
{
    int t = GTID;
    out[t] = (int)(g_table[t & 7] * g_scale) + c_bias[t & 3];
    atomicAdd(&g_counter, 1ull);
}

/* generic addressing: one pointer that points into shared, global or local memory by lane, used
 * through generic ld/st (cvta); read-only loads through the non-coherent path (__ldg: ld.global.nc)
 * and 16-byte vector loads and stores (float4) */
extern "C" __global__ void s_generic(const float4 *in, float4 *out, float *gen)
{
    __shared__ float sh[256];
    float loc[4];
    int t = threadIdx.x, g = GTID;
    float4 v = __ldg(&in[g]);
    sh[t] = v.x;
    loc[t & 3] = v.y;
    gen[g] = v.z;
    __syncthreads();
    volatile float *p = (t % 3 == 0) ? &sh[t] : (t % 3 == 1) ? &gen[g] : &loc[t & 3];
    float r = *p;
    *p = r * 2.0f;
    __syncthreads();
    float back = (t % 3 == 0) ? sh[t] : (t % 3 == 1) ? gen[g] : loc[t & 3];
    out[g] = make_float4(r, back, v.w + 1.0f, (float)(t % 3));
}

/* every atomic operation on shared memory, per block, then copied out: out[16 * block + k] */
extern "C" __global__ void s_atomics_shared(const int *in, unsigned long long *out)
{
    __shared__ int si[6];
    __shared__ unsigned su[5];
    __shared__ unsigned long long sl[4];
    __shared__ float sf;
    int v = in[GTID], t = threadIdx.x;
    if (t == 0) {
        si[0] = 0, si[1] = 0x7fffffff, si[2] = -0x7fffffff - 1, si[3] = -1, si[4] = 0, si[5] = 0;
        su[0] = 0, su[1] = 0, su[2] = 0xffffffffu, su[3] = 0, su[4] = 0;
        sl[0] = 0, sl[1] = ~0ull, sl[2] = 0, sl[3] = 0;
        sf = 0.0f;
    }
    __syncthreads();
    atomicAdd(&si[0], v - 50);
    atomicMin(&si[1], v * 13 % 77 - 30);
    atomicMax(&si[2], v * 13 % 77 - 30);
    atomicAnd(&si[3], ~(1 << (v % 30)));
    atomicOr(&si[4], 1 << (v % 27));
    atomicXor(&si[5], v * 7);
    atomicInc(&su[0], 10);
    atomicDec(&su[1], 12);
    atomicMin(&su[2], (unsigned)v * 2654435761u);
    unsigned old = atomicExch(&su[3], (unsigned)t + 1);
    atomicAdd(&sl[3], (unsigned long long)old);
    atomicAdd(&sl[0], (unsigned long long)v << 33);
    atomicMin(&sl[1], (unsigned long long)v * 0x123456789ull);
    atomicMax(&sl[2], (unsigned long long)v * 0x123456789ull);
    atomicCAS(&su[4], (unsigned)t, (unsigned)t + 1);   /* succeeds in turn only for 0, 1, 2, ...: ends at some k */
    atomicAdd(&sf, (float)(v % 16));
    __syncthreads();
    if (t == 0) {
        unsigned long long *o = out + 16 * BID;
        for (int k = 0; k < 6; k++)
            o[k] = (unsigned)si[k];
        for (int k = 0; k < 5; k++)
            o[6 + k] = su[k];
        o[11] = sl[0], o[12] = sl[1], o[13] = sl[2], o[14] = sl[3] + su[3];
        o[15] = __float_as_uint(sf);
    }
}

/* producer/consumer on a named barrier: warp 0 writes and bar.arrive's, warp 1 bar.sync's and reads;
 * then lanes of a warp in two halves that shuffle within their own half (partial masks), __syncwarp */
extern "C" __global__ void s_arrive(const int *in, int *out)
{
    __shared__ int buf[32];
    int t = threadIdx.x, lane = t & 31, g = GTID, v = in[g];
    out[3 * g] = 0;
    if (t < 32) {
        buf[lane] = v * 3;
        asm volatile("bar.arrive 1, 64;" ::: "memory");
    } else if (t < 64) {
        asm volatile("bar.sync 1, 64;" ::: "memory");
        out[3 * g] = buf[31 - lane];
    }
    int r;
    if (lane & 1)
        r = __shfl_xor_sync(0xaaaaaaaa, v, 2);
    else
        r = __shfl_sync(0x55555555, v, (lane + 2) & 31);
    __syncwarp();
    out[3 * g + 1] = r;
    out[3 * g + 2] = __shfl_sync(0xffffffff, r, 31 - lane);
}

/* a grid-wide barrier (cooperative groups' grid.sync, launched with cuLaunchCooperativeKernel):
 * each phase reads what other CTAs wrote in the one before */
extern "C" __global__ void s_grid_sync(const int *in, int *tmp, int *out, int n)
{
    cooperative_groups::grid_group g = cooperative_groups::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tmp[i] = in[i] * 2;
    g.sync();
    out[i] = tmp[(i + blockDim.x) % n] + 1;
    g.sync();
    tmp[i] = out[(i + 2 * blockDim.x) % n];
}

/* the 64-bit and float forms not covered above, on global (k = 0) and shared (k = 1) memory:
 * w[0] and, w[1] or, w[2] xor (u64); w[3] cas u64 (a ticket: thread t swaps t -> t+1); w[4] exch
 * u64 (the returned values summed into w[5]); f[0] exch f32 (returned summed into f[1]); results
 * for block b at out64[8 * (2 * b + k)], outf[4 * (2 * b + k)] */
extern "C" __global__ void s_atomics64(const int *in, unsigned long long *g64, float *gf,
                                       unsigned long long *out64, float *outf)
{
    __shared__ unsigned long long s64[6];
    __shared__ float sf[2];
    int t = threadIdx.x, v = in[GTID];
    if (t == 0) {
        s64[0] = ~0ull, s64[1] = 0, s64[2] = 0, s64[3] = 0, s64[4] = 0, s64[5] = 0;
        sf[0] = -1.0f, sf[1] = 0.0f;
    }
    __syncthreads();
    unsigned long long *w[2] = {g64 + 8 * blockIdx.x, s64};
    float *f[2] = {gf + 4 * blockIdx.x, sf};
    for (int k = 0; k < 2; k++) {
        atomicAnd(&w[k][0], ~(1ull << (v % 63)));
        atomicOr(&w[k][1], 1ull << (v % 61));
        atomicXor(&w[k][2], (unsigned long long)v * 0x9e3779b97f4a7c15ull);
        atomicCAS(&w[k][3], (unsigned long long)t, (unsigned long long)t + 1);
        unsigned long long old = atomicExch(&w[k][4], (unsigned long long)t + 1);
        atomicAdd(&w[k][5], old);
        float of = atomicExch(&f[k][0], (float)t);
        atomicAdd(&f[k][1], of);
    }
    __syncthreads();
    if (t == 0)
        for (int k = 0; k < 2; k++) {
            for (int j = 0; j < 6; j++)
                out64[8 * (2 * blockIdx.x + k) + j] = w[k][j];
            outf[4 * (2 * blockIdx.x + k)] = f[k][0], outf[4 * (2 * blockIdx.x + k) + 1] = f[k][1];
        }
}
