/* rt_calls.cu — an ordinary runtime program (nvcc -cudart shared, no kernels) that checks the
 * runtime calls ordinary programs make beyond malloc/copy/launch, one case per argument, each
 * call's result and each documented error code:
 *   pool    memory pools: the default and current pool, created pools, attributes (release
 *           threshold, reuse flags, reserved/used counters and their high watermarks), TrimTo,
 *           access, cudaMallocFromPoolAsync, CUDA 13's location-keyed pool calls, destroy;
 *   attach  cudaStreamAttachMemAsync on managed memory (whole allocation, 0, flags, bad input);
 *   p2p     cudaDeviceGetP2PAttribute for device pairs and the same device;
 *   copy2d  cudaMallocPitch, cudaMemcpy2D(+Async) in each direction with distinct pitches and
 *           offsets, cudaMemset2D(+Async): rows, and the bytes between rows untouched;
 *   copy3d  cudaMalloc3D, cudaMemset3D(+Async), cudaMemcpy3D(+Async) of a sub-box at positions,
 *           cudaMemcpy3DPeer between devices, bad array handles and bad extents;
 *   stream  cudaStreamSet/GetAttribute (access policy window, priority, sync policy),
 *           cudaStreamCopyAttributes, cudaStreamGetDevice, cudaStreamGetId;
 *   managed cudaMemAdvise, cudaMemPrefetchAsync and the range queries they answer
 *           (cudaMemRangeGetAttribute(s)) page by page;
 *   basics  calls every program meets: cudaChooseDevice, stream priorities, host registration and
 *           flags, stream/event queries while a host function holds the stream, async symbol
 *           copies, cudaFuncSetCacheConfig;
 *   device  cache and shared-memory configuration, cudaFuncGetName/GetParamInfo, peer access,
 *           cudaMemcpyPeer(+Async), the IPC calls (answered as by a GPU without IPC);
 * Each check prints `ok CASE: what` or `FAIL CASE: what: expected X, got Y`; exit 1 on any FAIL.
 * Built twice: rt_calls_ptsz (--default-stream per-thread, RT_CALLS_PTSZ) imports the runtime's
 * _ptds/_ptsz twins, and each case checks (hostcuda's call counters) that they reached the driver's.
 * RT_CALLS_CORRUPT=1 corrupts one byte of every expected buffer before it is compared (the
 * negative control of the data checks: each must then fail). */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_expect.h"

/* the shared-memory configuration calls are deprecated in CUDA 13, and still tested */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

extern "C" unsigned long long hostcuda_call_count(const char *exported_symbol) __attribute__((weak));

#define OK(what, call) EXPECT_RT(what, cudaSuccess, call)

/* compare n bytes; print the first differing offset with both sides */
static void expect_bytes(const char *what, const unsigned char *expected, const unsigned char *got, size_t n)
{
    static int corrupt = -1;
    if (corrupt < 0)
        corrupt = getenv("RT_CALLS_CORRUPT") && strcmp(getenv("RT_CALLS_CORRUPT"), "1") == 0;
    unsigned char *e = (unsigned char *)malloc(n);
    memcpy(e, expected, n);
    if (corrupt && n > 0)
        e[n / 2] ^= 0x5a;
    for (size_t i = 0; i < n; i++)
        if (e[i] != got[i]) {
            printf("FAIL %s: %s: byte %zu: expected 0x%02x, got 0x%02x\n", rt_cur, what, i, e[i], got[i]);
            rt_fails++;
            free(e);
            return;
        }
    printf("ok %s: %s\n", rt_cur, what);
    free(e);
}

/* the driver entry point this build's runtime calls should have reached: the per-thread twin in
 * rt_calls_ptsz, the legacy one otherwise */
static void expect_driver_called(const char *legacy, const char *twin)
{
    if (!hostcuda_call_count) {
        printf("FAIL %s: hostcuda_call_count is missing (not on hostcuda?)\n", rt_cur);
        rt_fails++;
        return;
    }
#ifdef RT_CALLS_PTSZ
    const char *want = twin, *other = legacy;
#else
    const char *want = legacy, *other = twin;
#endif
    char what[160];
    snprintf(what, sizeof what, "%s reached the driver", want);
    EXPECT_EQ(what, 1, hostcuda_call_count(want) > 0);
    snprintf(what, sizeof what, "%s did not", other);
    EXPECT_EQ(what, 0, hostcuda_call_count(other));
}

static unsigned long long pool_attr(cudaMemPool_t p, cudaMemPoolAttr a)
{
    unsigned long long v = ~0ull;
    cudaError_t e = cudaMemPoolGetAttribute(p, a, &v);
    if (e != cudaSuccess) {
        printf("FAIL %s: cudaMemPoolGetAttribute(%d): %s\n", rt_cur, (int)a, cudaGetErrorName(e));
        rt_fails++;
    }
    return v;
}

static void case_pool(void)
{
    cudaMemPool_t def = NULL, curp = NULL, mine = NULL, p = NULL;
    OK("cudaDeviceGetDefaultMemPool(0)", cudaDeviceGetDefaultMemPool(&def, 0));
    EXPECT_EQ("the default pool is a handle", 1, def != NULL);
    OK("cudaDeviceGetMemPool(0)", cudaDeviceGetMemPool(&curp, 0));
    EXPECT_EQ("the current pool is the default pool", (uintptr_t)def, (uintptr_t)curp);
    int n = 0;
    cudaGetDeviceCount(&n);
    EXPECT_RT("cudaDeviceGetDefaultMemPool(bad device)", cudaErrorInvalidDevice, cudaDeviceGetDefaultMemPool(&p, n));
    EXPECT_RT("cudaDeviceGetDefaultMemPool(NULL)", cudaErrorInvalidValue, cudaDeviceGetDefaultMemPool(NULL, 0));
    cudaGetLastError();

    /* attributes of the default pool */
    EXPECT_EQ("default release threshold", 0, pool_attr(def, cudaMemPoolAttrReleaseThreshold));
    unsigned long long big = ~0ull;
    OK("set release threshold", cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &big));
    EXPECT_EQ("release threshold kept", (long long)big, (long long)pool_attr(def, cudaMemPoolAttrReleaseThreshold));
    EXPECT_EQ("reuse follow-event default", 1, (int)pool_attr(def, cudaMemPoolReuseFollowEventDependencies) & 1);
    int zero = 0;
    OK("clear reuse opportunistic", cudaMemPoolSetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &zero));
    int r = -1;
    OK("get reuse opportunistic", cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &r));
    EXPECT_EQ("reuse opportunistic cleared", 0, r);
    unsigned long long v = 5;
    EXPECT_RT("used-current is read-only", cudaErrorInvalidValue, cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &v));
    EXPECT_RT("a high watermark resets only to 0", cudaErrorInvalidValue, cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &v));
    EXPECT_RT("an unknown attribute", cudaErrorInvalidValue, cudaMemPoolGetAttribute(def, (cudaMemPoolAttr)99, &v));
    EXPECT_RT("a NULL value", cudaErrorInvalidValue, cudaMemPoolGetAttribute(def, cudaMemPoolAttrUsedMemHigh, NULL));
    cudaGetLastError();

    /* a pool of its own: counters follow allocations in stream order */
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    OK("cudaMemPoolCreate", cudaMemPoolCreate(&mine, &props));
    EXPECT_EQ("used 0 at creation", 0, pool_attr(mine, cudaMemPoolAttrUsedMemCurrent));
    EXPECT_EQ("reserved 0 at creation", 0, pool_attr(mine, cudaMemPoolAttrReservedMemCurrent));
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *a = NULL, *b = NULL;
    OK("cudaMallocFromPoolAsync 1000", cudaMallocFromPoolAsync(&a, 1000, mine, s));
    OK("cudaMallocFromPoolAsync 3000", cudaMallocFromPoolAsync(&b, 3000, mine, s));
    EXPECT_EQ("used = the bytes asked for", 4000, pool_attr(mine, cudaMemPoolAttrUsedMemCurrent));
    unsigned long long res = pool_attr(mine, cudaMemPoolAttrReservedMemCurrent);
    EXPECT_EQ("reserved >= used", 1, res >= 4000);
    unsigned char host[3000], back[3000];
    for (int i = 0; i < 3000; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    OK("copy into a pool allocation", cudaMemcpyAsync(b, host, 3000, cudaMemcpyHostToDevice, s));
    OK("copy back", cudaMemcpyAsync(back, b, 3000, cudaMemcpyDeviceToHost, s));
    OK("sync", cudaStreamSynchronize(s));
    expect_bytes("pool memory holds what was written", host, back, 3000);
    OK("cudaFreeAsync(b)", cudaFreeAsync(b, s));
    OK("sync", cudaStreamSynchronize(s));
    EXPECT_EQ("used after a free", 1000, pool_attr(mine, cudaMemPoolAttrUsedMemCurrent));
    EXPECT_EQ("used high watermark", 4000, pool_attr(mine, cudaMemPoolAttrUsedMemHigh));
    EXPECT_EQ("reserved high watermark", (long long)res, (long long)pool_attr(mine, cudaMemPoolAttrReservedMemHigh));
    unsigned long long z = 0;
    OK("reset the used high watermark", cudaMemPoolSetAttribute(mine, cudaMemPoolAttrUsedMemHigh, &z));
    EXPECT_EQ("used high watermark = current after reset", 1000, pool_attr(mine, cudaMemPoolAttrUsedMemHigh));
    OK("cudaMemPoolTrimTo", cudaMemPoolTrimTo(mine, 0));
    EXPECT_EQ("TrimTo keeps live allocations", 1000, pool_attr(mine, cudaMemPoolAttrUsedMemCurrent));

    /* the current pool: cudaMallocAsync takes from it */
    OK("cudaDeviceSetMemPool(mine)", cudaDeviceSetMemPool(0, mine));
    OK("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&curp, 0));
    EXPECT_EQ("the current pool is mine", (uintptr_t)mine, (uintptr_t)curp);
    void *c = NULL;
    OK("cudaMallocAsync from the current pool", cudaMallocAsync(&c, 512, s));
    EXPECT_EQ("used counts cudaMallocAsync", 1512, pool_attr(mine, cudaMemPoolAttrUsedMemCurrent));
    OK("cudaFreeAsync(c)", cudaFreeAsync(c, s));
    cudaStreamSynchronize(s);
    if (n > 1) {
        cudaMemPool_t other;
        cudaDeviceGetDefaultMemPool(&other, 1);
        EXPECT_RT("another device's pool as current", cudaErrorInvalidDevice, cudaDeviceSetMemPool(0, other));
        cudaGetLastError();
    }

    /* CUDA 13: pools by location */
    struct cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    OK("cudaMemGetDefaultMemPool", cudaMemGetDefaultMemPool(&p, &loc, cudaMemAllocationTypePinned));
    EXPECT_EQ("= the device's default pool", (uintptr_t)def, (uintptr_t)p);
    OK("cudaMemGetMemPool", cudaMemGetMemPool(&p, &loc, cudaMemAllocationTypePinned));
    EXPECT_EQ("= the device's current pool", (uintptr_t)mine, (uintptr_t)p);
    OK("cudaMemSetMemPool(default)", cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, def));
    OK("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&curp, 0));
    EXPECT_EQ("the current pool is the default again", (uintptr_t)def, (uintptr_t)curp);
    struct cudaMemLocation bad = {cudaMemLocationTypeDevice, n};
    EXPECT_RT("cudaMemGetMemPool(bad device)", cudaErrorInvalidDevice, cudaMemGetMemPool(&p, &bad, cudaMemAllocationTypePinned));
    EXPECT_RT("cudaMemGetDefaultMemPool(bad type)", cudaErrorInvalidValue,
              cudaMemGetDefaultMemPool(&p, &loc, (cudaMemAllocationType)0));
    cudaGetLastError();

    /* access */
    enum cudaMemAccessFlags fl = cudaMemAccessFlagsProtNone;
    OK("cudaMemPoolGetAccess(own device)", cudaMemPoolGetAccess(&fl, mine, &loc));
    EXPECT_EQ("own device reads and writes", cudaMemAccessFlagsProtReadWrite, fl);
    struct cudaMemAccessDesc ad = {{cudaMemLocationTypeDevice, 0}, cudaMemAccessFlagsProtRead};
    EXPECT_RT("own device cannot lose read-write", cudaErrorInvalidDevice, cudaMemPoolSetAccess(mine, &ad, 1));
    cudaGetLastError();
    if (n > 1) {
        struct cudaMemLocation l1 = {cudaMemLocationTypeDevice, 1};
        OK("cudaMemPoolGetAccess(peer)", cudaMemPoolGetAccess(&fl, mine, &l1));
        EXPECT_EQ("a peer has no access at first", cudaMemAccessFlagsProtNone, fl);
        ad.location.id = 1;
        ad.flags = cudaMemAccessFlagsProtReadWrite;
        OK("cudaMemPoolSetAccess(peer, rw)", cudaMemPoolSetAccess(mine, &ad, 1));
        OK("cudaMemPoolGetAccess(peer)", cudaMemPoolGetAccess(&fl, mine, &l1));
        EXPECT_EQ("the peer reads and writes", cudaMemAccessFlagsProtReadWrite, fl);
        ad.flags = (cudaMemAccessFlags)2;
        EXPECT_RT("an unknown access flag", cudaErrorInvalidValue, cudaMemPoolSetAccess(mine, &ad, 1));
        cudaGetLastError();
    }

    /* bad creations, destroy */
    props.location.id = n;
    EXPECT_RT("cudaMemPoolCreate(bad device)", cudaErrorInvalidDevice, cudaMemPoolCreate(&p, &props));
    props.location.id = 0;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    EXPECT_RT("cudaMemPoolCreate(a shareable handle type)", cudaErrorNotSupported, cudaMemPoolCreate(&p, &props));
    props.handleTypes = cudaMemHandleTypeNone;
    props.allocType = cudaMemAllocationTypeInvalid;
    EXPECT_RT("cudaMemPoolCreate(invalid type)", cudaErrorInvalidValue, cudaMemPoolCreate(&p, &props));
    EXPECT_RT("cudaMemPoolDestroy(default pool)", cudaErrorInvalidValue, cudaMemPoolDestroy(def));
    cudaGetLastError();
    OK("cudaMemPoolDestroy with an allocation outstanding", cudaMemPoolDestroy(mine));
    EXPECT_RT("a destroyed pool is no handle", cudaErrorInvalidValue, cudaMemPoolGetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &v));
    cudaGetLastError();
    OK("the outstanding allocation still frees", cudaFreeAsync(a, s));
    OK("sync", cudaStreamSynchronize(s));
    EXPECT_RT("cudaMallocFromPoolAsync(destroyed pool)", cudaErrorInvalidValue, cudaMallocFromPoolAsync(&a, 16, mine, s));
    cudaGetLastError();
    expect_driver_called("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz");
    cudaStreamDestroy(s);
}

static void case_attach(void)
{
    cudaStream_t s;
    OK("cudaStreamCreate", cudaStreamCreate(&s));
    int *m = NULL;
    OK("cudaMallocManaged", cudaMallocManaged(&m, 1000 * sizeof(int), cudaMemAttachGlobal));
    OK("attach the whole allocation (length 0)", cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
    OK("attach the whole allocation (its length)", cudaStreamAttachMemAsync(s, m, 1000 * sizeof(int), cudaMemAttachHost));
    OK("attach globally", cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachGlobal));
    OK("sync", cudaStreamSynchronize(s));
    for (int i = 0; i < 1000; i++)
        m[i] = i;
    int back[1000];
    OK("the host reads it through a copy", cudaMemcpy(back, m, sizeof back, cudaMemcpyDefault));
    expect_bytes("managed data after attach", (unsigned char *)m, (unsigned char *)back, sizeof back);
    EXPECT_RT("a part of the allocation", cudaErrorInvalidValue, cudaStreamAttachMemAsync(s, m, 16, cudaMemAttachSingle));
    EXPECT_RT("an inner pointer", cudaErrorInvalidValue, cudaStreamAttachMemAsync(s, m + 4, 0, cudaMemAttachSingle));
    EXPECT_RT("an unknown flag", cudaErrorInvalidValue, cudaStreamAttachMemAsync(s, m, 0, 8));
    int *d = NULL;
    cudaMalloc(&d, 64);
    EXPECT_RT("device memory", cudaErrorInvalidValue, cudaStreamAttachMemAsync(s, d, 0, cudaMemAttachSingle));
    int local[4];
    EXPECT_RT("pageable memory (no pageable access)", cudaErrorInvalidValue,
              cudaStreamAttachMemAsync(s, local, sizeof local, cudaMemAttachSingle));
    cudaGetLastError();
    OK("the default stream", cudaStreamAttachMemAsync(0, m, 0, cudaMemAttachSingle));
    cudaFree(d);
    expect_driver_called("cuStreamAttachMemAsync", "cuStreamAttachMemAsync_ptsz");
    cudaFree(m);
    cudaStreamDestroy(s);
}

static void case_p2p(void)
{
    int n = 0;
    cudaGetDeviceCount(&n);
    int v = -1;
    EXPECT_RT("the same device", cudaErrorInvalidDevice, cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 0));
    EXPECT_RT("a device that does not exist", cudaErrorInvalidDevice,
              cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, n));
    cudaGetLastError();
    if (n < 2) {
        printf("ok %s: one device: no pair to query\n", rt_cur);
        return;
    }
    int can = -1;
    OK("cudaDeviceCanAccessPeer(0, 1)", cudaDeviceCanAccessPeer(&can, 0, 1));
    OK("access supported", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1));
    EXPECT_EQ("access supported = cudaDeviceCanAccessPeer", can, v);
    OK("performance rank", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, 1, 0));
    EXPECT_EQ("every link ranks 0", 0, v);
    OK("native atomics", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, 0, 1));
    EXPECT_EQ("native atomics over host memory", 1, v);
    OK("array access", cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrCudaArrayAccessSupported, 0, 1));
    EXPECT_EQ("no CUDA arrays", 0, v);
    EXPECT_RT("an unknown attribute", cudaErrorInvalidValue, cudaDeviceGetP2PAttribute(&v, (cudaDeviceP2PAttr)77, 0, 1));
    EXPECT_RT("a NULL value", cudaErrorInvalidValue, cudaDeviceGetP2PAttribute(NULL, cudaDevP2PAttrAccessSupported, 0, 1));
    cudaGetLastError();
}

/* the reference of a pitched copy: rows of `width` bytes from src (pitch sp) into dst (pitch dp) */
static void ref_copy2d(unsigned char *dst, size_t dp, const unsigned char *src, size_t sp, size_t width, size_t height)
{
    for (size_t y = 0; y < height; y++)
        memcpy(dst + y * dp, src + y * sp, width);
}

static void case_copy2d(void)
{
    const size_t w = 37, h = 11, sp = 50, bp = 41;
    unsigned char src[sp * h], out[bp * h], ref[bp * h];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 13 + 1);
    void *d = NULL, *d2 = NULL;
    size_t dp = 0, dp2 = 0;
    OK("cudaMallocPitch", cudaMallocPitch(&d, &dp, w, h));
    EXPECT_EQ("the pitch holds a row", 1, dp >= w);
    OK("cudaMallocPitch (second)", cudaMallocPitch(&d2, &dp2, w + 8, h));
    OK("cudaMemset (whole second allocation)", cudaMemset(d2, 0xee, dp2 * h));
    OK("cudaMemcpy2D host->device", cudaMemcpy2D(d, dp, src, sp, w, h, cudaMemcpyHostToDevice));
    /* device -> device into the second allocation at byte column 5 */
    OK("cudaMemcpy2D device->device at an offset", cudaMemcpy2D((char *)d2 + 5, dp2, d, dp, w, h, cudaMemcpyDeviceToDevice));
    memset(out, 0xaa, sizeof out);
    memset(ref, 0xaa, sizeof ref);
    OK("cudaMemcpy2D device->host (another pitch)", cudaMemcpy2D(out, bp, d, dp, w, h, cudaMemcpyDeviceToHost));
    ref_copy2d(ref, bp, src, sp, w, h);
    expect_bytes("host -> device -> host, rows and the gaps between them", ref, out, sizeof out);
    /* the second allocation: whole rows back, 0xee around the copied block */
    size_t n2 = dp2 * h;
    unsigned char *all = (unsigned char *)malloc(n2), *ref2 = (unsigned char *)malloc(n2);
    memset(ref2, 0xee, n2);
    for (size_t y = 0; y < h; y++)
        memcpy(ref2 + y * dp2 + 5, src + y * sp, w);
    OK("cudaMemcpy the whole second allocation back", cudaMemcpy(all, d2, n2, cudaMemcpyDeviceToHost));
    expect_bytes("device -> device at an offset, the rest untouched", ref2, all, n2);

    /* async, cudaMemcpyDefault, on a stream */
    cudaStream_t s;
    cudaStreamCreate(&s);
    unsigned char *pin = NULL;
    OK("cudaMallocHost", cudaMallocHost((void **)&pin, sizeof out));
    memset(pin, 0, sizeof out);
    OK("cudaMemcpy2DAsync default kind", cudaMemcpy2DAsync(pin, bp, d, dp, w, h, cudaMemcpyDefault, s));
    OK("sync", cudaStreamSynchronize(s));
    memset(ref, 0, sizeof ref);
    ref_copy2d(ref, bp, src, sp, w, h);
    expect_bytes("async 2D copy into pinned memory", ref, pin, sizeof out);

    /* memset2D: a narrower block, the bytes beyond each row's width untouched */
    OK("cudaMemset all", cudaMemset(d2, 0, n2));
    OK("cudaMemset2D", cudaMemset2D(d2, dp2, 0x3c, w - 2, h - 1));
    /* the default stream (per-thread in rt_calls_ptsz) does not order against s: wait for it */
    OK("sync the default stream", cudaStreamSynchronize(0));
    OK("cudaMemset2DAsync (last row)", cudaMemset2DAsync((char *)d2 + (h - 1) * dp2, dp2, 0x5d, 3, 1, s));
    OK("sync", cudaStreamSynchronize(s));
    memset(ref2, 0, n2);
    for (size_t y = 0; y < h - 1; y++)
        memset(ref2 + y * dp2, 0x3c, w - 2);
    memset(ref2 + (h - 1) * dp2, 0x5d, 3);
    OK("copy back", cudaMemcpy(all, d2, n2, cudaMemcpyDeviceToHost));
    expect_bytes("memset2D rows, the rest untouched", ref2, all, n2);

    /* the driver's 16- and 32-bit 2D memsets and the unaligned 2D copy (no runtime call maps to them) */
    OK("cudaMemset all", cudaMemset(d2, 0, n2));
    EXPECT_EQ("cuMemsetD2D32 (3 x 4-byte elements, 2 rows)", CUDA_SUCCESS,
              cuMemsetD2D32((CUdeviceptr)(uintptr_t)d2, dp2, 0xa1b2c3d4u, 3, 2));
    EXPECT_EQ("cuMemsetD2D16Async (5 x 2-byte elements, row 2)", CUDA_SUCCESS,
              cuMemsetD2D16Async((CUdeviceptr)(uintptr_t)d2 + 2 * dp2, dp2, 0x7e6f, 5, 1, 0));
    CUDA_MEMCPY2D c2;
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = CU_MEMORYTYPE_HOST, c2.srcHost = src, c2.srcPitch = sp, c2.srcXInBytes = 1, c2.srcY = 1;
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE, c2.dstDevice = (CUdeviceptr)(uintptr_t)d2, c2.dstPitch = dp2, c2.dstY = 3;
    c2.WidthInBytes = 9, c2.Height = 2;
    EXPECT_EQ("cuMemcpy2DUnaligned (9 bytes x 2 rows from (1,1) to (0,3))", CUDA_SUCCESS, cuMemcpy2DUnaligned(&c2));
    OK("copy back", cudaMemcpy(all, d2, n2, cudaMemcpyDeviceToHost));
    memset(ref2, 0, n2);
    for (size_t y = 0; y < 2; y++)
        for (int i = 0; i < 3; i++) {
            uint32_t v = 0xa1b2c3d4u;
            memcpy(ref2 + y * dp2 + 4 * i, &v, 4);
        }
    for (int i = 0; i < 5; i++) {
        uint16_t v = 0x7e6f;
        memcpy(ref2 + 2 * dp2 + 2 * i, &v, 2);
    }
    for (size_t y = 0; y < 2; y++)
        memcpy(ref2 + (3 + y) * dp2, src + (1 + y) * sp + 1, 9);
    expect_bytes("32- and 16-bit 2D memsets, an unaligned 2D copy", ref2, all, n2);
    EXPECT_EQ("cuMemsetD2D32 on a misaligned address", CUDA_ERROR_INVALID_VALUE,
              cuMemsetD2D32((CUdeviceptr)(uintptr_t)d2 + 2, dp2, 0, 1, 1));
    c2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    EXPECT_EQ("an array side whose handle is no array", CUDA_ERROR_INVALID_HANDLE, cuMemcpy2D(&c2));

    /* errors */
    EXPECT_RT("a width beyond the pitch", cudaErrorInvalidPitchValue, cudaMemcpy2D(d, dp, src, w - 1, w, h, cudaMemcpyHostToDevice));
    EXPECT_RT("an unknown kind", cudaErrorInvalidMemcpyDirection, cudaMemcpy2D(d, dp, src, sp, w, h, (cudaMemcpyKind)9));
    EXPECT_RT("rows beyond the allocation", cudaErrorInvalidValue, cudaMemcpy2D(d, dp, src, sp, w, h + 40, cudaMemcpyHostToDevice));
    EXPECT_RT("host->device into host memory", cudaErrorInvalidValue, cudaMemcpy2D(out, bp, src, sp, w, h, cudaMemcpyHostToDevice));
    EXPECT_RT("memset2D width beyond the pitch", cudaErrorInvalidValue, cudaMemset2D(d, dp, 0, dp + 1, 2));
    EXPECT_RT("memset2D on host memory", cudaErrorInvalidValue, cudaMemset2D(out, bp, 0, 4, 2));
    EXPECT_RT("a pitch whose rows overflow the address space", cudaErrorInvalidValue,
              cudaMemcpy2D(d, SIZE_MAX / 2, src, sp, w, 3, cudaMemcpyHostToDevice));
    EXPECT_RT("memset2D rows that overflow", cudaErrorInvalidValue, cudaMemset2D(d, SIZE_MAX / 2, 0, 4, 3));
    cudaGetLastError();
    OK("zero height: nothing to do", cudaMemcpy2D(d, dp, src, sp, w, 0, cudaMemcpyHostToDevice));
    expect_driver_called("cuMemcpy2D_v2", "cuMemcpy2D_v2_ptds");
    expect_driver_called("cuMemcpy2DAsync_v2", "cuMemcpy2DAsync_v2_ptsz");
    expect_driver_called("cuMemsetD2D8Async", "cuMemsetD2D8Async_ptsz");
    free(all);
    free(ref2);
    cudaFreeHost(pin);
    cudaFree(d);
    cudaFree(d2);
    cudaStreamDestroy(s);
}

static void case_copy3d(void)
{
    const size_t W = 24, H = 5, D = 4;   /* the host box, bytes x rows x slices */
    unsigned char hsrc[W * H * D], hout[W * H * D], ref[W * H * D];
    for (size_t i = 0; i < sizeof hsrc; i++)
        hsrc[i] = (unsigned char)(i * 7 + 11);
    struct cudaPitchedPtr dp;
    struct cudaExtent ext = make_cudaExtent(W, H, D);
    OK("cudaMalloc3D", cudaMalloc3D(&dp, ext));
    EXPECT_EQ("pitch holds a row", 1, dp.pitch >= W);
    EXPECT_EQ("xsize", W, dp.xsize);
    EXPECT_EQ("ysize", H, dp.ysize);
    OK("cudaMemset3D (0x11)", cudaMemset3D(dp, 0x11, ext));
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(hsrc, W, W, H);
    p.dstPtr = dp;
    /* a sub-box: from host (2,1,1) to device (3,2,0), 10 bytes x 3 rows x 2 slices */
    p.srcPos = make_cudaPos(2, 1, 1);
    p.dstPos = make_cudaPos(3, 2, 0);
    p.extent = make_cudaExtent(10, 3, 2);
    p.kind = cudaMemcpyHostToDevice;
    OK("cudaMemcpy3D host->device sub-box", cudaMemcpy3D(&p));
    memset(&p, 0, sizeof p);
    p.srcPtr = dp;
    p.dstPtr = make_cudaPitchedPtr(hout, W, W, H);
    p.extent = ext;
    p.kind = cudaMemcpyDeviceToHost;
    memset(hout, 0, sizeof hout);
    OK("cudaMemcpy3D device->host whole box", cudaMemcpy3D(&p));
    memset(ref, 0x11, sizeof ref);
    for (size_t z = 0; z < 2; z++)
        for (size_t y = 0; y < 3; y++)
            memcpy(ref + (z + 0) * W * H + (y + 2) * W + 3, hsrc + (z + 1) * W * H + (y + 1) * W + 2, 10);
    expect_bytes("the sub-box landed at its position, memset3D around it", ref, hout, sizeof hout);

    cudaStream_t s;
    cudaStreamCreate(&s);
    OK("cudaMemset3DAsync (0x22)", cudaMemset3DAsync(dp, 0x22, make_cudaExtent(W, H, 1), s));
    memset(hout, 0, sizeof hout);
    OK("cudaMemcpy3DAsync device->host", cudaMemcpy3DAsync(&p, s));
    OK("sync", cudaStreamSynchronize(s));
    memset(ref, 0x22, W * H);
    expect_bytes("memset3DAsync of slice 0, stream-ordered before the copy", ref, hout, sizeof hout);

    int n = 0;
    cudaGetDeviceCount(&n);
    if (n > 1) {
        cudaSetDevice(1);
        struct cudaPitchedPtr dp1;
        OK("cudaMalloc3D on device 1", cudaMalloc3D(&dp1, ext));
        struct cudaMemcpy3DPeerParms q;
        memset(&q, 0, sizeof q);
        q.srcPtr = dp, q.srcDevice = 0, q.dstPtr = dp1, q.dstDevice = 1, q.extent = ext;
        OK("cudaMemcpy3DPeer 0 -> 1", cudaMemcpy3DPeer(&q));
        memset(&p, 0, sizeof p);
        p.srcPtr = dp1, p.dstPtr = make_cudaPitchedPtr(hout, W, W, H), p.extent = ext, p.kind = cudaMemcpyDeviceToHost;
        unsigned char before[sizeof hout];
        memcpy(before, hout, sizeof hout);
        memset(hout, 0, sizeof hout);
        OK("copy device 1's box back", cudaMemcpy3D(&p));
        expect_bytes("the peer copy equals the source box", before, hout, sizeof hout);
        q.dstDevice = n;
        EXPECT_RT("a peer copy to a device that does not exist", cudaErrorInvalidDevice, cudaMemcpy3DPeer(&q));
        cudaGetLastError();
        cudaFree(dp1.ptr);
        cudaSetDevice(0);
    }

    /* errors */
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(hsrc, W, W, H), p.dstPtr = dp, p.extent = ext, p.kind = cudaMemcpyHostToDevice;
    p.srcArray = (cudaArray_t)(uintptr_t)0x1000;
    EXPECT_RT("an array and a pointer on one side", cudaErrorInvalidValue, cudaMemcpy3D(&p));
    p.srcPtr.ptr = NULL;
    EXPECT_RT("a CUDA array handle that is no array", cudaErrorInvalidResourceHandle, cudaMemcpy3D(&p));
    p.srcArray = NULL, p.srcPtr = make_cudaPitchedPtr(hsrc, W, W, H);
    p.extent.depth = D + 3;
    EXPECT_RT("slices beyond the allocation", cudaErrorInvalidValue, cudaMemcpy3D(&p));
    p.extent.depth = D;
    p.kind = (cudaMemcpyKind)7;
    EXPECT_RT("an unknown kind", cudaErrorInvalidMemcpyDirection, cudaMemcpy3D(&p));
    EXPECT_RT("NULL parameters", cudaErrorInvalidValue, cudaMemcpy3D(NULL));
    p.kind = cudaMemcpyHostToDevice;
    p.srcPos = make_cudaPos(W - 4, 0, 0);
    p.extent = make_cudaExtent(8, 2, 1);
    EXPECT_RT("a row past its pitch", cudaErrorInvalidPitchValue, cudaMemcpy3D(&p));
    cudaGetLastError();
    expect_driver_called("cuMemcpy3D_v2", "cuMemcpy3D_v2_ptds");
    expect_driver_called("cuMemcpy3DAsync_v2", "cuMemcpy3DAsync_v2_ptsz");
    expect_driver_called("cuMemsetD2D8_v2", "cuMemsetD2D8_v2_ptds");
    cudaFree(dp.ptr);
    cudaStreamDestroy(s);
}

static void case_stream(void)
{
    cudaStream_t a, b;
    OK("cudaStreamCreateWithPriority", cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, -1));
    OK("cudaStreamCreate", cudaStreamCreate(&b));
    cudaStreamAttrValue v, g;
    memset(&v, 0, sizeof v);
    char *base = NULL;
    cudaMalloc((void **)&base, 1 << 20);
    v.accessPolicyWindow.base_ptr = base;
    v.accessPolicyWindow.num_bytes = 1 << 20;
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    OK("set the access policy window", cudaStreamSetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &v));
    memset(&g, 0, sizeof g);
    OK("get it", cudaStreamGetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &g));
    EXPECT_EQ("window base kept", (uintptr_t)base, (uintptr_t)g.accessPolicyWindow.base_ptr);
    EXPECT_EQ("window size kept", 1 << 20, g.accessPolicyWindow.num_bytes);
    EXPECT_EQ("hit ratio kept (x1000)", 600, (int)(g.accessPolicyWindow.hitRatio * 1000 + 0.5f));
    EXPECT_EQ("hit property kept", cudaAccessPropertyPersisting, g.accessPolicyWindow.hitProp);
    OK("priority attribute", cudaStreamGetAttribute(a, cudaStreamAttributePriority, &g));
    EXPECT_EQ("= the priority it was created with", -1, g.priority);
    OK("sync policy attribute", cudaStreamGetAttribute(b, cudaStreamAttributeSynchronizationPolicy, &g));
    EXPECT_EQ("auto by default", cudaSyncPolicyAuto, g.syncPolicy);
    v.syncPolicy = cudaSyncPolicyBlockingSync;
    OK("set the sync policy", cudaStreamSetAttribute(a, cudaStreamAttributeSynchronizationPolicy, &v));
    OK("cudaStreamCopyAttributes a -> b", cudaStreamCopyAttributes(b, a));
    OK("b's window", cudaStreamGetAttribute(b, cudaStreamAttributeAccessPolicyWindow, &g));
    EXPECT_EQ("copied window", (uintptr_t)base, (uintptr_t)g.accessPolicyWindow.base_ptr);
    OK("b's sync policy", cudaStreamGetAttribute(b, cudaStreamAttributeSynchronizationPolicy, &g));
    EXPECT_EQ("copied sync policy", cudaSyncPolicyBlockingSync, g.syncPolicy);
    int prio = 0;
    OK("cudaStreamGetPriority(b)", cudaStreamGetPriority(b, &prio));
    EXPECT_EQ("copied priority", -1, prio);
    v.accessPolicyWindow.hitRatio = 2.0f;
    EXPECT_RT("a hit ratio above 1", cudaErrorInvalidValue, cudaStreamSetAttribute(a, cudaStreamAttributeAccessPolicyWindow, &v));
    EXPECT_RT("not a stream attribute", cudaErrorInvalidValue, cudaStreamSetAttribute(a, (cudaStreamAttrID)2, &v));
    EXPECT_RT("a NULL value", cudaErrorInvalidValue, cudaStreamGetAttribute(a, cudaStreamAttributePriority, NULL));
    cudaGetLastError();
    OK("the default stream's window", cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &g));
    int dev = -1;
    OK("cudaStreamGetDevice", cudaStreamGetDevice(a, &dev));
    EXPECT_EQ("the stream's device", 0, dev);
    unsigned long long ia = 0, ib = 0;
    OK("cudaStreamGetId(a)", cudaStreamGetId(a, &ia));
    OK("cudaStreamGetId(b)", cudaStreamGetId(b, &ib));
    EXPECT_EQ("two streams, two ids", 1, ia != ib);
    int n = 0;
    cudaGetDeviceCount(&n);
    if (n > 1) {
        cudaSetDevice(1);
        cudaStream_t c;
        cudaStreamCreate(&c);
        OK("cudaStreamGetDevice (device 1)", cudaStreamGetDevice(c, &dev));
        EXPECT_EQ("a stream made on device 1", 1, dev);
        cudaStreamDestroy(c);
        cudaSetDevice(0);
    }
    expect_driver_called("cuStreamSetAttribute", "cuStreamSetAttribute_ptsz");
    expect_driver_called("cuStreamGetDevice", "cuStreamGetDevice_ptsz");
    cudaFree(base);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
}

__global__ void rt_calls_kernel(int *p, double d, char c) { if (p) p[0] = (int)d + c; }

static void case_device(void)
{
    enum cudaFuncCache fc = cudaFuncCachePreferShared;
    OK("cudaDeviceGetCacheConfig", cudaDeviceGetCacheConfig(&fc));
    EXPECT_EQ("no preference at first", cudaFuncCachePreferNone, fc);
    OK("cudaDeviceSetCacheConfig(L1)", cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
    OK("cudaDeviceGetCacheConfig", cudaDeviceGetCacheConfig(&fc));
    EXPECT_EQ("the preference is kept", cudaFuncCachePreferL1, fc);
    EXPECT_RT("an unknown cache preference", cudaErrorInvalidValue, cudaDeviceSetCacheConfig((cudaFuncCache)9));
    cudaGetLastError();
    enum cudaSharedMemConfig sc = cudaSharedMemBankSizeEightByte;
    OK("cudaDeviceGetSharedMemConfig", cudaDeviceGetSharedMemConfig(&sc));
    EXPECT_EQ("four-byte banks by default", cudaSharedMemBankSizeFourByte, sc);
    OK("cudaDeviceSetSharedMemConfig(8)", cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    OK("cudaDeviceGetSharedMemConfig", cudaDeviceGetSharedMemConfig(&sc));
    EXPECT_EQ("eight-byte banks kept", cudaSharedMemBankSizeEightByte, sc);
    OK("cudaFuncSetSharedMemConfig", cudaFuncSetSharedMemConfig((const void *)rt_calls_kernel, cudaSharedMemBankSizeDefault));
    EXPECT_RT("cudaFuncSetSharedMemConfig(not a kernel)", cudaErrorInvalidDeviceFunction,
              cudaFuncSetSharedMemConfig((const void *)case_device, cudaSharedMemBankSizeDefault));
    cudaGetLastError();
    const char *name = NULL;
    OK("cudaFuncGetName", cudaFuncGetName(&name, (const void *)rt_calls_kernel));
    EXPECT_EQ("the kernel's mangled name", 0, name ? strcmp(name, "_Z15rt_calls_kernelPidc") : -1);
    size_t off = 99, size = 99;
    OK("cudaFuncGetParamInfo(1)", cudaFuncGetParamInfo((const void *)rt_calls_kernel, 1, &off, &size));
    EXPECT_EQ("the double's offset", 8, off);
    EXPECT_EQ("the double's size", 8, size);
    EXPECT_RT("a parameter beyond the last", cudaErrorInvalidValue, cudaFuncGetParamInfo((const void *)rt_calls_kernel, 3, &off, &size));
    cudaGetLastError();
    OK("cudaCtxResetPersistingL2Cache", cudaCtxResetPersistingL2Cache());

    /* peers */
    int n = 0;
    cudaGetDeviceCount(&n);
    EXPECT_RT("peer access to itself", cudaErrorInvalidDevice, cudaDeviceEnablePeerAccess(0, 0));
    EXPECT_RT("peer access to a device that does not exist", cudaErrorInvalidDevice, cudaDeviceEnablePeerAccess(n, 0));
    cudaGetLastError();
    int *a = NULL;
    cudaMalloc(&a, 256);
    int host[64], back[64];
    for (int i = 0; i < 64; i++)
        host[i] = i * i - 5;
    cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);
    if (n > 1) {
        EXPECT_RT("flags must be 0", cudaErrorInvalidValue, cudaDeviceEnablePeerAccess(1, 1));
        EXPECT_RT("disable before enable", cudaErrorPeerAccessNotEnabled, cudaDeviceDisablePeerAccess(1));
        cudaGetLastError();
        OK("cudaDeviceEnablePeerAccess(1)", cudaDeviceEnablePeerAccess(1, 0));
        EXPECT_RT("enabled twice", cudaErrorPeerAccessAlreadyEnabled, cudaDeviceEnablePeerAccess(1, 0));
        cudaGetLastError();
        OK("cudaDeviceDisablePeerAccess(1)", cudaDeviceDisablePeerAccess(1));
        cudaSetDevice(1);
        int *b = NULL;
        cudaMalloc(&b, 256);
        cudaSetDevice(0);
        OK("cudaMemcpyPeer 0 -> 1", cudaMemcpyPeer(b, 1, a, 0, sizeof host));
        memset(back, 0, sizeof back);
        cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost);
        expect_bytes("device 1 holds device 0's bytes", (unsigned char *)host, (unsigned char *)back, sizeof host);
        cudaStream_t s;
        cudaStreamCreate(&s);
        cudaMemset(a, 0, 256);
        cudaStreamSynchronize(0);   /* the per-thread default stream does not order against s */
        OK("cudaMemcpyPeerAsync 1 -> 0", cudaMemcpyPeerAsync(a, 0, b, 1, sizeof host, s));
        cudaStreamSynchronize(s);
        memset(back, 0, sizeof back);
        cudaMemcpy(back, a, sizeof back, cudaMemcpyDeviceToHost);
        expect_bytes("and back", (unsigned char *)host, (unsigned char *)back, sizeof host);
        EXPECT_RT("cudaMemcpyPeer to a device that does not exist", cudaErrorInvalidDevice, cudaMemcpyPeer(b, n, a, 0, 4));
        cudaGetLastError();
        cudaStreamDestroy(s);
        cudaFree(b);
    }

    /* IPC: as a GPU without it */
    int ipc = -1;
    OK("cudaDevAttrIpcEventSupport", cudaDeviceGetAttribute(&ipc, cudaDevAttrIpcEventSupport, 0));
    EXPECT_EQ("no IPC events", 0, ipc);
    cudaIpcMemHandle_t mh;
    EXPECT_RT("cudaIpcGetMemHandle", cudaErrorNotSupported, cudaIpcGetMemHandle(&mh, a));
    EXPECT_RT("cudaIpcGetMemHandle(NULL handle)", cudaErrorInvalidValue, cudaIpcGetMemHandle(NULL, a));
    void *op = NULL;
    memset(&mh, 0, sizeof mh);
    EXPECT_RT("cudaIpcOpenMemHandle", cudaErrorNotSupported, cudaIpcOpenMemHandle(&op, mh, cudaIpcMemLazyEnablePeerAccess));
    cudaEvent_t ev;
    cudaEventCreateWithFlags(&ev, cudaEventDisableTiming | cudaEventInterprocess);
    cudaIpcEventHandle_t eh;
    EXPECT_RT("cudaIpcGetEventHandle", cudaErrorNotSupported, cudaIpcGetEventHandle(&eh, ev));
    cudaGetLastError();
    cudaEventDestroy(ev);
    cudaFree(a);
}

static int range_int(cudaMemRangeAttribute a, const void *p, size_t n)
{
    int v = 12345;
    cudaError_t e = cudaMemRangeGetAttribute(&v, sizeof v, a, p, n);
    if (e != cudaSuccess) {
        printf("FAIL %s: cudaMemRangeGetAttribute(%d): %s\n", rt_cur, (int)a, cudaGetErrorName(e));
        rt_fails++;
    }
    return v;
}

static void case_managed(void)
{
    const size_t n = 4 * 4096;
    char *m = NULL;
    OK("cudaMallocManaged 4 pages", cudaMallocManaged(&m, n, cudaMemAttachGlobal));
    EXPECT_EQ("not read-mostly at first", 0, range_int(cudaMemRangeAttributeReadMostly, m, n));
    EXPECT_EQ("no preferred location at first", cudaInvalidDeviceId, range_int(cudaMemRangeAttributePreferredLocation, m, n));
    EXPECT_EQ("never prefetched", cudaInvalidDeviceId, range_int(cudaMemRangeAttributeLastPrefetchLocation, m, n));
    struct cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0}, host = {cudaMemLocationTypeHost, 0};
    OK("read-mostly on pages 0-1", cudaMemAdvise(m, 2 * 4096, cudaMemAdviseSetReadMostly, dev0));
    EXPECT_EQ("pages 0-1 read-mostly", 1, range_int(cudaMemRangeAttributeReadMostly, m, 2 * 4096));
    EXPECT_EQ("not all 4 pages", 0, range_int(cudaMemRangeAttributeReadMostly, m, n));
    OK("preferred location device 0 (whole)", cudaMemAdvise(m, n, cudaMemAdviseSetPreferredLocation, dev0));
    EXPECT_EQ("preferred device 0", 0, range_int(cudaMemRangeAttributePreferredLocation, m, n));
    OK("preferred location host on page 3", cudaMemAdvise(m + 3 * 4096, 4096, cudaMemAdviseSetPreferredLocation, host));
    EXPECT_EQ("page 3 prefers the CPU", cudaCpuDeviceId, range_int(cudaMemRangeAttributePreferredLocation, m + 3 * 4096, 1));
    EXPECT_EQ("mixed preferences: invalid", cudaInvalidDeviceId, range_int(cudaMemRangeAttributePreferredLocation, m, n));
    EXPECT_EQ("location type of page 3", cudaMemLocationTypeHost,
              range_int(cudaMemRangeAttributePreferredLocationType, m + 3 * 4096, 4096));
    OK("accessed by the host (whole)", cudaMemAdvise(m, n, cudaMemAdviseSetAccessedBy, host));
    OK("accessed by device 0 (page 0)", cudaMemAdvise(m, 4096, cudaMemAdviseSetAccessedBy, dev0));
    int by[3] = {7, 7, 7};
    OK("accessed-by of page 0", cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, m, 4096));
    EXPECT_EQ("page 0: the CPU", cudaCpuDeviceId, by[0]);
    EXPECT_EQ("page 0: device 0", 0, by[1]);
    EXPECT_EQ("page 0: the rest invalid", cudaInvalidDeviceId, by[2]);
    OK("accessed-by of all pages", cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, m, n));
    EXPECT_EQ("all pages: the CPU only", cudaCpuDeviceId, by[0]);
    EXPECT_EQ("all pages: device 0 not on every page", cudaInvalidDeviceId, by[1]);
    OK("unset accessed-by host", cudaMemAdvise(m, n, cudaMemAdviseUnsetAccessedBy, host));
    OK("unset read-mostly", cudaMemAdvise(m, n, cudaMemAdviseUnsetReadMostly, dev0));
    EXPECT_EQ("read-mostly cleared", 0, range_int(cudaMemRangeAttributeReadMostly, m, 4096));
    cudaStream_t s;
    cudaStreamCreate(&s);
    OK("prefetch to device 0", cudaMemPrefetchAsync(m, n, dev0, 0, s));
    EXPECT_EQ("last prefetch: device 0", 0, range_int(cudaMemRangeAttributeLastPrefetchLocation, m, n));
    OK("prefetch page 1 to the host", cudaMemPrefetchAsync(m + 4096, 4096, host, 0, s));
    EXPECT_EQ("mixed prefetches: invalid", cudaInvalidDeviceId, range_int(cudaMemRangeAttributeLastPrefetchLocation, m, n));
    EXPECT_EQ("page 1: the CPU", cudaCpuDeviceId, range_int(cudaMemRangeAttributeLastPrefetchLocation, m + 4096, 4096));
    /* several at once */
    int rm = -1, pref = -1;
    void *data[2] = {&rm, &pref};
    size_t sizes[2] = {4, 4};
    cudaMemRangeAttribute attrs[2] = {cudaMemRangeAttributeReadMostly, cudaMemRangeAttributePreferredLocation};
    OK("cudaMemRangeGetAttributes", cudaMemRangeGetAttributes(data, sizes, attrs, 2, m, 4096));
    EXPECT_EQ("read-mostly of page 0", 0, rm);
    EXPECT_EQ("preferred location of page 0", 0, pref);
    /* errors */
    int v;
    EXPECT_RT("a size that is not 4", cudaErrorInvalidValue, cudaMemRangeGetAttribute(&v, 8, cudaMemRangeAttributeReadMostly, m, n));
    EXPECT_RT("a range past the allocation", cudaErrorInvalidValue,
              cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, m, n + 8192));
    char *d = NULL;
    cudaMalloc(&d, 4096);
    EXPECT_RT("device memory", cudaErrorInvalidValue, cudaMemRangeGetAttribute(&v, 4, cudaMemRangeAttributeReadMostly, d, 64));
    EXPECT_RT("advice on device memory", cudaErrorInvalidValue, cudaMemAdvise(d, 64, cudaMemAdviseSetReadMostly, dev0));
    EXPECT_RT("an unknown advice", cudaErrorInvalidValue, cudaMemAdvise(m, n, (cudaMemoryAdvise)42, dev0));
    struct cudaMemLocation nodev = {cudaMemLocationTypeDevice, 999};
    EXPECT_RT("a device that does not exist", cudaErrorInvalidDevice, cudaMemPrefetchAsync(m, n, nodev, 0, s));
    EXPECT_RT("prefetch flags", cudaErrorInvalidValue, cudaMemPrefetchAsync(m, n, dev0, 1, s));
    cudaGetLastError();
    /* a freed allocation forgets its advice: a new one at any address starts clean */
    cudaFree(m);
    char *m2 = NULL;
    OK("cudaMallocManaged again", cudaMallocManaged(&m2, n, cudaMemAttachGlobal));
    EXPECT_EQ("fresh memory has no preferred location", cudaInvalidDeviceId,
              range_int(cudaMemRangeAttributePreferredLocation, m2, n));
    expect_driver_called("cuMemPrefetchAsync_v2", "cuMemPrefetchAsync_v2_ptsz");
    cudaFree(m2);
    cudaFree(d);
    cudaStreamDestroy(s);
}

__device__ int rt_calls_sym[16];

static volatile int hostfn_release;
static void CUDART_CB hostfn_wait(void *arg)
{
    while (!__atomic_load_n(&hostfn_release, __ATOMIC_ACQUIRE))
        ;
    *(int *)arg = 42;
}

static void case_basics(void)
{
    /* device choice */
    struct cudaDeviceProp want;
    memset(&want, 0, sizeof want);
    want.major = 8;
    int dev = -1;
    OK("cudaChooseDevice", cudaChooseDevice(&dev, &want));
    EXPECT_EQ("a device that exists", 1, dev >= 0);
    EXPECT_RT("cudaChooseDevice(NULL prop)", cudaErrorInvalidValue, cudaChooseDevice(&dev, NULL));
    cudaGetLastError();
    int least = 1, greatest = 1;
    OK("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT_EQ("least priority", 0, least);
    EXPECT_EQ("greatest priority", -5, greatest);

    /* host memory registration */
    static char page[3 * 4096] __attribute__((aligned(4096)));
    OK("cudaHostRegister", cudaHostRegister(page, sizeof page, cudaHostRegisterMapped));
    EXPECT_RT("registered twice", cudaErrorHostMemoryAlreadyRegistered, cudaHostRegister(page, sizeof page, 0));
    cudaGetLastError();
    void *dp = NULL;
    OK("cudaHostGetDevicePointer", cudaHostGetDevicePointer(&dp, page, 0));
    EXPECT_EQ("the device pointer is the host address (unified addressing)", (uintptr_t)page, (uintptr_t)dp);
    struct cudaPointerAttributes pa;
    OK("cudaPointerGetAttributes(registered)", cudaPointerGetAttributes(&pa, page));
    EXPECT_EQ("registered memory is host memory", cudaMemoryTypeHost, pa.type);
    OK("cudaHostUnregister", cudaHostUnregister(page));
    EXPECT_RT("unregistered twice", cudaErrorHostMemoryNotRegistered, cudaHostUnregister(page));
    cudaGetLastError();
    void *ha = NULL;
    unsigned fl = 0;
    OK("cudaHostAlloc(mapped | portable)", cudaHostAlloc(&ha, 4096, cudaHostAllocMapped | cudaHostAllocPortable));
    OK("cudaHostGetFlags", cudaHostGetFlags(&fl, ha));
    EXPECT_EQ("the flags it was allocated with", cudaHostAllocMapped | cudaHostAllocPortable,
              fl & (cudaHostAllocMapped | cudaHostAllocPortable));
    cudaFreeHost(ha);

    /* streams: flags and priority, queries while a host function holds the stream */
    cudaStream_t s;
    OK("cudaStreamCreateWithPriority(non-blocking, -2)", cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -2));
    unsigned sf = 0;
    int prio = 0;
    OK("cudaStreamGetFlags", cudaStreamGetFlags(s, &sf));
    EXPECT_EQ("non-blocking", cudaStreamNonBlocking, sf);
    OK("cudaStreamGetPriority", cudaStreamGetPriority(s, &prio));
    EXPECT_EQ("priority -2", -2, prio);
    cudaEvent_t ev;
    cudaEventCreate(&ev);
    OK("cudaEventQuery of a never-recorded event", cudaEventQuery(ev));
    int out = 0;
    __atomic_store_n(&hostfn_release, 0, __ATOMIC_RELEASE);
    OK("cudaLaunchHostFunc (waits for the release)", cudaLaunchHostFunc(s, hostfn_wait, &out));
    OK("cudaEventRecord after it", cudaEventRecord(ev, s));
    EXPECT_RT("cudaStreamQuery while it waits", cudaErrorNotReady, cudaStreamQuery(s));
    EXPECT_RT("cudaEventQuery while it waits", cudaErrorNotReady, cudaEventQuery(ev));
    EXPECT_RT("not ready is not an error", cudaSuccess, cudaGetLastError());
    __atomic_store_n(&hostfn_release, 1, __ATOMIC_RELEASE);
    OK("cudaEventSynchronize", cudaEventSynchronize(ev));
    EXPECT_EQ("the host function ran", 42, out);
    OK("cudaStreamQuery when done", cudaStreamQuery(s));
    OK("cudaEventQuery when done", cudaEventQuery(ev));

    /* symbols, asynchronously */
    int host[16], back[16];
    for (int i = 0; i < 16; i++)
        host[i] = 1000 + 3 * i;
    OK("cudaMemcpyToSymbolAsync (offset 8)", cudaMemcpyToSymbolAsync(rt_calls_sym, host, 8 * sizeof(int), 8 * sizeof(int),
                                                                   cudaMemcpyHostToDevice, s));
    OK("cudaMemcpyFromSymbolAsync (offset 8)", cudaMemcpyFromSymbolAsync(back, rt_calls_sym, 8 * sizeof(int), 8 * sizeof(int),
                                                                       cudaMemcpyDeviceToHost, s));
    OK("sync", cudaStreamSynchronize(s));
    expect_bytes("the symbol's second half round-trips", (unsigned char *)host, (unsigned char *)back, 8 * sizeof(int));
    EXPECT_RT("past the symbol's end", cudaErrorInvalidValue,
              cudaMemcpyToSymbolAsync(rt_calls_sym, host, 16 * sizeof(int), 4, cudaMemcpyHostToDevice, s));
    cudaGetLastError();
    OK("cudaFuncSetCacheConfig", cudaFuncSetCacheConfig((const void *)rt_calls_kernel, cudaFuncCachePreferL1));
    EXPECT_RT("cudaFuncSetCacheConfig(not a kernel)", cudaErrorInvalidDeviceFunction,
              cudaFuncSetCacheConfig((const void *)case_basics, cudaFuncCachePreferL1));
    cudaGetLastError();
    cudaEventDestroy(ev);
    cudaStreamDestroy(s);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"pool", case_pool}, {"attach", case_attach}, {"p2p", case_p2p},
                   {"copy2d", case_copy2d}, {"copy3d", case_copy3d}, {"stream", case_stream},
                   {"device", case_device},
                   {"managed", case_managed},
                   {"basics", case_basics}};
    if (argc != 2) {
        fprintf(stderr, "usage: rt_calls CASE\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            rt_cur = cases[i].name;
            cases[i].fn();
            return rt_fails ? 1 : 0;
        }
    fprintf(stderr, "rt_calls: unknown case '%s'\n", argv[1]);
    return 2;
}
