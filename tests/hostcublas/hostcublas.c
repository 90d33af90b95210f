/* hostcublas.c — build/tests/hostcublas/libcublas.so.13: a cuBLAS test double on hostcuda memory.
 *
 * Implements the handle calls (cublasCreate_v2, Destroy, SetStream/GetStream, SetMathMode /
 * GetMathMode, SetPointerMode/GetPointerMode: host scalars only) and the GEMMs accelshim hooks:
 * cublasSgemm_v2, SgemmStridedBatched, SgemmBatched, GemmEx, GemmStridedBatchedEx, GemmBatchedEx
 * (fp32 A/B/C with a 32F compute type; anything else answers CUBLAS_STATUS_NOT_SUPPORTED).
 * Real arithmetic (hostcublas.h): a FAST compute type rounds the inputs exactly as the GPU's
 * tensor cores consume them, so a precision policy changes results here as much as on a GPU.
 * Sgemm on a handle in CUBLAS_TF32_TENSOR_OP_MATH runs as COMPUTE_32F_FAST_TF32, as cuBLAS does.
 * Each GEMM is queued on the handle's stream (cuLaunchHostFunc) and runs in stream order.
 * Symbols carry the version node libcublas.so.13 (hostcublas.map), as the real library's do.
 * Test-only extra: hostcublas_gemm_calls(compute type) counts the GEMM calls that ran with it.
 * Must not: use a GPU, the real cuBLAS or anything of accelshim; compute a GEMM it does not model
 * (those answer CUBLAS_STATUS_NOT_SUPPORTED); run a GEMM outside its stream's order.
 */
#include "hostcublas.h"

#include <cublas_v2.h>
#include <stdatomic.h>

struct cublasContext {
    CUstream stream;
    cublasMath_t math;
    cublasPointerMode_t pm;
};

static _Atomic unsigned long long hcb_calls[4];

HOSTCUBLAS_API unsigned long long hostcublas_gemm_calls(cublasComputeType_t ct)
{
    hcb_round_t r;
    return hcb_round_of(ct, &r) == 0 && ct != CUBLAS_COMPUTE_32F_PEDANTIC ? atomic_load(&hcb_calls[r]) : 0;
}

HOSTCUBLAS_API cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->math = CUBLAS_DEFAULT_MATH;
    h->pm = CUBLAS_POINTER_MODE_HOST;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cuStreamSynchronize(handle->stream); /* as cuBLAS: pending work completes first */
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = (CUstream)streamId;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!streamId)
        return CUBLAS_STATUS_INVALID_VALUE;
    *streamId = (cudaStream_t)handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST)
        return CUBLAS_STATUS_NOT_SUPPORTED; /* test double: host scalars only */
    handle->pm = mode;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pm;
    return CUBLAS_STATUS_SUCCESS;
}

/* Common path of every GEMM entry point. */
static cublasStatus_t hcb_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                               int k, const void *alpha, const void *A, cudaDataType at, int lda, long long sa,
                               const void *B, cudaDataType bt, int ldb, long long sb, const void *beta, void *C,
                               cudaDataType ctp, int ldc, long long sc, int batch, int ptr_arrays,
                               cublasComputeType_t ct)
{
    hcb_round_t r;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (at != CUDA_R_32F || bt != CUDA_R_32F || ctp != CUDA_R_32F || hcb_round_of(ct, &r) != 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!alpha || !beta || m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    hcb_gemm_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_gemm_t){.transa = ta != CUBLAS_OP_N, .transb = tb != CUBLAS_OP_N, .m = m, .n = n, .k = k,
                      .lda = lda, .ldb = ldb, .ldc = ldc, .sa = sa, .sb = sb, .sc = sc, .batch = batch,
                      .ptr_arrays = ptr_arrays, .alpha = *(const float *)alpha, .beta = *(const float *)beta,
                      .round = r, .A = A, .B = B, .Cin = C, .Cout = C, .ldcin = ldc, .scin = sc};
    cublasStatus_t st = hostcublas_enqueue(g, h->stream);
    if (st == CUBLAS_STATUS_SUCCESS)
        atomic_fetch_add(&hcb_calls[r], 1);
    return st;
}

static cublasComputeType_t hcb_sgemm_compute(cublasHandle_t h)
{
    return h && (h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

HOSTCUBLAS_API cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                             const float *A, int lda, const float *B, int ldb, const float *beta,
                                             float *C, int ldc)
{
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C,
                    CUDA_R_32F, ldc, 0, 1, 0, hcb_sgemm_compute(handle));
}

HOSTCUBLAS_API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                        cublasOperation_t transb, int m, int n, int k,
                                                        const float *alpha, const float *A, int lda,
                                                        long long int strideA, const float *B, int ldb,
                                                        long long int strideB, const float *beta, float *C,
                                                        int ldc, long long int strideC, int batchCount)
{
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, strideA, B, CUDA_R_32F, ldb,
                    strideB, beta, C, CUDA_R_32F, ldc, strideC, batchCount, 0, hcb_sgemm_compute(handle));
}

HOSTCUBLAS_API cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                                 const float *const Aarray[], int lda, const float *const Barray[],
                                                 int ldb, const float *beta, float *const Carray[], int ldc,
                                                 int batchCount)
{
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, (const void *)Aarray, CUDA_R_32F, lda, 0,
                    (const void *)Barray, CUDA_R_32F, ldb, 0, beta, (void *)Carray, CUDA_R_32F, ldc, 0,
                    batchCount, 1, hcb_sgemm_compute(handle));
}

HOSTCUBLAS_API cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                           const void *A, cudaDataType Atype, int lda, const void *B,
                                           cudaDataType Btype, int ldb, const void *beta, void *C,
                                           cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                           cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype,
                    ldc, 0, 1, 0, computeType);
}

HOSTCUBLAS_API cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long int strideA, const void *B,
    cudaDataType Btype, int ldb, long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
    long long int strideC, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta,
                    C, Ctype, ldc, strideC, batchCount, 0, computeType);
}

HOSTCUBLAS_API cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                                  const void *const Aarray[], cudaDataType Atype, int lda,
                                                  const void *const Barray[], cudaDataType Btype, int ldb,
                                                  const void *beta, void *const Carray[], cudaDataType Ctype,
                                                  int ldc, int batchCount, cublasComputeType_t computeType,
                                                  cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(handle, transa, transb, m, n, k, alpha, (const void *)Aarray, Atype, lda, 0,
                    (const void *)Barray, Btype, ldb, 0, beta, (void *)Carray, Ctype, ldc, 0, batchCount, 1,
                    computeType);
}
