// async_kernels.cu — kernels for test_hc_async: asynchronous copies (cp.async through
// cuda::memcpy_async / cuda::pipeline / __pipeline_memcpy_async), mbarriers (cuda::barrier and raw
// mbarrier.* PTX), brx.idx and a device function's static __shared__ array. Built with
// nvcc -ptx -arch=compute_80 (NVCCFLAGS), so cp.async is real PTX, not the synchronous fallback.
// nvcc 13 lowers even dense switch statements to compare trees, so brx.idx is written as inline
// PTX here (clang and other PTX producers emit it for switches).
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

#define TILE 16

// C = A (M x K) * B (K x N), tiles double-buffered in shared memory: the next tile's copies are in
// flight (a pipeline stage) while this one is multiplied
extern "C" __global__ void as_gemm(const float *A, const float *B, float *C, int N, int K)
{
    __shared__ float sA[2][TILE][TILE], sB[2][TILE][TILE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx, nt = K / TILE;
    auto load = [&](int t, int s) {
        pipe.producer_acquire();
        cuda::memcpy_async(&sA[s][ty][tx], &A[row * K + t * TILE + tx], sizeof(float), pipe);
        cuda::memcpy_async(&sB[s][ty][tx], &B[(t * TILE + ty) * N + col], sizeof(float), pipe);
        pipe.producer_commit();
    };
    load(0, 0);
    float acc = 0;
    for (int t = 0; t < nt; t++) {
        int s = t & 1;
        if (t + 1 < nt) {
            load(t + 1, s ^ 1);
            cuda::pipeline_consumer_wait_prior<1>(pipe);
        } else {
            cuda::pipeline_consumer_wait_prior<0>(pipe);
        }
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += sA[s][ty][k] * sB[s][k][tx];
        __syncthreads();
        pipe.consumer_release();
    }
    C[row * N + col] = acc;
}

// per-block sums of int4 chunks: 16-byte cp.async.cg copies, two stages (__pipeline_* primitives)
extern "C" __global__ void as_reduce(const int4 *in, int *out, int chunks)
{
    __shared__ int4 buf[2][128];
    __shared__ int part[128];
    int t = threadIdx.x, acc = 0;
    const int4 *base = in + (size_t)blockIdx.x * chunks * 128;
    __pipeline_memcpy_async(&buf[0][t], &base[t], sizeof(int4));
    __pipeline_commit();
    for (int c = 0; c < chunks; c++) {
        if (c + 1 < chunks) {
            __pipeline_memcpy_async(&buf[(c + 1) & 1][t], &base[(c + 1) * 128 + t], sizeof(int4));
            __pipeline_commit();
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        int4 v = buf[c & 1][t];
        acc += v.x + v.y + v.z + v.w;
    }
    part[t] = acc;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (t < s)
            part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = part[0];
}

// the negative control: reading a cp.async destination before waiting for its group is a race;
// the interpreter defers the copy to the wait, so the read sees the old contents (-1). out[3t..]:
// before the wait, after it, and a zero-filled copy's tail (src-size 8 of 16: bytes 8..15 zero)
extern "C" __global__ void as_stale(const int *in, int *out)
{
    __shared__ int s[64];
    __shared__ int4 z[64];
    int t = threadIdx.x;
    s[t] = -1;
    z[t] = make_int4(-1, -1, -1, -1);
    __syncthreads();
    __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
    __pipeline_memcpy_async(&z[t], &in[64 + 4 * t], sizeof(int4), 8);   // zfill: the last 8 bytes are 0
    __pipeline_commit();
    int before = s[t];
    __pipeline_wait_prior(0);
    out[4 * t] = before;
    out[4 * t + 1] = s[t];
    out[4 * t + 2] = z[t].y;
    out[4 * t + 3] = z[t].z + z[t].w;
}

// a block-wide copy tracked by a cuda::barrier (cp.async.mbarrier.arrive, then the barrier's own
// arrive and wait): out[t] = in[255 - t]
extern "C" __global__ void as_barrier_copy(const float *in, float *out)
{
    __shared__ float s[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> b;
    auto block = cooperative_groups::this_thread_block();
    if (block.thread_rank() == 0)
        init(&b, block.size());
    block.sync();
    cuda::memcpy_async(block, s, in, sizeof(float) * 256, b);
    b.arrive_and_wait();
    out[threadIdx.x] = s[255 - threadIdx.x];
}

// raw mbarrier PTX
__device__ __forceinline__ unsigned smem(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mb_init(unsigned long long *b, unsigned n)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem(b)), "r"(n) : "memory");
}
__device__ __forceinline__ unsigned long long mb_arrive(unsigned long long *b)
{
    unsigned long long st;
    asm volatile("mbarrier.arrive.release.cta.shared.b64 %0, [%1];" : "=l"(st) : "r"(smem(b)) : "memory");
    return st;
}
__device__ __forceinline__ bool mb_test_parity(unsigned long long *b, unsigned parity)
{
    unsigned ok;
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(ok) : "r"(smem(b)), "r"(parity) : "memory");
    return ok != 0;
}
__device__ __forceinline__ bool mb_try_parity(unsigned long long *b, unsigned parity)
{
    unsigned ok;
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, 1000;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(ok) : "r"(smem(b)), "r"(parity) : "memory");
    return ok != 0;
}

// producer/consumer across warps through a two-slot ring: warps 0-1 produce, warps 2-3 consume;
// full[s] counts the 64 producers' arrivals, empty[s] the 64 consumers'. out[c] = the sum consumer
// c saw, out[64] = 1 if a consumer ever saw a slot not yet filled for its round
extern "C" __global__ void as_mbar_pc(int *out, int rounds, int use_try)
{
    __shared__ unsigned long long full[2], empty[2];
    __shared__ int slot[2][64];
    __shared__ int bad;
    int t = threadIdx.x;
    if (t == 0) {
        for (int i = 0; i < 2; i++) {
            mb_init(&full[i], 64);
            mb_init(&empty[i], 64);
        }
        bad = 0;
    }
    __syncthreads();
    if (t < 64) {   // producers
        for (int r = 0; r < rounds; r++) {
            int s = r & 1;
            unsigned ph = (r >> 1) & 1;   // the phase of round r on slot s
            if (r >= 2)   // wait until the consumers emptied the slot of round r - 2
                while (!(use_try ? mb_try_parity(&empty[s], ph ^ 1) : mb_test_parity(&empty[s], ph ^ 1)))
                    ;
            slot[s][t] = r * 1000 + t;
            mb_arrive(&full[s]);
        }
    } else {        // consumers
        int c = t - 64, sum = 0;
        for (int r = 0; r < rounds; r++) {
            int s = r & 1;
            unsigned ph = (r >> 1) & 1;
            while (!(use_try ? mb_try_parity(&full[s], ph) : mb_test_parity(&full[s], ph)))
                ;
            int v = slot[s][c];
            if (v != r * 1000 + c)
                bad = 1;
            sum += v;
            mb_arrive(&empty[s]);
        }
        out[c] = sum;
    }
    __syncthreads();
    if (t == 0)
        out[64] = bad;
}

// one thread walks an mbarrier through its operations; out[] = what each step reads
extern "C" __global__ void as_mbar_ops(unsigned *out)
{
    __shared__ unsigned long long b;
    unsigned long long st;
    unsigned v;
    unsigned a = smem(&b);
    mb_init(&b, 3);
    asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], 1;" : "=l"(st) : "r"(a) : "memory");
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(v) : "l"(st));
    out[0] = v;   // 2
    asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];" : "=l"(st) : "r"(a) : "memory");
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(v) : "l"(st));
    out[1] = v;   // 1; the expected count drops to 2
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 100;" ::"r"(a) : "memory");
    asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(st) : "r"(a) : "memory");
    out[2] = mb_test_parity(&b, 0);   // 0: 100 transaction bytes outstanding
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 100;" ::"r"(a) : "memory");
    out[3] = mb_test_parity(&b, 0);   // 1: phase 0 complete
    out[4] = mb_test_parity(&b, 1);   // 0: phase 1 just began
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.test_wait.shared.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(v) : "r"(a), "l"(st) : "memory");
    out[5] = v;   // 1: the state of phase 0's last arrive tests complete
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], 8;" : "=l"(st) : "r"(a) : "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 1;" : "=l"(st) : "r"(a) : "memory");
    out[6] = mb_test_parity(&b, 1);   // 0: two arrivals in (expected 2) but 8 tx bytes left
    asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 8;" ::"r"(a) : "memory");
    out[7] = mb_test_parity(&b, 1);   // 1
    asm volatile("mbarrier.inval.shared.b64 [%0];" ::"r"(a) : "memory");
}

// the deadlock control: two arrivals expected, one made, the thread waits forever
extern "C" __global__ void as_mbar_deadlock(int use_try)
{
    __shared__ unsigned long long b;
    if (threadIdx.x == 0)
        mb_init(&b, 2);
    __syncthreads();
    if (threadIdx.x == 0)
        mb_arrive(&b);
    while (!(use_try ? mb_try_parity(&b, 0) : mb_test_parity(&b, 0)))
        ;
}

// brx.idx: each lane jumps through a 6-entry table by its own index (lanes diverge, reconverge)
__device__ __noinline__ int pick(unsigned v)
{
    int r;
    asm volatile("{\n\t"
                 ".reg .pred %%outside;\n\t"
                 "setp.ge.u32 %%outside, %1, 6;\n\t"
                 "@%%outside bra $Ldef;\n"
                 "$Ltbl: .branchtargets $Lc0, $Lc1, $Lc2, $Lc3, $Lc4, $Lc5;\n\t"
                 "brx.idx %1, $Ltbl;\n"
                 "$Lc0: mov.u32 %0, 11;\n\tbra.uni $Lend;\n"
                 "$Lc1: mov.u32 %0, 23;\n\tbra.uni $Lend;\n"
                 "$Lc2: mov.u32 %0, 37;\n\tbra.uni $Lend;\n"
                 "$Lc3: mul.lo.u32 %0, %1, 41;\n\tbra.uni $Lend;\n"
                 "$Lc4: mov.u32 %0, 59;\n\tbra.uni $Lend;\n"
                 "$Lc5: add.u32 %0, %1, 1000;\n\tbra.uni $Lend;\n"
                 "$Ldef: mov.u32 %0, -1;\n"
                 "$Lend:\n\t}"
                 : "=r"(r) : "r"(v));
    return r;
}
extern "C" __global__ void as_switch(const unsigned *in, int *out)
{
    out[threadIdx.x] = pick(in[threadIdx.x]) + (int)threadIdx.x;
}

// a device function's static __shared__ array, reached from two kernels; k_fs2 has its own
// shared array too, which the function's must not overlap
__device__ __noinline__ int fs_rotate(int x)
{
    __shared__ int ring[128];
    ring[threadIdx.x] = x;
    __syncthreads();
    int v = ring[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    return v;
}
extern "C" __global__ void as_fs1(int *out)
{
    out[threadIdx.x] = fs_rotate((int)threadIdx.x * 3);
}
extern "C" __global__ void as_fs2(int *out)
{
    __shared__ int mine[128];
    mine[threadIdx.x] = 7000 + (int)threadIdx.x;
    __syncthreads();
    int v = fs_rotate((int)threadIdx.x + 500);
    out[threadIdx.x] = v;
    out[128 + threadIdx.x] = mine[threadIdx.x];
}

// bulk (TMA-engine) copies without a tensor map, as inline sm_90 PTX: global -> shared in two
// transactions completing on an mbarrier (arrive.expect_tx), then shared -> global in a bulk group.
// out[t] = in[t] + (1000, 0, 0, 0) for t < n (n int4s, n % 2 == 0); flags: [0] thread 0's read of the
// shared destination before the mbarrier wait (the old -7), [1] out[0].x read before the bulk group
// is waited for (the old contents), [2] after it
extern "C" __global__ void as_bulk(const int4 *in, int4 *out, int *flags, int n)
{
    __shared__ alignas(16) int4 s[256];
    __shared__ unsigned long long b;
    unsigned t = threadIdx.x, bytes = (unsigned)n * 16, half = bytes / 2;
    s[t] = make_int4(-7, -7, -7, -7);
    if (t == 0)
        mb_init(&b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
    if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&b)), "r"(bytes)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(smem(s)), "l"(in), "r"(half), "r"(smem(&b)) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(smem(s) + half), "l"((const char *)in + half), "r"(half), "r"(smem(&b)) : "memory");
        flags[0] = ((volatile int *)s)[0];
    }
    while (!mb_try_parity(&b, 0))
        ;
    if (t < (unsigned)n)
        s[t].x += 1000;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out), "r"(smem(s)), "r"(bytes)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        flags[1] = ((volatile int *)out)[0];
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        flags[2] = ((volatile int *)out)[0];
    }
}
