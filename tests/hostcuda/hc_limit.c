/* hc_limit.c — cuCtxSetLimit / cuCtxGetLimit and the device malloc heap of interpreted kernels.
 * Each context keeps every CUlimit (CUDA 13's defaults for an H100 until set). Honoured by the
 * interpreter: STACK_SIZE (a thread's call stack), PRINTF_FIFO_SIZE (device printf bytes kept per
 * launch) and MALLOC_HEAP_SIZE (the heap device malloc/free use). PERSISTING_L2_CACHE_SIZE is kept
 * up to the device's MAX_PERSISTING_L2_CACHE_SIZE; the device-runtime and L2 limits are kept only.
 * As on a GPU, the heap and printf FIFO sizes cannot change once a kernel that uses them launched.
 * The heap is one device allocation of the context, made at the first launch of a kernel that
 * calls malloc or free; its bookkeeping lies outside it (a kernel's stray store cannot corrupt it).
 * Threading: the limits under hc_mu; the heap's blocks under its own lock (kernels run without hc_mu).
 * Must not: hand out overlapping blocks, or accept free of an address malloc did not return. */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>

#define HC_HEAP_ALIGN 16
#define HC_STACK_MAX_BYTES (256u * 1024)   /* hostcuda's largest per-thread stack */

typedef struct hc_heap_blk {
    size_t off, size;
} hc_heap_blk;

typedef struct hc_heap {
    pthread_mutex_t mu;
    CUdeviceptr base;
    size_t size;
    hc_heap_blk *live;   /* sorted by off */
    size_t n, cap;
} hc_heap;

struct hc_limits {
    size_t v[CU_LIMIT_MAX];
    int malloc_used, printf_used;
    hc_heap *heap;
};

static const size_t limit_default[CU_LIMIT_MAX] = {
    [CU_LIMIT_STACK_SIZE] = 1024,
    [CU_LIMIT_PRINTF_FIFO_SIZE] = 1048576,
    [CU_LIMIT_MALLOC_HEAP_SIZE] = 8388608,
    [CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
    [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
    [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
    [CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0,
    [CU_LIMIT_SHMEM_SIZE] = 0,
    [CU_LIMIT_CIG_ENABLED] = 0,
    [CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 1,
};

/* hc_mu held */
static struct hc_limits *limits_of(struct CUctx_st *c)
{
    if (!c->limits) {
        c->limits = calloc(1, sizeof *c->limits);
        if (c->limits)
            memcpy(c->limits->v, limit_default, sizeof limit_default);
    }
    return c->limits;
}

static CUresult set_limit(struct hc_limits *l, CUlimit limit, size_t value)
{
    switch (limit) {
    case CU_LIMIT_STACK_SIZE:
        if (value > HC_STACK_MAX_BYTES)
            return CUDA_ERROR_INVALID_VALUE;
        value = (value + 15) & ~(size_t)15;
        break;
    case CU_LIMIT_PRINTF_FIFO_SIZE:
        if (l->printf_used || value == 0)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_MALLOC_HEAP_SIZE:
        if (l->malloc_used || value > hc_opt.mem_bytes)
            return CUDA_ERROR_INVALID_VALUE;
        value = (value + HC_HEAP_ALIGN - 1) & ~(size_t)(HC_HEAP_ALIGN - 1);
        break;
    case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
        if (value > 128)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: {
        int max = 0;
        cuDeviceGetAttribute(&max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0);
        if (value > (size_t)max)
            return CUDA_ERROR_INVALID_VALUE;
        break;
    }
    case CU_LIMIT_SHMEM_SIZE: case CU_LIMIT_CIG_ENABLED:   /* can only be queried */
        return CUDA_ERROR_INVALID_VALUE;
    case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH: case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
    case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
        break;
    default:
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    }
    l->v[limit] = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
    HC_COUNT(cuCtxSetLimit);
    HC_CHECK_INIT();
    if ((unsigned)limit >= CU_LIMIT_MAX)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    struct hc_limits *l = rc == CUDA_SUCCESS ? limits_of(c) : NULL;
    if (rc == CUDA_SUCCESS)
        rc = l ? set_limit(l, limit, value) : CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    HC_COUNT(cuCtxGetLimit);
    HC_CHECK_INIT();
    if (!pvalue)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned)limit >= CU_LIMIT_MAX)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    struct hc_limits *l = rc == CUDA_SUCCESS ? limits_of(c) : NULL;
    if (rc == CUDA_SUCCESS && !l)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS)
        *pvalue = l->v[limit];
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- launches */
CUresult hc_limit_for_launch(struct CUctx_st *c, int uses_malloc, int uses_printf, hc_launch_limits *out)
{
    struct hc_limits *l = limits_of(c);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(out, 0, sizeof *out);
    out->stack = l->v[CU_LIMIT_STACK_SIZE];
    out->printf_fifo = l->v[CU_LIMIT_PRINTF_FIFO_SIZE];
    if (uses_printf)
        l->printf_used = 1;
    if (!uses_malloc)
        return CUDA_SUCCESS;
    if (!l->heap) {
        hc_heap *h = calloc(1, sizeof *h);
        if (!h)
            return CUDA_ERROR_OUT_OF_MEMORY;
        h->size = l->v[CU_LIMIT_MALLOC_HEAP_SIZE];
        CUresult rc = h->size ? hc_mem_alloc(c, h->size, NULL, &h->base) : CUDA_SUCCESS;
        if (rc != CUDA_SUCCESS) {
            free(h);
            return rc;
        }
        pthread_mutex_init(&h->mu, NULL);
        l->heap = h;
    }
    l->malloc_used = 1;
    out->heap = l->heap;
    return CUDA_SUCCESS;
}

void hc_limit_teardown(struct CUctx_st *c)
{
    struct hc_limits *l = c->limits;
    if (!l)
        return;
    if (l->heap) {   /* its device allocation goes with the context's (hc_mem_free_ctx) */
        pthread_mutex_destroy(&l->heap->mu);
        free(l->heap->live);
        free(l->heap);
    }
    free(l);
    c->limits = NULL;   /* a reset context starts again from the defaults */
}

/* first fit, trying the end first (allocations that are never freed stay O(1)) */
uint64_t hc_heap_alloc(void *heap, uint64_t n)
{
    hc_heap *h = heap;
    if (n > h->size)
        return 0;
    size_t need = n ? (size_t)(n + HC_HEAP_ALIGN - 1) & ~(size_t)(HC_HEAP_ALIGN - 1) : HC_HEAP_ALIGN;
    uint64_t a = 0;
    pthread_mutex_lock(&h->mu);
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        hc_heap_blk *nb = realloc(h->live, nc * sizeof *nb);
        if (!nb)
            goto out;
        h->live = nb;
        h->cap = nc;
    }
    size_t at = h->n, off = h->n ? h->live[h->n - 1].off + h->live[h->n - 1].size : 0;
    if (h->size - off < need) {
        size_t prev = 0;
        at = SIZE_MAX;
        for (size_t i = 0; i < h->n; i++) {
            if (h->live[i].off - prev >= need) {
                at = i;
                off = prev;
                break;
            }
            prev = h->live[i].off + h->live[i].size;
        }
        if (at == SIZE_MAX)
            goto out;   /* exhausted: NULL, as a GPU's malloc answers */
    }
    memmove(&h->live[at + 1], &h->live[at], (h->n - at) * sizeof *h->live);
    h->live[at] = (hc_heap_blk){off, need};
    h->n++;
    a = h->base + off;
out:
    pthread_mutex_unlock(&h->mu);
    return a;
}

int hc_heap_free(void *heap, uint64_t a)
{
    hc_heap *h = heap;
    int rc = -1;
    if (a < h->base || a >= h->base + h->size)
        return -1;
    size_t off = a - h->base;
    pthread_mutex_lock(&h->mu);
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->live[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < h->n && h->live[lo].off == off) {
        memmove(&h->live[lo], &h->live[lo + 1], (h->n - lo - 1) * sizeof *h->live);
        h->n--;
        rc = 0;
    }
    pthread_mutex_unlock(&h->mu);
    return rc;
}
