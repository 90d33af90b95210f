/* missing.c — run under the shim with ACCELSHIM_DRIVER_PATH=libpartial_driver.so: hooks whose real
 * symbol the driver lacks answer CUDA_ERROR_NOT_SUPPORTED (801), hooks it has work, the real
 * resolver's CUresult and symbolStatus come back unchanged, and on a driver without
 * cuFuncGetName / cuFuncGetParamInfo the kernel cache names a launched kernel from what the
 * cuModuleGetFunction hook recorded (demangled when C++), parameters unknown. One line per check. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#undef cuGetProcAddress

typedef int (*info_fn)(const void *, const char **, const char **, int *, int *, unsigned long long *);

static int check_name(CUfunction f, const char *want, const char *want_dem)
{
    info_fn info = (info_fn)dlsym(RTLD_DEFAULT, "accelshim_kernel_info");
    const char *name = "", *dem = "";
    int np = 0, isk = -1;
    unsigned long long l = 0;
    int ok = info != NULL && info(f, &name, &dem, &np, &isk, &l) == 0 && strcmp(name, want) == 0 &&
             strcmp(dem, want_dem) == 0 && np == -1 && isk == 0 && l == 2;
    printf("%s recorded name: %s / %s, %d params, %llu launches (want %s / %s, -1, 2)\n", ok ? "ok" : "FAIL", name, dem,
           np, l, want, want_dem);
    return !ok;
}

int main(void)
{
    int fails = 0;
    CUdeviceptr p = 0;
    for (int i = 0; i < 25; i++) {
        CUresult r = cuMemAlloc_v2(&p, 64);
        if (r != CUDA_ERROR_NOT_SUPPORTED) {
            printf("FAIL cuMemAlloc_v2 call %d -> %d, want 801\n", i, (int)r);
            fails++;
        }
    }
    CUresult r = cuLaunchCooperativeKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL);
    printf("cuLaunchCooperativeKernel -> %d (want 801)\n", (int)r);
    fails += r != CUDA_ERROR_NOT_SUPPORTED;
    r = cuMemcpyHtoD_v2(0, &p, 8);
    printf("cuMemcpyHtoD_v2 -> %d (want 801)\n", (int)r);
    fails += r != CUDA_ERROR_NOT_SUPPORTED;
    int n = -1;
    r = cuDeviceGetCount(&n);
    printf("cuDeviceGetCount -> %d, count %d (want 0, 1)\n", (int)r, n);
    fails += r != CUDA_SUCCESS || n != 1;
    void *q = (void *)1;
    CUdriverProcAddressQueryResult st = 77;
    r = cuGetProcAddress_v2("cuMemAlloc", &q, 13000, 0, &st);
    printf("cuGetProcAddress_v2(cuMemAlloc) -> %d, status %d, pfn %p (want 500, 1, nil)\n", (int)r, (int)st, q);
    fails += r != CUDA_ERROR_NOT_FOUND || st != CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND || q != NULL;
    CUfunction fc, fcxx;
    r = cuModuleGetFunction(&fc, NULL, "adamw_kernel2");
    fails += r != CUDA_SUCCESS;
    r = cuModuleGetFunction(&fcxx, NULL, "_Z5scalePfif");
    fails += r != CUDA_SUCCESS;
    for (int i = 0; i < 2; i++) {
        fails += cuLaunchKernel(fc, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS;
        fails += cuLaunchKernel(fcxx, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS;
    }
    fails += check_name(fc, "adamw_kernel2", "adamw_kernel2");
    fails += check_name(fcxx, "_Z5scalePfif", "scale(float*, int, float)");
    printf("%s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
