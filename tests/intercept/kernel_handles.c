/* kernel_handles.c — the launch hooks accept a CUfunction or a CUkernel: each handle launched
 * through cuLaunchKernel / cuLaunchKernelEx / cuLaunchCooperativeKernel (and _ptsz) runs, and the
 * kernel cache learned its name (cuFuncGetName / cuKernelGetName), its parameter count and its
 * launch count; a CUfunction from cuKernelGetFunction is learned too. Queried through
 * accelshim_kernel_info; run under LD_PRELOAD=libaccelshim.so only.
 */
#include "itest.h"

typedef int (*info_fn)(const void *, const char **, const char **, int *, int *, unsigned long long *);
extern CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                            unsigned, CUstream, void **, void **);

static int fails;
static info_fn info;

static void launch_and_check(itest_fix_t *fx, const char *what, CUfunction f, int how, int value)
{
    int n = ITEST_N, v = value;
    void *params[] = {&fx->dbuf, &v, &n};
    CUresult r;
    if (how == 0) {
        r = cuLaunchKernel(f, 1, 1, 1, ITEST_N, 1, 1, 0, fx->stream, params, NULL);
    } else if (how == 1) {
        r = cuLaunchKernel_ptsz(f, 1, 1, 1, ITEST_N, 1, 1, 0, fx->stream, params, NULL);
    } else if (how == 2) {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = ITEST_N;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = fx->stream;
        r = cuLaunchKernelEx(&cfg, f, params, NULL);
    } else {
        r = cuLaunchCooperativeKernel(f, 1, 1, 1, ITEST_N, 1, 1, 0, fx->stream, params);
    }
    fx->stream_sync(fx->stream);
    int host[ITEST_N];
    ITEST_CU(cuMemcpyDtoH_v2(host, fx->dbuf, sizeof host));
    if (r != CUDA_SUCCESS || host[0] != value || host[ITEST_N - 1] != value) {
        printf("FAIL %s: launch -> %d, data %d..%d, want %d\n", what, (int)r, host[0], host[ITEST_N - 1], value);
        fails++;
    }
}

static void expect_info(const char *what, const void *h, int is_kernel, unsigned long long launches)
{
    const char *name = NULL, *dem = NULL;
    int np = -2, isk = -1;
    unsigned long long l = 0;
    if (info(h, &name, &dem, &np, &isk, &l) != 0) {
        printf("FAIL %s: the kernel cache does not know handle %p\n", what, h);
        fails++;
        return;
    }
    int ok = strcmp(name, "ash_itest_fill") == 0 && np == 3 && isk == is_kernel && l == launches;
    printf("%s %s: name %s, %d params, %s, %llu launches (want ash_itest_fill, 3, %s, %llu)\n", ok ? "ok" : "FAIL",
           what, name, np, isk ? "CUkernel" : "CUfunction", l, is_kernel ? "CUkernel" : "CUfunction", launches);
    fails += !ok;
}

int main(void)
{
    info = (info_fn)dlsym(RTLD_DEFAULT, "accelshim_kernel_info");
    if (info == NULL) {
        fprintf(stderr, "SKIP: not running under libaccelshim.so\n");
        return 77;
    }
    itest_fix_t fx;
    if (itest_setup(&fx) == 77)
        return 77;
    for (int how = 0; how < 4; how++)
        launch_and_check(&fx, "CUfunction", fx.fn, how, 10 + how);
    expect_info("CUfunction (cuModuleGetFunction)", fx.fn, 0, 4);
    if (fx.library == NULL) {
        printf("note: the driver has no cuLibraryLoadData: CUkernel launches not exercised\n");
    } else {
        CUkernel k;
        ITEST_CU(cuLibraryGetKernel(&k, fx.library, "ash_itest_fill"));
        for (int how = 0; how < 4; how++)
            launch_and_check(&fx, "CUkernel", (CUfunction)k, how, 20 + how);
        expect_info("CUkernel (cuLibraryGetKernel)", k, 1, 4);
        CUfunction kf;
        ITEST_CU(cuKernelGetFunction(&kf, k));
        launch_and_check(&fx, "CUfunction of a CUkernel", kf, 0, 30);
        expect_info("CUfunction (cuKernelGetFunction)", kf, 0, 1);
    }
    printf("%s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
