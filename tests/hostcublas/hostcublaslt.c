/* hostcublaslt.c — build/tests/hostcublas/libcublasLt.so.13: a cuBLASLt test double on hostcuda
 * memory, the minimal set a trainer needs for fp32 matmuls.
 *
 * cublasLtCreate/Destroy; MatrixLayoutCreate/Destroy/SetAttribute/GetAttribute (TYPE, ORDER =
 * column only, ROWS, COLS, LD, BATCH_COUNT, STRIDED_BATCH_OFFSET); MatmulDescCreate/Destroy/
 * SetAttribute/GetAttribute (COMPUTE_TYPE, SCALE_TYPE, POINTER_MODE = host, TRANSA, TRANSB,
 * EPILOGUE = default); MatmulPreferenceCreate/Destroy/SetAttribute (accepted, ignored);
 * MatmulAlgoGetHeuristic (one algorithm, no workspace); cublasLtMatmul: D = alpha op(A) op(B) +
 * beta C with 32F layouts and a 32F compute type (rounding as hostcublas.h), queued on the stream.
 * Symbols carry the version node libcublasLt.so.13, as the real library's do.
 * Must not: use a GPU, the real cuBLASLt or anything of accelshim; run a matmul whose layouts,
 * types or descriptor attributes it does not model (refused; only the preference attributes are
 * accepted and ignored); run a matmul outside its stream's order.
 */
#include "hostcublas.h"

#include <cublasLt.h>

struct cublasLtContext {
    int unused;
};
struct hcb_layout {
    int32_t type, order;
    uint64_t rows, cols;
    int64_t ld, stride;
    int32_t batch;
};
struct hcb_desc {
    int32_t compute, scale, pm, transa, transb;
    uint32_t epilogue;
};
struct hcb_pref {
    int unused;
};

HOSTCUBLAS_API cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    if (!h)
        return CUBLAS_STATUS_INVALID_VALUE;
    *h = calloc(1, sizeof(struct cublasLtContext));
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

HOSTCUBLAS_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                         uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!l)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct hcb_layout *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (struct hcb_layout){.type = type, .order = CUBLASLT_ORDER_COL, .rows = rows, .cols = cols, .ld = ld,
                             .batch = 1};
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

/* attribute <-> field, with the documented sizes */
static void *hcb_layout_field(struct hcb_layout *x, cublasLtMatrixLayoutAttribute_t a, size_t *sz)
{
    switch (a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: *sz = 4; return &x->type;
    case CUBLASLT_MATRIX_LAYOUT_ORDER: *sz = 4; return &x->order;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: *sz = 8; return &x->rows;
    case CUBLASLT_MATRIX_LAYOUT_COLS: *sz = 8; return &x->cols;
    case CUBLASLT_MATRIX_LAYOUT_LD: *sz = 8; return &x->ld;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: *sz = 4; return &x->batch;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: *sz = 8; return &x->stride;
    default: return NULL;
    }
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                               cublasLtMatrixLayoutAttribute_t attr,
                                                               const void *buf, size_t size)
{
    size_t sz = 0;
    void *f = l ? hcb_layout_field((struct hcb_layout *)l, attr, &sz) : NULL;
    if (!f || !buf || size != sz)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATRIX_LAYOUT_ORDER && *(const int32_t *)buf != CUBLASLT_ORDER_COL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    memcpy(f, buf, sz);
    return CUBLAS_STATUS_SUCCESS;
}

/* The GetAttribute contract (cuBLASLt): field f of sz bytes (NULL: unknown attribute) into buf
 * of `size` bytes; size 0 with `written` asks only for the size. */
static cublasStatus_t hcb_get_field(const void *f, size_t sz, void *buf, size_t size, size_t *written)
{
    if (!f)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (written)
        *written = sz;
    if (size == 0 && written)
        return CUBLAS_STATUS_SUCCESS;
    if (!buf || size != sz)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, f, sz);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                               cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                               size_t size, size_t *written)
{
    size_t sz = 0;
    void *f = l ? hcb_layout_field((struct hcb_layout *)l, attr, &sz) : NULL;
    return hcb_get_field(f, sz, buf, size, written);
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t computeType,
                                                       cudaDataType_t scaleType)
{
    hcb_round_t r;
    if (!d || hcb_round_of(computeType, &r) != 0 || scaleType != CUDA_R_32F)
        return d ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_INVALID_VALUE;
    struct hcb_desc *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (struct hcb_desc){.compute = computeType, .scale = scaleType, .transa = CUBLAS_OP_N, .transb = CUBLAS_OP_N,
                           .epilogue = CUBLASLT_EPILOGUE_DEFAULT};
    *d = (cublasLtMatmulDesc_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

static void *hcb_desc_field(struct hcb_desc *x, cublasLtMatmulDescAttributes_t a, size_t *sz)
{
    *sz = 4;
    switch (a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return &x->compute;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return &x->scale;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return &x->pm;
    case CUBLASLT_MATMUL_DESC_TRANSA: return &x->transa;
    case CUBLASLT_MATMUL_DESC_TRANSB: return &x->transb;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return &x->epilogue;
    default: return NULL;
    }
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                             cublasLtMatmulDescAttributes_t attr, const void *buf,
                                                             size_t size)
{
    size_t sz = 0;
    hcb_round_t r;
    void *f = d ? hcb_desc_field((struct hcb_desc *)d, attr, &sz) : NULL;
    if (!f || !buf || size != sz)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t v;
    memcpy(&v, buf, 4);
    if ((attr == CUBLASLT_MATMUL_DESC_POINTER_MODE && v != CUBLASLT_POINTER_MODE_HOST) ||
        (attr == CUBLASLT_MATMUL_DESC_EPILOGUE && v != CUBLASLT_EPILOGUE_DEFAULT) ||
        (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE && hcb_round_of((cublasComputeType_t)v, &r) != 0) ||
        (attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE && v != CUDA_R_32F))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    memcpy(f, buf, sz);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                             cublasLtMatmulDescAttributes_t attr, void *buf,
                                                             size_t size, size_t *written)
{
    size_t sz = 0;
    void *f = d ? hcb_desc_field((struct hcb_desc *)d, attr, &sz) : NULL;
    return hcb_get_field(f, sz, buf, size, written);
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    if (!p)
        return CUBLAS_STATUS_INVALID_VALUE;
    *p = calloc(1, sizeof(struct hcb_pref));
    return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                   cublasLtMatmulPreferenceAttributes_t attr,
                                                                   const void *buf, size_t size)
{
    (void)attr;
    return p && buf && size > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    if (!h || !d || !a || !b || !c || !dd || !pref || requested < 1 || !results || !returned)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(&results[0], 0, sizeof results[0]);
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                                             const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                             cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                             cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                             const cublasLtMatmulAlgo_t *algo, void *workspace, size_t wsSize,
                                             cudaStream_t stream)
{
    (void)algo, (void)workspace, (void)wsSize;
    const struct hcb_desc *x = (const struct hcb_desc *)desc;
    const struct hcb_layout *la = (const void *)Adesc, *lb = (const void *)Bdesc, *lc = (const void *)Cdesc;
    const struct hcb_layout *ld = Ddesc ? (const void *)Ddesc : lc;
    hcb_round_t r;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!x || !la || !lb || !lc || !alpha || !beta || !D)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (la->type != CUDA_R_32F || lb->type != CUDA_R_32F || lc->type != CUDA_R_32F || ld->type != CUDA_R_32F ||
        hcb_round_of((cublasComputeType_t)x->compute, &r) != 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    int ta = x->transa != CUBLAS_OP_N, tb = x->transb != CUBLAS_OP_N;
    uint64_t m = ld->rows, n = ld->cols, k = ta ? la->rows : la->cols;
    if ((ta ? la->cols : la->rows) != m || (tb ? lb->cols : lb->rows) != k || (tb ? lb->rows : lb->cols) != n ||
        lc->rows != m || lc->cols != n || la->batch != ld->batch || lb->batch != ld->batch)
        return CUBLAS_STATUS_INVALID_VALUE;
    hcb_gemm_t *g = calloc(1, sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = (hcb_gemm_t){.transa = ta, .transb = tb, .m = (long long)m, .n = (long long)n, .k = (long long)k,
                      .lda = la->ld, .ldb = lb->ld, .ldc = ld->ld, .sa = la->stride, .sb = lb->stride,
                      .sc = ld->stride, .batch = ld->batch, .alpha = *(const float *)alpha,
                      .beta = *(const float *)beta, .round = r, .A = A, .B = B, .Cin = C, .Cout = D,
                      .ldcin = lc->ld, .scin = lc->stride};
    return hostcublas_enqueue(g, (CUstream)stream);
}
