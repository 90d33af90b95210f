/* test_hcr_host.c — hostcurand from plain C on the Driver API (no runtime): for every generator and
 * result kind, a device generator (output in cuMemAlloc memory, read back with cuMemcpyDtoH) and a
 * host generator (curandCreateGeneratorHost) give the same bits, as cuRAND documents; a call split
 * in three continues the sequence; uniforms lie in (0, 1]. Control: a generator with another seed
 * (for Sobol: another point offset, in 3 dimensions) differs. Built linked to build/tests/hostcurand/libcurand.so.10; run under valgrind by
 * test_hcr_valgrind.sh. Exit 0 when every check passes. */
#include <cuda.h>
#include <curand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } } while (0)

enum { K_U32, K_UNIF, K_UNIF_D, K_NORM, K_NORM_D, K_LOGN, K_LOGN_D, K_COUNT };
static const char *kname[] = {"Generate", "Uniform", "UniformDouble", "Normal", "NormalDouble", "LogNormal",
                              "LogNormalDouble"};
static size_t elem(int k) { return k == K_UNIF_D || k == K_NORM_D || k == K_LOGN_D ? 8 : 4; }

static curandStatus_t gen(curandGenerator_t g, int k, void *out, size_t n)
{
    switch (k) {
    case K_U32: return curandGenerate(g, out, n);
    case K_UNIF: return curandGenerateUniform(g, out, n);
    case K_UNIF_D: return curandGenerateUniformDouble(g, out, n);
    case K_NORM: return curandGenerateNormal(g, out, n, 1.f, 2.f);
    case K_NORM_D: return curandGenerateNormalDouble(g, out, n, 1., 2.);
    case K_LOGN: return curandGenerateLogNormal(g, out, n, 0.f, 0.5f);
    default: return curandGenerateLogNormalDouble(g, out, n, 0., 0.5);
    }
}

/* n results of kind k from a fresh generator (device or host), in three calls */
static void *run(curandRngType_t t, int host, unsigned long long seed, int k, size_t n)
{
    curandGenerator_t g;
    int quasi = t == CURAND_RNG_QUASI_SOBOL32 || t == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32;
    size_t es = elem(k), parts[3] = {n / 4 * 2, n / 4 * 2 + 2, 0};
    if (quasi) /* 3 dimensions: each call a multiple of 3 */
        parts[0] = parts[1] = 3000;
    parts[2] = n - parts[0] - parts[1];
    void *h = calloc(n, es);
    CUdeviceptr d = 0;
    if (!h)
        return NULL;
    curandStatus_t st = host ? curandCreateGeneratorHost(&g, t) : curandCreateGenerator(&g, t);
    CHECK(st == CURAND_STATUS_SUCCESS, "create %d: status %d", (int)t, (int)st);
    if (st) { free(h); return NULL; }
    if (quasi) { /* the control's "seed" is the point offset */
        curandSetQuasiRandomGeneratorDimensions(g, 3);
        curandSetGeneratorOffset(g, seed);
    } else {
        curandSetPseudoRandomGeneratorSeed(g, seed);
    }
    if (!host && cuMemAlloc(&d, n * es) != CUDA_SUCCESS) { free(h); curandDestroyGenerator(g); return NULL; }
    size_t at = 0;
    for (int p = 0; p < 3; at += parts[p], p++) {
        void *o = host ? (char *)h + at * es : (void *)(uintptr_t)(d + at * es);
        st = gen(g, k, o, parts[p]);
        CHECK(st == CURAND_STATUS_SUCCESS, "curand%s type %d: status %d", kname[k], (int)t, (int)st);
    }
    if (!host) {
        cuMemcpyDtoH(h, d, n * es);
        cuMemFree(d);
    }
    curandDestroyGenerator(g);
    return h;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        printf("FAIL: no hostcuda device\n");
        return 1;
    }
    const curandRngType_t types[] = {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10,
                                     CURAND_RNG_PSEUDO_MRG32K3A, CURAND_RNG_PSEUDO_MTGP32,
                                     CURAND_RNG_QUASI_SOBOL32, CURAND_RNG_QUASI_SCRAMBLED_SOBOL32};
    const size_t n = 10002;
    for (int ti = 0; ti < 6; ti++)
        for (int k = 0; k < K_COUNT; k++) {
            int before = fails;
            void *a = run(types[ti], 0, 99, k, n), *b = run(types[ti], 1, 99, k, n), *c = run(types[ti], 1, 98, k, n);
            if (!a || !b || !c) { fails++; free(a); free(b); free(c); continue; }
            size_t es = elem(k);
            for (size_t i = 0; i < n; i++)
                if (memcmp((char *)a + i * es, (char *)b + i * es, es)) {
                    printf("FAIL: type %d curand%s result %zu: device generator and host generator differ\n",
                           (int)types[ti], kname[k], i);
                    fails++;
                    break;
                }
            CHECK(memcmp(a, c, n * es) != 0, "control: type %d curand%s: another seed gives the same results",
                  (int)types[ti], kname[k]);
            for (size_t i = 0; i < n && (k == K_UNIF || k == K_UNIF_D); i++) {
                double v = k == K_UNIF ? ((float *)a)[i] : ((double *)a)[i];
                if (!(v > 0.0 && v <= 1.0)) { printf("FAIL: uniform %zu = %g outside (0, 1]\n", i, v); fails++; break; }
            }
            if (fails == before)
                printf("ok type %d curand%s: device = host generator over %zu results in 3 calls; another seed differs\n",
                       (int)types[ti], kname[k], n);
            free(a); free(b); free(c);
        }
    printf("%d failure(s)\n", fails);
    return fails ? 1 : 0;
}
