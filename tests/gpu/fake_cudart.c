/* fake_cudart.c — a test-only libcudart.so.13 that runs on the host: exactly the runtime entry
 * points rt_mlp uses when built with `nvcc -cudart shared` (kernel registration, the CUDA 13
 * launch ABI __cudaGetKernel/__cudaLaunchKernel, <<<>>> call configuration, memory, streams),
 * so rt_mlp's HOST logic (launch order, arguments, copies) can be checked without a GPU against
 * mlp on hostcuda. Kernels: the hostcuda kernel ABI, `hostcuda_kernel_<entry>` looked up with
 * dlsym in the libraries of FAKE_CUDART_KERNELS (colon list), called with the launch's args.
 * Memory is plain host memory; everything runs synchronously, in call order. Single-threaded.
 * Not the real runtime: the real one (static, in rt_mlp) is checked by scripts/gpu-check.sh.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ash_kernel.h" /* hostcuda_dims (host mode) */

#define FC_API __attribute__((visibility("default")))
typedef void (*fc_kernel_fn)(const hostcuda_dims *, void **);

static struct {
    const void *host;
    const char *entry;
    fc_kernel_fn fn;
} fc_kernels[64];
static int fc_nkernels;
static struct {
    dim3 grid, block;
    size_t shared;
    void *stream;
} fc_config[8];
static int fc_depth;
static cudaError_t fc_last = cudaSuccess;

static cudaError_t fc_err(cudaError_t e)
{
    if (e != cudaSuccess)
        fc_last = e;
    return e;
}

FC_API void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *handle;
    handle = fatCubin;
    return &handle;
}
FC_API void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
FC_API void __cudaUnregisterFatBinary(void **h) { (void)h; }

FC_API void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h, (void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (fc_nkernels < (int)(sizeof fc_kernels / sizeof fc_kernels[0])) {
        fc_kernels[fc_nkernels].host = hostFun;
        fc_kernels[fc_nkernels].entry = deviceFun;
        fc_nkernels++;
    }
}

FC_API cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fun)
{
    for (int i = 0; i < fc_nkernels; i++)
        if (fc_kernels[i].host == fun) {
            *k = (cudaKernel_t)(uintptr_t)(i + 1);
            return cudaSuccess;
        }
    return fc_err(cudaErrorInvalidDeviceFunction);
}

FC_API unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream)
{
    if (fc_depth >= (int)(sizeof fc_config / sizeof fc_config[0]))
        return 1;
    fc_config[fc_depth].grid = grid;
    fc_config[fc_depth].block = block;
    fc_config[fc_depth].shared = shared;
    fc_config[fc_depth].stream = stream;
    fc_depth++;
    return 0;
}

FC_API cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    if (fc_depth == 0)
        return fc_err(cudaErrorMissingConfiguration);
    fc_depth--;
    *grid = fc_config[fc_depth].grid;
    *block = fc_config[fc_depth].block;
    *shared = fc_config[fc_depth].shared;
    *(void **)stream = fc_config[fc_depth].stream;
    return cudaSuccess;
}

static fc_kernel_fn fc_resolve(int i)
{
    if (fc_kernels[i].fn != NULL)
        return fc_kernels[i].fn;
    char sym[512];
    snprintf(sym, sizeof sym, "hostcuda_kernel_%s", fc_kernels[i].entry);
    const char *libs = getenv("FAKE_CUDART_KERNELS");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", libs ? libs : "");
    for (char *save = NULL, *p = strtok_r(buf, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save)) {
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        void *f = h ? dlsym(h, sym) : NULL;
        if (f != NULL) {
            fc_kernels[i].fn = (fc_kernel_fn)f;
            return fc_kernels[i].fn;
        }
    }
    fprintf(stderr, "fake_cudart: no %s in FAKE_CUDART_KERNELS=%s\n", sym, libs ? libs : "(unset)");
    return NULL;
}

FC_API cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared,
                                      cudaStream_t stream)
{
    (void)stream;
    int i = (int)(uintptr_t)k - 1;
    if (i < 0 || i >= fc_nkernels)
        return fc_err(cudaErrorInvalidResourceHandle);
    fc_kernel_fn fn = fc_resolve(i);
    if (fn == NULL)
        return fc_err(cudaErrorInvalidDeviceFunction);
    hostcuda_dims d = {{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, (unsigned)shared};
    fn(&d, args);
    return cudaSuccess;
}

FC_API cudaError_t cudaGetLastError(void)
{
    cudaError_t e = fc_last;
    fc_last = cudaSuccess;
    return e;
}
FC_API const char *cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorFake"; }
FC_API const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "fake_cudart error"; }
FC_API cudaError_t cudaSetDevice(int dev) { return dev == 0 ? cudaSuccess : fc_err(cudaErrorInvalidDevice); }

FC_API cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    static int token;
    *s = (cudaStream_t)(void *)&token;
    return cudaSuccess;
}
FC_API cudaError_t cudaStreamDestroy(cudaStream_t s) { (void)s; return cudaSuccess; }
FC_API cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }

FC_API cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : fc_err(cudaErrorMemoryAllocation);
}
FC_API cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
FC_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    (void)kind;
    memcpy(dst, src, n);
    return cudaSuccess;
}
FC_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind, (void)s;
    memcpy(dst, src, n);
    return cudaSuccess;
}
FC_API cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    memset(p, v, n);
    return cudaSuccess;
}
