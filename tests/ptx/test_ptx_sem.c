/* test_ptx_sem.c — proves hostcuda's PTX interpreter runs CUDA's SIMT semantics as nvcc emits
 * them (sem_kernels.cu, HOSTCUDA_EXEC=ptx): special registers; shfl.sync idx/up/down/bfly with
 * segment widths, clamps and the predicate output (checked against the PTX ISA's pseudo-code);
 * vote.sync all/any/uni/ballot, match.sync any/all, redux.sync, activemask under divergence;
 * bar.sync / barrier.sync with ids and thread counts and after half the block has exited,
 * __syncthreads_count/_or; atomics on global and shared memory (add min max inc dec cas exch and
 * or xor; s32 u32 u64 s64 f32 f64 f16x2 bf16x2) from many CTAs at once; divergence and
 * reconvergence (nested branches, per-lane trip counts, early return, a warp-synchronous
 * reduction); recursion, local arrays, a struct by value; dynamic shared memory with and without
 * the MAX_DYNAMIC_SHARED_SIZE_BYTES opt-in; initialised module globals through cuModuleGetGlobal;
 * generic addressing into shared, global and local memory, ld.global.nc and vector accesses;
 * a cooperative launch whose CTAs meet at cooperative groups' grid.sync().
 * Each result is compared with a C model; a mismatch prints both. Negative control: the shuffle
 * results against the model of a different delta must differ. Skips (77) without an interpreter.
 * Usage: test_ptx_sem [PTX_FILE] (default: sem_kernels.ptx next to this binary).
 */
#include "ptxt.h"

#include <limits.h>
#include <math.h>
#include <unistd.h>

static char *ptx;
static int T, FAILED;

/* each test runs in its own process (a sticky launch error ends only that process): the child
 * prints unnumbered TAP lines, the parent numbers them */
static void tcase(int ok, const char *what)
{
    printf("%s - %s\n", ok ? "ok" : "not ok", what);
    ++T;
    FAILED += !ok;
}

/* the entry NAME cut out with its header (globals, .func definitions) as its own module */
static CUfunction get(const char *name, CUmodule *mod)
{
    char *m = ptxt_entry_module(ptx, name);
    CUfunction f = NULL;
    if (!m || ptxt_get(m, name, mod, &f) != CUDA_SUCCESS)
        f = NULL;
    free(m);
    return f;
}

static CUdeviceptr dalloc(size_t bytes, const void *init)
{
    CUdeviceptr d;
    PTXT_CHECK(cuMemAlloc(&d, bytes));
    if (init)
        PTXT_CHECK(cuMemcpyHtoD(d, init, bytes));
    else
        PTXT_CHECK(cuMemsetD8(d, 0, bytes));
    return d;
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by, unsigned bz,
                       unsigned shmem, void **args)
{
    CUresult r = cuLaunchKernel(f, gx, gy, 1, bx, by, bz, shmem, NULL, args, NULL);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
        printf("# launch failed: %s\n", ptxt_err(r));
    return r;
}

/* counts mismatches of got[i] vs want[i], printing the first few with their thread */
static int cmp_u32(const char *what, const unsigned *got, const unsigned *want, int n, int per)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 6)
            printf("#   %s: thread %d word %d: got %#x (%d), expected %#x (%d)\n", what, i / per, i % per,
                   got[i], (int)got[i], want[i], (int)want[i]);
    return bad;
}

/* ---------------------------------------------------------------- special registers */
static void test_special(void)
{
    CUmodule m;
    CUfunction f = get("s_special", &m);
    enum { GX = 2, GY = 3, BX = 8, BY = 4, BZ = 2, NT = BX * BY * BZ, N = GX * GY * NT };
    static unsigned got[16 * N], want[16 * N];
    CUdeviceptr d = dalloc(sizeof got, NULL);
    void *args[] = {&d};
    if (!f || launch(f, GX, GY, BX, BY, BZ, 0, args) != CUDA_SUCCESS) {
        tcase(0, "special registers (%tid %ntid %ctaid %nctaid %laneid %lanemask_* %smid %warpid %clock64 %globaltimer)");
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, d, sizeof got));
    for (unsigned by = 0; by < GY; by++)
        for (unsigned bx = 0; bx < GX; bx++)
            for (unsigned z = 0; z < BZ; z++)
                for (unsigned y = 0; y < BY; y++)
                    for (unsigned x = 0; x < BX; x++) {
                        unsigned tid = x + BX * (y + BY * z), g = (bx + GX * by) * NT + tid, lane = tid % 32;
                        unsigned *w = want + 16 * g;
                        unsigned v[16] = {x, y, z, BX, BY, BZ, bx, by, 0, GX, GY, 1, lane, (1u << lane) - 1,
                                          lane == 31 ? 0xffffffffu : (2u << lane) - 1, 0x7f};
                        memcpy(w, v, sizeof v);
                    }
    tcase(cmp_u32("special", got, want, 16 * N, 16) == 0,
          "special registers (%tid %ntid %ctaid %nctaid %laneid %lanemask_* %smid %warpid %clock64 %globaltimer)");
    cuMemFree(d);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- shuffles */
/* the PTX ISA's shfl.sync pseudo-code; mode 0 up, 1 down, 2 bfly, 3 idx */
static int shfl_model(const int *v, int lane, int mode, unsigned b, unsigned c, int *pred)
{
    int bval = (int)(b & 31), cval = (int)(c & 31), segmask = (int)(c >> 8 & 31);
    int maxl = (lane & segmask) | (cval & ~segmask), minl = lane & segmask, j, p;
    switch (mode) {
    case 0: j = lane - bval; p = j >= maxl; break;
    case 1: j = lane + bval; p = j <= maxl; break;
    case 2: j = lane ^ bval; p = j <= maxl; break;
    default: j = minl | (bval & ~segmask); p = j <= maxl; break;
    }
    if (!p)
        j = lane;
    *pred = p;
    return v[j];
}
static unsigned cuda_c(int w, int clampmax) { return (unsigned)(32 - w) << 8 | (clampmax ? 0x1f : 0); }

static void shfl_expect(const int *in, int nthreads, int delta, int *want)
{
    for (int w0 = 0; w0 < nthreads; w0 += 32) {
        const int *v = in + w0;
        for (int l = 0; l < 32; l++) {
            int *o = want + 24 * (w0 + l), k = 0, p;
            o[k++] = shfl_model(v, l, 3, (unsigned)(l * 7 + delta) & 31, cuda_c(32, 1), &p);
            o[k++] = shfl_model(v, l, 3, (unsigned)(delta + 3), cuda_c(8, 1), &p);
            o[k++] = shfl_model(v, l, 0, (unsigned)delta, cuda_c(32, 0), &p);
            o[k++] = shfl_model(v, l, 0, (unsigned)delta, cuda_c(8, 0), &p);
            o[k++] = shfl_model(v, l, 1, (unsigned)delta, cuda_c(32, 1), &p);
            o[k++] = shfl_model(v, l, 1, (unsigned)delta, cuda_c(16, 1), &p);
            o[k++] = shfl_model(v, l, 2, (unsigned)delta, cuda_c(32, 1), &p);
            o[k++] = shfl_model(v, l, 2, (unsigned)delta, cuda_c(4, 1), &p);
            o[k] = shfl_model(v, l, 0, (unsigned)delta, 0, &p), o[k + 1] = p, k += 2;
            o[k] = shfl_model(v, l, 1, (unsigned)delta, 0x1f, &p), o[k + 1] = p, k += 2;
            o[k] = shfl_model(v, l, 3, (unsigned)delta + 5, 0x181f, &p), o[k + 1] = p, k += 2;
            o[k] = shfl_model(v, l, 2, (unsigned)delta, 0x1c1f, &p), o[k + 1] = p, k += 2;
            int src = l + 1 <= 31 ? l + 1 : l;
            o[k++] = v[src];
            o[k++] = v[src] * 3;
            float fv = (float)v[l ^ 16] * 0.5f;
            memcpy(&o[k++], &fv, 4);
            for (; k < 24; k++)
                o[k] = 0;
        }
    }
}

/* words FROM..TO-1 of each PER-word record taken from got (not compared) */
static void keep(const int *got, int *want, int n, int per, int from, int to)
{
    for (int t = 0; t < n; t++)
        for (int k = from; k < to; k++)
            want[per * t + k] = got[per * t + k];
}

static void test_shfl(void)
{
    CUmodule m, mp;
    CUfunction f = get("s_shfl", &m), fp = get("s_shfl_pred", &mp);
    enum { N = 128 };
    static int in[N], got[24 * N], want[24 * N];
    for (int i = 0; i < N; i++)
        in[i] = i * 13 + 5;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    int deltas[] = {3, 19, 1};
    for (int k = 0; k < 3; k++) {
        int delta = deltas[k];
        void *args[] = {&din, &dout, &delta};
        char what[160];
        snprintf(what, sizeof what, "__shfl_sync/_up/_down/_xor, widths 32/16/8/4, 64-bit and float values (delta %d)", delta);
        PTXT_CHECK(cuMemsetD8(dout, 0, sizeof got));
        if (!f || launch(f, 2, 1, 64, 1, 1, 0, args) != CUDA_SUCCESS) {
            tcase(0, what);
        } else {
            PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
            shfl_expect(in, N, delta, want);
            keep(got, want, N, 24, 8, 16);
            tcase(cmp_u32("shfl", (unsigned *)got, (unsigned *)want, 24 * N, 24) == 0, what);
            if (k == 0) {   /* negative control: the model of another delta must not match */
                shfl_expect(in, N, delta + 1, want);
                keep(got, want, N, 24, 8, 16);
                int bad = 0;
                for (int i = 0; i < 24 * N; i++)
                    bad += got[i] != want[i];
                tcase(bad > 0, "negative control: the shuffle results differ from the model of delta + 1");
            }
        }
        snprintf(what, sizeof what, "shfl.sync.up/down/idx/bfly with clamps, segment masks and the predicate output (delta %d)", delta);
        PTXT_CHECK(cuMemsetD8(dout, 0, sizeof got));
        if (!fp || launch(fp, 2, 1, 64, 1, 1, 0, args) != CUDA_SUCCESS) {
            tcase(0, what);
            continue;
        }
        PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
        shfl_expect(in, N, delta, want);
        keep(got, want, N, 24, 0, 8);
        keep(got, want, N, 24, 16, 24);
        tcase(cmp_u32("shfl pred", (unsigned *)got, (unsigned *)want, 24 * N, 24) == 0, what);
    }
    cuMemFree(din);
    cuMemFree(dout);
    if (f)
        cuModuleUnload(m);
    if (fp)
        cuModuleUnload(mp);
}

/* ---------------------------------------------------------------- votes */
static void test_vote(void)
{
    CUmodule m;
    CUfunction f = get("s_vote", &m);
    enum { N = 256 };
    static int in[N];
    static unsigned got[12 * N], want[12 * N];
    for (int i = 0; i < N; i++) {
        int w = i / 32;
        in[i] = (int)((unsigned)(i * 2654435761u) >> 7) % 200;
        if (w == 2)
            in[i] = 77;                       /* uniform warp */
        if (w == 3)
            in[i] = 1000 + i % 7;             /* match.all on v / 1000 */
        if (w == 5)
            in[i] = 1 + i % 50;               /* all > 0, none > 100 */
    }
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    if (!f || launch(f, 2, 1, 128, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, "__all/__any/__ballot_sync, __match_any/_all_sync, __reduce_add/max/or_sync, __activemask under divergence");
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad_active = 0;
    for (int w0 = 0; w0 < N; w0 += 32) {
        const int *v = in + w0;
        unsigned all = 1, any = 0, ballot = 0, sum = 0, max = 0, or = 0, np = 0, ballot2 = 0;
        for (int l = 0; l < 32; l++) {
            all &= v[l] > 0;
            any |= v[l] > 100;
            ballot |= (unsigned)(v[l] & 1) << l;
            np += v[l] > 50;
            sum += (unsigned)v[l];
            max = (unsigned)v[l] > max ? (unsigned)v[l] : max;
            or |= (unsigned)v[l];
            if (!(l & 1) && (v[l] & 2))
                ballot2 |= 1u << l;
        }
        int odd_warp = ((w0 % 128) / 32) & 1;
        for (int l = 0; l < 32; l++) {
            unsigned *o = want + 12 * (w0 + l), eq = 0, ma = 0xffffffff;
            for (int k = 0; k < 32; k++) {
                eq |= (unsigned)(v[k] % 5 == v[l] % 5) << k;
                if (v[k] / 1000 != v[0] / 1000)
                    ma = 0;
            }
            unsigned w[12] = {all, any, ballot, np == 0 || np == 32, eq, ma, ma != 0, sum, max, or, 0, 0};
            int branch = odd_warp && !(l & 1);
            /* activemask: the caller's lane, within the lanes on its path (convergence is not promised) */
            unsigned path = branch ? 0x55555555u : odd_warp ? 0xaaaaaaaau : 0xffffffffu, a = got[12 * (w0 + l) + 10];
            if (!(a >> l & 1) || (a & ~path))
                bad_active++, printf("#   activemask: thread %d got %#x (path %#x)\n", w0 + l, a, path);
            w[10] = a;
            w[11] = branch ? ballot2 : 0;
            memcpy(o, w, sizeof w);
        }
    }
    static unsigned want_uni[12 * N];
    memcpy(want_uni, want, sizeof want);
    keep((const int *)got, (int *)want, N, 12, 3, 4);
    tcase(cmp_u32("vote", got, want, 12 * N, 12) == 0 && !bad_active,
          "__all/__any/__ballot_sync, __match_any/_all_sync, __reduce_add/max/or_sync, __activemask under divergence");
    cuModuleUnload(m);
    CUfunction fu = get("s_vote_uni", &m);
    PTXT_CHECK(cuMemsetD8(dout, 0, sizeof got));
    if (!fu || launch(fu, 2, 1, 128, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, "vote.sync.uni.pred");
    } else {
        PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
        for (int t = 0; t < N; t++)
            for (int k = 0; k < 12; k++)
                if (k != 3)
                    want_uni[12 * t + k] = 0;
        tcase(cmp_u32("vote.uni", got, want_uni, 12 * N, 12) == 0, "vote.sync.uni.pred");
        cuModuleUnload(m);
    }
    cuMemFree(din);
    cuMemFree(dout);
}

/* ---------------------------------------------------------------- barriers */
static void test_barrier(void)
{
    CUmodule m;
    CUfunction f = get("s_barrier", &m);
    enum { NB = 3, BN = 256, N = NB * BN };
    static int in[N], got[4 * N], want[4 * N];
    for (int i = 0; i < N; i++)
        in[i] = i * 3 + 1;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    const char *what = "bar.sync / barrier.sync: ids, thread counts, exited threads, __syncthreads_count/_or";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    for (int b = 0; b < NB; b++) {
        const int *s = in + b * BN;
        int cnt = 0, any7 = 0;
        for (int t = 0; t < BN / 2; t++) {
            cnt += (s[t] + 1000) & 1;
            any7 |= s[t] == 7;
        }
        for (int t = 0; t < BN; t++) {
            int *o = want + 4 * (b * BN + t);
            o[0] = s[(t + 1) % BN];
            o[1] = t < 64 ? 2 * s[63 - t] : 2 * s[64 + (t - 64 + 1) % (BN - 64)];
            o[2] = t < BN / 2 ? s[BN / 2 - 1 - t] + 1000 : 0;
            o[3] = t < BN / 2 ? cnt + 10000 * any7 : 0;
        }
    }
    tcase(cmp_u32("barrier", (unsigned *)got, (unsigned *)want, 4 * N, 4) == 0, what);
    cuMemFree(din);
    cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- atomics */
/* f32 rounded to the nearest bf16 (ties to even), for finite values */
static float bf16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7fffu + (u >> 16 & 1)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

struct atom_out {   /* sem_kernels.cu's layout */
    int add_s32, min_s32, max_s32, and_b, or_b, xor_b;
    unsigned add_u32, inc_u32, dec_u32, exch_sum_lo, cas_wins, min_u32, max_u32;
    unsigned long long add_u64, min_u64, max_u64;
    long long min_s64, max_s64;
    float add_f32;
    double add_f64;
    uint32_t add_h2;
};

static void test_atomics(void)
{
    CUmodule m;
    CUfunction f = get("s_atomics", &m);
    enum { NB = 4, BN = 128, N = NB * BN, NSLOTS = 50 };
    static int in[N], slots[NSLOTS], fold[8 * NB];
    for (int i = 0; i < N; i++)
        in[i] = (i * 7 + 3) % 97;
    for (int i = 0; i < NSLOTS; i++)
        slots[i] = -1;
    struct atom_out g = {0}, w = {0};
    g.min_s32 = INT_MAX, g.max_s32 = INT_MIN, g.and_b = -1, g.exch_sum_lo = 0xffffffffu, g.min_u32 = UINT_MAX;
    g.min_u64 = ~0ull, g.min_s64 = LLONG_MAX, g.max_s64 = LLONG_MIN;
    unsigned long long exch_sum = 0;
    CUdeviceptr dg = dalloc(sizeof g, &g), din = dalloc(sizeof in, in), ds = dalloc(sizeof slots, slots);
    CUdeviceptr df = dalloc(sizeof fold, NULL), de = dalloc(8, &exch_sum);
    int nslots = NSLOTS, shared_too = 1;
    void *args[] = {&dg, &din, &ds, &nslots, &df, &de, &shared_too};
    const char *what = "atom on global and shared: add min max inc dec cas exch and or xor, s32 u32 u64 s64 f32 f64 f16x2";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(&g, dg, sizeof g));
    PTXT_CHECK(cuMemcpyDtoH(slots, ds, sizeof slots));
    PTXT_CHECK(cuMemcpyDtoH(fold, df, sizeof fold));
    PTXT_CHECK(cuMemcpyDtoH(&exch_sum, de, 8));
    w.min_s32 = INT_MAX, w.max_s32 = INT_MIN, w.and_b = -1, w.min_u32 = UINT_MAX, w.min_u64 = ~0ull;
    w.min_s64 = LLONG_MAX, w.max_s64 = LLONG_MIN;
    unsigned long long tsum = 0;
    float h_lo = 0, bh_lo = 0;   /* f16x2 low half, bf16x2 low half */
    for (int t = 0; t < N; t++) {
        int v = in[t];
        w.add_s32 += v, w.add_f32 += (float)(v % 64), w.add_f64 += v * 0.25, w.add_u64 += (unsigned long long)v << 20;
        int mm = v * 37 % 1001 - 500;
        w.max_s32 = mm > w.max_s32 ? mm : w.max_s32, w.min_s32 = mm < w.min_s32 ? mm : w.min_s32;
        w.add_u32 -= (unsigned)v;
        unsigned u = (unsigned)v * 7919u;
        w.min_u32 = u < w.min_u32 ? u : w.min_u32, w.max_u32 = u > w.max_u32 ? u : w.max_u32;
        unsigned long long u64 = (unsigned long long)v * 0x100000001ull;
        w.min_u64 = u64 < w.min_u64 ? u64 : w.min_u64, w.max_u64 = u64 > w.max_u64 ? u64 : w.max_u64;
        long long s64 = (long long)v * 0x10000ll;
        w.min_s64 = -s64 < w.min_s64 ? -s64 : w.min_s64, w.max_s64 = s64 > w.max_s64 ? s64 : w.max_s64;
        w.and_b &= ~(1 << (v % 31)), w.or_b |= 1 << (v % 29), w.xor_b ^= v;
        tsum += (unsigned)t;
        h_lo += (float)(v % 8), bh_lo += v % 4 == 0 ? 1.0f : 0.0f;
    }
    w.inc_u32 = N % 7;              /* atomicInc(6) N times from 0 */
    w.dec_u32 = (10 - N % 10) % 10; /* atomicDec(9) N times from 0 */
    w.cas_wins = NSLOTS;
    int bad = 0;
#define AEQ(field, fmt)                                                                             \
    if (g.field != w.field)                                                                         \
        bad++, printf("#   atomics: " #field ": got " fmt ", expected " fmt "\n", g.field, w.field);
    AEQ(add_s32, "%d") AEQ(min_s32, "%d") AEQ(max_s32, "%d") AEQ(and_b, "%#x") AEQ(or_b, "%#x")
    AEQ(xor_b, "%#x") AEQ(add_u32, "%u") AEQ(inc_u32, "%u") AEQ(dec_u32, "%u") AEQ(cas_wins, "%u")
    AEQ(min_u32, "%u") AEQ(max_u32, "%u") AEQ(add_u64, "%llu") AEQ(min_u64, "%llu") AEQ(max_u64, "%llu")
    AEQ(min_s64, "%lld") AEQ(max_s64, "%lld") AEQ(add_f32, "%g") AEQ(add_f64, "%g")
#undef AEQ
    /* f16x2: {low: sum of v % 8, high: N} */
    uint32_t h2 = g.add_h2;
    float hl = (float)ldexp((double)((h2 & 0x3ff) | 0x400), (int)((h2 >> 10) & 31) - 25);
    float hh = (float)ldexp((double)((h2 >> 16 & 0x3ff) | 0x400), (int)((h2 >> 26) & 31) - 25);
    if (hl != h_lo || hh != (float)N)
        bad++, printf("#   atomics: f16x2 {%g, %g} expected {%g, %d}\n", (double)hl, (double)hh, (double)h_lo, N);
    if (g.exch_sum_lo >= N || exch_sum + g.exch_sum_lo != 0xffffffffull + tsum)
        bad++, printf("#   atomics: exch: final %u, returned sum %llu; expected final < %d and sum + final = %llu\n",
                      g.exch_sum_lo, exch_sum, N, 0xffffffffull + tsum);
    for (int s = 0; s < NSLOTS; s++)
        if (slots[s] < 0 || slots[s] % NSLOTS != s)
            bad++, printf("#   atomics: cas slot %d holds %d\n", s, slots[s]);
    for (int b = 0; b < NB; b++) {   /* the shared-memory copies, per block */
        int add = 0, mx = INT_MIN, f6 = 0;
        float fl = 0;
        long long u20 = 0;
        for (int t = b * BN; t < (b + 1) * BN; t++) {
            int v = in[t], mm = v * 37 % 1001 - 500;
            add += v, fl += (float)(v % 64), u20 += v, mx = mm > mx ? mm : mx, f6 += v;
        }
        int *fb = fold + 8 * b;
        float gotf;
        memcpy(&gotf, &fb[1], 4);
        if (fb[0] != add || gotf != fl || fb[2] != (int)u20 || fb[3] != BN % 7 || fb[4] != mx || fb[5] != 1 ||
            fb[6] != f6)
            bad++, printf("#   atomics: shared, block %d: {%d %g %d %d %d %d %d}, expected {%d %g %d %d %d 1 %d}\n", b,
                          fb[0], (double)gotf, fb[2], fb[3], fb[4], fb[5], fb[6], add, (double)fl, (int)u20, BN % 7,
                          mx, f6);
    }
    tcase(bad == 0, what);
    cuMemFree(dg), cuMemFree(ds), cuMemFree(df), cuMemFree(de);
    cuModuleUnload(m);
    /* bf16x2: {low: count of v % 4 == 0, high: N / 2}, exact in bf16 at these sizes */
    CUfunction fb = get("s_atomic_bf16x2", &m);
    uint32_t bh2 = 0;
    CUdeviceptr db = dalloc(4, &bh2);
    void *bargs[] = {&db, &din};
    if (!fb || launch(fb, NB, 1, BN, 1, 1, 0, bargs) != CUDA_SUCCESS) {
        tcase(0, "atom.add.noftz.bf16x2 on global memory");
    } else {
        PTXT_CHECK(cuMemcpyDtoH(&bh2, db, 4));
        uint32_t bl = bh2 << 16, bh = bh2 & 0xffff0000u;
        float bfl, bfh;
        memcpy(&bfl, &bl, 4);
        memcpy(&bfh, &bh, 4);
        /* every addend of a half is the same (1 or 0; 0.5), so the rounded sum does not depend on
         * the order: the model adds N times, rounding each sum to bf16 (RNE); the high half stops
         * at 128, where 128 + 0.5 is a tie that rounds back to 128 */
        float ml = 0, mh = 0;
        for (int t = 0; t < N; t++) {
            ml = bf16_rn(ml + (in[t] % 4 == 0 ? 1.0f : 0.0f));
            mh = bf16_rn(mh + 0.5f);
        }
        int ok = bfl == ml && bfh == mh && ml == bh_lo;
        if (!ok)
            printf("#   bf16x2 {%g, %g} expected {%g, %g}\n", (double)bfl, (double)bfh, (double)ml, (double)mh);
        tcase(ok, "atom.add.noftz.bf16x2 on global memory");
        cuModuleUnload(m);
    }
    cuMemFree(db), cuMemFree(din);
}

/* s_shfl_inactive's results for one warp (IN: its 32 inputs): lanes 0..7 reduce with offsets
 * 16..1; a lane >= 8 gives 0 (STALE: its register, in[l], instead); lanes >= 8 write -1 */
static void shfl_inactive_model(const int *in, int stale, int *out)
{
    int v[32];
    for (int l = 0; l < 32; l++)
        v[l] = l < 8 || stale ? in[l] : 0;
    for (int d = 16; d > 0; d >>= 1) {
        int nv[8];
        for (int l = 0; l < 8; l++)
            nv[l] = v[l] + (l + d <= 31 ? v[l + d] : v[l]);
        memcpy(v, nv, sizeof nv);
    }
    for (int l = 0; l < 32; l++)
        out[l] = l < 8 ? v[l] : -1;
}

/* lanes that do not execute a shfl.sync read as 0, with one warning naming the instruction */
static void test_shfl_inactive(void)
{
    CUmodule m;
    CUfunction f = get("s_shfl_inactive", &m);
    enum { N = 64 };
    static int in[N], got[N];
    for (int i = 0; i < N; i++)
        in[i] = i * 3 + 1;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    const char *what = "shfl.sync from lanes that do not execute it reads 0, with one warning (cuda-samples reduce7)";
    char errf[] = "/tmp/ptx-sem-shfl.XXXXXX";
    int efd = mkstemp(errf), saved = dup(2);
    fflush(stderr);
    dup2(efd, 2);
    CUresult r = f ? launch(f, 1, 1, N, 1, 1, 0, args) : CUDA_ERROR_NOT_FOUND;
    fflush(stderr);
    dup2(saved, 2), close(saved);
    char err[4096] = "";
    ssize_t ne = pread(efd, err, sizeof err - 1, 0);
    err[ne > 0 ? ne : 0] = 0;
    close(efd), unlink(errf);
    if (r != CUDA_SUCCESS) {
        printf("#   launch: %d; stderr: %s\n", (int)r, err);
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad = 0, stale_same = 1;
    for (int w = 0; w < N; w += 32) {
        int want[32], stale[32];
        shfl_inactive_model(in + w, 0, want);
        shfl_inactive_model(in + w, 1, stale);
        for (int l = 0; l < 32; l++) {
            stale_same &= got[w + l] == stale[l];
            if (got[w + l] != want[l] && bad++ < 6)
                printf("#   thread %d: got %d, expected %d\n", w + l, got[w + l], want[l]);
        }
    }
    int warned = strstr(err, "hostcuda: warning: s_shfl_inactive") && strstr(err, "does not execute this shfl.sync");
    int once = warned && !strstr(strstr(err, "hostcuda: warning:") + 1, "hostcuda: warning:");
    if (!once)
        printf("#   expected one warning naming s_shfl_inactive, stderr was: %s\n", err);
    /* negative control: the model in which an inactive lane gives its register (in[t]) differs */
    if (stale_same)
        printf("#   negative control: the result equals the stale-register model\n");
    tcase(bad == 0 && once && !stale_same, what);
    cuMemFree(din), cuMemFree(dout);
    cuModuleUnload(m);
}

/* CU_FUNC_ATTRIBUTE_PTX_VERSION is the PTX's .target (CUB picks its tuning policies by it and
 * refuses a version it was not compiled for); BINARY_VERSION the device's compute capability */
static void test_func_versions(void)
{
    char *m = ptxt_entry_module(ptx, "s_special");
    const char *what = "cuFuncGetAttribute: PTX_VERSION is the module's .target (75 and 90), BINARY_VERSION the device's";
    char *tgt = m ? strstr(m, ".target sm_") : NULL;
    if (!tgt) {
        printf("#   no .target sm_ line in the PTX\n");
        tcase(0, what);
        free(m);
        return;
    }
    int ok = 1, major = 0, minor = 0;
    CUdevice dev;
    PTXT_CHECK(cuCtxGetDevice(&dev));
    PTXT_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    PTXT_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    for (int want = 75; want <= 90; want += 15) {
        char sm[3];
        snprintf(sm, sizeof sm, "%d", want);
        memcpy(tgt + strlen(".target sm_"), sm, 2);
        CUmodule mod;
        CUfunction f;
        int pv = -1, bv = -1;
        if (ptxt_get(m, "s_special", &mod, &f) != CUDA_SUCCESS ||
            cuFuncGetAttribute(&pv, CU_FUNC_ATTRIBUTE_PTX_VERSION, f) != CUDA_SUCCESS ||
            cuFuncGetAttribute(&bv, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f) != CUDA_SUCCESS) {
            ok = 0;
            continue;
        }
        if (pv != want || bv != major * 10 + minor) {
            printf("#   .target sm_%d: PTX_VERSION %d, BINARY_VERSION %d; expected %d, %d\n", want, pv, bv, want,
                   major * 10 + minor);
            ok = 0;
        }
        cuModuleUnload(mod);
    }
    free(m);
    tcase(ok, what);
}

/* ---------------------------------------------------------------- divergence */
static void test_diverge(void)
{
    CUmodule m;
    CUfunction f = get("s_diverge", &m);
    enum { N = 192 };
    static int in[N], got[6 * N];
    for (int i = 0; i < N; i++)
        in[i] = (i * 37 + 11) % 100;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    const char *what = "divergence: nested branches, per-lane trip counts, early return, warp-synchronous reduction";
    if (!f || launch(f, 3, 1, 64, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad = 0;
    for (int t = 0; t < N; t++) {
        int lane = t & 31, v = in[t], a = 0, s = 0, wsum = 0, *o = got + 6 * t;
        if (lane & 1)
            a = lane % 3 == 0 ? v * 3 : v + 1;
        else {
            for (int k = 0; k < lane; k++)
                a += k ^ v;
            if (a & 4)
                a = -a;
        }
        for (int k = 0; k < (v & 15) && k != 11; k++)
            s += k * lane;
        for (int l = 0; l < 32; l++)
            wsum += in[(t & ~31) + l];
        int want4 = 0, want5 = 0;
        if (lane < 20) {
            unsigned act = (unsigned)o[4];
            want4 = (act >> lane & 1) && !(act & ~0xfffffu) ? o[4] : -1;
            for (int l = 0; l < 20; l++)
                if (act >> l & 1)
                    want5 += in[(t & ~31) + l];
        }
        int ok = o[0] == a && o[1] == s && ((unsigned)o[2] >> lane & 1) && o[3] == wsum && o[4] == want4 && o[5] == want5;
        if (!ok && bad++ < 6)
            printf("#   diverge: thread %d: got {%d %d %#x %d %#x %d}, expected {%d %d (own bit) %d %s %d}\n", t, o[0],
                   o[1], o[2], o[3], o[4], o[5], a, s, wsum, lane < 20 ? "(own bit, lanes < 20)" : "0", want5);
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- calls, locals, struct param */
struct sparam {
    int a;
    double b;
    char c;
    float v[3];
    long long w;
};
static long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static void test_calls(void)
{
    CUmodule m;
    CUfunction f = get("s_calls", &m);
    enum { N = 96 };
    static int in[N];
    static long long got[8 * N];
    for (int i = 0; i < N; i++)
        in[i] = (i * 29 + 4) % 200;
    struct sparam p = {.a = -17, .b = 2.75, .c = 'q', .v = {1.5f, 2.25f, 3.0f}, .w = 0x123456789abcll};
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout, &p};
    const char *what = "recursive device functions, a local array indexed at run time, a struct by value";
    if (!f || launch(f, 3, 1, 32, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad = 0;
    for (int t = 0; t < N; t++) {
        int v = in[t], loc[64];
        unsigned long long acc = 1;
        for (int d = v % 40; d > 0; d--)
            acc = acc * 3 + (unsigned)d;
        for (int i = 0; i < 64; i++)
            loc[(i * 7 + v) & 63] = i * i - v;
        long long w[8] = {fib(v % 16), (long long)acc, loc[v & 63] + loc[(v * 5) & 63], p.a + t, 11, 'q', 324,
                          p.w ^ t};
        for (int k = 0; k < 8; k++)
            if (got[8 * t + k] != w[k] && bad++ < 6)
                printf("#   calls: thread %d word %d: got %lld, expected %lld\n", t, k, got[8 * t + k], w[k]);
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- dynamic shared memory */
static void test_dynshared(void)
{
    CUmodule m;
    CUfunction f = get("s_dynshared", &m);
    enum { NB = 3, BIG = 16000 };
    static float in[NB * BIG], got[NB * BIG];
    for (int i = 0; i < NB * BIG; i++)
        in[i] = (float)(i % 1013) - 300.0f;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    int sizes[] = {1000, BIG};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        char what[160];
        snprintf(what, sizeof what, "dynamic shared memory: %d bytes%s", n * 4,
                 n * 4 > 48 * 1024 ? " after the MAX_DYNAMIC_SHARED_SIZE_BYTES opt-in" : "");
        void *args[] = {&din, &dout, &n};
        if (!f) {
            tcase(0, what);
            continue;
        }
        if (n * 4 > 48 * 1024) {
            /* without the opt-in a launch above 48 KiB is refused (CUDA_ERROR_INVALID_VALUE), not sticky */
            CUresult r = cuLaunchKernel(f, NB, 1, 1, 128, 1, 1, (unsigned)n * 4, NULL, args, NULL);
            tcase(r == CUDA_ERROR_INVALID_VALUE, "dynamic shared memory above 48 KiB without the opt-in is refused");
            if (r != CUDA_ERROR_INVALID_VALUE)
                printf("#   got %s\n", ptxt_err(r));
            cuCtxSynchronize();
            PTXT_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, n * 4));
        }
        if (launch(f, NB, 1, 128, 1, 1, (unsigned)n * 4, args) != CUDA_SUCCESS) {
            tcase(0, what);
            continue;
        }
        PTXT_CHECK(cuMemcpyDtoH(got, dout, (size_t)NB * n * 4));
        int bad = 0;
        for (int b = 0; b < NB; b++)
            for (int i = 0; i < n; i++) {
                float want = in[b * n + n - 1 - i] * 2.0f;
                if (got[b * n + i] != want && bad++ < 6)
                    printf("#   dynshared: block %d element %d: got %g, expected %g\n", b, i, (double)got[b * n + i],
                           (double)want);
            }
        tcase(bad == 0, what);
    }
    cuMemFree(din), cuMemFree(dout);
    if (f)
        cuModuleUnload(m);
}

/* ---------------------------------------------------------------- module globals */
static void test_globals(void)
{
    CUmodule m;
    CUfunction f = get("s_globals", &m);
    const char *what = "initialised module globals and constants, read and written through cuModuleGetGlobal";
    if (!f) {
        tcase(0, what);
        return;
    }
    CUdeviceptr gt, gs, gc, gb;
    size_t st, ss, sc, sb;
    int bad = 0, table[8], bias[4];
    float scale;
    unsigned long long counter = 5;
    PTXT_CHECK(cuModuleGetGlobal(&gt, &st, m, "g_table"));
    PTXT_CHECK(cuModuleGetGlobal(&gs, &ss, m, "g_scale"));
    PTXT_CHECK(cuModuleGetGlobal(&gc, &sc, m, "g_counter"));
    PTXT_CHECK(cuModuleGetGlobal(&gb, &sb, m, "c_bias"));
    if (st != 32 || ss != 4 || sc != 8 || sb != 16)
        bad++, printf("#   globals: sizes %zu %zu %zu %zu, expected 32 4 8 16\n", st, ss, sc, sb);
    PTXT_CHECK(cuMemcpyDtoH(table, gt, sizeof table));
    PTXT_CHECK(cuMemcpyDtoH(&scale, gs, 4));
    PTXT_CHECK(cuMemcpyDtoH(bias, gb, sizeof bias));
    const int t0[8] = {3, 1, 4, 1, 5, 9, 2, 6}, b0[4] = {100, 200, 300, 400};
    if (memcmp(table, t0, sizeof t0) || scale != 2.5f || memcmp(bias, b0, sizeof b0))
        bad++, printf("#   globals: initialisers: table[0..1] %d %d, scale %g, bias[3] %d\n", table[0], table[1],
                      (double)scale, bias[3]);
    PTXT_CHECK(cuMemcpyHtoD(gc, &counter, 8));
    enum { N = 128 };
    static int got[N];
    CUdeviceptr dout = dalloc(sizeof got, NULL);
    void *args[] = {&dout};
    for (int pass = 0; pass < 2; pass++) {
        if (launch(f, 2, 1, 64, 1, 1, 0, args) != CUDA_SUCCESS) {
            bad++;
            break;
        }
        PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
        for (int t = 0; t < N; t++) {
            int want = (int)((float)t0[t & 7] * scale) + b0[t & 3];
            if (got[t] != want && bad++ < 6)
                printf("#   globals pass %d: thread %d: got %d, expected %d\n", pass, t, got[t], want);
        }
        scale = 4.0f;   /* the host's write must be what the next launch reads */
        PTXT_CHECK(cuMemcpyHtoD(gs, &scale, 4));
    }
    PTXT_CHECK(cuMemcpyDtoH(&counter, gc, 8));
    if (counter != 5 + 2 * N)
        bad++, printf("#   globals: g_counter %llu, expected %d\n", counter, 5 + 2 * N);
    tcase(bad == 0, what);
    cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- generic addressing */
static void test_generic(void)
{
    CUmodule m;
    CUfunction f = get("s_generic", &m);
    enum { NB = 2, BN = 128, N = NB * BN };
    static float in[4 * N], got[4 * N], gen[N];
    for (int i = 0; i < 4 * N; i++)
        in[i] = (float)(i % 97) * 0.5f + 1.0f;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL), dgen = dalloc(sizeof gen, NULL);
    void *args[] = {&din, &dout, &dgen};
    const char *what = "generic ld/st into shared, global and local memory; ld.global.nc; 16-byte vector loads and stores";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    PTXT_CHECK(cuMemcpyDtoH(gen, dgen, sizeof gen));
    int bad = 0;
    for (int g = 0; g < N; g++) {
        int t = g % BN, k = t % 3;
        const float *v = in + 4 * g;
        float r = k == 0 ? v[0] : k == 1 ? v[2] : v[1];
        float want[4] = {r, 2.0f * r, v[3] + 1.0f, (float)k};
        float wgen = k == 1 ? 2.0f * v[2] : v[2];
        if (memcmp(got + 4 * g, want, sizeof want) || gen[g] != wgen) {
            if (bad++ < 6)
                printf("#   generic: thread %d: got {%g %g %g %g} gen %g, expected {%g %g %g %g} gen %g\n", g,
                       (double)got[4 * g], (double)got[4 * g + 1], (double)got[4 * g + 2], (double)got[4 * g + 3],
                       (double)gen[g], (double)want[0], (double)want[1], (double)want[2], (double)want[3], (double)wgen);
        }
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dout), cuMemFree(dgen);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- shared atomics, arrive */
static void test_atomics_shared(void)
{
    CUmodule m;
    CUfunction f = get("s_atomics_shared", &m);
    enum { NB = 3, BN = 96, N = NB * BN };
    static int in[N];
    static unsigned long long got[16 * NB];
    for (int i = 0; i < N; i++)
        in[i] = (i * 31 + 7) % 101;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    const char *what = "atom on shared memory: add min max and or xor (s32), inc dec min exch cas (u32), add min max (u64), add (f32)";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad = 0;
    for (int b = 0; b < NB; b++) {
        int si[6] = {0, 0x7fffffff, INT_MIN, -1, 0, 0};
        unsigned su[3] = {0, 0, 0xffffffffu};
        unsigned long long sl[3] = {0, ~0ull, 0}, tsum = 0;
        float sf = 0;
        for (int t = 0; t < BN; t++) {
            int v = in[b * BN + t], mm = v * 13 % 77 - 30;
            si[0] += v - 50, si[1] = mm < si[1] ? mm : si[1], si[2] = mm > si[2] ? mm : si[2];
            si[3] &= ~(1 << (v % 30)), si[4] |= 1 << (v % 27), si[5] ^= v * 7;
            unsigned h = (unsigned)v * 2654435761u;
            su[2] = h < su[2] ? h : su[2];
            sl[0] += (unsigned long long)v << 33;
            unsigned long long w = (unsigned long long)v * 0x123456789ull;
            sl[1] = w < sl[1] ? w : sl[1], sl[2] = w > sl[2] ? w : sl[2];
            tsum += (unsigned)t + 1;
            sf += (float)(v % 16);
        }
        su[0] = BN % 11;                 /* atomicInc(10) BN times from 0 */
        su[1] = (13 - BN % 13) % 13;     /* atomicDec(12) BN times from 0 */
        unsigned long long w[16] = {(unsigned)si[0], (unsigned)si[1], (unsigned)si[2], (unsigned)si[3], (unsigned)si[4],
                                    (unsigned)si[5], su[0], su[1], su[2], 0, 0, sl[0], sl[1], sl[2], tsum, 0};
        unsigned long long *o = got + 16 * b;
        float gf;
        uint32_t fb = (uint32_t)o[15];
        memcpy(&gf, &fb, 4);
        /* exch: the returned values plus the last one = every value stored (1..BN) plus the initial 0;
         * cas: thread k succeeds only when the word holds k, so the word ends at some 1 <= k <= BN */
        int ok = o[9] >= 1 && o[9] <= BN && o[10] >= 1 && o[10] <= BN && gf == sf;
        for (int k = 0; k < 15; k++)
            if (k != 9 && k != 10 && o[k] != w[k])
                ok = 0, printf("#   shared atomics block %d word %d: got %#llx, expected %#llx\n", b, k, o[k], w[k]);
        if (!ok)
            bad++, printf("#   shared atomics block %d: exch %llu, cas %llu, f32 %g (expected %g)\n", b, o[9], o[10],
                          (double)gf, (double)sf);
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dout);
    cuModuleUnload(m);
}

static void test_arrive(void)
{
    CUmodule m;
    CUfunction f = get("s_arrive", &m);
    enum { NB = 2, BN = 96, N = NB * BN };
    static int in[N], got[3 * N];
    for (int i = 0; i < N; i++)
        in[i] = i * 5 + 2;
    CUdeviceptr din = dalloc(sizeof in, in), dout = dalloc(sizeof got, NULL);
    void *args[] = {&din, &dout};
    const char *what = "bar.arrive / bar.sync producer-consumer; shuffles with partial masks in divergent halves; __syncwarp";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(got, dout, sizeof got));
    int bad = 0;
    for (int g = 0; g < N; g++) {
        int t = g % BN, lane = t & 31, w0 = g - lane;
        int r_of[32];
        for (int l = 0; l < 32; l++)
            r_of[l] = (l & 1) ? in[w0 + (l ^ 2)] : in[w0 + ((l + 2) & 31)];
        int want[3] = {t >= 32 && t < 64 ? 3 * in[g - t + (31 - lane)] : 0, r_of[lane], r_of[31 - lane]};
        if (memcmp(got + 3 * g, want, sizeof want) && bad++ < 6)
            printf("#   arrive: thread %d: got {%d %d %d}, expected {%d %d %d}\n", g, got[3 * g], got[3 * g + 1],
                   got[3 * g + 2], want[0], want[1], want[2]);
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- grid-wide sync */
static void test_grid_sync(void)
{
    CUmodule m;
    CUfunction f = get("s_grid_sync", &m);
    enum { NB = 4, BN = 64, N = NB * BN };
    static int in[N], tmp[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = i * 7 - 100;
    CUdeviceptr din = dalloc(sizeof in, in), dtmp = dalloc(sizeof tmp, NULL), dout = dalloc(sizeof out, NULL);
    int n = N;
    void *args[] = {&din, &dtmp, &dout, &n};
    const char *what = "cooperative launch: grid.sync() between phases that read other CTAs' writes";
    CUresult r = f ? cuLaunchCooperativeKernel(f, NB, 1, 1, BN, 1, 1, 0, NULL, args) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS) {
        printf("#   cooperative launch: %s\n", ptxt_err(r));
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(tmp, dtmp, sizeof tmp));
    PTXT_CHECK(cuMemcpyDtoH(out, dout, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int wo = 2 * in[(i + BN) % N] + 1, wt = 2 * in[(i + 3 * BN) % N] + 1;
        if ((out[i] != wo || tmp[i] != wt) && bad++ < 6)
            printf("#   grid sync: thread %d: out %d tmp %d, expected %d %d\n", i, out[i], tmp[i], wo, wt);
    }
    tcase(bad == 0, what);
    /* more CTAs than can be resident at once: refused, as on a GPU */
    r = cuLaunchCooperativeKernel(f, 1u << 20, 1, 1, BN, 1, 1, 0, NULL, args);
    tcase(r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "a cooperative launch of 2^20 CTAs: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE");
    if (r != CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
        printf("#   got %s\n", ptxt_err(r));
    cuMemFree(din), cuMemFree(dtmp), cuMemFree(dout);
    cuModuleUnload(m);
}

/* ---------------------------------------------------------------- 64-bit atomics */
static void test_atomics64(void)
{
    CUmodule m;
    CUfunction f = get("s_atomics64", &m);
    enum { NB = 3, BN = 64, N = NB * BN };
    static int in[N];
    static unsigned long long g64[8 * NB], out64[8 * 2 * NB];
    static float gf[4 * NB], outf[4 * 2 * NB];
    for (int i = 0; i < N; i++)
        in[i] = (i * 41 + 5) % 211;
    for (int b = 0; b < NB; b++)
        g64[8 * b] = ~0ull, gf[4 * b] = -1.0f;
    CUdeviceptr din = dalloc(sizeof in, in), dg = dalloc(sizeof g64, g64), dgf = dalloc(sizeof gf, gf);
    CUdeviceptr d64 = dalloc(sizeof out64, NULL), dfo = dalloc(sizeof outf, NULL);
    void *args[] = {&din, &dg, &dgf, &d64, &dfo};
    const char *what = "atom and/or/xor/cas/exch .b64 and exch .f32 on global and shared memory";
    if (!f || launch(f, NB, 1, BN, 1, 1, 0, args) != CUDA_SUCCESS) {
        tcase(0, what);
        return;
    }
    PTXT_CHECK(cuMemcpyDtoH(out64, d64, sizeof out64));
    PTXT_CHECK(cuMemcpyDtoH(outf, dfo, sizeof outf));
    int bad = 0;
    for (int b = 0; b < NB; b++) {
        unsigned long long a = ~0ull, o = 0, x = 0, tsum = 0;
        double fsum = -1.0;   /* the initial -1 plus every stored t, minus the one left */
        for (int t = 0; t < BN; t++) {
            int v = in[b * BN + t];
            a &= ~(1ull << (v % 63)), o |= 1ull << (v % 61), x ^= (unsigned long long)v * 0x9e3779b97f4a7c15ull;
            tsum += (unsigned long long)t + 1, fsum += t;
        }
        for (int k = 0; k < 2; k++) {
            const unsigned long long *w = out64 + 8 * (2 * b + k);
            const float *fl = outf + 4 * (2 * b + k);
            /* cas: thread t succeeds only when the word holds t: it ends at some 1..BN; exch: the
             * returned values plus the last = the initial 0 plus every stored value */
            int ok = w[0] == a && w[1] == o && w[2] == x && w[3] >= 1 && w[3] <= BN && w[4] >= 1 && w[4] <= BN &&
                     w[5] + w[4] == tsum && fl[0] >= 0 && fl[0] < BN && (double)fl[1] + fl[0] == fsum;
            if (!ok && bad++ < 6)
                printf("#   atomics64 block %d %s: and %#llx or %#llx xor %#llx cas %llu exch %llu sum %llu f %g %g; "
                       "expected %#llx %#llx %#llx, cas/exch in 1..%d, sum + exch = %llu, f sum + last = %g\n", b,
                       k ? "shared" : "global", w[0], w[1], w[2], w[3], w[4], w[5], (double)fl[0], (double)fl[1], a, o,
                       x, BN, tsum, fsum);
        }
    }
    tcase(bad == 0, what);
    cuMemFree(din), cuMemFree(dg), cuMemFree(dgf), cuMemFree(d64), cuMemFree(dfo);
    cuModuleUnload(m);
}

static void (*const tests[])(void) = {test_special, test_shfl, test_shfl_inactive, test_func_versions, test_vote, test_barrier, test_atomics,
                                      test_diverge, test_calls, test_dynshared, test_globals, test_generic,
                                      test_atomics_shared, test_atomics64, test_arrive, test_grid_sync};
#define NTESTS (int)(sizeof tests / sizeof tests[0])

int main(int argc, char **argv)
{
    char dir[4096], path[4200];
    ptxt_self_dir(argv[0], dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sem_kernels.ptx", dir);
    if (argc > 2 && !strcmp(argv[argc - 2], "--only")) {   /* child: one test */
        ptx = ptxt_slurp(argc > 3 ? argv[1] : path);
        if (!ptx)
            return 1;
        setvbuf(stdout, NULL, _IOLBF, 0);
        ptxt_start();
        tests[atoi(argv[argc - 1])]();
        return FAILED ? 1 : 0;
    }
    const char *file = argc > 1 ? argv[1] : path;
    ptx = ptxt_slurp(file);
    if (!ptx)
        return 1;
    ptxt_start();
    char *probe = ptxt_entry_module(ptx, "s_special");
    if (!probe)
        return 1;
    ptxt_need_interpreter(probe, "s_special");
    free(probe);
    for (int i = 0; i < NTESTS; i++) {
        char cmd[9000], line[4096];
        snprintf(cmd, sizeof cmd, "'%s' '%s' --only %d 2>&1", argv[0], file, i);
        fflush(stdout);
        FILE *c = popen(cmd, "r");
        int cases = 0;
        while (c && fgets(line, sizeof line, c)) {
            if (!strncmp(line, "ok - ", 5))
                printf("ok %d - %s", ++T, line + 5), cases++;
            else if (!strncmp(line, "not ok - ", 9))
                printf("not ok %d - %s", ++T, line + 9), cases++, FAILED++;
            else
                printf("# %s", line[0] == '#' ? line + 2 : line);
        }
        int st = c ? pclose(c) : -1;
        if (!cases || (st != 0 && !FAILED)) {
            printf("not ok %d - test %d ended with status %d\n", ++T, i, st);
            FAILED++;
        }
    }
    printf("1..%d\n", T);
    free(ptx);
    return FAILED ? 1 : 0;
}
