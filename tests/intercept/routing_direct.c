/* routing_direct.c — the "direct link" door: this program is linked against libcuda (-lcuda,
 * DT_NEEDED libcuda.so.1) and takes the address of every hooked symbol by name. Run with
 * LD_PRELOAD=libaccelshim.so, each address must be the shim's hook of exactly that symbol
 * (dladdr: libaccelshim.so, same name), and calling it must reach exactly that exported symbol of
 * the driver once (hostcuda_call_count) and not its _ptsz/_ptds twin; a hooked symbol this driver
 * lacks must answer CUDA_ERROR_NOT_SUPPORTED without reaching it.
 */
#include "itest.h"

#include <libgen.h>

#undef cuDeviceGetUuid /* cuda.h: -> cuDeviceGetUuid_v2; both are hooked, each by its own name */
#undef cuDevicePrimaryCtxRelease /* cuda.h: -> _v2; the 7000 exports are hooked too */
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags

/* cuda.h's declarations of these names (where it has them) agree with hooks.def's */
#define ASH_HOOK(kind, name, pfn, params, args) extern CUresult CUDAAPI name params;
#include "hooks.def"
#undef ASH_HOOK

static const struct {
    const char *name;
    void *addr;
} direct[] = {
#define ASH_HOOK(kind, name, pfn, params, args) {#name, (void *)&name},
#include "hooks.def"
#undef ASH_HOOK
};

int main(void)
{
    itest_fix_t fx;
    if (itest_setup(&fx) == 77) {
        fprintf(stderr, "SKIP: libcuda.so.1 is not hostcuda\n");
        return 77;
    }
    int failures = 0;
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) {
        const char *name = direct[i].name;
        Dl_info info;
        if (dladdr(direct[i].addr, &info) == 0 || info.dli_sname == NULL) {
            printf("FAIL %s: dladdr cannot name %p\n", name, direct[i].addr);
            failures++;
            continue;
        }
        char own[256];
        snprintf(own, sizeof own, "%s", info.dli_fname);
        if (strcmp(basename(own), "libaccelshim.so") != 0 || strcmp(info.dli_sname, name) != 0) {
            printf("FAIL %s: linked address is %s in %s, want %s in libaccelshim.so\n", name, info.dli_sname,
                   info.dli_fname, name);
            failures++;
            continue;
        }
        if (strcmp(name, "cuGetProcAddress") == 0 || strcmp(name, "cuGetProcAddress_v2") == 0) {
            printf("ok %s -> libaccelshim.so:%s\n", name, info.dli_sname);
            continue;
        }
        char twin[128];
        itest_twin(&fx, name, twin, sizeof twin);
        unsigned long long b = fx.count(name), tb = twin[0] ? fx.count(twin) : 0;
        int r = itest_call(&fx, name, direct[i].addr);
        long long delta = (long long)(fx.count(name) - b), tdelta = twin[0] ? (long long)(fx.count(twin) - tb) : 0;
        if (dlsym(fx.lib, name) == NULL) { /* hooked, but this driver lacks it (hostcuda: legacy graph calls) */
            if (r != CUDA_ERROR_NOT_SUPPORTED || delta != 0 || tdelta != 0) {
                printf("FAIL %s: the driver lacks it; the hook answered %d (want %d, CUDA_ERROR_NOT_SUPPORTED) "
                       "and reached the driver %lld + %lld times (want 0)\n", name, r, CUDA_ERROR_NOT_SUPPORTED,
                       delta, tdelta);
                failures++;
            } else {
                printf("ok %s -> libaccelshim.so:%s, absent from the driver: CUDA_ERROR_NOT_SUPPORTED\n", name,
                       info.dli_sname);
            }
            continue;
        }
        if (delta != 1 || tdelta != 0) {
            printf("FAIL %s: the call (CUresult %d) reached %s %lld times and %s %lld times (want 1 and 0)\n", name, r,
                   name, delta, twin[0] ? twin : "(no twin)", tdelta);
            failures++;
            continue;
        }
        printf("ok %s -> libaccelshim.so:%s, call %d reached %s once\n", name, info.dli_sname, r, name);
    }
    printf("direct door: %d failures\n", failures);
    return failures ? 1 : 0;
}
