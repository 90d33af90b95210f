/* rt_calls.cu — an ordinary runtime program (nvcc -cudart shared, no kernels) that checks the
 * runtime calls ordinary programs make beyond malloc/copy/launch, one case per argument, each
 * call's result and each documented error code:
 *   pool    memory pools: the default and current pool, created pools, attributes (release
 *           threshold, reuse flags, reserved/used counters and their high watermarks), TrimTo,
 *           access, cudaMallocFromPoolAsync, CUDA 13's location-keyed pool calls, destroy;
 *   attach  cudaStreamAttachMemAsync on managed memory (whole allocation, 0, flags, bad input);
 *   p2p     cudaDeviceGetP2PAttribute for device pairs and the same device;
 * Each check prints `ok CASE: what` or `FAIL CASE: what: expected X, got Y`; exit 1 on any FAIL.
 * RT_CALLS_CORRUPT=1 corrupts one byte of every expected buffer before it is compared (the
 * negative control of the data checks: each must then fail). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
static const char *cur;

#define EXPECT_EQ(what, expected, got)                                                                   \
    do {                                                                                                 \
        long long e_ = (long long)(expected), g_ = (long long)(got);                                     \
        if (e_ != g_) {                                                                                  \
            printf("FAIL %s: %s: expected %lld, got %lld\n", cur, what, e_, g_);                         \
            fails++;                                                                                     \
        } else                                                                                           \
            printf("ok %s: %s\n", cur, what);                                                            \
    } while (0)
#define EXPECT_RT(what, expected, call)                                                                  \
    do {                                                                                                 \
        cudaError_t g_ = (call), e_ = (expected);                                                        \
        if (e_ != g_) {                                                                                  \
            printf("FAIL %s: %s: expected %s, got %s\n", cur, what, cudaGetErrorName(e_), cudaGetErrorName(g_)); \
            fails++;                                                                                     \
        } else                                                                                           \
            printf("ok %s: %s\n", cur, what);                                                            \
    } while (0)
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
            printf("FAIL %s: %s: byte %zu: expected 0x%02x, got 0x%02x\n", cur, what, i, e[i], got[i]);
            fails++;
            free(e);
            return;
        }
    printf("ok %s: %s\n", cur, what);
    free(e);
}

static unsigned long long pool_attr(cudaMemPool_t p, cudaMemPoolAttr a)
{
    unsigned long long v = ~0ull;
    cudaError_t e = cudaMemPoolGetAttribute(p, a, &v);
    if (e != cudaSuccess) {
        printf("FAIL %s: cudaMemPoolGetAttribute(%d): %s\n", cur, (int)a, cudaGetErrorName(e));
        fails++;
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
        printf("ok %s: one device: no pair to query\n", cur);
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

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"pool", case_pool}, {"attach", case_attach}, {"p2p", case_p2p}};
    if (argc != 2) {
        fprintf(stderr, "usage: rt_calls CASE\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cur = cases[i].name;
            cases[i].fn();
            return fails ? 1 : 0;
        }
    fprintf(stderr, "rt_calls: unknown case '%s'\n", argv[1]);
    return 2;
}
