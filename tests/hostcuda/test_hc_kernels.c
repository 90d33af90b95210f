/* test_hc_kernels.c — proves hostcuda runs kernels written once with ash_kernel.h: it loads the
 * nvcc-built PTX (modules and libraries, from memory and from file), reports parameter offsets and
 * sizes and mangled names, launches through CUfunction and CUkernel handles with kernelParams or
 * `extra`, copies parameter values at launch time, answers bad launches and missing host kernels
 * with the driver's error codes, and serves PTX .global/.const variables.
 * Needs build/tests/hostcuda/test_kernels.ptx and libtest_kernels_host.so next to this binary.
 */
#include "test_hc_util.h"

#include <sys/stat.h>

static char ptx_path[PATH_MAX + 64];
static char *ptx_text;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    fstat(fileno(f), &st);
    char *b = calloc(1, (size_t)st.st_size + 1);
    if (b && fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static int setup(void **state)
{
    static char lib[PATH_MAX + 64];   /* putenv keeps the pointer */
    char dir[PATH_MAX];
    /* both files are built next to this binary by tests/hostcuda/module.mk */
    hc_t_self_dir(dir, sizeof dir);
    snprintf(ptx_path, sizeof ptx_path, "%s/test_kernels.ptx", dir);
    snprintf(lib, sizeof lib, "HOSTCUDA_KERNEL_LIBS=%s/libtest_kernels_host.so", dir);
    putenv(lib);   /* read by hostcuda on the first module load */
    ptx_text = slurp(ptx_path);
    if (!ptx_text) {
        fprintf(stderr, "cannot read %s\n", ptx_path);
        return -1;
    }
    return hc_t_setup_primary(state);
}

static int teardown(void **state)
{
    free(ptx_text);
    return hc_t_teardown_primary(state);
}

static void test_fill_with_params(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction fill;
    CU_OK(cuModuleLoadData(&mod, ptx_text));
    CU_OK(cuModuleGetFunction(&fill, mod, "hc_fill"));
    enum { N = 1000 };
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, N * sizeof(float)));
    CU_OK(cuMemsetD32(d, 0, N));
    float value = 2.5f;
    int n = N - 10;
    void *args[] = {&d, &value, &n};
    CU_OK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    float out[N];
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    for (int i = 0; i < N; i++) {
        float want = i < N - 10 ? 2.5f : 0.0f;
        if (out[i] != want)
            fail_msg("hc_fill: out[%d] = %g, expected %g", i, (double)out[i], (double)want);
    }
    CU_OK(cuMemFree(d));
    CU_OK(cuModuleUnload(mod));
}

static void test_param_info_and_extra(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction mixed, saxpy;
    CU_OK(cuModuleLoadData(&mod, ptx_text));
    CU_OK(cuModuleGetFunction(&mixed, mod, "hc_mixed"));
    static const size_t want_off[] = {0, 8, 10, 12, 16, 24}, want_size[] = {8, 1, 2, 4, 8, 8};
    for (size_t i = 0; i < 6; i++) {
        size_t off = 99, size = 99;
        CU_OK(cuFuncGetParamInfo(mixed, i, &off, &size));
        if (off != want_off[i] || size != want_size[i])
            fail_msg("hc_mixed param %zu: offset %zu size %zu, expected %zu %zu", i, off, size, want_off[i],
                     want_size[i]);
    }
    size_t off, size;
    CU_EXPECT(cuFuncGetParamInfo(mixed, 6, &off, &size), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuFuncGetParamInfo((CUfunction)0x42, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);

    /* kernelParams: each value is copied with its own size */
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 5 * sizeof(long long)));
    char c = -7;
    short sh = 300;
    int i32 = -100000;
    double dbl = 12345.0;
    long long ll = 1LL << 40;
    void *args[] = {&out, &c, &sh, &i32, &dbl, &ll};
    CU_OK(cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    long long got[5];
    CU_OK(cuMemcpyDtoH(got, out, sizeof got));
    assert_int_equal(got[0], -7);
    assert_int_equal(got[1], 300);
    assert_int_equal(got[2], -100000);
    assert_int_equal(got[3], 12345);
    assert_int_equal(got[4], 1LL << 40);

    /* `extra`: one buffer laid out by the offsets cuFuncGetParamInfo reports */
    CU_OK(cuModuleGetFunction(&saxpy, mod, "hc_saxpy"));
    enum { N = 64 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    CUdeviceptr dx, dy;
    CU_OK(cuMemAlloc(&dx, sizeof x));
    CU_OK(cuMemAlloc(&dy, sizeof y));
    CU_OK(cuMemcpyHtoD(dx, x, sizeof x));
    CU_OK(cuMemcpyHtoD(dy, y, sizeof y));
    unsigned char buf[32] = {0};
    float a = 3.0f;
    int n = N;
    const void *vals[] = {&dy, &dx, &a, &n};
    size_t end = 0;
    for (size_t i = 0; i < 4; i++) {
        CU_OK(cuFuncGetParamInfo(saxpy, i, &off, &size));
        memcpy(buf + off, vals[i], size);
        end = off + size;
    }
    assert_int_equal(end, 24);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &end, CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(saxpy, 1, 1, 1, N, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuMemcpyDtoH(y, dy, sizeof y));
    for (int i = 0; i < N; i++)
        if (y[i] != 3.0f * (float)i + 1.0f)
            fail_msg("hc_saxpy via extra: y[%d] = %g, expected %g", i, (double)y[i], 3.0 * i + 1.0);
    size_t small = 8;
    void *extra_small[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                           CU_LAUNCH_PARAM_END};
    CU_EXPECT(cuLaunchKernel(saxpy, 1, 1, 1, N, 1, 1, 0, NULL, NULL, extra_small), CUDA_ERROR_INVALID_VALUE);
    void *pargs[] = {&dy, &dx, &a, &n};
    CU_EXPECT(cuLaunchKernel(saxpy, 1, 1, 1, N, 1, 1, 0, NULL, pargs, extra), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchKernel(saxpy, 1, 1, 1, N, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(dx));
    CU_OK(cuMemFree(dy));
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

static void test_names_and_attributes(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction scale;
    CU_OK(cuModuleLoad(&mod, ptx_path));
    CU_OK(cuModuleGetFunction(&scale, mod, "_Z8hc_scalePfif"));
    const char *name = NULL;
    CU_OK(cuFuncGetName(&name, scale));
    assert_string_equal(name, "_Z8hc_scalePfif");
    CU_EXPECT(cuFuncGetName(NULL, scale), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuFuncGetName(&name, (CUfunction)0x10), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuModuleGetFunction(&scale, mod, "hc_scale"), CUDA_ERROR_NOT_FOUND);   /* unmangled */
    CU_OK(cuModuleGetFunction(&scale, mod, "_Z8hc_scalePfif"));
    CUmodule owner;
    CU_OK(cuFuncGetModule(&owner, scale));
    assert_ptr_equal(owner, mod);
    int v = 0;
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, scale));
    assert_int_equal(v, 1024);
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, scale));
    assert_int_equal(v, 49152);
    CU_OK(cuFuncSetAttribute(scale, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, scale));
    assert_int_equal(v, 100000);
    CU_EXPECT(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, scale), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, scale), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuFuncSetCacheConfig(scale, CU_FUNC_CACHE_PREFER_L1));

    CUdeviceptr p;
    float vals[4] = {1, 2, 3, 4};
    CU_OK(cuMemAlloc(&p, sizeof vals));
    CU_OK(cuMemcpyHtoD(p, vals, sizeof vals));
    int n = 4;
    float s = 0.5f;
    void *args[] = {&p, &n, &s};
    CU_OK(cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 65536, NULL, args, NULL));   /* within the opt-in */
    CU_EXPECT(cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 200000, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemcpyDtoH(vals, p, sizeof vals));
    assert_true(vals[0] == 0.5f && vals[3] == 2.0f);
    CU_OK(cuMemFree(p));
    CU_OK(cuModuleUnload(mod));
    CU_EXPECT(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
}

static void test_library_and_kernel_handles(void **state)
{
    (void)state;
    CUlibrary lib, lib2;
    CUkernel k;
    CU_OK(cuLibraryLoadData(&lib, ptx_text, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetKernel(&k, lib, "hc_fill"));
    const char *name = NULL;
    CU_OK(cuKernelGetName(&name, k));
    assert_string_equal(name, "hc_fill");
    size_t off = 0, size = 0;
    CU_OK(cuKernelGetParamInfo(k, 1, &off, &size));
    assert_int_equal(off, 8);
    assert_int_equal(size, 4);
    CU_EXPECT(cuKernelGetParamInfo(k, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
    int v;
    CU_OK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0));
    assert_int_equal(v, 1024);
    CU_EXPECT(cuKernelGetName(&name, (CUkernel)0x77), CUDA_ERROR_INVALID_HANDLE);

    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 16 * sizeof(float)));
    float val = 9.0f;
    int n = 16;
    void *args[] = {&d, &val, &n};
    /* a CUkernel is accepted wherever a CUfunction is */
    CU_OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL));
    float out[16];
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    assert_true(out[0] == 9.0f && out[15] == 9.0f);

    CUfunction f;
    CU_OK(cuKernelGetFunction(&f, k));
    val = 4.0f;
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL));
    CUmodule m;
    CUfunction f2;
    CU_OK(cuLibraryGetModule(&m, lib));
    CU_OK(cuModuleGetFunction(&f2, m, "hc_fill"));
    assert_ptr_equal(f, f2);
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    assert_true(out[7] == 4.0f);

    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 16;
    cfg.blockDimY = cfg.blockDimZ = 1;
    val = 5.0f;
    CU_OK(cuLaunchKernelEx(&cfg, (CUfunction)k, args, NULL));
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    assert_true(out[3] == 5.0f);
    CU_EXPECT(cuLaunchKernelEx(NULL, f, args, NULL), CUDA_ERROR_INVALID_VALUE);
    val = 6.0f;
    CU_OK(cuLaunchCooperativeKernel(f, 1, 1, 1, 16, 1, 1, 0, NULL, args));
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    assert_true(out[3] == 6.0f);

    CU_OK(cuLibraryLoadFromFile(&lib2, ptx_path, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k2;
    CU_OK(cuLibraryGetKernel(&k2, lib2, "_Z8hc_scalePfif"));
    CU_EXPECT(cuLibraryLoadFromFile(&lib2, "/nonexistent/x.ptx", NULL, NULL, 0, NULL, NULL, 0),
              CUDA_ERROR_FILE_NOT_FOUND);
    CU_OK(cuLibraryUnload(lib2));
    CU_EXPECT(cuLibraryUnload(lib2), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuLaunchKernel((CUfunction)k2, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);

    CU_OK(cuMemFree(d));
    CU_OK(cuLibraryUnload(lib));
    CU_EXPECT(cuLaunchKernel((CUfunction)k, 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuLaunchKernel(f, 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
}

static void test_missing_and_bad(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction f;
    CU_OK(cuModuleLoadData(&mod, ptx_text));
    /* in the PTX, but no hostcuda_kernel_hc_no_host_impl anywhere: with HOSTCUDA_EXEC=twin that
     * fails here (with a stderr line); otherwise the interpreter runs it from its PTX */
    const char *exec = getenv("HOSTCUDA_EXEC");
    int twin_only = exec && !strcmp(exec, "twin");
    if (twin_only) {
        CU_EXPECT(cuModuleGetFunction(&f, mod, "hc_no_host_impl"), CUDA_ERROR_NOT_FOUND);
    } else {
        CU_OK(cuModuleGetFunction(&f, mod, "hc_no_host_impl"));
        CUdeviceptr dp;
        int got = 0;
        CU_OK(cuMemAlloc(&dp, sizeof got));
        CU_OK(cuMemsetD8(dp, 0, sizeof got));
        void *pargs[] = {&dp};
        CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, pargs, NULL));
        CU_OK(cuMemcpyDtoH(&got, dp, sizeof got));
        assert_int_equal(got, 1);
        CU_OK(cuMemFree(dp));
    }
    CU_EXPECT(cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    CU_EXPECT(cuModuleGetFunction(NULL, mod, "hc_fill"), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuModuleGetFunction(&f, (CUmodule)0x5, "hc_fill"), CUDA_ERROR_INVALID_HANDLE);
    CUlibrary lib;
    CUkernel k;
    CU_OK(cuLibraryLoadData(&lib, ptx_text, NULL, NULL, 0, NULL, NULL, 0));
    if (twin_only)
        CU_EXPECT(cuLibraryGetKernel(&k, lib, "hc_no_host_impl"), CUDA_ERROR_NOT_FOUND);
    else
        CU_OK(cuLibraryGetKernel(&k, lib, "hc_no_host_impl"));
    CU_OK(cuLibraryUnload(lib));

    CU_OK(cuModuleGetFunction(&f, mod, "hc_count_threads"));
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 4));
    void *args[] = {&d};
    CU_EXPECT(cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchKernel(f, 1, 1, 1, 0, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuLaunchKernel((CUfunction)0x1234, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, (CUstream)0x99, args, NULL), CUDA_ERROR_INVALID_HANDLE);
    /* every (block, thread) runs once: 2*3*1 blocks of 4*2*2 threads */
    CU_OK(cuMemsetD32(d, 0, 1));
    CU_OK(cuLaunchKernel(f, 2, 3, 1, 4, 2, 2, 0, NULL, args, NULL));
    int count = 0;
    CU_OK(cuMemcpyDtoH(&count, d, 4));
    assert_int_equal(count, 96);
    CU_OK(cuMemFree(d));
    CU_OK(cuModuleUnload(mod));

    CU_EXPECT(cuModuleLoadData(&mod, "this is not PTX"), CUDA_ERROR_INVALID_IMAGE);
    CU_EXPECT(cuModuleLoadData(&mod, ""), CUDA_ERROR_INVALID_IMAGE);
    static const unsigned char cubin[8] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};   /* not NUL-terminated text */
    CU_EXPECT(cuModuleLoadData(&mod, cubin), CUDA_ERROR_INVALID_IMAGE);
    CU_EXPECT(cuModuleLoadData(&mod, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuModuleLoadData(NULL, ptx_text), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuModuleLoad(&mod, "/nonexistent/file.ptx"), CUDA_ERROR_FILE_NOT_FOUND);
    char info[64] = "x", err[64] = "x";
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *ovals[] = {info, (void *)(uintptr_t)sizeof info, err, (void *)(uintptr_t)sizeof err};
    CU_OK(cuModuleLoadDataEx(&mod, ptx_text, 4, opts, ovals));
    assert_int_equal(info[0], 0);
    assert_int_equal((uintptr_t)ovals[1], 0);
    CU_OK(cuModuleUnload(mod));
}

/* parameter values are copied when the launch is queued, not when it runs */
static void test_params_copied_at_launch(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction slow, fill;
    CU_OK(cuModuleLoadData(&mod, ptx_text));
    CU_OK(cuModuleGetFunction(&slow, mod, "hc_slow_store"));
    CU_OK(cuModuleGetFunction(&fill, mod, "hc_fill"));
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr flag, data;
    CU_OK(cuMemAlloc(&flag, 4));
    CU_OK(cuMemAlloc(&data, 4 * sizeof(float)));
    CU_OK(cuMemsetD32(flag, 0, 1));
    CU_OK(cuMemsetD32(data, 0, 4));
    CU_OK(cuCtxSynchronize());
    int value = 77, usec = 150000;
    void *sargs[] = {&flag, &value, &usec};
    CU_OK(cuLaunchKernel(slow, 1, 1, 1, 1, 1, 1, 0, s, sargs, NULL));
    float fv = 1.5f;
    int n = 4;
    void *fargs[] = {&data, &fv, &n};
    CU_OK(cuLaunchKernel(fill, 1, 1, 1, 4, 1, 1, 0, s, fargs, NULL));
    fv = -1.0f;   /* too late to matter */
    value = 0;
    int *pinned;
    CU_OK(cuMemAllocHost((void **)&pinned, 4));
    *pinned = -1;
    CU_OK(cuMemcpyDtoHAsync(pinned, flag, 4, s));
    assert_int_equal(*(volatile int *)pinned, -1);   /* the slow kernel is still running */
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*pinned, 77);
    float out[4];
    CU_OK(cuMemcpyDtoH(out, data, sizeof out));
    assert_true(out[0] == 1.5f && out[3] == 1.5f);
    /* per-thread-stream launch variant */
    CUresult (*launch_ptsz)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void **, void **);
    CU_OK(cuGetProcAddress("cuLaunchKernel", (void **)&launch_ptsz, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    fv = 8.0f;
    CU_OK(launch_ptsz(fill, 1, 1, 1, 4, 1, 1, 0, NULL, fargs, NULL));
    CU_OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    CU_OK(cuMemcpyDtoH(out, data, sizeof out));
    assert_true(out[2] == 8.0f);
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFree(flag));
    CU_OK(cuMemFree(data));
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuModuleUnload(mod));
}

static const char globals_ptx[] =
    "//\n// hand-written PTX with module-scope variables\n//\n"
    ".version 8.0\n.target sm_80\n.address_size 64\n\n"
    ".visible .global .align 4 .f32 g_scale = 0f40000000;\n"
    ".global .align 4 .b8 g_arr[40];\n"
    ".visible .const .align 4 .u32 g_tab[3] = {1, 2, 3};\n"
    ".visible .global .align 8 .u64 g_neg = -5;\n"
    ".extern .global .align 4 .u32 g_elsewhere;\n"
    ".visible .entry hc_local_twice(\n\t.param .u64 hc_local_twice_param_0\n)\n{\n\tret;\n}\n";

/* host implementation found through RTLD_DEFAULT (this binary is linked with -rdynamic) */
__attribute__((visibility("default"))) void hostcuda_kernel_hc_local_twice(const void *dims, void **params);
void hostcuda_kernel_hc_local_twice(const void *dims, void **params)
{
    (void)dims;
    int *p = *(int **)params[0];
    p[0] *= 2;
}

static void test_globals_and_default_lookup(void **state)
{
    (void)state;
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, globals_ptx));
    CUdeviceptr g;
    size_t bytes = 0;
    CU_OK(cuModuleGetGlobal(&g, &bytes, mod, "g_scale"));
    assert_int_equal(bytes, 4);
    float f = 0;
    CU_OK(cuMemcpyDtoH(&f, g, 4));
    assert_true(f == 2.0f);
    CU_OK(cuModuleGetGlobal(&g, &bytes, mod, "g_arr"));
    assert_int_equal(bytes, 40);
    CU_OK(cuModuleGetGlobal(NULL, &bytes, mod, "g_tab"));
    assert_int_equal(bytes, 12);
    unsigned int tab[3];
    CU_OK(cuModuleGetGlobal(&g, NULL, mod, "g_tab"));
    CU_OK(cuMemcpyDtoH(tab, g, sizeof tab));
    assert_true(tab[0] == 1 && tab[1] == 2 && tab[2] == 3);
    long long neg = 0;
    CU_OK(cuModuleGetGlobal(&g, NULL, mod, "g_neg"));
    CU_OK(cuMemcpyDtoH(&neg, g, 8));
    assert_int_equal(neg, -5);
    CU_EXPECT(cuModuleGetGlobal(&g, &bytes, mod, "g_elsewhere"), CUDA_ERROR_NOT_FOUND);
    CU_EXPECT(cuModuleGetGlobal(&g, &bytes, mod, "nope"), CUDA_ERROR_NOT_FOUND);
    CU_EXPECT(cuModuleGetGlobal(&g, &bytes, mod, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuModuleGetGlobal(&g, &bytes, (CUmodule)0x9, "g_arr"), CUDA_ERROR_INVALID_HANDLE);

    CUfunction twice;
    CU_OK(cuModuleGetFunction(&twice, mod, "hc_local_twice"));
    CUdeviceptr d;
    int v = 21;
    CU_OK(cuMemAlloc(&d, 4));
    CU_OK(cuMemcpyHtoD(d, &v, 4));
    void *args[] = {&d};
    CU_OK(cuLaunchKernel(twice, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuMemcpyDtoH(&v, d, 4));
    assert_int_equal(v, 42);
    CU_OK(cuMemFree(d));

    CUlibrary lib;
    CU_OK(cuLibraryLoadData(&lib, globals_ptx, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetGlobal(&g, &bytes, lib, "g_tab"));
    assert_int_equal(bytes, 12);
    CU_OK(cuLibraryUnload(lib));
    CU_OK(cuModuleUnload(mod));
}

/* by-value struct parameters appear in PTX as `.param .align A .b8 name[N]` */
static const char struct_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    "/* block comment with .entry fake_entry( inside */\n"
    ".visible .entry hc_struct_param(\n"
    "\t.param .u32 hc_struct_param_0,\n"
    "\t.param .align 8 .b8 hc_struct_param_1[24],\n"
    "\t.param .u16 hc_struct_param_2,\n"
    "\t.param .u64 .ptr .global .align 8 hc_struct_param_3\n"
    ")\n.maxntid 128, 1, 1\n{\n\tld.global.u32 %r1, [%rd1];\n\tret;\n}\n";

typedef struct {
    double a;
    long long b;
    int c;
} by_value;

__attribute__((visibility("default"))) void hostcuda_kernel_hc_struct_param(const void *dims, void **params);
void hostcuda_kernel_hc_struct_param(const void *dims, void **params)
{
    (void)dims;
    const by_value *v = params[1];
    long long *out = *(long long **)params[3];
    out[0] = *(unsigned int *)params[0];
    out[1] = (long long)v->a + v->b + v->c;
    out[2] = *(unsigned short *)params[2];
}

static void test_struct_params(void **state)
{
    (void)state;
    CUmodule mod;
    CUfunction f;
    CU_OK(cuModuleLoadData(&mod, struct_ptx));
    CU_EXPECT(cuModuleGetFunction(&f, mod, "fake_entry"), CUDA_ERROR_NOT_FOUND);   /* was in a comment */
    CU_OK(cuModuleGetFunction(&f, mod, "hc_struct_param"));
    static const size_t want_off[] = {0, 8, 32, 40}, want_size[] = {4, 24, 2, 8};
    for (size_t i = 0; i < 4; i++) {
        size_t off = 0, size = 0;
        CU_OK(cuFuncGetParamInfo(f, i, &off, &size));
        if (off != want_off[i] || size != want_size[i])
            fail_msg("param %zu: offset %zu size %zu, expected %zu %zu", i, off, size, want_off[i], want_size[i]);
    }
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 3 * sizeof(long long)));
    unsigned int u = 7;
    by_value v = {1.0, 20, 300};
    unsigned short h = 9;
    void *args[] = {&u, &v, &h, &out};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    long long got[3];
    CU_OK(cuMemcpyDtoH(got, out, sizeof got));
    assert_int_equal(got[0], 7);
    assert_int_equal(got[1], 321);
    assert_int_equal(got[2], 9);
    /* the same through `extra`: the buffer layout is the parameter offsets */
    unsigned char buf[48] = {0};
    v.b = 40;
    memcpy(buf + 0, &u, 4);
    memcpy(buf + 8, &v, sizeof v);
    memcpy(buf + 32, &h, 2);
    memcpy(buf + 40, &out, 8);
    size_t sz = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuMemcpyDtoH(got, out, sizeof got));
    assert_int_equal(got[1], 341);
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_t_init(argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_with_params),
        cmocka_unit_test(test_param_info_and_extra),
        cmocka_unit_test(test_names_and_attributes),
        cmocka_unit_test(test_library_and_kernel_handles),
        cmocka_unit_test(test_missing_and_bad),
        cmocka_unit_test(test_params_copied_at_launch),
        cmocka_unit_test(test_globals_and_default_lookup),
        cmocka_unit_test(test_struct_params),
    };
    return cmocka_run_group_tests_name("hostcuda kernels", tests, setup, teardown);
}
