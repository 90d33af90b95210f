/* routing_probe.c — prints, for every hooked symbol and a few others, what each resolver door
 * hands out and what calling it reaches; test_routing.sh runs it without and with the shim and
 * compares. Doors: dlsym(dlopen("libcuda.so.1")), dlsym(RTLD_DEFAULT), cuGetProcAddress_v2 and the
 * legacy 4-argument cuGetProcAddress, each with cudaVersion 12000 and 13000 and flags DEFAULT,
 * LEGACY_STREAM, PER_THREAD_DEFAULT_STREAM (queried by base name, as cudart does).
 * One line per (door, query): the CUresult, symbolStatus, the exact symbol dladdr names, the call's
 * CUresult, how much hostcuda_call_count(symbol) and (its twin's) count grew; plus the owning
 * object, which the probe checks itself: with --expect-shim a hooked symbol must be owned by
 * libaccelshim.so, anything else by libcuda.so.1; with --expect-driver everything by libcuda.so.1.
 * Also checked here: the legacy-stream and per-thread lookups of a _ptsz-capable base name give two
 * different pointers, and calling a hook reaches exactly its own exported symbol (delta 1, twin 0);
 * a hooked symbol the driver lacks is found in the global scope only with the shim, and its hook
 * answers CUDA_ERROR_NOT_SUPPORTED.
 */
#include "itest.h"

#include <libgen.h>

static const char *const hooked[] = {
#define ASH_HOOK(kind, name, pfn, params, args) #name,
#include "hooks.def"
#undef ASH_HOOK
};
#define NHOOKED (sizeof hooked / sizeof hooked[0])

/* not hooked (driver's own pointer expected), absent everywhere, and absent from hostcuda */
static const char *const others[] = {"cuCtxGetDevice", "cuNoSuchThing", "cuGraphCreate", "cuGetExportTable",
                                     "cuInit", "cuStreamSynchronize"};

static int expect_shim;
static int failures;
static itest_fix_t fx;

static int is_hooked(const char *s)
{
    for (size_t i = 0; i < NHOOKED; i++)
        if (strcmp(hooked[i], s) == 0)
            return 1;
    return 0;
}

/* cuLaunchKernel_ptsz -> cuLaunchKernel, cuMemcpyHtoD_v2_ptds -> cuMemcpyHtoD, cuCtxCreate_v4 -> cuCtxCreate */
static void base_name(const char *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s", s);
    size_t n = strlen(out);
    if (n > 5 && (strcmp(out + n - 5, "_ptsz") == 0 || strcmp(out + n - 5, "_ptds") == 0))
        out[n -= 5] = '\0';
    if (n > 3 && out[n - 3] == '_' && out[n - 2] == 'v' && out[n - 1] >= '2' && out[n - 1] <= '9')
        out[n - 3] = '\0';
}

static void report(const char *door, const char *query, int ver, int flags, int res, int status, void *p)
{
    Dl_info info;
    const char *sym = "-", *owner = "-";
    char ownbuf[256];
    if (p != NULL && dladdr(p, &info) != 0) {
        sym = info.dli_sname ? info.dli_sname : "?";
        snprintf(ownbuf, sizeof ownbuf, "%s", info.dli_fname ? info.dli_fname : "?");
        owner = basename(ownbuf);
    }
    int callres = -2;
    long long delta = -1, tdelta = -1;
    if (p != NULL && is_hooked(sym) && strcmp(sym, "cuGetProcAddress") != 0 && strcmp(sym, "cuGetProcAddress_v2") != 0) {
        char twin[128];
        itest_twin(&fx, sym, twin, sizeof twin);
        unsigned long long b = fx.count(sym), tb = twin[0] ? fx.count(twin) : 0;
        callres = itest_call(&fx, sym, p);
        delta = (long long)(fx.count(sym) - b);
        tdelta = twin[0] ? (long long)(fx.count(twin) - tb) : 0;
        if (delta != 1 || tdelta != 0) {
            printf("FAIL %s(%s): calling %s reached it %lld times and its twin %s %lld times (want 1 and 0)\n",
                   door, query, sym, delta, twin[0] ? twin : "(none)", tdelta);
            failures++;
        }
    }
    const char *want = (expect_shim && p != NULL && is_hooked(sym)) ? "libaccelshim.so" : "libcuda.so.1";
    if (p != NULL && strcmp(owner, want) != 0) {
        printf("FAIL %s(%s v%d f%d): %s is owned by %s, want %s\n", door, query, ver, flags, sym, owner, want);
        failures++;
    }
    printf("%s %s %d %d -> res=%d status=%d sym=%s call=%d delta=%lld twin=%lld | owner=%s\n", door, query, ver, flags,
           res, status, sym, callres, delta, tdelta, owner);
}

static void probe(const char *name, PFN_cuGetProcAddress_v12000 gpa2, PFN_cuGetProcAddress_v11030 gpa1)
{
    report("dlsym-handle", name, 0, 0, 0, 0, dlsym(fx.lib, name));
    if (is_hooked(name) && dlsym(fx.lib, name) == NULL) {
        /* hooked, but this driver lacks it (hostcuda: the legacy graph calls): the global scope
         * finds the shim's export, which must answer CUDA_ERROR_NOT_SUPPORTED; without the shim,
         * nothing. One line, the same in both runs. */
        void *d = dlsym(RTLD_DEFAULT, name);
        int r = d != NULL ? itest_call(&fx, name, d) : -2;
        if (expect_shim ? r != CUDA_ERROR_NOT_SUPPORTED : d != NULL) {
            printf("FAIL dlsym-default(%s): absent from the driver, got %p (call %d); want %s\n", name, d, r,
                   expect_shim ? "the shim's hook answering CUDA_ERROR_NOT_SUPPORTED" : "NULL");
            failures++;
        }
        printf("dlsym-default %s 0 0 -> absent from the driver\n", name);
    } else {
        report("dlsym-default", name, 0, 0, 0, 0, dlsym(RTLD_DEFAULT, name));
    }
    char base[128];
    base_name(name, base, sizeof base);
    static const int versions[] = {12000, 13000};
    static const int flags[] = {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
    for (int v = 0; v < 2; v++) {
        for (int fl = 0; fl < 3; fl++) {
            void *p = (void *)0x1; /* must be overwritten or kept: print what the driver leaves */
            CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
            CUresult r = gpa2(base, &p, versions[v], (cuuint64_t)flags[fl], &st);
            report("gpa_v2", base, versions[v], flags[fl], r, (int)st, p == (void *)0x1 ? NULL : p);
            p = (void *)0x1;
            r = gpa1(base, &p, versions[v], (cuuint64_t)flags[fl]);
            report("gpa_legacy", base, versions[v], flags[fl], r, -1, p == (void *)0x1 ? NULL : p);
        }
    }
    /* legacy-stream and per-thread lookups give two different hooks where the driver has both */
    void *legacy = NULL, *ptds = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa2(base, &legacy, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) == CUDA_SUCCESS &&
        gpa2(base, &ptds, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) == CUDA_SUCCESS) {
        char twin[128];
        if (itest_twin(&fx, name, twin, sizeof twin)[0] != '\0' && legacy == ptds) {
            printf("FAIL %s: the legacy and per-thread lookups gave the same pointer %p\n", base, legacy);
            failures++;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "--expect-shim") != 0 && strcmp(argv[1], "--expect-driver") != 0)) {
        fprintf(stderr, "usage: routing_probe --expect-shim|--expect-driver\n");
        return 2;
    }
    expect_shim = strcmp(argv[1], "--expect-shim") == 0;
    if (itest_setup(&fx) == 77) {
        fprintf(stderr, "SKIP: libcuda.so.1 is not hostcuda (no hostcuda_call_count)\n");
        return 77;
    }
    PFN_cuGetProcAddress_v12000 gpa2 = (PFN_cuGetProcAddress_v12000)itest_sym(&fx, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v11030 gpa1 = (PFN_cuGetProcAddress_v11030)itest_sym(&fx, "cuGetProcAddress");
    for (size_t i = 0; i < NHOOKED; i++)
        probe(hooked[i], gpa2, gpa1);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        probe(others[i], gpa2, gpa1);
    printf("probe done: %d failures\n", failures);
    return failures ? 1 : 0;
}
