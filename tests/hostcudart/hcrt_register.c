/* hcrt_register.c — the registration ABI of nvcc's host stubs, and kernel launches.
 * __cudaRegisterFatBinary keeps the wrapper (magic 0x466243B1, versions 1 and 2); its kernels and
 * variables are recorded by host address. Nothing is loaded at registration (that runs before
 * main, before any context): the first use of a kernel or variable in a context loads its fatbin
 * there with cuModuleLoadData and keeps the module per (fatbin, context). Launches go through
 * cuLaunchKernel, the legacy or per-thread default stream as the caller's entry point says.
 * Threading: the registry and the per-context caches are under hcrt_reg_lock; the <<<>>> call
 * configuration is a per-thread stack.
 * Must not: load a module before a context exists; run a kernel itself (the driver does). */
#include <fatbinary_section.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcrt_internal.h"

#define HCRT_CTX_SLOTS 72 /* contexts a fatbin can be loaded in at once: every device's primary and some of the program's */

struct hcrt_fatbin {
    const __fatBinC_Wrapper_t *wrap;
    struct { CUcontext ctx; CUmodule mod; cudaError_t err; } mods[HCRT_CTX_SLOTS]; /* err: a failed load, kept */
    int unregistered;
    hcrt_fatbin *next;
};

struct hcrt_kernel {
    const void *host;
    const char *name;
    hcrt_fatbin *fb;
    struct { CUcontext ctx; CUfunction fn; } fns[HCRT_CTX_SLOTS];
    hcrt_kernel *next;
};

typedef struct hcrt_var {
    const void *host;     /* the host shadow (or, managed, the address of the host's pointer) */
    const char *name;
    size_t size;
    int managed;
    hcrt_fatbin *fb;
    struct hcrt_var *next;
} hcrt_var;

static pthread_mutex_t hcrt_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static hcrt_fatbin *hcrt_fatbins;
static hcrt_kernel *hcrt_kernels;
static hcrt_var *hcrt_vars;

/* ---- registration (before main, from the stubs' constructors) ---- */

HCRT_API void **__cudaRegisterFatBinary(void *fat_cubin)
{
    const __fatBinC_Wrapper_t *w = fat_cubin;
    if (w == NULL || w->magic != FATBINC_MAGIC || (w->version != 1 && w->version != 2)) {
        fprintf(stderr, "hostcudart: __cudaRegisterFatBinary: not a fatbin wrapper (magic 0x%x, version %d); "
                "its kernels will answer cudaErrorInvalidKernelImage\n",
                w ? (unsigned)w->magic : 0u, w ? w->version : -1);
    }
    hcrt_fatbin *fb = calloc(1, sizeof *fb);
    if (fb == NULL)
        return NULL;
    fb->wrap = w;
    pthread_mutex_lock(&hcrt_reg_lock);
    fb->next = hcrt_fatbins;
    hcrt_fatbins = fb;
    pthread_mutex_unlock(&hcrt_reg_lock);
    /* the stubs keep the handle we return and pass it back: a pointer to the record */
    return (void **)fb;
}

HCRT_API void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

HCRT_API void __cudaUnregisterFatBinary(void **handle)
{
    hcrt_fatbin *fb = (hcrt_fatbin *)handle;
    if (fb == NULL)
        return;
    /* at exit: the modules go with their contexts; the record stays so late launches fail cleanly */
    pthread_mutex_lock(&hcrt_reg_lock);
    fb->unregistered = 1;
    pthread_mutex_unlock(&hcrt_reg_lock);
}

HCRT_API void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                                     int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    (void)device_fun, (void)thread_limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
    hcrt_kernel *k = calloc(1, sizeof *k);
    if (k == NULL || handle == NULL || device_name == NULL) {
        free(k);
        return;
    }
    k->host = host_fun;
    k->name = device_name;
    k->fb = (hcrt_fatbin *)handle;
    pthread_mutex_lock(&hcrt_reg_lock);
    k->next = hcrt_kernels;
    hcrt_kernels = k;
    pthread_mutex_unlock(&hcrt_reg_lock);
}

static void hcrt_add_var(void **handle, const void *host, const char *name, size_t size, int managed)
{
    hcrt_var *v = calloc(1, sizeof *v);
    if (v == NULL || handle == NULL || name == NULL) {
        free(v);
        return;
    }
    *v = (hcrt_var){host, name, size, managed, (hcrt_fatbin *)handle, NULL};
    pthread_mutex_lock(&hcrt_reg_lock);
    v->next = hcrt_vars;
    hcrt_vars = v;
    pthread_mutex_unlock(&hcrt_reg_lock);
}

HCRT_API void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name,
                                int ext, size_t size, int constant, int global)
{
    (void)device_address, (void)ext, (void)constant, (void)global;
    hcrt_add_var(handle, host_var, device_name, size, 0);
}

HCRT_API void __cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
                                       const char *device_name, int ext, size_t size, int constant, int global)
{
    (void)device_address, (void)ext, (void)constant, (void)global;
    hcrt_add_var(handle, host_var_ptr, device_name, size, 1);
}

/* ---- loading, per context ---- */

static CUcontext hcrt_ctx(void)
{
    CUcontext c = NULL;
    cuCtxGetCurrent(&c);
    return c;
}

/* nvcc -rdc=true: the wrapper (version 2) points at the device-linked fatbin, whose code is a
 * cubin only, and at the NULL-terminated list of the translation units' own fatbins, which carry
 * their PTX. Link those through the driver (cuLink*, as a runtime JIT-links relocatable code) and
 * load the result. */
static CUresult hcrt_link_load(const __fatBinC_Wrapper_t *w, CUmodule *out)
{
    void *const *units = w->filename_or_fatbins;
    char log[1024] = "";
    CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[2] = {log, (void *)(uintptr_t)sizeof log};
    CUlinkState st;
    CUresult r = cuLinkCreate(2, opt, val, &st);
    if (r != CUDA_SUCCESS)
        return r;
    for (int i = 0; r == CUDA_SUCCESS && units[i] != NULL; i++) {
        const unsigned char *f = units[i];
        uint32_t magic;
        uint16_t header;
        uint64_t body;
        memcpy(&magic, f, 4);
        memcpy(&header, f + 6, 2);
        memcpy(&body, f + 8, 8);
        char name[48];
        snprintf(name, sizeof name, "translation unit %d", i + 1);
        r = magic == 0xBA55ED50u ? cuLinkAddData(st, CU_JIT_INPUT_FATBINARY, (void *)f, header + body, name, 0, NULL, NULL)
                                 : CUDA_ERROR_INVALID_IMAGE;
    }
    void *image;
    size_t size;
    if (r == CUDA_SUCCESS)
        r = cuLinkComplete(st, &image, &size);
    if (r == CUDA_SUCCESS)
        r = cuModuleLoadData(out, image);
    else
        fprintf(stderr, "hostcudart: linking the relocatable device code (nvcc -rdc=true) failed: %s\n",
                log[0] ? log : "(no reason given)");
    cuLinkDestroy(st);
    return r;
}

/* the fatbin's module in the current context; under hcrt_reg_lock */
static cudaError_t hcrt_module(hcrt_fatbin *fb, CUcontext ctx, CUmodule *out)
{
    int free_slot = -1;
    for (int i = 0; i < HCRT_CTX_SLOTS; i++) {
        if (fb->mods[i].ctx == ctx && fb->mods[i].mod != NULL) {
            *out = fb->mods[i].mod;
            return cudaSuccess;
        }
        if (fb->mods[i].ctx == ctx && ctx != NULL && fb->mods[i].err != cudaSuccess)
            return fb->mods[i].err; /* the driver said why the first time */
        if (fb->mods[i].ctx == NULL && free_slot < 0)
            free_slot = i;
    }
    if (fb->unregistered)
        return cudaErrorCudartUnloading;
    if (fb->wrap == NULL || fb->wrap->magic != FATBINC_MAGIC || (fb->wrap->version != 1 && fb->wrap->version != 2))
        return cudaErrorInvalidKernelImage;
    if (free_slot < 0)
        return cudaErrorMemoryAllocation; /* more live contexts than slots */
    CUmodule m = NULL;
    CUresult r = fb->wrap->version == 2 && fb->wrap->filename_or_fatbins != NULL ? hcrt_link_load(fb->wrap, &m)
                                                                                 : cuModuleLoadData(&m, fb->wrap->data);
    if (r != CUDA_SUCCESS) {
        fb->mods[free_slot].ctx = ctx;
        fb->mods[free_slot].err = hcrt_from_cu(r);
        return fb->mods[free_slot].err;
    }
    fb->mods[free_slot].ctx = ctx;
    fb->mods[free_slot].mod = m;
    /* managed variables: the host's pointer gets the managed address */
    for (hcrt_var *v = hcrt_vars; v != NULL; v = v->next) {
        CUdeviceptr p;
        size_t n;
        if (v->fb == fb && v->managed && cuModuleGetGlobal(&p, &n, m, v->name) == CUDA_SUCCESS)
            *(void **)v->host = (void *)(uintptr_t)p;
    }
    *out = m;
    return cudaSuccess;
}

void hcrt_forget_context(CUcontext ctx)
{
    pthread_mutex_lock(&hcrt_reg_lock);
    for (hcrt_fatbin *fb = hcrt_fatbins; fb != NULL; fb = fb->next)
        for (int i = 0; i < HCRT_CTX_SLOTS; i++)
            if (fb->mods[i].ctx == ctx) {
                if (fb->mods[i].mod != NULL)
                    cuModuleUnload(fb->mods[i].mod);
                fb->mods[i].ctx = NULL;
                fb->mods[i].mod = NULL;
                fb->mods[i].err = cudaSuccess;
            }
    for (hcrt_kernel *k = hcrt_kernels; k != NULL; k = k->next)
        for (int i = 0; i < HCRT_CTX_SLOTS; i++)
            if (k->fns[i].ctx == ctx)
                k->fns[i].ctx = NULL, k->fns[i].fn = NULL;
    pthread_mutex_unlock(&hcrt_reg_lock);
}

HCRT_API char __cudaInitModule(void **handle)
{
    if (handle == NULL || hcrt_enter() != cudaSuccess)
        return 0;
    CUmodule m;
    pthread_mutex_lock(&hcrt_reg_lock);
    cudaError_t e = hcrt_module((hcrt_fatbin *)handle, hcrt_ctx(), &m);
    pthread_mutex_unlock(&hcrt_reg_lock);
    return e == cudaSuccess;
}

hcrt_kernel *hcrt_kernel_by_host(const void *host_fun)
{
    hcrt_kernel *k;
    pthread_mutex_lock(&hcrt_reg_lock);
    for (k = hcrt_kernels; k != NULL && k->host != host_fun; k = k->next)
        ;
    pthread_mutex_unlock(&hcrt_reg_lock);
    return k;
}

cudaError_t hcrt_kernel_function(hcrt_kernel *k, CUfunction *out)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if (k == NULL)
        return hcrt_ret(cudaErrorInvalidDeviceFunction);
    CUcontext ctx = hcrt_ctx();
    pthread_mutex_lock(&hcrt_reg_lock);
    int free_slot = -1;
    for (int i = 0; i < HCRT_CTX_SLOTS; i++) {
        if (k->fns[i].ctx == ctx && k->fns[i].fn != NULL) {
            *out = k->fns[i].fn;
            pthread_mutex_unlock(&hcrt_reg_lock);
            return cudaSuccess;
        }
        if (k->fns[i].ctx == NULL && free_slot < 0)
            free_slot = i;
    }
    CUmodule m = NULL;
    e = hcrt_module(k->fb, ctx, &m);
    if (e == cudaSuccess) {
        CUresult r = cuModuleGetFunction(out, m, k->name);
        e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : hcrt_from_cu(r);
    }
    if (e == cudaSuccess && free_slot >= 0) {
        k->fns[free_slot].ctx = ctx;
        k->fns[free_slot].fn = *out;
    }
    pthread_mutex_unlock(&hcrt_reg_lock);
    return hcrt_ret(e);
}

cudaError_t hcrt_func_of(const void *host_fun, CUfunction *out)
{
    if (host_fun == NULL)
        return hcrt_ret(cudaErrorInvalidDeviceFunction);
    return hcrt_kernel_function(hcrt_kernel_by_host(host_fun), out);
}

cudaError_t hcrt_symbol(const void *host_var, CUdeviceptr *dptr, size_t *bytes)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&hcrt_reg_lock);
    hcrt_var *v;
    for (v = hcrt_vars; v != NULL && v->host != host_var; v = v->next)
        ;
    CUmodule m = NULL;
    e = v == NULL ? cudaErrorInvalidSymbol : hcrt_module(v->fb, hcrt_ctx(), &m);
    if (e == cudaSuccess) {
        CUresult r = cuModuleGetGlobal(dptr, bytes, m, v->name);
        e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : hcrt_from_cu(r);
    }
    pthread_mutex_unlock(&hcrt_reg_lock);
    return hcrt_ret(e);
}

/* ---- <<<>>>: the call configuration, and the CUDA 13 launch ABI ---- */

#define HCRT_CONFIG_DEPTH 16
static _Thread_local struct { dim3 grid, block; size_t shared; void *stream; } hcrt_config[HCRT_CONFIG_DEPTH];
static _Thread_local int hcrt_config_depth;

HCRT_API unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream)
{
    if (hcrt_config_depth >= HCRT_CONFIG_DEPTH)
        return 1;
    int i = hcrt_config_depth++;
    hcrt_config[i].grid = grid;
    hcrt_config[i].block = block;
    hcrt_config[i].shared = shared;
    hcrt_config[i].stream = stream;
    return 0;
}

HCRT_API cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    if (hcrt_config_depth == 0)
        return hcrt_ret(cudaErrorMissingConfiguration);
    int i = --hcrt_config_depth;
    *grid = hcrt_config[i].grid;
    *block = hcrt_config[i].block;
    *shared = hcrt_config[i].shared;
    *(void **)stream = hcrt_config[i].stream;
    return cudaSuccess;
}

HCRT_API cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *host_fun)
{
    if (out == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    hcrt_kernel *k = hcrt_kernel_by_host(host_fun);
    if (k == NULL)
        return hcrt_ret(cudaErrorInvalidDeviceFunction);
    *out = (cudaKernel_t)k;
    return cudaSuccess;
}

cudaError_t hcrt_launch(hcrt_kernel *k, dim3 grid, dim3 block, void **args, size_t shared, CUstream s)
{
    CUfunction f;
    cudaError_t e = hcrt_kernel_function(k, &f);
    if (e != cudaSuccess)
        return e;
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.z > 64 ||
        grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u)
        return hcrt_ret(cudaErrorInvalidConfiguration);
    return HCRT_CU(cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shared, s,
                                  args, NULL));
}

HCRT_API cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared,
                                        cudaStream_t stream)
{
    return hcrt_launch((hcrt_kernel *)k, grid, block, args, shared, (CUstream)stream);
}

HCRT_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t shared,
                                             cudaStream_t stream)
{
    return hcrt_launch((hcrt_kernel *)k, grid, block, args, shared, stream ? (CUstream)stream : CU_STREAM_PER_THREAD);
}

/* ---- functions: attributes and occupancy ---- */

HCRT_API cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    if (e != cudaSuccess)
        return e;
    CUfunction_attribute a;
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: a = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; break;
    case cudaFuncAttributePreferredSharedMemoryCarveout: a = CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; break;
    case cudaFuncAttributeClusterDimMustBeSet: a = CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET; break;
    case cudaFuncAttributeRequiredClusterWidth: a = CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH; break;
    case cudaFuncAttributeRequiredClusterHeight: a = CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT; break;
    case cudaFuncAttributeRequiredClusterDepth: a = CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH; break;
    case cudaFuncAttributeNonPortableClusterSizeAllowed: a = CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED; break;
    case cudaFuncAttributeClusterSchedulingPolicyPreference: a = CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE; break;
    default: return hcrt_ret(cudaErrorInvalidValue);
    }
    return HCRT_CU(cuFuncSetAttribute(f, a, value));
}

HCRT_API cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (attr == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    if (e != cudaSuccess)
        return e;
    memset(attr, 0, sizeof *attr);
    int v;
    CUresult r = CUDA_SUCCESS;
#define F(field, a) do { if (r == CUDA_SUCCESS && (r = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_##a, f)) == CUDA_SUCCESS) attr->field = v; } while (0)
    F(sharedSizeBytes, SHARED_SIZE_BYTES);
    F(constSizeBytes, CONST_SIZE_BYTES);
    F(localSizeBytes, LOCAL_SIZE_BYTES);
    F(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK);
    F(numRegs, NUM_REGS);
    F(ptxVersion, PTX_VERSION);
    F(binaryVersion, BINARY_VERSION);
    F(cacheModeCA, CACHE_MODE_CA);
    F(maxDynamicSharedSizeBytes, MAX_DYNAMIC_SHARED_SIZE_BYTES);
    F(preferredShmemCarveout, PREFERRED_SHARED_MEMORY_CARVEOUT);
#undef F
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache config)
{
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuFuncSetCacheConfig(f, (CUfunc_cache)config));
}

HCRT_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int block,
                                                                           size_t smem, unsigned flags)
{
    if (n == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, f, block, smem, flags));
}

HCRT_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block, size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, block, smem, cudaOccupancyDefault);
}

HCRT_API cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *smem, const void *func, int nblocks, int block)
{
    if (smem == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuOccupancyAvailableDynamicSMemPerBlock(smem, f, nblocks, block));
}

HCRT_API cudaError_t cudaGetSymbolAddress(void **dptr, const void *symbol)
{
    if (dptr == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUdeviceptr p;
    size_t n;
    cudaError_t e = hcrt_symbol(symbol, &p, &n);
    if (e == cudaSuccess)
        *dptr = (void *)(uintptr_t)p;
    return e;
}

HCRT_API cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (size == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUdeviceptr p;
    return hcrt_symbol(symbol, &p, size);
}

HCRT_API cudaError_t cudaGetFuncBySymbol(cudaFunction_t *out, const void *symbol)
{
    if (out == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = hcrt_func_of(symbol, &f);
    if (e == cudaSuccess)
        *out = (cudaFunction_t)f;
    return e;
}
