/* test_hc_exec — hostcuda's PTX interpreter through the Driver API, on kernels that have no host
 * twin (tests/hostcuda/exec_kernels.cu, PTX made by nvcc).
 * Property: barriers with shared memory, divergence and reconvergence, warp votes / shuffles /
 * match, atomics from CTAs on several host threads, dynamic shared memory and device-function
 * calls (recursion, a struct returned by value) and a cooperative launch's grid-wide barrier
 * (all CTAs at once, whatever HOSTCUDA_THREADS) give exactly the
 * values CUDA defines (integer data: exact); a launch with more dynamic shared memory than the
 * function allows is refused. The fault cases (`test_hc_exec CASE`) are run one per process by
 * test_hc_exec.sh, which checks their result and their hostcuda: line.
 * Usage: test_hc_exec PTXFILE [CASE]   (no CASE: every non-fault case). Exit 0 pass, 1 fail.
 *        test_hc_exec PTXFILE bench [N [REPEAT]]   an elementwise kernel for the speed figure.
 *        test_hc_exec PTXFILE load   prints the result of loading the module.
 *        test_hc_exec PTXFILE run1 KERNEL   runs KERNEL(unsigned *out) on one thread, prints out[0]. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_hc_check.h"

static const char *ptx_path;

static void case_reduce(void)
{
    enum { N = 1000, B = 128 };
    int x[N], nb = (N + B - 1) / B, out[8];
    for (int i = 0; i < N; i++)
        x[i] = (i * 37) % 101 - 50;
    CUdeviceptr dx = dalloc(sizeof x), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    int n = N;
    void *args[] = {&dx, &dout, &n};
    CK(cuLaunchKernel(fn("ex_reduce"), (unsigned)nb, 1, 1, B, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof(int) * (size_t)nb));
    for (int b = 0; b < nb; b++) {
        int want = 0;
        for (int i = b * B; i < (b + 1) * B && i < N; i++)
            want += x[i];
        if (b == 0 && getenv("TEST_HC_EXEC_CONTROL"))
            want += 1;   /* the negative control: this expectation is wrong on purpose */
        char what[64];
        snprintf(what, sizeof what, "ex_reduce block %d", b);
        EXPECT_EQ(what, out[b], want);
    }
    cuMemFree(dx);
    cuMemFree(dout);
}

static void case_diverge(void)
{
    enum { T = 200 };
    int out[T], acc[T];
    CUdeviceptr d = dalloc(sizeof out);
    void *args[] = {&d};
    CK(cuLaunchKernel(fn("ex_diverge"), 1, 1, 1, T, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int t = 0; t < T; t++)
        acc[t] = t % 3 == 0 ? t * (t - 1) / 2 : t % 3 == 1 ? -5 * t : t * t;
    for (int t = 0; t < T; t++) {
        char what[64];
        snprintf(what, sizeof what, "ex_diverge thread %d", t);
        EXPECT_EQ(what, out[t], acc[(t + 1) % T] - acc[t]);
    }
    cuMemFree(d);
}

static void case_vote(void)
{
    enum { T = 32 };
    unsigned out[T * 5];
    CUdeviceptr d = dalloc(sizeof out);
    void *args[] = {&d};
    CK(cuLaunchKernel(fn("ex_vote"), 1, 1, 1, T, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int t = 0; t < T; t++) {
        char what[64];
        snprintf(what, sizeof what, "ex_vote ballot lane %d", t);
        EXPECT_EQ(what, out[t * 5 + 0], 0xaaaaaaaau);
        snprintf(what, sizeof what, "ex_vote all lane %d", t);
        EXPECT_EQ(what, out[t * 5 + 1], 1);
        snprintf(what, sizeof what, "ex_vote any lane %d", t);
        EXPECT_EQ(what, out[t * 5 + 2], 1);
        snprintf(what, sizeof what, "ex_vote activemask lane %d", t);
        EXPECT_EQ(what, out[t * 5 + 3], t < 10 ? 0x3ffu : 0u);
        snprintf(what, sizeof what, "ex_vote match_any lane %d", t);
        EXPECT_EQ(what, out[t * 5 + 4], 0xffu << (8 * (t / 8)));
    }
    cuMemFree(d);
}

static void case_atomics(void)
{
    enum { G = 37, B = 96 };
    CUdeviceptr ctr = dalloc(8), mx = dalloc(4), fs = dalloc(4), wrap = dalloc(4), u64 = dalloc(8);
    CK(cuMemsetD32(ctr, 0, 2));
    CK(cuMemsetD32(mx, 0, 1));
    CK(cuMemsetD32(fs, 0, 1));
    CK(cuMemsetD32(wrap, 0, 1));
    CK(cuMemsetD32(u64, 0, 2));
    void *args[] = {&ctr, &mx, &fs, &wrap, &u64};
    CK(cuLaunchKernel(fn("ex_atomics"), G, 1, 1, B, 1, 1, 0, NULL, args, NULL));
    unsigned c[2], w;
    int m;
    float f;
    unsigned long long u;
    CK(cuMemcpyDtoH(c, ctr, 8));
    CK(cuMemcpyDtoH(&m, mx, 4));
    CK(cuMemcpyDtoH(&f, fs, 4));
    CK(cuMemcpyDtoH(&w, wrap, 4));
    CK(cuMemcpyDtoH(&u, u64, 8));
    int wantm = 0;
    unsigned long long wantu = 0;
    for (int i = 0; i < G * B; i++) {
        if ((i * 7919) % 1000 > wantm)
            wantm = (i * 7919) % 1000;
        wantu += (unsigned long long)i << 20;
    }
    EXPECT_EQ("atomicAdd u32 count", c[0], G * B);
    EXPECT_EQ("shared atomicAdd summed per block", c[1], 2 * G * B);
    EXPECT_EQ("atomicMax", m, wantm);
    EXPECT_EQ("atomicAdd f32 (x2)", (long long)(f * 2), G * B);
    EXPECT_EQ("atomicInc wraps at 9", w, (G * B) % 10);
    EXPECT_EQ("atomicAdd u64", (long long)u, (long long)wantu);
    cuMemFree(ctr);
    cuMemFree(mx);
    cuMemFree(fs);
    cuMemFree(wrap);
    cuMemFree(u64);
}

static void case_dynshared(void)
{
    enum { B = 256, G = 3, N = B * G };
    int x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = i * 3 + 1;
    CUdeviceptr dx = dalloc(sizeof x), dy = dalloc(sizeof y);
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    void *args[] = {&dx, &dy};
    CUfunction f = fn("ex_dynshared");
    CK(cuLaunchKernel(f, G, 1, 1, B, 1, 1, B * sizeof(int), NULL, args, NULL));
    CK(cuMemcpyDtoH(y, dy, sizeof y));
    for (int i = 0; i < N; i++) {
        int b = i / B, t = i % B;
        char what[64];
        snprintf(what, sizeof what, "ex_dynshared element %d", i);
        EXPECT_EQ(what, y[i], x[b * B + B - 1 - t]);
    }
    /* above the function's maximum: refused; allowed after raising it */
    CUresult rc = cuLaunchKernel(f, 1, 1, 1, B, 1, 1, 64 * 1024, NULL, args, NULL);
    EXPECT_EQ("64 KiB dynamic shared without the attribute is CUDA_ERROR_INVALID_VALUE", rc, CUDA_ERROR_INVALID_VALUE);
    CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
    CK(cuLaunchKernel(f, G, 1, 1, B, 1, 1, 64 * 1024, NULL, args, NULL));
    CK(cuCtxSynchronize());
    /* the same through a library's CUkernel and cuKernelSetAttribute (cudart's cudaFuncSetAttribute) */
    CUlibrary lib;
    CUkernel k;
    CK(cuLibraryLoadFromFile(&lib, ptx_path, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "ex_dynshared"));
    rc = cuLaunchKernel((CUfunction)k, 1, 1, 1, B, 1, 1, 64 * 1024, NULL, args, NULL);
    EXPECT_EQ("CUkernel: 64 KiB dynamic shared without the attribute is CUDA_ERROR_INVALID_VALUE", rc,
              CUDA_ERROR_INVALID_VALUE);
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024, k, dev));
    CK(cuMemsetD32(dy, 0, N));
    CK(cuLaunchKernel((CUfunction)k, G, 1, 1, B, 1, 1, 64 * 1024, NULL, args, NULL));
    CK(cuMemcpyDtoH(y, dy, sizeof y));
    EXPECT_EQ("CUkernel ex_dynshared element 1", y[1], x[B - 2]);
    CK(cuLibraryUnload(lib));
    int shared = -1;
    CK(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn("ex_reduce")));
    EXPECT_EQ("ex_reduce static shared bytes", shared, 32 * 4);
    cuMemFree(dx);
    cuMemFree(dy);
}

static void case_calls(void)
{
    int out[64];
    float fo[32];
    CUdeviceptr d = dalloc(sizeof out), df = dalloc(sizeof fo);
    void *args[] = {&d, &df};
    CK(cuLaunchKernel(fn("ex_calls"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    CK(cuMemcpyDtoH(fo, df, sizeof fo));
    int fib[12] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89};
    for (int t = 0; t < 32; t++) {
        char what[64];
        snprintf(what, sizeof what, "ex_calls fib(%d) lane %d", t % 12, t);
        EXPECT_EQ(what, out[t], fib[t % 12]);
        snprintf(what, sizeof what, "ex_calls struct return .a lane %d", t);
        EXPECT_EQ(what, out[32 + t], 2 * t + 1);
        snprintf(what, sizeof what, "ex_calls struct return .b*2 lane %d", t);
        EXPECT_EQ(what, (int)(fo[t] * 2), t + 2);
    }
    cuMemFree(d);
    cuMemFree(df);
}

static void case_gridsync(void)
{
    enum { G = 8, B = 64, N = G * B };
    int out[N];
    CUdeviceptr buf = dalloc(N * 4), dout = dalloc(N * 4);
    void *args[] = {&buf, &dout};
    CUfunction f = fn("ex_gridsync");
    CK(cuLaunchCooperativeKernel(f, G, 1, 1, B, 1, 1, 0, NULL, args));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int i = 0; i < N; i++) {
        char what[64];
        snprintf(what, sizeof what, "ex_gridsync element %d", i);
        EXPECT_EQ(what, out[i], 3 * ((i + B) % N));
    }
    /* the same through cuLaunchKernelEx with the cooperative attribute */
    CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
    CUlaunchConfig cfg = {.gridDimX = G, .gridDimY = 1, .gridDimZ = 1, .blockDimX = B, .blockDimY = 1,
                          .blockDimZ = 1, .attrs = &at, .numAttrs = 1};
    CK(cuMemsetD32(dout, 0, N));
    CK(cuLaunchKernelEx(&cfg, f, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    EXPECT_EQ("ex_gridsync via cuLaunchKernelEx element 5", out[5], 3 * (5 + B));
    /* more CTAs than could be resident: refused */
    CUresult rc = cuLaunchCooperativeKernel(f, 100000, 1, 1, B, 1, 1, 0, NULL, args);
    EXPECT_EQ("a too-large cooperative launch", rc, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    cuMemFree(buf);
    cuMemFree(dout);
}

static float bf16f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void case_relu(void)
{
    uint16_t a[96], o[32];
    for (int i = 0; i < 96; i++) {   /* small integers: exact in bf16, products and sums too */
        float v = (float)(i % 5) - 2.0f;
        uint32_t u;
        memcpy(&u, &v, 4);
        a[i] = (uint16_t)(u >> 16);
    }
    CUdeviceptr da = dalloc(sizeof a), dout = dalloc(sizeof o);
    CK(cuMemcpyHtoD(da, a, sizeof a));
    void *args[] = {&da, &dout};
    CK(cuLaunchKernel(fn("ex_relu"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(o, dout, sizeof o));
    for (int t = 0; t < 32; t++) {
        float w = bf16f(a[t]) * bf16f(a[t + 32]) + bf16f(a[t + 64]);
        char what[64];
        snprintf(what, sizeof what, "ex_relu lane %d (x4)", t);
        EXPECT_EQ(what, (long long)(bf16f(o[t]) * 4), (long long)((w < 0 ? 0 : w) * 4));
    }
    cuMemFree(da);
    cuMemFree(dout);
}

/* fault cases: the launch (or the synchronise after it) reports the error; printed for the script */
static int case_fault(const char *name)
{
    CUdeviceptr d = dalloc(64 * sizeof(float));
    CK(cuMemsetD32(d, 0, 64));
    CUresult rc;
    if (!strcmp(name, "oob")) {
        int n = 64;
        void *args[] = {&d, &n};
        rc = cuLaunchKernel(fn("ex_oob"), 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    } else if (!strcmp(name, "deadlock")) {
        void *args[] = {&d};
        rc = cuLaunchKernel(fn("ex_deadlock"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
    } else if (!strcmp(name, "assert")) {
        int one = 1;
        CK(cuMemcpyHtoD(d + 5 * sizeof(int), &one, sizeof one));
        void *args[] = {&d};
        rc = cuLaunchKernel(fn("ex_assert"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    } else if (!strcmp(name, "printf")) {
        int base = 100;
        void *args[] = {&base};
        rc = cuLaunchKernel(fn("ex_printf"), 1, 1, 1, 2, 1, 1, 0, NULL, args, NULL);
    } else if (!strcmp(name, "spin")) {
        void *args[] = {&d};
        rc = cuLaunchKernel(fn("ex_spin"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    } else {
        fprintf(stderr, "unknown case %s\n", name);
        return 2;
    }
    const char *en = "?";
    if (rc == CUDA_SUCCESS)
        rc = cuCtxSynchronize();
    cuGetErrorName(rc, &en);
    printf("launch: %s\n", en);
    /* sticky: the next call that synchronises fails the same way */
    CUresult rc2 = cuCtxSynchronize();
    cuGetErrorName(rc2, &en);
    printf("after: %s\n", en);
    int x;
    rc2 = cuMemcpyDtoH(&x, d, sizeof x);
    cuGetErrorName(rc2, &en);
    printf("copy: %s\n", en);
    int n = 64;
    void *args[] = {&d, &n};
    rc2 = cuLaunchKernel(fn("ex_oob"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    cuGetErrorName(rc2, &en);
    printf("next launch: %s\n", en);
    return 0;
}

/* speed: y = a*x + y over N floats, REPEAT launches (HOSTCUDA_EXEC_STATS=1 gives the figure) */
static int case_bench(int n, int rep)
{
    float *x = malloc((size_t)n * 4);
    if (!x)
        return 2;
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 13);
    CUdeviceptr dx = dalloc((size_t)n * 4), dy = dalloc((size_t)n * 4);
    CK(cuMemcpyHtoD(dx, x, (size_t)n * 4));
    CK(cuMemsetD32(dy, 0, (size_t)n));
    float a = 2.0f;
    void *args[] = {&a, &dx, &dy, &n};
    for (int r = 0; r < rep; r++)
        CK(cuLaunchKernel(fn("ex_axpy"), (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(x, dy, (size_t)n * 4));
    for (int i = 0; i < n; i++)
        EXPECT_EQ("ex_axpy", (long long)x[i], 2LL * rep * (i % 13));
    free(x);
    printf("%s: ex_axpy %d floats x %d\n", fails ? "FAIL" : "ok", n, rep);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    start(argc, "test_hc_exec PTXFILE [CASE]");
    ptx_path = argv[1];
    if (argc > 2 && !strcmp(argv[2], "load")) {   /* the load's result [and KERNEL's lookup], for refusals */
        const char *en = "?";
        CUresult r = cuModuleLoad(&mod, argv[1]);
        cuGetErrorName(r, &en);
        printf("load: %s\n", en);
        if (r == CUDA_SUCCESS && argc > 3) {
            CUfunction f;
            cuGetErrorName(cuModuleGetFunction(&f, mod, argv[3]), &en);
            printf("get: %s\n", en);
        }
        return 0;
    }
    CK(cuModuleLoad(&mod, argv[1]));
    if (argc > 3 && !strcmp(argv[2], "run1")) {   /* KERNEL(unsigned *out), one thread; prints out[0] */
        CUdeviceptr d = dalloc(16);
        CK(cuMemsetD32(d, 0, 4));
        void *args[] = {&d};
        const char *en = "?";
        CUresult rc = cuLaunchKernel(fn(argv[3]), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
        if (rc == CUDA_SUCCESS)
            rc = cuCtxSynchronize();
        cuGetErrorName(rc, &en);
        unsigned v = 0;
        if (rc == CUDA_SUCCESS)
            CK(cuMemcpyDtoH(&v, d, 4));
        printf("run1: %s %u\n", en, v);
        return 0;
    }
    if (argc > 2 && !strcmp(argv[2], "bench"))
        return case_bench(argc > 3 ? atoi(argv[3]) : 1 << 22, argc > 4 ? atoi(argv[4]) : 4);
    if (argc > 2)
        return case_fault(argv[2]);
    case_reduce();
    case_diverge();
    case_vote();
    case_atomics();
    case_dynshared();
    case_calls();
    case_gridsync();
    case_relu();
    printf("%s: %d failure(s)\n", fails ? "FAIL" : "ok", fails);
    return fails ? 1 : 0;
}
