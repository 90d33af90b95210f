/* itest.h — shared helpers of the intercept tests (header-only; each test is one program).
 *
 * A fixture on the driver found as "libcuda.so.1" (hostcuda in tests; the shim when preloaded
 * intercepts what it hooks): a context on the program's device 0, a module with ash_itest_fill
 * (PTX path from ITEST_PTX), a device buffer, a stream. Driver functions the shim does not hook
 * are taken with dlsym from the driver handle, so the program loads on any driver. itest_call()
 * calls a pointer that is exactly the exported symbol `name` with valid arguments.
 */
#ifndef ITEST_H
#define ITEST_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef cuGetProcAddress
/* cuda.h maps these to their _v2 forms; hooks.def hooks both, each by its exported name */
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphAddNode

#define ITEST_N 256

typedef struct {
    void *lib;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUdeviceptr dbuf, dbuf2;
    int host[ITEST_N];
    CUlibrary library;
    CUkernel kern;
    CUmemoryPool pool;
    unsigned long long (*count)(const char *);
    PFN_cuInit_v2000 init;
    PFN_cuCtxSetCurrent_v4000 set_current;
    PFN_cuModuleLoadData_v2000 load_data;
    PFN_cuStreamCreate_v2000 stream_create;
    PFN_cuStreamSynchronize_v2000 stream_sync;
    PFN_cuCtxSynchronize_v2000 ctx_sync;
    PFN_cuLibraryLoadData_v12000 lib_load;
    PFN_cuDeviceGetDefaultMemPool_v11020 default_pool;
    PFN_cuPointerGetAttribute_v4000 ptr_attr;
    PFN_cuCtxGetDevice_v2000 ctx_device;
    PFN_cuMemAlloc_v3020 alloc;
    PFN_cuMemFree_v3020 free_;
    PFN_cuMemAllocAsync_v11020 alloc_async;
    PFN_cuDeviceGet_v2000 device_get;
    PFN_cuDevicePrimaryCtxRetain_v7000 retain;
    PFN_cuModuleGetFunction_v2000 get_function;
    const char *ptx_path;              /* ITEST_PTX: the image the load calls are given */
} itest_fix_t;

#define ITEST_FAIL(...)                                                                    \
    do {                                                                                   \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                              \
        fprintf(stderr, __VA_ARGS__);                                                      \
        fprintf(stderr, "\n");                                                             \
        exit(1);                                                                           \
    } while (0)
#define ITEST_CU(call)                                                                     \
    do {                                                                                   \
        CUresult itest__r = (call);                                                        \
        if (itest__r != CUDA_SUCCESS)                                                      \
            ITEST_FAIL("%s -> CUresult %d", #call, (int)itest__r);                         \
    } while (0)

static inline void *itest_sym(itest_fix_t *f, const char *name)
{
    void *p = dlsym(f->lib, name);
    if (p == NULL)
        ITEST_FAIL("the driver lacks %s", name);
    return p;
}

static inline char *itest_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        ITEST_FAIL("cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, fp) != (size_t)n)
        ITEST_FAIL("cannot read %s", path);
    buf[n] = '\0';
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

/* The fixture on any driver; need_counters: return 77 unless the driver is hostcuda (its call
 * counters, f->count, are what the intercept tests read). Returns 0 when set up. */
static inline int itest_open(itest_fix_t *f, int need_counters)
{
    memset(f, 0, sizeof *f);
    f->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (f->lib == NULL)
        ITEST_FAIL("dlopen libcuda.so.1: %s", dlerror());
    f->count = (unsigned long long (*)(const char *))dlsym(f->lib, "hostcuda_call_count");
    if (f->count == NULL && need_counters)
        return 77;
    f->init = (PFN_cuInit_v2000)itest_sym(f, "cuInit");
    f->set_current = (PFN_cuCtxSetCurrent_v4000)itest_sym(f, "cuCtxSetCurrent");
    f->load_data = (PFN_cuModuleLoadData_v2000)itest_sym(f, "cuModuleLoadData");
    f->stream_create = (PFN_cuStreamCreate_v2000)itest_sym(f, "cuStreamCreate");
    f->stream_sync = (PFN_cuStreamSynchronize_v2000)itest_sym(f, "cuStreamSynchronize");
    f->ctx_sync = (PFN_cuCtxSynchronize_v2000)itest_sym(f, "cuCtxSynchronize");
    f->ptr_attr = (PFN_cuPointerGetAttribute_v4000)itest_sym(f, "cuPointerGetAttribute");
    f->ctx_device = (PFN_cuCtxGetDevice_v2000)itest_sym(f, "cuCtxGetDevice");
    f->lib_load = (PFN_cuLibraryLoadData_v12000)dlsym(f->lib, "cuLibraryLoadData");
    f->default_pool = (PFN_cuDeviceGetDefaultMemPool_v11020)dlsym(f->lib, "cuDeviceGetDefaultMemPool");
    f->alloc = (PFN_cuMemAlloc_v3020)itest_sym(f, "cuMemAlloc_v2");
    f->free_ = (PFN_cuMemFree_v3020)itest_sym(f, "cuMemFree_v2");
    f->alloc_async = (PFN_cuMemAllocAsync_v11020)itest_sym(f, "cuMemAllocAsync");
    f->device_get = (PFN_cuDeviceGet_v2000)itest_sym(f, "cuDeviceGet");
    f->retain = (PFN_cuDevicePrimaryCtxRetain_v7000)itest_sym(f, "cuDevicePrimaryCtxRetain");
    f->get_function = (PFN_cuModuleGetFunction_v2000)itest_sym(f, "cuModuleGetFunction");

    ITEST_CU(f->init(0));
    ITEST_CU(f->device_get(&f->dev, 0));
    ITEST_CU(f->retain(&f->ctx, f->dev));
    ITEST_CU(f->set_current(f->ctx));
    const char *ptx_path = getenv("ITEST_PTX");
    if (ptx_path == NULL)
        ITEST_FAIL("ITEST_PTX (path of kernels.ptx) is not set");
    f->ptx_path = ptx_path;
    size_t len;
    char *ptx = itest_read_file(ptx_path, &len);
    ITEST_CU(f->load_data(&f->mod, ptx));
    ITEST_CU(f->get_function(&f->fn, f->mod, "ash_itest_fill"));
    if (f->lib_load != NULL && f->lib_load(&f->library, ptx, NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS)
        f->library = NULL;
    free(ptx);
    ITEST_CU(f->stream_create(&f->stream, 0));
    ITEST_CU(f->alloc(&f->dbuf, ITEST_N * sizeof(int)));
    ITEST_CU(f->alloc(&f->dbuf2, ITEST_N * sizeof(int)));
    if (f->default_pool == NULL || f->default_pool(&f->pool, f->dev) != CUDA_SUCCESS)
        f->pool = NULL;
    return 0;
}

/* Returns 0, or 77 when the driver is not hostcuda (no call counters). */
static inline int itest_setup(itest_fix_t *f)
{
    return itest_open(f, 1);
}

static inline int itest_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* VMM helpers for itest_call: a 2 MiB reservation, physical handle and mapping on the fixture's
 * device, made and undone through the driver handle (the shim's hooks when preloaded). */
typedef struct {
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
} itest_vmm_t;
#define ITEST_VMM_SIZE ((size_t)2 << 20)
static inline CUmemAllocationProp itest_vmm_prop(itest_fix_t *f)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = f->dev;
    return prop;
}
static inline void itest_vmm_make(itest_fix_t *f, itest_vmm_t *v, int reserve, int create, int map)
{
    CUmemAllocationProp prop = itest_vmm_prop(f);
    if (reserve)
        ITEST_CU(((PFN_cuMemAddressReserve_v10020)itest_sym(f, "cuMemAddressReserve"))(&v->va, ITEST_VMM_SIZE, 0, 0, 0));
    if (create)
        ITEST_CU(((PFN_cuMemCreate_v10020)itest_sym(f, "cuMemCreate"))(&v->h, ITEST_VMM_SIZE, &prop, 0));
    if (map)
        ITEST_CU(((PFN_cuMemMap_v10020)itest_sym(f, "cuMemMap"))(v->va, ITEST_VMM_SIZE, 0, v->h, 0));
}
static inline void itest_vmm_undo(itest_fix_t *f, itest_vmm_t *v, int unmap, int release, int free_)
{
    if (unmap)
        ITEST_CU(((PFN_cuMemUnmap_v10020)itest_sym(f, "cuMemUnmap"))(v->va, ITEST_VMM_SIZE));
    if (release)
        ITEST_CU(((PFN_cuMemRelease_v10020)itest_sym(f, "cuMemRelease"))(v->h));
    if (free_)
        ITEST_CU(((PFN_cuMemAddressFree_v10020)itest_sym(f, "cuMemAddressFree"))(v->va, ITEST_VMM_SIZE));
}

/* Graph helpers for itest_call: a graph holding one kernel node (ash_itest_fill) made through
 * the driver handle, optionally instantiated; the node parameters in their three forms. */
typedef struct {
    CUgraph g;
    CUgraphNode n;
    CUgraphExec x;
    CUDA_KERNEL_NODE_PARAMS kp;
    CUDA_KERNEL_NODE_PARAMS_v1 kp1;
    CUgraphNodeParams np;
} itest_graph_t;
static inline void itest_graph_make(itest_fix_t *f, itest_graph_t *t, void **params, int node, int exec)
{
    memset(t, 0, sizeof *t);
    t->kp.func = f->fn;
    t->kp.gridDimX = t->kp.gridDimY = t->kp.gridDimZ = 1;
    t->kp.blockDimX = ITEST_N;
    t->kp.blockDimY = t->kp.blockDimZ = 1;
    t->kp.kernelParams = params;
    memcpy(&t->kp1, &t->kp, sizeof t->kp1); /* v1 is v2's first fields */
    t->np.type = CU_GRAPH_NODE_TYPE_KERNEL;
    memcpy(&t->np.kernel, &t->kp, sizeof t->kp);
    ITEST_CU(((PFN_cuGraphCreate_v10000)itest_sym(f, "cuGraphCreate"))(&t->g, 0));
    if (node)
        ITEST_CU(((PFN_cuGraphAddKernelNode_v12000)itest_sym(f, "cuGraphAddKernelNode_v2"))(&t->n, t->g, NULL, 0, &t->kp));
    if (exec)
        ITEST_CU(((PFN_cuGraphInstantiateWithFlags_v11040)itest_sym(f, "cuGraphInstantiateWithFlags"))(&t->x, t->g, 0));
}
static inline void itest_graph_undo(itest_fix_t *f, itest_graph_t *t)
{
    if (t->x)
        ITEST_CU(((PFN_cuGraphExecDestroy_v10000)itest_sym(f, "cuGraphExecDestroy"))(t->x));
    ITEST_CU(((PFN_cuGraphDestroy_v10000)itest_sym(f, "cuGraphDestroy"))(t->g));
}

/* Call p == exported symbol `name` with valid arguments; returns its CUresult, or -1 if this
 * helper does not know the name. Allocations it makes are freed (through the program's own
 * cuMemFree_v2, i.e. the shim's hook when preloaded). */
static inline int itest_call(itest_fix_t *f, const char *name, void *p)
{
    CUresult r;
    CUdeviceptr d = 0;
    int n = ITEST_N;
    CUdeviceptr dst = f->dbuf, src = f->dbuf2;
    void *params[] = {&f->dbuf, &n, &n};
    int v = 7;
    params[1] = &v;
#define IS(s) (strcmp(name, s) == 0)
#define IS2(s) (IS(s) || IS(s "_ptsz") || IS(s "_ptds"))
    if (IS("cuMemAlloc_v2")) {
        r = ((PFN_cuMemAlloc_v3020)p)(&d, 4096);
    } else if (IS("cuMemAllocPitch_v2")) {
        size_t pitch = 0;
        r = ((PFN_cuMemAllocPitch_v3020)p)(&d, &pitch, 100, 4, 4);
    } else if (IS("cuMemAllocManaged")) {
        r = ((PFN_cuMemAllocManaged_v6000)p)(&d, 4096, CU_MEM_ATTACH_GLOBAL);
    } else if (IS2("cuMemAllocAsync")) {
        r = ((PFN_cuMemAllocAsync_v11020)p)(&d, 4096, f->stream);
        if (r == CUDA_SUCCESS)
            f->stream_sync(f->stream);
    } else if (IS2("cuMemAllocFromPoolAsync")) {
        r = ((PFN_cuMemAllocFromPoolAsync_v11020)p)(&d, 4096, f->pool, f->stream);
        if (r == CUDA_SUCCESS)
            f->stream_sync(f->stream);
    } else if (IS("cuMemFree_v2")) {
        ITEST_CU(f->alloc(&d, 512));
        r = ((PFN_cuMemFree_v3020)p)(d);
        d = 0;
    } else if (IS2("cuMemFreeAsync")) {
        ITEST_CU(f->alloc_async(&d, 512, f->stream));
        r = ((PFN_cuMemFreeAsync_v11020)p)(d, f->stream);
        f->stream_sync(f->stream);
        d = 0;
    } else if (IS2("cuMemcpyHtoD_v2")) {
        r = ((PFN_cuMemcpyHtoD_v3020)p)(dst, f->host, sizeof f->host);
    } else if (IS2("cuMemcpyDtoH_v2")) {
        r = ((PFN_cuMemcpyDtoH_v3020)p)(f->host, src, sizeof f->host);
    } else if (IS2("cuMemcpyDtoD_v2") || IS2("cuMemcpy")) {
        r = ((PFN_cuMemcpy_v4000)p)(dst, src, sizeof f->host);
    } else if (IS2("cuMemcpyHtoDAsync_v2")) {
        r = ((PFN_cuMemcpyHtoDAsync_v3020)p)(dst, f->host, sizeof f->host, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemcpyDtoHAsync_v2")) {
        r = ((PFN_cuMemcpyDtoHAsync_v3020)p)(f->host, src, sizeof f->host, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemcpyDtoDAsync_v2") || IS2("cuMemcpyAsync")) {
        r = ((PFN_cuMemcpyAsync_v4000)p)(dst, src, sizeof f->host, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemcpyPeer")) {
        r = ((PFN_cuMemcpyPeer_v4000)p)(dst, f->ctx, src, f->ctx, sizeof f->host);
    } else if (IS2("cuMemcpyPeerAsync")) {
        r = ((PFN_cuMemcpyPeerAsync_v4000)p)(dst, f->ctx, src, f->ctx, sizeof f->host, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemsetD8_v2")) {
        r = ((PFN_cuMemsetD8_v3020)p)(dst, 1, 16);
    } else if (IS2("cuMemsetD16_v2")) {
        r = ((PFN_cuMemsetD16_v3020)p)(dst, 1, 16);
    } else if (IS2("cuMemsetD32_v2")) {
        r = ((PFN_cuMemsetD32_v3020)p)(dst, 1, 16);
    } else if (IS2("cuMemsetD8Async")) {
        r = ((PFN_cuMemsetD8Async_v3020)p)(dst, 1, 16, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemsetD16Async")) {
        r = ((PFN_cuMemsetD16Async_v3020)p)(dst, 1, 16, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuMemsetD32Async")) {
        r = ((PFN_cuMemsetD32Async_v3020)p)(dst, 1, 16, f->stream);
        f->stream_sync(f->stream);
    } else if (IS2("cuLaunchKernel")) {
        r = ((PFN_cuLaunchKernel_v4000)p)(f->fn, 1, 1, 1, ITEST_N, 1, 1, 0, f->stream, params, NULL);
        f->stream_sync(f->stream);
    } else if (IS2("cuLaunchKernelEx")) {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = ITEST_N;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = f->stream;
        r = ((PFN_cuLaunchKernelEx_v11060)p)(&cfg, f->fn, params, NULL);
        f->stream_sync(f->stream);
    } else if (IS2("cuLaunchCooperativeKernel")) {
        r = ((PFN_cuLaunchCooperativeKernel_v9000)p)(f->fn, 1, 1, 1, ITEST_N, 1, 1, 0, f->stream, params);
        f->stream_sync(f->stream);
    } else if (IS("cuModuleLoad")) {   /* the image loads: ITEST_PTX, as a file or its text */
        CUmodule m;
        r = ((PFN_cuModuleLoad_v2000)p)(&m, f->ptx_path);
    } else if (IS("cuModuleLoadData") || IS("cuModuleLoadDataEx") || IS("cuModuleLoadFatBinary") ||
               IS("cuLibraryLoadData")) {
        size_t len;
        char *img = itest_read_file(f->ptx_path, &len);
        CUmodule m;
        CUlibrary lib;
        if (IS("cuModuleLoadData"))
            r = ((PFN_cuModuleLoadData_v2000)p)(&m, img);
        else if (IS("cuModuleLoadDataEx"))
            r = ((PFN_cuModuleLoadDataEx_v2010)p)(&m, img, 0, NULL, NULL);
        else if (IS("cuModuleLoadFatBinary"))
            r = ((PFN_cuModuleLoadFatBinary_v2000)p)(&m, img);
        else
            r = ((PFN_cuLibraryLoadData_v12000)p)(&lib, img, NULL, NULL, 0, NULL, NULL, 0);
        free(img);
    } else if (IS("cuLibraryLoadFromFile")) {
        CUlibrary lib;
        r = ((PFN_cuLibraryLoadFromFile_v12000)p)(&lib, f->ptx_path, NULL, NULL, 0, NULL, NULL, 0);
    } else if (IS("cuModuleGetFunction")) {
        CUfunction fn;
        r = ((PFN_cuModuleGetFunction_v2000)p)(&fn, f->mod, "ash_itest_fill");
    } else if (IS("cuLibraryGetKernel")) {
        CUkernel k;
        r = ((PFN_cuLibraryGetKernel_v12000)p)(&k, f->library, "ash_itest_fill");
        if (r == CUDA_SUCCESS)
            f->kern = k;
    } else if (IS("cuKernelGetFunction")) {
        CUfunction fn;
        r = ((PFN_cuKernelGetFunction_v12000)p)(&fn, f->kern);
    } else if (IS("cuDeviceGet")) {
        CUdevice dv;
        r = ((PFN_cuDeviceGet_v2000)p)(&dv, 0);
    } else if (IS("cuDeviceGetCount")) {
        int c;
        r = ((PFN_cuDeviceGetCount_v2000)p)(&c);
    } else if (IS("cuDevicePrimaryCtxRetain")) {
        CUcontext c;
        r = ((PFN_cuDevicePrimaryCtxRetain_v7000)p)(&c, f->dev);
    } else if (IS("cuCtxCreate_v2")) {
        CUcontext c;
        r = ((PFN_cuCtxCreate_v3020)p)(&c, 0, f->dev);
        f->set_current(f->ctx);
    } else if (IS("cuCtxCreate_v3")) {
        CUcontext c;
        r = ((PFN_cuCtxCreate_v11040)p)(&c, NULL, 0, 0, f->dev);
        f->set_current(f->ctx);
    } else if (IS("cuCtxCreate_v4")) {
        CUcontext c;
        r = ((PFN_cuCtxCreate_v12050)p)(&c, NULL, 0, f->dev);
        f->set_current(f->ctx);
    } else if (IS("cuDeviceGetAttribute")) {
        int a;
        r = ((PFN_cuDeviceGetAttribute_v2000)p)(&a, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, f->dev);
    } else if (IS("cuDeviceGetName")) {
        char nm[128];
        r = ((PFN_cuDeviceGetName_v2000)p)(nm, sizeof nm, f->dev);
    } else if (IS("cuDeviceTotalMem_v2")) {
        size_t b;
        r = ((PFN_cuDeviceTotalMem_v3020)p)(&b, f->dev);
    } else if (IS("cuDeviceGetUuid") || IS("cuDeviceGetUuid_v2")) {
        CUuuid u;
        r = ((PFN_cuDeviceGetUuid_v11040)p)(&u, f->dev);
    } else if (IS("cuDeviceGetPCIBusId")) {
        char bus[32];
        r = ((PFN_cuDeviceGetPCIBusId_v4010)p)(bus, sizeof bus, f->dev);
    } else if (IS("cuDeviceGetByPCIBusId")) {
        CUdevice dv;
        r = ((PFN_cuDeviceGetByPCIBusId_v4010)p)(&dv, "0000:18:00.0");
    } else if (IS("cuDeviceGetDefaultMemPool")) {
        CUmemoryPool pl;
        r = ((PFN_cuDeviceGetDefaultMemPool_v11020)p)(&pl, f->dev);
    } else if (IS("cuDeviceGetMemPool")) {
        CUmemoryPool pl;
        r = ((PFN_cuDeviceGetMemPool_v11020)p)(&pl, f->dev);
    } else if (IS("cuDevicePrimaryCtxGetState")) {
        unsigned fl;
        int act;
        r = ((PFN_cuDevicePrimaryCtxGetState_v7000)p)(f->dev, &fl, &act);
    } else if (IS("cuDevicePrimaryCtxSetFlags_v2") || IS("cuDevicePrimaryCtxSetFlags")) {
        r = ((PFN_cuDevicePrimaryCtxSetFlags_v11000)p)(f->dev, 0); /* the 7000 variant: same type */
    } else if (IS("cuDevicePrimaryCtxRelease_v2") || IS("cuDevicePrimaryCtxRelease")) {
        CUcontext c; /* retained once more first: the fixture's stays */
        ITEST_CU(f->retain(&c, f->dev));
        r = ((PFN_cuDevicePrimaryCtxRelease_v11000)p)(f->dev);
    } else if (IS("cuDevicePrimaryCtxReset_v2") || IS("cuDevicePrimaryCtxReset")) {
        r = ((PFN_cuDevicePrimaryCtxReset_v11000)p)(-1); /* no device: the fixture's context must live */
    } else if (IS("cuMemGetAllocationGranularity")) {
        size_t g;
        CUmemAllocationProp prop = itest_vmm_prop(f);
        r = ((PFN_cuMemGetAllocationGranularity_v10020)p)(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    } else if (IS("cuMemCreate")) {
        itest_vmm_t v = {0, 0};
        CUmemAllocationProp prop = itest_vmm_prop(f);
        r = ((PFN_cuMemCreate_v10020)p)(&v.h, ITEST_VMM_SIZE, &prop, 0);
        if (r == CUDA_SUCCESS)
            itest_vmm_undo(f, &v, 0, 1, 0);
    } else if (IS("cuMemMap")) {
        itest_vmm_t v = {0, 0};
        itest_vmm_make(f, &v, 1, 1, 0);
        r = ((PFN_cuMemMap_v10020)p)(v.va, ITEST_VMM_SIZE, 0, v.h, 0);
        itest_vmm_undo(f, &v, r == CUDA_SUCCESS, 1, 1);
    } else if (IS("cuMemSetAccess")) {
        itest_vmm_t v = {0, 0};
        itest_vmm_make(f, &v, 1, 1, 1);
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        acc.location.id = f->dev;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        r = ((PFN_cuMemSetAccess_v10020)p)(v.va, ITEST_VMM_SIZE, &acc, 1);
        itest_vmm_undo(f, &v, 1, 1, 1);
    } else if (IS("cuMemUnmap")) {
        itest_vmm_t v = {0, 0};
        itest_vmm_make(f, &v, 1, 1, 1);
        r = ((PFN_cuMemUnmap_v10020)p)(v.va, ITEST_VMM_SIZE);
        itest_vmm_undo(f, &v, r != CUDA_SUCCESS, 1, 1);
    } else if (IS("cuMemAddressFree")) {
        itest_vmm_t v = {0, 0};
        itest_vmm_make(f, &v, 1, 0, 0);
        r = ((PFN_cuMemAddressFree_v10020)p)(v.va, ITEST_VMM_SIZE);
    } else if (!strncmp(name, "cuGraph", 7)) { /* a kernel node added, or set, in a graph or an exec */
        itest_graph_t t;
        CUgraphNode n = NULL;
        int set = strstr(name, "SetParams") != NULL, exec = !strncmp(name, "cuGraphExec", 11);
        itest_graph_make(f, &t, params, set, exec);
        if (IS("cuGraphAddKernelNode"))
            r = ((PFN_cuGraphAddKernelNode_v10000)p)(&n, t.g, NULL, 0, &t.kp1);
        else if (IS("cuGraphAddKernelNode_v2"))
            r = ((PFN_cuGraphAddKernelNode_v12000)p)(&n, t.g, NULL, 0, &t.kp);
        else if (IS("cuGraphAddNode"))
            r = ((PFN_cuGraphAddNode_v12020)p)(&n, t.g, NULL, 0, &t.np);
        else if (IS("cuGraphAddNode_v2"))
            r = ((PFN_cuGraphAddNode_v12030)p)(&n, t.g, NULL, NULL, 0, &t.np);
        else if (IS("cuGraphKernelNodeSetParams"))
            r = ((PFN_cuGraphKernelNodeSetParams_v10000)p)(t.n, &t.kp1);
        else if (IS("cuGraphKernelNodeSetParams_v2"))
            r = ((PFN_cuGraphKernelNodeSetParams_v12000)p)(t.n, &t.kp);
        else if (IS("cuGraphNodeSetParams"))
            r = ((PFN_cuGraphNodeSetParams_v12020)p)(t.n, &t.np);
        else if (IS("cuGraphExecKernelNodeSetParams"))
            r = ((PFN_cuGraphExecKernelNodeSetParams_v10010)p)(t.x, t.n, &t.kp1);
        else if (IS("cuGraphExecKernelNodeSetParams_v2"))
            r = ((PFN_cuGraphExecKernelNodeSetParams_v12000)p)(t.x, t.n, &t.kp);
        else if (IS("cuGraphExecNodeSetParams"))
            r = ((PFN_cuGraphExecNodeSetParams_v12020)p)(t.x, t.n, &t.np);
        else
            r = (CUresult)-1;
        itest_graph_undo(f, &t);
        if ((int)r == -1)
            return -1;
    } else if (IS("cuGetProcAddress")) {
        void *q = NULL;
        r = ((PFN_cuGetProcAddress_v11030)p)("cuInit", &q, 12000, 0);
    } else if (IS("cuGetProcAddress_v2")) {
        void *q = NULL;
        CUdriverProcAddressQueryResult st;
        r = ((PFN_cuGetProcAddress_v12000)p)("cuInit", &q, 12000, 0, &st);
    } else {
        return -1;
    }
#undef IS
#undef IS2
    if (d != 0)
        f->free_(d);
    return (int)r;
}

/* The exported twin of a _ptsz/_ptds name (or the _ptsz/_ptds of a plain one) that the driver has,
 * written into buf; "" when none. */
static inline const char *itest_twin(itest_fix_t *f, const char *name, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t n = strlen(name);
    if (itest_ends_with(name, "_ptsz") || itest_ends_with(name, "_ptds")) {
        snprintf(buf, cap, "%.*s", (int)(n - 5), name);
    } else {
        snprintf(buf, cap, "%s_ptsz", name);
        if (dlsym(f->lib, buf) == NULL)
            snprintf(buf, cap, "%s_ptds", name);
    }
    if (dlsym(f->lib, buf) == NULL)
        buf[0] = '\0';
    return buf;
}

#endif /* ITEST_H */
