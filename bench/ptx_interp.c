/* ptx_interp.c — runs one kernel of bench/ptx_interp_kernels.ptx on hostcuda (HOSTCUDA_EXEC=ptx)
 * and prints `wall=SECONDS check=ok|bad` for the median of REPS launches (each synchronised), after
 * one warm-up launch. The shell (bench/ptx_interp.sh) reads the interpreter's own instruction
 * counts from HOSTCUDA_EXEC_STATS=1. Usage: ptx_interp PTX gemm|reduce|axpby [REPS]; exit 77
 * when hostcuda cannot run PTX.
 */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                        \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) {                                                       \
            const char *n_ = "?";                                                       \
            cuGetErrorName(r_, &n_);                                                    \
            fprintf(stderr, "ptx_interp: %s: %s\n", #call, n_);                         \
            exit(r_ == CUDA_ERROR_NOT_FOUND ? 77 : 1);                                  \
        }                                                                               \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ptx_interp PTX gemm|reduce|axpby [REPS]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    setenv("HOSTCUDA_EXEC", "ptx", 0);
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 1;
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    CUdevice dev;
    CUcontext ctx;
    CUmodule m;
    CUfunction fn;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&m, text));
    const char *k = argv[2];
    char name[64];
    snprintf(name, sizeof name, "b_%s", k);
    CK(cuModuleGetFunction(&fn, m, name));
    enum { M = 256, NRED = 1 << 22, NAX = 1 << 22 };
    int n = strcmp(k, "gemm") ? (strcmp(k, "reduce") ? NAX : NRED) : M * M;
    float *h = malloc(sizeof(float) * (size_t)n), *h2 = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 7) * 0.25f, h2[i] = (float)(i % 5) * 0.5f;
    CUdeviceptr a, b, c;
    CK(cuMemAlloc(&a, sizeof(float) * (size_t)n));
    CK(cuMemAlloc(&b, sizeof(float) * (size_t)n));
    CK(cuMemAlloc(&c, sizeof(float) * (size_t)n));
    CK(cuMemcpyHtoD(a, h, sizeof(float) * (size_t)n));
    CK(cuMemcpyHtoD(b, h2, sizeof(float) * (size_t)n));
    int mm = M, nred = NRED, nax = NAX;
    float alpha = 1.5f, beta = 0.5f;
    void *gargs[] = {&a, &b, &c, &mm, &mm, &mm}, *rargs[] = {&a, &c, &nred}, *xargs[] = {&a, &b, &alpha, &beta, &nax};
    double *t = calloc((size_t)reps + 1, sizeof(double));
    for (int r = 0; r <= reps; r++) {
        if (!strcmp(k, "reduce"))
            CK(cuMemsetD32(c, 0, 1));
        double t0 = now();
        if (!strcmp(k, "gemm"))
            CK(cuLaunchKernel(fn, M / 16, M / 16, 1, 16, 16, 1, 0, NULL, gargs, NULL));
        else if (!strcmp(k, "reduce"))
            CK(cuLaunchKernel(fn, 256, 1, 1, 256, 1, 1, 0, NULL, rargs, NULL));
        else
            CK(cuLaunchKernel(fn, (unsigned)(NAX + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, xargs, NULL));
        CK(cuCtxSynchronize());
        t[r] = now() - t0;
    }
    /* a spot check that the kernel computed what it should */
    int ok = 1;
    if (!strcmp(k, "gemm")) {
        CK(cuMemcpyDtoH(h2, c, sizeof(float) * M * M));
        for (int i = 0; i < M; i += 37) {
            double s = 0;
            for (int q = 0; q < M; q++)
                s += (double)h[i * M + q] * ((float)(((q * M + 5) % 5)) * 0.5f);
            ok &= fabs(h2[i * M + 5] - s) <= 1e-3 * (fabs(s) + 1);
        }
    } else if (!strcmp(k, "reduce")) {
        float s;
        CK(cuMemcpyDtoH(&s, c, 4));
        double want = 0;
        for (int i = 0; i < NRED; i++)
            want += h[i];
        ok = fabs(s - want) <= 1e-3 * want;
    }
    qsort(t + 1, (size_t)reps, sizeof(double), cmpd);
    printf("wall=%.6f check=%s\n", t[1 + reps / 2], ok ? "ok" : "bad");
    return 0;
}
