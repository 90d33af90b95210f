/* hcrt_pitched.c — the runtime's pitched copies and memsets (cudaMemcpy2D/3D(+Async, +Peer),
 * cudaMemset2D/3D(+Async)) on cuMemcpy2D/cuMemcpy3D/cuMemsetD2D8, and the stream queries that
 * come in per-thread twins (cudaStreamGet/SetAttribute, cudaStreamCopyAttributes,
 * cudaStreamGetDevice, cudaStreamGetId). Compiled twice, like hcrt_stream.c: as is, and with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, where the headers rename each function here to its
 * `_ptds`/`_ptsz` twin and each driver call to the driver's, so stream 0 means the thread's
 * default stream in the twins.
 * Copies name CUDA arrays as the driver's ARRAY memory type; with an array in a 3D copy the
 * extent's width and the array's x are in its elements, linear memory's in bytes, as the runtime
 * defines them. A peer copy is
 * an ordinary unified-address copy once both devices are checked (every device shares one address
 * space).
 * Must not: define a function the header does not rename (it would be defined twice). */
#include <string.h>

#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)

/* the two sides' driver memory types for a runtime copy kind */
static cudaError_t hcrt_kind_types(enum cudaMemcpyKind kind, CUmemorytype *src, CUmemorytype *dst)
{
    switch (kind) {
    case cudaMemcpyHostToHost: *src = *dst = CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyHostToDevice: *src = CU_MEMORYTYPE_HOST, *dst = CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDeviceToHost: *src = CU_MEMORYTYPE_DEVICE, *dst = CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyDeviceToDevice: *src = *dst = CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDefault: *src = *dst = CU_MEMORYTYPE_UNIFIED; break;
    default: return cudaErrorInvalidMemcpyDirection;
    }
    return cudaSuccess;
}

static void hcrt_set_side(CUmemorytype t, const void *p, CUmemorytype *type, const void **host, CUdeviceptr *dev)
{
    *type = t;
    if (t == CU_MEMORYTYPE_HOST)
        *host = p;
    else
        *dev = (CUdeviceptr)(uintptr_t)p;
}

static cudaError_t hcrt_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                               enum cudaMemcpyKind kind, int async, cudaStream_t s)
{
    ENTER();
    CUmemorytype ts, td;
    cudaError_t e = hcrt_kind_types(kind, &ts, &td);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > dpitch || width > spitch)
        return hcrt_ret(cudaErrorInvalidPitchValue);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    hcrt_set_side(ts, src, &c.srcMemoryType, &c.srcHost, &c.srcDevice);
    hcrt_set_side(td, dst, &c.dstMemoryType, (const void **)&c.dstHost, &c.dstDevice);
    c.srcPitch = spitch;
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    return async ? HCRT_CU(cuMemcpy2DAsync(&c, (CUstream)s)) : HCRT_CU(cuMemcpy2D(&c));
}

HCRT_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                                  enum cudaMemcpyKind kind)
{
    return hcrt_copy2d(dst, dpitch, src, spitch, width, height, kind, 0, 0);
}

HCRT_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                       size_t height, enum cudaMemcpyKind kind, cudaStream_t s)
{
    return hcrt_copy2d(dst, dpitch, src, spitch, width, height, kind, 1, s);
}

/* one side of a 3D copy: an array, else a pitched pointer at a byte position */
static cudaError_t hcrt_side3d(cudaArray_const_t arr, struct cudaPos pos, struct cudaPitchedPtr ptr, CUmemorytype t,
                               CUmemorytype *type, const void **host, CUdeviceptr *dev, CUarray *carr, size_t *x,
                               size_t *y, size_t *z, size_t *pitch, size_t *height)
{
    if (arr != NULL && ptr.ptr != NULL)
        return cudaErrorInvalidValue;   /* one of the two, not both */
    *x = pos.x, *y = pos.y, *z = pos.z;
    if (arr != NULL) {
        *type = CU_MEMORYTYPE_ARRAY;
        *carr = (CUarray)(uintptr_t)arr;
        return cudaSuccess;
    }
    if (ptr.ptr == NULL)
        return cudaErrorInvalidValue;
    hcrt_set_side(t, ptr.ptr, type, host, dev);
    *pitch = ptr.pitch;
    *height = ptr.ysize;
    return cudaSuccess;
}

static cudaError_t hcrt_copy3d(const struct cudaMemcpy3DParms *p, CUmemorytype ts, CUmemorytype td, int async,
                               cudaStream_t s)
{
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    cudaError_t e = hcrt_side3d(p->srcArray, p->srcPos, p->srcPtr, ts, &c.srcMemoryType, &c.srcHost, &c.srcDevice,
                                &c.srcArray, &c.srcXInBytes, &c.srcY, &c.srcZ, &c.srcPitch, &c.srcHeight);
    if (e == cudaSuccess)
        e = hcrt_side3d(p->dstArray, p->dstPos, p->dstPtr, td, &c.dstMemoryType, (const void **)&c.dstHost,
                        &c.dstDevice, &c.dstArray, &c.dstXInBytes, &c.dstY, &c.dstZ, &c.dstPitch, &c.dstHeight);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    if (p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0)
        return cudaSuccess;
    /* with an array in the copy, the width and the array's x are in its elements */
    size_t es = 1;
    if (c.srcMemoryType == CU_MEMORYTYPE_ARRAY || c.dstMemoryType == CU_MEMORYTYPE_ARRAY) {
        CUDA_ARRAY3D_DESCRIPTOR d;
        CUresult r = cuArray3DGetDescriptor(&d, c.srcMemoryType == CU_MEMORYTYPE_ARRAY ? c.srcArray : c.dstArray);
        if (r != CUDA_SUCCESS)
            return HCRT_CU(r);
        es = (d.Format == CU_AD_FORMAT_UNSIGNED_INT8 || d.Format == CU_AD_FORMAT_SIGNED_INT8 ? 1
              : d.Format == CU_AD_FORMAT_UNSIGNED_INT16 || d.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                d.Format == CU_AD_FORMAT_HALF ? 2 : 4) * d.NumChannels;
        if (c.srcMemoryType == CU_MEMORYTYPE_ARRAY)
            c.srcXInBytes *= es;
        if (c.dstMemoryType == CU_MEMORYTYPE_ARRAY)
            c.dstXInBytes *= es;
    }
    size_t wb = p->extent.width * es;
    int rows = p->extent.height > 1 || p->extent.depth > 1;
    if (rows && ((c.srcMemoryType != CU_MEMORYTYPE_ARRAY && c.srcXInBytes + wb > c.srcPitch) ||
                 (c.dstMemoryType != CU_MEMORYTYPE_ARRAY && c.dstXInBytes + wb > c.dstPitch)))
        return hcrt_ret(cudaErrorInvalidPitchValue);   /* a row does not fit its pitch */
    c.WidthInBytes = wb;
    c.Height = p->extent.height;
    c.Depth = p->extent.depth;
    return async ? HCRT_CU(cuMemcpy3DAsync(&c, (CUstream)s)) : HCRT_CU(cuMemcpy3D(&c));
}

static cudaError_t hcrt_copy3d_kind(const struct cudaMemcpy3DParms *p, int async, cudaStream_t s)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUmemorytype ts, td;
    cudaError_t e = hcrt_kind_types(p->kind, &ts, &td);
    return e != cudaSuccess ? hcrt_ret(e) : hcrt_copy3d(p, ts, td, async, s);
}

HCRT_API cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) { return hcrt_copy3d_kind(p, 0, 0); }

HCRT_API cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t s)
{
    return hcrt_copy3d_kind(p, 1, s);
}

static cudaError_t hcrt_copy3d_peer(const struct cudaMemcpy3DPeerParms *p, int async, cudaStream_t s)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    int n = 0;
    cuDeviceGetCount(&n);
    if (p->srcDevice < 0 || p->srcDevice >= n || p->dstDevice < 0 || p->dstDevice >= n)
        return hcrt_ret(cudaErrorInvalidDevice);
    struct cudaMemcpy3DParms q;
    memset(&q, 0, sizeof q);
    q.srcArray = p->srcArray, q.srcPos = p->srcPos, q.srcPtr = p->srcPtr;
    q.dstArray = p->dstArray, q.dstPos = p->dstPos, q.dstPtr = p->dstPtr;
    q.extent = p->extent;
    return hcrt_copy3d(&q, CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED, async, s);
}

HCRT_API cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p) { return hcrt_copy3d_peer(p, 0, 0); }

HCRT_API cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t s)
{
    return hcrt_copy3d_peer(p, 1, s);
}

/* ---- pitched memsets: bytes, row by row (a 3D memset is one 2D memset per slice) ---- */

static cudaError_t hcrt_set2d(void *p, size_t pitch, int value, size_t width, size_t height, int async, cudaStream_t s)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height > 1 && width > pitch)
        return hcrt_ret(cudaErrorInvalidValue);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)p;
    return async ? HCRT_CU(cuMemsetD2D8Async(d, pitch, (unsigned char)value, width, height, (CUstream)s))
                 : HCRT_CU(cuMemsetD2D8(d, pitch, (unsigned char)value, width, height));
}

HCRT_API cudaError_t cudaMemset2D(void *p, size_t pitch, int value, size_t width, size_t height)
{
    ENTER();
    return hcrt_set2d(p, pitch, value, width, height, 0, 0);
}

HCRT_API cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width, size_t height, cudaStream_t s)
{
    ENTER();
    return hcrt_set2d(p, pitch, value, width, height, 1, s);
}

static cudaError_t hcrt_set3d(struct cudaPitchedPtr p, int value, struct cudaExtent e, int async, cudaStream_t s)
{
    ENTER();
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return cudaSuccess;
    if (e.depth > 1 && e.height > p.ysize)
        return hcrt_ret(cudaErrorInvalidValue);
    cudaError_t r = cudaSuccess;
    for (size_t z = 0; z < e.depth && r == cudaSuccess; z++)
        r = hcrt_set2d((char *)p.ptr + z * p.pitch * p.ysize, p.pitch, value, e.width, e.height, async, s);
    return r;
}

HCRT_API cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent e)
{
    return hcrt_set3d(p, value, e, 0, 0);
}

HCRT_API cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s)
{
    return hcrt_set3d(p, value, e, 1, s);
}

/* ---- stream queries: the launch attribute values are the driver's (same layout) ---- */

HCRT_API cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr, const cudaStreamAttrValue *value)
{
    ENTER();
    return HCRT_CU(cuStreamSetAttribute((CUstream)s, (CUstreamAttrID)attr, (const CUstreamAttrValue *)value));
}

HCRT_API cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr, cudaStreamAttrValue *value)
{
    ENTER();
    return HCRT_CU(cuStreamGetAttribute((CUstream)s, (CUstreamAttrID)attr, (CUstreamAttrValue *)value));
}

HCRT_API cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    ENTER();
    return HCRT_CU(cuStreamCopyAttributes((CUstream)dst, (CUstream)src));
}

HCRT_API cudaError_t cudaStreamGetDevice(cudaStream_t s, int *device)
{
    if (device == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    ENTER();
    CUdevice d;
    cudaError_t e = HCRT_CU(cuStreamGetDevice((CUstream)s, &d));
    if (e == cudaSuccess)
        *device = (int)d;
    return e;
}

HCRT_API cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id)
{
    ENTER();
    return HCRT_CU(cuStreamGetId((CUstream)s, id));
}
