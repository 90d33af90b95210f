/* hcrt_arraycopy.c — the runtime's copies to and from CUDA arrays: cudaMemcpy2DToArray(Async),
 * cudaMemcpy2DFromArray(Async), cudaMemcpy2DArrayToArray, and the deprecated cudaMemcpyToArray /
 * FromArray(Async) / ArrayToArray, on cuMemcpy2D(Async). Compiled twice, like hcrt_pitched.c: as is, and with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, where the headers rename each function here (and each
 * driver call) to its per-thread twin.
 * Offsets and widths are in bytes (wOffset: columns in bytes, as the runtime defines them). The
 * 1D-offset copies run from (wOffset, hOffset) through the array's rows in order: a partial first
 * row, whole rows, a partial last row (up to three driver copies, in order on one stream).
 * Must not: define a function the header does not rename (it would be defined twice). */
#include <string.h>

#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)

/* the linear side's driver memory type for a copy kind (src: the source side) */
static cudaError_t lin_type(enum cudaMemcpyKind kind, int src, CUmemorytype *t)
{
    switch (kind) {
    case cudaMemcpyHostToHost: *t = CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyHostToDevice: *t = src ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDeviceToHost: *t = src ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyDeviceToDevice: *t = CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDefault: *t = CU_MEMORYTYPE_UNIFIED; break;
    default: return cudaErrorInvalidMemcpyDirection;
    }
    return cudaSuccess;
}

/* one 2D copy between array a at (x, y) and linear memory p (pitch) */
static CUresult copy_rect(CUarray a, size_t x, size_t y, void *p, size_t pitch, CUmemorytype t, int to_array,
                          size_t width, size_t height, int async, cudaStream_t s)
{
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    if (to_array) {
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = a, c.dstXInBytes = x, c.dstY = y;
        c.srcMemoryType = t, c.srcHost = p, c.srcDevice = (CUdeviceptr)(uintptr_t)p, c.srcPitch = pitch;
    } else {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = a, c.srcXInBytes = x, c.srcY = y;
        c.dstMemoryType = t, c.dstHost = p, c.dstDevice = (CUdeviceptr)(uintptr_t)p, c.dstPitch = pitch;
    }
    c.WidthInBytes = width, c.Height = height;
    return async ? cuMemcpy2DAsync(&c, (CUstream)s) : cuMemcpy2D(&c);
}

static cudaError_t copy2d(CUarray a, size_t x, size_t y, void *p, size_t pitch, size_t width, size_t height,
                          enum cudaMemcpyKind kind, int to_array, int async, cudaStream_t s)
{
    ENTER();
    CUmemorytype t;
    cudaError_t e = lin_type(kind, to_array, &t);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > pitch && height > 1)
        return hcrt_ret(cudaErrorInvalidPitchValue);
    return HCRT_CU(copy_rect(a, x, y, p, pitch, t, to_array, width, height, async, s));
}

/* count bytes from (x, y) on through the rows */
static cudaError_t copy_lin(CUarray a, size_t x, size_t y, void *p, size_t count, enum cudaMemcpyKind kind,
                            int to_array, int async, cudaStream_t s)
{
    ENTER();
    CUmemorytype t;
    cudaError_t e = lin_type(kind, to_array, &t);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUresult r = cuArray3DGetDescriptor(&d, a);
    if (r != CUDA_SUCCESS)
        return HCRT_CU(r);
    size_t cs = d.Format == CU_AD_FORMAT_UNSIGNED_INT8 || d.Format == CU_AD_FORMAT_SIGNED_INT8 ? 1
              : d.Format == CU_AD_FORMAT_UNSIGNED_INT16 || d.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                d.Format == CU_AD_FORMAT_HALF ? 2 : 4;
    size_t row = d.Width * d.NumChannels * cs;
    char *q = p;
    if (count && x >= row)
        return hcrt_ret(cudaErrorInvalidValue);
    while (count && r == CUDA_SUCCESS) {
        size_t w, h;
        if (x == 0 && count >= row)
            w = row, h = count / row;   /* whole rows */
        else
            w = count < row - x ? count : row - x, h = 1;   /* a partial row */
        r = copy_rect(a, x, y, q, w, t, to_array, w, h, async, s);
        q += w * h, count -= w * h, y += h, x = (x + w) % row;
    }
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                         size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return copy2d((CUarray)dst, wOffset, hOffset, (void *)(uintptr_t)src, spitch, width, height, kind, 1, 0, 0);
}
HCRT_API cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                              size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                                              cudaStream_t stream)
{
    return copy2d((CUarray)dst, wOffset, hOffset, (void *)(uintptr_t)src, spitch, width, height, kind, 1, 1, stream);
}
HCRT_API cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                           size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return copy2d((CUarray)(uintptr_t)src, wOffset, hOffset, dst, dpitch, width, height, kind, 0, 0, 0);
}
HCRT_API cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                                size_t hOffset, size_t width, size_t height,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy2d((CUarray)(uintptr_t)src, wOffset, hOffset, dst, dpitch, width, height, kind, 0, 1, stream);
}
HCRT_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                                       enum cudaMemcpyKind kind)
{
    return copy_lin((CUarray)dst, wOffset, hOffset, (void *)(uintptr_t)src, count, kind, 1, 0, 0);
}
HCRT_API cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                            size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy_lin((CUarray)dst, wOffset, hOffset, (void *)(uintptr_t)src, count, kind, 1, 1, stream);
}
HCRT_API cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                         size_t count, enum cudaMemcpyKind kind)
{
    return copy_lin((CUarray)(uintptr_t)src, wOffset, hOffset, dst, count, kind, 0, 0, 0);
}
HCRT_API cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                              size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy_lin((CUarray)(uintptr_t)src, wOffset, hOffset, dst, count, kind, 0, 1, stream);
}

/* array to array: a rectangle, or count bytes through the rows (row by row: both arrays' rows
 * may differ in length) */
static cudaError_t a2a(CUarray dst, size_t dx, size_t dy, CUarray src, size_t sx, size_t sy, size_t width,
                       size_t height, size_t count, enum cudaMemcpyKind kind)
{
    ENTER();
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return hcrt_ret(cudaErrorInvalidMemcpyDirection);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = src;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = dst;
    if (!count) {
        if (width == 0 || height == 0)
            return cudaSuccess;
        c.srcXInBytes = sx, c.srcY = sy, c.dstXInBytes = dx, c.dstY = dy, c.WidthInBytes = width, c.Height = height;
        return HCRT_CU(cuMemcpy2D(&c));
    }
    CUDA_ARRAY3D_DESCRIPTOR ds, dd;
    CUresult r = cuArray3DGetDescriptor(&ds, src);
    if (r == CUDA_SUCCESS)
        r = cuArray3DGetDescriptor(&dd, dst);
    if (r != CUDA_SUCCESS)
        return HCRT_CU(r);
    size_t cs = ds.Format == CU_AD_FORMAT_UNSIGNED_INT8 || ds.Format == CU_AD_FORMAT_SIGNED_INT8 ? 1
              : ds.Format == CU_AD_FORMAT_UNSIGNED_INT16 || ds.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                ds.Format == CU_AD_FORMAT_HALF ? 2 : 4;
    size_t cd = dd.Format == CU_AD_FORMAT_UNSIGNED_INT8 || dd.Format == CU_AD_FORMAT_SIGNED_INT8 ? 1
              : dd.Format == CU_AD_FORMAT_UNSIGNED_INT16 || dd.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                dd.Format == CU_AD_FORMAT_HALF ? 2 : 4;
    size_t srow = ds.Width * ds.NumChannels * cs, drow = dd.Width * dd.NumChannels * cd;
    if (sx >= srow || dx >= drow)
        return hcrt_ret(cudaErrorInvalidValue);
    while (count && r == CUDA_SUCCESS) {   /* the largest piece that stays in a row on both sides */
        size_t w = count;
        if (w > srow - sx)
            w = srow - sx;
        if (w > drow - dx)
            w = drow - dx;
        c.srcXInBytes = sx, c.srcY = sy, c.dstXInBytes = dx, c.dstY = dy, c.WidthInBytes = w, c.Height = 1;
        r = cuMemcpy2D(&c);
        count -= w, sx += w, dx += w;
        if (sx == srow)
            sx = 0, sy++;
        if (dx == drow)
            dx = 0, dy++;
    }
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                              cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                              size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return a2a((CUarray)dst, wOffsetDst, hOffsetDst, (CUarray)(uintptr_t)src, wOffsetSrc, hOffsetSrc, width, height, 0,
               kind);
}
HCRT_API cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                            cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t count,
                                            enum cudaMemcpyKind kind)
{
    if (!count)
        return cudaSuccess;
    return a2a((CUarray)dst, wOffsetDst, hOffsetDst, (CUarray)(uintptr_t)src, wOffsetSrc, hOffsetSrc, 0, 0, count,
               kind);
}
