/* hooks_mem.c — allocation hooks: every successful allocation is recorded in the allocation
 * table (shim/core/alloc.c) with its size, physical device and kind; every free removes it BEFORE the
 * real free (and puts it back if the free fails), as ash_alloc.h requires. Stream-ordered frees
 * are removed when enqueued. VMM: each cuMemMap is one allocation (its mapped extent); cuMemUnmap
 * and cuMemAddressFree remove the mappings in their range; cuMemCreate, cuMemSetAccess and
 * cuMemGetAllocationGranularity get the literal device 0 mapped to the rank's device. The device
 * recorded is the current context's (real cuCtxGetDevice, resolved once), else the rank's
 * remapped device. The application always gets the driver's CUresult.
 * Must not: call the real free before the allocation left the table (it is put back if the free
 * fails); record a failed allocation; change the CUresult the driver gave; talk to other ranks.
 */
#include "ash_alloc.h"
#include "ash_digest.h"
#include "ash_hook.h"
#include "ash_log.h"
#include "ash_world.h"

#include <pthread.h>

static PFN_cuCtxGetDevice_v2000 ash_mem_ctx_device; /* written once, inside ash_mem_once */
static pthread_once_t ash_mem_once = PTHREAD_ONCE_INIT;

static void ash_mem_resolve(void)
{
    ash_mem_ctx_device = (PFN_cuCtxGetDevice_v2000)ash_hook_driver_proc("cuCtxGetDevice", 2000);
}

static int ash_mem_device(void)
{
    pthread_once(&ash_mem_once, ash_mem_resolve);
    CUdevice d = -1;
    if (ash_mem_ctx_device != NULL && ash_mem_ctx_device(&d) == CUDA_SUCCESS && d >= 0 && d < ASH_ALLOC_MAX_DEVICES)
        return (int)d;
    int w = ash_world_device_ordinal(0);
    return w >= 0 ? w : 0;
}

static void ash_mem_record(CUresult r, const CUdeviceptr *dptr, size_t size, ash_alloc_kind_t kind, const char *api)
{
    if (r != CUDA_SUCCESS || dptr == NULL || size == 0)
        return;
    ash_alloc_status_t st = ash_alloc_insert((uint64_t)*dptr, (uint64_t)size, ash_mem_device(), kind);
    if (st == ASH_ALLOC_ERR_OVERLAP)
        ASH_WARN_CAPPED("alloc", "%s returned 0x%llx (+%zu), overlapping allocations whose free the shim did not "
                        "see; dropped them", api, (unsigned long long)*dptr, size);
    else if (st != ASH_ALLOC_OK)
        ASH_WARN_CAPPED("alloc", "%s: cannot record 0x%llx (+%zu): %s", api, (unsigned long long)*dptr, size,
                        ash_alloc_status_name(st));
}

/* Remove before the real free; returns 1 if an entry was removed (to restore on failure). */
static int ash_mem_forget(CUdeviceptr p, ash_alloc_entry_t *removed)
{
    if (p == 0)
        return 0;
    return ash_alloc_remove((uint64_t)p, removed) == ASH_ALLOC_OK;
}

static void ash_mem_restore(CUresult r, int had, const ash_alloc_entry_t *e)
{
    if (r != CUDA_SUCCESS && had)
        (void)ash_alloc_insert(e->base, e->size, e->device, e->kind);
}

#define ASH_MEM_ALLOC(name, real_args, size_expr, kind)                                   \
    ash_hook_init();                                                                       \
    if (ASH_UNLIKELY(ash_real.name == NULL))                                               \
        return ash_hook_missing(#name);                                                    \
    CUresult r = ash_real.name real_args;                                                  \
    ash_mem_record(r, dptr, (size_expr), (kind), #name);                                   \
    return r;

ASH_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    ASH_MEM_ALLOC(cuMemAlloc_v2, (dptr, bytesize), bytesize, ASH_ALLOC_KIND_DEVICE)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                               unsigned int ElementSizeBytes)
{
    ASH_MEM_ALLOC(cuMemAllocPitch_v2, (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes),
                  (pPitch ? *pPitch : 0) * Height, ASH_ALLOC_KIND_PITCH)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    ASH_MEM_ALLOC(cuMemAllocManaged, (dptr, bytesize, flags), bytesize, ASH_ALLOC_KIND_MANAGED)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    ASH_MEM_ALLOC(cuMemAllocAsync, (dptr, bytesize, hStream), bytesize, ASH_ALLOC_KIND_ASYNC)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    ASH_MEM_ALLOC(cuMemAllocAsync_ptsz, (dptr, bytesize, hStream), bytesize, ASH_ALLOC_KIND_ASYNC)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                    CUstream hStream)
{
    ASH_MEM_ALLOC(cuMemAllocFromPoolAsync, (dptr, bytesize, pool, hStream), bytesize, ASH_ALLOC_KIND_POOL)
}

ASH_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                                         CUstream hStream)
{
    ASH_MEM_ALLOC(cuMemAllocFromPoolAsync_ptsz, (dptr, bytesize, pool, hStream), bytesize, ASH_ALLOC_KIND_POOL)
}

#define ASH_MEM_FREE(name, args)                                                          \
    ash_hook_init();                                                                       \
    if (ASH_UNLIKELY(ash_real.name == NULL))                                               \
        return ash_hook_missing(#name);                                                    \
    ash_digest_before_free(dptr); /* digest: a noted parameter buffer, before it goes */ \
    ash_alloc_entry_t removed;                                                             \
    int had = ash_mem_forget(dptr, &removed);                                              \
    CUresult r = ash_real.name args;                                                       \
    ash_mem_restore(r, had, &removed);                                                     \
    return r;

ASH_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) { ASH_MEM_FREE(cuMemFree_v2, (dptr)) }

ASH_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    ASH_MEM_FREE(cuMemFreeAsync, (dptr, hStream))
}

ASH_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    ASH_MEM_FREE(cuMemFreeAsync_ptsz, (dptr, hStream))
}

/* ---- virtual memory management (PyTorch's expandable segments, NCCL) ----
 * "The allocation" of a pointer in a VMM range is the extent of the cuMemMap call that mapped
 * it: [ptr, ptr + size) of that call, whatever reservation or physical handle lies behind it.
 * A buffer that spans two mappings is two allocations. Unmapping (or freeing the reservation)
 * removes every mapping whose base lies in the range, before the real call. */

ASH_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                     unsigned long long flags)
{
    ash_hook_init();
    if (ASH_UNLIKELY(ash_real.cuMemMap == NULL))
        return ash_hook_missing("cuMemMap");
    CUresult r = ash_real.cuMemMap(ptr, size, offset, handle, flags);
    ash_mem_record(r, &ptr, size, ASH_ALLOC_KIND_MAPPED, "cuMemMap");
    return r;
}

#define ASH_MEM_UNMAP_KEEP 64 /* mappings restored if the real call fails (more: forgotten, warned) */

#define ASH_MEM_UNMAP(name)                                                                \
    ash_hook_init();                                                                       \
    if (ASH_UNLIKELY(ash_real.name == NULL))                                               \
        return ash_hook_missing(#name);                                                    \
    ash_alloc_entry_t kept[ASH_MEM_UNMAP_KEEP];                                            \
    size_t n = 0;                                                                          \
    if (size == 0 || ash_alloc_remove_range((uint64_t)ptr, (uint64_t)size, kept, ASH_MEM_UNMAP_KEEP, &n) != ASH_ALLOC_OK) \
        n = 0;                                                                             \
    CUresult r = ash_real.name(ptr, size);                                                 \
    if (r != CUDA_SUCCESS) {                                                               \
        for (size_t i = 0; i < n && i < ASH_MEM_UNMAP_KEEP; i++)                           \
            (void)ash_alloc_insert(kept[i].base, kept[i].size, kept[i].device, kept[i].kind); \
        if (n > ASH_MEM_UNMAP_KEEP)                                                        \
            ASH_WARN_CAPPED("alloc", "%s failed; %zu of its %zu mappings stay out of the allocation table", \
                            #name, n - ASH_MEM_UNMAP_KEEP, n);                             \
    }                                                                                      \
    return r;

ASH_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) { ASH_MEM_UNMAP(cuMemUnmap) }

ASH_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) { ASH_MEM_UNMAP(cuMemAddressFree) }

/* A CUmemAllocationProp with the literal device 0 mapped to the rank's device. */
static const CUmemAllocationProp *ash_mem_prop(const CUmemAllocationProp *prop, CUmemAllocationProp *copy)
{
    if (prop == NULL || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return prop;
    *copy = *prop;
    copy->location.id = ash_hook_device_map(prop->location.id);
    return copy;
}

ASH_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                        const CUmemAllocationProp *prop, unsigned long long flags)
{
    ash_hook_init();
    CUmemAllocationProp copy;
    ASH_CALL_REAL(cuMemCreate, (handle, size, ash_mem_prop(prop, &copy), flags));
}

ASH_EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                          CUmemAllocationGranularity_flags option)
{
    ash_hook_init();
    CUmemAllocationProp copy;
    ASH_CALL_REAL(cuMemGetAllocationGranularity, (granularity, ash_mem_prop(prop, &copy), option));
}

#define ASH_MEM_ACCESS_MAX 16 /* descriptors remapped; a longer list is passed as it is */

ASH_EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    ash_hook_init();
    CUmemAccessDesc copy[ASH_MEM_ACCESS_MAX];
    if (desc != NULL && count > 0 && count <= ASH_MEM_ACCESS_MAX) {
        for (size_t i = 0; i < count; i++) {
            copy[i] = desc[i];
            if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE)
                copy[i].location.id = ash_hook_device_map(desc[i].location.id);
        }
        desc = copy;
    }
    ASH_CALL_REAL(cuMemSetAccess, (ptr, size, desc, count));
}
