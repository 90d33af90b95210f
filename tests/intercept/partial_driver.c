/* partial_driver.c — libpartial_driver.so: a "driver" that exports only cuInit, cuDeviceGetCount
 * (3 devices), cuDeviceGet, cuGetProcAddress_v2 (which finds nothing), cuModuleGetFunction (a
 * distinct fake handle per call) and cuLaunchKernel (returns success). Like a driver older than
 * 12.3 it has no cuFuncGetName / cuFuncGetParamInfo. Loaded by the shim through
 * ACCELSHIM_DRIVER_PATH in test_missing_symbols.sh: every other hook must answer
 * CUDA_ERROR_NOT_SUPPORTED instead of calling through NULL, and kernel names must come from what
 * the cuModuleGetFunction hook recorded. */
#include <cuda.h>
#undef cuGetProcAddress

__attribute__((visibility("default"))) CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }
__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int *n) { *n = 3; return CUDA_SUCCESS; }
__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= 3)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char *s, void **p, int v, cuuint64_t f,
                                                                    CUdriverProcAddressQueryResult *st)
{
    (void)s; (void)v; (void)f;
    *p = NULL;
    if (st)
        *st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}

__attribute__((visibility("default"))) CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    static char handles[16];
    static int next;
    (void)m;
    (void)name;
    if (next == 16)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *f = (CUfunction)(void *)&handles[next++];
    return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                               unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                                               CUstream s, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s, (void)params, (void)extra;
    return CUDA_SUCCESS;
}
