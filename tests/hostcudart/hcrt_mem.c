/* hcrt_mem.c — memory, streams and events without a per-thread twin: each a thin mapping onto the
 * driver call of the same meaning (cudaMalloc -> cuMemAlloc, cudaHostAlloc -> cuMemHostAlloc,
 * cudaStreamCreate -> cuStreamCreate(DEFAULT), ...). cudaStream_t/cudaEvent_t are the driver's
 * CUstream/CUevent. Every call enters the runtime's context first (hcrt_enter).
 * Must not: touch device memory from the host (every byte moves through the driver's copies). */
#include <string.h>

#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)
#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

HCRT_API cudaError_t cudaMalloc(void **p, size_t n)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    if (n == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    cudaError_t e = HCRT_CU(cuMemAlloc(&d, n));
    *p = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
    return e;
}

HCRT_API cudaError_t cudaFree(void *p)
{
    ENTER();
    return p == NULL ? cudaSuccess : HCRT_CU(cuMemFree(DPTR(p)));
}

HCRT_API cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    if (p == NULL || pitch == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdeviceptr d = 0;
    cudaError_t e = HCRT_CU(cuMemAllocPitch(&d, pitch, width, height, 4));
    *p = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
    return e;
}

HCRT_API cudaError_t cudaMallocHost(void **p, size_t n)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    return HCRT_CU(cuMemAllocHost(p, n));
}

/* cudaHostAlloc's flags are cuMemHostAlloc's, bit for bit */
HCRT_API cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    if (p == NULL || (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)))
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    return HCRT_CU(cuMemHostAlloc(p, n, flags));
}

HCRT_API cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    return p == NULL ? cudaSuccess : HCRT_CU(cuMemFreeHost(p));
}

HCRT_API cudaError_t cudaHostGetDevicePointer(void **dptr, void *host, unsigned flags)
{
    if (dptr == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdeviceptr d = 0;
    cudaError_t e = HCRT_CU(cuMemHostGetDevicePointer(&d, host, flags));
    if (e == cudaSuccess)
        *dptr = (void *)(uintptr_t)d;
    return e;
}

HCRT_API cudaError_t cudaHostGetFlags(unsigned *flags, void *host)
{
    ENTER();
    return HCRT_CU(cuMemHostGetFlags(flags, host));
}

HCRT_API cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    ENTER();
    return HCRT_CU(cuMemHostRegister(p, n, flags));
}

HCRT_API cudaError_t cudaHostUnregister(void *p)
{
    ENTER();
    return HCRT_CU(cuMemHostUnregister(p));
}

HCRT_API cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags)
{
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdeviceptr d = 0;
    cudaError_t e = HCRT_CU(cuMemAllocManaged(&d, n, flags));
    *p = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
    return e;
}

HCRT_API cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    ENTER();
    return HCRT_CU(cuMemGetInfo(free_b, total_b));
}

/* advice is the driver's (cuMemAdvise_v2: hostcuda records it per page for the range queries) */
_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation), "location layouts differ");
HCRT_API cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice, struct cudaMemLocation loc)
{
    ENTER();
    CUmemLocation l = {(CUmemLocationType)loc.type, loc.id};
    return HCRT_CU(cuMemAdvise(DPTR(p), n, (CUmem_advise)advice, l));
}

HCRT_API cudaError_t cudaMemRangeGetAttribute(void *data, size_t size, enum cudaMemRangeAttribute attr, const void *p,
                                              size_t n)
{
    ENTER();
    return HCRT_CU(cuMemRangeGetAttribute(data, size, (CUmem_range_attribute)attr, DPTR(p), n));
}

HCRT_API cudaError_t cudaMemRangeGetAttributes(void **data, size_t *sizes, enum cudaMemRangeAttribute *attrs, size_t num,
                                               const void *p, size_t n)
{
    ENTER();
    _Static_assert(sizeof(enum cudaMemRangeAttribute) == sizeof(CUmem_range_attribute), "range attribute sizes differ");
    return HCRT_CU(cuMemRangeGetAttributes(data, sizes, (CUmem_range_attribute *)attrs, num, DPTR(p), n));
}

HCRT_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    if (a == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    memset(a, 0, sizeof *a);
    unsigned type = 0, managed = 0;
    int ord = -1;
    if (cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, DPTR(p)) != CUDA_SUCCESS) {
        a->type = cudaMemoryTypeUnregistered; /* plain host memory */
        a->hostPointer = (void *)p;
        a->device = -2;
        return cudaSuccess;
    }
    cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, DPTR(p));
    cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, DPTR(p));
    a->device = ord;
    a->type = managed ? cudaMemoryTypeManaged : type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    if (a->type != cudaMemoryTypeHost)
        a->devicePointer = (void *)p;
    if (a->type != cudaMemoryTypeDevice)
        a->hostPointer = (void *)p;
    return cudaSuccess;
}

/* ---- streams and events ---- */

HCRT_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    if (s == NULL || (flags & ~(unsigned)cudaStreamNonBlocking))
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    return HCRT_CU(cuStreamCreateWithPriority((CUstream *)s, flags, priority));
}

HCRT_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    return cudaStreamCreateWithPriority(s, flags, 0);
}

HCRT_API cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, cudaStreamDefault, 0); }

HCRT_API cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    ENTER();
    if (s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread)
        return hcrt_ret(cudaErrorInvalidResourceHandle);
    return HCRT_CU(cuStreamDestroy((CUstream)s));
}

HCRT_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned flags)
{
    if (ev == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    return HCRT_CU(cuEventCreate((CUevent *)ev, flags));
}

HCRT_API cudaError_t cudaEventCreate(cudaEvent_t *ev) { return cudaEventCreateWithFlags(ev, cudaEventDefault); }

HCRT_API cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    ENTER();
    return HCRT_CU(cuEventDestroy((CUevent)ev));
}

HCRT_API cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    ENTER();
    return HCRT_CU(cuEventSynchronize((CUevent)ev));
}

HCRT_API cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    ENTER();
    CUresult r = cuEventQuery((CUevent)ev);
    return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : HCRT_CU(r);
}

HCRT_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    ENTER();
    return HCRT_CU(cuEventElapsedTime(ms, (CUevent)start, (CUevent)end));
}

/* graphs (the rest of the graph calls are in hcrt_graph.c) */
HCRT_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
    if (exec == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    return HCRT_CU(cuGraphInstantiateWithFlags((CUgraphExec *)exec, (CUgraph)g, flags));
}

HCRT_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
    return cudaGraphInstantiateWithFlags(exec, g, flags);
}

HCRT_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    ENTER();
    return HCRT_CU(cuGraphExecDestroy((CUgraphExec)exec));
}

HCRT_API cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    ENTER();
    return HCRT_CU(cuGraphDestroy((CUgraph)g));
}

HCRT_API struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}
