/* hc_mem.c — hostcuda device memory: per-device arenas, the allocator, host/managed allocations,
 * cuMemAlloc family, cuMemFree, cuMemGetInfo, cuMemGetAddressRange, cuPointerGetAttribute, host registration.
 *
 * Each device's memory is one memfd mapped twice: a "device" view whose addresses are handed out
 * as CUdeviceptr (PROT_NONE in strict mode, so host code touching it gets SIGSEGV as on a GPU) and
 * a private read-write view that only hostcuda's own copies, memsets and kernels use. The arena is
 * an address-sorted block list (first fit, 256-byte aligned, coalescing); freed pages are punched
 * out of the memfd so they are returned to the system. Host and managed allocations are ordinary
 * host memory, tracked in a list so pointer queries and copies can classify them.
 * Fresh device allocations are filled with HC_POISON_BYTE unless HOSTCUDA_POISON=0 (a GPU gives
 * whatever was there; zeros would make a too-early read look plausible).
 * Threading: block lists and the host list under hc_mu; arena bases are immutable after cuInit.
 * Must not: hand out the read-write view's addresses as CUdeviceptr; keep freed pages in the memfd;
 * hand out fresh device memory zeroed (poisoned unless HOSTCUDA_POISON=0); touch the block lists or
 * the host list without hc_mu.
 */
#include "hc_internal.h"
#include "hc_exec.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* host-side allocations: pinned (cuMemAllocHost/cuMemHostAlloc), registered, managed */
typedef struct hc_host {
    char *base;
    size_t size;
    size_t req;            /* bytes asked for (size is rounded up to pages); 0: registered */
    int kind;              /* HC_MEM_PINNED or HC_MEM_MANAGED */
    int registered;        /* cuMemHostRegister: not ours to free */
    unsigned int flags;
    struct CUctx_st *ctx;
    struct hc_host *next;
} hc_host;
static hc_host *hc_hosts;

CUresult hc_mem_init(void)
{
    for (int i = 0; i < hc_ndev; i++) {
        hc_dev *d = &hc_devs[i];
        d->size = hc_opt.mem_bytes;
        d->fd = memfd_create("hostcuda-device", MFD_CLOEXEC);
        if (d->fd < 0 || ftruncate(d->fd, (off_t)d->size) != 0)
            return CUDA_ERROR_OPERATING_SYSTEM;
        int prot = hc_opt.strict ? PROT_NONE : PROT_READ | PROT_WRITE;
        void *dv = mmap(NULL, d->size, prot, MAP_SHARED | MAP_NORESERVE, d->fd, 0);
        void *rw = mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, d->fd, 0);
        if (dv == MAP_FAILED || rw == MAP_FAILED)
            return CUDA_ERROR_OPERATING_SYSTEM;
        d->dev_base = dv;
        d->rw_base = rw;
        d->blocks = calloc(1, sizeof *d->blocks);
        if (!d->blocks)
            return CUDA_ERROR_OUT_OF_MEMORY;
        d->blocks->size = d->size;
        hc_pool_init_default(&d->default_pool, i);
        d->cur_pool = &d->default_pool;
        pthread_mutex_lock(&hc_mu);
        hc_reg_add(&d->default_pool, HC_K_POOL);
        pthread_mutex_unlock(&hc_mu);
    }
    return CUDA_SUCCESS;
}

static int dev_of(uintptr_t v)
{
    for (int i = 0; i < hc_ndev; i++) {
        uintptr_t b = (uintptr_t)hc_devs[i].dev_base;
        if (v >= b && v < b + hc_devs[i].size)
            return i;
    }
    return -1;
}

void *hc_dev_rw(uintptr_t v)
{
    int i = dev_of(v);
    return i < 0 ? hc_vmm_rw(v) : hc_devs[i].rw_base + (v - (uintptr_t)hc_devs[i].dev_base);
}

__attribute__((visibility("default"))) void *hostcuda_host_view(CUdeviceptr p)
{
    if (!atomic_load(&hc_initialized))
        return NULL;
    return hc_dev_rw((uintptr_t)p);
}

static hc_block *block_at(hc_dev *d, size_t off)   /* used block containing off */
{
    for (hc_block *b = d->blocks; b; b = b->next)
        if (off >= b->off && off < b->off + b->size)
            return b->used ? b : NULL;
    return NULL;
}

static hc_host *host_at(uintptr_t v)
{
    for (hc_host *h = hc_hosts; h; h = h->next)
        if (v >= (uintptr_t)h->base && v < (uintptr_t)h->base + h->size)
            return h;
    return NULL;
}

void *hc_mem_resolve(CUdeviceptr p, size_t n, int *kind, int *devo)
{
    uintptr_t v = (uintptr_t)p;
    void *r = NULL;
    int di = dev_of(v);
    pthread_mutex_lock(&hc_mu);
    if (di >= 0) {
        hc_dev *d = &hc_devs[di];
        size_t off = v - (uintptr_t)d->dev_base;
        hc_block *b = block_at(d, off);
        *kind = HC_MEM_DEVICE;
        if (devo)
            *devo = di;
        if (b && n <= b->off + b->size - off)
            r = d->rw_base + off;
    } else if (hc_vmm_resolve(v, n, &r, &di)) {   /* a reserved range (hc_vmm.c) */
        *kind = HC_MEM_DEVICE;
        if (devo)
            *devo = di;
    } else {
        hc_host *h = host_at(v);
        if (h) {
            *kind = h->kind;
            if (devo)
                *devo = h->ctx ? h->ctx->dev : 0;
            if (n <= (uintptr_t)h->base + h->size - v)
                r = (void *)v;
        } else {
            *kind = HC_MEM_PAGEABLE;
            if (devo)
                *devo = -1;
            r = (void *)v;
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return r;
}

CUresult hc_mem_alloc(struct CUctx_st *c, size_t n, struct CUmemPoolHandle_st *pool, CUdeviceptr *out)
{
    hc_dev *d = &hc_devs[c->dev];
    size_t need = (n + HC_ALIGN - 1) & ~(size_t)(HC_ALIGN - 1);
    if (need < n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (hc_block *b = d->blocks; b; b = b->next) {
        if (b->used || b->size < need)
            continue;
        if (b->size > need) {   /* split: the tail stays free */
            hc_block *t = calloc(1, sizeof *t);
            if (!t)
                return CUDA_ERROR_OUT_OF_MEMORY;
            t->off = b->off + need;
            t->size = b->size - need;
            t->prev = b;
            t->next = b->next;
            if (b->next)
                b->next->prev = t;
            b->next = t;
            b->size = need;
        }
        b->used = 1;
        b->req = n;
        b->ctx = pool ? NULL : c;
        b->pool = pool;
        d->used += b->size;
        if (pool) {
            pool->live++;
            pool->used += n;
            pool->reserved += b->size;
            if (pool->used > pool->used_high)
                pool->used_high = pool->used;
            if (pool->reserved > pool->reserved_high)
                pool->reserved_high = pool->reserved;
        }
        if (hc_opt.poison)   /* a read before any write sees NaN (f16/bf16/f32/f64) or -1, not 0 */
            memset(d->rw_base + b->off, HC_POISON_BYTE, n);
        *out = (CUdeviceptr)(uintptr_t)(d->dev_base + b->off);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static int range_cmp(const void *a, const void *b)
{
    const hc_exec_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

hc_exec_range *hc_mem_ranges(int *n)
{
    int cap = 64, k = 0;
    hc_exec_range *r = malloc((size_t)cap * sizeof *r);
    if (!r)
        return NULL;
    for (int i = 0; i < hc_ndev; i++)
        for (hc_block *b = hc_devs[i].blocks; b; b = b->next) {
            if (!b->used)
                continue;
            if (k == cap) {
                hc_exec_range *nr = realloc(r, (size_t)(cap *= 2) * sizeof *r);
                if (!nr) {
                    free(r);
                    return NULL;
                }
                r = nr;
            }
            r[k++] = (hc_exec_range){(uintptr_t)hc_devs[i].dev_base + b->off, b->req ? b->req : b->size, b->size,
                                     hc_devs[i].rw_base + b->off};
        }
    for (hc_host *h = hc_hosts; h; h = h->next) {
        if (k == cap) {
            hc_exec_range *nr = realloc(r, (size_t)(cap *= 2) * sizeof *r);
            if (!nr) {
                free(r);
                return NULL;
            }
            r = nr;
        }
        r[k++] = (hc_exec_range){(uintptr_t)h->base, h->size, h->size, h->base};
    }
    qsort(r, (size_t)k, sizeof *r, range_cmp);
    *n = k;
    return r;
}

static void punch(hc_dev *d, size_t off, size_t size)
{
    size_t pg = 4096, a = (off + pg - 1) & ~(pg - 1), e = (off + size) & ~(pg - 1);
    if (e > a)
        (void)fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a, (off_t)(e - a));
}

static void block_release(hc_dev *d, hc_block *b)
{
    struct CUmemPoolHandle_st *pool = b->pool;
    if (pool) {
        pool->live--;
        pool->used -= b->req;
        pool->reserved -= b->size;
        if (pool->dying && pool->live == 0)
            free(pool);   /* destroyed while in use: released with its last allocation */
    }
    b->used = 0;
    b->ctx = NULL;
    b->pool = NULL;
    d->used -= b->size;
    if (b->next && !b->next->used) {
        hc_block *n = b->next;
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        free(n);
    }
    if (b->prev && !b->prev->used) {
        hc_block *p = b->prev;
        p->size += b->size;
        p->next = b->next;
        if (b->next)
            b->next->prev = p;
        free(b);
        b = p;
    }
    punch(d, b->off, b->size);
}

static void host_unlink(hc_host *h)
{
    for (hc_host **pp = &hc_hosts; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            return;
        }
}

CUresult hc_mem_free(CUdeviceptr p)
{
    uintptr_t v = (uintptr_t)p;
    int di = dev_of(v);
    if (di >= 0) {
        hc_dev *d = &hc_devs[di];
        size_t off = v - (uintptr_t)d->dev_base;
        hc_block *b = block_at(d, off);
        if (!b || b->off != off)
            return CUDA_ERROR_INVALID_VALUE;
        if (b->graph_hold) {   /* a graph's memory: freed, but its address stays the graph's */
            if (b->graph_freed)
                return CUDA_ERROR_INVALID_VALUE;
            b->graph_freed = 1;
            return CUDA_SUCCESS;
        }
        block_release(d, b);
        return CUDA_SUCCESS;
    }
    hc_host *h = host_at(v);
    if (!h || h->kind != HC_MEM_MANAGED || (uintptr_t)h->base != v)
        return CUDA_ERROR_INVALID_VALUE;
    hc_managed_forget(v);
    host_unlink(h);
    munmap(h->base, h->size);
    free(h);
    return CUDA_SUCCESS;
}

CUresult hc_mem_graph_hold(CUdeviceptr p, int how)
{
    uintptr_t v = (uintptr_t)p;
    int di = dev_of(v);
    hc_dev *d = di >= 0 ? &hc_devs[di] : NULL;
    hc_block *b = d ? block_at(d, v - (uintptr_t)d->dev_base) : NULL;
    if (!b || !b->used || (uintptr_t)d->dev_base + b->off != v)
        return CUDA_ERROR_INVALID_VALUE;
    if (how > 0) {
        b->graph_hold = 1;
        b->graph_freed = 0;
    } else if (how == 0) {
        b->graph_freed = 0;
    } else {
        b->graph_hold = 0;
        if (b->graph_freed)
            block_release(d, b);
    }
    return CUDA_SUCCESS;
}

void hc_mem_free_ctx(struct CUctx_st *c)
{
    hc_dev *d = &hc_devs[c->dev];
    for (hc_block *b = d->blocks; b;) {
        if (b->used && b->ctx == c) {
            block_release(d, b);
            b = d->blocks;   /* the list changed under us; restart (rare path) */
        } else {
            b = b->next;
        }
    }
    for (hc_host *h = hc_hosts; h;) {
        hc_host *n = h->next;
        if (h->ctx == c) {
            if (h->kind == HC_MEM_MANAGED)
                hc_managed_forget((uintptr_t)h->base);
            host_unlink(h);
            if (!h->registered)
                munmap(h->base, h->size);
            free(h);
        }
        h = n;
    }
}

/* ---------------------------------------------------------------- cuMemAlloc family */
static CUresult mem_alloc(CUdeviceptr *dptr, size_t bytesize)
{
    HC_CHECK_INIT();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS)
        rc = hc_graph_unsafe_call();   /* not observed by a stream capture: prohibited in its modes */
    if (rc == CUDA_SUCCESS)
        rc = hc_mem_alloc(c, bytesize, NULL, dptr);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    HC_COUNT(cuMemAlloc);
    HC_CHECK_INIT();
    (void)dptr; (void)bytesize;
    return CUDA_ERROR_NOT_SUPPORTED;   /* 32-bit device pointers cannot address the arenas */
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    HC_COUNT(cuMemAlloc_v2);
    return mem_alloc(dptr, bytesize);
}

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                                 unsigned int Height, unsigned int ElementSizeBytes)
{
    HC_COUNT(cuMemAllocPitch);
    HC_CHECK_INIT();
    (void)dptr; (void)pPitch; (void)WidthInBytes; (void)Height; (void)ElementSizeBytes;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes)
{
    HC_COUNT(cuMemAllocPitch_v2);
    HC_CHECK_INIT();
    if (!dptr || !pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (WidthInBytes + 511) & ~(size_t)511;
    if (Height > SIZE_MAX / pitch)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = mem_alloc(dptr, pitch * Height);
    if (rc == CUDA_SUCCESS)
        *pPitch = pitch;
    return rc;
}

static CUresult mem_free(CUdeviceptr p)
{
    HC_CHECK_INIT();
    if (p == 0)
        return CUDA_SUCCESS;   /* like cudaFree(NULL) */
    pthread_mutex_lock(&hc_mu);
    int di = dev_of((uintptr_t)p);
    /* Like the real driver, freeing device memory waits for work that may still use it. */
    if (di >= 0) {
        struct CUctx_st *cur = NULL;
        if (hc_current_ctx(&cur) == CUDA_SUCCESS)
            hc_ctx_sync(cur);
        hc_dev *d = &hc_devs[di];
        hc_block *b = block_at(d, (uintptr_t)p - (uintptr_t)d->dev_base);
        if (b && b->ctx && b->ctx != cur)
            hc_ctx_sync(b->ctx);
    }
    CUresult rc = hc_mem_free(p);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
    HC_COUNT(cuMemFree);
    return mem_free((CUdeviceptr)dptr);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    HC_COUNT(cuMemFree_v2);
    return mem_free(dptr);
}

static CUresult mem_get_info(size_t *freeb, size_t *total)
{
    HC_CHECK_INIT();
    if (!freeb || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS) {
        *total = hc_devs[c->dev].size;
        *freeb = hc_devs[c->dev].size - hc_devs[c->dev].used;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemGetInfo(unsigned int *free, unsigned int *total)
{
    HC_COUNT(cuMemGetInfo);
    size_t f = 0, t = 0;
    CUresult rc = mem_get_info(free ? &f : NULL, total ? &t : NULL);
    if (rc == CUDA_SUCCESS) {
        *free = f > 0xffffffffu ? 0xffffffffu : (unsigned int)f;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned int)t;
    }
    return rc;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total)
{
    HC_COUNT(cuMemGetInfo_v2);
    return mem_get_info(free, total);
}

/* base and size of the allocation holding v; 0 if none (hc_mu held) */
static int range_of(uintptr_t v, uintptr_t *base, size_t *size, struct CUctx_st **ctx, int *kind,
                    struct CUmemPoolHandle_st **pool)
{
    if (pool)
        *pool = NULL;
    int di = dev_of(v);
    if (di >= 0) {
        hc_dev *d = &hc_devs[di];
        hc_block *b = block_at(d, v - (uintptr_t)d->dev_base);
        if (!b)
            return 0;
        *base = (uintptr_t)d->dev_base + b->off;
        *size = b->size;
        *ctx = b->ctx;
        *kind = HC_MEM_DEVICE;
        if (pool)
            *pool = b->pool;
        return 1;
    }
    hc_host *h = host_at(v);
    if (!h)
        return 0;
    *base = (uintptr_t)h->base;
    *size = h->size;
    *ctx = h->ctx;
    *kind = h->kind;
    return 1;
}

static CUresult get_range(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    HC_CHECK_INIT();
    uintptr_t b;
    size_t s;
    struct CUctx_st *c;
    int k;
    pthread_mutex_lock(&hc_mu);
    int ok = range_of((uintptr_t)dptr, &b, &s, &c, &k, NULL) && (k == HC_MEM_DEVICE || k == HC_MEM_MANAGED);
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)b;
    if (psize)
        *psize = s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr_v1 *pbase, unsigned int *psize, CUdeviceptr_v1 dptr)
{
    HC_COUNT(cuMemGetAddressRange);
    CUdeviceptr b;
    size_t s;
    CUresult rc = get_range(&b, &s, (CUdeviceptr)dptr);
    if (rc == CUDA_SUCCESS) {
        if (pbase)
            *pbase = (CUdeviceptr_v1)b;
        if (psize)
            *psize = (unsigned int)s;
    }
    return rc;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    HC_COUNT(cuMemGetAddressRange_v2);
    return get_range(pbase, psize, dptr);
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    HC_COUNT(cuPointerGetAttribute);
    HC_CHECK_INIT();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t b;
    size_t s;
    struct CUctx_st *c = NULL;
    int k;
    struct CUmemPoolHandle_st *pool;
    pthread_mutex_lock(&hc_mu);
    int ok = range_of((uintptr_t)ptr, &b, &s, &c, &k, &pool);
    int dev = c ? c->dev : dev_of((uintptr_t)ptr);
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = c; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = k == HC_MEM_PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (k == HC_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(int *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = b; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = k == HC_MEM_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = dev < 0 ? 0 : dev; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = (CUdeviceptr)b; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = s; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(int *)data = k == HC_MEM_DEVICE; break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: *(unsigned long long *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(int *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(int *)data = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE; break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = pool; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- host and managed memory */
static CUresult host_alloc(void **pp, size_t n, int kind, unsigned int flags)
{
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc != CUDA_SUCCESS) {
        pthread_mutex_unlock(&hc_mu);
        return rc;
    }
    size_t len = (n + 4095) & ~(size_t)4095;
    hc_host *h = calloc(1, sizeof *h);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!h || p == MAP_FAILED) {
        free(h);
        if (p != MAP_FAILED)
            munmap(p, len);
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    h->base = p;
    h->size = len;
    h->req = n;
    h->kind = kind;
    h->flags = flags;
    h->ctx = c;
    h->next = hc_hosts;
    hc_hosts = h;
    pthread_mutex_unlock(&hc_mu);
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    HC_COUNT(cuMemAllocManaged);
    HC_CHECK_INIT();
    if (!dptr || bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    void *p;
    CUresult rc = host_alloc(&p, bytesize, HC_MEM_MANAGED, flags);
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
    HC_COUNT(cuMemAllocHost);
    HC_CHECK_INIT();
    if (!pp || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(pp, bytesize, HC_MEM_PINNED, 0);
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    HC_COUNT(cuMemAllocHost_v2);
    HC_CHECK_INIT();
    if (!pp || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(pp, bytesize, HC_MEM_PINNED, 0);
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    HC_COUNT(cuMemHostAlloc);
    HC_CHECK_INIT();
    if (!pp || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    return host_alloc(pp, bytesize, HC_MEM_PINNED, Flags);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    HC_COUNT(cuMemFreeHost);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    hc_host *h = host_at((uintptr_t)p);
    if (!h || h->registered || h->kind != HC_MEM_PINNED || h->base != p) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    host_unlink(h);
    pthread_mutex_unlock(&hc_mu);
    munmap(h->base, h->size);
    free(h);
    return CUDA_SUCCESS;
}

static CUresult host_dev_ptr(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    HC_CHECK_INIT();
    if (!pdptr || !p || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    hc_host *h = host_at((uintptr_t)p);
    int ok = h && h->kind == HC_MEM_PINNED;
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;   /* unified addressing: same address */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr_v1 *pdptr, void *p, unsigned int Flags)
{
    HC_COUNT(cuMemHostGetDevicePointer);
    CUdeviceptr d;
    CUresult rc = host_dev_ptr(&d, p, Flags);
    if (rc == CUDA_SUCCESS && pdptr && d > 0xffffffffu)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (rc == CUDA_SUCCESS && pdptr)
        *pdptr = (CUdeviceptr_v1)d;
    return pdptr ? rc : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    HC_COUNT(cuMemHostGetDevicePointer_v2);
    return host_dev_ptr(pdptr, p, Flags);
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    HC_COUNT(cuMemHostGetFlags);
    HC_CHECK_INIT();
    if (!pFlags || !p)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    hc_host *h = host_at((uintptr_t)p);
    int ok = h && h->kind == HC_MEM_PINNED && !h->registered;
    if (ok)
        *pFlags = h->flags;
    pthread_mutex_unlock(&hc_mu);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult host_register(void *p, size_t bytesize, unsigned int Flags)
{
    HC_CHECK_INIT();
    if (!p || bytesize == 0 ||
        (Flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                             CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t v = (uintptr_t)p;
    if (dev_of(v) >= 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS) {
        for (hc_host *h = hc_hosts; h; h = h->next)
            if (v < (uintptr_t)h->base + h->size && (uintptr_t)h->base < v + bytesize)
                rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    if (rc == CUDA_SUCCESS) {
        hc_host *h = calloc(1, sizeof *h);
        if (!h) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            h->base = p;
            h->size = bytesize;
            h->kind = HC_MEM_PINNED;
            h->registered = 1;
            h->flags = Flags;
            h->ctx = c;
            h->next = hc_hosts;
            hc_hosts = h;
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    HC_COUNT(cuMemHostRegister);
    return host_register(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    HC_COUNT(cuMemHostRegister_v2);
    return host_register(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    HC_COUNT(cuMemHostUnregister);
    HC_CHECK_INIT();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    hc_host *h = host_at((uintptr_t)p);
    int ok = h && h->registered && h->base == p;
    if (ok)
        host_unlink(h);
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    free(h);
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- stream-ordered allocation */
typedef struct { CUdeviceptr p; } free_payload;

static void run_free(hc_op *op)
{
    pthread_mutex_lock(&hc_mu);
    (void)hc_mem_free(((free_payload *)op->payload)->p);
    pthread_mutex_unlock(&hc_mu);
}

static void fini_free(hc_op *op)
{
    free(op->payload);
}

/* hc_gnode.c: is op a cuMemFreeAsync (a captured free node)? */
int hc_op_is_free(const hc_op *op)
{
    return op->run == run_free;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream,
                            int per_thread, int check_pool)
{
    HC_CHECK_INIT();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = CUDA_SUCCESS;
    if (check_pool && hc_reg_kind(pool) != HC_K_POOL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = hc_stream_resolve(hStream, per_thread, &s);
    if (rc == CUDA_SUCCESS && check_pool && pool->dev != s->ctx->dev)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = hc_mem_alloc(s->ctx, bytesize, check_pool ? pool : hc_devs[s->ctx->dev].cur_pool, dptr);
    if (rc == CUDA_SUCCESS && s->capture)
        rc = hc_graph_capture_alloc(s, *dptr, bytesize);   /* a memory alloc node of the capture */
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    HC_COUNT(cuMemAllocAsync);
    return alloc_async(dptr, bytesize, NULL, hStream, 0, 0);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    HC_COUNT(cuMemAllocAsync_ptsz);
    return alloc_async(dptr, bytesize, NULL, hStream, 1, 0);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    HC_COUNT(cuMemAllocFromPoolAsync);
    return alloc_async(dptr, bytesize, pool, hStream, 0, 1);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream)
{
    HC_COUNT(cuMemAllocFromPoolAsync_ptsz);
    return alloc_async(dptr, bytesize, pool, hStream, 1, 1);
}

static CUresult free_async(CUdeviceptr dptr, CUstream hStream, int per_thread)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(hStream, per_thread, &s);
    if (rc == CUDA_SUCCESS) {
        int di = dev_of((uintptr_t)dptr);
        hc_block *b = di < 0 ? NULL : block_at(&hc_devs[di], (uintptr_t)dptr - (uintptr_t)hc_devs[di].dev_base);
        if (!b || (uintptr_t)hc_devs[di].dev_base + b->off != (uintptr_t)dptr)
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    free_payload *fp = NULL;
    hc_op *op = NULL;
    if (rc == CUDA_SUCCESS) {
        fp = malloc(sizeof *fp);
        op = fp ? hc_op_new(run_free, fini_free, fp) : NULL;
        if (!op) {
            free(fp);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (rc == CUDA_SUCCESS) {
        fp->p = dptr;
        hc_enqueue(s, op);
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    HC_COUNT(cuMemFreeAsync);
    return free_async(dptr, hStream, 0);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    HC_COUNT(cuMemFreeAsync_ptsz);
    return free_async(dptr, hStream, 1);
}

int hc_mem_managed_range(uintptr_t v, uintptr_t *base, size_t *size)
{
    hc_host *h = host_at(v);
    if (!h || h->kind != HC_MEM_MANAGED)
        return 0;
    *base = (uintptr_t)h->base;
    *size = h->size;
    return 1;
}

/* ---------------------------------------------------------------- stream association of managed memory */
/* Host memory is coherent for every stream and the host alike, so an association changes nothing
 * that can be observed; the arguments are checked as the driver documents them (a managed
 * allocation whose whole length or 0 is named, one of the three attach flags, a valid stream).
 * Pageable memory is refused: CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0 here. */
static CUresult attach_mem(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags, int per_thread)
{
    HC_CHECK_INIT();
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(hStream, per_thread, &s);
    hc_host *h = rc == CUDA_SUCCESS ? host_at((uintptr_t)dptr) : NULL;
    if (rc == CUDA_SUCCESS && (!h || h->kind != HC_MEM_MANAGED || (uintptr_t)h->base != (uintptr_t)dptr))
        rc = CUDA_ERROR_INVALID_VALUE;
    /* the whole allocation: 0 or its length as asked for */
    if (rc == CUDA_SUCCESS && length != 0 && length != h->req)
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags)
{
    HC_COUNT(cuStreamAttachMemAsync);
    return attach_mem(hStream, dptr, length, flags, 0);
}

CUresult CUDAAPI cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags)
{
    HC_COUNT(cuStreamAttachMemAsync_ptsz);
    return attach_mem(hStream, dptr, length, flags, 1);
}

/* ---------------------------------------------------------------- inter-process handles */
/* hostcuda's memory lives in this process only: it answers as a GPU without IPC support
 * (CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED is 0), after the arguments' own checks */
CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    HC_COUNT(cuIpcGetMemHandle);
    HC_CHECK_INIT();
    return !pHandle || !dptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    HC_COUNT(cuIpcOpenMemHandle_v2);
    HC_CHECK_INIT();
    (void)handle;
    return !pdptr || (Flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ? CUDA_ERROR_INVALID_VALUE
                                                                           : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    HC_COUNT(cuIpcCloseMemHandle);
    HC_CHECK_INIT();
    return !dptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    HC_COUNT(cuIpcGetEventHandle);
    HC_CHECK_INIT();
    return !pHandle || !event ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    HC_COUNT(cuIpcOpenEventHandle);
    HC_CHECK_INIT();
    (void)handle;
    return !phEvent ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}
