/* test_hc_mma — hostcuda's PTX interpreter runs tensor-core instructions (tests/hostcuda/mma_kernels.cu).
 * Property: nvcuda::wmma GEMMs (f16 -> f32 in the three shapes and both B layouts, f16 -> f16,
 * bf16 -> f32, tf32 -> f32, s8 / u8 -> s32, f64) with an element-wise epilogue on the fragments,
 * and raw mma.sync GEMMs (m16n8k16 fed by ldmatrix / ldmatrix.trans; m16n8k8 bf16 and tf32,
 * m16n8k4 tf32, m16n8k8 f16, m16n8k16 / m8n8k16 s8 (wrapping) and m16n8k32 s8 .satfinite, m8n8k4 f64,
 * m16n8k16 f16 accumulators, operands placed by the PTX ISA's
 * per-lane formulas) give exactly the host reference (inputs chosen so every sum is exact; tf32:
 * the inputs rounded to nearest, ties away, as cvt.rna.tf32.f32 does); stmatrix undoes ldmatrix.
 * Controls: a kernel that swaps two A registers of the mma, and one that hands each lane the A
 * fragment of lane ^ 4 (wrong layouts), must mismatch, and a tf32 reference without the rounding
 * must mismatch. Fault cases (`test_hc_mma PTX CASE`,
 * checked by test_hc_mma.sh): a misaligned wmma pointer, lanes giving a wmma different matrices,
 * an mma run by half a warp.
 * Usage: test_hc_mma PTXFILE [misaligned|divergent|partial]. Exit 0 pass, 1 fail. */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_hc_check.h"

enum { T_F16, T_BF16, T_TF32, T_F32, T_F64, T_S8, T_U8, T_S32 };

static int esz(int t)
{
    return t == T_F16 || t == T_BF16 ? 2 : t == T_S8 || t == T_U8 ? 1 : t == T_F64 ? 8 : 4;
}

/* f16 bits of a value exactly representable as a normal f16 (or 0) */
static uint16_t h_of(double v)
{
    if (v == 0)
        return 0;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)((u >> 16 & 0x8000) | (unsigned)e << 10 | (u >> 13 & 0x3ff));
}
static double h_val(uint16_t h)
{
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

static void put(void *buf, int t, size_t i, double v)
{
    unsigned char *p = (unsigned char *)buf + i * (size_t)esz(t);
    switch (t) {
    case T_F16: { uint16_t h = h_of(v); memcpy(p, &h, 2); break; }
    case T_BF16: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); uint16_t b = (uint16_t)(u >> 16); memcpy(p, &b, 2); break; }
    case T_TF32: case T_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case T_F64: memcpy(p, &v, 8); break;
    case T_S8: { int8_t c = (int8_t)v; memcpy(p, &c, 1); break; }
    case T_U8: { uint8_t c = (uint8_t)v; memcpy(p, &c, 1); break; }
    default: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    }
}
static double get(const void *buf, int t, size_t i)
{
    const unsigned char *p = (const unsigned char *)buf + i * (size_t)esz(t);
    switch (t) {
    case T_F16: { uint16_t h; memcpy(&h, p, 2); return h_val(h); }
    case T_F32: { float f; memcpy(&f, p, 4); return f; }
    case T_F64: { double d; memcpy(&d, p, 8); return d; }
    default: { int32_t x; memcpy(&x, p, 4); return x; }
    }
}

/* fp32 -> tf32, round to nearest, ties away from zero (cvt.rna.tf32.f32) */
static double tf32_rna(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

static unsigned seed = 12345;
static double rnd_small(int t)
{
    seed = seed * 1103515245u + 12345u;
    int r = (int)(seed >> 16 & 0x7fff);
    if (t == T_S8)
        return r % 255 - 127;
    if (t == T_U8)
        return r % 256;
    if (t == T_TF32) /* full fp32 mantissas: tf32 rounding matters */
        return ((r % 2001) - 1000) / 997.0;
    return (r % 17 - 8) / 8.0;   /* exact in f16 / bf16; every product and sum below is exact */
}

/* compare got with want (n values), naming the first 10 mismatches; returns mismatches */
static int compare(const char *what, const double *got, const double *want, int n, int quiet)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i] != want[i] && !(isnan(got[i]) && isnan(want[i]))) {
            if (!quiet && bad < 10)
                fprintf(stderr, "FAIL %s: element %d: got %.9g, want %.9g\n", what, i, got[i], want[i]);
            bad++;
        }
    return bad;
}

/* a wmma GEMM kernel(A, B, C, M, N, K, alpha, beta), one warp per TM x TN tile */
typedef struct gemm {
    const char *kernel;
    int ti, tc;          /* input and accumulator element types */
    int tm, tn, bcol;
    int M, N, K;
    double alpha, beta;
} gemm;

static int run_gemm(const gemm *g, int control)
{
    int M = g->M, N = g->N, K = g->K;
    double *a = malloc(sizeof(double) * (size_t)(M * K)), *b = malloc(sizeof(double) * (size_t)(K * N));
    double *c = malloc(sizeof(double) * (size_t)(M * N)), *want = malloc(sizeof(double) * (size_t)(M * N));
    double *got = malloc(sizeof(double) * (size_t)(M * N));
    void *ha = malloc((size_t)(M * K * esz(g->ti))), *hb = malloc((size_t)(K * N * esz(g->ti)));
    void *hc = malloc((size_t)(M * N * esz(g->tc)));
    for (int i = 0; i < M * K; i++)
        put(ha, g->ti, (size_t)i, a[i] = rnd_small(g->ti));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            b[k * N + j] = rnd_small(g->ti);
            put(hb, g->ti, (size_t)(g->bcol ? j * K + k : k * N + j), b[k * N + j]);
        }
    for (int i = 0; i < M * N; i++)
        put(hc, g->tc, (size_t)i, c[i] = g->tc == T_S32 ? (double)(i % 7 - 3) : (i % 7 - 3) / 4.0);
    int round = g->ti == T_TF32 && !control;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            float sf = 0;
            for (int k = 0; k < K; k++) {
                double x = round ? tf32_rna(a[i * K + k]) : a[i * K + k];
                double y = round ? tf32_rna(b[k * N + j]) : b[k * N + j];
                s += x * y;
                sf += (float)(x * y);   /* tf32: the documented order, k ascending, in f32 */
            }
            want[i * N + j] = g->ti == T_TF32 ? (double)(float)(g->alpha * sf + g->beta * c[i * N + j])
                                              : g->alpha * s + g->beta * c[i * N + j];
        }
    CUdeviceptr da = dalloc((size_t)(M * K * esz(g->ti))), db = dalloc((size_t)(K * N * esz(g->ti)));
    CUdeviceptr dc = dalloc((size_t)(M * N * esz(g->tc)));
    CK(cuMemcpyHtoD(da, ha, (size_t)(M * K * esz(g->ti))));
    CK(cuMemcpyHtoD(db, hb, (size_t)(K * N * esz(g->ti))));
    CK(cuMemcpyHtoD(dc, hc, (size_t)(M * N * esz(g->tc))));
    unsigned char al[8], be[8];
    int st = g->tc == T_S32 ? T_S32 : g->tc == T_F64 ? T_F64 : g->tc == T_F16 ? T_F16 : T_F32;
    put(al, st, 0, g->alpha);
    put(be, st, 0, g->beta);
    void *args[] = {&da, &db, &dc, &M, &N, &K, al, be};
    CK(cuLaunchKernel(fn(g->kernel), (unsigned)(N / g->tn), (unsigned)(M / g->tm), 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hc, dc, (size_t)(M * N * esz(g->tc))));
    for (int i = 0; i < M * N; i++)
        got[i] = get(hc, g->tc, (size_t)i);
    char what[96];
    snprintf(what, sizeof what, "%s (%dx%dx%d)%s", g->kernel, M, N, K, control ? " [control]" : "");
    int bad = compare(what, got, want, M * N, control);
    cuMemFree(da);
    cuMemFree(db);
    cuMemFree(dc);
    free(a), free(b), free(c), free(want), free(got), free(ha), free(hb), free(hc);
    return bad;
}

/* one-tile mma.sync kernel(A, B, Cin, D): A row-major M x K, B row-major K x N */
static int run_tile(const char *kernel, int ti, int tc, int M, int N, int K, int sat)
{
    double a[512], b[256], c[128], want[128], got[128];
    unsigned char ha[4096], hb[2048], hc[1024], hd[1024];
    for (int i = 0; i < M * K; i++)
        put(ha, ti, (size_t)i, a[i] = ti == T_TF32 ? tf32_rna(rnd_small(ti)) : rnd_small(ti));
    for (int i = 0; i < K * N; i++)
        put(hb, ti, (size_t)i, b[i] = ti == T_TF32 ? tf32_rna(rnd_small(ti)) : rnd_small(ti));
    for (int i = 0; i < M * N; i++)
        put(hc, tc, (size_t)i, c[i] = tc == T_S32 ? (double)(i * 1000003 % 2000001 - 1000000) : (i % 9 - 4) / 8.0);
    if (ti == T_S8) {   /* 2^31 - 1 plus the largest positive dot product: clamps (.satfinite) or wraps */
        int best = 0;
        double bd = 0;
        for (int i = 0; i < M * N; i++) {
            double dot = 0;
            for (int k = 0; k < K; k++)
                dot += a[(i / N) * K + k] * b[k * N + i % N];
            if (dot > bd)
                bd = dot, best = i;
        }
        put(hc, tc, (size_t)best, c[best] = 2147483647.0);
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = c[i * N + j];
            float sf = (float)c[i * N + j];
            for (int k = 0; k < K; k++) {
                s += a[i * K + k] * b[k * N + j];
                sf += (float)(a[i * K + k] * b[k * N + j]);
            }
            if (tc == T_S32 && sat)
                s = s > 2147483647.0 ? 2147483647.0 : s < -2147483648.0 ? -2147483648.0 : s;
            else if (tc == T_S32)
                s = (int32_t)(uint32_t)(int64_t)s;
            want[i * N + j] = ti == T_TF32 ? (double)sf : s;
        }
    size_t sa = (size_t)(M * K * esz(ti)), sb = (size_t)(K * N * esz(ti)), sc = (size_t)(M * N * esz(tc));
    CUdeviceptr da = dalloc(sa), db = dalloc(sb), dc = dalloc(sc), dd = dalloc(sc);
    CK(cuMemcpyHtoD(da, ha, sa));
    CK(cuMemcpyHtoD(db, hb, sb));
    CK(cuMemcpyHtoD(dc, hc, sc));
    void *args[] = {&da, &db, &dc, &dd};
    CK(cuLaunchKernel(fn(kernel), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hd, dd, sc));
    for (int i = 0; i < M * N; i++)
        got[i] = get(hd, tc, (size_t)i);
    int bad = compare(kernel, got, want, M * N, 0);
    cuMemFree(da), cuMemFree(db), cuMemFree(dc), cuMemFree(dd);
    return bad;
}

/* mma.sync m16n8k16 + ldmatrix GEMM; perm 1: the kernel swaps two A registers, 2: exchanges lanes' A */
static int run_ldmatrix(int perm)
{
    enum { M = 32, N = 16, K = 48 };
    static double a[M * K], b[K * N], want[M * N], got[M * N];
    static uint16_t ha[M * K], hb[K * N];
    static float hc[M * N];
    for (int i = 0; i < M * K; i++)
        put(ha, T_F16, (size_t)i, a[i] = rnd_small(T_F16));
    for (int i = 0; i < K * N; i++)
        put(hb, T_F16, (size_t)i, b[i] = rnd_small(T_F16));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += a[i * K + k] * b[k * N + j];
            want[i * N + j] = s;
        }
    CUdeviceptr da = dalloc(sizeof ha), db = dalloc(sizeof hb), dc = dalloc(sizeof hc);
    CK(cuMemcpyHtoD(da, ha, sizeof ha));
    CK(cuMemcpyHtoD(db, hb, sizeof hb));
    int m = M, n = N, k = K;
    void *args[] = {&da, &db, &dc, &m, &n, &k, &perm};
    CK(cuLaunchKernel(fn("mk_mma_ldmatrix"), N / 8, M / 16, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hc, dc, sizeof hc));
    for (int i = 0; i < M * N; i++)
        got[i] = hc[i];
    int bad = compare(perm == 1 ? "mk_mma_ldmatrix [control: A registers swapped]"
                      : perm == 2 ? "mk_mma_ldmatrix [control: A lanes permuted]" : "mk_mma_ldmatrix",
                      got, want, M * N, perm);
    cuMemFree(da), cuMemFree(db), cuMemFree(dc);
    return bad;
}

static int run_stmatrix(void)
{
    uint16_t in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (uint16_t)(i * 251 + 7);
    CUdeviceptr di = dalloc(sizeof in), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(di, in, sizeof in));
    CK(cuMemsetD8(dout, 0, sizeof out));
    void *args[] = {&di, &dout};
    CK(cuLaunchKernel(fn("mk_stmatrix"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    int bad = 0;
    for (int i = 0; i < 256; i++)
        if (out[i] != in[i] && bad++ < 10)
            fprintf(stderr, "FAIL mk_stmatrix: element %d: got %u, want %u\n", i, out[i], in[i]);
    cuMemFree(di), cuMemFree(dout);
    return bad;
}

static int fault_case(const char *c)
{
    CUdeviceptr a = dalloc(4096), d = dalloc(4096);
    CUresult r;
    if (!strcmp(c, "misaligned") || !strcmp(c, "divergent")) {
        void *args[] = {&a, &d};
        r = cuLaunchKernel(fn(c[0] == 'm' ? "mk_wmma_misaligned" : "mk_wmma_divergent"), 1, 1, 1, 32, 1, 1, 0, NULL,
                           args, NULL);
    } else {
        void *args[] = {&d};
        r = cuLaunchKernel(fn("mk_mma_partial"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    }
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    const char *en = "?";
    cuGetErrorName(r, &en);
    printf("launch: %s\n", en);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    start(argc, "test_hc_mma PTXFILE [misaligned|divergent|partial]");
    CK(cuModuleLoad(&mod, argv[1]));
    if (argc > 2)
        return fault_case(argv[2]);
    static const gemm G[] = {
        {"mk_wmma_f16", T_F16, T_F32, 16, 16, 1, 64, 48, 64, 2.0, 0.5},
        {"mk_wmma_f16_brow", T_F16, T_F32, 16, 16, 0, 32, 32, 48, 1.0, -1.0},
        {"mk_wmma_f16_32x8", T_F16, T_F32, 32, 8, 1, 64, 32, 32, 0.5, 2.0},
        {"mk_wmma_f16_8x32", T_F16, T_F32, 8, 32, 0, 32, 64, 32, 1.0, 1.0},
        {"mk_wmma_f16acc", T_F16, T_F16, 16, 16, 1, 32, 32, 16, 1.0, 0.5},
        {"mk_wmma_bf16", T_BF16, T_F32, 16, 16, 1, 48, 32, 64, 2.0, 0.25},
        {"mk_wmma_tf32", T_TF32, T_F32, 16, 16, 1, 32, 32, 32, 1.0, 0.0},
        {"mk_wmma_s8", T_S8, T_S32, 16, 16, 1, 32, 48, 64, 3, -2},
        {"mk_wmma_u8_32x8", T_U8, T_S32, 32, 8, 1, 64, 16, 32, 1, 1},
        {"mk_wmma_f64", T_F64, T_F64, 8, 8, 1, 16, 24, 16, 2.0, 0.5},
    };
    int bad = fails;   /* test_hc_check.h's EXPECT_EQ counter: unused here, compare() counts */
    for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
        int b = run_gemm(&G[i], 0);
        printf("%s %s\n", b ? "FAIL" : "ok", G[i].kernel);
        bad += b;
    }
    struct { const char *k; int ti, tc, m, n, kk, sat; } T[] = {
        {"mk_mma_bf16_k8", T_BF16, T_F32, 16, 8, 8, 0}, {"mk_mma_tf32_k8", T_TF32, T_F32, 16, 8, 8, 0},
        {"mk_mma_s8_k32", T_S8, T_S32, 16, 8, 32, 1},   {"mk_mma_f64", T_F64, T_F64, 8, 8, 4, 0},
        {"mk_mma_f16acc", T_F16, T_F16, 16, 8, 16, 0},  {"mk_mma_tf32_k4", T_TF32, T_F32, 16, 8, 4, 0},
        {"mk_mma_s8_k16", T_S8, T_S32, 16, 8, 16, 0},   {"mk_mma_s8_m8n8k16", T_S8, T_S32, 8, 8, 16, 0},
        {"mk_mma_f16_k8", T_F16, T_F32, 16, 8, 8, 0},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        int b = run_tile(T[i].k, T[i].ti, T[i].tc, T[i].m, T[i].n, T[i].kk, T[i].sat);
        printf("%s %s\n", b ? "FAIL" : "ok", T[i].k);
        bad += b;
    }
    int b = run_ldmatrix(0);
    printf("%s mk_mma_ldmatrix\n", b ? "FAIL" : "ok");
    bad += b;
    b = run_stmatrix();
    printf("%s mk_stmatrix\n", b ? "FAIL" : "ok");
    bad += b;
    /* controls: each must mismatch */
    b = run_ldmatrix(1);
    printf("%s control: mma with two A registers swapped mismatches (%d of 512 elements)\n", b ? "ok" : "FAIL", b);
    bad += !b;
    b = run_ldmatrix(2);
    printf("%s control: mma with the A fragments of lanes l and l ^ 4 exchanged mismatches (%d of 512 elements)\n",
           b ? "ok" : "FAIL", b);
    bad += !b;
    gemm tf = G[6];
    b = run_gemm(&tf, 1);
    printf("%s control: a tf32 reference without the rounding mismatches (%d of %d elements)\n", b ? "ok" : "FAIL", b,
           tf.M * tf.N);
    bad += !b;
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
