/* hc_vmm.c — hostcuda: the virtual memory management subset (cuMemAddressReserve / Free,
 * cuMemCreate / Release, cuMemMap / Unmap, cuMemSetAccess, cuMemGetAllocationGranularity).
 *
 * A reservation is two PROT_NONE ranges of the same size: the "device" view whose addresses the
 * program gets, and hostcuda's read-write view. A physical allocation (cuMemCreate) is its own
 * memfd; cuMemMap maps it MAP_FIXED into both views at the same offset, so copies, memsets and
 * kernels reach it through hc_vmm_rw like arena memory. Strict model: the device view stays
 * PROT_NONE (host code faults), and hostcuda itself resolves a mapped range only after
 * cuMemSetAccess gave the device access; reserved-but-unmapped or unmapped ranges are not memory.
 * Granularity is 2 MiB; physical allocations are not counted in cuMemGetInfo.
 * Threading: one mutex (hc_vmm_mu) guards the lists; it is taken after hc_mu, never before.
 * Must not: make the device view accessible to host code; resolve a mapped range before
 * cuMemSetAccess, or an unmapped one at all; take hc_vmm_mu before hc_mu.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HC_VMM_GRAN ((size_t)2 << 20)

typedef struct hc_vres {
    char *dev, *rw;
    size_t size;
    struct hc_vres *next;
} hc_vres;

typedef struct hc_vphys {
    uint32_t magic;
    int fd, dev, released, maps;
    size_t size;
    struct hc_vphys *next;
} hc_vphys;
#define HC_VPHYS_MAGIC 0x564d4d21u

typedef struct hc_vmap {
    uintptr_t va;
    size_t size, off;
    hc_vres *res;
    hc_vphys *ph;
    int access;
    struct hc_vmap *next;
} hc_vmap;

static pthread_mutex_t hc_vmm_mu = PTHREAD_MUTEX_INITIALIZER;
static hc_vres *hc_vres_list;
static hc_vphys *hc_vphys_list;
static hc_vmap *hc_vmap_list;
static atomic_int hc_vres_count; /* lock-free "no VMM at all" test for hc_vmm_rw */

static hc_vres *res_of(uintptr_t v) /* hc_vmm_mu held */
{
    for (hc_vres *r = hc_vres_list; r; r = r->next)
        if (v >= (uintptr_t)r->dev && v - (uintptr_t)r->dev < r->size)
            return r;
    return NULL;
}

static hc_vmap *map_of(uintptr_t v) /* hc_vmm_mu held */
{
    for (hc_vmap *m = hc_vmap_list; m; m = m->next)
        if (v >= m->va && v - m->va < m->size)
            return m;
    return NULL;
}

static hc_vphys *phys_of(CUmemGenericAllocationHandle h) /* hc_vmm_mu held; live handles only */
{
    for (hc_vphys *p = hc_vphys_list; p; p = p->next)
        if ((CUmemGenericAllocationHandle)(uintptr_t)p == h && !p->released)
            return p;
    return NULL;
}

static void phys_drop(hc_vphys *p) /* hc_vmm_mu held: free once released and unmapped */
{
    if (!p->released || p->maps > 0)
        return;
    for (hc_vphys **pp = &hc_vphys_list; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    close(p->fd);
    p->magic = 0;
    free(p);
}

/* hc_mem_resolve's fallback: 1 if v lies in a reservation (then *rw is the read-write address of
 * [v, v + n) when every byte is mapped with access, else NULL; *dev its device); 0 otherwise. */
int hc_vmm_resolve(uintptr_t v, size_t n, void **rw, int *dev)
{
    if (atomic_load_explicit(&hc_vres_count, memory_order_acquire) == 0)
        return 0;
    pthread_mutex_lock(&hc_vmm_mu);
    hc_vres *r = res_of(v);
    *rw = NULL;
    if (r != NULL) {
        hc_vmap *m = map_of(v);
        *dev = m ? m->ph->dev : 0;
        uintptr_t cur = v, end = v + (n ? n : 1);
        while (m != NULL && m->access && m->res == r) {
            cur = m->va + m->size;
            if (cur >= end)
                break;
            m = map_of(cur);
        }
        if (cur >= end && end - (uintptr_t)r->dev <= r->size)
            *rw = r->rw + (v - (uintptr_t)r->dev);
    }
    pthread_mutex_unlock(&hc_vmm_mu);
    return r != NULL;
}

void *hc_vmm_rw(uintptr_t v)
{
    void *rw = NULL;
    int dev;
    return hc_vmm_resolve(v, 1, &rw, &dev) ? rw : NULL;
}

static CUresult prop_check(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id < 0 || prop->location.id >= hc_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    HC_COUNT(cuMemGetAllocationGranularity);
    HC_CHECK_INIT();
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = prop_check(prop);
    if (rc == CUDA_SUCCESS)
        *granularity = HC_VMM_GRAN;
    return rc;
}

/* Both views, aligned to `align` (a power of two, at least the granularity). */
static char *reserve_view(size_t size, size_t align)
{
    size_t span = size + align;
    char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
    if (a > (uintptr_t)p)
        munmap(p, a - (uintptr_t)p);
    size_t tail = (uintptr_t)p + span - (a + size);
    if (tail)
        munmap((char *)a + size, tail);
    return (char *)a;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags)
{
    HC_COUNT(cuMemAddressReserve);
    HC_CHECK_INIT();
    (void)addr; /* a hint: the driver may place the range elsewhere, and so does hostcuda */
    if (!ptr || size == 0 || size % HC_VMM_GRAN || flags != 0 || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > HC_VMM_GRAN ? alignment : HC_VMM_GRAN;
    hc_vres *r = calloc(1, sizeof *r);
    if (!r)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->size = size;
    r->dev = reserve_view(size, align);
    r->rw = r->dev ? reserve_view(size, HC_VMM_GRAN) : NULL;
    if (!r->rw) {
        if (r->dev)
            munmap(r->dev, size);
        free(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&hc_vmm_mu);
    r->next = hc_vres_list;
    hc_vres_list = r;
    atomic_fetch_add_explicit(&hc_vres_count, 1, memory_order_release);
    pthread_mutex_unlock(&hc_vmm_mu);
    *ptr = (CUdeviceptr)(uintptr_t)r->dev;
    return CUDA_SUCCESS;
}

/* The whole reservation, with nothing mapped in it any more. */
CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    HC_COUNT(cuMemAddressFree);
    HC_CHECK_INIT();
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_vmm_mu);
    for (hc_vres **pp = &hc_vres_list; *pp; pp = &(*pp)->next) {
        hc_vres *r = *pp;
        if ((uintptr_t)r->dev != (uintptr_t)ptr || r->size != size)
            continue;
        int mapped = 0;
        for (hc_vmap *m = hc_vmap_list; m; m = m->next)
            mapped |= m->res == r;
        if (mapped)
            break;
        *pp = r->next;
        atomic_fetch_sub_explicit(&hc_vres_count, 1, memory_order_release);
        munmap(r->dev, r->size);
        munmap(r->rw, r->size);
        free(r);
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&hc_vmm_mu);
    return rc;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags)
{
    HC_COUNT(cuMemCreate);
    HC_CHECK_INIT();
    if (!handle || size == 0 || size % HC_VMM_GRAN || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = prop_check(prop);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (size > hc_opt.mem_bytes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    hc_vphys *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->fd = memfd_create("hostcuda-vmm", MFD_CLOEXEC);
    if (p->fd < 0 || ftruncate(p->fd, (off_t)size) != 0) {
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->magic = HC_VPHYS_MAGIC;
    p->size = size;
    p->dev = prop->location.id;
    pthread_mutex_lock(&hc_vmm_mu);
    p->next = hc_vphys_list;
    hc_vphys_list = p;
    pthread_mutex_unlock(&hc_vmm_mu);
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* The memory lives on while a mapping uses it, as with the driver. */
CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    HC_COUNT(cuMemRelease);
    HC_CHECK_INIT();
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_vmm_mu);
    hc_vphys *p = phys_of(handle);
    if (p) {
        p->released = 1;
        phys_drop(p);
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&hc_vmm_mu);
    return rc;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags)
{
    HC_COUNT(cuMemMap);
    HC_CHECK_INIT();
    uintptr_t v = (uintptr_t)ptr;
    if (size == 0 || flags != 0 || v % HC_VMM_GRAN || size % HC_VMM_GRAN || offset % HC_VMM_GRAN)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_vmm_mu);
    hc_vphys *p = phys_of(handle);
    hc_vres *r = res_of(v);
    hc_vmap *m = NULL;
    if (!p || !r || offset > p->size || size > p->size - offset || size > r->size - (v - (uintptr_t)r->dev))
        goto out;
    for (hc_vmap *o = hc_vmap_list; o; o = o->next)
        if (o->va < v + size && v < o->va + o->size)
            goto out; /* already mapped */
    rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (!(m = calloc(1, sizeof *m)))
        goto out;
    char *rw = r->rw + (v - (uintptr_t)r->dev);
    if (mmap((void *)v, size, hc_opt.strict ? PROT_NONE : PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
             (off_t)offset) == MAP_FAILED ||
        mmap(rw, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd, (off_t)offset) == MAP_FAILED) {
        mmap((void *)v, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        mmap(rw, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        free(m);
        goto out;
    }
    *m = (hc_vmap){.va = v, .size = size, .off = offset, .res = r, .ph = p, .next = hc_vmap_list};
    hc_vmap_list = m;
    p->maps++;
    rc = CUDA_SUCCESS;
out:
    pthread_mutex_unlock(&hc_vmm_mu);
    return rc;
}

/* [ptr, ptr + size) must be made of whole mappings; each one goes. */
CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    HC_COUNT(cuMemUnmap);
    HC_CHECK_INIT();
    uintptr_t v = (uintptr_t)ptr, end = v + size;
    if (size == 0 || end < v)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_vmm_mu);
    size_t covered = 0;
    for (hc_vmap *m = hc_vmap_list; m; m = m->next) {
        if (m->va >= end || m->va + m->size <= v)
            continue;
        if (m->va < v || m->va + m->size > end)
            rc = CUDA_ERROR_INVALID_VALUE; /* a mapping only partly inside */
        covered += m->size;
    }
    if (covered != size)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (hc_vmap **pp = &hc_vmap_list; rc == CUDA_SUCCESS && *pp;) {
        hc_vmap *m = *pp;
        if (m->va >= end || m->va + m->size <= v) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        char *rw = m->res->rw + (m->va - (uintptr_t)m->res->dev);
        mmap((void *)m->va, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        mmap(rw, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        m->ph->maps--;
        phys_drop(m->ph);
        free(m);
    }
    pthread_mutex_unlock(&hc_vmm_mu);
    return rc;
}

/* Every byte of [ptr, ptr + size) must be mapped; access is kept per mapping (the last desc for a
 * device decides; READ counts as access here, hostcuda does not enforce read-only). */
CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    HC_COUNT(cuMemSetAccess);
    HC_CHECK_INIT();
    uintptr_t v = (uintptr_t)ptr, end = v + size;
    if (size == 0 || end < v || !desc || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int access = 0;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].location.id < 0 || desc[i].location.id >= hc_ndev)
            return CUDA_ERROR_INVALID_DEVICE;
        access = desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_vmm_mu);
    for (uintptr_t cur = v; cur < end;) {
        hc_vmap *m = map_of(cur);
        if (!m) {
            rc = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        cur = m->va + m->size;
    }
    for (hc_vmap *m = hc_vmap_list; rc == CUDA_SUCCESS && m; m = m->next)
        if (m->va < end && v < m->va + m->size)
            m->access = access;
    pthread_mutex_unlock(&hc_vmm_mu);
    return rc;
}
