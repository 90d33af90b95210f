/* hcb_blas.c — libcublas.so.13's level 1, level 2 (gemv), geam and double-precision GEMMs, and
 * their _64 forms, on hostcuda memory (hostcublas.c has the handle, the copies, the
 * single-precision and Ex GEMMs).
 *
 * Arithmetic in double, naive loops: S/D axpy, scal, copy, swap, dot, nrm2 (scaled, as the
 * reference BLAS), asum, iamax, iamin; S/D gemv; S/D geam; Dgemm with Batched and StridedBatched.
 * Vectors follow the reference BLAS: a negative increment walks the vector from its end
 * (x[(1-n)*incx] first); scal, nrm2, asum, iamax, iamin do nothing / give 0 for n <= 0 or
 * incx <= 0; axpy with alpha 0 leaves y alone; beta 0 never reads y or C. Each call is queued on
 * the handle's stream (hcb_submit); a result to host memory makes the call wait for it.
 * Must not: compute outside the handle's stream order; read an operand its scale says is unused.
 */
#include "hcb_internal.h"

#include <stdint.h>

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

/* ---- the _64 API: the same routines with int64_t sizes ---------------------------------------- */

HOSTCUBLAS_API cublasStatus_t cublasDgemm_v2_64(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                                int64_t m, int64_t n, int64_t k, const double *alpha,
                                                const double *A, int64_t lda, const double *B, int64_t ldb,
                                                const double *beta, double *C, int64_t ldc)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t h, cublasOperation_t transa,
                                                           cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                           const double *alpha, const double *A, int64_t lda,
                                                           long long int strideA, const double *B, int64_t ldb,
                                                           long long int strideB, const double *beta, double *C,
                                                           int64_t ldc, long long int strideC, int64_t batchCount)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                     batchCount, 0);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemmBatched_64(cublasHandle_t h, cublasOperation_t transa,
                                                    cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                    const double *alpha, const double *const Aarray[], int64_t lda,
                                                    const double *const Barray[], int64_t ldb, const double *beta,
                                                    double *const Carray[], int64_t ldc, int64_t batchCount)
{
    return hcb_dgemm(h, transa, transb, m, n, k, alpha, (const void *)Aarray, lda, 0, (const void *)Barray, ldb, 0,
                     beta, (void *)Carray, ldc, 0, batchCount, 1);
}

HOSTCUBLAS_API cublasStatus_t cublasSgemv_v2_64(cublasHandle_t h, cublasOperation_t trans, int64_t m, int64_t n,
                                                const float *alpha, const float *A, int64_t lda, const float *x,
                                                int64_t incx, const float *beta, float *y, int64_t incy)
{
    return hcb_gemv(h, 0, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

HOSTCUBLAS_API cublasStatus_t cublasDgemv_v2_64(cublasHandle_t h, cublasOperation_t trans, int64_t m, int64_t n,
                                                const double *alpha, const double *A, int64_t lda, const double *x,
                                                int64_t incx, const double *beta, double *y, int64_t incy)
{
    return hcb_gemv(h, 1, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

HOSTCUBLAS_API cublasStatus_t cublasSgeam_64(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                             int64_t m, int64_t n, const float *alpha, const float *A, int64_t lda,
                                             const float *beta, const float *B, int64_t ldb, float *C, int64_t ldc)
{
    return hcb_geam(h, 0, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

HOSTCUBLAS_API cublasStatus_t cublasDgeam_64(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                                             int64_t m, int64_t n, const double *alpha, const double *A, int64_t lda,
                                             const double *beta, const double *B, int64_t ldb, double *C,
                                             int64_t ldc)
{
    return hcb_geam(h, 1, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
