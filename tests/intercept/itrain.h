/* itrain.h — the scaffold the intercept tests' tiny trainers share (header-only; vmm_train.c and
 * graph_train.c, linked with -lcuda so the shim hooks their calls by symbol): a context on device
 * 0 with ash_itest_grad and ash_itest_sgd loaded from ITEST_PTX and one stream; ITRAIN_N float
 * parameters, started from the same values in every program; `params HASH ...` (FNV-1a 64 of the
 * final parameters' bytes, and a few values in %a), the line the tests compare.
 * Define ITRAIN_PROG (the program's name, a string literal) before including: every message
 * starts with it. Any driver error prints the call and exits 1; ITEST_PTX unset exits 2.
 */
#ifndef ITRAIN_H
#define ITRAIN_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ITRAIN_PROG
#error "define ITRAIN_PROG (the program's name) before including itrain.h"
#endif

#define ITRAIN_N 1000
#define ITRAIN_THREADS 128 /* a block; enough blocks to cover ITRAIN_N */
#define ITRAIN_BLOCKS ((ITRAIN_N + ITRAIN_THREADS - 1) / ITRAIN_THREADS)

#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult ck__r = (call);                                                           \
        if (ck__r != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, ITRAIN_PROG ": %s -> CUresult %d (line %d)\n", #call, (int)ck__r, __LINE__); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

typedef struct {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction grad, sgd;
    CUstream s;
} itrain_t;

static inline char *itrain_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, ITRAIN_PROG ": cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    b[n] = '\0';
    fclose(f);
    return b;
}

/* The primary context of device 0 made current, the two kernels from ITEST_PTX, a stream. */
static inline void itrain_open(itrain_t *t)
{
    const char *ptx_path = getenv("ITEST_PTX");
    if (ptx_path == NULL) {
        fprintf(stderr, ITRAIN_PROG ": ITEST_PTX (kernels.ptx) is not set\n");
        exit(2);
    }
    CK(cuInit(0));
    CK(cuDeviceGet(&t->dev, 0));
    CK(cuDevicePrimaryCtxRetain(&t->ctx, t->dev));
    CK(cuCtxSetCurrent(t->ctx));
    char *ptx = itrain_read_file(ptx_path);
    CK(cuModuleLoadData(&t->mod, ptx));
    free(ptx);
    CK(cuModuleGetFunction(&t->grad, t->mod, "ash_itest_grad"));
    CK(cuModuleGetFunction(&t->sgd, t->mod, "ash_itest_sgd"));
    CK(cuStreamCreate(&t->s, 0));
}

/* One launch of f (t->grad or t->sgd) over the ITRAIN_N parameters on the stream. */
static inline CUresult itrain_launch(const itrain_t *t, CUfunction f, void **args)
{
    return cuLaunchKernel(f, ITRAIN_BLOCKS, 1, 1, ITRAIN_THREADS, 1, 1, 0, t->s, args, NULL);
}

/* The starting parameters (the same in every program and rank) copied into w. */
static inline void itrain_init_params(CUdeviceptr w)
{
    static float host[ITRAIN_N];
    for (int i = 0; i < ITRAIN_N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    CK(cuMemcpyHtoD(w, host, sizeof host));
}

/* After the stream's work: `params HASH w[0]=.. w[1]=.. w[999]=..` on stdout. */
static inline void itrain_print_params(const itrain_t *t, CUdeviceptr w)
{
    static float host[ITRAIN_N];
    CK(cuStreamSynchronize(t->s));
    CK(cuMemcpyDtoH(host, w, sizeof host));
    uint64_t hash = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)host;
    for (size_t i = 0; i < sizeof host; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
    printf("params %016llx w[0]=%a w[1]=%a w[999]=%a\n", (unsigned long long)hash, host[0], host[1],
           host[ITRAIN_N - 1]);
}

#endif /* ITRAIN_H */
