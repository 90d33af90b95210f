/* hc_race.c — a deliberately racy Driver API program (the ordering bug hostcuda once exposed in a
 * trainer): floats uploaded with cuMemcpyHtoDAsync on the LEGACY default stream are read back by
 * a CU_STREAM_NON_BLOCKING stream, which nothing orders after the legacy stream. With --sync the
 * program first synchronises the legacy stream (the fix). Exit 0 when every value read back is
 * the one uploaded, 1 when not (first values of both sides printed), 2 on a CUDA error.
 * test_hc_race.sh runs it under HOSTCUDA_JITTER: the race must show in every run.
 * Must not: synchronise the legacy stream unless --sync is given (the race must stay in the
 * program); pass when a value read back differs.
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define N 4096
#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            fprintf(stderr, "hc_race: %s -> CUresult %d\n", #call, (int)r_);              \
            return 2;                                                                      \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    int sync = argc > 1 && strcmp(argv[1], "--sync") == 0;
    static float up[N], down[N];
    for (int i = 0; i < N; i++)
        up[i] = (float)(i + 1);
    CUdevice dev;
    CUcontext ctx;
    CUstream nb;
    CUdeviceptr d;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&d, sizeof up));
    CK(cuMemcpyHtoDAsync(d, up, sizeof up, NULL)); /* legacy stream */
    if (sync)
        CK(cuStreamSynchronize(NULL));
    CK(cuMemcpyDtoHAsync(down, d, sizeof down, nb)); /* not ordered after the upload */
    CK(cuStreamSynchronize(nb));
    CK(cuCtxSynchronize());
    int bad = 0, first = -1;
    for (int i = 0; i < N; i++)
        if (memcmp(&up[i], &down[i], sizeof up[i]) != 0 && bad++ == 0)
            first = i;
    if (bad) {
        printf("hc_race: %d of %d values differ; first at [%d]: uploaded %g, read %g\n", bad, N, first,
               (double)up[first], (double)down[first]);
        return 1;
    }
    printf("hc_race: all %d values read back as uploaded\n", N);
    return 0;
}
