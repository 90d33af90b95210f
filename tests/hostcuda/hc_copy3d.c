/* hc_copy3d.c — hostcuda's pitched copies and memsets: cuMemcpy2D/2DUnaligned/2DAsync,
 * cuMemcpy3D/3DAsync (the _v2 entry points and their _ptds/_ptsz twins), cuMemsetD2D8/16/32 and
 * their Async forms.
 *
 * A copy is one op on the stream that moves Depth x Height rows of WidthInBytes, each side at its
 * own (x, y, z) offset, pitch and slice pitch; a memset fills Height rows of Width elements. Each
 * side's whole span (first to last byte) must lie in one allocation; its declared memory type must
 * match the pointer (HOST: not device memory, DEVICE: not pageable host memory, UNIFIED: either).
 * An ARRAY side is the array's own buffer (hc_array_span: its pitch and rows replace the
 * descriptor's, as the driver's do; the region must lie in the array). Host waits follow
 * hc_copy.c's rules (a pageable source is staged at call time; a synchronous copy waits unless it
 * goes device to device or from staged pageable memory; an async copy to pageable memory waits).
 * Threading: resolution takes hc_mu itself; enqueue under hc_mu.
 * Must not: touch a byte outside the named rows (the pitch gaps stay as they were); wait where
 * hc_copy.c's rules do not.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *dst;
    const char *src;
    char *staging;               /* the source's span, copied at call time (pageable source) */
    size_t width, height, depth; /* bytes per row (copies) or elements per row (memsets) */
    size_t dpitch, spitch, dslice, sslice;
    int elem;                    /* memset element size (1, 2, 4); 0 for copies */
    unsigned int val;
} pitched_payload;

static void run_pitched(hc_op *op)
{
    pitched_payload *p = op->payload;
    const char *src = p->staging ? p->staging : p->src;
    for (size_t z = 0; z < p->depth; z++)
        for (size_t y = 0; y < p->height; y++) {
            char *d = p->dst + z * p->dslice + y * p->dpitch;
            if (!p->elem) {
                memmove(d, src + z * p->sslice + y * p->spitch, p->width);
            } else if (p->elem == 1) {
                memset(d, (int)(p->val & 0xff), p->width);
            } else if (p->elem == 2) {
                uint16_t v = (uint16_t)p->val;
                for (size_t i = 0; i < p->width; i++)
                    memcpy(d + 2 * i, &v, 2);
            } else {
                uint32_t v = p->val;
                for (size_t i = 0; i < p->width; i++)
                    memcpy(d + 4 * i, &v, 4);
            }
        }
}

static void fini_pitched(hc_op *op)
{
    pitched_payload *p = op->payload;
    free(p->staging);
    free(p);
}

/* queue p on stream h (per-thread twin: pt); wait for it if `wait` */
static CUresult submit_pitched(pitched_payload *p, CUstream h, int pt, int wait)
{
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    hc_op *op = rc == CUDA_SUCCESS ? hc_op_new(run_pitched, fini_pitched, p) : NULL;
    if (rc == CUDA_SUCCESS && !op)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc != CUDA_SUCCESS) {
        pthread_mutex_unlock(&hc_mu);
        fini_pitched(&(hc_op){.payload = p});
        return rc;
    }
    hc_mark *m = hc_mark_ref(hc_enqueue(s, op));
    if (wait)
        hc_mark_wait(m);
    hc_mark_unref(m);
    rc = hc_ctx_sticky(s->ctx);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* one side of a copy: its first byte's address (hostcuda may touch it) and memory kind */
typedef struct {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray array;
    size_t x, y, z, pitch, height;
} side;

static CUresult resolve_side(side *sd, size_t width, size_t height, size_t depth, char **out, int *kind)
{
    if (sd->type == CU_MEMORYTYPE_ARRAY) {   /* its own pitch and rows; x is in bytes */
        *kind = HC_MEM_DEVICE;
        return hc_array_span(sd->array, sd->x, sd->y, sd->z, width, height, depth, out, &sd->pitch, &sd->height);
    }
    if (sd->type != CU_MEMORYTYPE_HOST && sd->type != CU_MEMORYTYPE_DEVICE && sd->type != CU_MEMORYTYPE_UNIFIED)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t base = sd->type == CU_MEMORYTYPE_HOST ? (uintptr_t)sd->host : (uintptr_t)sd->dev;
    if (!base || ((height > 1 || depth > 1) && sd->pitch < sd->x + width) || (depth > 1 && sd->height < sd->y + height))
        return CUDA_ERROR_INVALID_VALUE;
    size_t slice, first, span, t1, t2;
    /* slice = pitch * height; first = z * slice + y * pitch + x; span = (depth - 1) * slice +
     * (height - 1) * pitch + width: any overflow is a range no allocation holds */
    if (__builtin_mul_overflow(sd->pitch, sd->height, &slice) || __builtin_mul_overflow(sd->z, slice, &t1) ||
        __builtin_mul_overflow(sd->y, sd->pitch, &t2) || __builtin_add_overflow(t1, t2, &first) ||
        __builtin_add_overflow(first, sd->x, &first) || __builtin_mul_overflow(depth - 1, slice, &t1) ||
        __builtin_mul_overflow(height - 1, sd->pitch, &t2) || __builtin_add_overflow(t1, t2, &span) ||
        __builtin_add_overflow(span, width, &span) || __builtin_add_overflow(base, first, &t1))
        return CUDA_ERROR_INVALID_VALUE;
    void *r = hc_mem_resolve((CUdeviceptr)(base + first), span, kind, NULL);
    if (!r)
        return CUDA_ERROR_INVALID_VALUE;   /* the span runs past its allocation */
    if ((sd->type == CU_MEMORYTYPE_HOST && *kind == HC_MEM_DEVICE) ||
        (sd->type == CU_MEMORYTYPE_DEVICE && *kind == HC_MEM_PAGEABLE))
        return CUDA_ERROR_INVALID_VALUE;
    *out = r;
    return CUDA_SUCCESS;
}

static CUresult copy3d(side *src, side *dst, size_t width, size_t height, size_t depth, CUstream h,
                       int pt, int async)
{
    HC_CHECK_INIT();
    if (width == 0 || height == 0 || depth == 0) {   /* nothing to move: the stream must still be valid */
        pthread_mutex_lock(&hc_mu);
        struct CUstream_st *s;
        CUresult rc = hc_stream_resolve(h, pt, &s);
        pthread_mutex_unlock(&hc_mu);
        return rc;
    }
    char *d, *s;
    int kd, ks;
    CUresult rc = resolve_side(src, width, height, depth, &s, &ks);
    if (rc == CUDA_SUCCESS)
        rc = resolve_side(dst, width, height, depth, &d, &kd);
    if (rc != CUDA_SUCCESS)
        return rc;
    pitched_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (pitched_payload){d, s, NULL, width, height, depth, dst->pitch, src->pitch, dst->pitch * dst->height,
                           src->pitch * src->height, 0, 0};
    int dst_dev = kd == HC_MEM_DEVICE, src_dev = ks == HC_MEM_DEVICE, stage = 0, wait;
    if (!async) {
        if (!src_dev && dst_dev && ks == HC_MEM_PAGEABLE)
            stage = 1, wait = 0;
        else
            wait = !(src_dev && dst_dev);
    } else {
        if (src_dev && kd == HC_MEM_PAGEABLE)
            wait = 1;
        else if (!src_dev && ks == HC_MEM_PAGEABLE && dst_dev)
            stage = 1, wait = 0;
        else
            wait = !src_dev && !dst_dev && (kd == HC_MEM_PAGEABLE || ks == HC_MEM_PAGEABLE);
    }
    if (stage) {
        size_t span = (depth - 1) * p->sslice + (height - 1) * p->spitch + width;
        if (!(p->staging = malloc(span))) {
            free(p);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (!async) {   /* the synchronous pageable copy first waits for the stream's earlier work */
            pthread_mutex_lock(&hc_mu);
            struct CUstream_st *st;
            if ((rc = hc_stream_resolve(h, pt, &st)) == CUDA_SUCCESS)
                hc_stream_sync(st);
            pthread_mutex_unlock(&hc_mu);
            if (rc != CUDA_SUCCESS) {
                fini_pitched(&(hc_op){.payload = p});
                return rc;
            }
        }
        memcpy(p->staging, s, span);
    }
    return submit_pitched(p, h, pt, wait);
}

static CUresult copy2d(const CUDA_MEMCPY2D *c, CUstream h, int pt, int async)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    side src = {c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY, 0, c->srcPitch, c->Height};
    side dst = {c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, 0, c->dstPitch, c->Height};
    return copy3d(&src, &dst, c->WidthInBytes, c->Height, 1, h, pt, async);
}

static CUresult copy3d_desc(const CUDA_MEMCPY3D *c, CUstream h, int pt, int async)
{
    if (!c || c->srcLOD || c->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    side src = {c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY, c->srcZ,
                c->srcPitch, c->srcHeight};
    side dst = {c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstZ,
                c->dstPitch, c->dstHeight};
    return copy3d(&src, &dst, c->WidthInBytes, c->Height, c->Depth, h, pt, async);
}

CUresult hc_copy_3d(const CUDA_MEMCPY3D *c, CUstream h, int pt, int async)
{
    return copy3d_desc(c, h, pt, async);
}

#define NOSTREAM ((CUstream)0)

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
    HC_COUNT(cuMemcpy2D_v2);
    return copy2d(pCopy, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    HC_COUNT(cuMemcpy2D_v2_ptds);
    return copy2d(pCopy, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    HC_COUNT(cuMemcpy2DUnaligned_v2);
    return copy2d(pCopy, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    HC_COUNT(cuMemcpy2DUnaligned_v2_ptds);
    return copy2d(pCopy, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    HC_COUNT(cuMemcpy2DAsync_v2);
    return copy2d(pCopy, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    HC_COUNT(cuMemcpy2DAsync_v2_ptsz);
    return copy2d(pCopy, hStream, 1, 1);
}
CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy)
{
    HC_COUNT(cuMemcpy3D_v2);
    return copy3d_desc(pCopy, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy)
{
    HC_COUNT(cuMemcpy3D_v2_ptds);
    return copy3d_desc(pCopy, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    HC_COUNT(cuMemcpy3DAsync_v2);
    return copy3d_desc(pCopy, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    HC_COUNT(cuMemcpy3DAsync_v2_ptsz);
    return copy3d_desc(pCopy, hStream, 1, 1);
}

/* ---------------------------------------------------------------- 2D memsets */
static CUresult set2d(CUdeviceptr dst, size_t pitch, unsigned int val, int elem, size_t width, size_t height,
                      CUstream h, int pt, int async)
{
    HC_CHECK_INIT();
    size_t row, span;
    if (!dst || (dst & (CUdeviceptr)(elem - 1)) || __builtin_mul_overflow(width, (size_t)elem, &row) ||
        (height > 1 && (pitch % (size_t)elem || pitch < row)))
        return CUDA_ERROR_INVALID_VALUE;
    if (width == 0 || height == 0) {
        pthread_mutex_lock(&hc_mu);
        struct CUstream_st *s;
        CUresult rc = hc_stream_resolve(h, pt, &s);
        pthread_mutex_unlock(&hc_mu);
        return rc;
    }
    int kd;
    if (__builtin_mul_overflow(height - 1, pitch, &span) || __builtin_add_overflow(span, row, &span))
        return CUDA_ERROR_INVALID_VALUE;
    char *d = hc_mem_resolve(dst, span, &kd, NULL);
    if (!d || kd == HC_MEM_PAGEABLE)
        return CUDA_ERROR_INVALID_VALUE;
    pitched_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (pitched_payload){d, NULL, NULL, width, height, 1, pitch, 0, 0, 0, elem, val};
    return submit_pitched(p, h, pt, !async && kd != HC_MEM_DEVICE);
}

CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height)
{
    HC_COUNT(cuMemsetD2D8_v2);
    return set2d(dstDevice, dstPitch, uc, 1, Width, Height, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                      size_t Height)
{
    HC_COUNT(cuMemsetD2D8_v2_ptds);
    return set2d(dstDevice, dstPitch, uc, 1, Width, Height, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height)
{
    HC_COUNT(cuMemsetD2D16_v2);
    return set2d(dstDevice, dstPitch, us, 2, Width, Height, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                       size_t Height)
{
    HC_COUNT(cuMemsetD2D16_v2_ptds);
    return set2d(dstDevice, dstPitch, us, 2, Width, Height, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height)
{
    HC_COUNT(cuMemsetD2D32_v2);
    return set2d(dstDevice, dstPitch, ui, 4, Width, Height, NOSTREAM, 0, 0);
}
CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                       size_t Height)
{
    HC_COUNT(cuMemsetD2D32_v2_ptds);
    return set2d(dstDevice, dstPitch, ui, 4, Width, Height, NOSTREAM, 1, 0);
}
CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                   size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D8Async);
    return set2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                        size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D8Async_ptsz);
    return set2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, 1, 1);
}
CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                    size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D16Async);
    return set2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                         size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D16Async_ptsz);
    return set2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, 1, 1);
}
CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                    size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D32Async);
    return set2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, 0, 1);
}
CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                         size_t Height, CUstream hStream)
{
    HC_COUNT(cuMemsetD2D32Async_ptsz);
    return set2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, 1, 1);
}
