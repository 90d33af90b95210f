/* hc_copy.c — hostcuda memcpy and memset (sync, async, _ptds/_ptsz twins, legacy 32-bit variants).
 *
 * Copies and memsets are ops queued on a stream; the host-side waiting follows NVIDIA's
 * "API synchronization behavior" page, so a program that skips a synchronise sees stale data:
 *   sync memcpy: pageable->device waits for the stream's earlier work, stages the source and
 *     returns before the copy lands; pinned->device, device->host and host->host wait for
 *     completion; device->device does not wait;
 *   async memcpy: device->pageable waits; pageable->device is staged; everything else is fully
 *     asynchronous (pinned buffers are read/written when the op runs);
 *   sync memset: asynchronous unless the target is pinned or managed host memory; async memset: async.
 * Legacy 32-bit CUdeviceptr_v1 variants are exported but cannot address the 64-bit arenas.
 * Threading: pointer classification takes hc_mu itself; enqueue happens under hc_mu.
 * Must not: wait where the real driver does not (a program that skips a synchronise must see stale
 * data) or skip a wait the real driver makes; enqueue without hc_mu.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>

enum dir { D_HTOD, D_DTOH, D_DTOD, D_ANY };

typedef struct {
    void *dst;
    const void *src;
    size_t n;
    void *staging;
    unsigned int val;
    int width;   /* memset element width; 0 for copies */
} xfer_payload;

static void run_xfer(hc_op *op)
{
    xfer_payload *p = op->payload;
    if (!p->width) {
        memmove(p->dst, p->staging ? p->staging : p->src, p->n);
        return;
    }
    if (p->width == 1) {
        memset(p->dst, (int)(p->val & 0xff), p->n);
    } else if (p->width == 2) {
        uint16_t v = (uint16_t)p->val, *d = p->dst;
        for (size_t i = 0; i < p->n; i++)
            d[i] = v;
    } else {
        uint32_t v = p->val, *d = p->dst;
        for (size_t i = 0; i < p->n; i++)
            d[i] = v;
    }
}

static void fini_xfer(hc_op *op)
{
    xfer_payload *p = op->payload;
    free(p->staging);
    free(p);
}

/* hc_capture.c: 1 for a copy op, 2 for a memset op, 0 for any other (a captured node's type) */
int hc_xfer_kind(const hc_op *op)
{
    return op->run != run_xfer ? 0 : ((const xfer_payload *)op->payload)->width ? 2 : 1;
}

/* hc_capture.c: a captured copy from pageable memory reads its source when it runs (at each replay),
 * not a copy staged at the call (hc_mu held; the op has not run) */
void hc_xfer_unstage(hc_op *op)
{
    if (op->run != run_xfer)
        return;
    xfer_payload *p = op->payload;
    free(p->staging);
    p->staging = NULL;
}

static int dev_side(int kind)   /* may be named as a device pointer */
{
    return kind != HC_MEM_PAGEABLE;
}

/* Queue p on stream h; wait for it if `wait`. presync: first wait for the stream's earlier work,
 * then stage the (pageable) source, as the synchronous pageable->device copy does. */
static CUresult submit(xfer_payload *p, CUstream h, int pt, int wait, int presync)
{
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && presync) {
        hc_stream_sync(s);
        rc = hc_stream_resolve(h, pt, &s);   /* the wait dropped hc_mu */
    }
    hc_op *op = rc == CUDA_SUCCESS ? hc_op_new(run_xfer, fini_xfer, p) : NULL;
    if (rc == CUDA_SUCCESS && !op)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS && p->staging)
        memcpy(p->staging, p->src, p->n);
    if (rc != CUDA_SUCCESS) {
        pthread_mutex_unlock(&hc_mu);
        free(p->staging);
        free(p);
        return rc;
    }
    hc_mark *m = hc_mark_ref(hc_enqueue(s, op));
    if (wait)
        hc_mark_wait(m);
    hc_mark_unref(m);
    if (wait)
        hc_ctx_flush_printf(s->ctx);
    rc = hc_ctx_sticky(s->ctx);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n, enum dir dir, CUstream h, int pt, int async)
{
    HC_CHECK_INIT();
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    int kd, ks;
    void *d = hc_mem_resolve(dst, n, &kd, NULL);
    void *s = hc_mem_resolve(src, n, &ks, NULL);
    if (!d || !s)
        return CUDA_ERROR_INVALID_VALUE;   /* range runs past the allocation */
    switch (dir) {
    case D_HTOD: if (!dev_side(kd) || ks == HC_MEM_DEVICE) return CUDA_ERROR_INVALID_VALUE; break;
    case D_DTOH: if (!dev_side(ks) || kd == HC_MEM_DEVICE) return CUDA_ERROR_INVALID_VALUE; break;
    case D_DTOD: if (!dev_side(kd) || !dev_side(ks)) return CUDA_ERROR_INVALID_VALUE; break;
    case D_ANY: break;
    }
    if (n == 0) {
        pthread_mutex_lock(&hc_mu);
        struct CUstream_st *st;
        CUresult rc = hc_stream_resolve(h, pt, &st);
        pthread_mutex_unlock(&hc_mu);
        return rc;
    }
    xfer_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->dst = d;
    p->src = s;
    p->n = n;
    int wait, stage = 0, presync = 0;
    int dst_dev = kd == HC_MEM_DEVICE, src_dev = ks == HC_MEM_DEVICE;
    if (!async) {
        if (!src_dev && dst_dev && ks == HC_MEM_PAGEABLE)
            stage = presync = 1, wait = 0;   /* pageable -> device: stream sync, stage, DMA later */
        else if (src_dev && dst_dev)
            wait = 0;                     /* device -> device: no host synchronisation */
        else
            wait = 1;                     /* pinned -> device, device -> host, host -> host */
    } else {
        if (src_dev && kd == HC_MEM_PAGEABLE)
            wait = 1;                     /* device -> pageable host returns once complete */
        else if (!src_dev && ks == HC_MEM_PAGEABLE && dst_dev)
            stage = 1, wait = 0;          /* pageable source is staged at call time */
        else if (!src_dev && !dst_dev)
            wait = kd == HC_MEM_PAGEABLE || ks == HC_MEM_PAGEABLE;
        else
            wait = 0;
    }
    if (stage) {   /* filled by submit() */
        p->staging = malloc(n);
        if (!p->staging) {
            free(p);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    return submit(p, h, pt, wait, presync);
}

static CUresult set(CUdeviceptr dst, unsigned int val, size_t n, int width, CUstream h, int pt, int async)
{
    HC_CHECK_INIT();
    if (!dst || (dst & (CUdeviceptr)(width - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    int kd;
    void *d = hc_mem_resolve(dst, n * (size_t)width, &kd, NULL);
    if (!d || !dev_side(kd))
        return CUDA_ERROR_INVALID_VALUE;
    if (n == 0)
        return CUDA_SUCCESS;
    xfer_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->dst = d;
    p->n = n;
    p->val = val;
    p->width = width;
    return submit(p, h, pt, !async && kd != HC_MEM_DEVICE, 0);
}

#define NOSTREAM ((CUstream)0)

/* ---------------------------------------------------------------- memcpy HtoD / DtoH / DtoD */
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    HC_COUNT(cuMemcpyHtoD);
    return copy((CUdeviceptr)dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    HC_COUNT(cuMemcpyHtoD_v2);
    return copy(dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    HC_COUNT(cuMemcpyHtoD_v2_ptds);
    return copy(dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    HC_COUNT(cuMemcpyDtoH);
    return copy((CUdeviceptr)(uintptr_t)dstHost, (CUdeviceptr)srcDevice, ByteCount, D_DTOH, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoH_v2);
    return copy((CUdeviceptr)(uintptr_t)dstHost, srcDevice, ByteCount, D_DTOH, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoH_v2_ptds);
    return copy((CUdeviceptr)(uintptr_t)dstHost, srcDevice, ByteCount, D_DTOH, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    HC_COUNT(cuMemcpyDtoD);
    return copy((CUdeviceptr)dstDevice, (CUdeviceptr)srcDevice, ByteCount, D_DTOD, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoD_v2);
    return copy(dstDevice, srcDevice, ByteCount, D_DTOD, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoD_v2_ptds);
    return copy(dstDevice, srcDevice, ByteCount, D_DTOD, NOSTREAM, 1, 0);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                                   CUstream hStream)
{
    HC_COUNT(cuMemcpyHtoDAsync);
    return copy((CUdeviceptr)dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyHtoDAsync_v2);
    return copy(dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                           CUstream hStream)
{
    HC_COUNT(cuMemcpyHtoDAsync_v2_ptsz);
    return copy(dstDevice, (CUdeviceptr)(uintptr_t)srcHost, ByteCount, D_HTOD, hStream, 1, 1);
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoHAsync);
    return copy((CUdeviceptr)(uintptr_t)dstHost, (CUdeviceptr)srcDevice, ByteCount, D_DTOH, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoHAsync_v2);
    return copy((CUdeviceptr)(uintptr_t)dstHost, srcDevice, ByteCount, D_DTOH, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoHAsync_v2_ptsz);
    return copy((CUdeviceptr)(uintptr_t)dstHost, srcDevice, ByteCount, D_DTOH, hStream, 1, 1);
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                   CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoDAsync);
    return copy((CUdeviceptr)dstDevice, (CUdeviceptr)srcDevice, ByteCount, D_DTOD, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoDAsync_v2);
    return copy(dstDevice, srcDevice, ByteCount, D_DTOD, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream)
{
    HC_COUNT(cuMemcpyDtoDAsync_v2_ptsz);
    return copy(dstDevice, srcDevice, ByteCount, D_DTOD, hStream, 1, 1);
}

/* ---------------------------------------------------------------- unified-address memcpy */
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    HC_COUNT(cuMemcpy);
    return copy(dst, src, ByteCount, D_ANY, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    HC_COUNT(cuMemcpy_ptds);
    return copy(dst, src, ByteCount, D_ANY, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyAsync);
    return copy(dst, src, ByteCount, D_ANY, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyAsync_ptsz);
    return copy(dst, src, ByteCount, D_ANY, hStream, 1, 1);
}

/* Peer copies between contexts. The synchronous form is serialised with all work in both contexts
 * (documented); hostcuda does that by draining both before copying. */
static CUresult peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream h,
                     int pt, int async)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    int ok = hc_ctx_valid(dctx) && hc_ctx_valid(sctx);
    if (ok && !async) {
        hc_ctx_sync(sctx);
        if (dctx != sctx)
            hc_ctx_sync(dctx);
    }
    pthread_mutex_unlock(&hc_mu);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!async) {
        int kd, ks;
        void *d = hc_mem_resolve(dst, n, &kd, NULL), *s = hc_mem_resolve(src, n, &ks, NULL);
        if (!dst || !src || !d || !s || kd != HC_MEM_DEVICE || ks != HC_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        memmove(d, s, n);
        return CUDA_SUCCESS;
    }
    return copy(dst, src, n, D_DTOD, h, pt, 1);
}
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount)
{
    HC_COUNT(cuMemcpyPeer);
    return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount)
{
    HC_COUNT(cuMemcpyPeer_ptds);
    return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyPeerAsync);
    return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyPeerAsync_ptsz);
    return peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1, 1);
}

/* ---------------------------------------------------------------- memset */
CUresult CUDAAPI cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
    HC_COUNT(cuMemsetD8);
    return set((CUdeviceptr)dstDevice, uc, N, 1, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    HC_COUNT(cuMemsetD8_v2);
    return set(dstDevice, uc, N, 1, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    HC_COUNT(cuMemsetD8_v2_ptds);
    return set(dstDevice, uc, N, 1, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD16(CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N)
{
    HC_COUNT(cuMemsetD16);
    return set((CUdeviceptr)dstDevice, us, N, 2, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    HC_COUNT(cuMemsetD16_v2);
    return set(dstDevice, us, N, 2, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    HC_COUNT(cuMemsetD16_v2_ptds);
    return set(dstDevice, us, N, 2, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD32(CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N)
{
    HC_COUNT(cuMemsetD32);
    return set((CUdeviceptr)dstDevice, ui, N, 4, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    HC_COUNT(cuMemsetD32_v2);
    return set(dstDevice, ui, N, 4, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    HC_COUNT(cuMemsetD32_v2_ptds);
    return set(dstDevice, ui, N, 4, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD8Async);
    return set(dstDevice, uc, N, 1, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD8Async_ptsz);
    return set(dstDevice, uc, N, 1, hStream, 1, 1);
}
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD16Async);
    return set(dstDevice, us, N, 2, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD16Async_ptsz);
    return set(dstDevice, us, N, 2, hStream, 1, 1);
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD32Async);
    return set(dstDevice, ui, N, 4, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    HC_COUNT(cuMemsetD32Async_ptsz);
    return set(dstDevice, ui, N, 4, hStream, 1, 1);
}
