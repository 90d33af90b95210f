/* test_hc_basic.c — proves hostcuda's init, device, context, error-name, cuGetProcAddress and
 * call-counter behaviour matches the CUDA 13 driver: NOT_INITIALIZED before cuInit, H100-like
 * device attributes, bad input answered with the driver's error codes, the per-thread/legacy and
 * versioned variants cuGetProcAddress hands out (each a distinct function), and per-symbol counters.
 * The first test must run before anything calls cuInit.
 */
#include "test_hc_util.h"

#include <dlfcn.h>
#include <pthread.h>

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p)
        fail_msg("dlsym(%s) failed: hostcuda does not export it", name);
    return p;
}

static void test_before_init(void **state)
{
    (void)state;
    int n = -1;
    CUcontext c;
    CUdeviceptr p;
    CU_EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    CU_EXPECT(cuCtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
    CU_EXPECT(cuMemAlloc(&p, 16), CUDA_ERROR_NOT_INITIALIZED);
    CU_EXPECT(cuDevicePrimaryCtxRetain(&c, 0), CUDA_ERROR_NOT_INITIALIZED);
    CU_EXPECT(cuStreamSynchronize(NULL), CUDA_ERROR_NOT_INITIALIZED);
    /* these work before cuInit */
    int v = 0;
    CU_OK(cuDriverGetVersion(&v));
    assert_int_equal(v, 13000);
    const char *s;
    CU_OK(cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &s));
    void *fn = NULL;
    CU_OK(cuGetProcAddress("cuInit", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    assert_ptr_equal(fn, sym("cuInit"));
    CU_EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuInit(0));
    CU_OK(cuInit(0));
    CU_OK(cuDeviceGetCount(&n));
}

static void test_devices(void **state)
{
    (void)state;
    const char *env = getenv("HOSTCUDA_DEVICES");
    int want = env ? atoi(env) : 8, n = 0;
    CU_OK(cuDeviceGetCount(&n));
    assert_int_equal(n, want);
    CU_EXPECT(cuDeviceGetCount(NULL), CUDA_ERROR_INVALID_VALUE);
    CUdevice d;
    CU_OK(cuDeviceGet(&d, n - 1));
    assert_int_equal(d, n - 1);
    CU_EXPECT(cuDeviceGet(&d, n), CUDA_ERROR_INVALID_DEVICE);
    CU_EXPECT(cuDeviceGet(&d, -1), CUDA_ERROR_INVALID_DEVICE);
    CU_EXPECT(cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE);

    char name[128];
    CU_OK(cuDeviceGetName(name, sizeof name, 0));
    assert_true(strlen(name) > 0);
    CU_EXPECT(cuDeviceGetName(name, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDeviceGetName(NULL, 10, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDeviceGetName(name, sizeof name, n), CUDA_ERROR_INVALID_DEVICE);

    static const struct { CUdevice_attribute a; int v; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9}, {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32}, {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132}, {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64}, {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        int v = -1;
        CU_OK(cuDeviceGetAttribute(&v, attrs[i].a, 0));
        if (v != attrs[i].v)
            fail_msg("attribute %d = %d, expected %d", (int)attrs[i].a, v, attrs[i].v);
    }
    int v;
    CU_EXPECT(cuDeviceGetAttribute(&v, (CUdevice_attribute)0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, n), CUDA_ERROR_INVALID_DEVICE);

    size_t total = 0;
    const char *mb = getenv("HOSTCUDA_MEM_BYTES");
    CU_OK(cuDeviceTotalMem(&total, 0));
    if (!mb)
        assert_int_equal(total, (size_t)1 << 30);
    CU_EXPECT(cuDeviceTotalMem(NULL, 0), CUDA_ERROR_INVALID_VALUE);

    CUuuid u0, u0b, u1;
    CU_OK(cuDeviceGetUuid(&u0, 0));
    CUresult (*uuid_v1)(CUuuid *, CUdevice) = (CUresult (*)(CUuuid *, CUdevice))sym("cuDeviceGetUuid");
    CU_OK(uuid_v1(&u0b, 0));
    assert_memory_equal(u0.bytes, u0b.bytes, 16);
    if (n > 1) {
        CU_OK(cuDeviceGetUuid(&u1, 1));
        assert_memory_not_equal(u0.bytes, u1.bytes, 16);
    }
    CU_EXPECT(cuDeviceGetUuid(NULL, 0), CUDA_ERROR_INVALID_VALUE);
}

static void test_primary_context(void **state)
{
    (void)state;
    unsigned int flags = 99;
    int active = 99;
    CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    assert_int_equal(active, 0);
    CUcontext a, b;
    CU_OK(cuDevicePrimaryCtxRetain(&a, 1));
    CU_OK(cuDevicePrimaryCtxRetain(&b, 1));
    assert_ptr_equal(a, b);
    CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    assert_int_equal(active, 1);
    CU_OK(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC));
    CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    assert_int_equal(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    CUresult (*set_v1)(CUdevice, unsigned int) = (CUresult (*)(CUdevice, unsigned int))sym("cuDevicePrimaryCtxSetFlags");
    CU_EXPECT(set_v1(1, 0), CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE);
    CU_EXPECT(cuDevicePrimaryCtxSetFlags(1, 0x10000), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuCtxPushCurrent(a));
    CUdevice d = -1;
    CU_OK(cuCtxGetDevice(&d));
    assert_int_equal(d, 1);
    CU_OK(cuCtxPopCurrent(NULL));
    CU_EXPECT(cuCtxDestroy(a), CUDA_ERROR_INVALID_CONTEXT);   /* primary: release, not destroy */
    CU_OK(cuDevicePrimaryCtxRelease(1));
    CU_OK(cuDevicePrimaryCtxRelease(1));
    CU_EXPECT(cuDevicePrimaryCtxRelease(1), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    assert_int_equal(active, 0);
    CU_OK(cuDevicePrimaryCtxReset(1));
    CU_EXPECT(cuDevicePrimaryCtxRetain(&a, 99), CUDA_ERROR_INVALID_DEVICE);
    CU_EXPECT(cuDevicePrimaryCtxRetain(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuDevicePrimaryCtxGetState(0, NULL, &active), CUDA_ERROR_INVALID_VALUE);
}

static void test_context_stack(void **state)
{
    (void)state;
    CUcontext cur = (CUcontext)1, c1, c2, popped;
    while (cuCtxPopCurrent(&popped) == CUDA_SUCCESS)
        ;
    CU_OK(cuCtxGetCurrent(&cur));
    assert_null(cur);
    CU_EXPECT(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
    CU_EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CUdevice d;
    CU_EXPECT(cuCtxGetDevice(&d), CUDA_ERROR_INVALID_CONTEXT);

    CU_OK(cuCtxCreate(&c1, NULL, 0, 0));   /* cuCtxCreate_v4 */
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, c1);
    CUresult (*create_v2)(CUcontext *, unsigned int, CUdevice) =
        (CUresult (*)(CUcontext *, unsigned int, CUdevice))sym("cuCtxCreate_v2");
    CU_OK(create_v2(&c2, 0, 1));
    CU_OK(cuCtxGetDevice(&d));
    assert_int_equal(d, 1);
    CU_OK(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c2);
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, c1);
    CU_OK(cuCtxPushCurrent(c2));
    CU_OK(cuCtxSetCurrent(c1));   /* replaces the top */
    CU_OK(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c1);
    CU_OK(cuCtxSynchronize());    /* c1 is current again (bottom of stack) */
    CU_OK(cuCtxDestroy(c2));
    CU_EXPECT(cuCtxDestroy(c2), CUDA_ERROR_INVALID_CONTEXT);
    CU_EXPECT(cuCtxPushCurrent(c2), CUDA_ERROR_INVALID_CONTEXT);
    CU_EXPECT(cuCtxSetCurrent(c2), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuCtxDestroy(c1));      /* current: also popped */
    CU_OK(cuCtxGetCurrent(&cur));
    assert_null(cur);

    CUresult (*create_v3)(CUcontext *, CUexecAffinityParam *, int, unsigned int, CUdevice) =
        (CUresult (*)(CUcontext *, CUexecAffinityParam *, int, unsigned int, CUdevice))sym("cuCtxCreate_v3");
    CU_OK(create_v3(&c1, NULL, 0, 0, 0));
    unsigned int fl = 1;
    CU_OK(cuCtxGetFlags(&fl));
    assert_int_equal(fl, 0);
    CU_OK(cuCtxDestroy(c1));
    CU_EXPECT(cuCtxCreate(NULL, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuCtxCreate(&c1, NULL, 0x10000, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuCtxCreate(&c1, NULL, 0, 42), CUDA_ERROR_INVALID_DEVICE);
    CU_OK(cuCtxSetCurrent(NULL));
}

static void *destroy_thread(void *arg)
{
    return (void *)(intptr_t)cuCtxDestroy((CUcontext)arg);
}

/* documented: a context destroyed while current to another thread gives that thread
 * CUDA_ERROR_CONTEXT_IS_DESTROYED until it pops it */
static void test_destroyed_elsewhere(void **state)
{
    (void)state;
    CUcontext c, popped;
    CU_OK(cuCtxCreate(&c, NULL, 0, 0));
    pthread_t t;
    void *rc;
    pthread_create(&t, NULL, destroy_thread, c);
    pthread_join(t, &rc);
    CU_OK((CUresult)(intptr_t)rc);
    CUdeviceptr p;
    CU_EXPECT(cuMemAlloc(&p, 16), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CU_EXPECT(cuCtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CU_EXPECT(cuCtxPushCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    CU_EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
}

/* a child forked after cuInit gets errors, not a hang on stream workers it does not have */
static void test_fork_child(void **state)
{
    (void)state;
    CUcontext c;
    CU_OK(cuDevicePrimaryCtxRetain(&c, 0));
    CU_OK(cuCtxPushCurrent(c));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        CUdeviceptr p;
        int ok = cuMemAlloc(&p, 16) == CUDA_ERROR_NOT_INITIALIZED && cuInit(0) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuStreamSynchronize(NULL) == CUDA_ERROR_NOT_INITIALIZED;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("forked child: CUDA calls should fail with CUDA_ERROR_NOT_INITIALIZED (status 0x%x)", st);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 16));   /* the parent is unaffected */
    CU_OK(cuMemFree(p));
    CU_OK(cuCtxPopCurrent(NULL));
    CU_OK(cuDevicePrimaryCtxRelease(0));
}

static void test_error_names(void **state)
{
    (void)state;
    const char *s = NULL;
    CU_OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
    assert_string_equal(s, "CUDA_ERROR_OUT_OF_MEMORY");
    CU_OK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
    assert_string_equal(s, "out of memory");
    CU_OK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "invalid argument");
    CU_OK(cuGetErrorName(CUDA_SUCCESS, &s));
    assert_string_equal(s, "CUDA_SUCCESS");
    CU_OK(cuGetErrorName(CUDA_ERROR_UNKNOWN, &s));
    s = "x";
    CU_EXPECT(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    assert_null(s);
    CU_EXPECT(cuGetErrorString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuGetErrorName(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
    int known = 0;
    for (int code = 0; code < 1000; code++) {
        const char *nm, *str;
        CUresult a = cuGetErrorName((CUresult)code, &nm), b = cuGetErrorString((CUresult)code, &str);
        assert_int_equal(a, b);
        if (a == CUDA_SUCCESS) {
            known++;
            assert_true(!strncmp(nm, "CUDA_", 5));
            assert_true(strlen(str) > 0);
        }
    }
    if (known != 101)   /* every code of CUDA 13.0's cudaError_enum */
        fail_msg("%d CUresult codes have names, expected 101", known);
}

typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void expect_proc(const char *base, int ver, cuuint64_t flags, const char *want)
{
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CUresult rc = cuGetProcAddress(base, &fn, ver, flags, &st);
    if (rc != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS)
        fail_msg("cuGetProcAddress(%s, %d, %llu) -> %s, status %d; expected %s", base, ver,
                 (unsigned long long)flags, hc_t_name(rc), (int)st, want);
    if (fn != sym(want)) {
        Dl_info di = {0};
        dladdr(fn, &di);
        fail_msg("cuGetProcAddress(%s, %d, %llu) gave %s, expected %s", base, ver, (unsigned long long)flags,
                 di.dli_sname ? di.dli_sname : "?", want);
    }
}

static void test_proc_address(void **state)
{
    (void)state;
    const cuuint64_t D = CU_GET_PROC_ADDRESS_DEFAULT, L = CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                     P = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    expect_proc("cuMemAlloc", 13000, D, "cuMemAlloc_v2");
    expect_proc("cuMemAlloc", 12000, P, "cuMemAlloc_v2");
    expect_proc("cuMemAlloc", 3010, D, "cuMemAlloc");
    expect_proc("cuCtxCreate", 13000, D, "cuCtxCreate_v4");
    expect_proc("cuCtxCreate", 12050, D, "cuCtxCreate_v4");
    expect_proc("cuCtxCreate", 12000, D, "cuCtxCreate_v3");
    expect_proc("cuCtxCreate", 11040, L, "cuCtxCreate_v3");
    expect_proc("cuCtxCreate", 11000, D, "cuCtxCreate_v2");
    expect_proc("cuCtxCreate", 3000, D, "cuCtxCreate");
    for (int v = 12000; v <= 13000; v += 1000) {
        expect_proc("cuMemcpyHtoD", v, D, "cuMemcpyHtoD_v2");
        expect_proc("cuMemcpyHtoD", v, L, "cuMemcpyHtoD_v2");
        expect_proc("cuMemcpyHtoD", v, P, "cuMemcpyHtoD_v2_ptds");
        expect_proc("cuMemcpyDtoHAsync", v, P, "cuMemcpyDtoHAsync_v2_ptsz");
        expect_proc("cuMemcpy", v, P, "cuMemcpy_ptds");
        expect_proc("cuMemcpy", v, L, "cuMemcpy");
        expect_proc("cuLaunchKernel", v, D, "cuLaunchKernel");
        expect_proc("cuLaunchKernel", v, P, "cuLaunchKernel_ptsz");
        expect_proc("cuStreamSynchronize", v, P, "cuStreamSynchronize_ptsz");
        expect_proc("cuMemsetD32", v, P, "cuMemsetD32_v2_ptds");
        expect_proc("cuMemAllocAsync", v, P, "cuMemAllocAsync_ptsz");
        expect_proc("cuStreamCreate", v, P, "cuStreamCreate");   /* no per-thread twin */
        expect_proc("cuDevicePrimaryCtxRelease", v, D, "cuDevicePrimaryCtxRelease_v2");
        expect_proc("cuDeviceGetUuid", v, D, "cuDeviceGetUuid_v2");
        expect_proc("cuGetProcAddress", v, D, "cuGetProcAddress_v2");
    }
    expect_proc("cuStreamGetCtx", 13000, P, "cuStreamGetCtx_v2_ptsz");
    expect_proc("cuStreamGetCtx", 12000, P, "cuStreamGetCtx_ptsz");
    expect_proc("cuStreamGetCtx", 12000, L, "cuStreamGetCtx");
    expect_proc("cuEventElapsedTime", 13000, D, "cuEventElapsedTime_v2");
    expect_proc("cuEventElapsedTime", 12000, D, "cuEventElapsedTime");
    expect_proc("cuGetProcAddress", 11030, D, "cuGetProcAddress");
    expect_proc("cuMemcpyHtoD", 6000, P, "cuMemcpyHtoD_v2");   /* per-thread twins start at 7.0 */
    expect_proc("cuMemHostRegister", 13000, D, "cuMemHostRegister_v2");
    expect_proc("cuMemHostRegister", 6000, D, "cuMemHostRegister");

    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st;
    CU_EXPECT(cuGetProcAddress("cuNoSuchFunction", &fn, 13000, D, &st), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(fn);
    fn = (void *)1;
    CU_EXPECT(cuGetProcAddress("cuMemAlloc_v2", &fn, 13000, D, &st), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(fn);
    fn = (void *)1;
    CU_EXPECT(cuGetProcAddress("cuMemAllocAsync", &fn, 11000, D, &st), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    assert_null(fn);
    CU_EXPECT(cuGetProcAddress("cuMemAlloc", &fn, 13000, D, NULL), CUDA_SUCCESS);   /* status optional */
    CU_EXPECT(cuGetProcAddress("cuMemAlloc", &fn, 99000, D, &st), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuGetProcAddress("cuMemAlloc", &fn, 13000, 4, &st), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuGetProcAddress(NULL, &fn, 13000, D, &st), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuGetProcAddress("cuMemAlloc", NULL, 13000, D, &st), CUDA_ERROR_INVALID_VALUE);

    /* the legacy 4-argument entry point gives the same answers */
    CUresult (*gpa4)(const char *, void **, int, cuuint64_t) =
        (CUresult (*)(const char *, void **, int, cuuint64_t))sym("cuGetProcAddress");
    CU_OK(gpa4("cuLaunchKernel", &fn, 12000, P));
    assert_ptr_equal(fn, sym("cuLaunchKernel_ptsz"));
    CU_EXPECT(gpa4("cuNoSuchFunction", &fn, 12000, P), CUDA_ERROR_NOT_FOUND);
    assert_null(fn);

    /* twins are distinct functions */
    const char *twins[][3] = {{"cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds"},
                              {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx"},
                              {"cuStreamDestroy", "cuStreamDestroy_v2", "cuStreamSynchronize_ptsz"},
                              {"cuMemsetD8Async", "cuMemsetD8Async_ptsz", "cuMemsetD8_v2_ptds"}};
    for (size_t i = 0; i < sizeof twins / sizeof *twins; i++) {
        void *a = sym(twins[i][0]), *b = sym(twins[i][1]), *c = sym(twins[i][2]);
        assert_true(a != b && b != c && a != c);
    }
}

/* child mode: with CUDA_API_PER_THREAD_DEFAULT_STREAM=1, DEFAULT lookups give the per-thread twin */
static int child_ptds_default(void)
{
    void *fn = NULL;
    if (cuGetProcAddress("cuLaunchKernel", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL) != CUDA_SUCCESS)
        return 2;
    return fn == dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz") ? 0 : 1;
}

static void test_proc_address_env_default(void **state)
{
    (void)state;
    int st = hc_t_rerun("--ptds-default", "CUDA_API_PER_THREAD_DEFAULT_STREAM=1", NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("with CUDA_API_PER_THREAD_DEFAULT_STREAM=1 the DEFAULT lookup of cuLaunchKernel was not "
                 "cuLaunchKernel_ptsz (child status 0x%x)", st);
}

static void test_call_counters(void **state)
{
    (void)state;
    hostcuda_reset_call_counts();
    assert_int_equal(hostcuda_call_count("cuDriverGetVersion"), 0);
    int v;
    for (int i = 0; i < 3; i++)
        cuDriverGetVersion(&v);
    cuDriverGetVersion(NULL);   /* failed calls count too */
    assert_int_equal(hostcuda_call_count("cuDriverGetVersion"), 4);
    assert_int_equal(hostcuda_call_count("cuMemAlloc_v2"), 0);
    assert_int_equal(hostcuda_call_count("cuNoSuchFunction"), 0);
    assert_int_equal(hostcuda_call_count(NULL), 0);
    CUresult (*sync_ptsz)(CUstream) = (CUresult (*)(CUstream))sym("cuStreamSynchronize_ptsz");
    sync_ptsz(NULL);
    assert_int_equal(hostcuda_call_count("cuStreamSynchronize_ptsz"), 1);
    assert_int_equal(hostcuda_call_count("cuStreamSynchronize"), 0);
    hostcuda_reset_call_counts();
    assert_int_equal(hostcuda_call_count("cuDriverGetVersion"), 0);
}

static void test_exports(void **state)
{
    (void)state;
    const void *tab = (void *)1;
    CUuuid id = {{0}};
    CU_EXPECT(cuGetExportTable(&tab, &id), CUDA_ERROR_NOT_SUPPORTED);
    assert_null(tab);
    CU_EXPECT(cuGetExportTable(NULL, &id), CUDA_ERROR_INVALID_VALUE);
    /* only cu* and hostcuda_* are exported */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    assert_null(dlsym(h, "hc_reg_add"));
    assert_null(dlsym(h, "hc_ndev"));
    assert_null(dlsym(h, "hc_ptx_parse"));
    assert_non_null(dlsym(h, "hostcuda_host_view"));
    Dl_info di;
    assert_true(dladdr(dlsym(h, "cuInit"), &di) && strstr(di.dli_fname, "libcuda.so.1"));
    dlclose(h);
}

int main(int argc, char **argv)
{
    hc_t_init(argv[0]);
    if (argc > 1 && !strcmp(argv[1], "--ptds-default"))
        return child_ptds_default();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_init),   /* must stay first */
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_primary_context),
        cmocka_unit_test(test_context_stack),
        cmocka_unit_test(test_destroyed_elsewhere),
        cmocka_unit_test(test_fork_child),
        cmocka_unit_test(test_error_names),
        cmocka_unit_test(test_proc_address),
        cmocka_unit_test(test_proc_address_env_default),
        cmocka_unit_test(test_call_counters),
        cmocka_unit_test(test_exports),
    };
    return cmocka_run_group_tests_name("hostcuda basic", tests, NULL, NULL);
}
