/* test_hc_memory.c — proves hostcuda's memory model: 256-byte aligned first-fit allocations that
 * coalesce and show in cuMemGetInfo, out-of-memory and bad-input error codes, address ranges and
 * pointer attributes, host/managed/registered memory, memcpy/memset in every direction with range
 * checks, peer copies, stream-ordered allocation, and strict mode: host code that dereferences a
 * device pointer is killed by SIGSEGV (and is not with HOSTCUDA_STRICT=0).
 */
#include "test_hc_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>

static void test_alloc_free_info(void **state)
{
    (void)state;
    size_t free0, total, free1, free2;
    CU_OK(cuMemGetInfo(&free0, &total));
    assert_true(free0 <= total);
    CUdeviceptr a, b, c;
    CU_OK(cuMemAlloc(&a, 1 << 20));
    assert_int_equal(a % 256, 0);
    CU_OK(cuMemGetInfo(&free1, &total));
    if (free0 - free1 != (1 << 20))
        fail_msg("cuMemGetInfo free went %zu -> %zu after a 1 MiB allocation", free0, free1);
    CU_OK(cuMemAlloc(&b, 100));   /* rounded to 256 */
    CU_OK(cuMemAlloc(&c, 1000));
    assert_int_equal(b % 256, 0);
    assert_int_equal(c - b, 256);
    CU_OK(cuMemGetInfo(&free2, &total));
    assert_int_equal(free1 - free2, 256 + 1024);
    /* first fit with coalescing: freeing a, b, c gives one hole that a 2 MiB request reuses */
    CU_OK(cuMemFree(b));
    CU_EXPECT(cuMemFree(b), CUDA_ERROR_INVALID_VALUE);           /* double free */
    CU_EXPECT(cuMemFree(c + 256), CUDA_ERROR_INVALID_VALUE);     /* not an allocation start */
    CU_OK(cuMemFree(a));
    CU_OK(cuMemFree(c));
    CU_OK(cuMemGetInfo(&free2, &total));
    assert_int_equal(free2, free0);
    CUdeviceptr big;
    CU_OK(cuMemAlloc(&big, (1 << 20) + 1280));
    assert_int_equal(big, a);
    CU_OK(cuMemFree(big));
    CU_OK(cuMemFree(0));

    CU_EXPECT(cuMemAlloc(&a, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAlloc(&a, total + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CU_EXPECT(cuMemAlloc(&a, (size_t)-1), CUDA_ERROR_OUT_OF_MEMORY);
    CU_EXPECT(cuMemGetInfo(NULL, &total), CUDA_ERROR_INVALID_VALUE);

    /* fill the arena exactly, then one more byte fails */
    CUdeviceptr all;
    CU_OK(cuMemGetInfo(&free0, &total));
    CU_OK(cuMemAlloc(&all, free0));
    CU_EXPECT(cuMemAlloc(&a, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CU_OK(cuMemGetInfo(&free1, &total));
    assert_int_equal(free1, 0);
    CU_OK(cuMemFree(all));

    /* no current context */
    CUcontext cur;
    CU_OK(cuCtxPopCurrent(&cur));
    CU_EXPECT(cuMemAlloc(&a, 16), CUDA_ERROR_INVALID_CONTEXT);
    CU_EXPECT(cuMemGetInfo(&free0, &total), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuCtxPushCurrent(cur));
}

static void test_pitch(void **state)
{
    (void)state;
    CUdeviceptr p;
    size_t pitch = 0;
    CU_OK(cuMemAllocPitch(&p, &pitch, 1000, 10, 4));
    assert_true(pitch >= 1000 && pitch % 512 == 0);
    size_t base_size = 0;
    CU_OK(cuMemGetAddressRange(NULL, &base_size, p));
    assert_true(base_size >= pitch * 10);
    CU_OK(cuMemFree(p));
    CU_EXPECT(cuMemAllocPitch(&p, &pitch, 1000, 10, 3), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocPitch(&p, &pitch, 0, 10, 4), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocPitch(&p, NULL, 10, 10, 4), CUDA_ERROR_INVALID_VALUE);
}

static void test_ranges_and_attributes(void **state)
{
    CUcontext ctx = *state;
    CUdeviceptr p, base;
    size_t size;
    CU_OK(cuMemAlloc(&p, 5000));
    CU_OK(cuMemGetAddressRange(&base, &size, p + 4000));
    assert_int_equal(base, p);
    assert_int_equal(size, 5120);
    CU_OK(cuMemGetAddressRange(&base, NULL, p + 1));
    CU_EXPECT(cuMemGetAddressRange(&base, &size, p + 6000), CUDA_ERROR_NOT_FOUND);
    int local = 0;
    CU_EXPECT(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)&local), CUDA_ERROR_NOT_FOUND);

    CUcontext pc = NULL;
    unsigned int mt = 0;
    int ord = -1, managed = -1;
    CUdeviceptr start = 0, dp = 0;
    size_t rs = 0;
    CU_OK(cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, p + 10));
    assert_ptr_equal(pc, ctx);
    CU_OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
    assert_int_equal(mt, CU_MEMORYTYPE_DEVICE);
    CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    assert_int_equal(ord, 0);
    CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 100));
    assert_int_equal(start, p);
    CU_OK(cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 100));
    assert_int_equal(rs, 5120);
    CU_OK(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p + 100));
    assert_int_equal(dp, p + 100);
    CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    assert_int_equal(managed, 0);
    void *hp;
    CU_EXPECT(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&local),
              CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuPointerGetAttribute(&mt, (CUpointer_attribute)9999, p), CUDA_ERROR_INVALID_VALUE);

    CUdeviceptr m;
    CU_OK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
    ((volatile int *)(uintptr_t)m)[3] = 7;   /* managed memory is host-accessible */
    CU_OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m + 8));
    assert_int_equal(managed, 1);
    CU_OK(cuMemGetAddressRange(&base, &size, m + 8));
    assert_int_equal(base, m);
    CU_EXPECT(cuMemAllocManaged(&m, 16, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocManaged(&m, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(base));
    CU_OK(cuMemFree(p));
    assert_null(hostcuda_host_view((CUdeviceptr)(uintptr_t)&local));
}

static void test_host_memory(void **state)
{
    (void)state;
    void *h = NULL;
    CU_OK(cuMemAllocHost(&h, 1000));
    memset(h, 1, 1000);
    unsigned int mt = 0;
    CU_OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h));
    assert_int_equal(mt, CU_MEMORYTYPE_HOST);
    CUdeviceptr d;
    CU_OK(cuMemHostGetDevicePointer(&d, h, 0));
    assert_int_equal(d, (CUdeviceptr)(uintptr_t)h);
    CU_EXPECT(cuMemHostGetDevicePointer(&d, h, 1), CUDA_ERROR_INVALID_VALUE);
    int stack_var;
    CU_EXPECT(cuMemHostGetDevicePointer(&d, &stack_var, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemFreeHost(&stack_var), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFreeHost(h));
    CU_EXPECT(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);

    CU_OK(cuMemHostAlloc(&h, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    unsigned int fl = 0;
    CU_OK(cuMemHostGetFlags(&fl, h));
    assert_int_equal(fl, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    CU_OK(cuMemFreeHost(h));
    CU_EXPECT(cuMemHostAlloc(&h, 64, 0x80), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocHost(NULL, 64), CUDA_ERROR_INVALID_VALUE);

    char *buf = malloc(8192);
    CU_OK(cuMemHostRegister(buf, 8192, 0));
    CU_EXPECT(cuMemHostRegister(buf + 100, 10, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CU_OK(cuMemHostGetDevicePointer(&d, buf + 16, 0));
    assert_int_equal(d, (CUdeviceptr)(uintptr_t)(buf + 16));
    CU_OK(cuMemHostUnregister(buf));
    CU_EXPECT(cuMemHostUnregister(buf), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CU_EXPECT(cuMemHostRegister(buf, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemHostRegister(NULL, 10, 0), CUDA_ERROR_INVALID_VALUE);
    free(buf);
}

static void test_copies(void **state)
{
    (void)state;
    enum { N = 1000 };
    int src[N], dst[N];
    for (int i = 0; i < N; i++)
        src[i] = i * 3;
    CUdeviceptr a, b;
    CU_OK(cuMemAlloc(&a, sizeof src));
    CU_OK(cuMemAlloc(&b, sizeof src));
    CU_OK(cuMemcpyHtoD(a, src, sizeof src));
    CU_OK(cuMemcpyDtoD(b, a, sizeof src));
    memset(dst, 0, sizeof dst);
    CU_OK(cuMemcpyDtoH(dst, b, sizeof dst));
    assert_memory_equal(src, dst, sizeof src);
    /* the private view shows the same bytes */
    const int *view = hostcuda_host_view(b);
    assert_non_null(view);
    assert_int_equal(view[N - 1], (N - 1) * 3);
    /* unified cuMemcpy, in all directions */
    memset(dst, 0, sizeof dst);
    CU_OK(cuMemcpy(a, (CUdeviceptr)(uintptr_t)src, 40));
    CU_OK(cuMemcpy((CUdeviceptr)(uintptr_t)dst, a, 40));
    assert_memory_equal(src, dst, 40);
    /* range and direction checks */
    CU_EXPECT(cuMemcpyHtoD(a, src, sizeof src + 4096), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemcpyDtoH(dst, a + 3000, 2000), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, 16), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, 16), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemcpyHtoD(a, NULL, 16), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemcpyDtoH(NULL, a, 16), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemcpyHtoD(a, src, 0));

    /* memset D8/D16/D32, sync and async */
    CU_OK(cuMemsetD8(a, 0xab, 16));
    CU_OK(cuMemsetD16(a + 16, 0x1234, 8));
    CU_OK(cuMemsetD32(a + 32, 0xdeadbeef, 4));
    unsigned char bytes[48];
    CU_OK(cuMemcpyDtoH(bytes, a, 48));
    assert_int_equal(bytes[15], 0xab);
    uint16_t h16;
    memcpy(&h16, bytes + 30, 2);
    assert_int_equal(h16, 0x1234);
    uint32_t w32;
    memcpy(&w32, bytes + 44, 4);
    assert_int_equal(w32, 0xdeadbeef);
    CU_EXPECT(cuMemsetD16(a + 1, 0, 4), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemsetD32(a + 2, 0, 4), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemsetD32(a, 0, 2 * N), CUDA_ERROR_INVALID_VALUE);   /* past the 4096-byte block */
    CU_EXPECT(cuMemsetD8((CUdeviceptr)(uintptr_t)dst, 0, 4), CUDA_ERROR_INVALID_VALUE);

    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuMemsetD32Async(a, 7, N, s));
    CU_OK(cuMemsetD16Async(b, 0x0101, 2, s));
    CU_OK(cuMemsetD8Async(b + 4, 2, 4, s));
    CU_OK(cuMemcpyDtoDAsync(b + 8, a, 4, s));
    CU_OK(cuMemcpyHtoDAsync(a + 4, src + 1, 4, s));
    CU_OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, b, 12, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(dst[0], 0x01010101);
    assert_int_equal(dst[1], 0x02020202);
    assert_int_equal(dst[2], 7);
    CU_OK(cuMemcpyDtoHAsync(dst, a, 8, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(dst[1], 3);
    CU_EXPECT(cuMemcpyHtoDAsync(a, src, 8, (CUstream)0xdead0), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuMemFree(a));
    CU_OK(cuMemFree(b));
}

#define PT(name, args) CUresult(*name##_pt) args = (CUresult(*) args)per_thread(#name)
static void *per_thread(const char *base)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (cuGetProcAddress(base, &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) != CUDA_SUCCESS)
        fail_msg("no per-thread variant of %s (status %d)", base, (int)st);
    return fn;
}

/* the _ptds/_ptsz twins work like the legacy ones, on the calling thread's default stream,
 * and each counts on its own */
static void test_per_thread_variants(void **state)
{
    (void)state;
    PT(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t));
    PT(cuMemcpyDtoH, (void *, CUdeviceptr, size_t));
    PT(cuMemcpyDtoD, (CUdeviceptr, CUdeviceptr, size_t));
    PT(cuMemcpyHtoDAsync, (CUdeviceptr, const void *, size_t, CUstream));
    PT(cuMemcpyDtoHAsync, (void *, CUdeviceptr, size_t, CUstream));
    PT(cuMemcpyDtoDAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream));
    PT(cuMemcpy, (CUdeviceptr, CUdeviceptr, size_t));
    PT(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream));
    PT(cuMemsetD8, (CUdeviceptr, unsigned char, size_t));
    PT(cuMemsetD16, (CUdeviceptr, unsigned short, size_t));
    PT(cuMemsetD32, (CUdeviceptr, unsigned int, size_t));
    PT(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream));
    PT(cuMemsetD16Async, (CUdeviceptr, unsigned short, size_t, CUstream));
    PT(cuMemsetD32Async, (CUdeviceptr, unsigned int, size_t, CUstream));
    PT(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream));
    PT(cuMemFreeAsync, (CUdeviceptr, CUstream));
    PT(cuStreamSynchronize, (CUstream));
    hostcuda_reset_call_counts();
    CUdeviceptr a, b;
    CU_OK(cuMemAllocAsync_pt(&a, 256, NULL));
    CU_OK(cuMemAlloc(&b, 256));
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    CU_OK(cuMemcpyHtoD_pt(a, v, sizeof v));
    CU_OK(cuMemcpyDtoD_pt(b, a, sizeof v));
    CU_OK(cuMemcpyDtoH_pt(out, b, sizeof out));
    assert_memory_equal(v, out, sizeof v);
    CU_OK(cuMemsetD8_pt(a, 1, 4));
    CU_OK(cuMemsetD16_pt(a + 4, 0x0202, 2));
    CU_OK(cuMemsetD32_pt(a + 8, 3, 1));
    CU_OK(cuMemsetD8Async_pt(a + 12, 4, 4, NULL));
    CU_OK(cuMemsetD16Async_pt(a + 16, 0x0505, 2, NULL));
    CU_OK(cuMemsetD32Async_pt(a + 20, 0x06060606, 1, NULL));
    CU_OK(cuMemcpyDtoDAsync_pt(b, a, 24, NULL));
    CU_OK(cuMemcpyHtoDAsync_pt(b + 24, v, 8, NULL));
    CU_OK(cuMemcpyAsync_pt((CUdeviceptr)(uintptr_t)out, b, 32, NULL));
    CU_OK(cuMemcpyDtoHAsync_pt(out, b, 32, NULL));
    CU_OK(cuStreamSynchronize_pt(NULL));
    assert_int_equal(out[0], 0x01010101);
    assert_int_equal(out[1], 0x02020202);
    assert_int_equal(out[2], 3);
    assert_int_equal(out[3], 0x04040404);
    assert_int_equal(out[4], 0x05050505);
    assert_int_equal(out[5], 0x06060606);
    assert_int_equal(out[6], 1);
    CU_OK(cuMemcpy_pt((CUdeviceptr)(uintptr_t)out, a, 4));
    assert_int_equal(out[0], 0x01010101);
    CU_OK(cuMemFreeAsync_pt(b, NULL));
    CU_OK(cuStreamSynchronize_pt(NULL));
    CU_OK(cuMemFree(a));
    static const char *const called[] = {"cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoD_v2_ptds", "cuMemcpyDtoH_v2_ptds",
        "cuMemsetD8_v2_ptds", "cuMemsetD16_v2_ptds", "cuMemsetD32_v2_ptds", "cuMemsetD8Async_ptsz",
        "cuMemsetD16Async_ptsz", "cuMemsetD32Async_ptsz", "cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync_v2_ptsz",
        "cuMemcpyAsync_ptsz", "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpy_ptds", "cuMemFreeAsync_ptsz", "cuMemAllocAsync_ptsz"};
    for (size_t i = 0; i < sizeof called / sizeof *called; i++)
        if (hostcuda_call_count(called[i]) != 1)
            fail_msg("%s called %llu times, expected 1", called[i], hostcuda_call_count(called[i]));
    assert_int_equal(hostcuda_call_count("cuMemcpyHtoD_v2"), 0);
    assert_int_equal(hostcuda_call_count("cuStreamSynchronize_ptsz"), 2);
}

/* the pre-3.2 entry points with 32-bit device pointers cannot address 64-bit arenas */
static void test_legacy_32bit_variants(void **state)
{
    (void)state;
    CUresult (*alloc_v1)(unsigned int *, unsigned int) = (CUresult (*)(unsigned int *, unsigned int))
        dlsym(RTLD_DEFAULT, "cuMemAlloc");
    CUresult (*info_v1)(unsigned int *, unsigned int *) = (CUresult (*)(unsigned int *, unsigned int *))
        dlsym(RTLD_DEFAULT, "cuMemGetInfo");
    assert_non_null(alloc_v1);
    assert_non_null(info_v1);
    unsigned int p32, f32 = 0, t32 = 0;
    CU_EXPECT(alloc_v1(&p32, 16), CUDA_ERROR_NOT_SUPPORTED);
    CU_OK(info_v1(&f32, &t32));
    assert_true(f32 > 0 && f32 <= t32);
}

static void test_peer_copy(void **state)
{
    CUcontext c0 = *state, c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CUdeviceptr a, b;
    CU_OK(cuMemAlloc(&a, 64));
    CU_OK(cuCtxPushCurrent(c1));
    CU_OK(cuMemAlloc(&b, 64));
    int ord = -1;
    CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b));
    assert_int_equal(ord, 1);
    CU_OK(cuCtxPopCurrent(NULL));
    long v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    CU_OK(cuMemcpyHtoD(a, v, sizeof v));
    CU_OK(cuMemcpyPeer(b, c1, a, c0, sizeof v));
    CU_OK(cuMemcpyDtoH(out, b, sizeof out));   /* unified addressing: any context can read it */
    assert_memory_equal(v, out, sizeof v);
    CU_OK(cuMemsetD8(a, 0, 64));
    CU_OK(cuMemcpyPeerAsync(a, c0, b, c1, sizeof v, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(out, a, sizeof out));
    assert_memory_equal(v, out, sizeof v);
    CU_EXPECT(cuMemcpyPeer(b, (CUcontext)0x1234, a, c0, 8), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuMemFree(a));
    CU_OK(cuMemFree(b));
    CU_OK(cuDevicePrimaryCtxRelease(1));
}

static void test_async_alloc(void **state)
{
    (void)state;
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    size_t f0, f1, t;
    CU_OK(cuMemGetInfo(&f0, &t));
    CUdeviceptr p, q;
    CU_OK(cuMemAllocAsync(&p, 4096, s));
    CU_OK(cuMemsetD8Async(p, 1, 4096, s));
    CUmemoryPool pool, cur;
    CU_OK(cuDeviceGetDefaultMemPool(&pool, 0));
    CU_OK(cuDeviceGetMemPool(&cur, 0));
    assert_ptr_equal(pool, cur);
    CU_OK(cuMemAllocFromPoolAsync(&q, 256, pool, s));
    CU_EXPECT(cuMemAllocFromPoolAsync(&q, 256, (CUmemoryPool)0x77, s), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocAsync(&q, 0, s), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAllocAsync(&q, 16, (CUstream)0x55), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuDeviceGetDefaultMemPool(&pool, 77), CUDA_ERROR_INVALID_DEVICE);
    CU_OK(cuMemFreeAsync(p, s));
    CU_OK(cuMemFreeAsync(q, s));
    CU_EXPECT(cuMemFreeAsync(p + 8, s), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemGetInfo(&f1, &t));
    assert_int_equal(f0, f1);
    CU_OK(cuStreamDestroy(s));
}

/* documented: stream-ordered allocations belong to no context and survive cuCtxDestroy */
static void test_pool_allocations_outlive_context(void **state)
{
    CUcontext prim = *state, c;
    CU_OK(cuCtxCreate(&c, NULL, 0, 0));
    CUdeviceptr p, q;
    CU_OK(cuMemAllocAsync(&p, 1000, NULL));
    CU_OK(cuMemAlloc(&q, 1000));
    CUcontext owner = (CUcontext)1;
    CUmemoryPool pool = NULL, dflt;
    CU_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    assert_null(owner);
    CU_OK(cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
    CU_OK(cuDeviceGetDefaultMemPool(&dflt, 0));
    assert_ptr_equal(pool, dflt);
    CU_OK(cuCtxDestroy(c));
    CU_OK(cuCtxSetCurrent(prim));
    size_t size = 0;
    CU_OK(cuMemGetAddressRange(NULL, &size, p));
    assert_int_equal(size, 1024);
    CU_EXPECT(cuMemGetAddressRange(NULL, &size, q), CUDA_ERROR_NOT_FOUND);   /* freed with its context */
    CU_OK(cuMemFreeAsync(p, NULL));
    CU_OK(cuCtxSynchronize());
}

/* freed device memory goes back to the system: the arena's memfd shrinks */
static long long arena_blocks(void)
{
    long long total = 0;
    char path[64], target[256];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = 0;
        if (strstr(target, "memfd:hostcuda-device")) {
            struct stat st;
            if (fstat(fd, &st) == 0)
                total += (long long)st.st_blocks;
        }
    }
    return total;
}

static void test_free_returns_memory(void **state)
{
    (void)state;
    long long before = arena_blocks();
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 64 << 20));
    CU_OK(cuMemsetD8(p, 1, 64 << 20));
    CU_OK(cuCtxSynchronize());
    long long used = arena_blocks();
    CU_OK(cuMemFree(p));
    long long after = arena_blocks();
    if (used - before < (60 << 20) / 512 || after - before > (1 << 20) / 512)
        fail_msg("memfd blocks: %lld before, %lld with 64 MiB written, %lld after free", before, used, after);
}

/* child: allocate, write through the API, then read the device pointer directly */
static int child_deref(void)
{
    CUcontext c;
    CUdeviceptr p;
    int v = 1234;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) || cuMemAlloc(&p, 64) ||
        cuMemcpyHtoD(p, &v, sizeof v) || cuCtxSynchronize())
        return 3;
    volatile int *hostp = (volatile int *)(uintptr_t)p;
    return *hostp == 1234 ? 0 : 4;
}

static void test_strict_mode(void **state)
{
    (void)state;
    int st = hc_t_rerun("--deref", NULL, NULL);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV)
        fail_msg("strict mode: host dereference of a device pointer should die of SIGSEGV; child status 0x%x", st);
    st = hc_t_rerun("--deref", "HOSTCUDA_STRICT=0", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("HOSTCUDA_STRICT=0: host dereference should read 1234 and exit 0; child status 0x%x", st);
}

/* child: a 4 MiB device gives OUT_OF_MEMORY past its size */
static int child_small(void)
{
    CUcontext c;
    CUdeviceptr p;
    size_t total = 0;
    int n = 0;
    if (cuInit(0) || cuDeviceGetCount(&n) || n != 2 || cuDeviceTotalMem(&total, 1) || total != (4 << 20))
        return 3;
    if (cuDevicePrimaryCtxRetain(&c, 1) || cuCtxSetCurrent(c))
        return 4;
    if (cuMemAlloc(&p, 4 << 20) != CUDA_SUCCESS || cuMemAlloc(&p, 1) != CUDA_ERROR_OUT_OF_MEMORY)
        return 5;
    return 0;
}

static void test_env_sizes(void **state)
{
    (void)state;
    int st = hc_t_rerun("--small", "HOSTCUDA_DEVICES=2", "HOSTCUDA_MEM_BYTES=4M");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("HOSTCUDA_DEVICES=2 HOSTCUDA_MEM_BYTES=4M not honoured (child status 0x%x)", st);
}

static void *alloc_worker(void *arg)
{
    CUcontext c = arg;
    if (cuCtxSetCurrent(c))
        return (void *)1;
    for (int i = 0; i < 200; i++) {
        CUdeviceptr p;
        int v = i, out = -1;
        if (cuMemAlloc(&p, 256 + (size_t)i * 64) || cuMemcpyHtoD(p, &v, 4) || cuMemcpyDtoH(&out, p, 4) ||
            out != i || cuMemFree(p))
            return (void *)1;
    }
    return NULL;
}

static void test_threads(void **state)
{
    size_t f0, f1, t;
    CU_OK(cuMemGetInfo(&f0, &t));
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, alloc_worker, *state);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        assert_null(r);
    }
    CU_OK(cuMemGetInfo(&f1, &t));
    assert_int_equal(f0, f1);
}

int main(int argc, char **argv)
{
    hc_t_init(argv[0]);
    if (argc > 1 && !strcmp(argv[1], "--deref"))
        return child_deref();
    if (argc > 1 && !strcmp(argv[1], "--small"))
        return child_small();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free_info),
        cmocka_unit_test(test_pitch),
        cmocka_unit_test(test_ranges_and_attributes),
        cmocka_unit_test(test_host_memory),
        cmocka_unit_test(test_copies),
        cmocka_unit_test(test_per_thread_variants),
        cmocka_unit_test(test_legacy_32bit_variants),
        cmocka_unit_test(test_peer_copy),
        cmocka_unit_test(test_async_alloc),
        cmocka_unit_test(test_pool_allocations_outlive_context),
        cmocka_unit_test(test_free_returns_memory),
        cmocka_unit_test(test_strict_mode),
        cmocka_unit_test(test_env_sizes),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests_name("hostcuda memory", tests, hc_t_setup_primary, hc_t_teardown_primary);
}
