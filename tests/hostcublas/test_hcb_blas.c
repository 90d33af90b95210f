/* test_hcb_blas.c — hostcublas computes the ordinary cuBLAS routines as cuBLAS documents them,
 * against a naive double-precision reference written here, and refuses bad arguments with the
 * documented status.
 *
 * Cases: Set/GetVector and Set/GetMatrix (strided, Async on a stream from pageable and page-locked
 * memory as the driver's async copies, managed memory; bad sizes
 * INVALID_VALUE, host memory as device memory or a copy past an allocation's end MAPPING_ERROR);
 * S/D axpy, scal, copy, swap, dot, nrm2, asum, iamax, iamin (and _64 forms) with positive and
 * negative increments (a negative increment walks the vector from its end, as the reference BLAS);
 * S/D gemv both ways with beta 0 over a y of NaNs (y not read); Dgemm, DgemmStridedBatched,
 * DgemmBatched, Dgemm_64; Sgeam and its in-place rule; GemmEx with f16 / bf16 inputs and f32 or
 * bf16 output; pointer mode device (alpha and results in device memory, the call does not wait);
 * stream order (work queued behind a held stream has not run); the handle
 * and status calls; a function hostcublas does not model answers NOT_SUPPORTED and names itself
 * on stderr once. Every family's comparison has a control: the same checker fed a wrong reference
 * (increment walked the wrong way, a transpose swapped, a term left out) must fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cublas_v2.h>
#include <cuda.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../collectives/ash_coll_cast.h"

#include "test_hcb_check.h"

static CUcontext g_ctx;
static uint64_t g_rng = 4242;

static double t_rand(void) /* uniform in [-1, 1) */
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) / 4503599627370496.0 - 1.0;
}

/* a host array of n elements (float, or double when dbl), random */
static void *t_fill(int dbl, long n)
{
    void *p = malloc((size_t)(n + 1) * (dbl ? 8 : 4));
    assert_non_null(p);
    for (long i = 0; i < n; i++) {
        if (dbl)
            ((double *)p)[i] = t_rand();
        else
            ((float *)p)[i] = (float)t_rand();
    }
    return p;
}

static double t_ld(int dbl, const void *p, long i)
{
    return dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void *t_dev(const void *h, size_t bytes)
{
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, bytes + 16));
    if (h)
        CU_OK(cuMemcpyHtoD(d, h, bytes));
    else
        CU_OK(cuMemsetD8(d, 0, bytes));
    CU_OK(cuCtxSynchronize()); /* a memset may still be queued on the legacy stream */
    return (void *)(uintptr_t)d;
}

static void t_get(void *h, const void *d, size_t bytes)
{
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(h, (CUdeviceptr)(uintptr_t)d, bytes));
}

static void t_free(void *d)
{
    cuMemFree((CUdeviceptr)(uintptr_t)d);
}

/* 0 when |got - want| <= tol * scale (scale >= |want|: the sum of the terms' magnitudes);
 * else prints both (unless quiet) and returns 1 */
static int t_close(const char *what, long i, double got, double want, double scale, int dbl, int quiet)
{
    double tol = (dbl ? 1e-13 : 2e-6) * (scale > fabs(want) ? scale : fabs(want)) + 1e-300;
    if (fabs(got - want) <= tol)
        return 0;
    if (!quiet)
        print_error("%s[%ld]: got %.17g, reference %.17g, |diff| %.3g > %.3g\n", what, i, got, want,
                    fabs(got - want), tol);
    return 1;
}

/* element i of a vector of n with increment inc: x(1 + (n - i) |inc|) (1-based) for inc < 0 */
static long t_at(long n, long inc, long i, int wrong_way)
{
    return inc >= 0 || wrong_way ? i * labs(inc) : (n - 1 - i) * -inc;
}

/* a host function that holds its stream until g_release is set (at most 10 s) */
static atomic_int g_release;
static void t_hold(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 10000 && !atomic_load(&g_release); i++)
        nanosleep(&ts, NULL);
}


/* ---- Set/GetVector, Set/GetMatrix ---------------------------------------------------------------- */

static void test_copies(void **state)
{
    (void)state;
    enum { N = 37, R = 13, C = 7, LDA = 17, LDB = 15 };
    float x[N * 2], back[N * 3], A[LDA * C], B[LDA * C];
    for (int i = 0; i < N * 2; i++)
        x[i] = (float)i + 0.5f;
    void *dy = t_dev(NULL, sizeof back);
    memset(back, 0, sizeof back);
    ST_OK(cublasSetVector(N, 4, x, 2, dy, 3)); /* x[2i] -> y[3i] */
    ST_OK(cublasGetVector(N, 4, dy, 3, back, 1));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += t_close("SetVector/GetVector", i, back[i], x[2 * i], 0, 0, bad > 0);
    assert_int_equal(bad, 0);
    /* control: the element a unit increment would have copied differs */
    assert_int_equal(t_close("control", 1, back[1], x[1], 0, 0, 1), 1);

    for (int i = 0; i < LDA * C; i++)
        A[i] = (float)t_rand(), B[i] = -99.0f;
    void *dB = t_dev(NULL, sizeof(float) * LDB * C);
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    ST_OK(cublasSetMatrixAsync(R, C, 4, A, LDA, dB, LDB, (cudaStream_t)s));
    ST_OK(cublasGetMatrixAsync(R, C, 4, dB, LDB, B, LDA, (cudaStream_t)s));
    CU_OK(cuStreamSynchronize(s));
    for (int j = 0; j < C; j++)
        for (int i = 0; i < LDA; i++)
            bad += i < R ? t_close("SetMatrixAsync/GetMatrixAsync", i + j * LDA, B[i + j * LDA], A[i + j * LDA], 0,
                                   0, bad > 0)
                         : (B[i + j * LDA] != -99.0f); /* rows past `rows` are not written */
    assert_int_equal(bad, 0);
    /* async, as the driver's async copies: a pageable source is taken at the call (overwriting it
     * then changes nothing), a pageable destination is filled on return (no synchronise) */
    atomic_store(&g_release, 0);
    CU_OK(cuLaunchHostFunc(s, t_hold, NULL)); /* the stream waits until released */
    float keep = x[0];
    ST_OK(cublasSetVectorAsync(N, 4, x, 1, dy, 1, (cudaStream_t)s));
    x[0] = -1.0f;
    atomic_store(&g_release, 1);
    memset(back, 0, sizeof back);
    ST_OK(cublasGetVectorAsync(N, 4, dy, 1, back, 1, (cudaStream_t)s));
    x[0] = keep;
    for (int i = 0; i < N; i++)
        bad += t_close("SetVectorAsync/GetVectorAsync (pageable)", i, back[i], x[i], 0, 0, bad > 0);
    assert_int_equal(bad, 0);
    /* page-locked: read when the copy runs (a program must not touch it before it has) */
    float *pin;
    CU_OK(cuMemHostAlloc((void **)&pin, sizeof(float) * N, 0));
    for (int i = 0; i < N; i++)
        pin[i] = 1.0f;
    atomic_store(&g_release, 0);
    CU_OK(cuLaunchHostFunc(s, t_hold, NULL));
    ST_OK(cublasSetVectorAsync(N, 4, pin, 1, dy, 1, (cudaStream_t)s));
    pin[0] = 2.0f; /* before the copy runs: what it copies */
    atomic_store(&g_release, 1);
    ST_OK(cublasGetVectorAsync(N, 4, dy, 1, back, 1, (cudaStream_t)s));
    CU_OK(cuStreamSynchronize(s));
    if (back[0] != 2.0f)
        fail_msg("SetVectorAsync from page-locked memory copied %g, expected 2 (the value when it ran)", back[0]);
    CU_OK(cuMemFreeHost(pin));
    ST_OK(cublasSetMatrix(R, C, 4, A, LDA, dB, LDB));
    memset(B, 0, sizeof B);
    ST_OK(cublasGetMatrix(R, C, 4, dB, LDB, B, R));
    for (int j = 0; j < C; j++)
        for (int i = 0; i < R; i++)
            bad += t_close("SetMatrix/GetMatrix", i + j * R, B[i + j * R], A[i + j * LDA], 0, 0, bad > 0);
    assert_int_equal(bad, 0);
    assert_int_equal(t_close("control", 0, B[R], A[R], 0, 0, 1), 1); /* packed != lda-strided */

    ST_EXPECT(cublasSetVector(N, 0, x, 1, dy, 1), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSetVector(N, 4, x, 0, dy, 1), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasGetVector(N, 4, dy, 1, back, -1), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSetMatrix(-1, C, 4, A, LDA, dB, LDB), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSetMatrix(R, C, 4, A, LDA, dB, 0), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSetMatrix(R, C, 4, A, R - 1, dB, LDB), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSetVector(N, 4, x, 1, back, 1), CUBLAS_STATUS_MAPPING_ERROR); /* host memory as device */
    ST_EXPECT(cublasGetMatrix(R, C, 4, A, LDA, B, LDA), CUBLAS_STATUS_MAPPING_ERROR);
    ST_OK(cublasSetVector(0, 4, x, 1, dy, 1));
    void *small = t_dev(NULL, 48);
    CUdeviceptr sb;
    size_t ss; /* the allocation as the driver sized it */
    CU_OK(cuMemGetAddressRange(&sb, &ss, (CUdeviceptr)(uintptr_t)small));
    float *big = calloc(ss / 4 + 1, 4);
    assert_non_null(big);
    ST_EXPECT(cublasSetVector((int)(ss / 4) + 1, 4, big, 1, small, 1), CUBLAS_STATUS_MAPPING_ERROR); /* past its end */
    ST_OK(cublasSetVector((int)(ss / 4), 4, big, 1, small, 1));
    free(big);
    t_free(small);
    /* managed memory is device memory too */
    CUdeviceptr m;
    CU_OK(cuMemAllocManaged(&m, sizeof(float) * N, CU_MEM_ATTACH_GLOBAL));
    ST_OK(cublasSetVector(N, 4, x, 1, (void *)(uintptr_t)m, 1));
    memset(back, 0, sizeof back);
    ST_OK(cublasGetVector(N, 4, (void *)(uintptr_t)m, 1, back, 1));
    for (int i = 0; i < N; i++)
        bad += t_close("SetVector/GetVector on managed memory", i, back[i], x[i], 0, 0, bad > 0);
    assert_int_equal(bad, 0);
    CU_OK(cuMemFree(m));
    CU_OK(cuStreamDestroy(s));
    t_free(dy), t_free(dB);
}

/* ---- level 1 ------------------------------------------------------------------------------------ */

typedef enum { L_AXPY, L_SCAL, L_COPY, L_SWAP, L_DOT, L_NRM2, L_ASUM, L_IAMAX, L_IAMIN } t_l1_t;
static const char *const t_l1_name[] = {"axpy", "scal", "copy", "swap", "dot", "nrm2", "asum", "iamax", "iamin"};

static cublasStatus_t t_l1_call(cublasHandle_t h, t_l1_t op, int dbl, int n, const void *alpha, void *x, int incx,
                                void *y, int incy, void *res)
{
    switch (op) {
    case L_AXPY: return dbl ? cublasDaxpy(h, n, alpha, x, incx, y, incy) : cublasSaxpy(h, n, alpha, x, incx, y, incy);
    case L_SCAL: return dbl ? cublasDscal(h, n, alpha, x, incx) : cublasSscal(h, n, alpha, x, incx);
    case L_COPY: return dbl ? cublasDcopy(h, n, x, incx, y, incy) : cublasScopy(h, n, x, incx, y, incy);
    case L_SWAP: return dbl ? cublasDswap(h, n, x, incx, y, incy) : cublasSswap(h, n, x, incx, y, incy);
    case L_DOT: return dbl ? cublasDdot(h, n, x, incx, y, incy, res) : cublasSdot(h, n, x, incx, y, incy, res);
    case L_NRM2: return dbl ? cublasDnrm2(h, n, x, incx, res) : cublasSnrm2(h, n, x, incx, res);
    case L_ASUM: return dbl ? cublasDasum(h, n, x, incx, res) : cublasSasum(h, n, x, incx, res);
    case L_IAMAX: return dbl ? cublasIdamax(h, n, x, incx, res) : cublasIsamax(h, n, x, incx, res);
    case L_IAMIN: return dbl ? cublasIdamin(h, n, x, incx, res) : cublasIsamin(h, n, x, incx, res);
    }
    return CUBLAS_STATUS_INTERNAL_ERROR;
}

/* the reference: x2/y2 (host copies of x/y) updated as the routine must, *res its result, *mag the
 * sum of the terms' magnitudes; wrong_way walks negative increments from the front (the control) */
static void t_l1_ref(t_l1_t op, int dbl, long n, double alpha, void *x, long incx, void *y, long incy, double *res,
                     double *mag, int wrong_way)
{
    double r = 0, m = 0, best = 0;
    long at = 0;
    int single = op == L_SCAL || op == L_NRM2 || op == L_ASUM || op >= L_IAMAX;
    if (single && incx <= 0)
        n = 0;
    if (wrong_way == 2)
        n -= 1; /* the control of the single-vector routines: the last element left out */
    for (long i = 0; i < n; i++) {
        long ix = t_at(n, incx, i, wrong_way), iy = t_at(n, incy, i, wrong_way);
        double a = t_ld(dbl, x, ix), b = y ? t_ld(dbl, y, iy) : 0, v;
#define T_ST(p, k, val) (dbl ? (void)(((double *)(p))[k] = (val)) : (void)(((float *)(p))[k] = (float)(val)))
        switch (op) {
        case L_AXPY: v = alpha * a + b; T_ST(y, iy, v); break;
        case L_SCAL: T_ST(x, ix, alpha * a); break;
        case L_COPY: T_ST(y, iy, a); break;
        case L_SWAP: T_ST(x, ix, b); T_ST(y, iy, a); break;
        case L_DOT: r += a * b, m += fabs(a * b); break;
        case L_NRM2: r += a * a, m += a * a; break;
        case L_ASUM: r += fabs(a), m += fabs(a); break;
        case L_IAMAX: if (i == 0 || fabs(a) > best) best = fabs(a), at = i + 1; break;
        case L_IAMIN: if (i == 0 || fabs(a) < best) best = fabs(a), at = i + 1; break;
        }
#undef T_ST
    }
    if (op == L_NRM2)
        r = sqrt(r), m = sqrt(m);
    if (op >= L_IAMAX)
        r = (double)at;
    *res = r, *mag = m;
}

/* one routine, one pair of increments: 0 when hostcublas matches the reference (1 if wrong_way) */
static int t_l1_case(cublasHandle_t h, t_l1_t op, int dbl, long n, long incx, long incy, int wrong_way)
{
    size_t es = dbl ? 8 : 4;
    long lx = n * labs(incx) + 1, ly = n * labs(incy) + 1;
    void *x = t_fill(dbl, lx), *y = t_fill(dbl, ly), *x2 = malloc(lx * es), *y2 = malloc(ly * es);
    void *gx = malloc(lx * es), *gy = malloc(ly * es);
    memcpy(x2, x, lx * es), memcpy(y2, y, ly * es);
    void *dx = t_dev(x, lx * es), *dy = t_dev(y, ly * es);
    double alpha = 0.75, res_ref, mag, res_got = 0;
    float fa = 0.75f, fres = 0;
    int ires = 0;
    void *res = op >= L_IAMAX ? (void *)&ires : dbl ? (void *)&res_got : (void *)&fres;
    ST_OK(t_l1_call(h, op, dbl, (int)n, dbl ? (void *)&alpha : (void *)&fa, dx, (int)incx, dy, (int)incy, res));
    t_l1_ref(op, dbl, n, alpha, x2, incx, y2, incy, &res_ref, &mag, wrong_way);
    t_get(gx, dx, lx * es), t_get(gy, dy, ly * es);
    char what[64];
    snprintf(what, sizeof what, "%c%s incx %ld incy %ld", dbl ? 'D' : 'S', t_l1_name[op], incx, incy);
    int bad = 0;
    if (op >= L_DOT) {
        double got = op >= L_IAMAX ? ires : dbl ? res_got : fres;
        bad += t_close(what, -1, got, res_ref, mag, dbl, wrong_way);
    }
    for (long i = 0; i < lx && !bad; i++)
        bad += t_close(what, i, t_ld(dbl, gx, i), t_ld(dbl, x2, i), fabs(t_ld(dbl, x2, i)), dbl, wrong_way);
    for (long i = 0; i < ly && !bad; i++)
        bad += t_close(what, i, t_ld(dbl, gy, i), t_ld(dbl, y2, i), 2 * fabs(t_ld(dbl, y2, i)) + 1, dbl, wrong_way);
    t_free(dx), t_free(dy);
    free(x), free(y), free(x2), free(y2), free(gx), free(gy);
    return bad;
}

static void test_level1(void **state)
{
    (void)state;
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    static const long incs[][2] = {{1, 1}, {2, 3}, {-2, 1}, {1, -3}, {-1, -2}};
    for (int dbl = 0; dbl < 2; dbl++)
        for (t_l1_t op = L_AXPY; op <= L_IAMIN; op++)
            for (size_t c = 0; c < sizeof incs / sizeof incs[0]; c++) {
                int bad = t_l1_case(h, op, dbl, 53, incs[c][0], incs[c][1], 0);
                if (bad)
                    fail_msg("%c%s incx %ld incy %ld differs from the reference", dbl ? 'D' : 'S', t_l1_name[op],
                             incs[c][0], incs[c][1]);
            }
    /* controls: the two-vector routines with incx -1 against a reference walking it forwards;
     * scal, nrm2, asum (which do nothing for incx <= 0) against one leaving the last element out */
    for (t_l1_t op = L_AXPY; op <= L_ASUM; op++) {
        int two = op <= L_DOT && op != L_SCAL;
        int bad = t_l1_case(h, op, 0, 53, two ? -1 : 1, 1, two ? 1 : 2);
        if (bad != 1)
            fail_msg("control: S%s matched a wrong reference (%s)", t_l1_name[op],
                     two ? "incx -1 walked forwards" : "last element left out");
    }
    /* empty and non-positive increments: reductions give 0, scal does nothing */
    float x[4] = {1, -5, 3, 2}, fr = 7;
    int ir = 7;
    void *dx = t_dev(x, sizeof x);
    ST_OK(cublasSnrm2(h, 4, dx, 0, &fr));
    assert_true(fr == 0.0f);
    ST_OK(cublasIsamax(h, 4, dx, -1, &ir));
    assert_int_equal(ir, 0);
    ST_OK(cublasIsamax(h, 4, dx, 1, &ir));
    assert_int_equal(ir, 2);
    int64_t ir64 = -1; /* the _64 API: int64_t sizes and index */
    ST_OK(cublasIsamin_64(h, 4, dx, 1, &ir64));
    assert_int_equal(ir64, 1);
    ST_OK(cublasIsamax_64(h, 2, dx, 2, &ir64)); /* x[0], x[2]: |3| wins */
    assert_int_equal(ir64, 2);
    fr = 0;
    ST_OK(cublasSasum_64(h, 4, dx, 1, &fr));
    assert_true(fr == 11.0f);
    fr = 7;
    ST_OK(cublasSdot(h, 0, dx, 1, dx, 1, &fr));
    assert_true(fr == 0.0f);
    /* bad arguments */
    ST_EXPECT(cublasSdot(NULL, 4, dx, 1, dx, 1, &fr), CUBLAS_STATUS_NOT_INITIALIZED);
    ST_EXPECT(cublasSdot(h, 4, dx, 1, dx, 1, NULL), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSaxpy(h, 4, NULL, dx, 1, dx, 1), CUBLAS_STATUS_INVALID_VALUE);
    ST_OK(cublasDestroy(h));
    t_free(dx);
}

/* pointer mode device: alpha read from device memory when the work runs; results written there */
static void test_pointer_mode_device(void **state)
{
    (void)state;
    cublasHandle_t h;
    cublasPointerMode_t pm;
    ST_OK(cublasCreate(&h));
    float x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 1, 1, 1, 1}, two = 2.0f, got[5], dot = 0;
    void *dx = t_dev(x, sizeof x), *dy = t_dev(y, sizeof y), *dalpha = t_dev(&two, 4), *dres = t_dev(NULL, 4);
    ST_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    ST_OK(cublasGetPointerMode(h, &pm));
    assert_int_equal(pm, CUBLAS_POINTER_MODE_DEVICE);
    ST_OK(cublasSaxpy(h, 5, dalpha, dx, 1, dy, 1)); /* y = 2x + 1 */
    ST_OK(cublasSdot(h, 5, dx, 1, dy, 1, dres));    /* sum x (2x + 1) = 2*55 + 15 = 125 */
    t_get(got, dy, sizeof got);
    t_get(&dot, dres, 4);
    for (int i = 0; i < 5; i++)
        assert_true(got[i] == 2 * x[i] + 1);
    if (dot != 125.0f)
        fail_msg("Sdot to device memory: got %g, expected 125", dot);
    /* the GEMMs too: C = 2 A B + 0.5 C, alpha and beta in device memory */
    float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C[4] = {1, 1, 1, 1}, half = 0.5f, Cg[4];
    double Ad[4] = {1, 2, 3, 4}, Bd[4] = {5, 6, 7, 8}, Cd[4] = {1, 1, 1, 1}, two_d = 2, half_d = 0.5, Cdg[4];
    void *dA = t_dev(A, sizeof A), *dB = t_dev(B, sizeof B), *dC = t_dev(C, sizeof C), *dbeta = t_dev(&half, 4);
    void *dAd = t_dev(Ad, sizeof Ad), *dBd = t_dev(Bd, sizeof Bd), *dCd = t_dev(Cd, sizeof Cd);
    void *d2 = t_dev(&two_d, 8), *dh = t_dev(&half_d, 8);
    ST_OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, dalpha, dA, 2, dB, 2, dbeta, dC, 2));
    ST_OK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, d2, dAd, 2, dBd, 2, dh, dCd, 2));
    t_get(Cg, dC, sizeof Cg);
    t_get(Cdg, dCd, sizeof Cdg);
    /* A B (column-major) = [23 31; 34 46] */
    const float want[4] = {2 * 23 + 0.5f, 2 * 34 + 0.5f, 2 * 31 + 0.5f, 2 * 46 + 0.5f};
    for (int i = 0; i < 4; i++)
        if (Cg[i] != want[i] || Cdg[i] != want[i])
            fail_msg("GEMM in pointer mode device: C[%d] Sgemm %g, Dgemm %g, expected %g", i, Cg[i], Cdg[i], want[i]);
    ST_EXPECT(cublasSetPointerMode(h, (cublasPointerMode_t)7), CUBLAS_STATUS_INVALID_VALUE);
    ST_OK(cublasDestroy(h));
    t_free(dx), t_free(dy), t_free(dalpha), t_free(dres);
    t_free(dA), t_free(dB), t_free(dC), t_free(dbeta), t_free(dAd), t_free(dBd), t_free(dCd), t_free(d2), t_free(dh);
}

/* work queued behind a held stream has not run; once the stream moves it has */
static void test_stream_order(void **state)
{
    (void)state;
    cublasHandle_t h;
    cudaStream_t got_s;
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    ST_OK(cublasCreate(&h));
    ST_OK(cublasSetStream(h, (cudaStream_t)s));
    ST_OK(cublasGetStream(h, &got_s));
    assert_ptr_equal(got_s, (cudaStream_t)s);
    float x[3] = {1, 2, 3}, three = 3.0f, now[3];
    float *hv;
    void *dx = t_dev(x, sizeof x);
    atomic_store(&g_release, 0);
    CU_OK(cuLaunchHostFunc(s, t_hold, NULL));
    ST_OK(cublasSscal(h, 3, &three, dx, 1));
    usleep(20000);
    CU_OK(cuMemcpyDtoH(now, (CUdeviceptr)(uintptr_t)dx, sizeof now)); /* the legacy stream: does not wait for s */
    (void)hv;
    int early = now[0] != 1.0f;
    atomic_store(&g_release, 1);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemcpyDtoH(now, (CUdeviceptr)(uintptr_t)dx, sizeof now));
    if (early)
        fail_msg("Sscal ran before the work queued ahead of it on its stream");
    assert_true(now[0] == 3.0f && now[2] == 9.0f);
    ST_OK(cublasDestroy(h));
    CU_OK(cuStreamDestroy(s));
    t_free(dx);
}

/* ---- gemv, geam, Dgemm -------------------------------------------------------------------------- */

static void t_gemv(int dbl, int trans, long incx, long incy)
{
    enum { M = 19, N = 11, LDA = 23 };
    size_t es = dbl ? 8 : 4;
    long nx = trans ? M : N, ny = trans ? N : M, lx = nx * labs(incx), ly = ny * labs(incy);
    void *A = t_fill(dbl, LDA * N), *x = t_fill(dbl, lx), *y = malloc(ly * es);
    for (long i = 0; i < ly; i++)
        dbl ? (void)(((double *)y)[i] = NAN) : (void)(((float *)y)[i] = NAN); /* beta 0: never read */
    void *dA = t_dev(A, LDA * N * es), *dx = t_dev(x, lx * es), *dy = t_dev(y, ly * es);
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    double a = 1.5, b = 0;
    float fa = 1.5f, fb = 0;
    cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (dbl)
        ST_OK(cublasDgemv(h, op, M, N, &a, dA, LDA, dx, (int)incx, &b, dy, (int)incy));
    else
        ST_OK(cublasSgemv(h, op, M, N, &fa, dA, LDA, dx, (int)incx, &fb, dy, (int)incy));
    t_get(y, dy, ly * es);
    int bad = 0, ctl = 0;
    for (long r = 0; r < ny; r++) {
        double s = 0, m = 0, sc = 0;
        for (long c = 0; c < nx; c++) {
            double e = t_ld(dbl, A, trans ? c + r * LDA : r + c * LDA) * t_ld(dbl, x, t_at(nx, incx, c, 0));
            s += e, m += fabs(e);
            if (c < nx - 1)
                sc += e; /* control: the last column's term left out */
        }
        double got = t_ld(dbl, y, t_at(ny, incy, r, 0));
        bad += t_close(dbl ? "Dgemv" : "Sgemv", r, got, 1.5 * s, 1.5 * m, dbl, bad > 0);
        ctl += t_close("control", r, got, 1.5 * sc, 1.5 * m, dbl, 1);
    }
    if (bad)
        fail_msg("%cgemv trans %d incx %ld incy %ld differs from the reference", dbl ? 'D' : 'S', trans, incx, incy);
    assert_true(ctl > 0);
    ST_EXPECT(cublasSgemv(h, op, M, N, &fa, dA, M - 1, dx, 1, &fb, dy, 1), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSgemv(h, op, M, N, &fa, dA, LDA, dx, 0, &fb, dy, 1), CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSgemv(h, (cublasOperation_t)9, M, N, &fa, dA, LDA, dx, 1, &fb, dy, 1),
              CUBLAS_STATUS_INVALID_VALUE);
    ST_OK(cublasDestroy(h));
    t_free(dA), t_free(dx), t_free(dy);
    free(A), free(x), free(y);
}

static void test_gemv(void **state)
{
    (void)state;
    for (int dbl = 0; dbl < 2; dbl++)
        for (int trans = 0; trans < 2; trans++) {
            t_gemv(dbl, trans, 1, 1);
            t_gemv(dbl, trans, -2, 3);
        }
}

static void test_sgeam(void **state)
{
    (void)state;
    enum { M = 9, N = 6, LD = 10 };
    float *A = t_fill(0, LD * LD), *B = t_fill(0, LD * LD), C[LD * N], alpha = 2.0f, beta = -0.5f;
    void *dA = t_dev(A, LD * LD * 4), *dB = t_dev(B, LD * LD * 4), *dC = t_dev(NULL, LD * N * 4);
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    ST_OK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, &alpha, dA, LD, &beta, dB, LD, dC, LD));
    t_get(C, dC, sizeof C);
    int bad = 0, ctl = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double a = A[j + i * LD], b = B[i + j * LD], got = C[i + j * LD];
            bad += t_close("Sgeam", i + j * LD, got, 2.0 * a - 0.5 * b, fabs(2 * a) + fabs(0.5 * b), 0, bad > 0);
            ctl += t_close("control", i + j * LD, got, 2.0 * a, fabs(2 * a) + fabs(0.5 * b), 0, 1); /* beta term out */
        }
    assert_int_equal(bad, 0);
    assert_true(ctl > 0);
    /* beta 0: B is not read (NULL would do); in place C == A needs op N and lda == ldc */
    float zero = 0;
    ST_OK(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, &alpha, dA, LD, &zero, dB, LD, dA, LD));
    ST_EXPECT(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, &alpha, dA, LD, &beta, dB, LD, dA, LD),
              CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, &alpha, dA, M - 1, &beta, dB, LD, dC, LD),
              CUBLAS_STATUS_INVALID_VALUE);
    t_get(C, dA, sizeof C);
    for (int j = 0; j < N && !bad; j++)
        for (int i = 0; i < M; i++)
            bad += t_close("Sgeam in place", i + j * LD, C[i + j * LD], 2.0 * A[i + j * LD], 0, 0, bad > 0);
    assert_int_equal(bad, 0);
    ST_OK(cublasDestroy(h));
    t_free(dA), t_free(dB), t_free(dC);
    free(A), free(B);
}

/* C(i,j) of op(A) op(B), A m x k (op N) with lda, in double */
static double t_dref(const double *A, const double *B, int ta, int tb, long i, long j, long k, long lda, long ldb,
                     double *mag)
{
    double s = 0, m = 0;
    for (long p = 0; p < k; p++) {
        double e = A[ta ? p + i * lda : i + p * lda] * B[tb ? j + p * ldb : p + j * ldb];
        s += e, m += fabs(e);
    }
    *mag = m;
    return s;
}

static void test_dgemm(void **state)
{
    (void)state;
    enum { M = 14, N = 9, K = 11, LD = 16, BATCH = 3, S = LD * LD };
    double *A = t_fill(1, S * BATCH), *B = t_fill(1, S * BATCH), *C = malloc(sizeof(double) * S * BATCH);
    for (int i = 0; i < S * BATCH; i++)
        C[i] = NAN; /* beta 0: C is not read */
    double *dA = t_dev(A, sizeof(double) * S * BATCH), *dB = t_dev(B, sizeof(double) * S * BATCH);
    double *dC = t_dev(C, sizeof(double) * S * BATCH);
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    double alpha = -1.25, beta = 0, mag;
    int bad = 0, ctl = 0;
    for (int form = 0; form < 4; form++) {
        int ta = form != 1, tb = form == 1 || form == 3;
        cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        if (form == 0)
            ST_OK(cublasDgemm(h, oa, ob, M, N, K, &alpha, dA, LD, dB, LD, &beta, dC, LD));
        else if (form == 3) /* the _64 API */
            ST_OK(cublasDgemm_64(h, oa, ob, M, N, K, &alpha, dA, LD, dB, LD, &beta, dC, LD));
        else if (form == 1)
            ST_OK(cublasDgemmStridedBatched(h, oa, ob, M, N, K, &alpha, dA, LD, S, dB, LD, S, &beta, dC, LD, S, BATCH));
        else {
            const double *pa[BATCH], *pb[BATCH];
            double *pc[BATCH];
            for (int b = 0; b < BATCH; b++)
                pa[b] = dA + b * S, pb[b] = dB + b * S, pc[b] = dC + b * S;
            void *dpa = t_dev(pa, sizeof pa), *dpb = t_dev(pb, sizeof pb), *dpc = t_dev(pc, sizeof pc);
            ST_OK(cublasDgemmBatched(h, oa, ob, M, N, K, &alpha, dpa, LD, dpb, LD, &beta, dpc, LD, BATCH));
            CU_OK(cuCtxSynchronize());
            t_free(dpa), t_free(dpb), t_free(dpc);
        }
        t_get(C, dC, sizeof(double) * S * BATCH);
        for (int b = 0; b < (form == 1 || form == 2 ? BATCH : 1); b++)
            for (long j = 0; j < N; j++)
                for (long i = 0; i < M; i++) {
                    double r = alpha * t_dref(A + b * S, B + b * S, ta, tb, i, j, K, LD, LD, &mag);
                    double rc = alpha * t_dref(A + b * S, B + b * S, !ta, tb, i, j, K, LD, LD, &mag);
                    bad += t_close(form == 0 ? "Dgemm" : form == 1 ? "DgemmStridedBatched" : form == 2 ? "DgemmBatched" : "Dgemm_64",
                                   b * S + i + j * LD, C[b * S + i + j * LD], r, fabs(alpha) * mag, 1, bad > 0);
                    ctl += t_close("control", 0, C[b * S + i + j * LD], rc, fabs(alpha) * mag, 1, 1);
                }
        assert_int_equal(bad, 0);
        assert_true(ctl > 0); /* control: op(A) swapped */
    }
    ST_EXPECT(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, M - 1, dB, LD, &beta, dC, LD),
              CUBLAS_STATUS_INVALID_VALUE);
    ST_EXPECT(cublasDgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, LD, dB, LD, &beta, dC, LD),
              CUBLAS_STATUS_NOT_INITIALIZED);
    ST_OK(cublasDestroy(h));
    t_free(dA), t_free(dB), t_free(dC);
    free(A), free(B), free(C);
}

/* ---- GemmEx with 16-bit inputs ---------------------------------------------------------------- */

static void t_gemmex(cudaDataType ab, cudaDataType ct)
{
    enum { M = 12, N = 10, K = 33 };
    uint16_t A[M * K], B[K * N];
    float C[M * N];
    uint16_t C16[M * N];
    double Ad[M * K], Bd[K * N];
    for (int i = 0; i < M * K; i++) {
        float v = (float)t_rand();
        A[i] = ab == CUDA_R_16BF ? ash_coll_f32_to_bf16_rn(v) : ash_coll_f32_to_f16_rn(v);
        Ad[i] = ab == CUDA_R_16BF ? ash_coll_bf16_to_f32(A[i]) : ash_coll_f16_to_f32(A[i]);
    }
    for (int i = 0; i < K * N; i++) {
        float v = (float)t_rand();
        B[i] = ab == CUDA_R_16BF ? ash_coll_f32_to_bf16_rn(v) : ash_coll_f32_to_f16_rn(v);
        Bd[i] = ab == CUDA_R_16BF ? ash_coll_bf16_to_f32(B[i]) : ash_coll_f16_to_f32(B[i]);
    }
    void *dA = t_dev(A, sizeof A), *dB = t_dev(B, sizeof B), *dC = t_dev(NULL, sizeof C);
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    float alpha = 1.0f, beta = 0.0f;
    if (ct == CUDA_R_32F) /* the _64 API for these two */
        ST_OK(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, ab, M, dB, ab, K, &beta, dC, ct, M,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        ST_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, ab, M, dB, ab, K, &beta, dC, ct, M,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    int bad = 0, ctl = 0;
    if (ct == CUDA_R_32F)
        t_get(C, dC, sizeof C);
    else {
        t_get(C16, dC, sizeof C16);
        for (int i = 0; i < M * N; i++)
            C[i] = ab == CUDA_R_16BF ? ash_coll_bf16_to_f32(C16[i]) : ash_coll_f16_to_f32(C16[i]);
    }
    double out_u = ct == CUDA_R_32F ? 0x1p-24 : ab == CUDA_R_16BF ? 0x1p-8 : 0x1p-11;
    for (long j = 0; j < N; j++)
        for (long i = 0; i < M; i++) {
            double mag, r = t_dref(Ad, Bd, 0, 0, i, j, K, M, K, &mag), got = C[i + j * M];
            double tol = K * 0x1p-23 * mag + out_u * fabs(r) * 1.0001 + 1e-30;
            if (!(fabs(got - r) <= tol) && bad++ == 0)
                print_error("GemmEx (%d,%d)->%d (%ld,%ld): got %.9g, reference %.9g, |diff| %.3g > %.3g\n", ab, ab,
                            ct, i, j, got, r, fabs(got - r), tol);
            double rc = t_dref(Ad, Bd, 0, 0, i, (j + 1) % N, K, M, K, &mag); /* control: a column off */
            ctl += !(fabs(got - rc) <= tol);
        }
    assert_int_equal(bad, 0);
    assert_true(ctl > 0);
    /* FAST compute types take f32 data only; A and B of one type */
    ST_EXPECT(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, ab, M, dB, ab, K, &beta, dC, ct, M,
                           CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_NOT_SUPPORTED);
    ST_EXPECT(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, ab, M, dB, CUDA_R_32F, K, &beta, dC, ct,
                           M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_NOT_SUPPORTED);
    ST_OK(cublasDestroy(h));
    t_free(dA), t_free(dB), t_free(dC);
}

static void test_gemmex_16bit(void **state)
{
    (void)state;
    t_gemmex(CUDA_R_16BF, CUDA_R_32F);
    t_gemmex(CUDA_R_16BF, CUDA_R_16BF);
    t_gemmex(CUDA_R_16F, CUDA_R_32F);
    t_gemmex(CUDA_R_16F, CUDA_R_16F);
}

/* ---- handle and library calls; what is not modelled ---------------------------------------------- */

static void test_handle_calls(void **state)
{
    (void)state;
    cublasHandle_t h;
    int v = 0;
    ST_OK(cublasCreate(&h));
    ST_OK(cublasGetVersion(h, &v));
    assert_int_equal(v, CUBLAS_VERSION);
    ST_OK(cublasGetProperty(MAJOR_VERSION, &v));
    assert_int_equal(v, CUBLAS_VER_MAJOR);
    ST_EXPECT(cublasGetProperty((libraryPropertyType)9, &v), CUBLAS_STATUS_INVALID_VALUE);
    assert_string_equal(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
    assert_true(strlen(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)) > 0);
    void *ws = t_dev(NULL, 4096);
    ST_OK(cublasSetWorkspace(h, ws, 4096));
    ST_EXPECT(cublasSetWorkspace(h, (char *)ws + 8, 1024), CUBLAS_STATUS_INVALID_VALUE);
    ST_OK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
    cublasAtomicsMode_t am;
    ST_OK(cublasGetAtomicsMode(h, &am));
    assert_int_equal(am, CUBLAS_ATOMICS_ALLOWED);
    ST_OK(cublasLoggerConfigure(0, 0, 0, NULL));
    ST_EXPECT(cublasGetVersion(NULL, &v), CUBLAS_STATUS_NOT_INITIALIZED);
    ST_OK(cublasDestroy(h));
    t_free(ws);
}

/* an unmodelled routine answers NOT_SUPPORTED and says so once on stderr, naming itself */
static void test_not_implemented(void **state)
{
    (void)state;
    cublasHandle_t h;
    ST_OK(cublasCreate(&h));
    char path[] = "/tmp/test_hcb_blas_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, 2);
    float one = 1;
    cublasStatus_t s1 = cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, 2,
                                    &one, NULL, 2, NULL, 2);
    cublasStatus_t s2 = cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, 2,
                                    &one, NULL, 2, NULL, 2);
    dup2(saved, 2);
    close(saved);
    char buf[512] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    assert_true(n > 0);
    assert_int_equal(s1, CUBLAS_STATUS_NOT_SUPPORTED);
    assert_int_equal(s2, CUBLAS_STATUS_NOT_SUPPORTED);
    const char *want = "hostcublas: cublasStrsm_v2 is not implemented\n";
    if (strcmp(buf, want) != 0)
        fail_msg("stderr was '%s', expected '%s' once", buf, want);
    ST_OK(cublasDestroy(h));
}

int main(void)
{
    CUdevice dev;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&g_ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(g_ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "test_hcb_blas: no hostcuda device\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies),       cmocka_unit_test(test_level1),
        cmocka_unit_test(test_pointer_mode_device), cmocka_unit_test(test_stream_order),
        cmocka_unit_test(test_gemv),         cmocka_unit_test(test_sgeam),
        cmocka_unit_test(test_dgemm),        cmocka_unit_test(test_gemmex_16bit),
        cmocka_unit_test(test_handle_calls), cmocka_unit_test(test_not_implemented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
