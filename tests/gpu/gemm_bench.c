/* gemm_bench.c — a small GEMM-bound program for scripts/gpu-check.sh's `matmul` checks: the
 * shape of an unmodified fp32 program (Driver API context, cuBLAS linked dynamically: DT_NEEDED
 * libcublas.so.13) whose time is spent in cublasSgemm_v2, so ACCELSHIM_MATMUL's speed-up shows.
 * C = A B (n x n, beta 0, so every call writes the same C) --warmup times, synchronise, then
 * --iters times, synchronise; prints `n N iters I warmup W gemms G`, `ms_per_gemm X` (wall time of
 * the timed loop / I), `tflops T`, `checksum SUM HASH` (SUM of C in double, FNV-1a 64 of C's bytes).
 * A and B: deterministic, full 24-bit mantissas in (-1,1), so tf32/bf16 inputs round visibly.
 * Exit 0 ok, 2 usage, 3 CUDA/cuBLAS error. Single-threaded; one stream.
 */
#include <cublas_v2.h>
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GB_CK(call)                                                                              \
    do {                                                                                         \
        CUresult r_ = (call);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                                \
            fprintf(stderr, "gemm_bench: %s failed: %d (line %d)\n", #call, (int)r_, __LINE__);   \
            exit(3);                                                                             \
        }                                                                                        \
    } while (0)
#define GB_BK(call)                                                                              \
    do {                                                                                         \
        cublasStatus_t s_ = (call);                                                              \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "gemm_bench: %s failed: status %d (line %d)\n", #call, (int)s_,      \
                    __LINE__);                                                                   \
            exit(3);                                                                             \
        }                                                                                        \
    } while (0)

static uint64_t gb_rng = 0x9e3779b97f4a7c15ull;
static float gb_uniform(void) /* in (-1, 1), full 24-bit mantissas */
{
    gb_rng ^= gb_rng << 13, gb_rng ^= gb_rng >> 7, gb_rng ^= gb_rng << 17;
    return (float)((double)(gb_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static double gb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int gb_int_arg(const char *name, const char *v, int min)
{
    char *end;
    long x = v != NULL ? strtol(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || x < min || x > 1 << 20) {
        fprintf(stderr, "gemm_bench: %s needs an integer >= %d\n", name, min);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv)
{
    int n = 4096, iters = 20, warmup = 2;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--n") == 0)
            n = gb_int_arg("--n", v, 1), i++;
        else if (strcmp(argv[i], "--iters") == 0)
            iters = gb_int_arg("--iters", v, 1), i++;
        else if (strcmp(argv[i], "--warmup") == 0)
            warmup = gb_int_arg("--warmup", v, 0), i++;
        else {
            fprintf(stderr, "usage: gemm_bench [--n N (4096)] [--iters I (20)] [--warmup W (2)]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    size_t elems = (size_t)n * (size_t)n, bytes = elems * sizeof(float);
    float *h = malloc(bytes);
    if (h == NULL) {
        fprintf(stderr, "gemm_bench: out of host memory for n=%d\n", n);
        return 3;
    }

    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dA, dB, dC;
    cublasHandle_t blas;
    GB_CK(cuInit(0));
    GB_CK(cuDeviceGet(&dev, 0));
    GB_CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    GB_CK(cuCtxSetCurrent(ctx));
    GB_CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    GB_CK(cuMemAlloc(&dA, bytes));
    GB_CK(cuMemAlloc(&dB, bytes));
    GB_CK(cuMemAlloc(&dC, bytes));
    for (size_t i = 0; i < elems; i++)
        h[i] = gb_uniform();
    GB_CK(cuMemcpyHtoD(dA, h, bytes));
    for (size_t i = 0; i < elems; i++)
        h[i] = gb_uniform();
    GB_CK(cuMemcpyHtoD(dB, h, bytes));
    GB_CK(cuMemsetD32(dC, 0, elems));
    GB_BK(cublasCreate_v2(&blas));
    GB_BK(cublasSetStream_v2(blas, (cudaStream_t)stream));

    const float one = 1.0f, zero = 0.0f;
    const float *A = (const float *)(uintptr_t)dA, *B = (const float *)(uintptr_t)dB;
    float *C = (float *)(uintptr_t)dC;
    for (int i = 0; i < warmup; i++)
        GB_BK(cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
    GB_CK(cuStreamSynchronize(stream));
    double t0 = gb_now();
    for (int i = 0; i < iters; i++)
        GB_BK(cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
    GB_CK(cuStreamSynchronize(stream));
    double ms = (gb_now() - t0) * 1e3 / iters;

    GB_CK(cuMemcpyDtoH(h, dC, bytes));
    double sum = 0.0;
    uint64_t fnv = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)h;
    for (size_t i = 0; i < elems; i++)
        sum += (double)h[i];
    for (size_t i = 0; i < bytes; i++)
        fnv = (fnv ^ p[i]) * 0x100000001b3ull;
    printf("n %d iters %d warmup %d gemms %d\n", n, iters, warmup, iters + warmup);
    printf("ms_per_gemm %.4f\n", ms);
    printf("tflops %.3f\n", ms > 0 ? 2.0 * (double)n * n * n / (ms * 1e-3) / 1e12 : 0.0);
    printf("checksum %.17g %016llx\n", sum, (unsigned long long)fnv);

    GB_BK(cublasDestroy_v2(blas));
    GB_CK(cuMemFree(dA));
    GB_CK(cuMemFree(dB));
    GB_CK(cuMemFree(dC));
    GB_CK(cuStreamDestroy(stream));
    GB_CK(cuDevicePrimaryCtxRelease(dev));
    free(h);
    return 0;
}
