/* test_hc_check.h — the checks and helpers of the interpreter's Driver API test programs
 * (test_hc_exec.c, test_hc_coop.c, test_hc_async.c, test_hc_mma.c, test_hc_tex.c): start (the
 * usage check, the driver and device 0's primary context), CK (a driver call that must succeed, else exit 1 naming it),
 * EXPECT_EQ (counts failures in `fails`, prints the first 20 with both values), the loaded module
 * `mod`, fn (a function of it) and dalloc (device memory). Single-threaded use.
 * Must not: be included by more than one file of a program (it defines statics). */
#ifndef TEST_HC_CHECK_H
#define TEST_HC_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static int fails;
#define CK(call)                                                                                \
    do {                                                                                       \
        CUresult rc_ = (call);                                                                 \
        if (rc_ != CUDA_SUCCESS) {                                                             \
            const char *n_ = "?";                                                              \
            cuGetErrorName(rc_, &n_);                                                          \
            fprintf(stderr, "FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, n_);          \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define EXPECT_EQ(what, got, want)                                                              \
    do {                                                                                       \
        long long g_ = (long long)(got), w_ = (long long)(want);                               \
        if (g_ != w_) {                                                                        \
            if (fails++ < 20)                                                                  \
                fprintf(stderr, "FAIL %s: got %lld, want %lld\n", what, g_, w_);               \
        }                                                                                      \
    } while (0)

static CUmodule mod;

/* PTXFILE given (else the usage line, exit 2); cuInit, device 0's primary context made current */
static inline void start(int argc, const char *usage)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s\n", usage);
        exit(2);
    }
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
}

static CUfunction fn(const char *name)
{
    CUfunction f;
    CK(cuModuleGetFunction(&f, mod, name));
    return f;
}

static CUdeviceptr dalloc(size_t n)
{
    CUdeviceptr p;
    CK(cuMemAlloc(&p, n));
    return p;
}

#endif /* TEST_HC_CHECK_H */
