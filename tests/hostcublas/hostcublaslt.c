/* hostcublaslt.c — build/tests/hostcublas/libcublasLt.so.13: a cuBLASLt test double on hostcuda
 * memory, covering what trainers such as llm.c's train_gpt2.cu call.
 *
 * cublasLtCreate/Destroy; MatrixLayoutCreate/Destroy/SetAttribute/GetAttribute (TYPE, ORDER =
 * column only, ROWS, COLS, LD, BATCH_COUNT, STRIDED_BATCH_OFFSET); MatmulDescCreate/Destroy/
 * SetAttribute/GetAttribute (COMPUTE_TYPE, SCALE_TYPE = 32F, POINTER_MODE = host, TRANSA, TRANSB,
 * EPILOGUE, BIAS_POINTER, BIAS_DATA_TYPE, BIAS_BATCH_STRIDE, EPILOGUE_AUX_POINTER / _LD /
 * _BATCH_STRIDE / _DATA_TYPE; SM_COUNT_TARGET and FAST_ACCUM accepted, no effect);
 * MatmulPreferenceCreate/Destroy/SetAttribute/GetAttribute (SEARCH_MODE, MAX_WORKSPACE_BYTES, the
 * alignment and waves hints); MatmulAlgoGetHeuristic (one algorithm needing no workspace, or
 * none with CUBLAS_STATUS_NOT_SUPPORTED for a problem cublasLtMatmul would refuse);
 * cublasLtMatmul: D = epilogue(alpha op(A) op(B) + beta C), A/B both 32F, 16BF or 16F, C == D
 * type (32F, or the A/B type), a 32F compute type, the epilogues DEFAULT, BIAS, GELU(_BIAS),
 * GELU_AUX(_BIAS), DGELU(_BGRAD), BGRADA, BGRADB (arithmetic: hostcublas.h), queued on the stream.
 * Statuses as documented: NULL handle -> NOT_INITIALIZED; NULL or inconsistent arguments, sizes or
 * leading dimensions -> INVALID_VALUE; a valid request outside the above -> NOT_SUPPORTED.
 * Symbols carry the version node libcublasLt.so.13, as the real library's do.
 * Must not: use a GPU, the real cuBLASLt or anything of accelshim; run a matmul whose layouts,
 * types, epilogue or descriptor attributes it does not model (refused with the documented status);
 * run a matmul outside its stream's order.
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
    void *bias, *aux;
    int32_t bias_type, aux_type;
    int64_t bias_stride, aux_ld, aux_stride;
    int32_t sm_target;
    int8_t fast_accum;
};
struct hcb_pref {
    uint32_t search;
    uint64_t max_ws;
    uint32_t align[4];
    float max_waves;
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
                           .epilogue = CUBLASLT_EPILOGUE_DEFAULT, .bias_type = -1, .aux_type = -1};
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
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return &x->bias_type;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE: return &x->aux_type;
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return &x->sm_target;
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: *sz = 1; return &x->fast_accum;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: *sz = sizeof(void *); return &x->bias;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: *sz = sizeof(void *); return &x->aux;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: *sz = 8; return &x->bias_stride;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: *sz = 8; return &x->aux_ld;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: *sz = 8; return &x->aux_stride;
    default: return NULL;
    }
}

/* the epilogues implemented (hostcublas.h); the others are valid requests this double refuses */
static int hcb_epilogue_ok(uint32_t e)
{
    switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: case CUBLASLT_EPILOGUE_BIAS: case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_BIAS: case CUBLASLT_EPILOGUE_GELU_AUX: case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DGELU: case CUBLASLT_EPILOGUE_DGELU_BGRAD: case CUBLASLT_EPILOGUE_BGRADA:
    case CUBLASLT_EPILOGUE_BGRADB:
        return 1;
    default: return 0;
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
    int32_t v = 0;
    if (sz == 4)
        memcpy(&v, buf, 4);
    if ((attr == CUBLASLT_MATMUL_DESC_TRANSA || attr == CUBLASLT_MATMUL_DESC_TRANSB) &&
        v != CUBLAS_OP_N && v != CUBLAS_OP_T && v != CUBLAS_OP_C)
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((attr == CUBLASLT_MATMUL_DESC_POINTER_MODE && v != CUBLASLT_POINTER_MODE_HOST) ||
        (attr == CUBLASLT_MATMUL_DESC_EPILOGUE && !hcb_epilogue_ok((uint32_t)v)) ||
        (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE && hcb_round_of((cublasComputeType_t)v, &r) != 0) ||
        (attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE && v != CUDA_R_32F) ||
        ((attr == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE || attr == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE) &&
         v != -1 && !hcb_type_ok(v)))
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
    struct hcb_pref *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (struct hcb_pref){.search = CUBLASLT_SEARCH_BEST_FIT, .align = {256, 256, 256, 256}};
    *p = (cublasLtMatmulPreference_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

static void *hcb_pref_field(struct hcb_pref *x, cublasLtMatmulPreferenceAttributes_t a, size_t *sz)
{
    *sz = 4;
    switch (a) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return &x->search;
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: *sz = 8; return &x->max_ws;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return &x->align[0];
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return &x->align[1];
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return &x->align[2];
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return &x->align[3];
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return &x->max_waves;
    default: return NULL;
    }
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                   cublasLtMatmulPreferenceAttributes_t attr,
                                                                   const void *buf, size_t size)
{
    size_t sz = 0;
    void *f = p ? hcb_pref_field((struct hcb_pref *)p, attr, &sz) : NULL;
    if (!f || !buf || size != sz)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(f, buf, sz);
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t p,
                                                                   cublasLtMatmulPreferenceAttributes_t attr,
                                                                   void *buf, size_t size, size_t *written)
{
    size_t sz = 0;
    void *f = p ? hcb_pref_field((struct hcb_pref *)p, attr, &sz) : NULL;
    return hcb_get_field(f, sz, buf, size, written);
}

/* Validate a request and describe it as a GEMM (without the pointers): the one check that both
 * the heuristic and the matmul make, so an algorithm is offered exactly for what runs. */
static cublasStatus_t hcb_lt_plan(const struct hcb_desc *x, const struct hcb_layout *la, const struct hcb_layout *lb,
                                  const struct hcb_layout *lc, const struct hcb_layout *ld, hcb_gemm_t *g)
{
    hcb_round_t r;
    if (!x || !la || !lb || !lc || !ld)
        return CUBLAS_STATUS_INVALID_VALUE;
    int ta = x->transa != CUBLAS_OP_N, tb = x->transb != CUBLAS_OP_N;
    uint64_t m = ld->rows, n = ld->cols, k = ta ? la->rows : la->cols;
    if ((ta ? la->cols : la->rows) != m || (tb ? lb->cols : lb->rows) != k || (tb ? lb->rows : lb->cols) != n ||
        lc->rows != m || lc->cols != n || la->batch != ld->batch || lb->batch != ld->batch ||
        lc->batch != ld->batch || ld->batch < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (la->ld < (int64_t)(la->rows > 1 ? la->rows : 1) || lb->ld < (int64_t)(lb->rows > 1 ? lb->rows : 1) ||
        lc->ld < (int64_t)(m > 1 ? m : 1) || ld->ld < (int64_t)(m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!hcb_type_ok(la->type) || la->type != lb->type || lc->type != ld->type ||
        (ld->type != CUDA_R_32F && ld->type != la->type) || hcb_round_of((cublasComputeType_t)x->compute, &r) != 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    uint32_t e = x->epilogue;
    int needs_bias = (e & (HCB_EPI_BIAS | HCB_EPI_BGRAD | HCB_EPI_BGRADA | HCB_EPI_BGRADB)) != 0;
    int needs_aux = (e & HCB_EPI_AUX) != 0;
    if ((needs_bias && !x->bias) || (needs_aux && (!x->aux || x->aux_ld < (int64_t)m)))
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((e & (HCB_EPI_BGRAD | HCB_EPI_BGRADA | HCB_EPI_BGRADB)) && ld->batch > 1)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    *g = (hcb_gemm_t){.transa = ta, .transb = tb, .m = (long long)m, .n = (long long)n, .k = (long long)k,
                      .lda = la->ld, .ldb = lb->ld, .ldc = ld->ld, .sa = la->stride, .sb = lb->stride,
                      .sc = ld->stride, .batch = ld->batch, .round = r, .ldcin = lc->ld, .scin = lc->stride,
                      .ta = la->type, .tb = lb->type, .tc = lc->type, .td = ld->type,
                      .epilogue = e == CUBLASLT_EPILOGUE_DEFAULT ? 0 : e,
                      .bias = needs_bias ? x->bias : NULL, .tbias = x->bias_type == -1 ? ld->type : x->bias_type,
                      .sbias = x->bias_stride, .aux = needs_aux ? x->aux : NULL,
                      .taux = x->aux_type == -1 ? ld->type : x->aux_type, .ldaux = x->aux_ld,
                      .saux = x->aux_stride};
    return CUBLAS_STATUS_SUCCESS;
}

HOSTCUBLAS_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    hcb_gemm_t g;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!d || !a || !b || !c || !dd || !pref || requested < 1 || !results || !returned)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returned = 0;
    cublasStatus_t st = hcb_lt_plan((const void *)d, (const void *)a, (const void *)b, (const void *)c,
                                    (const void *)dd, &g);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    memset(&results[0], 0, sizeof results[0]);
    results[0].workspaceSize = 0; /* fits any CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES */
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
    (void)algo, (void)workspace, (void)wsSize; /* the algorithm needs no workspace */
    hcb_gemm_t plan;
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta || !A || !B || !D || !Cdesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    const void *dl = Ddesc ? (const void *)Ddesc : (const void *)Cdesc;
    cublasStatus_t st = hcb_lt_plan((const void *)desc, (const void *)Adesc, (const void *)Bdesc,
                                    (const void *)Cdesc, dl, &plan);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    plan.alpha = *(const float *)alpha;
    plan.beta = *(const float *)beta;
    if (plan.beta != 0.0f && !C)
        return CUBLAS_STATUS_INVALID_VALUE;
    plan.A = A, plan.B = B, plan.Cin = C, plan.Cout = D;
    hcb_gemm_t *g = malloc(sizeof *g);
    if (!g)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *g = plan;
    return hostcublas_enqueue(g, (CUstream)stream);
}
