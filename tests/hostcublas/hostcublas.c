/* hostcublas.c — build/tests/hostcublas/libcublas.so.13: a cuBLAS test double on hostcuda memory.
 *
 * This file: the handle calls (Create/Destroy, Set/GetStream, Set/GetMathMode, Set/GetPointerMode,
 * Set/GetAtomicsMode, SetWorkspace, GetVersion, GetProperty, GetCudartVersion, GetStatusName /
 * String, LoggerConfigure and the logger callback); Set/GetVector, Set/GetMatrix and their Async
 * forms (and _64); Sgemm with its Batched and StridedBatched forms, GemmEx, GemmStridedBatchedEx,
 * GemmBatchedEx for f32/f16/bf16 A/B (C f32 or A's type) with compute 32F (FAST_* compute types:
 * f32 only), each also in the _64 API. hcb_blas.c has level 1, gemv, geam and Dgemm. Every other
 * export of NVIDIA's library is a weak body in hcb_unimpl.c that names itself once on stderr and
 * answers CUBLAS_STATUS_NOT_SUPPORTED.
 * GEMM arithmetic by hostcublas.h: a FAST compute type rounds the inputs as tensor cores consume
 * them; Sgemm in CUBLAS_TF32_TENSOR_OP_MATH runs as FAST_TF32; beta == 0 never reads C. Each call
 * is queued on the handle's stream (cuLaunchHostFunc) and runs in stream order; alpha/beta in
 * pointer mode device are read when the work runs. The blocking copies wait for all earlier work
 * (cuCtxSynchronize) and are done on return; a copy whose device side is not inside one device or
 * managed allocation answers CUBLAS_STATUS_MAPPING_ERROR. Symbols carry the version node libcublas.so.13.
 * Test-only extra: hostcublas_gemm_calls(compute type) counts the GEMM calls that ran with it.
 * Must not: use a GPU, the real cuBLAS or anything of accelshim; compute what it does not model
 * (that answers CUBLAS_STATUS_NOT_SUPPORTED); run work outside its stream's order.
 */
#include "hcb_internal.h"

#include <library_types.h>
#include <stdatomic.h>

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
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
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

/* Common path of every single-precision GEMM entry point. */
static cublasStatus_t hcb_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                               int64_t k, const void *alpha, const void *A, cudaDataType at, int64_t lda,
                               long long sa, const void *B, cudaDataType bt, int64_t ldb, long long sb,
                               const void *beta, void *C, cudaDataType ctp, int64_t ldc, long long sc, int64_t batch,
                               int ptr_arrays, cublasComputeType_t ct)
{
    hcb_round_t r;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!hcb_op_ok(ta) || !hcb_op_ok(tb))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (hcb_round_of(ct, &r) != 0 || at != bt || !hcb_type_ok(at) || (ctp != at && ctp != CUDA_R_32F) ||
        ((ct != CUBLAS_COMPUTE_32F && ct != CUBLAS_COMPUTE_32F_PEDANTIC) && at != CUDA_R_32F))
        return CUBLAS_STATUS_NOT_SUPPORTED; /* the 32F-compute rows of cublasGemmEx's type table */
    if (!alpha || !beta || m < 0 || n < 0 || k < 0 || batch < 0 || batch > INT32_MAX || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    hcb_gemm_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_gemm_t){.transa = ta != CUBLAS_OP_N, .transb = tb != CUBLAS_OP_N, .m = m, .n = n, .k = k,
                      .lda = lda, .ldb = ldb, .ldc = ldc, .sa = sa, .sb = sb, .sc = sc, .batch = (int)batch,
                      .ptr_arrays = ptr_arrays, .round = r, .A = A, .B = B, .Cin = C, .Cout = C, .ldcin = ldc,
                      .scin = sc, .ta = at, .tb = bt, .tc = ctp, .td = ctp};
    if (h->pm == CUBLAS_POINTER_MODE_DEVICE)
        g->alpha_dev = alpha, g->beta_dev = beta;
    else
        g->alpha = *(const float *)alpha, g->beta = *(const float *)beta;
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

/* ---- handle, library and logger calls ------------------------------------------------------- */

HOSTCUBLAS_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

HOSTCUBLAS_API size_t cublasGetCudartVersion(void)
{
    return CUDART_VERSION;
}

HOSTCUBLAS_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t size)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (size && (!workspace || (uintptr_t)workspace % 256))
        return CUBLAS_STATUS_INVALID_VALUE; /* the workspace must be 256-byte aligned */
    handle->workspace = workspace; /* kept, never needed: the host code allocates its own */
    handle->workspace_size = size;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->atomics = mode; /* no effect: the host code is deterministic either way */
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->atomics;
    return CUBLAS_STATUS_SUCCESS;
}

/* the status enum, once: name and the text cuBLAS gives */
#define HCB_STATUSES(X)                                                                  \
    X(CUBLAS_STATUS_SUCCESS, "success")                                                  \
    X(CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialized")                  \
    X(CUBLAS_STATUS_ALLOC_FAILED, "the resource allocation failed")                      \
    X(CUBLAS_STATUS_INVALID_VALUE, "an invalid numeric value was used as an argument")   \
    X(CUBLAS_STATUS_ARCH_MISMATCH, "an absent device architectural feature is required") \
    X(CUBLAS_STATUS_MAPPING_ERROR, "an access to GPU memory space failed")               \
    X(CUBLAS_STATUS_EXECUTION_FAILED, "the GPU program failed to execute")               \
    X(CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed")                      \
    X(CUBLAS_STATUS_NOT_SUPPORTED, "the functionality requested is not supported")       \
    X(CUBLAS_STATUS_LICENSE_ERROR, "error detected trying to check the license")

HOSTCUBLAS_API const char *cublasGetStatusName(cublasStatus_t status)
{
#define HCB_NAME(s, text) case s: return #s;
    switch (status) { HCB_STATUSES(HCB_NAME) default: return "CUBLAS_STATUS_UNKNOWN"; }
#undef HCB_NAME
}

HOSTCUBLAS_API const char *cublasGetStatusString(cublasStatus_t status)
{
#define HCB_TEXT(s, text) case s: return text;
    switch (status) { HCB_STATUSES(HCB_TEXT) default: return "unknown error"; }
#undef HCB_TEXT
}

static cublasLogCallback hcb_logger;

/* cuBLAS's API log: hostcublas writes none, whatever is asked (documented as a no-op here) */
HOSTCUBLAS_API cublasStatus_t cublasLoggerConfigure(int logIsOn, int logToStdOut, int logToStdErr,
                                                    const char *logFileName)
{
    (void)logIsOn, (void)logToStdOut, (void)logToStdErr, (void)logFileName;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasSetLoggerCallback(cublasLogCallback userCallback)
{
    hcb_logger = userCallback;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasGetLoggerCallback(cublasLogCallback *userCallback)
{
    if (!userCallback)
        return CUBLAS_STATUS_INVALID_VALUE;
    *userCallback = hcb_logger;
    return CUBLAS_STATUS_SUCCESS;
}
/* ---- Set/GetVector, Set/GetMatrix ------------------------------------------------------------ */

typedef struct {
    long long rows, cols, elem;
    const char *src;
    long long ses, scs; /* bytes between a column's elements, between columns */
    char *dst;
    long long des, dcs;
    void *staging; /* a pageable source copied at call time (freed when run) */
} hcb_copy_t;

static void hcb_copy_run(void *arg)
{
    hcb_copy_t *c = arg;
    const char *src = c->staging ? c->staging : hcb_view(c->src);
    char *dst = hcb_view(c->dst);
    for (long long j = 0; j < c->cols; j++)
        for (long long i = 0; i < c->rows; i++)
            memcpy(dst + i * c->des + j * c->dcs, src + i * c->ses + j * c->scs, (size_t)c->elem);
    free(c->staging);
    free(c);
}

/* page-locked host memory (cuMemHostAlloc, cuMemHostRegister): the driver knows it */
static int hcb_pinned(const void *p)
{
    unsigned int t;
    return cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
           t == CU_MEMORYTYPE_HOST;
}

/* device memory spanning [p, p + bytes): inside one device or managed allocation, or (memory
 * the driver maps otherwise, as cuMemMap's) held contiguously by hostcuda's arena */
static int hcb_mapped(const void *p, long long bytes)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)p, base;
    size_t size;
    if (cuMemGetAddressRange(&base, &size, d) == CUDA_SUCCESS)
        return d + (unsigned long long)bytes <= base + size;
    char *v = hostcuda_host_view(d);
    return v && (bytes <= 1 || hostcuda_host_view(d + bytes - 1) == v + bytes - 1);
}

/* TO_DEV: host -> device. SYNC (the blocking copies): all earlier work first, the copy done on
 * return. Async, as the driver's async copies: a pageable source is staged at call time and a
 * pageable destination waits for the copy; page-locked memory is read / written when it runs. */
static cublasStatus_t hcb_copy(long long rows, long long cols, long long elem, const void *src, long long ses,
                               long long scs, void *dst, long long des, long long dcs, int to_dev, CUstream stream,
                               int sync)
{
    if (rows == 0 || cols == 0)
        return CUBLAS_STATUS_SUCCESS;
    long long span_s = (rows - 1) * ses + (cols - 1) * scs + elem, span_d = (rows - 1) * des + (cols - 1) * dcs + elem;
    if (!src || !dst || !hcb_mapped(to_dev ? dst : src, to_dev ? span_d : span_s))
        return CUBLAS_STATUS_MAPPING_ERROR;
    hcb_copy_t *c = calloc(1, sizeof *c);
    if (!c)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *c = (hcb_copy_t){rows, cols, elem, src, ses, scs, dst, des, dcs, NULL};
    if (sync) {
        if (cuCtxSynchronize() != CUDA_SUCCESS) {
            free(c);
            return CUBLAS_STATUS_MAPPING_ERROR;
        }
        hcb_copy_run(c);
        return CUBLAS_STATUS_SUCCESS;
    }
    int wait = !to_dev && !hcb_pinned(dst);
    if (to_dev && !hcb_pinned(src)) {
        if (!(c->staging = malloc((size_t)span_s))) {
            free(c);
            return CUBLAS_STATUS_ALLOC_FAILED;
        }
        memcpy(c->staging, src, (size_t)span_s);
    }
    if (cuLaunchHostFunc(stream, hcb_copy_run, c) != CUDA_SUCCESS) {
        free(c->staging);
        free(c);
        return CUBLAS_STATUS_MAPPING_ERROR;
    }
    return wait && cuStreamSynchronize(stream) != CUDA_SUCCESS ? CUBLAS_STATUS_MAPPING_ERROR : CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t hcb_vector(int64_t n, int64_t elem, const void *x, int64_t incx, void *y, int64_t incy,
                                 int to_dev, cudaStream_t stream, int sync)
{
    if (n < 0 || elem <= 0 || incx <= 0 || incy <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return hcb_copy(n, 1, elem, x, incx * elem, 0, y, incy * elem, 0, to_dev, (CUstream)stream, sync);
}

static cublasStatus_t hcb_matrix(int64_t rows, int64_t cols, int64_t elem, const void *A, int64_t lda, void *B,
                                 int64_t ldb, int to_dev, cudaStream_t stream, int sync)
{
    if (rows < 0 || cols < 0 || elem <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
        return CUBLAS_STATUS_INVALID_VALUE;
    return hcb_copy(rows, cols, elem, A, elem, lda * elem, B, elem, ldb * elem, to_dev, (CUstream)stream, sync);
}

#define HCB_COPY_API(suffix, I)                                                                                    \
    HOSTCUBLAS_API cublasStatus_t cublasSetVector##suffix(I n, I elemSize, const void *x, I incx, void *devicePtr, \
                                                          I incy)                                                  \
    {                                                                                                              \
        return hcb_vector(n, elemSize, x, incx, devicePtr, incy, 1, NULL, 1);                                      \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasGetVector##suffix(I n, I elemSize, const void *x, I incx, void *y, I incy) \
    {                                                                                                              \
        return hcb_vector(n, elemSize, x, incx, y, incy, 0, NULL, 1);                                              \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasSetVectorAsync##suffix(I n, I elemSize, const void *hostPtr, I incx,       \
                                                               void *devicePtr, I incy, cudaStream_t stream)       \
    {                                                                                                              \
        return hcb_vector(n, elemSize, hostPtr, incx, devicePtr, incy, 1, stream, 0);                              \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasGetVectorAsync##suffix(I n, I elemSize, const void *devicePtr, I incx,     \
                                                               void *hostPtr, I incy, cudaStream_t stream)         \
    {                                                                                                              \
        return hcb_vector(n, elemSize, devicePtr, incx, hostPtr, incy, 0, stream, 0);                              \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasSetMatrix##suffix(I rows, I cols, I elemSize, const void *A, I lda,        \
                                                          void *B, I ldb)                                          \
    {                                                                                                              \
        return hcb_matrix(rows, cols, elemSize, A, lda, B, ldb, 1, NULL, 1);                                       \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasGetMatrix##suffix(I rows, I cols, I elemSize, const void *A, I lda,        \
                                                          void *B, I ldb)                                          \
    {                                                                                                              \
        return hcb_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, NULL, 1);                                       \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasSetMatrixAsync##suffix(I rows, I cols, I elemSize, const void *A, I lda,   \
                                                               void *B, I ldb, cudaStream_t stream)                \
    {                                                                                                              \
        return hcb_matrix(rows, cols, elemSize, A, lda, B, ldb, 1, stream, 0);                                     \
    }                                                                                                              \
    HOSTCUBLAS_API cublasStatus_t cublasGetMatrixAsync##suffix(I rows, I cols, I elemSize, const void *A, I lda,   \
                                                               void *B, I ldb, cudaStream_t stream)                \
    {                                                                                                              \
        return hcb_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, stream, 0);                                     \
    }
HCB_COPY_API(, int)
HCB_COPY_API(_64, int64_t)
/* ---- the _64 API: the same routines with int64_t sizes ---------------------------------------- */

HOSTCUBLAS_API cublasStatus_t cublasSgemm_v2_64(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                                int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                                                int64_t lda, const float *B, int64_t ldb, const float *beta, float *C,
                                                int64_t ldc)
{
    return hcb_gemm(h, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C,
                    CUDA_R_32F, ldc, 0, 1, 0, hcb_sgemm_compute(h));
}

HOSTCUBLAS_API cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t h, cublasOperation_t transa,
                                                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                           const float *alpha, const float *A, int64_t lda,
                                                           long long int strideA, const float *B, int64_t ldb,
                                                           long long int strideB, const float *beta, float *C,
                                                           int64_t ldc, long long int strideC, int64_t batchCount)
{
    return hcb_gemm(h, transa, transb, m, n, k, alpha, A, CUDA_R_32F, lda, strideA, B, CUDA_R_32F, ldb, strideB,
                    beta, C, CUDA_R_32F, ldc, strideC, batchCount, 0, hcb_sgemm_compute(h));
}

HOSTCUBLAS_API cublasStatus_t cublasSgemmBatched_64(cublasHandle_t h, cublasOperation_t transa,
                                                    cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                    const float *alpha, const float *const Aarray[], int64_t lda,
                                                    const float *const Barray[], int64_t ldb, const float *beta,
                                                    float *const Carray[], int64_t ldc, int64_t batchCount)
{
    return hcb_gemm(h, transa, transb, m, n, k, alpha, (const void *)Aarray, CUDA_R_32F, lda, 0,
                    (const void *)Barray, CUDA_R_32F, ldb, 0, beta, (void *)Carray, CUDA_R_32F, ldc, 0, batchCount,
                    1, hcb_sgemm_compute(h));
}

HOSTCUBLAS_API cublasStatus_t cublasGemmEx_64(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                              int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                                              cudaDataType Atype, int64_t lda, const void *B, cudaDataType Btype,
                                              int64_t ldb, const void *beta, void *C, cudaDataType Ctype,
                                              int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(h, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0,
                    1, 0, computeType);
}

HOSTCUBLAS_API cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void *alpha, const void *A, cudaDataType Atype, int64_t lda, long long int strideA, const void *B,
    cudaDataType Btype, int64_t ldb, long long int strideB, const void *beta, void *C, cudaDataType Ctype,
    int64_t ldc, long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(h, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                    Ctype, ldc, strideC, batchCount, 0, computeType);
}

HOSTCUBLAS_API cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, cublasOperation_t transa,
                                                     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                     const void *alpha, const void *const Aarray[],
                                                     cudaDataType Atype, int64_t lda, const void *const Barray[],
                                                     cudaDataType Btype, int64_t ldb, const void *beta,
                                                     void *const Carray[], cudaDataType Ctype, int64_t ldc,
                                                     int64_t batchCount, cublasComputeType_t computeType,
                                                     cublasGemmAlgo_t algo)
{
    (void)algo;
    return hcb_gemm(h, transa, transb, m, n, k, alpha, (const void *)Aarray, Atype, lda, 0, (const void *)Barray,
                    Btype, ldb, 0, beta, (void *)Carray, Ctype, ldc, 0, batchCount, 1, computeType);
}
