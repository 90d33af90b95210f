/* exit_app.c — a Driver-API program for tests/record/test_record_exit.sh: it fills a 1000-float
 * buffer with 1.0, launches ash_bench_consume(buf, n, out) (bench/allreduce_kernels.cu; the
 * policy names it as a `parameters` sync point), then overwrites the buffer with 2.0 and exits
 * WITHOUT freeing it or releasing its context, as many legacy programs do. The record's exit line
 * must show the final values (sum 2000), the sync point's lines the values then (sum 1000).
 * Usage: exit_app PTX_FILE. Single-threaded, one stream.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult ck_r = (call);                                                                    \
        if (ck_r != CUDA_SUCCESS) {                                                                \
            fprintf(stderr, "exit_app: %s failed (%d)\n", #call, (int)ck_r);                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: exit_app PTX_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    static char ptx[1 << 20];
    size_t len = f ? fread(ptx, 1, sizeof ptx - 1, f) : 0;
    if (!f || len == 0) {
        fprintf(stderr, "exit_app: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr buf, out;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, ptx));
    CK(cuModuleGetFunction(&fn, mod, "ash_bench_consume"));
    int n = 1000;
    CK(cuMemAlloc(&buf, (size_t)n * sizeof(float)));
    CK(cuMemAlloc(&out, sizeof(float)));
    CK(cuMemsetD32(buf, 0x3f800000u /* 1.0f */, (size_t)n));
    void *params[] = {&buf, &n, &out};
    CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemsetD32(buf, 0x40000000u /* 2.0f */, (size_t)n));
    CK(cuCtxSynchronize());
    printf("exit_app: done\n");
    return 0;   /* no cuMemFree, no context release */
}
