/* allreduce_app.c — the accelshim side of bench/allreduce.sh: a plain single-GPU Driver-API program
 * (no MPI, no NCCL) whose "training step" is one launch of ash_bench_consume(grads, n, out). Run
 * under LD_PRELOAD=libaccelshim.so with a policy naming that kernel as the gradients' sync point,
 * each launch first all-reduces the COUNT-float gradient buffer across the ranks. It fills the
 * buffer with rank + 1 (rank from OMPI_COMM_WORLD_RANK, else 0), runs WARMUP untimed and ITERS timed
 * iterations (launch + cuStreamSynchronize), then checks that every element equals the mean
 * (size + 1) / 2 (size from OMPI_COMM_WORLD_SIZE; 1 without MPI) and prints (rank 0)
 *     allreduce_app: count N iters I median_ms X min_ms Y check ok|FAILED
 * --copy times instead what host staging costs on this driver: per iteration the whole buffer
 * DtoH into page-locked host memory and HtoD back (no launch, no reduction; values unchanged).
 * Usage: allreduce_app --ptx FILE [--count N] [--warmup W] [--iters I] [--copy 1].
 * Single-threaded, one stream.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult ck_r = (call);                                                                    \
        if (ck_r != CUDA_SUCCESS) {                                                                \
            fprintf(stderr, "allreduce_app: %s failed (%d)\n", #call, (int)ck_r);                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *s = malloc(cap);
    while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[len] = '\0';
    return s;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

int main(int argc, char **argv)
{
    long count = 16L << 20, warmup = 2, iters = 7, copy = 0;
    const char *ptx_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ptx"))
            ptx_path = argv[i + 1];
        else if (!strcmp(argv[i], "--count"))
            count = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup"))
            warmup = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--copy"))
            copy = atol(argv[i + 1]);
    }
    if (!ptx_path || count <= 0 || count > 0x7fffffffL || iters <= 0 || warmup < 0) {
        fprintf(stderr, "usage: allreduce_app --ptx FILE [--count N] [--warmup W] [--iters I]\n");
        return 2;
    }
    char *ptx = read_file(ptx_path);
    if (!ptx) {
        fprintf(stderr, "allreduce_app: cannot read %s\n", ptx_path);
        return 1;
    }
    int rank = env_int("OMPI_COMM_WORLD_RANK", 0), size = env_int("OMPI_COMM_WORLD_SIZE", 1);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    CUdeviceptr grads, out;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, ptx));
    CK(cuModuleGetFunction(&fn, mod, "ash_bench_consume"));
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&grads, (size_t)count * sizeof(float)));
    CK(cuMemAlloc(&out, sizeof(float)));
    float fill = (float)(rank + 1);
    unsigned bits;
    memcpy(&bits, &fill, sizeof bits);
    /* on the app's own (non-blocking) stream: a legacy-stream memset would not be ordered before it */
    CK(cuMemsetD32Async(grads, bits, (size_t)count, stream));
    CK(cuMemsetD32Async(out, 0, 1, stream));
    CK(cuStreamSynchronize(stream));

    int n = (int)count;
    void *params[] = {&grads, &n, &out};
    double *t = malloc((size_t)iters * sizeof *t);
    if (!t)
        return 1;
    void *host = NULL;
    if (copy)
        CK(cuMemAllocHost(&host, (size_t)count * sizeof(float)));
    for (long i = 0; i < warmup + iters; i++) {
        double t0 = now_ms();
        if (copy) {
            CK(cuMemcpyDtoHAsync(host, grads, (size_t)count * sizeof(float), stream));
            CK(cuStreamSynchronize(stream));
            CK(cuMemcpyHtoDAsync(grads, host, (size_t)count * sizeof(float), stream));
        } else {
            CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
        }
        CK(cuStreamSynchronize(stream));
        if (i >= warmup)
            t[i - warmup] = now_ms() - t0;
    }

    /* every element must be the mean of the ranks' fills; spot-check a spread of them */
    if (copy) {   /* no reduction ran: the buffer still holds this rank's fill; `out` was never written */
        CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL));
        CK(cuStreamSynchronize(stream));
        CK(cuMemFreeHost(host));
    }
    float expect = copy ? fill : (float)(size + 1) / 2.0f, got = 0.0f;
    int ok = 1;
    for (long i = 0; i < count && ok; i += count / 64 + 1) {
        CK(cuMemcpyDtoH(&got, grads + (CUdeviceptr)i * sizeof(float), sizeof got));
        ok = got == expect;
    }
    CK(cuMemcpyDtoH(&got, out, sizeof got));
    ok = ok && got == expect;
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    if (rank == 0 || !ok)
        printf("allreduce_app: rank %d count %ld iters %ld median_ms %.3f min_ms %.3f check %s (got %g, "
               "expected %g)\n", rank, count, iters,
               iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2, t[0],
               ok ? "ok" : "FAILED", (double)got, (double)expect);
    free(t);
    free(ptx);
    CK(cuMemFree(grads));
    CK(cuMemFree(out));
    CK(cuModuleUnload(mod));
    CK(cuStreamDestroy(stream));
    CK(cuDevicePrimaryCtxRelease(dev));
    return ok ? 0 : 1;
}
