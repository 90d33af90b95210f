/* hcrt_device.c — the runtime's device-wide settings and handles on the driver's public calls:
 * cudaDeviceSet/GetCacheConfig and Set/GetSharedMemConfig (cuCtx*), cudaFuncSetSharedMemConfig,
 * cudaFuncGetName/GetParamInfo (cuFunc*), cudaCtxResetPersistingL2Cache, peer access
 * (cudaDeviceEnable/DisablePeerAccess on cuCtxEnable/DisablePeerAccess with the peer device's
 * primary context, retained once here and kept), cudaMemcpyPeer(+Async) (one unified address
 * space: an ordinary copy once both devices are checked), cudaMalloc3D (cuMemAllocPitch) and the
 * IPC handles (cuIpc*: hostcuda answers as a GPU without IPC support). Every call enters the
 * runtime's context first (hcrt_enter). Threading: the retained peer contexts under one mutex.
 * Must not: answer a call without the driver (the shim must see each one). */
#include <pthread.h>
#include <stdint.h>

#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)
#define HCRT_PEER_MAX 64

/* the shared-memory configuration calls are deprecated in CUDA 13's headers, still exported */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

_Static_assert((int)cudaFuncCachePreferEqual == (int)CU_FUNC_CACHE_PREFER_EQUAL &&
               (int)cudaSharedMemBankSizeEightByte == (int)CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE,
               "runtime and driver cache/shared-memory enums number differently");
_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle) &&
               sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle), "IPC handle layouts differ");

static int hcrt_device_ok(int dev)
{
    int n = 0;
    return cuDeviceGetCount(&n) == CUDA_SUCCESS && dev >= 0 && dev < n;
}

HCRT_API cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c)
{
    ENTER();
    return HCRT_CU(cuCtxSetCacheConfig((CUfunc_cache)c));
}

HCRT_API cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *c)
{
    ENTER();
    return HCRT_CU(cuCtxGetCacheConfig((CUfunc_cache *)c));
}

HCRT_API cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig c)
{
    ENTER();
    return HCRT_CU(cuCtxSetSharedMemConfig((CUsharedconfig)c));
}

HCRT_API cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *c)
{
    ENTER();
    return HCRT_CU(cuCtxGetSharedMemConfig((CUsharedconfig *)c));
}

HCRT_API cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig c)
{
    ENTER();
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    return e != cudaSuccess ? e : HCRT_CU(cuFuncSetSharedMemConfig(f, (CUsharedconfig)c));
}

HCRT_API cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    if (name == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    return e != cudaSuccess ? e : HCRT_CU(cuFuncGetName(name, f));
}

HCRT_API cudaError_t cudaFuncGetParamInfo(const void *func, size_t index, size_t *offset, size_t *size)
{
    ENTER();
    CUfunction f;
    cudaError_t e = hcrt_func_of(func, &f);
    return e != cudaSuccess ? e : HCRT_CU(cuFuncGetParamInfo(f, index, offset, size));
}

HCRT_API cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    ENTER();
    return HCRT_CU(cuCtxResetPersistingL2Cache());
}

/* ---- peers ---- */

static pthread_mutex_t hcrt_peer_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext hcrt_peer_ctx[HCRT_PEER_MAX];

static cudaError_t hcrt_peer_context(int dev, CUcontext *out)
{
    if (!hcrt_device_ok(dev) || dev >= HCRT_PEER_MAX)
        return hcrt_ret(cudaErrorInvalidDevice);
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&hcrt_peer_lock);
    if (hcrt_peer_ctx[dev] == NULL)
        r = cuDevicePrimaryCtxRetain(&hcrt_peer_ctx[dev], dev);
    *out = hcrt_peer_ctx[dev];
    pthread_mutex_unlock(&hcrt_peer_lock);
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags)
{
    ENTER();
    if (flags != 0)
        return hcrt_ret(cudaErrorInvalidValue);
    CUdevice self;
    int can = 0;
    cudaError_t e = HCRT_CU(cuCtxGetDevice(&self));
    if (e != cudaSuccess)
        return e;
    if (!hcrt_device_ok(peer) || cuDeviceCanAccessPeer(&can, self, peer) != CUDA_SUCCESS || !can)
        return hcrt_ret(cudaErrorInvalidDevice);   /* the same device, or one that cannot be reached */
    CUcontext pc;
    if ((e = hcrt_peer_context(peer, &pc)) != cudaSuccess)
        return e;
    return HCRT_CU(cuCtxEnablePeerAccess(pc, 0));
}

HCRT_API cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    ENTER();
    CUcontext pc;
    cudaError_t e = hcrt_peer_context(peer, &pc);
    return e != cudaSuccess ? e : HCRT_CU(cuCtxDisablePeerAccess(pc));
}

static cudaError_t hcrt_copy_peer(void *dst, int ddev, const void *src, int sdev, size_t n, int async, cudaStream_t s)
{
    ENTER();
    if (!hcrt_device_ok(ddev) || !hcrt_device_ok(sdev))
        return hcrt_ret(cudaErrorInvalidDevice);
    if (n == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, sp = (CUdeviceptr)(uintptr_t)src;
    return async ? HCRT_CU(cuMemcpyAsync(d, sp, n, (CUstream)s)) : HCRT_CU(cuMemcpy(d, sp, n));
}

HCRT_API cudaError_t cudaMemcpyPeer(void *dst, int ddev, const void *src, int sdev, size_t n)
{
    return hcrt_copy_peer(dst, ddev, src, sdev, n, 0, 0);
}

HCRT_API cudaError_t cudaMemcpyPeerAsync(void *dst, int ddev, const void *src, int sdev, size_t n, cudaStream_t s)
{
    return hcrt_copy_peer(dst, ddev, src, sdev, n, 1, s);
}

/* ---- pitched allocation ---- */

HCRT_API cudaError_t cudaMalloc3D(struct cudaPitchedPtr *p, struct cudaExtent e)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    p->ptr = NULL;
    p->pitch = 0;
    p->xsize = e.width;
    p->ysize = e.height;
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return cudaSuccess;   /* nothing to allocate, as cudaMalloc(0) */
    if (e.height > SIZE_MAX / e.depth)
        return hcrt_ret(cudaErrorMemoryAllocation);
    CUdeviceptr d = 0;
    size_t pitch = 0;
    cudaError_t r = HCRT_CU(cuMemAllocPitch(&d, &pitch, e.width, e.height * e.depth, 4));
    if (r == cudaSuccess) {
        p->ptr = (void *)(uintptr_t)d;
        p->pitch = pitch;
    }
    return r;
}

/* ---- IPC ---- */

HCRT_API cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *h, void *p)
{
    ENTER();
    return HCRT_CU(cuIpcGetMemHandle((CUipcMemHandle *)h, (CUdeviceptr)(uintptr_t)p));
}

HCRT_API cudaError_t cudaIpcOpenMemHandle(void **p, cudaIpcMemHandle_t h, unsigned flags)
{
    ENTER();
    CUipcMemHandle ch;
    _Static_assert(sizeof ch == sizeof h, "IPC handle sizes differ");
    __builtin_memcpy(&ch, &h, sizeof ch);
    return HCRT_CU(cuIpcOpenMemHandle((CUdeviceptr *)p, ch, flags));
}

HCRT_API cudaError_t cudaIpcCloseMemHandle(void *p)
{
    ENTER();
    return HCRT_CU(cuIpcCloseMemHandle((CUdeviceptr)(uintptr_t)p));
}

HCRT_API cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *h, cudaEvent_t ev)
{
    ENTER();
    return HCRT_CU(cuIpcGetEventHandle((CUipcEventHandle *)h, (CUevent)ev));
}

HCRT_API cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *ev, cudaIpcEventHandle_t h)
{
    ENTER();
    CUipcEventHandle ch;
    __builtin_memcpy(&ch, &h, sizeof ch);
    return HCRT_CU(cuIpcOpenEventHandle((CUevent *)ev, ch));
}
