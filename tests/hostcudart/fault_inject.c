/* fault_inject.c — test-only, LD_PRELOADed before the driver: cuCtxSynchronize answers the
 * CUresult in HCRT_TEST_FAULT (a number) instead of synchronising, so rt_api can see how the
 * runtime treats an error the driver reports (sticky vs not). Unset: passes through.
 * Must not: be loaded outside the tests; change any call but cuCtxSynchronize. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>

__attribute__((visibility("default"))) CUresult cuCtxSynchronize(void)
{
    const char *f = getenv("HCRT_TEST_FAULT");
    if (f != NULL && *f)
        return (CUresult)atoi(f);
    CUresult (*real)(void) = (CUresult (*)(void))dlsym(RTLD_NEXT, "cuCtxSynchronize");
    return real ? real() : CUDA_ERROR_NOT_INITIALIZED;
}
