/* hcrt_core.c — hostcudart's errors, devices and contexts.
 * Errors: each thread keeps its last error (cudaGetLastError returns and clears it,
 * cudaPeekAtLastError only returns it); a sticky error (the context-corrupting class NVIDIA
 * documents: illegal address, launch failure, ...) is kept for the process: every later call
 * returns it and cudaGetLastError does not clear it. Contexts: a runtime call uses the thread's
 * current context when the program made one (cuCtxCreate), else retains the primary context of
 * the thread's device (cudaSetDevice, default 0) and makes it current, as NVIDIA's runtime does.
 * Device properties are read from cuDeviceGetAttribute, one field at a time.
 * Must not: call the driver's private export tables (cuGetExportTable) or any check of NVIDIA's;
 * clear a sticky error. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hcrt_internal.h"

#define HCRT_MAX_DEVICES 64

static _Thread_local cudaError_t hcrt_last = cudaSuccess;
static _Thread_local int hcrt_device = 0;
static _Atomic int hcrt_sticky = cudaSuccess;
static pthread_mutex_t hcrt_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext hcrt_primary[HCRT_MAX_DEVICES]; /* retained primary contexts, under hcrt_lock */
static pthread_once_t hcrt_once = PTHREAD_ONCE_INIT;
static CUresult hcrt_init_result;

static int hcrt_is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchTimeout: case cudaErrorAssert:
    case cudaErrorHardwareStackError: case cudaErrorIllegalInstruction: case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc: case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
        return 1;
    default:
        return 0;
    }
}

cudaError_t hcrt_ret(cudaError_t e)
{
    int sticky = atomic_load(&hcrt_sticky);
    if (sticky != cudaSuccess)
        e = (cudaError_t)sticky;
    if (e == cudaSuccess)
        return e;
    if (hcrt_is_sticky(e)) {
        int expected = cudaSuccess;
        atomic_compare_exchange_strong(&hcrt_sticky, &expected, (int)e);
    }
    hcrt_last = e;
    return e;
}

static const char *hcrt_error_name(int v)
{
    switch (v) {
#define HCRT_ERR(name, value) case value: return #name;
#include "hcrt_errors.def"
#undef HCRT_ERR
    default: return NULL;
    }
}

/* the driver's codes are the runtime's, number for number, for every code both define */
cudaError_t hcrt_from_cu(CUresult r)
{
    if (r == CUDA_SUCCESS)
        return cudaSuccess;
    if (r == CUDA_ERROR_CONTEXT_ALREADY_CURRENT || hcrt_error_name((int)r) == NULL)
        return cudaErrorUnknown;
    return (cudaError_t)r;
}

static void hcrt_init_once(void) { hcrt_init_result = cuInit(0); }

static cudaError_t hcrt_init(void)
{
    pthread_once(&hcrt_once, hcrt_init_once);
    if (hcrt_init_result == CUDA_ERROR_NO_DEVICE)
        return cudaErrorNoDevice;
    return hcrt_init_result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInitializationError;
}

static cudaError_t hcrt_primary_current(int dev)
{
    CUcontext ctx = NULL;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&hcrt_lock);
    if (hcrt_primary[dev] == NULL)
        r = cuDevicePrimaryCtxRetain(&hcrt_primary[dev], dev);
    ctx = hcrt_primary[dev];
    pthread_mutex_unlock(&hcrt_lock);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    return hcrt_from_cu(r);
}

static cudaError_t hcrt_check_device(int dev)
{
    int n = 0;
    cudaError_t e = hcrt_init();
    if (e != cudaSuccess)
        return e;
    if (cuDeviceGetCount(&n) != CUDA_SUCCESS || dev < 0 || dev >= n || dev >= HCRT_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    return cudaSuccess;
}

cudaError_t hcrt_enter(void)
{
    int sticky = atomic_load(&hcrt_sticky);
    if (sticky != cudaSuccess)
        return hcrt_ret((cudaError_t)sticky);
    cudaError_t e = hcrt_init();
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUcontext cur = NULL;
    if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL)
        return cudaSuccess;
    e = hcrt_check_device(hcrt_device);
    if (e == cudaSuccess)
        e = hcrt_primary_current(hcrt_device);
    return hcrt_ret(e);
}

int hcrt_current_device(void)
{
    CUdevice d;
    CUcontext cur = NULL;
    if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL && cuCtxGetDevice(&d) == CUDA_SUCCESS)
        return (int)d;
    return hcrt_device;
}

cudaError_t hcrt_unimplemented(const char *name, int *said)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) {
        char line[160];
        int n = snprintf(line, sizeof line, "hostcudart: %s is not implemented\n", name);
        if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
            (void)0;
    }
    return hcrt_ret(cudaErrorNotSupported);
}

/* ---- errors ---- */

/* a sticky error is every thread's, from the moment any thread saw it */
HCRT_API cudaError_t cudaGetLastError(void)
{
    int sticky = atomic_load(&hcrt_sticky);
    if (sticky != cudaSuccess)
        return hcrt_last = (cudaError_t)sticky;
    cudaError_t e = hcrt_last;
    hcrt_last = cudaSuccess;
    return e;
}

HCRT_API cudaError_t cudaPeekAtLastError(void)
{
    int sticky = atomic_load(&hcrt_sticky);
    return sticky != cudaSuccess ? (cudaError_t)sticky : hcrt_last;
}

HCRT_API const char *cudaGetErrorName(cudaError_t e)
{
    const char *n = hcrt_error_name((int)e);
    return n != NULL ? n : "unrecognized error code"; /* as NVIDIA documents it */
}

HCRT_API const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInitializationError: return "initialization error";
    default: break;
    }
    const char *s = NULL;
    if (hcrt_error_name((int)e) != NULL && cuGetErrorString((CUresult)e, &s) == CUDA_SUCCESS && s != NULL)
        return s;
    return hcrt_error_name((int)e) != NULL ? hcrt_error_name((int)e) : "unrecognized error code";
}

/* ---- versions, devices ---- */

HCRT_API cudaError_t cudaDriverGetVersion(int *v)
{
    if (v == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    return HCRT_CU(cuDriverGetVersion(v));
}

HCRT_API cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (v == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

HCRT_API cudaError_t cudaGetDeviceCount(int *n)
{
    if (n == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_init();
    if (e != cudaSuccess) {
        *n = 0;
        return hcrt_ret(e);
    }
    return HCRT_CU(cuDeviceGetCount(n));
}

HCRT_API cudaError_t cudaGetDevice(int *dev)
{
    if (dev == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_init();
    if (e != cudaSuccess)
        return hcrt_ret(e);
    *dev = hcrt_current_device();
    return hcrt_ret(cudaSuccess);
}

HCRT_API cudaError_t cudaSetDevice(int dev)
{
    cudaError_t e = hcrt_check_device(dev);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    hcrt_device = dev;
    return hcrt_ret(hcrt_primary_current(dev));
}

HCRT_API cudaError_t cudaInitDevice(int dev, unsigned dflags, unsigned flags)
{
    (void)dflags;
    if (flags & ~(unsigned)cudaInitDeviceFlagsAreValid)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_check_device(dev);
    if (e == cudaSuccess)
        e = hcrt_primary_current(dev);
    return hcrt_ret(e);
}

HCRT_API cudaError_t cudaChooseDevice(int *dev, const struct cudaDeviceProp *prop)
{
    if (dev == NULL || prop == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_check_device(0);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    *dev = 0; /* the devices are alike: the first one matches as well as any */
    return cudaSuccess;
}

HCRT_API cudaError_t cudaSetDeviceFlags(unsigned flags)
{
    cudaError_t e = hcrt_check_device(hcrt_device);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuDevicePrimaryCtxSetFlags(hcrt_device, flags & ~(unsigned)cudaDeviceMapHost));
}

HCRT_API cudaError_t cudaGetDeviceFlags(unsigned *flags)
{
    if (flags == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuCtxGetFlags(flags));
}

HCRT_API cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuCtxSynchronize());
}

HCRT_API cudaError_t cudaDeviceReset(void)
{
    int sticky = atomic_load(&hcrt_sticky);
    if (sticky != cudaSuccess)
        return hcrt_ret((cudaError_t)sticky);
    int dev = hcrt_current_device();
    cudaError_t e = hcrt_check_device(dev);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    pthread_mutex_lock(&hcrt_lock);
    CUcontext ctx = hcrt_primary[dev];
    hcrt_primary[dev] = NULL;
    pthread_mutex_unlock(&hcrt_lock);
    if (ctx == NULL)
        return cudaSuccess;
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    if (cur == ctx)
        cuCtxSynchronize();
    hcrt_forget_context(ctx);
    CUresult r = cuDevicePrimaryCtxReset(dev);
    if (cur == ctx)
        cuCtxSetCurrent(NULL);
    return HCRT_CU(r);
}

/* a driver entry point the driver may lack (hostcuda has no limits, no profiler): NULL if absent */
static void *hcrt_proc(const char *sym, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(sym, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS)
        return NULL;
    return fn;
}

HCRT_API cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUresult (*fn)(CUlimit, size_t) = (CUresult (*)(CUlimit, size_t))hcrt_proc("cuCtxSetLimit", 3010);
    return fn == NULL ? hcrt_ret(cudaErrorNotSupported) : HCRT_CU(fn((CUlimit)limit, value));
}

HCRT_API cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
    if (value == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUresult (*fn)(size_t *, CUlimit) = (CUresult (*)(size_t *, CUlimit))hcrt_proc("cuCtxGetLimit", 3010);
    return fn == NULL ? hcrt_ret(cudaErrorNotSupported) : HCRT_CU(fn(value, (CUlimit)limit));
}

HCRT_API cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    return HCRT_CU(cuCtxGetStreamPriorityRange(least, greatest));
}

HCRT_API cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int dev)
{
    cudaError_t e = hcrt_check_device(dev);
    return e != cudaSuccess ? hcrt_ret(e) : HCRT_CU(cuDeviceGetPCIBusId(id, len, dev));
}

HCRT_API cudaError_t cudaDeviceGetByPCIBusId(int *dev, const char *id)
{
    cudaError_t e = hcrt_init();
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUdevice d;
    e = HCRT_CU(cuDeviceGetByPCIBusId(&d, id));
    if (e == cudaSuccess && dev != NULL)
        *dev = (int)d;
    return e == cudaSuccess && dev == NULL ? hcrt_ret(cudaErrorInvalidValue) : e;
}

HCRT_API cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    cudaError_t e = hcrt_check_device(dev);
    if (e == cudaSuccess)
        e = hcrt_check_device(peer);
    return e != cudaSuccess ? hcrt_ret(e) : HCRT_CU(cuDeviceCanAccessPeer(can, dev, peer));
}

/* cudaDeviceAttr and CUdevice_attribute number the same attributes alike */
HCRT_API cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int dev)
{
    if (value == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_check_device(dev);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuDeviceGetAttribute(value, (CUdevice_attribute)attr, dev));
}

HCRT_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_check_device(dev);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    memset(p, 0, sizeof *p);
    CUresult r = cuDeviceGetName(p->name, sizeof p->name, dev);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetUuid_v2((CUuuid *)&p->uuid, dev);
    size_t mem = 0;
    if (r == CUDA_SUCCESS)
        r = cuDeviceTotalMem(&mem, dev);
    if (r != CUDA_SUCCESS)
        return HCRT_CU(r);
    p->totalGlobalMem = mem;
    int v;
#define A(field, attr) (p->field = cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_##attr, dev) == CUDA_SUCCESS ? v : 0)
    A(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK);
    A(regsPerBlock, MAX_REGISTERS_PER_BLOCK);
    A(warpSize, WARP_SIZE);
    A(memPitch, MAX_PITCH);
    A(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK);
    A(maxThreadsDim[0], MAX_BLOCK_DIM_X);
    A(maxThreadsDim[1], MAX_BLOCK_DIM_Y);
    A(maxThreadsDim[2], MAX_BLOCK_DIM_Z);
    A(maxGridSize[0], MAX_GRID_DIM_X);
    A(maxGridSize[1], MAX_GRID_DIM_Y);
    A(maxGridSize[2], MAX_GRID_DIM_Z);
    A(totalConstMem, TOTAL_CONSTANT_MEMORY);
    A(major, COMPUTE_CAPABILITY_MAJOR);
    A(minor, COMPUTE_CAPABILITY_MINOR);
    A(textureAlignment, TEXTURE_ALIGNMENT);
    A(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT);
    A(multiProcessorCount, MULTIPROCESSOR_COUNT);
    A(integrated, INTEGRATED);
    A(canMapHostMemory, CAN_MAP_HOST_MEMORY);
    A(surfaceAlignment, SURFACE_ALIGNMENT);
    A(concurrentKernels, CONCURRENT_KERNELS);
    A(ECCEnabled, ECC_ENABLED);
    A(pciBusID, PCI_BUS_ID);
    A(pciDeviceID, PCI_DEVICE_ID);
    A(pciDomainID, PCI_DOMAIN_ID);
    A(tccDriver, TCC_DRIVER);
    A(asyncEngineCount, ASYNC_ENGINE_COUNT);
    A(unifiedAddressing, UNIFIED_ADDRESSING);
    A(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH);
    A(l2CacheSize, L2_CACHE_SIZE);
    A(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE);
    A(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR);
    A(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED);
    A(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED);
    A(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED);
    A(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    A(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR);
    A(managedMemory, MANAGED_MEMORY);
    A(isMultiGpuBoard, MULTI_GPU_BOARD);
    A(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID);
    A(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED);
    A(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS);
    A(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS);
    A(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED);
    A(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
    A(cooperativeLaunch, COOPERATIVE_LAUNCH);
    A(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    A(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
    A(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
    A(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR);
    A(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE);
    A(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK);
    A(hostRegisterSupported, HOST_REGISTER_SUPPORTED);
    A(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED);
    A(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED);
    A(clusterLaunch, CLUSTER_LAUNCH);
    A(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS);
    A(ipcEventSupported, IPC_EVENT_SUPPORTED);
    A(hostNumaId, HOST_NUMA_ID);
#undef A
    return cudaSuccess;
}

/* ---- profiler: the driver's, when it has one; no profiler attached is not an error ---- */

static cudaError_t hcrt_profiler(const char *sym)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUresult (*fn)(void) = (CUresult (*)(void))hcrt_proc(sym, 4000);
    if (fn == NULL)
        return cudaSuccess;
    return HCRT_CU(fn());
}

HCRT_API cudaError_t cudaProfilerStart(void) { return hcrt_profiler("cuProfilerStart"); }
HCRT_API cudaError_t cudaProfilerStop(void) { return hcrt_profiler("cuProfilerStop"); }
