/* hc_managed.c — advice and prefetches on managed memory: cuMemAdvise_v2, cuMemPrefetchAsync_v2
 * (+_ptsz), cuMemRangeGetAttribute(s).
 *
 * Managed memory is ordinary host memory here, coherent for the host and every device, so advice
 * and prefetches move nothing. What they record is kept per 4 KiB page of the allocation (made on
 * the first advice or prefetch, dropped when the allocation is freed) so the range queries answer
 * as the driver documents: read-mostly only if every page is, a preferred or last-prefetch
 * location only if every page has the same one (else CU_DEVICE_INVALID / LOCATION_TYPE_INVALID),
 * the accessed-by devices set for every page. A prefetch is recorded when it is called, not when
 * its stream reaches it. A range must lie in one managed allocation. Locations: a device, the host,
 * host NUMA node 0 (the only node; HOST_NUMA_CURRENT is it).
 * Threading: the page tables under hc_mu.
 * Must not: report advice for a range whose pages disagree (the documented INVALID answers);
 * keep a freed allocation's record.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>

#define HC_PAGE 4096

typedef struct {
    uint8_t read_mostly;
    int8_t pref_type, last_type;   /* CUmemLocationType; 0 (INVALID): none */
    int16_t pref_id, last_id;
    uint8_t by_host;
    uint64_t by_dev;               /* bit d: SET_ACCESSED_BY device d */
} hc_page;

typedef struct hc_mg {
    uintptr_t base;
    size_t npages;
    hc_page *pages;
    struct hc_mg *next;
} hc_mg;
static hc_mg *hc_mgs;

void hc_managed_forget(uintptr_t base)
{
    for (hc_mg **pp = &hc_mgs; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base) {
            hc_mg *m = *pp;
            *pp = m->next;
            free(m->pages);
            free(m);
            return;
        }
}

/* hc_mu held: the pages [*first, *last] of the managed allocation holding [p, p + n), its table
 * made if `make`; NULL table with CUDA_SUCCESS when it has none yet and !make */
static CUresult range_pages(CUdeviceptr p, size_t n, int make, hc_mg **out, size_t *first, size_t *last)
{
    uintptr_t base;
    size_t size;
    if (!p || n == 0 || !hc_mem_managed_range((uintptr_t)p, &base, &size) || n > base + size - (uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    *first = ((uintptr_t)p - base) / HC_PAGE;
    *last = ((uintptr_t)p + n - 1 - base) / HC_PAGE;
    hc_mg *m = hc_mgs;
    while (m && m->base != base)
        m = m->next;
    if (!m && make) {
        m = calloc(1, sizeof *m);
        size_t np = (size + HC_PAGE - 1) / HC_PAGE;
        hc_page *pg = m ? calloc(np, sizeof *pg) : NULL;
        if (!pg) {
            free(m);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        *m = (hc_mg){base, np, pg, hc_mgs};
        hc_mgs = m;
    }
    *out = m;
    return CUDA_SUCCESS;
}

/* a location as recorded: (type, id), or an error */
static CUresult norm_location(CUmemLocation loc, int8_t *type, int16_t *id)
{
    switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        if (loc.id < 0 || loc.id >= hc_ndev)
            return CUDA_ERROR_INVALID_DEVICE;
        *type = CU_MEM_LOCATION_TYPE_DEVICE, *id = (int16_t)loc.id;
        return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST: *type = CU_MEM_LOCATION_TYPE_HOST, *id = 0; return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (loc.id != 0)
            return CUDA_ERROR_INVALID_DEVICE;   /* one NUMA node */
        *type = CU_MEM_LOCATION_TYPE_HOST_NUMA, *id = 0;
        return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: *type = CU_MEM_LOCATION_TYPE_HOST_NUMA, *id = 0; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_DEVICE;
    }
}

CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)
{
    HC_COUNT(cuMemAdvise_v2);
    HC_CHECK_INIT();
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    int8_t t = 0;
    int16_t id = 0;
    int needs_loc = advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
                    advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
    pthread_mutex_lock(&hc_mu);
    hc_mg *m;
    size_t a, b;
    CUresult rc = range_pages(devPtr, count, 1, &m, &a, &b);
    if (rc == CUDA_SUCCESS && needs_loc)
        rc = norm_location(location, &t, &id);
    for (size_t i = a; rc == CUDA_SUCCESS && i <= b; i++) {
        hc_page *pg = &m->pages[i];
        int host = t != CU_MEM_LOCATION_TYPE_DEVICE;
        switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY: pg->read_mostly = 1; break;
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY: pg->read_mostly = 0; break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: pg->pref_type = t, pg->pref_id = id; break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: pg->pref_type = 0, pg->pref_id = 0; break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
            if (host)
                pg->by_host = 1;
            else
                pg->by_dev |= 1ull << id;
            break;
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
            if (host)
                pg->by_host = 0;
            else
                pg->by_dev &= ~(1ull << id);
            break;
        default: break;
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream h,
                         int pt)
{
    HC_CHECK_INIT();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int8_t t;
    int16_t id;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    hc_mg *m;
    size_t a, b;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS)
        rc = range_pages(devPtr, count, 1, &m, &a, &b);
    if (rc == CUDA_SUCCESS)
        rc = norm_location(location, &t, &id);
    for (size_t i = a; rc == CUDA_SUCCESS && i <= b; i++)
        m->pages[i].last_type = t, m->pages[i].last_id = id;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                                       CUstream hStream)
{
    HC_COUNT(cuMemPrefetchAsync_v2);
    return prefetch(devPtr, count, location, flags, hStream, 0);
}

CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream)
{
    HC_COUNT(cuMemPrefetchAsync_v2_ptsz);
    return prefetch(devPtr, count, location, flags, hStream, 1);
}

/* the legacy int form of a location: a device id, CU_DEVICE_CPU for the host, else INVALID */
static int legacy_location(int8_t t, int16_t id)
{
    return t == CU_MEM_LOCATION_TYPE_DEVICE ? id : t ? (int)CU_DEVICE_CPU : (int)CU_DEVICE_INVALID;
}

/* hc_mu held */
static CUresult range_attr(void *data, size_t size, CUmem_range_attribute attr, CUdeviceptr p, size_t n)
{
    hc_mg *m;
    size_t a, b;
    CUresult rc = range_pages(p, n, 0, &m, &a, &b);
    if (rc != CUDA_SUCCESS)
        return rc;
    static const hc_page none;   /* an allocation never advised: every page as at allocation */
    const hc_page *first = m ? &m->pages[a] : &none;
    int same_pref = 1, same_last = 1, rm = first->read_mostly;
    uint64_t by = first->by_dev;
    int by_host = first->by_host;
    for (size_t i = a; m && i <= b; i++) {
        const hc_page *pg = &m->pages[i];
        same_pref &= pg->pref_type == first->pref_type && pg->pref_id == first->pref_id;
        same_last &= pg->last_type == first->last_type && pg->last_id == first->last_id;
        rm &= pg->read_mostly;
        by &= pg->by_dev;
        by_host &= pg->by_host;
    }
    int8_t pt = same_pref ? first->pref_type : 0, lt = same_last ? first->last_type : 0;
    int16_t pid = same_pref ? first->pref_id : 0, lid = same_last ? first->last_id : 0;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
        if (size == 0 || size % 4)
            return CUDA_ERROR_INVALID_VALUE;
        int *out = data;
        size_t k = 0, cap = size / 4;
        if (by_host && k < cap)
            out[k++] = (int)CU_DEVICE_CPU;
        for (int d = 0; d < hc_ndev && d < 64 && k < cap; d++)
            if (by & (1ull << d))
                out[k++] = d;
        while (k < cap)
            out[k++] = (int)CU_DEVICE_INVALID;
        return CUDA_SUCCESS;
    }
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
        if (size != sizeof(CUmemLocationType))
            return CUDA_ERROR_INVALID_VALUE;
        *(CUmemLocationType *)data = (CUmemLocationType)(attr == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ? pt : lt);
        return CUDA_SUCCESS;
    default: break;
    }
    if (size != 4)
        return CUDA_ERROR_INVALID_VALUE;
    int *out = data;
    switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = rm; break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: *out = legacy_location(pt, pid); break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: *out = legacy_location(lt, lid); break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: *out = pid; break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: *out = lid; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute, CUdeviceptr devPtr,
                                        size_t count)
{
    HC_COUNT(cuMemRangeGetAttribute);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = range_attr(data, dataSize, attribute, devPtr, count);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemRangeGetAttributes(void **data, size_t *dataSizes, CUmem_range_attribute *attributes,
                                         size_t numAttributes, CUdeviceptr devPtr, size_t count)
{
    HC_COUNT(cuMemRangeGetAttributes);
    HC_CHECK_INIT();
    if (!data || !dataSizes || !attributes || numAttributes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < numAttributes; i++)
        rc = range_attr(data[i], dataSizes[i], attributes[i], devPtr, count);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
