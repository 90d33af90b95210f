/* hcrt_tex.c — the runtime's CUDA arrays, channel descriptors and texture / surface objects on the
 * driver's: cudaMallocArray, cudaMalloc3DArray, cudaFreeArray, cudaArrayGetInfo, cudaGetChannelDesc,
 * cudaCreate/DestroyTextureObject, cudaGetTextureObjectResourceDesc /
 * TextureDesc, cudaCreate/DestroySurfaceObject, cudaGetSurfaceObjectResourceDesc. The copies to and
 * from arrays are hcrt_arraycopy.c's (cudaCreateChannelDesc is hcrt_mem.c's).
 * A channel descriptor maps to a driver format and channel count: 1, 2 or 4 channels of one size
 * (8, 16, 32 bits; float 16 is half); anything else is cudaErrorInvalidChannelDescriptor.
 * The runtime's read mode cudaReadModeElementType is the driver's CU_TRSF_READ_AS_INTEGER.
 * Threading: no state of its own.
 * Must not: reach an array or an object but through the driver's calls. */
#include <string.h>

#include "hcrt_internal.h"

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)

/* channel descriptor -> driver format, channels */
cudaError_t hcrt_format_of(const struct cudaChannelFormatDesc *d, CUarray_format *fmt, unsigned *nch)
{
    int b[4] = {d->x, d->y, d->z, d->w}, n = 0;
    while (n < 4 && b[n])
        n++;
    for (int i = n; i < 4; i++)
        if (b[i])
            return cudaErrorInvalidChannelDescriptor;   /* a gap: x, 0, z */
    if (n == 0 || n == 3)
        return cudaErrorInvalidChannelDescriptor;
    for (int i = 1; i < n; i++)
        if (b[i] != b[0])
            return cudaErrorInvalidChannelDescriptor;
    int bits = b[0];
    switch (d->f) {
    case cudaChannelFormatKindSigned:
        *fmt = bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16
             : bits == 32 ? CU_AD_FORMAT_SIGNED_INT32 : (CUarray_format)0;
        break;
    case cudaChannelFormatKindUnsigned:
        *fmt = bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
             : bits == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : (CUarray_format)0;
        break;
    case cudaChannelFormatKindFloat:
        *fmt = bits == 16 ? CU_AD_FORMAT_HALF : bits == 32 ? CU_AD_FORMAT_FLOAT : (CUarray_format)0;
        break;
    default:
        *fmt = (CUarray_format)0;
    }
    if (!*fmt)
        return cudaErrorInvalidChannelDescriptor;
    *nch = (unsigned)n;
    return cudaSuccess;
}

/* driver format, channels -> channel descriptor */
static struct cudaChannelFormatDesc desc_of(CUarray_format f, unsigned nch)
{
    int bits = 0;
    enum cudaChannelFormatKind k = cudaChannelFormatKindNone;
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: bits = 8, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: bits = 16, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: bits = 32, k = cudaChannelFormatKindUnsigned; break;
    case CU_AD_FORMAT_SIGNED_INT8: bits = 8, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT16: bits = 16, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_SIGNED_INT32: bits = 32, k = cudaChannelFormatKindSigned; break;
    case CU_AD_FORMAT_HALF: bits = 16, k = cudaChannelFormatKindFloat; break;
    case CU_AD_FORMAT_FLOAT: bits = 32, k = cudaChannelFormatKindFloat; break;
    default: break;
    }
    struct cudaChannelFormatDesc d = {nch > 0 ? bits : 0, nch > 1 ? bits : 0, nch > 2 ? bits : 0, nch > 3 ? bits : 0, k};
    return d;
}

static cudaError_t malloc3d(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t w, size_t h,
                            size_t d, unsigned int flags)
{
    ENTER();
    if (!array || !desc)
        return hcrt_ret(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    cudaError_t e = hcrt_format_of(desc, &ad.Format, &ad.NumChannels);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    ad.Width = w, ad.Height = h, ad.Depth = d, ad.Flags = flags;
    CUarray a;
    CUresult r = cuArray3DCreate(&a, &ad);
    if (r == CUDA_SUCCESS)
        *array = (cudaArray_t)a;
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                     size_t height, unsigned int flags)
{
    if (flags & cudaArrayLayered)
        return hcrt_ret(cudaErrorInvalidValue);   /* layered arrays come from cudaMalloc3DArray */
    return malloc3d(array, desc, width, height, 0, flags);
}

HCRT_API cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                       struct cudaExtent extent, unsigned int flags)
{
    return malloc3d(array, desc, extent.width, extent.height, extent.depth, flags);
}

HCRT_API cudaError_t cudaFreeArray(cudaArray_t array)
{
    ENTER();
    if (!array)
        return cudaSuccess;
    return HCRT_CU(cuArrayDestroy((CUarray)array));
}

HCRT_API cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                      unsigned int *flags, cudaArray_t array)
{
    ENTER();
    CUDA_ARRAY3D_DESCRIPTOR ad;
    CUresult r = cuArray3DGetDescriptor(&ad, (CUarray)array);
    if (r != CUDA_SUCCESS)
        return HCRT_CU(r);
    if (desc)
        *desc = desc_of(ad.Format, ad.NumChannels);
    if (extent)
        *extent = (struct cudaExtent){ad.Width, ad.Height, ad.Depth};
    if (flags)
        *flags = ad.Flags;
    return cudaSuccess;
}

HCRT_API cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    if (!desc)
        return hcrt_ret(cudaErrorInvalidValue);
    return cudaArrayGetInfo(desc, NULL, NULL, (cudaArray_t)(uintptr_t)array);
}

/* ---------------------------------------------------------------- resources */
static cudaError_t res_to_cu(const struct cudaResourceDesc *r, CUDA_RESOURCE_DESC *c)
{
    memset(c, 0, sizeof *c);
    cudaError_t e = cudaSuccess;
    switch (r->resType) {
    case cudaResourceTypeArray:
        c->resType = CU_RESOURCE_TYPE_ARRAY;
        c->res.array.hArray = (CUarray)r->res.array.array;
        break;
    case cudaResourceTypeMipmappedArray:
        c->resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        c->res.mipmap.hMipmappedArray = (CUmipmappedArray)r->res.mipmap.mipmap;
        break;
    case cudaResourceTypeLinear:
        c->resType = CU_RESOURCE_TYPE_LINEAR;
        c->res.linear.devPtr = (CUdeviceptr)(uintptr_t)r->res.linear.devPtr;
        c->res.linear.sizeInBytes = r->res.linear.sizeInBytes;
        e = hcrt_format_of(&r->res.linear.desc, &c->res.linear.format, &c->res.linear.numChannels);
        break;
    case cudaResourceTypePitch2D:
        c->resType = CU_RESOURCE_TYPE_PITCH2D;
        c->res.pitch2D.devPtr = (CUdeviceptr)(uintptr_t)r->res.pitch2D.devPtr;
        c->res.pitch2D.width = r->res.pitch2D.width;
        c->res.pitch2D.height = r->res.pitch2D.height;
        c->res.pitch2D.pitchInBytes = r->res.pitch2D.pitchInBytes;
        e = hcrt_format_of(&r->res.pitch2D.desc, &c->res.pitch2D.format, &c->res.pitch2D.numChannels);
        break;
    default:
        e = cudaErrorInvalidValue;
    }
    return e;
}

static void res_from_cu(const CUDA_RESOURCE_DESC *c, struct cudaResourceDesc *r)
{
    memset(r, 0, sizeof *r);
    switch (c->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
        r->resType = cudaResourceTypeArray;
        r->res.array.array = (cudaArray_t)c->res.array.hArray;
        break;
    case CU_RESOURCE_TYPE_LINEAR:
        r->resType = cudaResourceTypeLinear;
        r->res.linear.devPtr = (void *)(uintptr_t)c->res.linear.devPtr;
        r->res.linear.sizeInBytes = c->res.linear.sizeInBytes;
        r->res.linear.desc = desc_of(c->res.linear.format, c->res.linear.numChannels);
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        r->resType = cudaResourceTypePitch2D;
        r->res.pitch2D.devPtr = (void *)(uintptr_t)c->res.pitch2D.devPtr;
        r->res.pitch2D.width = c->res.pitch2D.width;
        r->res.pitch2D.height = c->res.pitch2D.height;
        r->res.pitch2D.pitchInBytes = c->res.pitch2D.pitchInBytes;
        r->res.pitch2D.desc = desc_of(c->res.pitch2D.format, c->res.pitch2D.numChannels);
        break;
    default:
        break;
    }
}

HCRT_API cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
                                             const struct cudaTextureDesc *pTexDesc,
                                             const struct cudaResourceViewDesc *pResViewDesc)
{
    ENTER();
    if (!pTexObject || !pResDesc || !pTexDesc)
        return hcrt_ret(cudaErrorInvalidValue);
    if (pResViewDesc)
        return hcrt_ret(cudaErrorNotSupported);   /* resource views: not in hostcuda */
    CUDA_RESOURCE_DESC r;
    cudaError_t e = res_to_cu(pResDesc, &r);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    const struct cudaTextureDesc *t = pTexDesc;
    CUDA_TEXTURE_DESC c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 3; i++)
        c.addressMode[i] = (CUaddress_mode)t->addressMode[i];
    c.filterMode = (CUfilter_mode)t->filterMode;
    if (t->readMode != cudaReadModeElementType && t->readMode != cudaReadModeNormalizedFloat)
        return hcrt_ret(cudaErrorInvalidValue);
    c.flags = (t->readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
              (t->normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) | (t->sRGB ? CU_TRSF_SRGB : 0) |
              (t->disableTrilinearOptimization ? CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION : 0) |
              (t->seamlessCubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0);
    c.maxAnisotropy = t->maxAnisotropy;
    c.mipmapFilterMode = (CUfilter_mode)t->mipmapFilterMode;
    c.mipmapLevelBias = t->mipmapLevelBias;
    c.minMipmapLevelClamp = t->minMipmapLevelClamp;
    c.maxMipmapLevelClamp = t->maxMipmapLevelClamp;
    memcpy(c.borderColor, t->borderColor, sizeof c.borderColor);
    CUtexObject o;
    CUresult rc = cuTexObjectCreate(&o, &r, &c, NULL);
    if (rc == CUDA_SUCCESS)
        *pTexObject = o;
    return HCRT_CU(rc);
}

HCRT_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    ENTER();
    return HCRT_CU(cuTexObjectDestroy(texObject));
}

HCRT_API cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                      cudaTextureObject_t texObject)
{
    ENTER();
    CUDA_RESOURCE_DESC r;
    if (!pResDesc)
        return hcrt_ret(cudaErrorInvalidValue);
    CUresult rc = cuTexObjectGetResourceDesc(&r, texObject);
    if (rc == CUDA_SUCCESS)
        res_from_cu(&r, pResDesc);
    return HCRT_CU(rc);
}

HCRT_API cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *pTexDesc, cudaTextureObject_t texObject)
{
    ENTER();
    CUDA_TEXTURE_DESC c;
    if (!pTexDesc)
        return hcrt_ret(cudaErrorInvalidValue);
    CUresult rc = cuTexObjectGetTextureDesc(&c, texObject);
    if (rc != CUDA_SUCCESS)
        return HCRT_CU(rc);
    struct cudaTextureDesc *t = pTexDesc;
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 3; i++)
        t->addressMode[i] = (enum cudaTextureAddressMode)c.addressMode[i];
    t->filterMode = (enum cudaTextureFilterMode)c.filterMode;
    t->readMode = (c.flags & CU_TRSF_READ_AS_INTEGER) ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
    t->normalizedCoords = !!(c.flags & CU_TRSF_NORMALIZED_COORDINATES);
    t->sRGB = !!(c.flags & CU_TRSF_SRGB);
    t->disableTrilinearOptimization = !!(c.flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION);
    t->seamlessCubemap = !!(c.flags & CU_TRSF_SEAMLESS_CUBEMAP);
    t->maxAnisotropy = c.maxAnisotropy;
    t->mipmapFilterMode = (enum cudaTextureFilterMode)c.mipmapFilterMode;
    t->mipmapLevelBias = c.mipmapLevelBias;
    t->minMipmapLevelClamp = c.minMipmapLevelClamp;
    t->maxMipmapLevelClamp = c.maxMipmapLevelClamp;
    memcpy(t->borderColor, c.borderColor, sizeof t->borderColor);
    return cudaSuccess;
}

HCRT_API cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject, const struct cudaResourceDesc *pResDesc)
{
    ENTER();
    if (!pSurfObject || !pResDesc)
        return hcrt_ret(cudaErrorInvalidValue);
    CUDA_RESOURCE_DESC r;
    cudaError_t e = res_to_cu(pResDesc, &r);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUsurfObject o;
    CUresult rc = cuSurfObjectCreate(&o, &r);
    if (rc == CUDA_SUCCESS)
        *pSurfObject = o;
    return HCRT_CU(rc);
}

HCRT_API cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    ENTER();
    return HCRT_CU(cuSurfObjectDestroy(surfObject));
}

HCRT_API cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                      cudaSurfaceObject_t surfObject)
{
    ENTER();
    CUDA_RESOURCE_DESC r;
    if (!pResDesc)
        return hcrt_ret(cudaErrorInvalidValue);
    CUresult rc = cuSurfObjectGetResourceDesc(&r, surfObject);
    if (rc == CUDA_SUCCESS)
        res_from_cu(&r, pResDesc);
    return HCRT_CU(rc);
}
