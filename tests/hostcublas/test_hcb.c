/* test_hcb.c — hostcublas and hostcublaslt compute what llm.c asks of cuBLAS / cuBLASLt, within
 * the rounding bound of their types around a double-precision reference on the same inputs, and
 * refuse what they must with the documented status.
 *
 * Bound for one output: |got - ref| <= slope * (k * 2^-23 * sum_p |a_p b_p| + 1e-6 |ref|) (fp32
 * accumulation; tanhf) + u * |ref| (RNE storing, unit roundoff u: 2^-24 fp32, 2^-8 bf16, 2^-11
 * f16); slope 1.2 where a GELU or its gradient follows the product (both slopes are below 1.13). Every comparison
 * has a control that feeds the same checker a wrong reference (a transpose swapped, the bias
 * left out, TF32 rounding left out) and requires it to fail, so the checker can fail.
 * Cases: cuBLAS Sgemm / SgemmStridedBatched, TF32 math mode rounded as the GPU's TF32 (10-bit
 * mantissa, RNE), NVIDIA_TF32_OVERRIDE=0; cuBLASLt 16BF / 16F / 32F layouts in all four transposes,
 * strided batches accumulating in place (beta 1, C == D as llm.c), EPILOGUE_BIAS with
 * BIAS_DATA_TYPE, GELU_AUX_BIAS with AUX_POINTER / AUX_LD, DGELU, BGRADB; preferences and the
 * heuristic; bad handles, sizes, layouts and attributes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectives/ash_coll_cast.h"

#include "test_hcb_check.h"

static CUcontext g_ctx;

/* ---- host matrices in any of the three types --------------------------------------------------- */

static float t_load(int t, const void *p, long i)
{
    if (t == CUDA_R_16BF)
        return ash_coll_bf16_to_f32(((const uint16_t *)p)[i]);
    if (t == CUDA_R_16F)
        return ash_coll_f16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void t_store(int t, void *p, long i, float v)
{
    if (t == CUDA_R_16BF)
        ((uint16_t *)p)[i] = ash_coll_f32_to_bf16_rn(v);
    else if (t == CUDA_R_16F)
        ((uint16_t *)p)[i] = ash_coll_f32_to_f16_rn(v);
    else
        ((float *)p)[i] = v;
}

static size_t t_size(int t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

static double t_half_ulp(int t)
{
    return t == CUDA_R_16BF ? 0x1p-8 : t == CUDA_R_16F ? 0x1p-11 : 0x1p-24; /* unit roundoff 2^-p */
}

static uint64_t g_rng = 12345;
static float t_rand(void) /* uniform in [-1, 1), with all 23 mantissa bits in use */
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(g_rng >> 11) / 4503599627370496.0 - 1.0);
}

static void *t_fill(int t, long n)
{
    void *p = malloc(n * t_size(t) + 4);
    assert_non_null(p);
    for (long i = 0; i < n; i++)
        t_store(t, p, i, t_rand());
    return p;
}

static CUdeviceptr t_dev(const void *h, size_t bytes)
{
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, bytes + 16));
    if (h)
        CU_OK(cuMemcpyHtoD(d, h, bytes));
    else
        CU_OK(cuMemsetD8(d, 0, bytes));
    return d;
}

static void t_get(void *h, CUdeviceptr d, size_t bytes)
{
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(h, d, bytes));
}

/* ---- the reference and the checker -------------------------------------------------------------- */

typedef struct {
    int ta, tb;  /* transposes */
    long m, n, k, lda, ldb, ldc;
    int tA, tC;  /* A/B type, C/D type */
    double (*round_in)(double); /* NULL: inputs as they are */
} t_gemm_t;

/* ref[i + j m] = sum_p opA(i,p) opB(p,j) in double; mag = sum_p |...| */
static void t_reference(const t_gemm_t *g, const void *A, const void *B, double *ref, double *mag)
{
    for (long j = 0; j < g->n; j++)
        for (long i = 0; i < g->m; i++) {
            double s = 0, a_s = 0;
            for (long p = 0; p < g->k; p++) {
                double a = t_load(g->tA, A, g->ta ? p + i * g->lda : i + p * g->lda);
                double b = t_load(g->tA, B, g->tb ? j + p * g->ldb : p + j * g->ldb);
                if (g->round_in)
                    a = g->round_in(a), b = g->round_in(b);
                s += a * b;
                a_s += fabs(a * b);
            }
            ref[i + j * g->m] = s;
            mag[i + j * g->m] = a_s;
        }
}

/* 0 when every got(i,j) is within the bound of want; else prints the first miss, returns 1 */
static int t_check(const char *what, const t_gemm_t *g, const void *got, int tgot, long ldgot, const double *want,
                   const double *mag, double slope, int quiet)
{
    for (long j = 0; j < g->n; j++)
        for (long i = 0; i < g->m; i++) {
            double w = want[i + j * g->m], v = t_load(tgot, got, i + j * ldgot);
            double bound = slope * (g->k * 0x1p-23 * mag[i + j * g->m] + 1e-6 * fabs(w)) +
                           t_half_ulp(tgot) * fabs(w) * 1.0001 + 1e-30;
            if (!(fabs(v - w) <= bound)) {
                if (!quiet)
                    print_error("%s: (%ld,%ld): got %.9g, reference %.9g, |diff| %.3g > bound %.3g\n", what, i, j, v,
                                w, fabs(v - w), bound);
                return 1;
            }
        }
    return 0;
}

static double t_gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double t_dgelu(double x)
{
    double s = sqrt(2.0 / M_PI), u = s * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * x * x);
}

static double t_tf32(double x) /* fp32 -> TF32, round to nearest even (10 mantissa bits) */
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0xfffu + ((u >> 13) & 1u);
    u &= ~0x1fffu;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- cuBLASLt --------------------------------------------------------------------------------- */

typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c, d;
    cublasLtMatmulPreference_t pref;
} t_lt_t;

static void t_lt_setup(t_lt_t *lt, const t_gemm_t *g, int batch, long long sa, long long sb, long long sc)
{
    cublasOperation_t opa = g->ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = g->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    ST_OK(cublasLtMatmulDescCreate(&lt->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    ST_OK(cublasLtMatmulDescSetAttribute(lt->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    ST_OK(cublasLtMatmulDescSetAttribute(lt->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    ST_OK(cublasLtMatrixLayoutCreate(&lt->a, g->tA, g->ta ? g->k : g->m, g->ta ? g->m : g->k, g->lda));
    ST_OK(cublasLtMatrixLayoutCreate(&lt->b, g->tA, g->tb ? g->n : g->k, g->tb ? g->k : g->n, g->ldb));
    ST_OK(cublasLtMatrixLayoutCreate(&lt->c, g->tC, g->m, g->n, g->ldc));
    ST_OK(cublasLtMatrixLayoutCreate(&lt->d, g->tC, g->m, g->n, g->ldc));
    if (batch > 1) {
        cublasLtMatrixLayout_t ls[4] = {lt->a, lt->b, lt->c, lt->d};
        long long st[4] = {sa, sb, sc, sc};
        for (int i = 0; i < 4; i++) {
            ST_OK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
            ST_OK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st[i],
                                                   sizeof st[i]));
        }
    }
    size_t ws = 32u << 20;
    ST_OK(cublasLtMatmulPreferenceCreate(&lt->pref));
    ST_OK(cublasLtMatmulPreferenceSetAttribute(lt->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
}

static void t_lt_free(t_lt_t *lt)
{
    cublasLtMatmulPreferenceDestroy(lt->pref);
    cublasLtMatmulDescDestroy(lt->desc);
    cublasLtMatrixLayoutDestroy(lt->a);
    cublasLtMatrixLayoutDestroy(lt->b);
    cublasLtMatrixLayoutDestroy(lt->c);
    cublasLtMatrixLayoutDestroy(lt->d);
}

/* heuristic (must offer one algorithm needing no more than the workspace), then the matmul */
static void t_lt_run(cublasLtHandle_t h, t_lt_t *lt, float alpha, float beta, CUdeviceptr A, CUdeviceptr B,
                     CUdeviceptr C, CUdeviceptr D, CUdeviceptr ws)
{
    cublasLtMatmulHeuristicResult_t heur;
    int n = 0;
    ST_OK(cublasLtMatmulAlgoGetHeuristic(h, lt->desc, lt->a, lt->b, lt->c, lt->d, lt->pref, 1, &heur, &n));
    assert_int_equal(n, 1);
    assert_int_equal(heur.state, CUBLAS_STATUS_SUCCESS);
    assert_true(heur.workspaceSize <= (32u << 20));
    ST_OK(cublasLtMatmul(h, lt->desc, &alpha, (void *)A, lt->a, (void *)B, lt->b, &beta, (void *)C, lt->c,
                         (void *)D, lt->d, &heur.algo, (void *)ws, 32u << 20, 0));
}

/* one plain GEMM in the given types and transposes, against the reference; control: the
 * other transpose of B as the reference must fail the same check (when square in k x n) */
static void t_lt_plain(int tA, int tC, int ta, int tb)
{
    t_gemm_t g = {.ta = ta, .tb = tb, .m = 24, .n = 16, .k = 16, .tA = tA, .tC = tC};
    g.lda = ta ? g.k : g.m, g.ldb = tb ? g.n : g.k, g.ldc = g.m;
    long na = g.m * g.k, nb = g.k * g.n, nc = g.m * g.n;
    void *A = t_fill(tA, na), *B = t_fill(tA, nb), *D = malloc(nc * t_size(tC));
    double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag);
    cublasLtHandle_t h;
    t_lt_t lt;
    ST_OK(cublasLtCreate(&h));
    t_lt_setup(&lt, &g, 1, 0, 0, 0);
    CUdeviceptr dA = t_dev(A, na * t_size(tA)), dB = t_dev(B, nb * t_size(tA)), dD = t_dev(NULL, nc * t_size(tC));
    CUdeviceptr ws = t_dev(NULL, 1024);
    t_lt_run(h, &lt, 1.0f, 0.0f, dA, dB, dD, dD, ws);
    t_get(D, dD, nc * t_size(tC));
    t_reference(&g, A, B, ref, mag);
    char what[96];
    snprintf(what, sizeof what, "lt type %d->%d op %c%c", tA, tC, ta ? 'T' : 'N', tb ? 'T' : 'N');
    assert_int_equal(t_check(what, &g, D, tC, g.ldc, ref, mag, 1.0, 0), 0);
    /* control: B read the other way round (k == n here, so the layout still fits) */
    t_gemm_t wrong = g;
    wrong.tb = !tb;
    t_reference(&wrong, A, B, ref, mag);
    assert_int_equal(t_check(what, &g, D, tC, g.ldc, ref, mag, 1.0, 1), 1);
    t_lt_free(&lt);
    ST_OK(cublasLtDestroy(h));
    cuMemFree(dA), cuMemFree(dB), cuMemFree(dD), cuMemFree(ws);
    free(A), free(B), free(D), free(ref), free(mag);
}

static void test_lt_bf16_transposes(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            t_lt_plain(CUDA_R_16BF, CUDA_R_16BF, ta, tb);
}

static void test_lt_f16_and_f32_out(void **state)
{
    (void)state;
    t_lt_plain(CUDA_R_16F, CUDA_R_16F, 1, 0);
    t_lt_plain(CUDA_R_16BF, CUDA_R_32F, 0, 1);
    t_lt_plain(CUDA_R_32F, CUDA_R_32F, 1, 0);
}

/* llm.c's attention: strided batches; and its weight gradient: accumulate in place (beta 1, C == D) */
static void test_lt_batched_accumulate(void **state)
{
    (void)state;
    enum { BATCH = 3 };
    t_gemm_t g = {.ta = 1, .tb = 0, .m = 16, .n = 8, .k = 32, .tA = CUDA_R_16BF, .tC = CUDA_R_16BF};
    g.lda = g.k, g.ldb = g.k, g.ldc = g.m;
    long na = g.m * g.k, nb = g.k * g.n, nc = g.m * g.n;
    void *A = t_fill(g.tA, na * BATCH), *B = t_fill(g.tA, nb * BATCH), *C = t_fill(g.tC, nc * BATCH);
    void *D = malloc(nc * BATCH * 2);
    double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag);
    cublasLtHandle_t h;
    t_lt_t lt;
    ST_OK(cublasLtCreate(&h));
    t_lt_setup(&lt, &g, BATCH, na, nb, nc);
    CUdeviceptr dA = t_dev(A, na * BATCH * 2), dB = t_dev(B, nb * BATCH * 2), dC = t_dev(C, nc * BATCH * 2);
    CUdeviceptr ws = t_dev(NULL, 1024);
    t_lt_run(h, &lt, 1.0f, 1.0f, dA, dB, dC, dC, ws);
    t_get(D, dC, nc * BATCH * 2);
    for (int b = 0; b < BATCH; b++) {
        t_reference(&g, (uint16_t *)A + b * na, (uint16_t *)B + b * nb, ref, mag);
        for (long i = 0; i < nc; i++) {
            double c = t_load(g.tC, C, b * nc + i);
            ref[i] += c, mag[i] += fabs(c);
        }
        assert_int_equal(t_check("lt batched beta 1", &g, (uint16_t *)D + b * nc, g.tC, g.ldc, ref, mag, 1.0, 0), 0);
        if (b == 1) /* control: batch 1 against batch 0's product */
            assert_int_equal(t_check("lt batched", &g, (uint16_t *)D, g.tC, g.ldc, ref, mag, 1.0, 1), 1);
    }
    t_lt_free(&lt);
    ST_OK(cublasLtDestroy(h));
    cuMemFree(dA), cuMemFree(dB), cuMemFree(dC), cuMemFree(ws);
    free(A), free(B), free(C), free(D), free(ref), free(mag);
}

/* llm.c's matmul_forward_cublaslt (transA, bias) and its fused GELU forward / backward */
typedef enum { E_BIAS, E_BIAS_F32, E_GELU_AUX_BIAS, E_DGELU, E_BGRADB } t_epi_case_t;

static void t_lt_epilogue(t_epi_case_t which)
{
    t_gemm_t g = {.ta = 1, .tb = 0, .m = 32, .n = 16, .k = 24, .tA = CUDA_R_16BF, .tC = CUDA_R_16BF};
    g.lda = g.k, g.ldb = which == E_BGRADB ? g.n : g.k, g.ldc = g.m;
    if (which == E_BGRADB)
        g.tb = 1;
    long na = g.m * g.k, nb = g.k * g.n, nc = g.m * g.n, ldaux = g.m;
    int tbias = which == E_BIAS_F32 ? CUDA_R_32F : CUDA_R_16BF;
    long nbias = which == E_BGRADB ? g.n : g.m;
    void *A = t_fill(g.tA, na), *B = t_fill(g.tA, nb), *bias = t_fill(tbias, nbias);
    void *aux = t_fill(CUDA_R_16BF, nc), *D = malloc(nc * 2), *aux_out = malloc(nc * 2);
    void *bias_out = malloc(nbias * t_size(tbias));
    double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag), *want = malloc(nc * sizeof *want);
    cublasLtHandle_t h;
    t_lt_t lt;
    ST_OK(cublasLtCreate(&h));
    t_lt_setup(&lt, &g, 1, 0, 0, 0);
    CUdeviceptr dA = t_dev(A, na * 2), dB = t_dev(B, nb * 2), dD = t_dev(NULL, nc * 2), ws = t_dev(NULL, 1024);
    CUdeviceptr dbias = t_dev(which == E_BGRADB ? NULL : bias, nbias * t_size(tbias));
    CUdeviceptr daux = t_dev(which == E_DGELU ? aux : NULL, nc * 2);
    cublasLtEpilogue_t e = which == E_GELU_AUX_BIAS ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                           : which == E_DGELU       ? CUBLASLT_EPILOGUE_DGELU
                           : which == E_BGRADB      ? CUBLASLT_EPILOGUE_BGRADB
                                                    : CUBLASLT_EPILOGUE_BIAS;
    ST_OK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    if (which != E_DGELU) {
        void *bp = (void *)dbias;
        ST_OK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp));
        if (which == E_BIAS_F32) /* default (-1) is D's type; llm.c sets it explicitly */
            ST_OK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tbias, sizeof tbias));
    }
    if (which == E_GELU_AUX_BIAS || which == E_DGELU) {
        void *ap = (void *)daux;
        int64_t ld = ldaux;
        ST_OK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
        ST_OK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &ap, sizeof ap));
    }
    t_lt_run(h, &lt, 1.0f, 0.0f, dA, dB, dD, dD, ws);
    t_get(D, dD, nc * 2);
    t_get(aux_out, daux, nc * 2);
    t_get(bias_out, dbias, nbias * t_size(tbias));
    t_reference(&g, A, B, ref, mag);
    for (long j = 0; j < g.n; j++)
        for (long i = 0; i < g.m; i++) {
            long x = i + j * g.m;
            double pre = ref[x] + (which <= E_GELU_AUX_BIAS ? t_load(tbias, bias, i) : 0.0);
            want[x] = which == E_GELU_AUX_BIAS ? t_gelu(pre)
                      : which == E_DGELU       ? ref[x] * t_dgelu(t_load(CUDA_R_16BF, aux, x))
                                               : pre;
            if (which == E_GELU_AUX_BIAS)
                ref[x] = pre; /* the aux matrix holds the GELU's input */
        }
    const char *names[] = {"BIAS", "BIAS f32", "GELU_AUX_BIAS", "DGELU", "BGRADB"};
    assert_int_equal(t_check(names[which], &g, D, CUDA_R_16BF, g.ldc, want, mag, 1.2, 0), 0);
    if (which == E_GELU_AUX_BIAS) {
        assert_int_equal(t_check("GELU_AUX_BIAS aux", &g, aux_out, CUDA_R_16BF, ldaux, ref, mag, 1.0, 0), 0);
        /* control: D is not the pre-GELU value */
        assert_int_equal(t_check("GELU_AUX_BIAS", &g, D, CUDA_R_16BF, g.ldc, ref, mag, 1.2, 1), 1);
    }
    if (which == E_BIAS || which == E_BIAS_F32) { /* control: the reference without the bias */
        t_reference(&g, A, B, ref, mag);
        assert_int_equal(t_check(names[which], &g, D, CUDA_R_16BF, g.ldc, ref, mag, 1.0, 1), 1);
    }
    if (which == E_DGELU) { /* control: the product alone */
        assert_int_equal(t_check("DGELU", &g, D, CUDA_R_16BF, g.ldc, ref, mag, 1.2, 1), 1);
    }
    if (which == E_BGRADB) { /* bias[j] = sum_p op(B)(p, j); op(B) = B^T here: B is n x k */
        for (long j = 0; j < g.n; j++) {
            double s = 0, a = 0;
            for (long p = 0; p < g.k; p++) {
                double b = t_load(g.tA, B, j + p * g.ldb);
                s += b, a += fabs(b);
            }
            double got = t_load(tbias, bias_out, j), bound = g.k * 0x1p-23 * a + t_half_ulp(tbias) * fabs(s) * 1.0001;
            if (!(fabs(got - s) <= bound))
                fail_msg("BGRADB: bias[%ld] = %.9g, reference %.9g (bound %.3g)", j, got, s, bound);
        }
        double wrong = 0; /* control: a column sum instead of a row sum differs */
        for (long p = 0; p < g.k; p++)
            wrong += t_load(g.tA, B, p + 0 * g.ldb);
        assert_true(fabs(t_load(tbias, bias_out, 0) - wrong) > 1e-3);
    }
    t_lt_free(&lt);
    ST_OK(cublasLtDestroy(h));
    cuMemFree(dA), cuMemFree(dB), cuMemFree(dD), cuMemFree(ws), cuMemFree(dbias), cuMemFree(daux);
    free(A), free(B), free(bias), free(aux), free(D), free(aux_out), free(bias_out), free(ref), free(mag), free(want);
}

static void test_lt_bias(void **state) { (void)state; t_lt_epilogue(E_BIAS); t_lt_epilogue(E_BIAS_F32); }
static void test_lt_gelu_aux_bias(void **state) { (void)state; t_lt_epilogue(E_GELU_AUX_BIAS); }
static void test_lt_dgelu(void **state) { (void)state; t_lt_epilogue(E_DGELU); }
static void test_lt_bgradb(void **state) { (void)state; t_lt_epilogue(E_BGRADB); }

/* the documented statuses */
static void test_lt_strict(void **state)
{
    (void)state;
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t a, b, c, bad;
    cublasLtMatmulPreference_t p;
    cublasLtMatmulHeuristicResult_t heur;
    int n = -1;
    float one = 1.0f, zero = 0.0f;
    ST_OK(cublasLtCreate(&h));
    ST_OK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    ST_OK(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, 8, 4, 8));
    ST_OK(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, 4, 8, 4));
    ST_OK(cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, 8, 8, 8));
    ST_OK(cublasLtMatmulPreferenceCreate(&p));
    CUdeviceptr buf = t_dev(NULL, 4096);
    void *x = (void *)buf;
    ST_OK(cublasLtMatmulAlgoGetHeuristic(h, d, a, b, c, c, p, 1, &heur, &n));
    assert_int_equal(n, 1);
    ST_EXPECT(cublasLtMatmul(NULL, d, &one, x, a, x, b, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_NOT_INITIALIZED);
    ST_EXPECT(cublasLtMatmulAlgoGetHeuristic(NULL, d, a, b, c, c, p, 1, &heur, &n), CUBLAS_STATUS_NOT_INITIALIZED);
    ST_EXPECT(cublasLtMatmul(h, d, &one, x, b, x, a, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_INVALID_VALUE); /* A 4x8 times B 8x4 is not 8x8 */
    ST_EXPECT(cublasLtMatrixLayoutCreate(&bad, CUDA_R_16BF, 8, 4, 4), CUBLAS_STATUS_SUCCESS);
    ST_EXPECT(cublasLtMatmul(h, d, &one, x, bad, x, b, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_INVALID_VALUE); /* ld 4 < 8 rows */
    cublasLtMatrixLayoutDestroy(bad);
    ST_OK(cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, 4, 8, 4)); /* B's type differs from A's */
    ST_EXPECT(cublasLtMatmul(h, d, &one, x, a, x, bad, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_NOT_SUPPORTED);
    n = -1;
    ST_EXPECT(cublasLtMatmulAlgoGetHeuristic(h, d, a, bad, c, c, p, 1, &heur, &n), CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(n, 0);
    cublasLtOrder_t row = CUBLASLT_ORDER_ROW;
    ST_EXPECT(cublasLtMatrixLayoutSetAttribute(bad, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row),
              CUBLAS_STATUS_NOT_SUPPORTED);
    cublasLtMatrixLayoutDestroy(bad);
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
    ST_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    ST_EXPECT(cublasLtMatmul(h, d, &one, x, a, x, b, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_INVALID_VALUE); /* BIAS without BIAS_POINTER */
    e = CUBLASLT_EPILOGUE_GELU_AUX;
    void *bp = x;
    ST_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    ST_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &bp, sizeof bp));
    int64_t ld = 4;
    ST_OK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
    ST_EXPECT(cublasLtMatmul(h, d, &one, x, a, x, b, &zero, x, c, x, c, NULL, NULL, 0, 0),
              CUBLAS_STATUS_INVALID_VALUE); /* AUX_LD 4 < 8 rows */
    e = CUBLASLT_EPILOGUE_RELU;
    ST_EXPECT(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e),
              CUBLAS_STATUS_NOT_SUPPORTED);
    int32_t op = 7;
    ST_EXPECT(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op),
              CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, 4),
              CUBLAS_STATUS_INVALID_VALUE); /* wrong size */
    ST_EXPECT(cublasLtMatmulDescSetAttribute(d, (cublasLtMatmulDescAttributes_t)9999, &op, sizeof op),
              CUBLAS_STATUS_INVALID_VALUE);
    uint32_t ws32 = 1;
    ST_EXPECT(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws32, sizeof ws32),
              CUBLAS_STATUS_INVALID_VALUE); /* uint64_t attribute */
    uint64_t ws = 1 << 20, back = 0;
    size_t w = 0;
    ST_OK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    ST_OK(cublasLtMatmulPreferenceGetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &back, sizeof back, &w));
    assert_int_equal(back, ws);
    assert_int_equal(w, 8);
    ST_EXPECT(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_16F, CUDA_R_16F), CUBLAS_STATUS_NOT_SUPPORTED);
    ST_EXPECT(cublasLtDestroy(NULL), CUBLAS_STATUS_NOT_INITIALIZED);
    cuMemFree(buf);
    cublasLtMatmulDescDestroy(d);
    cublasLtMatmulPreferenceDestroy(p);
    cublasLtMatrixLayoutDestroy(a), cublasLtMatrixLayoutDestroy(b), cublasLtMatrixLayoutDestroy(c);
    ST_OK(cublasLtDestroy(h));
}

/* ---- cuBLAS (llm.c fp32) ------------------------------------------------------------------------ */

static void t_sgemm(cublasMath_t math, int tf32_ref, int strided)
{
    enum { M = 32, N = 16, K = 48, BATCH = 2 };
    t_gemm_t g = {.ta = 1, .tb = 0, .m = M, .n = N, .k = K, .lda = K, .ldb = K, .ldc = M, .tA = CUDA_R_32F,
                  .tC = CUDA_R_32F, .round_in = tf32_ref ? t_tf32 : NULL};
    int batch = strided ? BATCH : 1;
    float *A = t_fill(CUDA_R_32F, M * K * batch), *B = t_fill(CUDA_R_32F, K * N * batch);
    float *C = malloc(sizeof(float) * M * N * batch);
    double ref[M * N], mag[M * N];
    cublasHandle_t h;
    ST_OK(cublasCreate_v2(&h));
    ST_OK(cublasSetMathMode(h, math));
    CUdeviceptr dA = t_dev(A, sizeof(float) * M * K * batch), dB = t_dev(B, sizeof(float) * K * N * batch);
    CUdeviceptr dC = t_dev(NULL, sizeof(float) * M * N * batch);
    float one = 1.0f, zero = 0.0f;
    if (strided)
        ST_OK(cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, (float *)dA, K, M * K,
                                        (float *)dB, K, K * N, &zero, (float *)dC, M, M * N, BATCH));
    else
        ST_OK(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, (float *)dA, K, (float *)dB, K, &zero,
                             (float *)dC, M));
    t_get(C, dC, sizeof(float) * M * N * batch);
    for (int b = 0; b < batch; b++) {
        t_reference(&g, A + b * M * K, B + b * K * N, ref, mag);
        assert_int_equal(t_check("sgemm", &g, C + b * M * N, CUDA_R_32F, M, ref, mag, 1.0, 0), 0);
    }
    /* control: the other rounding (TF32 vs none) as the reference must fail: the inputs use all
     * 23 mantissa bits, so TF32's 13 dropped bits move every product well past fp32's bound */
    g.round_in = tf32_ref ? NULL : t_tf32;
    t_reference(&g, A, B, ref, mag);
    assert_int_equal(t_check("sgemm", &g, C, CUDA_R_32F, M, ref, mag, 1.0, 1), 1);
    ST_OK(cublasDestroy_v2(h));
    cuMemFree(dA), cuMemFree(dB), cuMemFree(dC);
    free(A), free(B), free(C);
}

static void test_sgemm_fp32(void **state) { (void)state; t_sgemm(CUBLAS_DEFAULT_MATH, 0, 0); t_sgemm(CUBLAS_DEFAULT_MATH, 0, 1); }
static void test_sgemm_tf32(void **state) { (void)state; t_sgemm(CUBLAS_TF32_TENSOR_OP_MATH, 1, 0); t_sgemm(CUBLAS_TF32_TENSOR_OP_MATH, 1, 1); }

static void test_sgemm_tf32_override(void **state)
{
    (void)state;
    setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
    t_sgemm(CUBLAS_TF32_TENSOR_OP_MATH, 0, 0); /* TF32 asked for, overridden: plain fp32 */
    unsetenv("NVIDIA_TF32_OVERRIDE");
}

static void test_cublas_strict(void **state)
{
    (void)state;
    float one = 1.0f;
    cublasHandle_t h;
    CUdeviceptr buf = t_dev(NULL, 4096);
    float *x = (float *)buf;
    ST_EXPECT(cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, x, 4, x, 4, &one, x, 4),
              CUBLAS_STATUS_NOT_INITIALIZED);
    ST_OK(cublasCreate_v2(&h));
    ST_EXPECT(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, x, 2, x, 4, &one, x, 4),
              CUBLAS_STATUS_INVALID_VALUE); /* lda 2 < m 4 */
    ST_EXPECT(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, x, 4, 0, x, 4, 0, &one, x, 4, 0,
                                        1),
              CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasDestroy_v2(NULL), CUBLAS_STATUS_NOT_INITIALIZED);
    ST_OK(cublasDestroy_v2(h));
    cuMemFree(buf);
}

int main(void)
{
    CUdevice dev;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&g_ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(g_ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "test_hcb: no hostcuda device\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lt_bf16_transposes), cmocka_unit_test(test_lt_f16_and_f32_out),
        cmocka_unit_test(test_lt_batched_accumulate), cmocka_unit_test(test_lt_bias),
        cmocka_unit_test(test_lt_gelu_aux_bias),   cmocka_unit_test(test_lt_dgelu),
        cmocka_unit_test(test_lt_bgradb),          cmocka_unit_test(test_lt_strict),
        cmocka_unit_test(test_sgemm_fp32),         cmocka_unit_test(test_sgemm_tf32),
        cmocka_unit_test(test_sgemm_tf32_override), cmocka_unit_test(test_cublas_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
