/* test_hc_coop — cooperative launches, device malloc/free and the context limits on hostcuda's
 * interpreter (kernels: tests/hostcuda/coop_kernels.cu, PTX made by nvcc).
 * Property: a grid-wide sync (cooperative groups) across many CTAs is honoured on any number of
 * host threads (a chain of values passed CTA to CTA round after round is exact; the same kernel
 * with CTA barriers only gets it wrong: the control); a cooperative grid one CTA larger than
 * cuOccupancyMaxActiveBlocksPerMultiprocessor x SMs is refused (COOPERATIVE_LAUNCH_TOO_LARGE) and
 * the largest one runs; device malloc hands out disjoint 16-byte-aligned blocks of the heap
 * CU_LIMIT_MALLOC_HEAP_SIZE sets, that outlive the launch, answers NULL once the heap is exhausted
 * and reuses freed blocks; new/delete work; virtual functions (two targets in one warp) and
 * function pointers call the right function; every CUlimit round-trips with CUDA's rules.
 * Usage: test_hc_coop PTXFILE [CASE [ARG]]   (no CASE: limits, malloc, grid, gridmax, virtual).
 * The fault cases (noncoop, freebad, freetwice, badcall, deep, fifo) print `NAME: CUDA_ERROR_...` lines that
 * test_hc_coop.sh checks along with their hostcuda: line. Exit 0 pass, 1 fail. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_hc_check.h"

static const char *rname(CUresult rc)
{
    const char *n = "?";
    cuGetErrorName(rc, &n);
    return n;
}

/* ---------------------------------------------------------------- grid-wide sync */
/* co_shift over G x B threads for `rounds`; returns how many elements differ from CUDA's result */
static int shift(const char *kernel, unsigned G, unsigned B, int rounds, int how)
{
    unsigned n = G * B;
    int *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (unsigned i = 0; i < n; i++)
        x[i] = (int)(i * 7u % 1009u);
    CUdeviceptr d = dalloc(n * sizeof *x);
    CK(cuMemcpyHtoD(d, x, n * sizeof *x));
    void *args[] = {&d, &rounds};
    CUfunction f = fn(kernel);
    if (how == 0) {
        CK(cuLaunchCooperativeKernel(f, G, 1, 1, B, 1, 1, 0, NULL, args));
    } else if (how == 2) {
        CK(cuLaunchKernel(f, G, 1, 1, B, 1, 1, 0, NULL, args, NULL));
    } else {
        CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
        CUlaunchConfig cfg = {.gridDimX = G, .gridDimY = 1, .gridDimZ = 1, .blockDimX = B, .blockDimY = 1,
                              .blockDimZ = 1, .attrs = &at, .numAttrs = 1};
        CK(cuLaunchKernelEx(&cfg, f, args, NULL));
    }
    CK(cuMemcpyDtoH(y, d, n * sizeof *y));
    int bad = 0;
    for (unsigned i = 0; i < n; i++) {
        int want = x[(i + (unsigned)rounds * B) % n] + rounds;
        if (y[i] != want && bad++ < 3 && strcmp(kernel, "co_shift") == 0)
            fprintf(stderr, "FAIL %s element %u: got %d, want %d\n", kernel, i, y[i], want);
    }
    cuMemFree(d);
    free(x);
    free(y);
    return bad;
}

static void case_grid(void)
{
    EXPECT_EQ("co_shift 48x64, 6 rounds (cuLaunchCooperativeKernel): elements wrong", shift("co_shift", 48, 64, 6, 0),
              0);
    EXPECT_EQ("co_shift 16x256, 3 rounds (cuLaunchKernelEx, cooperative attribute): elements wrong",
              shift("co_shift", 16, 256, 3, 1), 0);
    /* control: without a grid barrier (CTA barriers, an ordinary launch) the same check finds
     * wrong elements */
    int bad = shift("co_shift_cta", 48, 64, 6, 2);
    printf("control: co_shift_cta (CTA barriers only, cuLaunchKernel) has %d wrong elements\n", bad);
    if (bad == 0) {
        fails++;
        fprintf(stderr, "FAIL control: co_shift_cta gave the grid-synchronised result; the check cannot tell\n");
    }
}

/* the largest cooperative grid the device holds runs; one CTA more is refused */
static void case_gridmax(void)
{
    CUfunction f = fn("co_shift");
    int per_sm = 0, sms = 0, B = 1024;
    CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, B, 0));
    CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    int coop = 0;
    CK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 0));
    EXPECT_EQ("CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH", coop, 1);
    unsigned G = (unsigned)(per_sm * sms);
    printf("gridmax: %d blocks of %d threads per SM x %d SMs = %u\n", per_sm, B, sms, G);
    EXPECT_EQ("co_shift at the largest cooperative grid: elements wrong", shift("co_shift", G, (unsigned)B, 1, 0), 0);
    CUdeviceptr d = dalloc(((size_t)G + 1) * (size_t)B * 4);
    int rounds = 1;
    void *args[] = {&d, &rounds};
    CUresult rc = cuLaunchCooperativeKernel(f, G + 1, 1, 1, (unsigned)B, 1, 1, 0, NULL, args);
    if (rc != CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
        fails++;
        fprintf(stderr, "FAIL a cooperative grid of %u: got %s, want CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\n", G + 1,
                rname(rc));
    }
    CK(cuCtxSynchronize());
    cuMemFree(d);
}

/* a grid sync in a kernel launched the ordinary way: reported, not hung */
static void case_noncoop(void)
{
    CUdeviceptr d = dalloc(8 * 64 * 4);
    int rounds = 1;
    void *args[] = {&d, &rounds};
    printf("launch: %s\n", rname(cuLaunchKernel(fn("co_shift"), 8, 1, 1, 64, 1, 1, 0, NULL, args, NULL)));
    printf("sync: %s\n", rname(cuCtxSynchronize()));
}

/* ---------------------------------------------------------------- device malloc */
static int cmp_u64(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* co_malloc with 64 threads of `bytes` each: how many got a block; checks the blocks */
static int malloc_round(unsigned bytes, CUdeviceptr dp, CUdeviceptr dbad)
{
    enum { N = 64 };
    unsigned long long p[N], s[N];
    int bad[N], got = 0;
    void *a1[] = {&dp, &bytes};
    CK(cuLaunchKernel(fn("co_malloc"), 2, 1, 1, 32, 1, 1, 0, NULL, a1, NULL));
    CK(cuMemcpyDtoH(p, dp, sizeof p));
    for (int i = 0; i < N; i++)
        if (p[i])
            s[got++] = p[i];
    qsort(s, (size_t)got, sizeof *s, cmp_u64);
    for (int i = 0; i < got; i++) {
        EXPECT_EQ("a malloc block's alignment (address % 16)", s[i] % 16, 0);
        if (i && s[i] < s[i - 1] + bytes) {
            fails++;
            fprintf(stderr, "FAIL malloc blocks overlap: 0x%llx and 0x%llx, %u bytes each\n", s[i - 1], s[i], bytes);
        }
    }
    /* a later launch finds the data (the blocks outlive their launch) and frees them */
    void *a2[] = {&dp, &bytes, &dbad};
    CK(cuLaunchKernel(fn("co_check_free"), 2, 1, 1, 32, 1, 1, 0, NULL, a2, NULL));
    CK(cuMemcpyDtoH(bad, dbad, sizeof bad));
    for (int i = 0; i < N; i++) {
        char what[80];
        snprintf(what, sizeof what, "thread %d: words of its malloc block that changed before the next launch", i);
        EXPECT_EQ(what, bad[i], 0);
    }
    return got;
}

static void case_malloc(void)
{
    size_t v = 0;
    CK(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    EXPECT_EQ("default CU_LIMIT_MALLOC_HEAP_SIZE", v, 8388608);
    CK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 65536));
    CK(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    EXPECT_EQ("CU_LIMIT_MALLOC_HEAP_SIZE after setting 65536", v, 65536);
    CUdeviceptr dp = dalloc(64 * 8), dbad = dalloc(64 * 4);
    /* 64 threads ask 2048 bytes each of a 64 KiB heap: 32 get a block, the others NULL */
    EXPECT_EQ("threads whose 2048-byte malloc succeeded in a 65536-byte heap", malloc_round(2048, dp, dbad), 32);
    /* all freed: the heap is whole again */
    EXPECT_EQ("the same after every block was freed", malloc_round(2048, dp, dbad), 32);
    EXPECT_EQ("threads whose 512-byte malloc succeeded", malloc_round(512, dp, dbad), 64);
    /* the heap size is fixed once a kernel that uses malloc has launched */
    CUresult rc = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 1 << 20);
    EXPECT_EQ("cuCtxSetLimit(MALLOC_HEAP_SIZE) after a malloc launch (CUDA_ERROR_INVALID_VALUE)", rc,
              CUDA_ERROR_INVALID_VALUE);
    int out = 0, n = 100;
    void *a3[] = {&dp, &n};
    CK(cuLaunchKernel(fn("co_new"), 1, 1, 1, 1, 1, 1, 0, NULL, a3, NULL));
    CK(cuMemcpyDtoH(&out, dp, sizeof out));
    EXPECT_EQ("co_new: sum of k*k for k < 100 through new[]/delete[]", out, 328350);
    cuMemFree(dp);
    cuMemFree(dbad);
}

static void case_freebad(const char *which)
{
    CUdeviceptr d = dalloc(256);
    if (!strcmp(which, "freetwice")) {
        void *args[] = {&d};
        printf("launch: %s\n", rname(cuLaunchKernel(fn("co_free_twice"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)));
    } else {
        unsigned long long a = d + 16;   /* device memory, but not from device malloc */
        void *args[] = {&a};
        printf("launch: %s\n", rname(cuLaunchKernel(fn("co_free_bad"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)));
    }
    printf("sync: %s\n", rname(cuCtxSynchronize()));
}

/* ---------------------------------------------------------------- indirect calls */
/* virtual functions on device-new'd objects (two targets in one warp) and function pointers */
static void case_virtual(void)
{
    int out[64];
    CUdeviceptr d = dalloc(sizeof out);
    void *a1[] = {&d};
    CK(cuLaunchKernel(fn("co_virtual"), 1, 1, 1, 64, 1, 1, 0, NULL, a1, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    char what[96];
    for (int t = 0; t < 64; t++) {
        snprintf(what, sizeof what, "co_virtual thread %d (%s::area)", t, t & 1 ? "Triple" : "Square");
        EXPECT_EQ(what, out[t], t & 1 ? 3 * (t + 1) + t : (t + 1) * (t + 1));
    }
    unsigned long long bad = 0;
    void *a2[] = {&d, &bad};
    CK(cuLaunchKernel(fn("co_fnptr"), 1, 1, 1, 64, 1, 1, 0, NULL, a2, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int t = 0; t < 64; t++) {
        snprintf(what, sizeof what, "co_fnptr thread %d (%s)", t, t % 3 == 0 ? "co_negate" : "co_twice");
        EXPECT_EQ(what, out[t], t % 3 == 0 ? -(t + 10) : 2 * (t + 10));
    }
    cuMemFree(d);
}

/* a call through a pointer that is no function's: reported, the launch fails */
static void case_badcall(void)
{
    CUdeviceptr d = dalloc(64 * 4);
    unsigned long long bad = d;   /* device memory, not code */
    void *args[] = {&d, &bad};
    printf("launch: %s\n", rname(cuLaunchKernel(fn("co_fnptr"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL)));
    printf("sync: %s\n", rname(cuCtxSynchronize()));
}

/* ---------------------------------------------------------------- limits */
static void case_limits(void)
{
    static const struct {
        CUlimit l;
        const char *name;
        size_t def;
    } defs[] = {
        {CU_LIMIT_STACK_SIZE, "STACK_SIZE", 1024},
        {CU_LIMIT_PRINTF_FIFO_SIZE, "PRINTF_FIFO_SIZE", 1048576},
        {CU_LIMIT_MALLOC_HEAP_SIZE, "MALLOC_HEAP_SIZE", 8388608},
        {CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, "DEV_RUNTIME_SYNC_DEPTH", 2},
        {CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, "DEV_RUNTIME_PENDING_LAUNCH_COUNT", 2048},
        {CU_LIMIT_MAX_L2_FETCH_GRANULARITY, "MAX_L2_FETCH_GRANULARITY", 64},
        {CU_LIMIT_PERSISTING_L2_CACHE_SIZE, "PERSISTING_L2_CACHE_SIZE", 0},
    };
    char what[128];
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        size_t v = 12345;
        CK(cuCtxGetLimit(&v, defs[i].l));
        snprintf(what, sizeof what, "default CU_LIMIT_%s", defs[i].name);
        EXPECT_EQ(what, v, defs[i].def);
        size_t want = defs[i].l == CU_LIMIT_MAX_L2_FETCH_GRANULARITY ? 128
                    : defs[i].l == CU_LIMIT_PERSISTING_L2_CACHE_SIZE ? 4 << 20 : defs[i].def * 2;
        CK(cuCtxSetLimit(defs[i].l, want));
        CK(cuCtxGetLimit(&v, defs[i].l));
        snprintf(what, sizeof what, "CU_LIMIT_%s after setting %zu", defs[i].name, want);
        EXPECT_EQ(what, v, want);
        CK(cuCtxSetLimit(defs[i].l, defs[i].def));
    }
    size_t v;
    CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1000));
    CK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    EXPECT_EQ("CU_LIMIT_STACK_SIZE after setting 1000 (rounded up to 16)", v, 1008);
    CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024));
    int l2max = 0;
    CK(cuDeviceGetAttribute(&l2max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0));
    EXPECT_EQ("PERSISTING_L2_CACHE_SIZE = the device's maximum", cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
                                                                                (size_t)l2max), CUDA_SUCCESS);
    EXPECT_EQ("PERSISTING_L2_CACHE_SIZE one byte above the device's maximum (INVALID_VALUE)",
              cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, (size_t)l2max + 1), CUDA_ERROR_INVALID_VALUE);
    CK(cuCtxGetLimit(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    EXPECT_EQ("PERSISTING_L2_CACHE_SIZE kept after the refused value", v, l2max);
    EXPECT_EQ("MAX_L2_FETCH_GRANULARITY 129 (INVALID_VALUE)", cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 129),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ("SHMEM_SIZE is query-only (INVALID_VALUE)", cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1024),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ("CIG_ENABLED is query-only (INVALID_VALUE)", cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ("STACK_SIZE of 1 MiB (beyond hostcuda's 256 KiB: INVALID_VALUE)",
              cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1 << 20), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ("PRINTF_FIFO_SIZE 0 (INVALID_VALUE)", cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 0),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ("an unknown limit (UNSUPPORTED_LIMIT)", cuCtxSetLimit(CU_LIMIT_MAX, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
    EXPECT_EQ("get of an unknown limit (UNSUPPORTED_LIMIT)", cuCtxGetLimit(&v, (CUlimit)99),
              CUDA_ERROR_UNSUPPORTED_LIMIT);
    EXPECT_EQ("get into NULL (INVALID_VALUE)", cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
}

/* co_deep(depth) with CU_LIMIT_STACK_SIZE = stack (0: the default) */
static void case_deep(int depth, size_t stack)
{
    if (stack)
        CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, stack));
    CUdeviceptr d = dalloc((32 + 32 * 8) * 4);
    void *args[] = {&d, &depth};
    printf("launch: %s\n", rname(cuLaunchKernel(fn("co_deep"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL)));
    CUresult rc = cuCtxSynchronize();
    printf("sync: %s\n", rname(rc));
    if (rc == CUDA_SUCCESS) {
        unsigned out[32], want = 0;
        CK(cuMemcpyDtoH(out, d, sizeof out));
        for (int k = 1; k <= depth; k++)   /* scratch[k & 7] holds, on the way back, the last (deepest) write */
            want = want * 3u + (unsigned)((k - 1) % 8 + 1);
        printf("result: %u (want %u)\n", out[31], want);
    }
}

/* co_print(lines) with CU_LIMIT_PRINTF_FIFO_SIZE = fifo (0: the default); then the FIFO is fixed */
static void case_fifo(int lines, size_t fifo)
{
    if (fifo)
        CK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, fifo));
    void *args[] = {&lines};
    CK(cuLaunchKernel(fn("co_print"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    fflush(stdout);
    printf("\nset after a printf launch: %s\n", rname(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 4096)));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    start(argc, "test_hc_coop PTXFILE [CASE [ARG]]");
    CK(cuModuleLoad(&mod, argv[1]));
    const char *c = argc > 2 ? argv[2] : "";
    const char *arg = argc > 3 ? argv[3] : "0";
    size_t env_stack = getenv("TEST_HC_COOP_STACK") ? strtoull(getenv("TEST_HC_COOP_STACK"), NULL, 0) : 0;
    size_t env_fifo = getenv("TEST_HC_COOP_FIFO") ? strtoull(getenv("TEST_HC_COOP_FIFO"), NULL, 0) : 0;
    if (!*c) {
        case_limits();
        case_malloc();
        case_grid();
        case_gridmax();
        case_virtual();
    } else if (!strcmp(c, "virtual")) {
        case_virtual();
    } else if (!strcmp(c, "badcall")) {
        case_badcall();
    } else if (!strcmp(c, "limits")) {
        case_limits();
    } else if (!strcmp(c, "malloc")) {
        case_malloc();
    } else if (!strcmp(c, "grid")) {
        case_grid();
    } else if (!strcmp(c, "gridmax")) {
        case_gridmax();
    } else if (!strcmp(c, "noncoop")) {
        case_noncoop();
    } else if (!strcmp(c, "freebad") || !strcmp(c, "freetwice")) {
        case_freebad(c);
    } else if (!strcmp(c, "deep")) {
        case_deep(atoi(arg), env_stack);
    } else if (!strcmp(c, "fifo")) {
        case_fifo(atoi(arg), env_fifo);
    } else {
        fprintf(stderr, "test_hc_coop: unknown case '%s'\n", c);
        return 2;
    }
    if (fails)
        fprintf(stderr, "%d check(s) failed\n", fails);
    else if (!*c)
        printf("test_hc_coop: all checks passed\n");
    return fails ? 1 : 0;
}
