/* hc_pool.c — hostcuda's explicit memory pools: cuMemPoolCreate/Destroy, Set/GetAttribute, TrimTo,
 * Set/GetAccess and CUDA 13's location-keyed cuMemGetDefaultMemPool/GetMemPool/SetMemPool.
 *
 * A pool is a device's pinned memory (CU_MEM_ALLOCATION_TYPE_PINNED on a device location, no
 * shareable handle types: CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES is 0). Its
 * allocations are ordinary arena blocks (hc_mem_alloc counts them in the pool); a freed block goes
 * back to the arena at once, so the pool never holds memory beyond its live allocations: the
 * release threshold is kept and reported but has nothing to hold back, TrimTo has nothing to trim,
 * and RESERVED_MEM_CURRENT is the live blocks' sizes (rounded to 256 bytes), USED_MEM_CURRENT the
 * bytes asked for. A pool destroyed with allocations outstanding stays until the last is freed.
 * Threading: every pool field under hc_mu.
 * Must not: free a pool while an allocation still names it; let a default pool be destroyed.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>

void hc_pool_init_default(struct CUmemPoolHandle_st *p, int dev)
{
    memset(p, 0, sizeof *p);
    p->magic = HC_K_POOL;
    p->dev = dev;
    p->is_default = 1;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
}

/* a device location's ordinal, or an error: host locations have no pools here */
static CUresult pool_location(const CUmemLocation *loc, int *dev)
{
    if (!loc)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->type == CU_MEM_LOCATION_TYPE_HOST || loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
        loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (loc->id < 0 || loc->id >= hc_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = loc->id;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    HC_COUNT(cuMemPoolCreate);
    HC_CHECK_INIT();
    if (!pool || !props)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        return CUDA_ERROR_NOT_SUPPORTED;   /* no shareable handle type is supported */
    int dev;
    CUresult rc = pool_location(&props->location, &dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmemPoolHandle_st *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    hc_pool_init_default(p, dev);
    p->is_default = 0;
    pthread_mutex_lock(&hc_mu);
    hc_reg_add(p, HC_K_POOL);
    pthread_mutex_unlock(&hc_mu);
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    HC_COUNT(cuMemPoolDestroy);
    HC_CHECK_INIT();
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL || pool->is_default) {
        rc = CUDA_ERROR_INVALID_VALUE;   /* a default pool cannot be destroyed */
    } else {
        hc_reg_del(pool);
        if (hc_devs[pool->dev].cur_pool == pool)   /* the device's current pool falls back to its default */
            hc_devs[pool->dev].cur_pool = &hc_devs[pool->dev].default_pool;
        if (pool->live == 0)
            free(pool);
        else
            pool->dying = 1;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    HC_COUNT(cuMemPoolSetAttribute);
    HC_CHECK_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)value != 0;
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->threshold = *(cuuint64_t *)value; break;
    /* the high watermarks can only be reset, to the current value, by writing 0 */
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            pool->reserved_high = pool->reserved;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*(cuuint64_t *)value != 0)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            pool->used_high = pool->used;
        break;
    default: rc = CUDA_ERROR_INVALID_VALUE; break;   /* the current counters are read-only */
    }
out:
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    HC_COUNT(cuMemPoolGetAttribute);
    HC_CHECK_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *(int *)value = pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = pool->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = pool->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = pool->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = pool->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = pool->used_high; break;
    default: rc = CUDA_ERROR_INVALID_VALUE; break;
    }
out:
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* nothing is held beyond the live allocations, so there is nothing to release */
CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    HC_COUNT(cuMemPoolTrimTo);
    HC_CHECK_INIT();
    (void)minBytesToKeep;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(pool) == HC_K_POOL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static int access_flags_ok(CUmemAccess_flags f)
{
    return f == CU_MEM_ACCESS_FLAGS_PROT_NONE || f == CU_MEM_ACCESS_FLAGS_PROT_READ ||
           f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

/* every descriptor is checked before any is applied; the pool's own device keeps read-write */
CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    HC_COUNT(cuMemPoolSetAccess);
    HC_CHECK_INIT();
    if (count > 0 && !map)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
        int dev;
        rc = pool_location(&map[i].location, &dev);
        if (rc == CUDA_SUCCESS && !access_flags_ok(map[i].flags))
            rc = CUDA_ERROR_INVALID_VALUE;
        if (rc == CUDA_SUCCESS && dev == pool->dev && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            rc = CUDA_ERROR_INVALID_DEVICE;
    }
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++)
        if (map[i].location.id != pool->dev)
            pool->access[map[i].location.id] = (unsigned char)map[i].flags;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    HC_COUNT(cuMemPoolGetAccess);
    HC_CHECK_INIT();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = pool_location(location, &dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(memPool) != HC_K_POOL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *flags = dev == memPool->dev ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : (CUmemAccess_flags)memPool->access[dev];
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* CUDA 13's pools by location and allocation type: device locations, pinned memory */
static CUresult location_pool_args(const CUmemLocation *loc, CUmemAllocationType type, int *dev)
{
    if (type == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_location(loc, dev);
}

CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
    HC_COUNT(cuMemGetDefaultMemPool);
    HC_CHECK_INIT();
    int dev;
    CUresult rc = pool_out ? location_pool_args(location, type, &dev) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *pool_out = &hc_devs[dev].default_pool;
    return rc;
}

CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
    HC_COUNT(cuMemGetMemPool);
    HC_CHECK_INIT();
    int dev;
    CUresult rc = pool ? location_pool_args(location, type, &dev) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&hc_mu);
        *pool = hc_devs[dev].cur_pool;
        pthread_mutex_unlock(&hc_mu);
    }
    return rc;
}

CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
    HC_COUNT(cuMemSetMemPool);
    HC_CHECK_INIT();
    int dev;
    CUresult rc = location_pool_args(location, type, &dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(pool) != HC_K_POOL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (pool->dev != dev)
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        hc_devs[dev].cur_pool = pool;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
