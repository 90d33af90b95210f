/* test_hc_vmm_graph.c — hostcuda's virtual memory management and stream capture, as the driver
 * behaves: a mapped range is device memory only once cuMemSetAccess gave access (copies and
 * memsets reach it; host code touching it dies of SIGSEGV in strict mode), an unmapped or merely
 * reserved range is not memory, a handle's pages outlive cuMemRelease while mapped, misuse gets
 * the driver's error codes. Capture: ops on a capturing stream are recorded, not run; the graph
 * replays them in order at each launch, on the launch stream; misuse gets ILLEGAL_STATE /
 * STREAM_CAPTURE_UNSUPPORTED; CUDA_VISIBLE_DEVICES picks and orders devices.
 */
#include "test_hc_util.h"

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#define GRAN ((size_t)2 << 20)

static CUmemAllocationProp prop_dev(int dev)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
}

static CUmemAccessDesc rw_dev(int dev)
{
    CUmemAccessDesc a;
    memset(&a, 0, sizeof a);
    a.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    a.location.id = dev;
    a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return a;
}

static void test_vmm_map_access_copy(void **state)
{
    (void)state;
    CUmemAllocationProp prop = prop_dev(0);
    CUmemAccessDesc acc = rw_dev(0);
    size_t g = 0;
    CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    assert_int_equal(g, GRAN);
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemAddressReserve(&va, 2 * GRAN, 0, 0, 0));
    assert_int_equal(va % GRAN, 0);
    CU_OK(cuMemCreate(&h, GRAN, &prop, 0));
    int v = 77, out = 0;
    CU_EXPECT(cuMemcpyHtoD(va, &v, 4), CUDA_ERROR_INVALID_VALUE);          /* reserved only */
    CU_OK(cuMemMap(va + GRAN, GRAN, 0, h, 0));
    CU_EXPECT(cuMemcpyHtoD(va + GRAN, &v, 4), CUDA_ERROR_INVALID_VALUE);   /* mapped, no access */
    CU_OK(cuMemSetAccess(va + GRAN, GRAN, &acc, 1));
    CU_OK(cuMemcpyHtoD(va + GRAN + 8, &v, 4));
    CU_OK(cuMemcpyDtoH(&out, va + GRAN + 8, 4));
    assert_int_equal(out, 77);
    CU_EXPECT(cuMemcpyDtoH(&out, va + GRAN - 4, 8), CUDA_ERROR_INVALID_VALUE); /* half unmapped */
    CU_OK(cuMemsetD32(va + GRAN, 5, GRAN / 4));
    CU_OK(cuMemcpyDtoH(&out, va + 2 * GRAN - 4, 4));
    assert_int_equal(out, 5);
    /* misuse */
    CU_EXPECT(cuMemMap(va + GRAN, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE);   /* already mapped */
    CU_EXPECT(cuMemMap(va + 4096, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE);   /* unaligned */
    CU_EXPECT(cuMemUnmap(va, 2 * GRAN), CUDA_ERROR_INVALID_VALUE);             /* not all mapped */
    CU_EXPECT(cuMemAddressFree(va, 2 * GRAN), CUDA_ERROR_INVALID_VALUE);       /* still mapped */
    CU_EXPECT(cuMemSetAccess(va, GRAN, &acc, 1), CUDA_ERROR_INVALID_VALUE);    /* not mapped */
    /* released while mapped: the pages stay until the unmap */
    CU_OK(cuMemRelease(h));
    CU_EXPECT(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemcpyDtoH(&out, va + GRAN + 8, 4));
    assert_int_equal(out, 5);
    CU_OK(cuMemUnmap(va + GRAN, GRAN));
    CU_EXPECT(cuMemcpyDtoH(&out, va + GRAN + 8, 4), CUDA_ERROR_INVALID_VALUE); /* unmapped */
    CU_OK(cuMemAddressFree(va, 2 * GRAN));
    CU_EXPECT(cuMemAddressFree(va, 2 * GRAN), CUDA_ERROR_INVALID_VALUE);
    prop.location.id = 99;
    CU_EXPECT(cuMemCreate(&h, GRAN, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
    prop.location.id = 0;
    CU_EXPECT(cuMemCreate(&h, 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuMemAddressReserve(&va, 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
}

/* child: write a mapped, accessible range, then read it from the host */
static int child_vmm_deref(void)
{
    CUcontext c;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp prop = prop_dev(0);
    CUmemAccessDesc acc = rw_dev(0);
    int v = 4321;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) || cuMemAddressReserve(&va, GRAN, 0, 0, 0) ||
        cuMemCreate(&h, GRAN, &prop, 0) || cuMemMap(va, GRAN, 0, h, 0) || cuMemSetAccess(va, GRAN, &acc, 1) ||
        cuMemcpyHtoD(va, &v, sizeof v) || cuCtxSynchronize())
        return 3;
    volatile int *hostp = (volatile int *)(uintptr_t)va;
    return *hostp == 4321 ? 0 : 4;
}

static void test_vmm_strict(void **state)
{
    (void)state;
    int st = hc_t_rerun("--vmm-deref", NULL, NULL);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV)
        fail_msg("strict mode: host dereference of a mapped VMM range should die of SIGSEGV; child status 0x%x", st);
    st = hc_t_rerun("--vmm-deref", "HOSTCUDA_STRICT=0", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("HOSTCUDA_STRICT=0: the mapped range should read 4321; child status 0x%x", st);
}

static void bump(void *user)
{
    (*(int *)user)++;
}

static void test_capture_replay(void **state)
{
    (void)state;
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 64));
    CU_OK(cuMemsetD32(d, 0, 16));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    CU_EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph gr;
    CU_EXPECT(cuStreamEndCapture(s, &gr), CUDA_ERROR_ILLEGAL_STATE);
    int calls = 0, out = -1;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_EXPECT(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CU_OK(cuLaunchHostFunc(s, bump, &calls));           /* recorded, not run */
    CU_OK(cuMemsetD32Async(d, 9, 16, s));
    assert_int_equal(calls, 0);
    CU_OK(cuMemcpyDtoH(&out, d, 4));
    assert_int_equal(out, 0);
    CU_OK(cuStreamEndCapture(s, &gr));
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    CUgraphExec x;
    CU_OK(cuGraphInstantiate(&x, gr, 0));
    CU_OK(cuGraphDestroy(gr));                           /* the exec keeps its own reference */
    for (int i = 0; i < 3; i++)
        CU_OK(cuGraphLaunch(x, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(calls, 3);
    CU_OK(cuMemcpyDtoH(&out, d, 4));
    assert_int_equal(out, 9);
    CU_OK(cuGraphExecDestroy(x));
    CU_EXPECT(cuGraphExecDestroy(x), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuGraphDestroy(gr), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(d));
    CU_OK(cuStreamDestroy(s));
}

/* child: CUDA_VISIBLE_DEVICES=5,2 -> two devices, ordinal 0 is device 5 */
static int child_visible(void)
{
    int n = 0, bus0 = 0, bus1 = 0;
    char name[64];
    CUdevice d;
    if (cuInit(0) || cuDeviceGetCount(&n) || n != 2)
        return 3;
    if (cuDeviceGetAttribute(&bus0, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0) || bus0 != 0x18 + 5 ||
        cuDeviceGetAttribute(&bus1, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1) || bus1 != 0x18 + 2)
        return 4;
    if (cuDeviceGetName(name, sizeof name, 0) || !strstr(name, "(hostcuda 5)"))
        return 5;
    if (cuDeviceGetByPCIBusId(&d, "0000:1A:00.0") || d != 1 || cuDeviceGetByPCIBusId(&d, "0000:18:00.0") !=
        CUDA_ERROR_INVALID_DEVICE)
        return 6;
    return 0;
}

static void test_visible_devices(void **state)
{
    (void)state;
    int st = hc_t_rerun("--visible", "CUDA_VISIBLE_DEVICES=5,2", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("CUDA_VISIBLE_DEVICES=5,2 not honoured (child status 0x%x)", st);
    st = hc_t_rerun("--visible", "CUDA_VISIBLE_DEVICES=5,x,2", NULL); /* the list ends at x */
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 3)
        fail_msg("CUDA_VISIBLE_DEVICES=5,x,2 should show one device (child status 0x%x, want exit 3)", st);
}

int main(int argc, char **argv)
{
    hc_t_init(argv[0]);
    if (argc > 1 && !strcmp(argv[1], "--vmm-deref"))
        return child_vmm_deref();
    if (argc > 1 && !strcmp(argv[1], "--visible"))
        return child_visible();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vmm_map_access_copy),
        cmocka_unit_test(test_vmm_strict),
        cmocka_unit_test(test_capture_replay),
        cmocka_unit_test(test_visible_devices),
    };
    return cmocka_run_group_tests_name("hostcuda vmm and graphs", tests, hc_t_setup_primary, hc_t_teardown_primary);
}
