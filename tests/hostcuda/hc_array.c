/* hc_array.c — hostcuda's CUDA arrays and texture / surface objects: cuArrayCreate, cuArray3DCreate,
 * their descriptors and cuArrayDestroy; the 1D-offset array copies (cuMemcpyHtoA, AtoH, DtoA,
 * AtoD, AtoA and the Async ones; the pitched ones are hc_copy3d.c's, which asks hc_array_span);
 * cuTexObjectCreate / Destroy / GetResourceDesc / GetTextureDesc, cuSurfObjectCreate / Destroy /
 * GetResourceDesc.
 * An array's texels live in a host buffer of its own (rows packed, layers or depth slices after
 * each other), outside the device arenas: no device address reaches it, so a kernel that takes an
 * array handle for a pointer faults. Texture and surface objects are numbered from 1 (never
 * reused); the interpreter copies an object's view with hc_tex_lookup (hc_tex.h). An array stays
 * allocated while an object made on it lives (cuArrayDestroy then only retires the handle).
 * Threading: array handles are checked under hc_mu (the handle registry); the object table has
 * its own lock (tex_mu, taken after hc_mu, or alone by the interpreter's workers).
 * Must not: hand a device address into an array's texels, or free an array an object still uses.
 */
#include "hc_internal.h"
#include "hc_tex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CUarray_st {
    uint32_t magic;                 /* HC_K_ARRAY */
    CUDA_ARRAY3D_DESCRIPTOR desc;   /* as created (Height / Depth 0 where the geometry has none) */
    int chsize, esize;              /* bytes per channel, per element */
    size_t w, h, d;                 /* texels; h, d at least 1; d = layers of a layered array */
    size_t pitch, slice, bytes;
    char *data;
    int refs;                       /* 1 for the handle, 1 per texture / surface object (tex_mu) */
};

/* ---------------------------------------------------------------- formats */
static int chan_size(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

/* the limits hc_core.c's device attributes report (MAXIMUM_TEXTURE*) */
enum { MAX_1D = 131072, MAX_2D_W = 131072, MAX_2D_H = 65536, MAX_3D = 16384, MAX_LAYERED = 32768, MAX_LAYERS = 2048,
       MAX_PITCH = 2097120 };

static void array_unref(struct CUarray_st *a)   /* tex_mu held */
{
    if (--a->refs == 0) {
        free(a->data);
        free(a);
    }
}

static pthread_mutex_t tex_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult array_create(const CUDA_ARRAY3D_DESCRIPTOR *d, CUarray *out)
{
    HC_CHECK_INIT();
    if (!out || !d)
        return CUDA_ERROR_INVALID_VALUE;
    int cs = chan_size(d->Format);
    unsigned known = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_TEXTURE_GATHER;
    if (!cs || (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4) || (d->Flags & ~known) ||
        !d->Width)
        return CUDA_ERROR_INVALID_VALUE;
    int layered = !!(d->Flags & CUDA_ARRAY3D_LAYERED);
    size_t w = d->Width, h = d->Height ? d->Height : 1, dd = d->Depth ? d->Depth : 1;
    if (layered ? (!d->Depth || d->Depth > MAX_LAYERS || w > MAX_LAYERED || h > MAX_LAYERED)
                : d->Depth ? (!d->Height || w > MAX_3D || h > MAX_3D || dd > MAX_3D)
                : d->Height ? (w > MAX_2D_W || h > MAX_2D_H) : w > MAX_1D)
        return CUDA_ERROR_INVALID_VALUE;
    if ((d->Flags & CUDA_ARRAY3D_TEXTURE_GATHER) && (!d->Height || d->Depth))
        return CUDA_ERROR_INVALID_VALUE;   /* gather: 2D arrays only */
    struct CUarray_st *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->magic = HC_K_ARRAY;
    a->desc = *d;
    a->chsize = cs;
    a->esize = cs * (int)d->NumChannels;
    a->w = w, a->h = h, a->d = dd;
    a->pitch = w * (size_t)a->esize;
    a->slice = a->pitch * h;
    a->bytes = a->slice * dd;
    a->refs = 1;
    if (!(a->data = malloc(a->bytes))) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memset(a->data, hc_opt.poison ? HC_POISON_BYTE : 0, a->bytes);
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS)
        hc_reg_add(a, HC_K_ARRAY);
    pthread_mutex_unlock(&hc_mu);
    if (rc != CUDA_SUCCESS) {
        free(a->data);
        free(a);
        return rc;
    }
    *out = a;
    return CUDA_SUCCESS;
}

/* hc_mu held */
static struct CUarray_st *array_of(CUarray h)
{
    return h && hc_reg_kind(h) == HC_K_ARRAY ? h : NULL;
}

CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    HC_COUNT(cuArrayCreate_v2);
    if (!pAllocateArray)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d = {pAllocateArray->Width, pAllocateArray->Height, 0, pAllocateArray->Format,
                                 pAllocateArray->NumChannels, 0};
    return array_create(&d, pHandle);
}

CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    HC_COUNT(cuArray3DCreate_v2);
    return array_create(pAllocateArray, pHandle);
}

CUresult CUDAAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    HC_COUNT(cuArrayGetDescriptor_v2);
    HC_CHECK_INIT();
    if (!pArrayDescriptor)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUarray_st *a = array_of(hArray);
    CUresult rc = !a ? CUDA_ERROR_INVALID_HANDLE : a->desc.Depth ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS)   /* a 3D or layered array has no 2D descriptor */
        *pArrayDescriptor = (CUDA_ARRAY_DESCRIPTOR){a->desc.Width, a->desc.Height, a->desc.Format, a->desc.NumChannels};
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    HC_COUNT(cuArray3DGetDescriptor_v2);
    HC_CHECK_INIT();
    if (!pArrayDescriptor)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUarray_st *a = array_of(hArray);
    if (a)
        *pArrayDescriptor = a->desc;
    pthread_mutex_unlock(&hc_mu);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuArrayDestroy(CUarray hArray)
{
    HC_COUNT(cuArrayDestroy);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUarray_st *a = array_of(hArray);
    if (a) {
        struct CUctx_st *c;
        if (hc_current_ctx(&c) == CUDA_SUCCESS)
            hc_ctx_sync(c);   /* as cuMemFree: queued copies into the array finish first */
        hc_reg_del(a);
        pthread_mutex_lock(&tex_mu);
        array_unref(a);
        pthread_mutex_unlock(&tex_mu);
    }
    pthread_mutex_unlock(&hc_mu);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---------------------------------------------------------------- copies */
CUresult hc_array_span(CUarray h, size_t x, size_t y, size_t z, size_t width, size_t height, size_t depth,
                       char **out, size_t *pitch, size_t *rows)
{
    pthread_mutex_lock(&hc_mu);
    struct CUarray_st *a = array_of(h);
    CUresult rc = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    /* the rows must lie in the array: x + width within a row (in bytes), y + height, z + depth */
    if (a && (x > a->pitch || width > a->pitch - x || y > a->h || height > a->h - y || z > a->d ||
              depth > a->d - z))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        *out = a->data + z * a->slice + y * a->pitch + x;
        *pitch = a->pitch;
        *rows = a->h;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* a byte range [off, off + n) of an array as a pitched region: whole rows from a row's start, or
 * a part of one row */
static CUresult array_bytes(CUarray h, size_t off, size_t n, size_t *x, size_t *y, size_t *w, size_t *rows)
{
    pthread_mutex_lock(&hc_mu);
    struct CUarray_st *a = array_of(h);
    CUresult rc = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (a && (a->d > 1 || off > a->slice || n > a->slice - off))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        if (off % a->pitch == 0 && n % a->pitch == 0 && n) {
            *x = 0, *y = off / a->pitch, *w = a->pitch, *rows = n / a->pitch;
        } else if (off % a->pitch + n <= a->pitch) {
            *x = off % a->pitch, *y = off / a->pitch, *w = n, *rows = 1;
        } else {
            rc = CUDA_ERROR_INVALID_VALUE;   /* crosses a row end in mid-row */
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* one copy between an array range and linear memory (or two arrays), as hc_copy3d.c's 3D copy */
static CUresult array_copy(CUarray dst, size_t doff, CUarray src, size_t soff, CUmemorytype lt, CUdeviceptr lin,
                           size_t n, CUstream s, int pt, int async)
{
    CUDA_MEMCPY3D c = {0};
    size_t x = 0, y = 0, w = 0, rows = 0;
    CUresult rc;
    if (dst) {
        if ((rc = array_bytes(dst, doff, n, &x, &y, &w, &rows)) != CUDA_SUCCESS)
            return rc;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY, c.dstArray = dst, c.dstXInBytes = x, c.dstY = y;
    }
    if (src) {
        size_t sx, sy, sw, srows;
        if ((rc = array_bytes(src, soff, n, &sx, &sy, &sw, &srows)) != CUDA_SUCCESS)
            return rc;
        if (dst && (sw != w || srows != rows))
            return CUDA_ERROR_INVALID_VALUE;   /* two arrays of different row lengths */
        x = sx, y = sy, w = sw, rows = srows;
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY, c.srcArray = src, c.srcXInBytes = sx, c.srcY = sy;
    }
    if (!dst) {
        c.dstMemoryType = lt, c.dstDevice = lin, c.dstHost = (void *)(uintptr_t)lin, c.dstPitch = w, c.dstHeight = rows;
    } else if (!src) {
        c.srcMemoryType = lt, c.srcDevice = lin, c.srcHost = (const void *)(uintptr_t)lin, c.srcPitch = w,
        c.srcHeight = rows;
    }
    c.WidthInBytes = w, c.Height = rows, c.Depth = 1;
    return hc_copy_3d(&c, s, pt, async);
}

#define H2D(p) CU_MEMORYTYPE_HOST, (CUdeviceptr)(uintptr_t)(p)
CUresult CUDAAPI cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
    HC_COUNT(cuMemcpyHtoA_v2);
    return array_copy(dstArray, dstOffset, NULL, 0, H2D(srcHost), ByteCount, NULL, 0, 0);
}
CUresult CUDAAPI cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
    HC_COUNT(cuMemcpyHtoA_v2_ptds);
    return array_copy(dstArray, dstOffset, NULL, 0, H2D(srcHost), ByteCount, NULL, 1, 0);
}
CUresult CUDAAPI cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoH_v2);
    return array_copy(NULL, 0, srcArray, srcOffset, H2D(dstHost), ByteCount, NULL, 0, 0);
}
CUresult CUDAAPI cuMemcpyAtoH_v2_ptds(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoH_v2_ptds);
    return array_copy(NULL, 0, srcArray, srcOffset, H2D(dstHost), ByteCount, NULL, 1, 0);
}
CUresult CUDAAPI cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoA_v2);
    return array_copy(dstArray, dstOffset, NULL, 0, CU_MEMORYTYPE_DEVICE, srcDevice, ByteCount, NULL, 0, 0);
}
CUresult CUDAAPI cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
    HC_COUNT(cuMemcpyDtoA_v2_ptds);
    return array_copy(dstArray, dstOffset, NULL, 0, CU_MEMORYTYPE_DEVICE, srcDevice, ByteCount, NULL, 1, 0);
}
CUresult CUDAAPI cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoD_v2);
    return array_copy(NULL, 0, srcArray, srcOffset, CU_MEMORYTYPE_DEVICE, dstDevice, ByteCount, NULL, 0, 0);
}
CUresult CUDAAPI cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoD_v2_ptds);
    return array_copy(NULL, 0, srcArray, srcOffset, CU_MEMORYTYPE_DEVICE, dstDevice, ByteCount, NULL, 1, 0);
}
CUresult CUDAAPI cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                 size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoA_v2);
    return array_copy(dstArray, dstOffset, srcArray, srcOffset, 0, 0, ByteCount, NULL, 0, 0);
}
CUresult CUDAAPI cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                      size_t ByteCount)
{
    HC_COUNT(cuMemcpyAtoA_v2_ptds);
    return array_copy(dstArray, dstOffset, srcArray, srcOffset, 0, 0, ByteCount, NULL, 1, 0);
}
CUresult CUDAAPI cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount,
                                      CUstream hStream)
{
    HC_COUNT(cuMemcpyHtoAAsync_v2);
    return array_copy(dstArray, dstOffset, NULL, 0, H2D(srcHost), ByteCount, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void *srcHost,
                                           size_t ByteCount, CUstream hStream)
{
    HC_COUNT(cuMemcpyHtoAAsync_v2_ptsz);
    return array_copy(dstArray, dstOffset, NULL, 0, H2D(srcHost), ByteCount, hStream, 1, 1);
}
CUresult CUDAAPI cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                      CUstream hStream)
{
    HC_COUNT(cuMemcpyAtoHAsync_v2);
    return array_copy(NULL, 0, srcArray, srcOffset, H2D(dstHost), ByteCount, hStream, 0, 1);
}
CUresult CUDAAPI cuMemcpyAtoHAsync_v2_ptsz(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                           CUstream hStream)
{
    HC_COUNT(cuMemcpyAtoHAsync_v2_ptsz);
    return array_copy(NULL, 0, srcArray, srcOffset, H2D(dstHost), ByteCount, hStream, 1, 1);
}

/* ---------------------------------------------------------------- texture and surface objects */
typedef struct tex_obj {
    int live, surf;
    hc_tex_view v;
    CUDA_RESOURCE_DESC res;
    CUDA_TEXTURE_DESC tex;
    struct CUarray_st *array;   /* ARRAY resource: held (refs) */
} tex_obj;
static tex_obj *objs;           /* handle h is objs[h - 1] (tex_mu) */
static size_t nobjs, capobjs;

int hc_tex_lookup(uint64_t h, int surf, hc_tex_view *out)
{
    int ok = 0;
    pthread_mutex_lock(&tex_mu);
    if (h >= 1 && h <= nobjs && objs[h - 1].live && objs[h - 1].surf == surf) {
        *out = objs[h - 1].v;
        ok = 1;
    }
    pthread_mutex_unlock(&tex_mu);
    return ok ? 0 : -1;
}

static int valid_addr_mode(CUaddress_mode m)
{
    return m == CU_TR_ADDRESS_MODE_WRAP || m == CU_TR_ADDRESS_MODE_CLAMP || m == CU_TR_ADDRESS_MODE_MIRROR ||
           m == CU_TR_ADDRESS_MODE_BORDER;
}

/* the view of a resource (texels, geometry, format); takes hc_mu itself. An ARRAY resource's array
 * comes back in *arr with a reference taken (the caller hands it to obj_add or drops it); surf:
 * the array must have been made with CUDA_ARRAY3D_SURFACE_LDST */
static CUresult res_view(const CUDA_RESOURCE_DESC *r, int surf, hc_tex_view *v, struct CUarray_st **arr)
{
    memset(v, 0, sizeof *v);
    *arr = NULL;
    if (r->flags)
        return CUDA_ERROR_INVALID_VALUE;
    switch (r->resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
        pthread_mutex_lock(&hc_mu);
        struct CUarray_st *a = array_of(r->res.array.hArray);
        CUresult rc = !a ? CUDA_ERROR_INVALID_HANDLE
                    : surf && !(a->desc.Flags & CUDA_ARRAY3D_SURFACE_LDST) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
        if (rc == CUDA_SUCCESS) {
            pthread_mutex_lock(&tex_mu);
            a->refs++;
            pthread_mutex_unlock(&tex_mu);
        }
        pthread_mutex_unlock(&hc_mu);
        if (rc != CUDA_SUCCESS)
            return rc;
        int layered = !!(a->desc.Flags & CUDA_ARRAY3D_LAYERED);
        *v = (hc_tex_view){.data = a->data, .pitch = a->pitch, .slice = a->slice, .w = (unsigned)a->w,
                           .h = (unsigned)a->h, .d = layered ? 1 : (unsigned)a->d,
                           .layers = layered ? (unsigned)a->d : 0, .fmt = a->desc.Format,
                           .nch = (int)a->desc.NumChannels, .chsize = a->chsize};
        v->dims = a->desc.Depth && !layered ? 3 : a->desc.Height ? 2 : 1;
        *arr = a;
        return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_LINEAR: case CU_RESOURCE_TYPE_PITCH2D: {
        int lin = r->resType == CU_RESOURCE_TYPE_LINEAR;
        CUarray_format f = lin ? r->res.linear.format : r->res.pitch2D.format;
        unsigned nch = lin ? r->res.linear.numChannels : r->res.pitch2D.numChannels;
        CUdeviceptr p = lin ? r->res.linear.devPtr : r->res.pitch2D.devPtr;
        int cs = chan_size(f);
        if (!cs || (nch != 1 && nch != 2 && nch != 4) || !p)
            return CUDA_ERROR_INVALID_VALUE;
        size_t es = (size_t)cs * nch, w, h, pitch, span;
        if (lin) {
            w = r->res.linear.sizeInBytes / es, h = 1, pitch = r->res.linear.sizeInBytes, span = w * es;
            if (!w || p % HC_ALIGN || w > (1u << 28))
                return CUDA_ERROR_INVALID_VALUE;
        } else {
            w = r->res.pitch2D.width, h = r->res.pitch2D.height, pitch = r->res.pitch2D.pitchInBytes;
            /* the address aligned as hostcuda's allocations are (HC_ALIGN), the pitch to
             * TEXTURE_PITCH_ALIGNMENT (32) */
            if (!w || !h || w > MAX_2D_W || h > MAX_2D_H || p % HC_ALIGN || pitch % 32 || pitch < w * es ||
                pitch > MAX_PITCH)
                return CUDA_ERROR_INVALID_VALUE;
            span = (h - 1) * pitch + w * es;
        }
        int kind;
        char *rw = hc_mem_resolve(p, span, &kind, NULL);
        if (!rw || kind == HC_MEM_PAGEABLE)
            return CUDA_ERROR_INVALID_VALUE;   /* not device memory, or the texels run past it */
        *v = (hc_tex_view){.data = rw, .pitch = pitch, .slice = pitch * h, .w = (unsigned)w, .h = (unsigned)h,
                           .d = 1, .fmt = f, .nch = (int)nch, .chsize = cs, .dims = lin ? 1 : 2,
                           .linear_res = lin};
        return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED;   /* hostcuda has no mipmapped arrays */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* a new object holding array a's reference (dropped if it cannot be made) */
static CUresult obj_add(int surf, const hc_tex_view *v, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
                        struct CUarray_st *a, unsigned long long *out)
{
    pthread_mutex_lock(&tex_mu);
    if (nobjs == capobjs) {
        size_t nc = capobjs ? capobjs * 2 : 64;
        tex_obj *n = realloc(objs, nc * sizeof *n);
        if (!n) {
            if (a)
                array_unref(a);
            pthread_mutex_unlock(&tex_mu);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        objs = n, capobjs = nc;
    }
    tex_obj *o = &objs[nobjs++];
    *o = (tex_obj){.live = 1, .surf = surf, .v = *v, .res = *r, .array = a};
    if (t)
        o->tex = *t;
    *out = nobjs;
    pthread_mutex_unlock(&tex_mu);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                                   const CUDA_TEXTURE_DESC *pTexDesc, const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
    HC_COUNT(cuTexObjectCreate);
    HC_CHECK_INIT();
    if (!pTexObject || !pResDesc || !pTexDesc)
        return CUDA_ERROR_INVALID_VALUE;
    if (pResViewDesc)
        return CUDA_ERROR_NOT_SUPPORTED;   /* resource views: not in hostcuda */
    const CUDA_TEXTURE_DESC *t = pTexDesc;
    unsigned known = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                     CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;
    if ((t->flags & ~known) || (t->filterMode != CU_TR_FILTER_MODE_POINT && t->filterMode != CU_TR_FILTER_MODE_LINEAR))
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 3; i++)
        if (!valid_addr_mode(t->addressMode[i]))
            return CUDA_ERROR_INVALID_VALUE;
    if (t->flags & CU_TRSF_SRGB)
        return CUDA_ERROR_NOT_SUPPORTED;   /* sRGB conversion: not in hostcuda */
    hc_tex_view v;
    struct CUarray_st *a;
    CUresult rc = res_view(pResDesc, 0, &v, &a);
    if (rc != CUDA_SUCCESS)
        return rc;
    int intfmt = v.fmt != CU_AD_FORMAT_FLOAT && v.fmt != CU_AD_FORMAT_HALF;
    /* 8- and 16-bit integers read as normalized floats unless READ_AS_INTEGER; 32-bit integers and
     * floats as they are */
    v.read_int = intfmt && (v.chsize == 4 || (t->flags & CU_TRSF_READ_AS_INTEGER));
    if (v.read_int && t->filterMode == CU_TR_FILTER_MODE_LINEAR) {
        if (a) {
            pthread_mutex_lock(&tex_mu);
            array_unref(a);
            pthread_mutex_unlock(&tex_mu);
        }
        return CUDA_ERROR_INVALID_VALUE;   /* linear filtering returns floats only */
    }
    v.normalized = !!(t->flags & CU_TRSF_NORMALIZED_COORDINATES);
    v.filter = t->filterMode;
    for (int i = 0; i < 3; i++)
        v.addr[i] = t->addressMode[i];
    memcpy(v.border, t->borderColor, sizeof v.border);
    if (v.linear_res)   /* tex1Dfetch: element index, no filtering, no address modes */
        v.filter = CU_TR_FILTER_MODE_POINT, v.normalized = 0;
    return obj_add(0, &v, pResDesc, t, a, pTexObject);
}

static CUresult obj_destroy(unsigned long long h, int surf)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&tex_mu);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (h >= 1 && h <= nobjs && objs[h - 1].live && objs[h - 1].surf == surf) {
        objs[h - 1].live = 0;
        if (objs[h - 1].array)
            array_unref(objs[h - 1].array);
        objs[h - 1].array = NULL;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&tex_mu);
    return rc;
}

static CUresult obj_get(unsigned long long h, int surf, CUDA_RESOURCE_DESC *r, CUDA_TEXTURE_DESC *t)
{
    HC_CHECK_INIT();
    if (!r && !t)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&tex_mu);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (h >= 1 && h <= nobjs && objs[h - 1].live && objs[h - 1].surf == surf) {
        if (r)
            *r = objs[h - 1].res;
        if (t)
            *t = objs[h - 1].tex;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&tex_mu);
    return rc;
}

CUresult CUDAAPI cuTexObjectDestroy(CUtexObject texObject)
{
    HC_COUNT(cuTexObjectDestroy);
    return obj_destroy(texObject, 0);
}
CUresult CUDAAPI cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject)
{
    HC_COUNT(cuTexObjectGetResourceDesc);
    return pResDesc ? obj_get(texObject, 0, pResDesc, NULL) : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc, CUtexObject texObject)
{
    HC_COUNT(cuTexObjectGetTextureDesc);
    return pTexDesc ? obj_get(texObject, 0, NULL, pTexDesc) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc)
{
    HC_COUNT(cuSurfObjectCreate);
    HC_CHECK_INIT();
    if (!pSurfObject || !pResDesc || pResDesc->resType != CU_RESOURCE_TYPE_ARRAY)
        return CUDA_ERROR_INVALID_VALUE;
    hc_tex_view v;
    struct CUarray_st *a;
    CUresult rc = res_view(pResDesc, 1, &v, &a);
    if (rc != CUDA_SUCCESS)
        return rc;
    return obj_add(1, &v, pResDesc, NULL, a, pSurfObject);
}
CUresult CUDAAPI cuSurfObjectDestroy(CUsurfObject surfObject)
{
    HC_COUNT(cuSurfObjectDestroy);
    return obj_destroy(surfObject, 1);
}
CUresult CUDAAPI cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject)
{
    HC_COUNT(cuSurfObjectGetResourceDesc);
    return pResDesc ? obj_get(surfObject, 1, pResDesc, NULL) : CUDA_ERROR_INVALID_VALUE;
}
