/* ptx_twin_run.c — runs every kernel of the project once with fixed inputs and saves each output
 * buffer, so that tests/ptx/test_ptx_twins.sh can compare a run through the host twins
 * (HOSTCUDA_EXEC=twin) with a run through the PTX interpreter (HOSTCUDA_EXEC=ptx).
 *
 *   ptx_twin_run run OUT TEST_PTX MLP_PTX LAYERS_PTX CAST_PTX INSPECT_PTX [--perturb]
 *   ptx_twin_run compare A B [--nofma | --exact]
 *
 * run: writes OUT, one record per output (kernel, buffer, element type, bound, data), and prints
 * "kernels: NAME..." (every kernel it launched). Launches use several CTAs so grid-stride loops
 * wrap. --perturb moves hc_saxpy's `a` by 64 ulps (the negative control: its record must differ
 * by more than its bound). compare: one TAP case per record: bit-identical, or within
 * the record's bound. The bound says why the two may differ: nvcc contracts a*b+c into one fma
 * (rounded once) where the host twin rounds twice, and CUDA's tanhf/powf are not glibc's; with the
 * PTX built -fmad=false (--nofma) only the library functions may differ; --exact: every record
 * bit-identical (two interpreter runs). A dot product of K
 * positive terms may then differ by up to 2K+2 ulps (each side within K ulps of the exact sum).
 * Every kernel gets inputs of its own (none computed by another kernel, whose allowed difference
 * would then reach an exact comparison). Floats compare in ulps (NaN equals any NaN: PTX canonicalises, x86 keeps payloads), integers
 * exactly. Exit: run 0 (or 77 without an interpreter under HOSTCUDA_EXEC=ptx); compare 0 when
 * every record matches, 1 otherwise, 2 on a bad file.
 */
#include "ptxt.h"

#include <math.h>
#include <setjmp.h>

enum { T_F32, T_BF16, T_F16, T_U32, T_U64, T_I64 };
enum { K_EXACT, K_ULP, K_ABS };
typedef struct {
    char name[64];
    int32_t type, kind;
    double tol_fma, tol_nofma;   /* ulps (K_ULP) or absolute (K_ABS); with the default / -fmad=false PTX */
    uint64_t count;
} rec_hdr;

static FILE *out_file;
static int perturb;
/* a group of kernels (one PTX file) that fails to load or launch ends there; the next goes on */
static jmp_buf group_end;

static size_t elem_size(int t) { return t == T_BF16 || t == T_F16 ? 2 : t == T_F32 || t == T_U32 ? 4 : 8; }

static void save(const char *name, int type, int kind, double tol_fma, double tol_nofma, CUdeviceptr d, size_t count)
{
    rec_hdr h = {.type = type, .kind = kind, .tol_fma = tol_fma, .tol_nofma = tol_nofma, .count = count};
    snprintf(h.name, sizeof h.name, "%s", name);
    size_t bytes = count * elem_size(type);
    void *buf = malloc(bytes ? bytes : 1);
    if (bytes)
        PTXT_CHECK(cuMemcpyDtoH(buf, d, bytes));
    fwrite(&h, sizeof h, 1, out_file);
    fwrite(buf, 1, bytes, out_file);
    free(buf);
}

static CUdeviceptr dup_to_dev(const void *p, size_t bytes)
{
    CUdeviceptr d;
    PTXT_CHECK(cuMemAlloc(&d, bytes));
    PTXT_CHECK(cuMemcpyHtoD(d, p, bytes));
    return d;
}

static CUfunction fn(CUmodule m, const char *name)
{
    CUfunction f;
    CUresult r = cuModuleGetFunction(&f, m, name);
    if (r == CUDA_ERROR_NOT_FOUND && getenv("HOSTCUDA_EXEC") && !strcmp(getenv("HOSTCUDA_EXEC"), "ptx")) {
        printf("SKIP: hostcuda has no PTX interpreter in this build (%s)\n", name);
        exit(77);
    }
    if (r != CUDA_SUCCESS) {
        printf("# cuModuleGetFunction(%s): %s (the rest of its group is not run)\n", name, ptxt_err(r));
        longjmp(group_end, 1);
    }
    return f;
}

/* the distinct kernels launched, printed at the end ("kernels: A B ..."), so that the test can
 * check the interpreter's HOSTCUDA_EXEC_STATS lines name every one of them */
static const char *launched[64];
static int nlaunched;

static void go(CUmodule m, const char *name, unsigned grid, unsigned block, void **args)
{
    int seen = 0;
    for (int i = 0; i < nlaunched; i++)
        seen |= !strcmp(launched[i], name);
    if (!seen && nlaunched < 64)
        launched[nlaunched++] = name;
    CUresult r = cuLaunchKernel(fn(m, name), grid, 1, 1, block, 1, 1, 0, NULL, args, NULL);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS) {
        printf("# kernel %s failed: %s (the rest of its group is not run)\n", name, ptxt_err(r));
        longjmp(group_end, 1);
    }
}

static CUmodule load(const char *path)
{
    char *text = ptxt_slurp(path);
    if (!text)
        exit(1);
    CUmodule m;
    CUresult r = cuModuleLoadData(&m, text);
    free(text);
    if (r != CUDA_SUCCESS) {
        printf("# cuModuleLoadData(%s): %s (its kernels are not run)\n", path, ptxt_err(r));
        longjmp(group_end, 1);
    }
    return m;
}

/* deterministic values in [lo, hi) */
static void fill(float *p, int n, float lo, float hi, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
    }
}
static CUdeviceptr dev_fill(int n, float lo, float hi, unsigned seed)
{
    float *p = malloc(sizeof(float) * (size_t)n);
    fill(p, n, lo, hi, seed);
    CUdeviceptr d = dup_to_dev(p, sizeof(float) * (size_t)n);
    free(p);
    return d;
}

static void run_test_kernels(const char *path)
{
    CUmodule m = load(path);
    int n = 1000;
    CUdeviceptr y = dev_fill(n, 0.5f, 2.0f, 1), x = dev_fill(n, 0.5f, 2.0f, 2);
    float value = 2.5f, a = 1.37f;
    for (int k = 0; perturb && k < 64; k++)
        a = nextafterf(a, 2.0f);
    void *fa[] = {&y, &value, &n};
    go(m, "hc_fill", 3, 128, fa);
    save("hc_fill out", T_F32, K_EXACT, 0, 0, y, (size_t)n);
    CUdeviceptr y2 = dev_fill(n, 0.5f, 2.0f, 3);
    void *sa[] = {&y2, &x, &a, &n};
    go(m, "hc_saxpy", 3, 128, sa);
    save("hc_saxpy y (a*x+y: one fma on the GPU)", T_F32, K_ULP, 2, 0, y2, (size_t)n);
    CUdeviceptr mixed;
    PTXT_CHECK(cuMemAlloc(&mixed, 5 * 8));
    char c = 'x';
    short s = -1234;
    int i = 123456;
    double dd = 3.75;
    long long ll = 1ll << 40;
    void *ma[] = {&mixed, &c, &s, &i, &dd, &ll};
    go(m, "hc_mixed", 2, 32, ma);
    save("hc_mixed out", T_I64, K_EXACT, 0, 0, mixed, 5);
    float sc = 0.75f;
    void *ka[] = {&x, &n, &sc};
    go(m, "_Z8hc_scalePfif", 3, 128, ka);
    save("hc_scale p", T_F32, K_EXACT, 0, 0, x, (size_t)n);
    CUdeviceptr slow;
    PTXT_CHECK(cuMemAlloc(&slow, 4));
    PTXT_CHECK(cuMemsetD32(slow, 0, 1));
    int v77 = 77, us = 5;
    void *la[] = {&slow, &v77, &us};
    go(m, "hc_slow_store", 1, 32, la);
    save("hc_slow_store p", T_U32, K_EXACT, 0, 0, slow, 1);
    /* one thread only: with more, out[0] += 1 is a data race the serial twin hides */
    CUdeviceptr cnt;
    PTXT_CHECK(cuMemAlloc(&cnt, 4));
    PTXT_CHECK(cuMemsetD32(cnt, 10, 1));
    void *ca[] = {&cnt};
    go(m, "hc_count_threads", 1, 1, ca);
    save("hc_count_threads out (1 thread)", T_U32, K_EXACT, 0, 0, cnt, 1);
    cuModuleUnload(m);
}

static void run_mlp(const char *path)
{
    CUmodule m = load(path);
    int rows = 8, in_dim = 16, out_dim = 12, act;
    CUdeviceptr W = dev_fill(out_dim * in_dim, 0.05f, 0.5f, 11), b = dev_fill(out_dim, 0.0f, 0.1f, 12);
    CUdeviceptr in = dev_fill(rows * in_dim, 0.0f, 0.9f, 13), out, out2;
    PTXT_CHECK(cuMemAlloc(&out, sizeof(float) * rows * out_dim));
    PTXT_CHECK(cuMemAlloc(&out2, sizeof(float) * rows * out_dim));
    act = 0;
    void *fa[] = {&out, &W, &b, &in, &rows, &in_dim, &out_dim, &act};
    go(m, "_Z14linear_forwardPfPKfS1_S1_iiii", 2, 32, fa);
    save("linear_forward out (K=16 fma chain)", T_F32, K_ULP, 2 * 16 + 2, 0, out, (size_t)rows * out_dim);
    act = 1;
    void *fb[] = {&out2, &W, &b, &in, &rows, &in_dim, &out_dim, &act};
    go(m, "_Z14linear_forwardPfPKfS1_S1_iiii", 2, 32, fb);
    save("linear_forward tanh out (fma chain + CUDA tanhf)", T_F32, K_ULP, 2 * 16 + 8, 4, out2, (size_t)rows * out_dim);
    int nel = rows * out_dim;
    CUdeviceptr y = dev_fill(nel, -0.5f, 0.5f, 14), yhat = dev_fill(nel, -0.5f, 0.5f, 22), loss, dy;
    PTXT_CHECK(cuMemAlloc(&loss, 4));
    PTXT_CHECK(cuMemAlloc(&dy, sizeof(float) * nel));
    void *la[] = {&loss, &yhat, &y, &rows, &out_dim};
    go(m, "mse_loss", 2, 32, la);
    save("mse_loss loss (96 squares: fma chain)", T_F32, K_ULP, 2 * 96 + 2, 0, loss, 1);
    float scale = 2.0f / (float)nel;
    void *ga[] = {&dy, &yhat, &y, &nel, &scale};
    go(m, "mse_grad", 2, 32, ga);
    save("mse_grad dy", T_F32, K_EXACT, 0, 0, dy, (size_t)nel);
    CUdeviceptr dout = dev_fill(nel, 0.01f, 0.3f, 15), dW = dev_fill(out_dim * in_dim, 0.0f, 0.01f, 16);
    CUdeviceptr db = dev_fill(out_dim, 0.0f, 0.01f, 17), din;
    PTXT_CHECK(cuMemAlloc(&din, sizeof(float) * rows * in_dim));
    void *wa[] = {&dW, &db, &dout, &in, &rows, &in_dim, &out_dim};
    go(m, "linear_backward_weight", 3, 32, wa);
    save("linear_backward_weight dW (K=8 fma chain)", T_F32, K_ULP, 2 * 8 + 4, 0, dW, (size_t)out_dim * in_dim);
    save("linear_backward_weight db", T_F32, K_ULP, 2 * 8 + 4, 0, db, (size_t)out_dim);
    act = 1;
    void *ia[] = {&din, &dout, &W, &in, &rows, &in_dim, &out_dim, &act};
    go(m, "linear_backward_input", 3, 32, ia);
    save("linear_backward_input din (K=12 fma chain, 1-x^2)", T_F32, K_ULP, 2 * 12 + 8, 0, din, (size_t)rows * in_dim);
    int ng = 200;
    CUdeviceptr grads = dev_fill(ng, -0.2f, 0.2f, 18), nsq, cs;
    PTXT_CHECK(cuMemAlloc(&nsq, 4));
    PTXT_CHECK(cuMemAlloc(&cs, 4));
    void *na[] = {&nsq, &grads, &ng};
    go(m, "grad_norm_squared", 2, 32, na);
    save("grad_norm_squared out (200 squares: fma chain)", T_F32, K_ULP, 2 * 200 + 2, 0, nsq, 1);
    float maxn[2] = {0.1f, 100.0f}, nsq_value = 1.7f;
    PTXT_CHECK(cuMemcpyHtoD(nsq, &nsq_value, 4));   /* not grad_norm_squared's result: see above */
    for (int k = 0; k < 2; k++) {
        void *xa[] = {&cs, &nsq, &maxn[k]};
        go(m, "clip_scale", 1, 32, xa);
        save(k ? "clip_scale (norm below max)" : "clip_scale (norm above max)", T_F32, K_EXACT, 0, 0, cs, 1);
    }
    float one = 1.0f, lr = 0.01f;
    CUdeviceptr clip = dup_to_dev(&one, 4), params = dev_fill(ng, 1.0f, 2.0f, 19);
    void *ua[] = {&params, &grads, &ng, &lr, &clip};
    go(m, "sgd_update", 3, 32, ua);
    save("sgd_update params (p - lr*g: one fma)", T_F32, K_ULP, 2, 0, params, (size_t)ng);
    CUdeviceptr am = dev_fill(ng, 0.0f, 0.01f, 20), av = dev_fill(ng, 0.0f, 0.001f, 21);
    CUdeviceptr ap = dev_fill(ng, 1.0f, 2.0f, 23);
    float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    int t = 3;
    void *aa[] = {&ap, &grads, &am, &av, &ng, &lr, &b1, &b2, &eps, &t, &clip};
    go(m, "adam_update", 3, 32, aa);
    /* m: terms of mixed sign (|m| <= 0.01, |g| <= 0.2): one rounding more or less, 2^-24 * 0.03 */
    save("adam_update m (fma, mixed signs: absolute bound)", T_F32, K_ABS, 1e-8, 0, am, (size_t)ng);
    save("adam_update v (b2*v + (1-b2)*g*g: fma)", T_F32, K_ULP, 4, 0, av, (size_t)ng);
    save("adam_update params (CUDA powf, fma)", T_F32, K_ULP, 8, 4, ap, (size_t)ng);
    cuModuleUnload(m);
}

static void run_layers(const char *path)
{
    CUmodule m = load(path);
    long long n = 1000;
    CUdeviceptr param = dev_fill((int)n, -1.0f, 1.0f, 31), out, grad = dev_fill((int)n, -0.1f, 0.1f, 32);
    PTXT_CHECK(cuMemAlloc(&out, sizeof(float) * (size_t)n));
    void *fa[] = {&out, &param, &n};
    go(m, "layer_forward", 3, 64, fa);
    save("layer_forward out", T_F32, K_EXACT, 0, 0, out, (size_t)n);
    unsigned long long seed = 0x1234abcdull;
    int work = 3, batch = 4;
    long long first = 10;
    float scale = 0.25f;
    void *ba[] = {&grad, &n, &param, &seed, &work, &first, &batch, &scale};
    go(m, "layer_backward", 3, 64, ba);
    /* 4 mixed-sign terms of magnitude <= 3: the fma roundings differ by <= 4 * 2 * 12 * 2^-24 */
    save("layer_backward grad (fma, mixed signs: absolute bound)", T_F32, K_ABS, 1e-5, 0, grad, (size_t)n);
    long long us = 5;
    void *ya[] = {&us};
    go(m, "layer_busy", 1, 32, ya);
    save("layer_busy (runs to the end)", T_F32, K_EXACT, 0, 0, out, 0);
    float lr = 0.5f;
    CUdeviceptr p2 = dev_fill((int)n, 2.0f, 3.0f, 33), g2 = dev_fill((int)n, -0.1f, 0.1f, 34);
    void *sa[] = {&p2, &g2, &n, &lr};
    go(m, "sgd_apply", 3, 64, sa);
    save("sgd_apply params (one fma)", T_F32, K_ULP, 2, 0, p2, (size_t)n);
    cuModuleUnload(m);
}

/* f32 operands with the edge cases the casts must agree on: NaN (payloads), inf, subnormals, ties */
static void cast_source(float *p, int n)
{
    static const uint32_t sp[] = {0x7fc00000, 0x7fc12345, 0xffc00001, 0x7f800000, 0xff800000, 0x00000001,
                                  0x80000001, 0x007fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x477ff000,
                                  0x477fe000, 0x33000000, 0x33400000, 0x7f7fffff, 0x00000000, 0x80000000,
                                  0x38800000, 0x387fc000};
    fill(p, n, -70000.0f, 70000.0f, 41);
    for (int i = 0; i < n; i += 7)
        p[i] *= 1e-6f;
    for (int i = 0; i < (int)(sizeof sp / 4) && i < n; i++)
        memcpy(&p[i * 3], &sp[i], 4);
}

static void run_cast(const char *path)
{
    CUmodule m = load(path);
    long long n = 777;
    float *src = malloc(sizeof(float) * (size_t)n);
    cast_source(src, (int)n);
    CUdeviceptr s = dup_to_dev(src, sizeof(float) * (size_t)n), h, f;
    PTXT_CHECK(cuMemAlloc(&h, 2 * (size_t)n));
    PTXT_CHECK(cuMemAlloc(&f, 4 * (size_t)n));
    float scales[2] = {1.0f, 0.375f};
    static const char *names[] = {"ash_coll_k_f32_to_bf16", "ash_coll_k_bf16_to_f32", "ash_coll_k_f32_to_f16",
                                  "ash_coll_k_f16_to_f32"};
    for (int k = 0; k < 2; k++) {
        char what[128];
        for (int j = 0; j < 2; j++) {   /* bf16, then f16 */
            float scale = scales[k];
            void *da[] = {&s, &h, &n, &scale};
            go(m, names[2 * j], 3, 64, da);
            snprintf(what, sizeof what, "%s (scale %g)", names[2 * j], (double)scale);
            save(what, j ? T_F16 : T_BF16, K_EXACT, 0, 0, h, (size_t)n);
            void *ua[] = {&h, &f, &n, &scale};
            go(m, names[2 * j + 1], 3, 64, ua);
            snprintf(what, sizeof what, "%s (scale %g)", names[2 * j + 1], (double)scale);
            save(what, T_F32, K_EXACT, 0, 0, f, (size_t)n);
        }
    }
    float scale = 3.0f;
    void *sa[] = {&f, &n, &scale};
    go(m, "ash_coll_k_scale_f32", 3, 64, sa);
    save("ash_coll_k_scale_f32", T_F32, K_EXACT, 0, 0, f, (size_t)n);
    void *bf[] = {&s, &h, &n, &scales[0]};
    go(m, "ash_coll_k_f32_to_bf16", 3, 64, bf);
    void *ba[] = {&h, &n, &scale};
    go(m, "ash_coll_k_scale_bf16", 3, 64, ba);
    save("ash_coll_k_scale_bf16", T_BF16, K_EXACT, 0, 0, h, (size_t)n);
    go(m, "ash_coll_k_f32_to_f16", 3, 64, bf);
    go(m, "ash_coll_k_scale_f16", 3, 64, ba);
    save("ash_coll_k_scale_f16", T_F16, K_EXACT, 0, 0, h, (size_t)n);
    free(src);
    cuModuleUnload(m);
}

static void run_inspect(const char *path)
{
    CUmodule m = load(path);
    long long n = 5000;
    uint32_t *p = malloc(4 * (size_t)n);
    uint16_t *q = malloc(2 * (size_t)n);
    for (long long i = 0; i < n; i++) {
        p[i] = (uint32_t)(i * 2654435761u);
        if (i % 97 == 0)
            p[i] = 0x7f800000u | (uint32_t)(i % 3);   /* inf and NaNs */
        q[i] = (uint16_t)(p[i] >> 16);
        if (i % 89 == 0)
            q[i] = (uint16_t)(0x7c00 | (i % 2));
    }
    CUdeviceptr dp = dup_to_dev(p, 4 * (size_t)n), dq = dup_to_dev(q, 2 * (size_t)n), partial, folded;
    unsigned grid = 5, block = 64, threads = grid * block, fold_threads = 32;
    PTXT_CHECK(cuMemAlloc(&partial, 16 * (size_t)threads));
    PTXT_CHECK(cuMemAlloc(&folded, 16 * (size_t)fold_threads));
    unsigned e32 = 0x7f800000u, m32 = 0x007fffffu, e16 = 0x7c00, m16 = 0x03ff;
    long long nparts = threads;
    void *c32[] = {&dp, &n, &e32, &m32, &partial};
    go(m, "ash_inspect_k_count32", grid, block, c32);
    save("ash_inspect_k_count32 partial", T_U64, K_EXACT, 0, 0, partial, 2 * (size_t)threads);
    void *fa[] = {&partial, &nparts, &folded};
    go(m, "ash_inspect_k_fold", 1, fold_threads, fa);
    save("ash_inspect_k_fold out", T_U64, K_EXACT, 0, 0, folded, 2 * (size_t)fold_threads);
    void *c16[] = {&dq, &n, &e16, &m16, &partial};
    go(m, "ash_inspect_k_count16", grid, block, c16);
    save("ash_inspect_k_count16 partial", T_U64, K_EXACT, 0, 0, partial, 2 * (size_t)threads);
    free(p);
    free(q);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- compare */
static int isnan_t(const void *p, int t)
{
    uint64_t u = 0;
    memcpy(&u, p, elem_size(t));
    switch (t) {
    case T_F32: return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu);
    case T_BF16: return (u & 0x7f80) == 0x7f80 && (u & 0x7f);
    case T_F16: return (u & 0x7c00) == 0x7c00 && (u & 0x3ff);
    default: return 0;
    }
}
static int64_t ordered_t(const void *p, int t)
{
    uint64_t u = 0;
    memcpy(&u, p, elem_size(t));
    int bits = (int)elem_size(t) * 8;
    int64_t mag = (int64_t)(u & ((1ull << (bits - 1)) - 1));
    return (u >> (bits - 1)) ? -mag : mag;
}
static double value_t(const void *p, int t)
{
    float f;
    uint64_t u64 = 0;
    memcpy(&u64, p, elem_size(t));
    uint32_t u = (uint32_t)u64;
    if (t == T_BF16)
        u <<= 16;
    if (t == T_F16)
        return (double)((u & 0x7c00) == 0 ? ldexp(u & 0x3ff, -24) : ldexp((u & 0x3ff) | 0x400, (int)(u >> 10 & 31) - 25)) *
               ((u & 0x8000) ? -1 : 1);
    memcpy(&f, &u, 4);
    return f;
}

/* all records of a file, in order */
typedef struct {
    rec_hdr h;
    char *data;
} rec;
static int read_all(const char *path, rec **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ptx_twin_run: cannot open %s\n", path);
        return -1;
    }
    int n = 0, cap = 0;
    rec *r = NULL;
    rec_hdr h;
    while (fread(&h, sizeof h, 1, f) == 1) {
        size_t bytes = elem_size(h.type) * h.count;
        if (n == cap)
            r = realloc(r, sizeof *r * (size_t)(cap = cap ? 2 * cap : 64));
        r[n].h = h;
        r[n].data = malloc(bytes + 1);
        if (fread(r[n].data, 1, bytes, f) != bytes) {
            fprintf(stderr, "ptx_twin_run: %s: torn record %s\n", path, h.name);
            fclose(f);
            return -1;
        }
        n++;
    }
    fclose(f);
    *out = r;
    return n;
}

static int compare(const char *pa, const char *pb, int nofma, int exact)
{
    rec *ra, *rb;
    int na = read_all(pa, &ra), nb = read_all(pb, &rb);
    if (na < 0 || nb < 0)
        return 2;
    int t = 0, failed = 0;
    for (int ia = 0; ia < na; ia++) {
        rec_hdr ha = ra[ia].h;
        const rec *b = NULL;
        for (int ib = 0; ib < nb && !b; ib++)
            if (!strcmp(rb[ib].h.name, ha.name) && rb[ib].h.count == ha.count && rb[ib].h.type == ha.type)
                b = &rb[ib];
        if (!b) {
            printf("not ok %d - %s: not produced by the second run\n", ++t, ha.name);
            failed++;
            continue;
        }
        size_t es = elem_size(ha.type), bytes = es * ha.count;
        const char *da = ra[ia].data, *db = b->data;
        double tol = exact ? 0 : nofma ? ha.tol_nofma : ha.tol_fma, worst = 0;
        int kind = tol == 0 ? K_EXACT : ha.kind, bad = 0, identical = !memcmp(da, db, bytes);
        for (uint64_t i = 0; i < ha.count && !identical; i++) {
            const char *x = da + i * es, *y = db + i * es;
            int ok;
            double dist = 0;
            if (ha.type == T_U32 || ha.type == T_U64 || ha.type == T_I64)
                ok = !memcmp(x, y, es);
            else if (isnan_t(x, ha.type) || isnan_t(y, ha.type))
                ok = isnan_t(x, ha.type) && isnan_t(y, ha.type);
            else {
                int64_t d = ordered_t(x, ha.type) - ordered_t(y, ha.type);
                dist = (double)(d < 0 ? -d : d);
                if (kind == K_ABS) {
                    double ad = fabs(value_t(x, ha.type) - value_t(y, ha.type));
                    ok = ad <= tol || dist <= 2;
                    dist = ad;
                } else
                    ok = kind == K_EXACT ? dist == 0 : dist <= tol;
            }
            if (dist > worst)
                worst = dist;
            if (!ok && bad++ < 5)
                printf("#   %s[%llu]: %.9g vs %.9g (distance %g, bound %g)\n", ha.name, (unsigned long long)i,
                       value_t(x, ha.type), value_t(y, ha.type), dist, kind == K_EXACT ? 0 : tol);
        }
        char how[96];
        if (identical)
            snprintf(how, sizeof how, "bit-identical");
        else if (kind == K_ABS)
            snprintf(how, sizeof how, "within %g absolute (max %.3g)", tol, worst);
        else
            snprintf(how, sizeof how, "within %g ulp (max %g)", kind == K_EXACT ? 0 : tol, worst);
        printf("%s %d - %s: %s, %llu elements\n", bad ? "not ok" : "ok", ++t, ha.name, bad ? "differs" : how,
               (unsigned long long)ha.count);
        if (bad)
            printf("#   %d elements out of bounds\n", bad);
        failed += bad != 0;
    }
    printf("1..%d\n", t);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "compare"))
        return compare(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "--nofma"), argc > 4 && !strcmp(argv[4], "--exact"));
    if (argc < 8 || strcmp(argv[1], "run")) {
        fprintf(stderr, "usage: ptx_twin_run run OUT TEST_PTX MLP_PTX LAYERS_PTX CAST_PTX INSPECT_PTX [--perturb]\n"
                        "       ptx_twin_run compare A B [--nofma | --exact]\n");
        return 2;
    }
    perturb = argc > 8 && !strcmp(argv[8], "--perturb");
    setenv("HOSTCUDA_POISON", "1", 0);
    ptxt_start();
    out_file = fopen(argv[2], "wb");
    if (!out_file) {
        fprintf(stderr, "ptx_twin_run: cannot write %s\n", argv[2]);
        return 1;
    }
    void (*groups[])(const char *) = {run_test_kernels, run_mlp, run_layers, run_cast, run_inspect};
    for (int g = 0; g < 5; g++)
        if (!setjmp(group_end))
            groups[g](argv[3 + g]);
    printf("kernels:");
    for (int i = 0; i < nlaunched; i++)
        printf(" %s", launched[i]);
    printf("\n");
    return fclose(out_file) ? 1 : 0;
}
