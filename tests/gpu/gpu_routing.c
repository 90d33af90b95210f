/* gpu_routing.c — the routing probe for a REAL driver (no call counters there), run by
 * scripts/gpu-check.sh without and with LD_PRELOAD=libaccelshim.so and compared line by line.
 * For every hooked symbol (intercept/hooks.def) and a few unhooked names, through every door —
 * direct link (weak references), dlsym on the driver handle, dlsym(RTLD_DEFAULT), cuGetProcAddress_v2
 * and the legacy 4-argument cuGetProcAddress at cudaVersion 12000, 13000 and the driver's own
 * version, with flags DEFAULT / LEGACY_STREAM / PER_THREAD_DEFAULT_STREAM (base names, as cudart
 * asks) — one line: CUresult, symbolStatus, the symbol dladdr names EXACTLY (else ~nearest+off),
 * the CUresult of calling it with valid arguments (itest_call), and the owner (driver/shim/other).
 * With --expect-shim a hooked pointer must be owned by libaccelshim.so and anything else by the
 * driver; with --expect-driver everything by the driver. --queries FILE also replays a runtime's
 * own queries (tests/gpu/cudart13_queries.txt: what static cudart asks) as door "cudart".
 * --remap prints what the program sees of devices ("count=C get1=R ordinal=O"; O from
 * cuPointerGetAttribute, which the shim does not hook).
 * Under the shim every cuGetProcAddress line ends in "route=identity|name|none": the way the shim
 * mapped the driver's answer, read back from its ACCELSHIM_ROUTING_TABLE (set to a private file
 * when the caller did not set one); a hooked name handed out unhooked is a FAIL.
 * A hooked symbol the driver lacks reads "absent from the driver" in both runs (with the shim its
 * hook must answer CUDA_ERROR_NOT_SUPPORTED).
 * Works on hostcuda too (GPU_CHECK_FAKE); fixture and call table shared with tests/intercept.
 */
#include "itest.h"

#include <libgen.h>
#include <unistd.h>

#define ASH_HOOK(kind, name, pfn, params, args) extern CUresult CUDAAPI name params __attribute__((weak));
#include "hooks.def"
#undef ASH_HOOK

static const struct {
    const char *name;
    void *addr;
} hooked[] = {
#define ASH_HOOK(kind, name, pfn, params, args) {#name, (void *)&name},
#include "hooks.def"
#undef ASH_HOOK
};
#define NHOOKED (sizeof hooked / sizeof hooked[0])

static const char *const others[] = {"cuCtxGetDevice", "cuNoSuchThing", "cuGraphCreate", "cuGetExportTable",
                                     "cuInit", "cuStreamSynchronize", "cuDriverGetVersion"};

static itest_fix_t fx;
static FILE *route_fp; /* the shim's routing table, read as it grows; NULL without the shim */
static void *driver_base;
static int expect_shim, failures;

static int is_hooked(const char *s)
{
    for (size_t i = 0; i < NHOOKED; i++)
        if (strcmp(hooked[i].name, s) == 0)
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

/* is `query` (an exact or a base name) one of the hooked symbols' base names? */
static int hooked_base(const char *query)
{
    char qb[128], hb[128];
    base_name(query, qb, sizeof qb);
    for (size_t i = 0; i < NHOOKED; i++) {
        base_name(hooked[i].name, hb, sizeof hb);
        if (strcmp(qb, hb) == 0)
            return 1;
    }
    return 0;
}

/* Each distinct pointer is called once (a real cuCtxCreate makes a context each time); the same
 * pointers recur in the same order with and without the shim, so the lines still compare. */
static int called_before(void *p)
{
    static void *seen[1024];
    static size_t n;
    for (size_t i = 0; i < n; i++)
        if (seen[i] == p)
            return 1;
    if (n < sizeof seen / sizeof seen[0])
        seen[n++] = p;
    return 0;
}

/* the route column of the LAST routing-table line the shim wrote: the request just made (lookups
 * made between two reports, which report nothing, are skipped) */
static const char *last_route(char *buf, size_t cap)
{
    char line[1024];
    snprintf(buf, cap, "?");
    if (route_fp == NULL)
        return buf;
    while (fgets(line, sizeof line, route_fp) != NULL) {
        if (line[0] == '#')
            continue;
        char *f = line;
        for (int col = 1; col < 8 && f != NULL; col++) {
            f = strchr(f, '\t');
            f = f ? f + 1 : NULL;
        }
        if (f != NULL)
            snprintf(buf, cap, "%.*s", (int)strcspn(f, "\t\n"), f);
    }
    clearerr(route_fp); /* the shim appends more */
    return buf;
}

static void report(const char *door, const char *query, int ver, int flags, int res, int status, void *p)
{
    Dl_info info;
    char sym[160] = "-", ownbuf[256];
    const char *owner = "-";
    int exact = 0;
    if (p != NULL && dladdr(p, &info) != 0) {
        if (info.dli_sname != NULL && info.dli_saddr == p) {
            snprintf(sym, sizeof sym, "%s", info.dli_sname);
            exact = 1;
        } else {
            snprintf(sym, sizeof sym, "~%s+0x%lx", info.dli_sname ? info.dli_sname : "?",
                     (unsigned long)((char *)p - (char *)(info.dli_saddr ? info.dli_saddr : info.dli_fbase)));
        }
        snprintf(ownbuf, sizeof ownbuf, "%s", info.dli_fname ? info.dli_fname : "?");
        owner = info.dli_fbase == driver_base ? "driver" : basename(ownbuf);
    } else if (p != NULL) {
        snprintf(sym, sizeof sym, "?%p-unmapped", p);
    }
    int callres = -2; /* -2: not called (not hooked / resolver), -3: this pointer was called above */
    if (exact && is_hooked(sym) && strcmp(sym, "cuGetProcAddress") != 0 && strcmp(sym, "cuGetProcAddress_v2") != 0)
        callres = called_before(p) ? -3 : itest_call(&fx, sym, p);
    int want_shim = expect_shim && exact && is_hooked(sym);
    if (p != NULL && strcmp(owner, want_shim ? "libaccelshim.so" : "driver") != 0) {
        printf("FAIL %s(%s v%d f%d): %s is owned by %s, want %s\n", door, query, ver, flags, sym, owner,
               want_shim ? "libaccelshim.so" : "the driver");
        failures++;
    }
    if (p != NULL && !exact && hooked_base(query) && !expect_shim) /* the shim routes these by name */
        printf("NOTE %s(%s v%d f%d): the driver's pointer is not an exported symbol (%s)\n", door, query, ver,
               flags, sym);
    char route[32] = "";
    int gpa = strncmp(door, "gpa", 3) == 0 || strcmp(door, "cudart") == 0;
    if (gpa && route_fp != NULL) {
        char r[24];
        snprintf(route, sizeof route, " route=%s", last_route(r, sizeof r));
        if (expect_shim && p != NULL && res == CUDA_SUCCESS && !exact && hooked_base(query) &&
            strcmp(r, "none") == 0) {
            printf("FAIL %s(%s v%d f%d): the driver's unexported pointer (%s) was handed out unhooked\n", door,
                   query, ver, flags, sym);
            failures++;
        }
    }
    printf("%s %s %d %d -> res=%d status=%d sym=%s call=%d | owner=%s%s\n", door, query, ver, flags, res, status,
           sym, callres, owner, route);
}

static void probe(const char *name, void *direct, PFN_cuGetProcAddress_v12000 gpa2,
                  PFN_cuGetProcAddress_v11030 gpa1, const int *versions, int nversions)
{
    if (direct != (void *)-1 && dlsym(fx.lib, name) == NULL) {
        /* hooked, but this driver lacks it (hostcuda: the legacy graph calls): the weak reference
         * and the global scope find the shim's export, which must answer CUDA_ERROR_NOT_SUPPORTED;
         * without the shim, nothing. Lines that read the same in both runs. */
        void *d = dlsym(RTLD_DEFAULT, name);
        int r = d != NULL ? itest_call(&fx, name, d) : -2;
        int ok = expect_shim ? direct == d && r == CUDA_ERROR_NOT_SUPPORTED : direct == NULL && d == NULL;
        if (!ok) {
            printf("FAIL absent(%s): the driver lacks it; direct %p, dlsym-default %p (call %d), want %s\n", name,
                   direct, d, r, expect_shim ? "the shim's hook answering CUDA_ERROR_NOT_SUPPORTED" : "NULL");
            failures++;
        }
        printf("direct %s 0 0 -> absent from the driver\ndlsym-default %s 0 0 -> absent from the driver\n", name, name);
    } else {
        if (direct != (void *)-1)
            report("direct", name, 0, 0, 0, 0, direct);
        report("dlsym-default", name, 0, 0, 0, 0, dlsym(RTLD_DEFAULT, name));
    }
    report("dlsym-handle", name, 0, 0, 0, 0, dlsym(fx.lib, name));
    char base[128];
    base_name(name, base, sizeof base);
    static const int flags[] = {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
    for (int v = 0; v < nversions; v++) {
        for (int fl = 0; fl < 3; fl++) {
            void *p = (void *)0x1;
            CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
            CUresult r = gpa2(base, &p, versions[v], (cuuint64_t)flags[fl], &st);
            report("gpa_v2", base, versions[v], flags[fl], r, (int)st, p == (void *)0x1 ? NULL : p);
            p = (void *)0x1;
            r = gpa1(base, &p, versions[v], (cuuint64_t)flags[fl]);
            report("gpa_legacy", base, versions[v], flags[fl], r, -1, p == (void *)0x1 ? NULL : p);
        }
    }
    /* where the driver has a per-thread twin, legacy and per-thread lookups differ */
    void *legacy = NULL, *ptds = NULL;
    CUdriverProcAddressQueryResult st;
    int top = versions[nversions - 1];
    if (gpa2(base, &legacy, top, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) == CUDA_SUCCESS &&
        gpa2(base, &ptds, top, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) == CUDA_SUCCESS) {
        char twin[128];
        if (itest_twin(&fx, name, twin, sizeof twin)[0] != '\0' && legacy == ptds && legacy != NULL) {
            printf("FAIL %s: the legacy and per-thread lookups gave the same pointer %p\n", base, legacy);
            failures++;
        }
    }
}

/* --queries FILE: replay a runtime's own cuGetProcAddress_v2 queries ("NAME VERSION FLAGS" lines,
 * '#' comments, '-' = the empty name), as door "cudart" */
static void replay(const char *path, PFN_cuGetProcAddress_v12000 gpa2)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        ITEST_FAIL("cannot open %s", path);
    char line[512], name[256];
    int ver;
    unsigned long long flags;
    while (fgets(line, sizeof line, fp) != NULL) {
        if (line[0] == '#' || sscanf(line, "%255s %d %llu", name, &ver, &flags) != 3)
            continue;
        const char *q = strcmp(name, "-") == 0 ? "" : name;
        void *p = (void *)0x1;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        CUresult r = gpa2(q, &p, ver, (cuuint64_t)flags, &st);
        report("cudart", name, ver, (int)flags, r, (int)st, p == (void *)0x1 ? NULL : p);
    }
    fclose(fp);
}

static int remap_mode(void)
{
    int count = -1;
    ITEST_CU(cuDeviceGetCount(&count));
    CUdevice d1;
    CUresult get1 = cuDeviceGet(&d1, 1);
    CUdeviceptr p;
    ITEST_CU(cuMemAlloc_v2(&p, 1024));
    int ordinal = -1;
    ITEST_CU(fx.ptr_attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    printf("count=%d get1=%d ordinal=%d\n", count, (int)get1, ordinal);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "--expect-shim") != 0 && strcmp(mode, "--expect-driver") != 0 && strcmp(mode, "--remap") != 0) {
        fprintf(stderr, "usage: gpu_routing --expect-shim|--expect-driver [--queries FILE] | --remap   (env ITEST_PTX)\n");
        return 2;
    }
    expect_shim = strcmp(mode, "--expect-shim") == 0;
    char table[256] = "";
    if (expect_shim) { /* before the first CUDA call: the shim reads its options once, lazily */
        const char *t = getenv("ACCELSHIM_ROUTING_TABLE");
        if (t == NULL || t[0] == '\0') {
            const char *tmp = getenv("TMPDIR");
            snprintf(table, sizeof table, "%s/gpu_routing.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
            int fd = mkstemp(table);
            if (fd < 0)
                ITEST_FAIL("mkstemp %s failed", table);
            close(fd);
            setenv("ACCELSHIM_ROUTING_TABLE", table, 1);
            t = table;
        }
        route_fp = fopen(t, "r");
        if (route_fp != NULL)
            fseek(route_fp, 0, SEEK_END); /* only this run's requests */
    }
    itest_open(&fx, 0); /* any driver: a real one has no call counters */
    Dl_info di;
    if (dladdr(itest_sym(&fx, "cuInit"), &di) == 0)
        ITEST_FAIL("dladdr cannot place the driver's cuInit");
    driver_base = di.dli_fbase;
    if (strcmp(mode, "--remap") == 0)
        return remap_mode();

    int drv = 0;
    PFN_cuDriverGetVersion_v2020 get_version = (PFN_cuDriverGetVersion_v2020)itest_sym(&fx, "cuDriverGetVersion");
    ITEST_CU(get_version(&drv));
    int versions[3] = {12000, 13000, drv}, nversions = 2;
    if (drv != 12000 && drv != 13000)
        nversions = 3;
    printf("driver %s version %d\n", di.dli_fname, drv);
    PFN_cuGetProcAddress_v12000 gpa2 = (PFN_cuGetProcAddress_v12000)itest_sym(&fx, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v11030 gpa1 = (PFN_cuGetProcAddress_v11030)itest_sym(&fx, "cuGetProcAddress");
    for (size_t i = 0; i < NHOOKED; i++)
        probe(hooked[i].name, hooked[i].addr, gpa2, gpa1, versions, nversions);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        probe(others[i], (void *)-1, gpa2, gpa1, versions, nversions);
    if (argc > 3 && strcmp(argv[2], "--queries") == 0)
        replay(argv[3], gpa2);
    printf("probe done: %d failures\n", failures);
    if (table[0] != '\0')
        unlink(table);
    return failures ? 1 : 0;
}
