/* test_ptx_isa.c — proves hostcuda's PTX interpreter computes each instruction form of
 * isa_kernels.cu as the PTX ISA defines it: every kernel runs (HOSTCUDA_EXEC=ptx) on edge-case
 * operands (0, -0, subnormals, min/max normal, inf, NaN, shift counts past the width, INT_MIN, ...)
 * crossed with each other, plus seeded random ones, and each result is compared with a C reference
 * of the ISA's definition (isa_cases.c). Exact forms must match bit for bit (any NaN matches a NaN:
 * PTX does not define NaN payloads); .approx forms within the bound stated in their row; results
 * the ISA leaves unspecified (integer division by zero, slct on a NaN selector) are not compared,
 * but the kernel must still complete. One TAP case per instruction form, and a negative control:
 * add.rz.f32 checked against the round-to-nearest reference must be reported as different.
 * Usage: test_ptx_isa [PTX_FILE] [FILTER] (default: isa_kernels.ptx next to this binary; FILTER:
 * only kernels whose name contains it). Skips (77) when hostcuda has no interpreter.
 */
#include "isa_ref.h"
#include "ptxt.h"

#include <limits.h>
#include <unistd.h>

#include "isa_cases.h"

/* ---------------------------------------------------------------- operands */
static const uint64_t sp_u32[] = {0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 0x7f, 0x80, 0xff, 0x100, 0x7fff,
                                  0x8000, 0xffff, 0x10000, 0x12345678, 0x7fffffff, 0x80000000, 0x80000001,
                                  0xfffffffe, 0xffffffff, 0xdeadbeef, 0x00ff00ff, 0xff00ff00, 0x3210, 0x7654,
                                  0x89ab, 0xffffff80, 0xffff8000};
static const uint64_t sp_u64[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 0xffffffffull, 0x100000000ull, 0x7fffffffffffffffull,
                                  0x8000000000000000ull, 0x8000000000000001ull, 0xffffffffffffffffull,
                                  0xfffffffffffffffeull, 0x123456789abcdef0ull, 0x00000000ffffffffull,
                                  0xffffffff00000000ull, 0x0000000080000000ull, 0xffffffff80000000ull};
static const uint64_t sp_f32[] = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x40000000, 0x40400000,
                                  0x3fc00000, 0x40200000, 0xc0200000, 0x3effffff, 0x3f800001, 0x00000001, 0x80000001,
                                  0x007fffff, 0x00800000, 0x80800000, 0x000116c2, 0x7f7fffff, 0xff7fffff, 0x7f800000,
                                  0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x4b800000, 0x4b800001, 0x4f000000,
                                  0xcf000000, 0x4f800000, 0x5f800000, 0x477fe000, 0x477ff000, 0x38800000, 0x33800000,
                                  0x40490fdb, 0xc0490fdb, 0x3f7fffff, 0x7e800000, 0x01000000};
static const uint64_t sp_f64[] = {0, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
                                  0x3fe0000000000000ull, 0x4000000000000000ull, 0x3ff0000000000001ull,
                                  0x0000000000000001ull, 0x000fffffffffffffull, 0x0010000000000000ull,
                                  0x7fefffffffffffffull, 0xffefffffffffffffull, 0x7ff0000000000000ull,
                                  0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000000ull,
                                  0x43e0000000000000ull, 0xc3e0000000000000ull, 0x4330000000000001ull,
                                  0x3ff8000000000000ull, 0x400921fb54442d18ull, 0x3fd5555555555555ull,
                                  0x3ff0020000000001ull, 0x3ff001ffffffffffull, 0x40effdffffffffffull,
                                  0x3e70000000000001ull, 0x41e0000000000000ull, 0xc1e0000000200000ull};
static const uint64_t sp_f16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x4000, 0x3e00, 0x0001, 0x8001, 0x03ff,
                                  0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x3c01, 0x5bff, 0x1400};
static const uint64_t sp_bf16[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0x4000, 0x3fc0, 0x0001, 0x8001, 0x007f,
                                   0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x3f81, 0x4b80, 0x3400};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void specials(ty t, const uint64_t **v, int *n)
{
    switch (t) {
    case U16: case F16: *v = sp_f16; *n = (int)(sizeof sp_f16 / 8); break;
    case BF16: *v = sp_bf16; *n = (int)(sizeof sp_bf16 / 8); break;
    case U32: *v = sp_u32; *n = (int)(sizeof sp_u32 / 8); break;
    case U64: *v = sp_u64; *n = (int)(sizeof sp_u64 / 8); break;
    case F32: *v = sp_f32; *n = (int)(sizeof sp_f32 / 8); break;
    case F64: *v = sp_f64; *n = (int)(sizeof sp_f64 / 8); break;
    case H2: *v = sp_f16; *n = (int)(sizeof sp_f16 / 8); break;
    case BH2: *v = sp_bf16; *n = (int)(sizeof sp_bf16 / 8); break;
    }
}

/* a random operand: half of them "ordinary" values (small magnitudes), half raw bit patterns */
static uint64_t random_operand(ty t, int domain)
{
    uint64_t b = rnd();
    int ordinary = (int)(b & 1);
    b >>= 1;
    switch (t) {
    case U16: return b & 0xffff;
    case U32: return ordinary ? (b & 0x3f) : (b & 0xffffffff);
    case U64: return ordinary ? (b & 0x7f) : b;
    case F16: case BF16: return b & 0xffff;
    case H2: case BH2: return b & 0xffffffff;
    case F32: {
        float f;
        if (domain == 1)
            return bits_f32((float)((double)(b % 2000001) / 1000000.0 * 3.14159265358979) * (float)1);
        if (domain == 2 || ordinary) {
            f = (float)ldexp((double)(b & 0xffffff) / 16777216.0 + 0.5, (int)(b >> 24 & 15) - 8);
            if (domain != 2 && (b >> 40 & 1))
                f = -f;
            return bits_f32(f);
        }
        return b & 0xffffffff;
    }
    case F64:
        if (ordinary) {
            double d = ldexp((double)(b & 0xfffffffffffffull) / 4503599627370496.0 + 0.5, (int)(b >> 52 & 31) - 16);
            return bits_f64((b >> 60 & 1) ? -d : d);
        }
        return b;
    }
    return b;
}

/* n operand tuples: specials crossed (operands 0 and 1; later ones from the specials in turn),
 * then NRANDOM random tuples */
#define NRANDOM 1024
static int make_operands(const isa_case *c, uint64_t *in[4])
{
    const uint64_t *s0, *s1;
    int n0, n1, k = 0;
    specials(c->in[0], &s0, &n0);
    specials(c->nin > 1 ? c->in[1] : c->in[0], &s1, &n1);
    int cross = c->nin > 1 ? n0 * n1 : n0;
    for (int i = 0; i < cross; i++, k++) {
        for (int j = 0; j < c->nin; j++) {
            const uint64_t *s;
            int ns;
            specials(c->in[j], &s, &ns);
            uint64_t v = j == 0 ? s0[c->nin > 1 ? i / n1 : i] : j == 1 ? s1[i % n1] : s[(i * 7 + j * 3) % ns];
            if (c->in[j] == H2 || c->in[j] == BH2)   /* pair: the special in one half, its neighbour in the other */
                v = v | s[(i + j + 1) % ns] << 16;
            in[j][k] = v;
        }
        if (c->domain == 1 && fabsf(f32_of(in[0][k])) > 3.14159265f)   /* outside the bound's range */
            in[0][k] = bits_f32(0.5f);
    }
    for (int i = 0; i < NRANDOM; i++, k++)
        for (int j = 0; j < c->nin; j++)
            in[j][k] = random_operand(c->in[j], j == 0 ? c->domain : 0);
    return k;
}

/* ---------------------------------------------------------------- comparison */
static int width_of(ty t) { return t == U16 || t == F16 || t == BF16 ? 2 : t == U64 || t == F64 ? 8 : 4; }

static double as_double(uint64_t b, ty t)
{
    switch (t) {
    case F32: return f32_of(b);
    case F64: return f64_of(b);
    case F16: return narrow_to_f64((uint32_t)b & 0xffff, FMT_F16);
    case BF16: return narrow_to_f64((uint32_t)b & 0xffff, FMT_BF16);
    default: return (double)b;
    }
}
static int is_float(ty t) { return t == F32 || t == F64 || t == F16 || t == BF16; }

/* ordered integer image of a float's bits, so that adjacent floats differ by 1 */
static int64_t ordered(uint64_t b, ty t)
{
    int64_t v;
    if (t == F64) {
        v = (int64_t)b;
        return v < 0 ? INT64_MIN - v : v;
    }
    int bits = t == F32 ? 32 : 16;
    uint64_t m = bits == 32 ? 0xffffffffu : 0xffff;
    b &= m;
    int64_t mag = (int64_t)(b & (m >> 1));
    return (b >> (bits - 1)) ? -mag : mag;
}

static int same_scalar(uint64_t got, uint64_t want, ty t, const isa_case *c, int flags)
{
    uint64_t m = width_of(t) == 8 ? ~0ull : width_of(t) == 4 ? 0xffffffffu : 0xffff;
    got &= m;
    want &= m;
    if (!is_float(t))
        return got == want;
    double g = as_double(got, t), w = as_double(want, t);
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g);
    if ((flags & F_ZSIGN) && g == 0 && w == 0)
        return 1;
    if (c->cmp == C_EXACT || isinf(w) || isinf(g))
        return got == want;
    int64_t d = ordered(got, t) - ordered(want, t);
    if (d < 0)
        d = -d;
    switch (c->cmp) {
    case C_ULP: return d <= (int64_t)c->tol;
    case C_REL: return fabs(g - w) <= c->tol * fabs(w) || d <= 1;
    default: return fabs(g - w) <= c->tol || d <= c->domain + 1;
    }
}

static int same(uint64_t got, uint64_t want, const isa_case *c, int flags)
{
    if (flags & F_ANY)
        return 1;
    if (c->out == H2 || c->out == BH2) {
        ty h = c->out == H2 ? F16 : BF16;
        return same_scalar(got, want, h, c, flags) && same_scalar(got >> 16, want >> 16, h, c, flags);
    }
    return same_scalar(got, want, c->out, c, flags);
}

/* ---------------------------------------------------------------- running */
static const char *ptx_text;

/* runs case c on the interpreter; returns the number of mismatches (-1: could not run) */
static int run_case(const isa_case *c, ref_fn ref, int quiet)
{
    enum { CAP = 4096 };
    static uint64_t in[4][CAP], out[CAP];
    uint64_t *ins[4] = {in[0], in[1], in[2], in[3]};
    memset(in, 0, sizeof in);
    int n = make_operands(c, ins);
    char *mtext = ptxt_entry_module(ptx_text, c->kernel);
    if (!mtext) {
        printf("# %s: no such entry in the PTX file\n", c->kernel);
        return -1;
    }
    CUmodule mod;
    CUfunction fn;
    CUresult rc = ptxt_get(mtext, c->kernel, &mod, &fn);
    free(mtext);
    if (rc != CUDA_SUCCESS) {
        printf("# %s (%s): the module did not load: %s\n", c->kernel, c->insn, ptxt_err(rc));
        return -1;
    }
    CUdeviceptr d[5];
    for (int j = 0; j < 5; j++)
        PTXT_CHECK(cuMemAlloc(&d[j], (size_t)n * 8));
    for (int j = 0; j < 4; j++)
        PTXT_CHECK(cuMemcpyHtoD(d[j], in[j], (size_t)n * 8));
    void *args[] = {&d[0], &d[1], &d[2], &d[3], &d[4], &n};
    rc = cuLaunchKernel(fn, (unsigned)(n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL);
    if (rc == CUDA_SUCCESS)
        rc = cuCtxSynchronize();
    if (rc != CUDA_SUCCESS) {
        printf("# %s (%s): the launch failed: %s\n", c->kernel, c->insn, ptxt_err(rc));
        for (int j = 0; j < 5; j++)
            cuMemFree(d[j]);
        cuModuleUnload(mod);
        CUresult after = cuCtxSynchronize();
        if (after != CUDA_SUCCESS) {   /* sticky: the remaining cases go on in a fresh process */
            printf("# the context stays failed (%s): the next cases run in a new process\n", ptxt_err(after));
            return -2;
        }
        return -1;
    }
    PTXT_CHECK(cuMemcpyDtoH(out, d[4], (size_t)n * 8));
    for (int j = 0; j < 5; j++)
        cuMemFree(d[j]);
    cuModuleUnload(mod);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x[4] = {in[0][i], in[1][i], in[2][i], in[3][i]}, want = 0;
        int flags = ref(x, &want);
        if (!same(out[i], want, c, flags)) {
            if (!quiet && bad < 8)
                printf("#   %s: operands %#llx %#llx %#llx %#llx: got %#llx (%.9g), expected %#llx (%.9g)\n",
                       c->insn, (unsigned long long)x[0], (unsigned long long)x[1], (unsigned long long)x[2],
                       (unsigned long long)x[3], (unsigned long long)out[i], as_double(out[i], c->out),
                       (unsigned long long)want, as_double(want, c->out));
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    char dir[4096], path[4200];
    ptxt_self_dir(argv[0], dir, sizeof dir);
    snprintf(path, sizeof path, "%s/isa_kernels.ptx", dir);
    /* internal: --resume FIRST T FAILED continues after a case left the context failed */
    int first = 0, resumed = 0, t0 = 0, failed0 = 0;
    if (argc > 4 && !strcmp(argv[argc - 4], "--resume")) {
        first = atoi(argv[argc - 3]), t0 = atoi(argv[argc - 2]), failed0 = atoi(argv[argc - 1]);
        resumed = 1;
        argc -= 4;
    }
    const char *file = argc > 1 ? argv[1] : path, *filter = argc > 2 && argv[2][0] ? argv[2] : NULL;
    char *text = ptxt_slurp(file);
    if (!text)
        return 1;
    ptx_text = text;
    int t = t0, failed = failed0;
    int sc = resumed ? 0 : isa_ref_self_check();
    if (sc) {
        printf("not ok 1 - the C reference gives the ISA's known answers\n1..1\n");
        return 1;
    }
    if (!resumed)
        printf("# the C reference gives the ISA's known answers\n");
    ptxt_start();
    char *probe = ptxt_entry_module(text, "k_add_s32");
    if (!probe) {
        printf("# %s has no k_add_s32 entry\n", file);
        return 1;
    }
    ptxt_need_interpreter(probe, "k_add_s32");
    free(probe);
    if (!resumed)
        printf("ok %d - the C reference gives the ISA's known answers\n", ++t);
    for (int i = first; i < isa_ncases; i++) {
        if (filter && !strstr(isa_cases[i].kernel, filter))
            continue;
        int bad = run_case(&isa_cases[i], isa_cases[i].ref, 0);
        printf("%s %d - %s (%s)%s\n", bad ? "not ok" : "ok", ++t, isa_cases[i].insn, isa_cases[i].kernel,
               bad < 0 ? ": did not run" : "");
        if (bad > 0)
            printf("#   %d operand tuples differ\n", bad);
        failed += bad != 0;
        if (bad == -2) {
            char a[3][16];
            snprintf(a[0], sizeof a[0], "%d", i + 1);
            snprintf(a[1], sizeof a[1], "%d", t);
            snprintf(a[2], sizeof a[2], "%d", failed);
            fflush(stdout);
            execl(argv[0], argv[0], file, filter ? filter : "", "--resume", a[0], a[1], a[2], (char *)NULL);
            perror("execl");
            return 1;
        }
    }
    /* negative control: add.rz.f32's results against the round-to-nearest reference */
    if (!filter || strstr("k_add_rz_f32", filter)) {
        const isa_case *rz = NULL;
        for (int i = 0; i < isa_ncases; i++)
            if (!strcmp(isa_cases[i].kernel, "k_add_rz_f32"))
                rz = &isa_cases[i];
        int bad = run_case(rz, isa_ref_add_rn32, 1);
        printf("%s %d - negative control: add.rz.f32 differs from the add.rn.f32 reference (%d tuples)\n",
               bad > 0 ? "ok" : "not ok", ++t, bad);
        failed += bad <= 0;
    }
    printf("1..%d\n", t);
    free(text);
    return failed ? 1 : 0;
}
