/* gemm_probe.c — an unmodified-style program that calls every fp32 GEMM entry point accelshim
 * hooks (cuBLAS linked dynamically: DT_NEEDED libcublas.so.13 / libcublasLt.so.13) on device
 * memory, and checks what came back against references it computes itself on the CPU.
 *
 * GEMMs (one call each, in this order; m=5 n=3 k=96, batch 2 where batched):
 *   sgemm (cublasSgemm_v2, op(A)=T)   sgemm_strided   sgemm_batched   gemm_ex (op(B)=T)
 *   gemm_strided_ex   gemm_batched_ex   lt_matmul (cublasLtMatmul, TRANSA=T)
 *   loss (cublasSgemm_v2 called from probe_loss_forward: the matmul_exclude target)
 *   pedantic (cublasGemmEx with CUBLAS_COMPUTE_32F_PEDANTIC: never downcast)
 *   pedantic_math (cublasSgemm_v2 on a handle in CUBLAS_PEDANTIC_MATH: never downcast)
 * --expect MODE (default|tf32|bf16|f16) [--excluded loss]: every fp32 GEMM (not excluded) must
 *   be within the rounding bound of MODE around the exact product AND differ from the fp32
 *   result somewhere (MODE != default), or be bit-identical to the fp32 emulation (MODE default,
 *   excluded GEMMs, the pedantic two). fp32 emulation = hostcublas's order (sum over p, fp32, no FMA).
 * --out FILE: all results, raw float32, in the order above (for bit-identity across runs).
 * Exit 0 ok, 1 a check failed (both sides printed), 3 CUDA/cuBLAS error.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 5, N = 3, K = 96, BATCH = 2 };
enum { G_SGEMM, G_SGEMM_STRIDED, G_SGEMM_BATCHED, G_GEMM_EX, G_GEMM_STRIDED_EX, G_GEMM_BATCHED_EX, G_LT,
       G_LOSS, G_PEDANTIC, G_PEDANTIC_MATH, G_N };
static const char *const g_names[G_N] = {"sgemm", "sgemm_strided", "sgemm_batched", "gemm_ex",
                                         "gemm_strided_ex", "gemm_batched_ex", "lt_matmul", "loss",
                                         "pedantic", "pedantic_math"};
static const int g_batch[G_N] = {1, BATCH, BATCH, 1, BATCH, BATCH, 1, 1, 1, 1};
static const int g_ta[G_N] = {1, 0, 0, 0, 0, 1, 1, 0, 0, 1};
static const int g_tb[G_N] = {0, 0, 1, 1, 0, 0, 0, 1, 0, 1};

#define CK(call)                                                                                 \
    do {                                                                                         \
        CUresult r_ = (call);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                                \
            fprintf(stderr, "gemm_probe: %s failed: %d (line %d)\n", #call, (int)r_, __LINE__);   \
            exit(3);                                                                             \
        }                                                                                        \
    } while (0)
#define BK(call)                                                                                 \
    do {                                                                                         \
        cublasStatus_t s_ = (call);                                                              \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "gemm_probe: %s failed: status %d (line %d)\n", #call, (int)s_,      \
                    __LINE__);                                                                   \
            exit(3);                                                                             \
        }                                                                                        \
    } while (0)

/* host copies: A_g is op(A)'s storage (lda = ta ? K : M), per batch item; B likewise */
static float hA[G_N][BATCH][M * K], hB[G_N][BATCH][K * N], hC[G_N][BATCH][M * N];
static CUdeviceptr dA[G_N], dB[G_N], dC[G_N];
static cublasHandle_t blas;
static cublasLtHandle_t lt;
static CUstream stream;
static const float one = 1.0f, zero = 0.0f;

static int lda_of(int g) { return g_ta[g] ? K : M; }
static int ldb_of(int g) { return g_tb[g] ? N : K; }
static float a_at(int g, int b, int i, int p) { return g_ta[g] ? hA[g][b][p + i * K] : hA[g][b][i + p * M]; }
static float b_at(int g, int b, int p, int j) { return g_tb[g] ? hB[g][b][j + p * N] : hB[g][b][p + j * K]; }
static cublasOperation_t op(int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float uniform(void) /* in (-1, 1), full 24-bit mantissas */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static CUdeviceptr upload(const void *p, size_t bytes)
{
    CUdeviceptr d;
    CK(cuMemAlloc(&d, bytes));
    CK(cuMemcpyHtoD(d, p, bytes));
    return d;
}

static CUdeviceptr ptr_array(CUdeviceptr base, size_t item_bytes)
{
    CUdeviceptr ptrs[BATCH];
    for (int b = 0; b < BATCH; b++)
        ptrs[b] = base + (CUdeviceptr)(b * item_bytes);
    return upload(ptrs, sizeof ptrs);
}

#define PA(g) ((const float *)(uintptr_t)dA[g])
#define PB(g) ((const float *)(uintptr_t)dB[g])
#define PC(g) ((float *)(uintptr_t)dC[g])

/* one named, non-inlined caller per GEMM: the status check after each call also keeps the
 * compiler from turning the call into a tail jump (the caller's frame must be on the stack) */
static __attribute__((noinline)) void probe_sgemm(int g)
{
    BK(cublasSgemm_v2(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), lda_of(g), PB(g), ldb_of(g), &zero,
                      PC(g), M));
}

/* cublasSgemm_v2 on a second handle in CUBLAS_PEDANTIC_MATH: the application asked for exact fp32 */
static __attribute__((noinline)) void probe_pedantic_math(int g)
{
    cublasHandle_t h;
    BK(cublasCreate_v2(&h));
    BK(cublasSetStream_v2(h, (cudaStream_t)stream));
    BK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    BK(cublasSgemm_v2(h, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), lda_of(g), PB(g), ldb_of(g), &zero,
                      PC(g), M));
    BK(cublasDestroy_v2(h));
}

static __attribute__((noinline)) void probe_loss_forward(int g)
{
    BK(cublasSgemm_v2(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), lda_of(g), PB(g), ldb_of(g), &zero,
                      PC(g), M));
}

static __attribute__((noinline)) void probe_strided(int g, int ex)
{
    if (ex)
        BK(cublasGemmStridedBatchedEx(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), CUDA_R_32F, lda_of(g),
                                      M * K, PB(g), CUDA_R_32F, ldb_of(g), K * N, &zero, PC(g), CUDA_R_32F, M,
                                      M * N, BATCH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        BK(cublasSgemmStridedBatched(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), lda_of(g), M * K, PB(g),
                                     ldb_of(g), K * N, &zero, PC(g), M, M * N, BATCH));
}

static __attribute__((noinline)) void probe_batched(int g, int ex)
{
    CUdeviceptr pa = ptr_array(dA[g], sizeof hA[g][0]), pb = ptr_array(dB[g], sizeof hB[g][0]);
    CUdeviceptr pc = ptr_array(dC[g], sizeof hC[g][0]);
    if (ex)
        BK(cublasGemmBatchedEx(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, (const void *const *)(uintptr_t)pa,
                               CUDA_R_32F, lda_of(g), (const void *const *)(uintptr_t)pb, CUDA_R_32F, ldb_of(g),
                               &zero, (void *const *)(uintptr_t)pc, CUDA_R_32F, M, BATCH, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
    else
        BK(cublasSgemmBatched(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, (const float *const *)(uintptr_t)pa,
                              lda_of(g), (const float *const *)(uintptr_t)pb, ldb_of(g), &zero,
                              (float *const *)(uintptr_t)pc, M, BATCH));
}

static __attribute__((noinline)) void probe_gemm_ex(int g, cublasComputeType_t ct)
{
    BK(cublasGemmEx(blas, op(g_ta[g]), op(g_tb[g]), M, N, K, &one, PA(g), CUDA_R_32F, lda_of(g), PB(g),
                    CUDA_R_32F, ldb_of(g), &zero, PC(g), CUDA_R_32F, M, ct, CUBLAS_GEMM_DEFAULT));
}

static __attribute__((noinline)) void probe_lt(int g)
{
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int ret = 0;
    int32_t ta = op(g_ta[g]), tb = op(g_tb[g]);
    BK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    BK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, g_ta[g] ? K : M, g_ta[g] ? M : K, lda_of(g)));
    BK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, g_tb[g] ? N : K, g_tb[g] ? K : N, ldb_of(g)));
    BK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, M, N, M));
    BK(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = 0;
    BK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    BK(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, pref, 1, &res, &ret));
    BK(cublasLtMatmul(lt, d, &one, PA(g), la, PB(g), lb, &zero, PC(g), lc, PC(g), lc, ret ? &res.algo : NULL, NULL,
                      0, (cudaStream_t)stream));
    CK(cuStreamSynchronize(stream));
    BK(cublasLtMatmulPreferenceDestroy(pref));
    BK(cublasLtMatrixLayoutDestroy(la));
    BK(cublasLtMatrixLayoutDestroy(lb));
    BK(cublasLtMatrixLayoutDestroy(lc));
    BK(cublasLtMatmulDescDestroy(d));
}

/* ---- checks ---- */

static double unit_roundoff(const char *mode)
{
    return !strcmp(mode, "bf16") ? ldexp(1, -8) : ldexp(1, -11); /* tf32, f16: 10-bit mantissas */
}

int main(int argc, char **argv)
{
    const char *expect = NULL, *excluded = NULL, *out = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--expect")) expect = argv[i + 1];
        else if (!strcmp(argv[i], "--excluded")) excluded = argv[i + 1];
        else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else { fprintf(stderr, "usage: gemm_probe [--expect MODE] [--excluded NAME] [--out FILE]\n"); return 2; }
    }
    for (int g = 0; g < G_N; g++)
        for (int b = 0; b < BATCH; b++) {
            for (int i = 0; i < M * K; i++) hA[g][b][i] = uniform();
            for (int i = 0; i < K * N; i++) hB[g][b][i] = uniform();
        }
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
    BK(cublasCreate_v2(&blas));
    BK(cublasSetStream_v2(blas, (cudaStream_t)stream));
    BK(cublasLtCreate(&lt));
    for (int g = 0; g < G_N; g++) {
        dA[g] = upload(hA[g], sizeof hA[g]);
        dB[g] = upload(hB[g], sizeof hB[g]);
        CK(cuMemAlloc(&dC[g], sizeof hC[g]));
    }
    probe_sgemm(G_SGEMM);
    probe_strided(G_SGEMM_STRIDED, 0);
    probe_batched(G_SGEMM_BATCHED, 0);
    probe_gemm_ex(G_GEMM_EX, CUBLAS_COMPUTE_32F);
    probe_strided(G_GEMM_STRIDED_EX, 1);
    probe_batched(G_GEMM_BATCHED_EX, 1);
    probe_lt(G_LT);
    probe_loss_forward(G_LOSS);
    probe_gemm_ex(G_PEDANTIC, CUBLAS_COMPUTE_32F_PEDANTIC);
    probe_pedantic_math(G_PEDANTIC_MATH);
    CK(cuStreamSynchronize(stream));
    for (int g = 0; g < G_N; g++)
        CK(cuMemcpyDtoH(hC[g], dC[g], sizeof hC[g]));
    BK(cublasDestroy_v2(blas));
    BK(cublasLtDestroy(lt));

    if (out) {
        FILE *f = fopen(out, "wb");
        for (int g = 0; f && g < G_N; g++)
            fwrite(hC[g], sizeof(float), (size_t)g_batch[g] * M * N, f);
        if (!f || fclose(f)) { perror(out); return 3; }
    }
    if (!expect)
        return 0;
    int fails = 0;
    for (int g = 0; g < G_N; g++) {
        int fp32 = !strcmp(expect, "default") || g == G_PEDANTIC || g == G_PEDANTIC_MATH || (excluded && !strcmp(excluded, g_names[g]));
        int differs = 0;
        double worst = 0.0;
        for (int b = 0; b < g_batch[g]; b++)
            for (int j = 0; j < N; j++)
                for (int i = 0; i < M; i++) {
                    float s32 = 0.0f;
                    double exact = 0.0, mag = 0.0;
                    for (int p = 0; p < K; p++) {
                        s32 += a_at(g, b, i, p) * b_at(g, b, p, j);
                        exact += (double)a_at(g, b, i, p) * (double)b_at(g, b, p, j);
                        mag += fabs((double)a_at(g, b, i, p) * (double)b_at(g, b, p, j));
                    }
                    float got = hC[g][b][i + j * M];
                    if (fp32) {
                        if (memcmp(&got, &s32, 4) != 0) {
                            if (fails++ < 10)
                                printf("FAIL %s[%d](%d,%d): expected the fp32 result %.9g bit for bit, got %.9g\n",
                                       g_names[g], b, i, j, (double)s32, (double)got);
                        }
                        continue;
                    }
                    double u = unit_roundoff(expect);
                    /* inputs rounded (|d| <= u each: product error <= (2u + u^2)|ab|), fp32 sums */
                    double bound = (2 * u + u * u) * mag + K * ldexp(1, -24) * (1 + 2 * u + u * u) * mag * 1.01;
                    double err = fabs((double)got - exact);
                    if (err / (bound > 0 ? bound : 1) > worst)
                        worst = err / (bound > 0 ? bound : 1);
                    if (err > bound && fails++ < 10)
                        printf("FAIL %s[%d](%d,%d): |got %.9g - exact %.17g| = %.3g exceeds the %s bound %.3g\n",
                               g_names[g], b, i, j, (double)got, exact, err, expect, bound);
                    differs |= memcmp(&got, &s32, 4) != 0;
                }
        if (!fp32 && !differs) {
            fails++;
            printf("FAIL %s: every element equals the fp32 result: the %s compute type did not take effect\n",
                   g_names[g], expect);
        }
        printf("# %-16s %s%s\n", g_names[g], fp32 ? "fp32 bit-identical" : "downcast",
               fp32 ? "" : (differs ? ", differs from fp32, within bound" : ""));
        if (!fp32)
            printf("#   worst error / bound = %.3f\n", worst);
    }
    return fails ? 1 : 0;
}
