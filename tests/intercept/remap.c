/* remap.c — prints what the program sees of devices under the shim, and where its memory really
 * lands: "count=C get1=R ordinal=O" where C is cuDeviceGetCount, R the CUresult of cuDeviceGet(1),
 * O the physical ordinal (hostcuda's cuPointerGetAttribute DEVICE_ORDINAL, asked through the
 * real driver: the shim does not hook it) of a cuMemAlloc_v2 made on the program's device 0.
 */
#include "itest.h"

int main(void)
{
    itest_fix_t fx;
    if (itest_setup(&fx) == 77) {
        fprintf(stderr, "SKIP: libcuda.so.1 is not hostcuda\n");
        return 77;
    }
    int count = -1;
    ITEST_CU(cuDeviceGetCount(&count));
    CUdevice d1;
    CUresult get1 = cuDeviceGet(&d1, 1);
    CUdeviceptr p;
    ITEST_CU(cuMemAlloc_v2(&p, 1024));
    int ordinal = -1;
    ITEST_CU(fx.ptr_attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    printf("count=%d get1=%d ordinal=%d\n", count, (int)get1, ordinal);
    return 0;
}
