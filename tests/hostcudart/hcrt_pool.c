/* hcrt_pool.c — the runtime's memory pools and peer queries on the driver's cuMemPool* and
 * cuDevice*P2P* calls: cudaDeviceGet/SetMemPool, cudaDeviceGetDefaultMemPool, CUDA 13's
 * cudaMemGet/SetMemPool and cudaMemGetDefaultMemPool, cudaMemPoolCreate/Destroy,
 * Set/GetAttribute, TrimTo, Set/GetAccess, and cudaDeviceGetP2PAttribute (peer access itself:
 * hcrt_device.c). cudaMemPool_t is the driver's CUmemoryPool and the
 * pool structures, attributes and location types are the driver's, field for field (asserted below).
 * The stream-ordered allocation from a pool (cudaMallocFromPoolAsync) has a per-thread twin and
 * lives in hcrt_stream.c. Every call enters the runtime's context first (hcrt_enter).
 * Must not: answer a call without the driver (the shim must see each one). */
#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)

_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(CUmemPoolProps), "pool property layouts differ");
_Static_assert(sizeof(struct cudaMemAccessDesc) == sizeof(CUmemAccessDesc), "access descriptor layouts differ");
_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation), "location layouts differ");
_Static_assert((int)cudaMemPoolAttrUsedMemHigh == (int)CU_MEMPOOL_ATTR_USED_MEM_HIGH &&
               (int)cudaMemPoolReuseFollowEventDependencies == (int)CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
               (int)cudaMemLocationTypeDevice == (int)CU_MEM_LOCATION_TYPE_DEVICE &&
               (int)cudaMemAllocationTypePinned == (int)CU_MEM_ALLOCATION_TYPE_PINNED &&
               (int)cudaMemAccessFlagsProtReadWrite == (int)CU_MEM_ACCESS_FLAGS_PROT_READWRITE &&
               (int)cudaDevP2PAttrCudaArrayAccessSupported == (int)CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED,
               "runtime and driver pool enums number differently");

/* a runtime device ordinal as the driver's CUdevice (an unknown one: cudaErrorInvalidDevice) */
static cudaError_t hcrt_cu_device(int device, CUdevice *d)
{
    int n = 0;
    if (cuDeviceGetCount(&n) != CUDA_SUCCESS || device < 0 || device >= n)
        return hcrt_ret(cudaErrorInvalidDevice);
    return HCRT_CU(cuDeviceGet(d, device));
}

HCRT_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    if (pool == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdevice d;
    cudaError_t e = hcrt_cu_device(device, &d);
    return e != cudaSuccess ? e : HCRT_CU(cuDeviceGetDefaultMemPool((CUmemoryPool *)pool, d));
}

HCRT_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    if (pool == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdevice d;
    cudaError_t e = hcrt_cu_device(device, &d);
    return e != cudaSuccess ? e : HCRT_CU(cuDeviceGetMemPool((CUmemoryPool *)pool, d));
}

HCRT_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    ENTER();
    CUdevice d;
    cudaError_t e = hcrt_cu_device(device, &d);
    return e != cudaSuccess ? e : HCRT_CU(cuDeviceSetMemPool(d, (CUmemoryPool)pool));
}

HCRT_API cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *pool, struct cudaMemLocation *loc,
                                              enum cudaMemAllocationType type)
{
    ENTER();
    return HCRT_CU(cuMemGetDefaultMemPool((CUmemoryPool *)pool, (CUmemLocation *)loc, (CUmemAllocationType)type));
}

HCRT_API cudaError_t cudaMemGetMemPool(cudaMemPool_t *pool, struct cudaMemLocation *loc, enum cudaMemAllocationType type)
{
    ENTER();
    return HCRT_CU(cuMemGetMemPool((CUmemoryPool *)pool, (CUmemLocation *)loc, (CUmemAllocationType)type));
}

HCRT_API cudaError_t cudaMemSetMemPool(struct cudaMemLocation *loc, enum cudaMemAllocationType type, cudaMemPool_t pool)
{
    ENTER();
    return HCRT_CU(cuMemSetMemPool((CUmemLocation *)loc, (CUmemAllocationType)type, (CUmemoryPool)pool));
}

HCRT_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    ENTER();
    return HCRT_CU(cuMemPoolCreate((CUmemoryPool *)pool, (const CUmemPoolProps *)props));
}

HCRT_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    ENTER();
    return HCRT_CU(cuMemPoolDestroy((CUmemoryPool)pool));
}

HCRT_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    ENTER();
    return HCRT_CU(cuMemPoolSetAttribute((CUmemoryPool)pool, (CUmemPool_attribute)attr, value));
}

HCRT_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    ENTER();
    return HCRT_CU(cuMemPoolGetAttribute((CUmemoryPool)pool, (CUmemPool_attribute)attr, value));
}

HCRT_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    ENTER();
    return HCRT_CU(cuMemPoolTrimTo((CUmemoryPool)pool, keep));
}

HCRT_API cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *list, size_t count)
{
    ENTER();
    return HCRT_CU(cuMemPoolSetAccess((CUmemoryPool)pool, (const CUmemAccessDesc *)list, count));
}

HCRT_API cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t pool, struct cudaMemLocation *loc)
{
    ENTER();
    return HCRT_CU(cuMemPoolGetAccess((CUmemAccess_flags *)flags, (CUmemoryPool)pool, (CUmemLocation *)loc));
}

/* ---- peers ---- */

HCRT_API cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int src, int dst)
{
    ENTER();
    CUdevice s, d;
    cudaError_t e = hcrt_cu_device(src, &s);
    if (e == cudaSuccess)
        e = hcrt_cu_device(dst, &d);
    return e != cudaSuccess ? e : HCRT_CU(cuDeviceGetP2PAttribute(value, (CUdevice_P2PAttribute)attr, s, d));
}
