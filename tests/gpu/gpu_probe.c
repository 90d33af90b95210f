/* gpu_probe.c — what scripts/gpu-check.sh learns about the driver before any check: it dlopen()s
 * "libcuda.so.1" (never links it, so it runs where there is no driver at all) and prints
 * `key=value` lines: driver_path, driver_version, device_count, and for device 0 name, cc,
 * mem_mib; with --ptx FILE (repeatable) it loads each PTX text with cuModuleLoadData on device 0
 * and prints `ptx FILE ok|fail RESULT_NAME`, i.e. whether this driver JIT-compiles PTX of that
 * ISA version for this GPU. Exit: 0 ok, 77 no driver or no device (one line on stdout saying so),
 * 1 a driver call or a PTX load failed. Single-threaded; called only by gpu-check.sh.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *lib;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL) {
        printf("error=the driver lacks %s\n", name);
        exit(1);
    }
    return p;
}

static const char *res_name(CUresult r)
{
    const char *s = NULL;
    PFN_cuGetErrorName_v6000 get = (PFN_cuGetErrorName_v6000)dlsym(lib, "cuGetErrorName");
    if (get == NULL || get(r, &s) != CUDA_SUCCESS || s == NULL)
        return "CUDA_ERROR_UNKNOWN";
    return s;
}

static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf != NULL && fread(buf, 1, (size_t)n, fp) == (size_t)n) {
        buf[n] = '\0';
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    return buf;
}

int main(int argc, char **argv)
{
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        printf("no NVIDIA driver: dlopen(libcuda.so.1) failed: %s\n", dlerror());
        return 77;
    }
    Dl_info di;
    void *init_p = sym("cuInit");
    printf("driver_path=%s\n", dladdr(init_p, &di) && di.dli_fname ? di.dli_fname : "?");
    CUresult r = ((PFN_cuInit_v2000)init_p)(0);
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY) {
        printf("no usable GPU: cuInit -> %s\n", res_name(r));
        return 77;
    }
    if (r != CUDA_SUCCESS) {
        printf("error=cuInit -> %s (%d)\n", res_name(r), (int)r);
        return 1;
    }
    int ver = 0, count = 0;
    ((PFN_cuDriverGetVersion_v2020)sym("cuDriverGetVersion"))(&ver);
    ((PFN_cuDeviceGetCount_v2000)sym("cuDeviceGetCount"))(&count);
    printf("driver_version=%d\ndevice_count=%d\n", ver, count);
    if (count < 1) {
        printf("no usable GPU: cuDeviceGetCount -> 0\n");
        return 77;
    }
    CUdevice dev;
    char name[256] = "?";
    int major = 0, minor = 0;
    size_t mem = 0;
    PFN_cuDeviceGetAttribute_v2000 attr = (PFN_cuDeviceGetAttribute_v2000)sym("cuDeviceGetAttribute");
    if ((r = ((PFN_cuDeviceGet_v2000)sym("cuDeviceGet"))(&dev, 0)) != CUDA_SUCCESS) {
        printf("error=cuDeviceGet(0) -> %s\n", res_name(r));
        return 1;
    }
    ((PFN_cuDeviceGetName_v2000)sym("cuDeviceGetName"))(name, (int)sizeof name, dev);
    attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    ((PFN_cuDeviceTotalMem_v3020)sym("cuDeviceTotalMem_v2"))(&mem, dev);
    int mode = -1;
    attr(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev);
    printf("device0_name=%s\ndevice0_cc=%d.%d\ndevice0_mem_mib=%zu\n", name, major, minor, mem >> 20);
    printf("device0_compute_mode=%s\n", mode == CU_COMPUTEMODE_DEFAULT ? "default"
                                        : mode == CU_COMPUTEMODE_PROHIBITED ? "prohibited"
                                        : mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS ? "exclusive-process" : "?");

    int failed = 0;
    CUcontext ctx = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ptx") != 0)
            continue;
        if (ctx == NULL) {
            if ((r = ((PFN_cuDevicePrimaryCtxRetain_v7000)sym("cuDevicePrimaryCtxRetain"))(&ctx, dev)) != CUDA_SUCCESS ||
                (r = ((PFN_cuCtxSetCurrent_v4000)sym("cuCtxSetCurrent"))(ctx)) != CUDA_SUCCESS) {
                printf("error=primary context -> %s\n", res_name(r));
                return 1;
            }
        }
        char *text = read_text(argv[i + 1]);
        if (text == NULL) {
            printf("ptx %s fail cannot-read\n", argv[i + 1]);
            failed++;
            continue;
        }
        CUmodule mod;
        r = ((PFN_cuModuleLoadData_v2000)sym("cuModuleLoadData"))(&mod, text);
        printf("ptx %s %s %s\n", argv[i + 1], r == CUDA_SUCCESS ? "ok" : "fail", res_name(r));
        if (r == CUDA_SUCCESS)
            ((PFN_cuModuleUnload_v2000)sym("cuModuleUnload"))(mod);
        else
            failed++;
        free(text);
    }
    return failed ? 1 : 0;
}
