/* route_name.c — routing of cuGetProcAddress answers that are NOT exported symbols (hostcuda with
 * HOSTCUDA_UNEXPORTED_PROCS=1 hands out hidden thunks): run under LD_PRELOAD=libaccelshim.so.
 * For each request (symbol, cudaVersion, flags) below it checks what the shim handed out against
 * what is expected: "hook NAME" (the shim's hook of exactly that exported variant, by dladdr), or
 * "pass" (the driver's own pointer: a name we do not hook, or a version whose PFN type no hook
 * implements); calling the pointer must reach the expected hostcuda symbol (call counters).
 * Then it launches ash_itest_fill through the resolved legacy and per-thread cuLaunchKernel and
 * prints how many launches the shim's kernel cache saw (accelshim_kernel_info): 2 when the hooks
 * were reached, 0 when they were bypassed. Usage: route_name --expect-hooks | --expect-bypass
 * (bypass: the control with ACCELSHIM_ROUTE_BY_NAME=0, where every hooked name passes through).
 */
#include "itest.h"

#include <libgen.h>

typedef int (*info_fn)(const void *, const char **, const char **, int *, int *, unsigned long long *);

static const struct {
    const char *sym;
    int ver;
    unsigned long long flags;
    const char *hook;  /* the exported variant the driver answers with, and our hook of it; NULL: none */
    const char *reach; /* the hostcuda symbol the call must reach (counted) */
} cases[] = {
    {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2", "cuMemAlloc_v2"},
    {"cuMemAlloc", 13000, 0, "cuMemAlloc_v2", "cuMemAlloc_v2"},
    {"cuMemAlloc", 2000, 0, NULL, "cuMemAlloc"},               /* PFN_cuMemAlloc_v2000: not ours */
    {"cuCtxCreate", 2000, 0, NULL, NULL},                      /* PFN_cuCtxCreate_v2000: not ours */
    {"cuCtxCreate", 3020, 0, "cuCtxCreate_v2", NULL},
    {"cuCtxCreate", 11040, 0, "cuCtxCreate_v3", NULL},
    {"cuCtxCreate", 13000, 0, "cuCtxCreate_v4", NULL},
    {"cuLaunchKernel", 4000, 0, "cuLaunchKernel", NULL},
    {"cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel", NULL},
    {"cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz", NULL},
    {"cuLaunchKernel", 6000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel", NULL},
    {"cuMemcpyDtoH", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyDtoH_v2_ptds",
     "cuMemcpyDtoH_v2_ptds"},
    {"cuMemcpyDtoH", 13000, 0, "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2"},
    {"cuMemFreeAsync", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemFreeAsync_ptsz", NULL},
    {"cuModuleGetFunction", 13000, 0, "cuModuleGetFunction", NULL},
    {"cuCtxGetDevice", 13000, 0, NULL, NULL}, /* not hooked at all */
    {"cuStreamSynchronize", 13000, 0, NULL, NULL},
};
#define NCASES (sizeof cases / sizeof cases[0])

static int fails;

static const char *owner_of(const void *p, const char **sym, int *exact)
{
    static char buf[256];
    Dl_info info;
    *sym = "?";
    *exact = 0;
    if (p == NULL || dladdr(p, &info) == 0)
        return "-";
    if (info.dli_sname != NULL) {
        *sym = info.dli_sname;
        *exact = info.dli_saddr == p;
    }
    snprintf(buf, sizeof buf, "%s", info.dli_fname ? info.dli_fname : "?");
    return basename(buf);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "--expect-hooks") != 0 && strcmp(argv[1], "--expect-bypass") != 0)) {
        fprintf(stderr, "usage: route_name --expect-hooks|--expect-bypass\n");
        return 2;
    }
    int want_hooks = strcmp(argv[1], "--expect-hooks") == 0;
    const char *ue = getenv("HOSTCUDA_UNEXPORTED_PROCS");
    int unexported = ue != NULL && strcmp(ue, "1") == 0; /* passed-through pointers are thunks */
    info_fn info = (info_fn)dlsym(RTLD_DEFAULT, "accelshim_kernel_info");
    if (info == NULL) {
        fprintf(stderr, "SKIP: not running under libaccelshim.so\n");
        return 77;
    }
    itest_fix_t fx;
    if (itest_setup(&fx) == 77) {
        fprintf(stderr, "SKIP: libcuda.so.1 is not hostcuda\n");
        return 77;
    }
    PFN_cuGetProcAddress_v12000 gpa2 = (PFN_cuGetProcAddress_v12000)itest_sym(&fx, "cuGetProcAddress_v2");
    for (size_t i = 0; i < NCASES; i++) {
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        CUresult r = gpa2(cases[i].sym, &p, cases[i].ver, cases[i].flags, &st);
        const char *sym;
        int exact;
        const char *owner = owner_of(p, &sym, &exact);
        int is_hook = strcmp(owner, "libaccelshim.so") == 0 && exact;
        const char *want = want_hooks && cases[i].hook ? cases[i].hook : NULL;
        int ok = r == CUDA_SUCCESS && p != NULL &&
                 (want ? is_hook && strcmp(sym, want) == 0 : strcmp(owner, "libcuda.so.1") == 0 && exact == !unexported);
        if (ok && cases[i].reach != NULL) { /* the pointer reaches exactly that hostcuda symbol */
            unsigned long long before = fx.count(cases[i].reach);
            int cr;
            if (strcmp(cases[i].reach, "cuMemAlloc") == 0) { /* the 32-bit v1 entry point */
                unsigned int d32 = 0;
                (void)((CUresult(CUDAAPI *)(unsigned int *, unsigned int))p)(&d32, 256); /* 801 on hostcuda */
                cr = CUDA_SUCCESS;
            } else {
                cr = itest_call(&fx, cases[i].reach, p);
            }
            if (cr != CUDA_SUCCESS || fx.count(cases[i].reach) != before + 1) {
                printf("FAIL %s v%d f%llu: calling it -> %d, reached %s %llu times (want 1)\n", cases[i].sym,
                       cases[i].ver, cases[i].flags, cr, cases[i].reach, fx.count(cases[i].reach) - before);
                fails++;
            }
        }
        printf("%s %s v%d f%llu -> res=%d %s%s (%s) want %s\n", ok ? "ok" : "FAIL", cases[i].sym, cases[i].ver,
               cases[i].flags, (int)r, exact ? "" : "~", sym, owner, want ? want : "the driver's own pointer");
        fails += !ok;
    }
    /* launches through the resolved pointers: does the shim see them? */
    void *legacy = NULL, *ptsz = NULL;
    CUdriverProcAddressQueryResult st;
    ITEST_CU(gpa2("cuLaunchKernel", &legacy, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st));
    ITEST_CU(gpa2("cuLaunchKernel", &ptsz, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    unsigned long long l0 = 0;
    const char *name, *dem;
    int np, isk;
    if (info(fx.fn, &name, &dem, &np, &isk, &l0) != 0)
        l0 = 0;
    int n = ITEST_N, v = 5;
    void *params[] = {&fx.dbuf, &v, &n};
    ITEST_CU(((PFN_cuLaunchKernel_v4000)legacy)(fx.fn, 1, 1, 1, ITEST_N, 1, 1, 0, fx.stream, params, NULL));
    ITEST_CU(((PFN_cuLaunchKernel_v7000_ptsz)ptsz)(fx.fn, 1, 1, 1, ITEST_N, 1, 1, 0, fx.stream, params, NULL));
    ITEST_CU(fx.stream_sync(fx.stream));
    unsigned long long l1 = 0;
    if (info(fx.fn, &name, &dem, &np, &isk, &l1) != 0)
        l1 = 0;
    unsigned long long want = want_hooks ? 2 : 0;
    printf("%s launches seen by the shim: %llu (want %llu)\n", l1 - l0 == want ? "ok" : "FAIL", l1 - l0, want);
    fails += l1 - l0 != want;
    printf("route_name done: %d failures\n", fails);
    return fails ? 1 : 0;
}
