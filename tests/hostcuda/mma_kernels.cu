// mma_kernels.cu — tensor-core kernels for the interpreter's tests (test_hc_mma.c): nvcuda::wmma
// GEMMs in every element type, raw mma.sync + ldmatrix GEMMs whose result depends on the exact
// lane layout of the PTX ISA, and faulty kernels. Compiled to PTX (compute_80) by nvcc.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>
#include <type_traits>

using namespace nvcuda;

// C[M x N] = alpha * A[M x K] (row-major) * B[K x N] + beta * C, one warp per TM x TN tile; B is
// column-major (ld K) when BCOL, else row-major (ld N). Grid: (N / TN, M / TM), 32 threads.
template <int TM, int TN, int TK, typename TI, typename TP, typename TA, typename TC, bool BCOL>
__device__ void wmma_gemm(const TI *A, const TI *B, TC *C, int M, int N, int K, TC alpha, TC beta)
{
    int tm = blockIdx.y * TM, tn = blockIdx.x * TN;
    typedef typename std::conditional<BCOL, wmma::col_major, wmma::row_major>::type BL;
    wmma::fragment<wmma::matrix_a, TM, TN, TK, TP, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, TM, TN, TK, TP, BL> b;
    wmma::fragment<wmma::accumulator, TM, TN, TK, TA> acc, c;
    wmma::fill_fragment(acc, (TA)0);
    for (int k = 0; k < K; k += TK) {
        wmma::load_matrix_sync(a, A + tm * K + k, K);
        wmma::load_matrix_sync(b, BCOL ? B + tn * K + k : B + k * N + tn, BCOL ? K : N);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::load_matrix_sync(c, C + tm * N + tn, N, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++)
        c.x[i] = alpha * acc.x[i] + beta * c.x[i];
    wmma::store_matrix_sync(C + tm * N + tn, c, N, wmma::mem_row_major);
}

extern "C" __global__ void mk_wmma_f16(const half *A, const half *B, float *C, int M, int N, int K, float al, float be)
{
    wmma_gemm<16, 16, 16, half, half, float, float, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_f16_brow(const half *A, const half *B, float *C, int M, int N, int K, float al,
                                            float be)
{
    wmma_gemm<16, 16, 16, half, half, float, float, false>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_f16_32x8(const half *A, const half *B, float *C, int M, int N, int K, float al,
                                            float be)
{
    wmma_gemm<32, 8, 16, half, half, float, float, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_f16_8x32(const half *A, const half *B, float *C, int M, int N, int K, float al,
                                            float be)
{
    wmma_gemm<8, 32, 16, half, half, float, float, false>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_f16acc(const half *A, const half *B, half *C, int M, int N, int K, half al, half be)
{
    wmma_gemm<16, 16, 16, half, half, half, half, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C, int M, int N, int K,
                                        float al, float be)
{
    wmma_gemm<16, 16, 16, __nv_bfloat16, __nv_bfloat16, float, float, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_s8(const signed char *A, const signed char *B, int *C, int M, int N, int K, int al,
                                      int be)
{
    wmma_gemm<16, 16, 16, signed char, signed char, int, int, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_u8_32x8(const unsigned char *A, const unsigned char *B, int *C, int M, int N, int K,
                                           int al, int be)
{
    wmma_gemm<32, 8, 16, unsigned char, unsigned char, int, int, true>(A, B, C, M, N, K, al, be);
}
extern "C" __global__ void mk_wmma_f64(const double *A, const double *B, double *C, int M, int N, int K, double al,
                                       double be)
{
    wmma_gemm<8, 8, 4, double, double, double, double, true>(A, B, C, M, N, K, al, be);
}

// tf32: the fragments' elements rounded with __float_to_tf32 (cvt.rna.tf32.f32) before the mma
extern "C" __global__ void mk_wmma_tf32(const float *A, const float *B, float *C, int M, int N, int K, float al,
                                        float be)
{
    int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc, c;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 8) {
        wmma::load_matrix_sync(a, A + tm * K + k, K);
        wmma::load_matrix_sync(b, B + tn * K + k, K);
        for (int i = 0; i < a.num_elements; i++)
            a.x[i] = wmma::__float_to_tf32(a.x[i]);
        for (int i = 0; i < b.num_elements; i++)
            b.x[i] = wmma::__float_to_tf32(b.x[i]);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::load_matrix_sync(c, C + tm * N + tn, N, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++)
        c.x[i] = al * acc.x[i] + be * c.x[i];
    wmma::store_matrix_sync(C + tm * N + tn, c, N, wmma::mem_row_major);
}

// a fragment loaded from a pointer that is not 128-bit aligned (A + 4 halves: 8 bytes off)
extern "C" __global__ void mk_wmma_misaligned(const half *A, float *C)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(a, A + 4, 16);
    wmma::load_matrix_sync(b, A, 16);
    wmma::mma_sync(acc, a, b, acc);
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}

// ---- mma.sync m16n8k16 f16 -> f32 fed by ldmatrix from shared memory: C[M x N] = A (row-major)
// x B (row-major K x N, loaded with ldmatrix .trans). One warp per 16 x 8 tile. perm 1 swaps the
// A registers a1 and a2 (rows g+8 and columns 8..15 trade places), perm 2 gives each lane the A
// fragment of lane ^ 4: wrong layouts.
extern "C" __global__ void mk_mma_ldmatrix(const half *A, const half *B, float *C, int M, int N, int K, int perm)
{
    __shared__ __align__(16) half sa[16 * 16];
    __shared__ __align__(16) half sb[16 * 8];
    int lane = threadIdx.x, tm = blockIdx.y * 16, tn = blockIdx.x * 8;
    float d[4] = {0, 0, 0, 0};
    for (int k = 0; k < K; k += 16) {
        for (int i = lane; i < 256; i += 32)
            sa[i] = A[(tm + i / 16) * K + k + i % 16];
        for (int i = lane; i < 128; i += 32)
            sb[i] = B[(k + i / 8) * N + tn + i % 8];
        __syncwarp();
        unsigned a[4], b[2];
        // x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
        unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
        // x2.trans: B rows k 0-7 and 8-15 (each 8 halves of N) transposed into the col layout
        unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(lane % 16) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                     : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
        if (perm == 1) {
            unsigned t = a[1];
            a[1] = a[2];
            a[2] = t;
        } else if (perm == 2) {   // lanes permuted: each takes the A fragment of lane ^ 4 (groupID ^ 1)
            for (int r = 0; r < 4; r++)
                a[r] = __shfl_xor_sync(0xffffffffu, a[r], 4);
        }
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        __syncwarp();
    }
    int g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 4; i++)
        C[(tm + g + 8 * (i >> 1)) * N + tn + 2 * q + (i & 1)] = d[i];
}

// ---- one mma.sync tile each, operands placed by the ISA's per-lane formulas straight from
// global memory (A row-major M x K, B row-major K x N, C/D row-major M x N)
__device__ static unsigned pack2h(half lo, half hi)
{
    return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;
}
__device__ static unsigned pack2bf(__nv_bfloat16 lo, __nv_bfloat16 hi)
{
    return (unsigned)__bfloat16_as_ushort(lo) | (unsigned)__bfloat16_as_ushort(hi) << 16;
}
__device__ static unsigned pack4b(const signed char *p0, const signed char *p1, const signed char *p2,
                                  const signed char *p3)
{
    return (unsigned)(unsigned char)*p0 | (unsigned)(unsigned char)*p1 << 8 | (unsigned)(unsigned char)*p2 << 16 |
           (unsigned)(unsigned char)*p3 << 24;
}

// m16n8k8 bf16 -> f32 (K = 8)
extern "C" __global__ void mk_mma_bf16_k8(const __nv_bfloat16 *A, const __nv_bfloat16 *B, const float *Cin, float *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a0 = pack2bf(A[g * 8 + 2 * q], A[g * 8 + 2 * q + 1]);
    unsigned a1 = pack2bf(A[(g + 8) * 8 + 2 * q], A[(g + 8) * 8 + 2 * q + 1]);
    unsigned b0 = pack2bf(B[(2 * q) * 8 + g], B[(2 * q + 1) * 8 + g]);
    float c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// m16n8k8 tf32 -> f32 (K = 8), inputs already tf32-exact
extern "C" __global__ void mk_mma_tf32_k8(const float *A, const float *B, const float *Cin, float *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a[4], b[2];
    a[0] = __float_as_uint(A[g * 8 + q]);
    a[1] = __float_as_uint(A[(g + 8) * 8 + q]);
    a[2] = __float_as_uint(A[g * 8 + q + 4]);
    a[3] = __float_as_uint(A[(g + 8) * 8 + q + 4]);
    b[0] = __float_as_uint(B[q * 8 + g]);
    b[1] = __float_as_uint(B[(q + 4) * 8 + g]);
    float c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                   "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// m16n8k32 s8 -> s32 .satfinite (K = 32)
extern "C" __global__ void mk_mma_s8_k32(const signed char *A, const signed char *B, const int *Cin, int *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a[4], b[2];
    for (int r = 0; r < 4; r++) {   // a0..a15: rows g, g+8, g, g+8 (by register), columns 4q + 16 * (r >= 2)
        int row = g + 8 * (r & 1), col = 4 * q + 16 * (r >> 1);
        const signed char *p = A + row * 32 + col;
        a[r] = pack4b(p, p + 1, p + 2, p + 3);
    }
    for (int r = 0; r < 2; r++) {
        int row = 4 * q + 16 * r;
        b[r] = pack4b(B + row * 8 + g, B + (row + 1) * 8 + g, B + (row + 2) * 8 + g, B + (row + 3) * 8 + g);
    }
    int c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
                   "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// m8n8k4 f64 (K = 4)
extern "C" __global__ void mk_mma_f64(const double *A, const double *B, const double *Cin, double *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    double a = A[g * 4 + q], b = B[q * 8 + g], c0 = Cin[g * 8 + 2 * q], c1 = Cin[g * 8 + 2 * q + 1], d0, d1;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
    D[g * 8 + 2 * q] = d0;
    D[g * 8 + 2 * q + 1] = d1;
}

// m16n8k16 f16 -> f16 accumulators (K = 16)
extern "C" __global__ void mk_mma_f16acc(const half *A, const half *B, const half *Cin, half *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a[4], b[2], c[2], d[2];
    for (int r = 0; r < 4; r++) {   // a0..a7: rows g / g+8 by (r & 1), columns + 8 by (r >= 2)
        int row = g + 8 * (r & 1), col = 2 * q + 8 * (r >> 1);
        a[r] = pack2h(A[row * 16 + col], A[row * 16 + col + 1]);
    }
    for (int r = 0; r < 2; r++)
        b[r] = pack2h(B[(2 * q + 8 * r) * 8 + g], B[(2 * q + 1 + 8 * r) * 8 + g]);
    for (int r = 0; r < 2; r++)
        c[r] = pack2h(Cin[(g + 8 * r) * 8 + 2 * q], Cin[(g + 8 * r) * 8 + 2 * q + 1]);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
                 : "=r"(d[0]), "=r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
    for (int r = 0; r < 2; r++) {
        D[(g + 8 * r) * 8 + 2 * q] = __ushort_as_half((unsigned short)(d[r] & 0xffff));
        D[(g + 8 * r) * 8 + 2 * q + 1] = __ushort_as_half((unsigned short)(d[r] >> 16));
    }
}

// stmatrix (x4) writes back what ldmatrix (x4) read: a 16 x 16 b16 tile copied through registers.
// stmatrix needs sm_90: a GPU's JIT would refuse it in this compute_80 module (the interpreter does
// not check .target), so this file is for the interpreter only.
extern "C" __global__ void mk_stmatrix(const unsigned short *in, unsigned short *out)
{
    __shared__ __align__(16) unsigned short s[256], t[256];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32)
        s[i] = in[i];
    __syncwarp();
    unsigned r[4];
    unsigned ps = (unsigned)__cvta_generic_to_shared(&s[(lane % 16) * 16 + (lane / 16) * 8]);
    unsigned pt = (unsigned)__cvta_generic_to_shared(&t[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(ps));
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                 :: "r"(pt), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    __syncwarp();
    for (int i = lane; i < 256; i += 32)
        out[i] = t[i];
}

// a warp of which only half executes the mma (undefined in the ISA): refused with a fault
extern "C" __global__ void mk_mma_partial(float *D)
{
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    unsigned z = 0;
    if (threadIdx.x < 16)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%4}, {%4}, {%0,%1,%2,%3};"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(z));
    D[threadIdx.x] = d0 + d1 + d2 + d3;
}

// m16n8k4 tf32 -> f32 (K = 4), inputs already tf32-exact
extern "C" __global__ void mk_mma_tf32_k4(const float *A, const float *B, const float *Cin, float *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a0 = __float_as_uint(A[g * 4 + q]), a1 = __float_as_uint(A[(g + 8) * 4 + q]);
    unsigned b0 = __float_as_uint(B[q * 8 + g]);
    float c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// m16n8k16 s8 x s8 -> s32 (K = 16), without .satfinite
extern "C" __global__ void mk_mma_s8_k16(const signed char *A, const signed char *B, const int *Cin, int *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a[2], b0;
    for (int r = 0; r < 2; r++) {   // a0..a7: rows g (a0..a3), g + 8 (a4..a7), columns 4q..4q+3
        const signed char *p = A + (g + 8 * r) * 16 + 4 * q;
        a[r] = pack4b(p, p + 1, p + 2, p + 3);
    }
    b0 = pack4b(B + (4 * q) * 8 + g, B + (4 * q + 1) * 8 + g, B + (4 * q + 2) * 8 + g, B + (4 * q + 3) * 8 + g);
    int c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b0), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// m8n8k16 s8 -> s32 (K = 16)
extern "C" __global__ void mk_mma_s8_m8n8k16(const signed char *A, const signed char *B, const int *Cin, int *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    const signed char *p = A + g * 16 + 4 * q;
    unsigned a0 = pack4b(p, p + 1, p + 2, p + 3);
    unsigned b0 = pack4b(B + (4 * q) * 8 + g, B + (4 * q + 1) * 8 + g, B + (4 * q + 2) * 8 + g, B + (4 * q + 3) * 8 + g);
    int c0 = Cin[g * 8 + 2 * q], c1 = Cin[g * 8 + 2 * q + 1], d0, d1;
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=r"(d0), "=r"(d1) : "r"(a0), "r"(b0), "r"(c0), "r"(c1));
    D[g * 8 + 2 * q] = d0;
    D[g * 8 + 2 * q + 1] = d1;
}

// m16n8k8 f16 -> f32 (K = 8)
extern "C" __global__ void mk_mma_f16_k8(const half *A, const half *B, const float *Cin, float *D)
{
    int l = threadIdx.x, g = l >> 2, q = l & 3;
    unsigned a0 = pack2h(A[g * 8 + 2 * q], A[g * 8 + 2 * q + 1]);
    unsigned a1 = pack2h(A[(g + 8) * 8 + 2 * q], A[(g + 8) * 8 + 2 * q + 1]);
    unsigned b0 = pack2h(B[(2 * q) * 8 + g], B[(2 * q + 1) * 8 + g]);
    float c[4], d[4];
    for (int i = 0; i < 4; i++)
        c[i] = Cin[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * q + (i & 1)] = d[i];
}

// lanes that give a wmma.load different matrices (undefined in the ISA): refused with a fault
extern "C" __global__ void mk_wmma_divergent(const half *A, float *C)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(a, A + (threadIdx.x & 1) * 256, 16);
    wmma::load_matrix_sync(b, A, 16);
    wmma::mma_sync(acc, a, b, acc);
    wmma::store_matrix_sync(C, acc, 16, wmma::mem_row_major);
}
