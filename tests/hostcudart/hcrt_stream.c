/* hcrt_stream.c — the runtime calls that come in a legacy and a per-thread-default-stream form.
 * Compiled twice: as is, and with CUDA_API_PER_THREAD_DEFAULT_STREAM, where cuda_runtime_api.h
 * renames each function defined here to its `_ptds`/`_ptsz` twin and cuda.h renames each driver
 * call to the driver's twin, so stream 0 means the legacy stream in one object and the calling
 * thread's default stream in the other, exactly as the driver defines it. Only functions the
 * header renames belong here (another would be defined twice and the link would say so).
 * Must not: define a function the header does not rename (it would be defined twice). */
#include <string.h>

#include "hcrt_internal.h"

static CUstream hcrt_s(cudaStream_t s) { return (CUstream)s; }

static cudaError_t hcrt_kind_ok(enum cudaMemcpyKind kind)
{
    return (unsigned)kind <= cudaMemcpyDefault ? cudaSuccess : cudaErrorInvalidMemcpyDirection;
}

HCRT_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if ((e = hcrt_kind_ok(kind)) != cudaSuccess)
        return hcrt_ret(e);
    if (n == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    return HCRT_CU(cuMemcpy((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n));
}

HCRT_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if ((e = hcrt_kind_ok(kind)) != cudaSuccess)
        return hcrt_ret(e);
    if (n == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    return HCRT_CU(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, hcrt_s(s)));
}

HCRT_API cudaError_t cudaMemset(void *p, int value, size_t n)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if (n == 0)
        return cudaSuccess;
    return HCRT_CU(cuMemsetD8((CUdeviceptr)(uintptr_t)p, (unsigned char)value, n));
}

HCRT_API cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if (n == 0)
        return cudaSuccess;
    return HCRT_CU(cuMemsetD8Async((CUdeviceptr)(uintptr_t)p, (unsigned char)value, n, hcrt_s(s)));
}

/* a symbol copy: the variable's range checked, then an ordinary copy (stream NULL: synchronous) */
static cudaError_t hcrt_symbol_copy(const void *symbol, size_t offset, size_t n, void *host, int to_symbol,
                                    enum cudaMemcpyKind kind, int async, cudaStream_t s)
{
    if (to_symbol ? (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
                  : (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault))
        return hcrt_ret(cudaErrorInvalidMemcpyDirection);
    CUdeviceptr base;
    size_t size;
    cudaError_t e = hcrt_symbol(symbol, &base, &size);
    if (e != cudaSuccess)
        return e;
    if (offset > size || n > size - offset)
        return hcrt_ret(cudaErrorInvalidValue);
    if (n == 0)
        return cudaSuccess;
    CUdeviceptr sym = base + offset, other = (CUdeviceptr)(uintptr_t)host;
    CUdeviceptr dst = to_symbol ? sym : other, src = to_symbol ? other : sym;
    if (async)
        return HCRT_CU(cuMemcpyAsync(dst, src, n, hcrt_s(s)));
    return HCRT_CU(cuMemcpy(dst, src, n));
}

HCRT_API cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t n, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    return hcrt_symbol_copy(symbol, offset, n, (void *)src, 1, kind, 0, 0);
}

HCRT_API cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t n, size_t offset,
                                          enum cudaMemcpyKind kind)
{
    return hcrt_symbol_copy(symbol, offset, n, dst, 0, kind, 0, 0);
}

HCRT_API cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t n, size_t offset,
                                             enum cudaMemcpyKind kind, cudaStream_t s)
{
    return hcrt_symbol_copy(symbol, offset, n, (void *)src, 1, kind, 1, s);
}

HCRT_API cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t n, size_t offset,
                                               enum cudaMemcpyKind kind, cudaStream_t s)
{
    return hcrt_symbol_copy(symbol, offset, n, dst, 0, kind, 1, s);
}

HCRT_API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                      cudaStream_t s)
{
    hcrt_kernel *k = hcrt_kernel_by_host(func);
    if (k == NULL) {
        cudaError_t e = hcrt_enter();
        return e != cudaSuccess ? e : hcrt_ret(cudaErrorInvalidDeviceFunction);
    }
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return hcrt_launch(k, grid, block, args, shared, s ? hcrt_s(s) : CU_STREAM_PER_THREAD);
#else
    return hcrt_launch(k, grid, block, args, shared, hcrt_s(s));
#endif
}

/* a cooperative launch: every block resident at once, so grid-wide sync works; a grid larger than
 * the device holds is refused (cudaErrorCooperativeLaunchTooLarge) */
static cudaError_t launch_coop(const void *func, dim3 grid, dim3 block, void **args, size_t shared, CUstream s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    hcrt_kernel *k = hcrt_kernel_by_host(func);
    CUfunction f;
    if ((e = k == NULL ? hcrt_ret(cudaErrorInvalidDeviceFunction) : hcrt_kernel_function(k, &f)) != cudaSuccess)
        return e;
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.z > 64 ||
        grid.y > 65535 || grid.z > 65535 || grid.x > 2147483647u)
        return hcrt_ret(cudaErrorInvalidConfiguration);
    return HCRT_CU(cuLaunchCooperativeKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shared,
                                             s, args));
}

HCRT_API cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                                                 cudaStream_t s)
{
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    return launch_coop(func, grid, block, args, shared, s ? hcrt_s(s) : CU_STREAM_PER_THREAD);
#else
    return launch_coop(func, grid, block, args, shared, hcrt_s(s));
#endif
}

/* the launch attributes are the driver's, id for id and value for value (same layout) */
_Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "launch attribute layouts differ");
HCRT_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    if (config == NULL || (config->numAttrs > 0 && config->attrs == NULL))
        return hcrt_ret(cudaErrorInvalidValue);
    hcrt_kernel *k = hcrt_kernel_by_host(func);
    CUfunction f;
    if ((e = k == NULL ? hcrt_ret(cudaErrorInvalidDeviceFunction) : hcrt_kernel_function(k, &f)) != cudaSuccess)
        return e;
    dim3 g = config->gridDim, b = config->blockDim;
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || threads == 0 || threads > 1024)
        return hcrt_ret(cudaErrorInvalidConfiguration);
    CUlaunchConfig c = {g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)config->dynamicSmemBytes, hcrt_s(config->stream),
                        (CUlaunchAttribute *)config->attrs, config->numAttrs};
    return HCRT_CU(cuLaunchKernelEx(&c, f, args, NULL));
}

HCRT_API cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamSynchronize(hcrt_s(s)));
}

HCRT_API cudaError_t cudaStreamQuery(cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUresult r = cuStreamQuery(hcrt_s(s));
    return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : HCRT_CU(r); /* not ready: not an error */
}

HCRT_API cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned flags)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamWaitEvent(hcrt_s(s), (CUevent)ev, flags));
}

HCRT_API cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *flags)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamGetFlags(hcrt_s(s), flags));
}

HCRT_API cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamGetPriority(hcrt_s(s), priority));
}

HCRT_API cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuEventRecord((CUevent)ev, hcrt_s(s)));
}

HCRT_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t ev, cudaStream_t s, unsigned flags)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuEventRecordWithFlags((CUevent)ev, hcrt_s(s), flags));
}

HCRT_API cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *user)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuLaunchHostFunc(hcrt_s(s), (CUhostFn)fn, user));
}

/* stream-ordered allocation from the device's default pool */
HCRT_API cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUdeviceptr d = 0;
    e = HCRT_CU(cuMemAllocAsync(&d, n, hcrt_s(s)));
    *p = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
    return e;
}

HCRT_API cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUdeviceptr d = 0;
    e = HCRT_CU(cuMemAllocFromPoolAsync(&d, n, (CUmemoryPool)pool, hcrt_s(s)));
    *p = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
    return e;
}

/* managed memory's stream association (hostcuda checks it and has nothing to move) */
HCRT_API cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t n, unsigned flags)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamAttachMemAsync(hcrt_s(s), (CUdeviceptr)(uintptr_t)p, n, flags));
}

HCRT_API cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    return p == NULL ? cudaSuccess : HCRT_CU(cuMemFreeAsync((CUdeviceptr)(uintptr_t)p, hcrt_s(s)));
}

/* the runtime's callback and capture types are the driver's (cudaError_t/CUresult and the
 * capture enums number alike) */
HCRT_API cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *user, unsigned flags)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamAddCallback(hcrt_s(s), (CUstreamCallback)(void (*)(void))cb, user, flags));
}

HCRT_API cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamBeginCapture(hcrt_s(s), (CUstreamCaptureMode)mode));
}

HCRT_API cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamEndCapture(hcrt_s(s), (CUgraph *)graph));
}

HCRT_API cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuStreamIsCapturing(hcrt_s(s), (CUstreamCaptureStatus *)status));
}

HCRT_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    return e != cudaSuccess ? e : HCRT_CU(cuGraphLaunch((CUgraphExec)exec, hcrt_s(s)));
}

/* cuGetProcAddress under the runtime's name: found -> the pointer, not found -> success and NULL
 * (the status says why); a version beyond the driver's -> cudaErrorInvalidValue. In the per-thread
 * twins the default flag asks for the per-thread variants. */
HCRT_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned version,
                                                      unsigned long long flags, enum cudaDriverEntryPointQueryResult *st)
{
    if (symbol == NULL || fn == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    if (flags == cudaEnableDefault)
        flags = cudaEnablePerThreadDefaultStream;
#endif
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *fn = NULL;
    CUresult r = cuGetProcAddress(symbol, fn, (int)version, flags, &q);
    if (st != NULL)
        *st = (enum cudaDriverEntryPointQueryResult)q;
    if (r == CUDA_ERROR_NOT_FOUND) {
        *fn = NULL;
        return cudaSuccess;
    }
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *st)
{
    return cudaGetDriverEntryPointByVersion(symbol, fn, CUDART_VERSION, flags, st);
}

/* a prefetch is the driver's (hostcuda records the location; host memory has no pages to move) */
HCRT_API cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, struct cudaMemLocation loc, unsigned flags,
                                          cudaStream_t s)
{
    cudaError_t e = hcrt_enter();
    if (e != cudaSuccess)
        return e;
    CUmemLocation l = {(CUmemLocationType)loc.type, loc.id};
    return HCRT_CU(cuMemPrefetchAsync((CUdeviceptr)(uintptr_t)p, n, l, flags, hcrt_s(s)));
}
