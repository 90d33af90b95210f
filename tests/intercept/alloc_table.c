/* alloc_table.c — the allocation hooks feed the shim's allocation table: after each allocation
 * API (cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemAllocManaged, cuMemAllocAsync(+_ptsz),
 * cuMemAllocFromPoolAsync(+_ptsz)) accelshim_alloc_lookup finds the allocation from its base and
 * from an inner pointer, with the right size, physical device (argv[1]) and kind; after each free
 * (cuMemFree_v2, cuMemFreeAsync(+_ptsz)) it is gone; the device's peak is at least the sum.
 * Run under LD_PRELOAD=libaccelshim.so only (the API is the shim's).
 */
#include "itest.h"

typedef int (*lookup_fn)(uint64_t, uint64_t *, uint64_t *, int *, int *);
typedef int (*stats_fn)(int, uint64_t *, uint64_t *, uint64_t *);

extern CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
extern CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
extern CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);

static int fails;
static lookup_fn lookup;

static void expect_live(const char *api, CUdeviceptr p, uint64_t size, int device, int kind)
{
    uint64_t base = 0, sz = 0;
    int dev = -1, k = -1;
    if (lookup((uint64_t)p + size / 2, &base, &sz, &dev, &k) != 0 || base != p || sz != size || dev != device ||
        k != kind) {
        printf("FAIL %s: lookup(0x%llx + %llu) -> base 0x%llx size %llu device %d kind %d; want base 0x%llx size %llu "
               "device %d kind %d\n", api, (unsigned long long)p, (unsigned long long)size / 2,
               (unsigned long long)base, (unsigned long long)sz, dev, k, (unsigned long long)p,
               (unsigned long long)size, device, kind);
        fails++;
    } else {
        printf("ok %s: 0x%llx +%llu on device %d, kind %d\n", api, (unsigned long long)p, (unsigned long long)size, dev, k);
    }
}

static void expect_gone(const char *api, CUdeviceptr p)
{
    if (lookup((uint64_t)p, NULL, NULL, NULL, NULL) == 0) {
        printf("FAIL %s: 0x%llx still in the table after the free\n", api, (unsigned long long)p);
        fails++;
    } else {
        printf("ok %s: 0x%llx gone\n", api, (unsigned long long)p);
    }
}

int main(int argc, char **argv)
{
    int device = argc > 1 ? atoi(argv[1]) : 0;
    lookup = (lookup_fn)dlsym(RTLD_DEFAULT, "accelshim_alloc_lookup");
    stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "accelshim_alloc_stats");
    if (lookup == NULL || stats == NULL) {
        fprintf(stderr, "SKIP: not running under libaccelshim.so\n");
        return 77;
    }
    itest_fix_t fx;
    if (itest_setup(&fx) == 77)
        return 77;
    CUdeviceptr p[8];
    size_t pitch = 0;
    ITEST_CU(cuMemAlloc_v2(&p[0], 1000));
    expect_live("cuMemAlloc_v2", p[0], 1000, device, 0);
    ITEST_CU(cuMemAllocPitch_v2(&p[1], &pitch, 100, 7, 4));
    expect_live("cuMemAllocPitch_v2", p[1], pitch * 7, device, 1);
    ITEST_CU(cuMemAllocManaged(&p[2], 3000, CU_MEM_ATTACH_GLOBAL));
    expect_live("cuMemAllocManaged", p[2], 3000, device, 2);
    ITEST_CU(cuMemAllocAsync(&p[3], 4000, fx.stream));
    expect_live("cuMemAllocAsync", p[3], 4000, device, 3);
    ITEST_CU(cuMemAllocAsync_ptsz(&p[4], 5000, fx.stream));
    expect_live("cuMemAllocAsync_ptsz", p[4], 5000, device, 3);
    int have_pool = fx.pool != NULL;
    if (have_pool) {
        ITEST_CU(cuMemAllocFromPoolAsync(&p[5], 6000, fx.pool, fx.stream));
        expect_live("cuMemAllocFromPoolAsync", p[5], 6000, device, 4);
        ITEST_CU(cuMemAllocFromPoolAsync_ptsz(&p[6], 7000, fx.pool, fx.stream));
        expect_live("cuMemAllocFromPoolAsync_ptsz", p[6], 7000, device, 4);
    } else {
        printf("note: no default memory pool: cuMemAllocFromPoolAsync not exercised\n");
    }
    fx.stream_sync(fx.stream);
    uint64_t cur = 0, peak = 0, count = 0;
    stats(device, &cur, &peak, &count);
    uint64_t want = 1000 + pitch * 7 + 3000 + 4000 + 5000 + (have_pool ? 13000 : 0);
    printf("device %d: current %llu peak %llu count %llu (allocated here %llu + fixture)\n", device,
           (unsigned long long)cur, (unsigned long long)peak, (unsigned long long)count, (unsigned long long)want);
    if (peak < want || cur < want) {
        printf("FAIL stats: peak %llu / current %llu below the %llu allocated\n", (unsigned long long)peak,
               (unsigned long long)cur, (unsigned long long)want);
        fails++;
    }
    ITEST_CU(cuMemFree_v2(p[0]));
    expect_gone("cuMemFree_v2", p[0]);
    ITEST_CU(cuMemFree_v2(p[1]));
    ITEST_CU(cuMemFree_v2(p[2]));
    expect_gone("cuMemFree_v2 (managed)", p[2]);
    ITEST_CU(cuMemFreeAsync(p[3], fx.stream));
    expect_gone("cuMemFreeAsync", p[3]);
    ITEST_CU(cuMemFreeAsync_ptsz(p[4], fx.stream));
    expect_gone("cuMemFreeAsync_ptsz", p[4]);
    if (have_pool) {
        ITEST_CU(cuMemFreeAsync(p[5], fx.stream));
        ITEST_CU(cuMemFreeAsync(p[6], fx.stream));
        expect_gone("cuMemFreeAsync (pool)", p[6]);
    }
    fx.stream_sync(fx.stream);
    /* a failed free leaves the entry: freeing an inner pointer is an error for the driver */
    ITEST_CU(cuMemAlloc_v2(&p[7], 4096));
    CUresult r = cuMemFree_v2(p[7] + 16);
    printf("cuMemFree_v2(inner pointer) -> %d\n", (int)r);
    if (r != CUDA_SUCCESS)
        expect_live("cuMemAlloc_v2 after a failed free", p[7], 4096, device, 0);
    uint64_t peak2 = 0;
    stats(device, &cur, &peak2, &count);
    if (peak2 < peak) {
        printf("FAIL: peak went down %llu -> %llu\n", (unsigned long long)peak, (unsigned long long)peak2);
        fails++;
    }
    printf("%s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
