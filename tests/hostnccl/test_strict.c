/* test_strict.c — one rank of tests/hostnccl/test_strict.sh: hostnccl pairs collectives as NCCL
 * does, one call with one call. Ranks whose calls differ in kind, count or type get an error
 * (ncclInvalidUsage, from ncclCommGetAsyncError after the stream synchronises) and their buffers
 * are left as they were, never filled by pairing data byte by byte across calls.
 * Usage: test_strict RANK MODE, MODE same | count | type; NCCL_COMM_ID set (TCP mode, 2 ranks).
 *   same:  both ranks all-reduce 4 floats twice -> ok, sums right.
 *   count: rank 0 all-reduces 2 floats twice, rank 1 4 floats once (the same bytes in all).
 *   type:  rank 0 all-reduces 4 f32, rank 1 8 f16 (the same bytes).
 * Prints "result R ASYNC SUM0" (ASYNC: ncclCommGetAsyncError's code); exit 0 unless a call fails
 * outright. Callers: test_strict.sh only.
 */
#include <cuda.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { if ((x) != 0) { fprintf(stderr, "test_strict: %s failed\n", #x); return 3; } } while (0)

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int rank = atoi(argv[1]);
    const char *mode = argv[2];
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr buf;
    float host[8];
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&buf, sizeof host));
    for (int i = 0; i < 8; i++)
        host[i] = (float)(rank + 1);
    CK(cuMemcpyHtoD(buf, host, sizeof host));
    ncclUniqueId id;
    ncclComm_t c;
    CK(ncclGetUniqueId(&id));
    CK(ncclCommInitRank(&c, 2, id, rank));
    void *p = (void *)(uintptr_t)buf;
    cudaStream_t st = (cudaStream_t)s;
    if (!strcmp(mode, "same")) {
        CK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, c, st));
        CK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, c, st));
    } else if (!strcmp(mode, "count")) {
        if (rank == 0) {
            CK(ncclAllReduce(p, p, 2, ncclFloat32, ncclSum, c, st));
            (void)ncclAllReduce(p, p, 2, ncclFloat32, ncclSum, c, st); /* may report the first's error */
        } else {
            CK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, c, st));
        }
    } else if (!strcmp(mode, "type")) {
        if (rank == 0)
            CK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, c, st));
        else
            CK(ncclAllReduce(p, p, 8, ncclFloat16, ncclSum, c, st));
    } else {
        return 2;
    }
    CK(cuStreamSynchronize(s));
    ncclResult_t async = ncclSuccess;
    CK(ncclCommGetAsyncError(c, &async));
    CK(cuMemcpyDtoH(host, buf, sizeof host));
    printf("result %d %d %g\n", rank, (int)async, (double)host[0]);
    ncclCommDestroy(c);
    return 0;
}
