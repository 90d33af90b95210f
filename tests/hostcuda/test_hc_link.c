/* test_hc_link.c — hostcuda's JIT linker (cuLink*) on hand-written PTX units.
 * Unit A calls `twice` and counts in `counter`, both defined in unit B; each unit has its own
 * internal function `bias` (A: x + 1, B: x * 10), so a link that resolved names across units
 * without regard to linkage gives other numbers. Cases: A + B link, load and run (values, the
 * global's size and contents, B's kernel); A alone is an undefined reference; two .visible
 * definitions of one name; a unit that does not parse names its unit and line; a cubin is refused;
 * cuLinkAddFile; stale and NULL handles. Prints one line per failed check; exit 0 when all pass.
 * Must not: depend on anything but the Driver API (libcuda.so.1 is hostcuda's here). */
#include <stdint.h>
#include <string.h>

#include "test_hc_check.h"

#define HEAD ".version 7.0\n.target sm_75\n.address_size 64\n"
#define CALL1(fn, in, out)                                                                      \
    "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], " in ";\n\t.param .b32 retval0;\n"        \
    "\tcall.uni (retval0), " fn ", (param0);\n\tld.param.b32 " out ", [retval0+0];\n\t}\n"

static const char unit_a[] =
    HEAD
    ".extern .global .align 4 .u32 counter;\n"
    ".extern .func (.param .b32 func_retval0) twice (.param .b32 twice_param_0);\n"
    ".func (.param .b32 func_retval0) bias (.param .b32 bias_param_0)\n"
    "{\n\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [bias_param_0];\n\tadd.s32 %r2, %r1, 1;\n"
    "\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n"
    ".visible .entry ka (.param .u64 ka_param_0)\n"
    "{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [ka_param_0];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 5;\n"
    CALL1("twice", "%r1", "%r2")
    CALL1("bias", "%r1", "%r3")
    "\tst.global.u32 [%rd2], %r2;\n\tst.global.u32 [%rd2+4], %r3;\n"
    "\tatom.global.add.u32 %r4, [counter], 1;\n\tst.global.u32 [%rd2+8], %r4;\n\tret;\n}\n";

static const char unit_b[] =
    HEAD
    ".visible .global .align 4 .u32 counter = 7;\n"
    ".func (.param .b32 func_retval0) bias (.param .b32 bias_param_0)\n"
    "{\n\t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [bias_param_0];\n\tmul.lo.s32 %r2, %r1, 10;\n"
    "\tst.param.b32 [func_retval0+0], %r2;\n\tret;\n}\n"
    ".visible .func (.param .b32 func_retval0) twice (.param .b32 twice_param_0)\n"
    "{\n\t.reg .b32 %r<4>;\n\tld.param.u32 %r1, [twice_param_0];\n\tadd.s32 %r2, %r1, %r1;\n"
    CALL1("bias", "%r2", "%r3")
    "\tst.param.b32 [func_retval0+0], %r3;\n\tret;\n}\n"
    ".visible .entry kb (.param .u64 kb_param_0)\n"
    "{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [kb_param_0];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 3;\n"
    CALL1("bias", "%r1", "%r2")
    "\tst.global.u32 [%rd2], %r2;\n\tret;\n}\n";

static const char unit_dup[] = HEAD ".visible .global .align 4 .u32 counter = 1;\n";
static const char unit_bad[] = HEAD ".visible .entry kc ()\n{\n\tret\n}\n";   /* no ';' after ret */

static char log_buf[1024];

static CUlinkState link_new(void)
{
    CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *v[2] = {log_buf, (void *)(uintptr_t)sizeof log_buf};
    CUlinkState s;
    CK(cuLinkCreate(2, o, v, &s));
    return s;
}

static void add_ptx(CUlinkState s, const char *text, const char *name)
{
    CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)text, strlen(text) + 1, name, 0, NULL, NULL));
}

/* a link of the given units that must fail at cuLinkComplete with `want` and a log containing `says` */
static void link_fails(const char *what, const char *const *units, int n, CUresult want, const char *says)
{
    CUlinkState s = link_new();
    for (int i = 0; i < n; i++)
        add_ptx(s, units[i], "unit");
    void *img;
    size_t size;
    CUresult rc = cuLinkComplete(s, &img, &size);
    EXPECT_EQ(what, rc, want);
    if (!strstr(log_buf, says)) {
        fprintf(stderr, "FAIL %s: the error log does not say '%s': '%s'\n", what, says, log_buf);
        fails++;
    }
    CK(cuLinkDestroy(s));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuCtxCreate(&ctx, NULL, 0, dev));

    /* A + B: B given as a file, as cuLinkAddFile reads one */
    char path[] = "/tmp/test_hc_link.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || fputs(unit_b, f) < 0 || fclose(f)) {
        fprintf(stderr, "FAIL cannot write %s\n", path);
        return 1;
    }
    CUlinkState s = link_new();
    add_ptx(s, unit_a, "unit_a");
    CK(cuLinkAddFile(s, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
    remove(path);
    void *img;
    size_t size;
    CK(cuLinkComplete(s, &img, &size));
    CK(cuModuleLoadData(&mod, img));
    CK(cuLinkDestroy(s));   /* the module keeps what it loaded */
    CUdeviceptr out = dalloc(16), g;
    size_t gsize;
    void *args[] = {&out};
    CK(cuLaunchKernel(fn("ka"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    uint32_t h[4] = {0}, counter = 0;
    CK(cuMemcpyDtoH(h, out, 12));
    EXPECT_EQ("ka: twice(5) through unit B's own bias (x * 10)", h[0], 100);
    EXPECT_EQ("ka: unit A's own bias(5) (x + 1)", h[1], 6);
    EXPECT_EQ("ka: counter before its atomic add (unit B's initialiser)", h[2], 7);
    CK(cuModuleGetGlobal(&g, &gsize, mod, "counter"));
    CK(cuMemcpyDtoH(&counter, g, 4));
    EXPECT_EQ("cuModuleGetGlobal(counter): size", gsize, 4);
    EXPECT_EQ("cuModuleGetGlobal(counter): after one add", counter, 8);
    CK(cuLaunchKernel(fn("kb"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(h, out, 4));
    EXPECT_EQ("kb: unit B's bias(3)", h[0], 30);
    CK(cuModuleUnload(mod));

    const char *alone[] = {unit_a};
    link_fails("unit A alone", alone, 1, CUDA_ERROR_INVALID_PTX,
               "undefined reference to variable counter (declared .extern in unit 1");
    const char *dup[] = {unit_b, unit_a, unit_dup};
    link_fails("counter defined twice", dup, 3, CUDA_ERROR_INVALID_PTX,
               "variable counter is defined .visible in units 1 and 3");
    const char *bad[] = {unit_b, unit_bad};
    link_fails("a unit that does not parse", bad, 2, CUDA_ERROR_INVALID_PTX, "ptx unit 2:7:1: ");

    s = link_new();
    EXPECT_EQ("a cubin input", cuLinkAddData(s, CU_JIT_INPUT_CUBIN, "\x7f" "ELF", 4, "x.cubin", 0, NULL, NULL),
              CUDA_ERROR_NOT_SUPPORTED);
    EXPECT_EQ("cuLinkComplete with nothing added", cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_VALUE);
    CK(cuLinkDestroy(s));
    EXPECT_EQ("cuLinkDestroy of a destroyed state", cuLinkDestroy(s), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ("cuLinkComplete(NULL)", cuLinkComplete(NULL, &img, &size), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ("cuLinkCreate(NULL)", cuLinkCreate(0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);

    CK(cuCtxDestroy(ctx));
    printf("%s\n", fails ? "test_hc_link: FAILED" : "test_hc_link: all checks passed");
    return fails != 0;
}
