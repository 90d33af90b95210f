/* hostcublas.c — build/tests/hostcublas/libcublas.so.13: a cuBLAS test double on hostcuda memory.
 *
 * Implements the handle calls (Create/Destroy, Set/GetStream, Set/GetMathMode, Set/GetPointerMode,
 * Set/GetAtomicsMode, SetWorkspace, GetVersion, GetProperty, GetCudartVersion, GetStatusName /
 * String, LoggerConfigure and the logger callback); Set/GetVector, Set/GetMatrix and their Async
 * forms (and _64); level 1 S/D axpy, scal, dot, nrm2, asum, copy, swap, iamax, iamin (_v2, _v2_64);
 * S/D gemv, S/D geam; Sgemm/Dgemm with their Batched and StridedBatched forms; GemmEx,
 * GemmStridedBatchedEx, GemmBatchedEx for f32/f16/bf16 A/B (C f32 or A's type) with compute 32F
 * (FAST_* compute types: f32 only). Every other export of NVIDIA's library is a weak body in
 * hcb_unimpl.c that names itself once on stderr and answers CUBLAS_STATUS_NOT_SUPPORTED.
 * Real arithmetic: single-precision GEMMs by hostcublas.h (a FAST compute type rounds the inputs
 * as tensor cores consume them; Sgemm in CUBLAS_TF32_TENSOR_OP_MATH runs as FAST_TF32); level 1/2,
 * geam and Dgemm sum in double. Vectors follow the reference BLAS: a negative increment walks the
 * vector from its end (x[(1-n)*incx] first); scal, nrm2, asum, iamax, iamin do nothing / give 0
 * for n <= 0 or incx <= 0. beta == 0 never reads C (or y). Each call is queued on the handle's
 * stream (cuLaunchHostFunc) and runs in stream order; alpha/beta in pointer mode device are read,
 * and results in pointer mode device written, when the work runs; a result to host memory makes
 * the call wait for it, as cuBLAS does. Symbols carry the version node libcublas.so.13.
 * Test-only extra: hostcublas_gemm_calls(compute type) counts the GEMM calls that ran with it.
 * Must not: use a GPU, the real cuBLAS or anything of accelshim; compute what it does not model
 * (that answers CUBLAS_STATUS_NOT_SUPPORTED); run work outside its stream's order.
 */
#include "hostcublas.h"

#include <cublas_v2.h>
#include <library_types.h>
#include <stdatomic.h>

struct cublasContext {
    CUstream stream;
    cublasMath_t math;
    cublasPointerMode_t pm;
    cublasAtomicsMode_t atomics;
    void *workspace;
    size_t workspace_size;
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

static int hcb_op_ok(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

/* Common path of every single-precision GEMM entry point. */
static cublasStatus_t hcb_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                               int k, const void *alpha, const void *A, cudaDataType at, int lda, long long sa,
                               const void *B, cudaDataType bt, int ldb, long long sb, const void *beta, void *C,
                               cudaDataType ctp, int ldc, long long sc, int batch, int ptr_arrays,
                               cublasComputeType_t ct)
{
    hcb_round_t r;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!hcb_op_ok(ta) || !hcb_op_ok(tb))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (hcb_round_of(ct, &r) != 0 || at != bt || !hcb_type_ok(at) || (ctp != at && ctp != CUDA_R_32F) ||
        ((ct != CUBLAS_COMPUTE_32F && ct != CUBLAS_COMPUTE_32F_PEDANTIC) && at != CUDA_R_32F))
        return CUBLAS_STATUS_NOT_SUPPORTED; /* the 32F-compute rows of cublasGemmEx's type table */
    if (!alpha || !beta || m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    hcb_gemm_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_gemm_t){.transa = ta != CUBLAS_OP_N, .transb = tb != CUBLAS_OP_N, .m = m, .n = n, .k = k,
                      .lda = lda, .ldb = ldb, .ldc = ldc, .sa = sa, .sb = sb, .sc = sc, .batch = batch,
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

/* ---- common: queueing, element access --------------------------------------------------------- */

/* Queue FN(ARG) (ARG heap-allocated, freed by FN) on STREAM; WAIT: return only once it has run. */
static cublasStatus_t hcb_submit(CUstream stream, void (*fn)(void *), void *arg, int wait)
{
    if (cuLaunchHostFunc(stream, fn, arg) != CUDA_SUCCESS) {
        free(arg);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (wait && cuStreamSynchronize(stream) != CUDA_SUCCESS)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

static inline double hcb_ld(int dbl, const void *p, long long i)
{
    return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static inline void hcb_st(int dbl, void *p, long long i, double v)
{
    if (dbl)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

/* index of a vector's first element: the reference BLAS walks a negative increment from the end */
static inline long long hcb_base(long long n, long long inc)
{
    return inc < 0 ? (1 - n) * inc : 0;
}

/* a scalar argument: its value now (pointer mode host) or its device address (read when run) */
typedef struct {
    double v;
    const void *dev;
} hcb_scalar_t;

static hcb_scalar_t hcb_scalar(cublasHandle_t h, int dbl, const void *p)
{
    hcb_scalar_t s = {0, NULL};
    if (h->pm == CUBLAS_POINTER_MODE_DEVICE)
        s.dev = p;
    else
        s.v = hcb_ld(dbl, p, 0);
    return s;
}

static double hcb_scalar_get(hcb_scalar_t s, int dbl)
{
    return s.dev ? hcb_ld(dbl, hcb_view(s.dev), 0) : s.v;
}

/* ---- Set/GetVector, Set/GetMatrix ------------------------------------------------------------ */

typedef struct {
    long long rows, cols, elem;
    const char *src;
    long long ses, scs; /* bytes between a column's elements, between columns */
    char *dst;
    long long des, dcs;
} hcb_copy_t;

static void hcb_copy_run(void *arg)
{
    hcb_copy_t *c = arg;
    const char *src = hcb_view(c->src);
    char *dst = hcb_view(c->dst);
    for (long long j = 0; j < c->cols; j++)
        for (long long i = 0; i < c->rows; i++)
            memcpy(dst + i * c->des + j * c->dcs, src + i * c->ses + j * c->scs, (size_t)c->elem);
    free(c);
}

/* device memory spanning [p, p + bytes): hostcuda's arena holds both ends, contiguously */
static int hcb_mapped(const void *p, long long bytes)
{
    char *v = hostcuda_host_view((CUdeviceptr)(uintptr_t)p);
    return v && (bytes <= 1 || hostcuda_host_view((CUdeviceptr)(uintptr_t)p + bytes - 1) == v + bytes - 1);
}

/* TO_DEV: host -> device. STREAM NULL with SYNC: as cuBLAS's blocking copies, all earlier work
 * first, the copy done on return. */
static cublasStatus_t hcb_copy(long long rows, long long cols, long long elem, const void *src, long long ses,
                               long long scs, void *dst, long long des, long long dcs, int to_dev, CUstream stream,
                               int sync)
{
    if (rows == 0 || cols == 0)
        return CUBLAS_STATUS_SUCCESS;
    long long span_s = (rows - 1) * ses + (cols - 1) * scs + elem, span_d = (rows - 1) * des + (cols - 1) * dcs + elem;
    if (!src || !dst || !hcb_mapped(to_dev ? dst : src, to_dev ? span_d : span_s))
        return CUBLAS_STATUS_MAPPING_ERROR;
    hcb_copy_t *c = malloc(sizeof *c);
    if (!c)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *c = (hcb_copy_t){rows, cols, elem, src, ses, scs, dst, des, dcs};
    if (sync) {
        if (cuCtxSynchronize() != CUDA_SUCCESS) {
            free(c);
            return CUBLAS_STATUS_MAPPING_ERROR;
        }
        hcb_copy_run(c);
        return CUBLAS_STATUS_SUCCESS;
    }
    return hcb_submit(stream, hcb_copy_run, c, 0) == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_SUCCESS
                                                                          : CUBLAS_STATUS_MAPPING_ERROR;
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

/* ---- level 1 --------------------------------------------------------------------------------- */

typedef enum { HCB_AXPY, HCB_SCAL, HCB_COPY, HCB_SWAP, HCB_DOT, HCB_NRM2, HCB_ASUM, HCB_IAMAX, HCB_IAMIN } hcb_l1op_t;

typedef struct {
    hcb_l1op_t op;
    int dbl;
    long long n, incx, incy;
    void *x, *y;
    hcb_scalar_t alpha;
    void *result; /* host memory, or device memory (pointer mode device: result_dev) */
    int result_dev;
    int idx64; /* iamax / iamin of the _64 API: an int64_t index */
} hcb_l1_t;

static void hcb_l1_run(void *arg)
{
    hcb_l1_t *o = arg;
    int d = o->dbl;
    char *x = hcb_view(o->x), *y = hcb_view(o->y);
    long long n = o->n, ix = hcb_base(n, o->incx), iy = hcb_base(n, o->incy);
    double alpha = o->op == HCB_AXPY || o->op == HCB_SCAL ? hcb_scalar_get(o->alpha, d) : 0, r = 0;
    double scale = 0, ssq = 1, best = 0;
    long long at = 0;
    for (long long i = 0; i < n; i++, ix += o->incx, iy += o->incy) {
        double a = hcb_ld(d, x, ix);
        switch (o->op) {
        case HCB_AXPY:
            if (alpha != 0)
                hcb_st(d, y, iy, alpha * a + hcb_ld(d, y, iy));
            break;
        case HCB_SCAL: hcb_st(d, x, ix, alpha * a); break;
        case HCB_COPY: hcb_st(d, y, iy, a); break;
        case HCB_SWAP:
            hcb_st(d, x, ix, hcb_ld(d, y, iy));
            hcb_st(d, y, iy, a);
            break;
        case HCB_DOT: r += a * hcb_ld(d, y, iy); break;
        case HCB_NRM2: /* scaled sum of squares, as the reference BLAS: no overflow on the way */
            if (a != 0) {
                double v = fabs(a);
                if (scale < v)
                    ssq = 1 + ssq * (scale / v) * (scale / v), scale = v;
                else
                    ssq += (v / scale) * (v / scale);
            }
            break;
        case HCB_ASUM: r += fabs(a); break;
        case HCB_IAMAX:
            if (i == 0 || fabs(a) > best)
                best = fabs(a), at = i + 1;
            break;
        case HCB_IAMIN:
            if (i == 0 || fabs(a) < best)
                best = fabs(a), at = i + 1;
            break;
        }
    }
    if (o->op == HCB_NRM2)
        r = scale * sqrt(ssq);
    if (o->result) {
        void *res = o->result_dev ? hcb_view(o->result) : o->result;
        if ((o->op == HCB_IAMAX || o->op == HCB_IAMIN) && o->idx64)
            *(int64_t *)res = at; /* 1-based, 0 for an empty vector */
        else if (o->op == HCB_IAMAX || o->op == HCB_IAMIN)
            *(int *)res = (int)at;
        else
            hcb_st(d, res, 0, r);
    }
    free(o);
}

/* X is the vector scal, nrm2, asum, iamax and iamin read (and scal writes) */
static cublasStatus_t hcb_l1w(cublasHandle_t h, hcb_l1op_t op, int dbl, int64_t n, const void *alpha,
                              const void *x, int64_t incx, void *y, int64_t incy, void *result, int idx64)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int reduce = op >= HCB_DOT, single = op == HCB_SCAL || op == HCB_NRM2 || op == HCB_ASUM || op >= HCB_IAMAX;
    if ((op == HCB_AXPY || op == HCB_SCAL) && !alpha)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (reduce && !result)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (n < 0 || (single && incx <= 0))
        n = 0; /* nothing to do; a reduction still gives 0 */
    if (n == 0 && !reduce)
        return CUBLAS_STATUS_SUCCESS;
    hcb_l1_t *o = calloc(1, sizeof *o);
    if (!o)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *o = (hcb_l1_t){.op = op, .dbl = dbl, .n = n, .incx = incx, .incy = incy, .x = (void *)(uintptr_t)x, .y = y,
                    .result = result, .result_dev = h->pm == CUBLAS_POINTER_MODE_DEVICE, .idx64 = idx64};
    if (alpha)
        o->alpha = hcb_scalar(h, dbl, alpha);
    return hcb_submit(h->stream, hcb_l1_run, o, reduce && h->pm == CUBLAS_POINTER_MODE_HOST);
}

static cublasStatus_t hcb_l1(cublasHandle_t h, hcb_l1op_t op, int dbl, int64_t n, const void *alpha, const void *x,
                             int64_t incx, void *y, int64_t incy, void *result)
{
    return hcb_l1w(h, op, dbl, n, alpha, x, incx, y, incy, result, 0);
}

#define HCB_L1_API(suffix, I)                                                                                       \
    HOSTCUBLAS_API cublasStatus_t cublasSaxpy_v2##suffix(cublasHandle_t h, I n, const float *alpha, const float *x, \
                                                         I incx, float *y, I incy)                                  \
    {                                                                                                               \
        return hcb_l1(h, HCB_AXPY, 0, n, alpha, x, incx, y, incy, NULL);                                            \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDaxpy_v2##suffix(cublasHandle_t h, I n, const double *alpha,                \
                                                         const double *x, I incx, double *y, I incy)                \
    {                                                                                                               \
        return hcb_l1(h, HCB_AXPY, 1, n, alpha, x, incx, y, incy, NULL);                                            \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasSscal_v2##suffix(cublasHandle_t h, I n, const float *alpha, float *x,       \
                                                         I incx)                                                    \
    {                                                                                                               \
        return hcb_l1(h, HCB_SCAL, 0, n, alpha, x, incx, NULL, 0, NULL);                                            \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDscal_v2##suffix(cublasHandle_t h, I n, const double *alpha, double *x,     \
                                                         I incx)                                                    \
    {                                                                                                               \
        return hcb_l1(h, HCB_SCAL, 1, n, alpha, x, incx, NULL, 0, NULL);                                            \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasScopy_v2##suffix(cublasHandle_t h, I n, const float *x, I incx, float *y,   \
                                                         I incy)                                                    \
    {                                                                                                               \
        return hcb_l1(h, HCB_COPY, 0, n, NULL, x, incx, y, incy, NULL);                                             \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDcopy_v2##suffix(cublasHandle_t h, I n, const double *x, I incx,            \
                                                         double *y, I incy)                                         \
    {                                                                                                               \
        return hcb_l1(h, HCB_COPY, 1, n, NULL, x, incx, y, incy, NULL);                                             \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasSswap_v2##suffix(cublasHandle_t h, I n, float *x, I incx, float *y, I incy) \
    {                                                                                                               \
        return hcb_l1(h, HCB_SWAP, 0, n, NULL, x, incx, y, incy, NULL);                                             \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDswap_v2##suffix(cublasHandle_t h, I n, double *x, I incx, double *y,       \
                                                         I incy)                                                    \
    {                                                                                                               \
        return hcb_l1(h, HCB_SWAP, 1, n, NULL, x, incx, y, incy, NULL);                                             \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasSdot_v2##suffix(cublasHandle_t h, I n, const float *x, I incx,              \
                                                        const float *y, I incy, float *result)                      \
    {                                                                                                               \
        return hcb_l1(h, HCB_DOT, 0, n, NULL, x, incx, (void *)(uintptr_t)y, incy, result);                         \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDdot_v2##suffix(cublasHandle_t h, I n, const double *x, I incx,             \
                                                        const double *y, I incy, double *result)                    \
    {                                                                                                               \
        return hcb_l1(h, HCB_DOT, 1, n, NULL, x, incx, (void *)(uintptr_t)y, incy, result);                         \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasSnrm2_v2##suffix(cublasHandle_t h, I n, const float *x, I incx,             \
                                                         float *result)                                             \
    {                                                                                                               \
        return hcb_l1(h, HCB_NRM2, 0, n, NULL, x, incx, NULL, 0, result);                                           \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDnrm2_v2##suffix(cublasHandle_t h, I n, const double *x, I incx,            \
                                                         double *result)                                            \
    {                                                                                                               \
        return hcb_l1(h, HCB_NRM2, 1, n, NULL, x, incx, NULL, 0, result);                                           \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasSasum_v2##suffix(cublasHandle_t h, I n, const float *x, I incx,             \
                                                         float *result)                                             \
    {                                                                                                               \
        return hcb_l1(h, HCB_ASUM, 0, n, NULL, x, incx, NULL, 0, result);                                           \
    }                                                                                                               \
    HOSTCUBLAS_API cublasStatus_t cublasDasum_v2##suffix(cublasHandle_t h, I n, const double *x, I incx,            \
                                                         double *result)                                            \
    {                                                                                                               \
        return hcb_l1(h, HCB_ASUM, 1, n, NULL, x, incx, NULL, 0, result);                                           \
    }
HCB_L1_API(, int)
HCB_L1_API(_64, int64_t)

/* iamax / iamin: an int index, an int64_t one in the _64 forms */
#define HCB_IAM_API(name, op, dbl, T, suffix, I, R)                                                     \
    HOSTCUBLAS_API cublasStatus_t name##_v2##suffix(cublasHandle_t h, I n, const T *x, I incx, R *result) \
    {                                                                                                   \
        return hcb_l1w(h, op, dbl, n, NULL, x, incx, NULL, 0, result, sizeof(R) == 8);                  \
    }
HCB_IAM_API(cublasIsamax, HCB_IAMAX, 0, float, , int, int)
HCB_IAM_API(cublasIdamax, HCB_IAMAX, 1, double, , int, int)
HCB_IAM_API(cublasIsamin, HCB_IAMIN, 0, float, , int, int)
HCB_IAM_API(cublasIdamin, HCB_IAMIN, 1, double, , int, int)
HCB_IAM_API(cublasIsamax, HCB_IAMAX, 0, float, _64, int64_t, int64_t)
HCB_IAM_API(cublasIdamax, HCB_IAMAX, 1, double, _64, int64_t, int64_t)
HCB_IAM_API(cublasIsamin, HCB_IAMIN, 0, float, _64, int64_t, int64_t)
HCB_IAM_API(cublasIdamin, HCB_IAMIN, 1, double, _64, int64_t, int64_t)

/* ---- level 2: gemv ----------------------------------------------------------------------------- */

typedef struct {
    int trans, dbl;
    long long m, n, lda, incx, incy;
    const void *A, *x;
    void *y;
    hcb_scalar_t alpha, beta;
} hcb_gemv_t;

static void hcb_gemv_run(void *arg)
{
    hcb_gemv_t *g = arg;
    int d = g->dbl;
    const char *A = hcb_view(g->A), *x = hcb_view(g->x);
    char *y = hcb_view(g->y);
    double alpha = hcb_scalar_get(g->alpha, d), beta = hcb_scalar_get(g->beta, d);
    long long ny = g->trans ? g->n : g->m, nx = g->trans ? g->m : g->n;
    long long iy = hcb_base(ny, g->incy), x0 = hcb_base(nx, g->incx);
    for (long long r = 0; r < ny; r++, iy += g->incy) {
        double s = 0;
        long long ix = x0;
        for (long long c = 0; c < nx; c++, ix += g->incx)
            s += hcb_ld(d, A, g->trans ? c + r * g->lda : r + c * g->lda) * hcb_ld(d, x, ix);
        double v = alpha * s;
        if (beta != 0)
            v += beta * hcb_ld(d, y, iy);
        hcb_st(d, y, iy, v);
    }
    free(g);
}

static cublasStatus_t hcb_gemv(cublasHandle_t h, int dbl, cublasOperation_t trans, int64_t m, int64_t n,
                               const void *alpha, const void *A, int64_t lda, const void *x, int64_t incx,
                               const void *beta, void *y, int64_t incy)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!hcb_op_ok(trans) || m < 0 || n < 0 || incx == 0 || incy == 0 || lda < (m > 1 ? m : 1) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    hcb_gemv_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_gemv_t){.trans = trans != CUBLAS_OP_N, .dbl = dbl, .m = m, .n = n, .lda = lda, .incx = incx,
                      .incy = incy, .A = A, .x = x, .y = y, .alpha = hcb_scalar(h, dbl, alpha),
                      .beta = hcb_scalar(h, dbl, beta)};
    return hcb_submit(h->stream, hcb_gemv_run, g, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasSgemv_v2(cublasHandle_t h, cublasOperation_t trans, int m, int n,
                                             const float *alpha, const float *A, int lda, const float *x, int incx,
                                             const float *beta, float *y, int incy)
{
    return hcb_gemv(h, 0, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemv_v2(cublasHandle_t h, cublasOperation_t trans, int m, int n,
                                             const double *alpha, const double *A, int lda, const double *x,
                                             int incx, const double *beta, double *y, int incy)
{
    return hcb_gemv(h, 1, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

/* ---- geam: C = alpha op(A) + beta op(B) ------------------------------------------------------ */

typedef struct {
    int ta, tb, dbl;
    long long m, n, lda, ldb, ldc;
    const void *A, *B;
    void *C;
    hcb_scalar_t alpha, beta;
} hcb_geam_t;

static void hcb_geam_run(void *arg)
{
    hcb_geam_t *g = arg;
    int d = g->dbl;
    const char *A = hcb_view(g->A), *B = hcb_view(g->B);
    char *C = hcb_view(g->C);
    double alpha = hcb_scalar_get(g->alpha, d), beta = hcb_scalar_get(g->beta, d);
    for (long long j = 0; j < g->n; j++)
        for (long long i = 0; i < g->m; i++) {
            double v = 0; /* a zero scale does not read its matrix */
            if (alpha != 0)
                v += alpha * hcb_ld(d, A, g->ta ? j + i * g->lda : i + j * g->lda);
            if (beta != 0)
                v += beta * hcb_ld(d, B, g->tb ? j + i * g->ldb : i + j * g->ldb);
            hcb_st(d, C, i + j * g->ldc, v);
        }
    free(g);
}

static cublasStatus_t hcb_geam(cublasHandle_t h, int dbl, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                               int64_t n, const void *alpha, const void *A, int64_t lda, const void *beta,
                               const void *B, int64_t ldb, void *C, int64_t ldc)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int64_t ra = ta == CUBLAS_OP_N ? m : n, rb = tb == CUBLAS_OP_N ? m : n;
    if (!hcb_op_ok(ta) || !hcb_op_ok(tb) || m < 0 || n < 0 || !alpha || !beta || lda < (ra > 1 ? ra : 1) ||
        ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* in place only as cuBLAS allows it: C == A needs op N and lda == ldc (likewise B) */
    if ((C == A && (ta != CUBLAS_OP_N || lda != ldc)) || (C == B && (tb != CUBLAS_OP_N || ldb != ldc)))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    hcb_geam_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_geam_t){.ta = ta != CUBLAS_OP_N, .tb = tb != CUBLAS_OP_N, .dbl = dbl, .m = m, .n = n, .lda = lda,
                      .ldb = ldb, .ldc = ldc, .A = A, .B = B, .C = C, .alpha = hcb_scalar(h, dbl, alpha),
                      .beta = hcb_scalar(h, dbl, beta)};
    return hcb_submit(h->stream, hcb_geam_run, g, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasSgeam(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, const float *alpha, const float *A, int lda,
                                          const float *beta, const float *B, int ldb, float *C, int ldc)
{
    return hcb_geam(h, 0, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

HOSTCUBLAS_API cublasStatus_t cublasDgeam(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, const double *alpha, const double *A, int lda,
                                          const double *beta, const double *B, int ldb, double *C, int ldc)
{
    return hcb_geam(h, 1, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

/* ---- Dgemm and its batches ------------------------------------------------------------------- */

typedef struct {
    int ta, tb, batch, ptr_arrays;
    long long m, n, k, lda, ldb, ldc, sa, sb, sc;
    const void *A, *B;
    void *C;
    hcb_scalar_t alpha, beta;
} hcb_dgemm_t;

static void hcb_dgemm_run(void *arg)
{
    hcb_dgemm_t *g = arg;
    double alpha = hcb_scalar_get(g->alpha, 1), beta = hcb_scalar_get(g->beta, 1);
    for (int b = 0; b < g->batch; b++) {
        const double *A, *B;
        double *C;
        if (g->ptr_arrays) {
            A = hcb_view(((const void *const *)hcb_view(g->A))[b]);
            B = hcb_view(((const void *const *)hcb_view(g->B))[b]);
            C = hcb_view(((void *const *)hcb_view(g->C))[b]);
        } else {
            A = (const double *)hcb_view(g->A) + b * g->sa;
            B = (const double *)hcb_view(g->B) + b * g->sb;
            C = (double *)hcb_view(g->C) + b * g->sc;
        }
        for (long long j = 0; j < g->n; j++)
            for (long long i = 0; i < g->m; i++) {
                double s = 0;
                for (long long p = 0; p < g->k; p++)
                    s += A[g->ta ? p + i * g->lda : i + p * g->lda] * B[g->tb ? j + p * g->ldb : p + j * g->ldb];
                double v = alpha * s;
                if (beta != 0)
                    v += beta * C[i + j * g->ldc];
                C[i + j * g->ldc] = v;
            }
    }
    free(g);
}

static cublasStatus_t hcb_dgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                int64_t n, int64_t k, const double *alpha, const void *A, int64_t lda, long long sa,
                                const void *B, int64_t ldb, long long sb, const double *beta, void *C, int64_t ldc,
                                long long sc, int64_t batch, int ptr_arrays)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int64_t ra = ta == CUBLAS_OP_N ? m : k, rb = tb == CUBLAS_OP_N ? k : n;
    if (!hcb_op_ok(ta) || !hcb_op_ok(tb) || !alpha || !beta || m < 0 || n < 0 || k < 0 || batch < 0 ||
        batch > INT32_MAX || lda < (ra > 1 ? ra : 1) || ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0)
        return CUBLAS_STATUS_SUCCESS;
    hcb_dgemm_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_dgemm_t){.ta = ta != CUBLAS_OP_N, .tb = tb != CUBLAS_OP_N, .batch = (int)batch,
                       .ptr_arrays = ptr_arrays, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                       .sa = sa, .sb = sb, .sc = sc, .A = A, .B = B, .C = C, .alpha = hcb_scalar(h, 1, alpha),
                       .beta = hcb_scalar(h, 1, beta)};
    return hcb_submit(h->stream, hcb_dgemm_run, g, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                             int m, int n, int k, const double *alpha, const double *A, int lda,
                                             const double *B, int ldb, const double *beta, double *C, int ldc)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t transa,
                                                        cublasOperation_t transb, int m, int n, int k,
                                                        const double *alpha, const double *A, int lda,
                                                        long long int strideA, const double *B, int ldb,
                                                        long long int strideB, const double *beta, double *C,
                                                        int ldc, long long int strideC, int batchCount)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                     batchCount, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t transa,
                                                 cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                                 const double *const Aarray[], int lda, const double *const Barray[],
                                                 int ldb, const double *beta, double *const Carray[], int ldc,
                                                 int batchCount)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, (const void *)Aarray, lda, 0, (const void *)Barray, ldb, 0,
                     beta, (void *)Carray, ldc, 0, batchCount, 1);
}
