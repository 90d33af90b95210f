/* devquery.c — what a Driver-API program learns about "its" device when it passes an ordinal
 * literally (argv[1], default 0) instead of a handle from cuDeviceGet: name, UUID, PCI bus id,
 * attributes, total memory, compute capability (attributes), and the primary context's state through
 * Retain / SetFlags / GetState / Release. Two lines on stdout:
 *   query: <everything the device answers>      (equal for equal devices, whoever asks)
 *   handles: get0=H ctxdev=C bybus=B count=N bus18=R/D  (cuDeviceGet(0), cuCtxGetDevice, the
 *            handle of its own bus id, cuDeviceGetCount, cuDeviceGetByPCIBusId of device 0's bus id:
 *            CUresult / handle)
 * Run without the shim with ordinal R it describes device R; under the shim at local rank R with
 * ordinal 0 it must print the same query line (tests/intercept/test_devquery.sh).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult ck__r = (call);                                                           \
        if (ck__r != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, "FAIL %s:%d: %s -> CUresult %d\n", __FILE__, __LINE__, #call, (int)ck__r); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    CUdevice dev = argc > 1 ? atoi(argv[1]) : 0; /* the literal ordinal, never from cuDeviceGet */
    CK(cuInit(0));
    char name[128], bus[32];
    CUuuid u;
    int busattr = 0, group = 0, major = 0, minor = 0;
    size_t mem = 0;
    CK(cuDeviceGetName(name, sizeof name, dev));
    CK(cuDeviceGetUuid(&u, dev));
    CK(cuDeviceGetPCIBusId(bus, sizeof bus, dev));
    CK(cuDeviceGetAttribute(&busattr, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev));
    CK(cuDeviceGetAttribute(&group, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, dev));
    CK(cuDeviceTotalMem(&mem, dev));
    CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    unsigned int flags0 = 0, flags1 = 0, flags2 = 0;
    int active0 = -1, active1 = -1, active2 = -1;
    CUcontext ctx;
    CK(cuDevicePrimaryCtxGetState(dev, &flags0, &active0));
    CK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuDevicePrimaryCtxGetState(dev, &flags1, &active1));
    CUdevice ctxdev = -1, get0 = -1, bybus = -1;
    CK(cuCtxGetDevice(&ctxdev));
    CK(cuDeviceGet(&get0, 0));
    CK(cuDeviceGetByPCIBusId(&bybus, bus));
    int count = -1;
    CK(cuDeviceGetCount(&count));
    CUdevice d18 = -1; /* device 0's bus id: another device's, for a rank R > 0 under the shim */
    CUresult r18 = cuDeviceGetByPCIBusId(&d18, "0000:18:00.0");
    CK(cuCtxSetCurrent(NULL));
    CK(cuDevicePrimaryCtxRelease(dev));
    CK(cuDevicePrimaryCtxGetState(dev, &flags2, &active2));
    CK(cuDevicePrimaryCtxReset(dev));
    printf("query: name=\"%s\" uuid=", name);
    for (int i = 0; i < 16; i++)
        printf("%02x", (unsigned char)u.bytes[i]);
    printf(" bus=%s busattr=%d group=%d mem=%zu cc=%d.%d state=%u/%d,%u/%d,%u/%d\n", bus, busattr, group, mem,
           major, minor, flags0, active0, flags1, active1, flags2, active2);
    printf("handles: get0=%d ctxdev=%d bybus=%d count=%d bus18=%d/%d\n", (int)get0, (int)ctxdev, (int)bybus, count,
           (int)r18, r18 == CUDA_SUCCESS ? (int)d18 : -1);
    return 0;
}
