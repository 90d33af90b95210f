/* test_cast.c — proves the host f32 <-> bf16/f16 casts round like the GPU, and that the host
 * build of the cast kernels (libash_cast_kernels_host.so, what hostcuda runs) is bit-identical.
 *
 * Properties: every one of the 65536 bf16 and f16 values round-trips (NaN -> canonical 0x7FFF);
 * the upcast is exact (f16 checked against GCC's _Float16); at every midpoint between adjacent
 * finite 16-bit values the downcast picks the even neighbour and one f32 ulp either side picks
 * the nearer one (subnormals, the largest finite -> Inf tie included); random f32 inputs match an
 * independent nearest-value oracle computed in double; NaN/Inf/zero/denormal inputs give the
 * CUDA results; the kernels' host build (down/up casts with scale, in-place scales) equals the
 * host routines bit for bit, with a launch shape whose grid-stride loop wraps.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ash_kernel.h"
#include "ash_coll_cast.h"

/* the host kernels under test (exported by libash_cast_kernels_host.so) */
#define K(name) void hostcuda_kernel_##name(const hostcuda_dims *d, void **params)
K(ash_coll_k_f32_to_bf16); K(ash_coll_k_bf16_to_f32); K(ash_coll_k_f32_to_f16);
K(ash_coll_k_f16_to_f32); K(ash_coll_k_scale_f32); K(ash_coll_k_scale_bf16);
K(ash_coll_k_scale_f16);
#undef K

static const hostcuda_dims dims = {.grid = {3, 1, 1}, .block = {7, 1, 1}, .shared_bytes = 0};

static int is_nan16(uint16_t h, int bf)
{
    return bf ? (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) : (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}

static float up(int bf, uint16_t h) { return bf ? ash_coll_bf16_to_f32(h) : ash_coll_f16_to_f32(h); }
static uint16_t down(int bf, float f) { return bf ? ash_coll_f32_to_bf16_rn(f) : ash_coll_f32_to_f16_rn(f); }

static void roundtrip_all(int bf)
{
    static uint16_t h[65536], back[65536];
    static float f[65536], fk[65536];
    long long n = 65536;
    float one = 1.0f;
    const void *src;
    void *dst;
    void *args[4] = {&src, &dst, &n, &one};

    for (unsigned i = 0; i < 65536; i++) {
        h[i] = (uint16_t)i;
        f[i] = up(bf, h[i]);
        uint16_t b = down(bf, f[i]);
        uint16_t want = is_nan16(h[i], bf) ? 0x7fffu : h[i];
        if (b != want)
            fail_msg("%s 0x%04x -> %a -> 0x%04x, expected 0x%04x", bf ? "bf16" : "f16", i,
                     (double)f[i], b, want);
        if (!bf && !is_nan16(h[i], 0)) {   /* independent upcast oracle: GCC _Float16 */
            _Float16 g;
            memcpy(&g, &h[i], 2);
            if (ash_coll_f32_bits((float)g) != ash_coll_f32_bits(f[i]))
                fail_msg("f16 0x%04x: upcast %a, _Float16 says %a", i, (double)f[i], (double)g);
        }
        if (is_nan16(h[i], bf) && !isnan(f[i]))
            fail_msg("NaN 0x%04x upcast to a non-NaN", i);
    }
    /* the host kernels agree bit for bit */
    src = h, dst = fk;
    (bf ? hostcuda_kernel_ash_coll_k_bf16_to_f32 : hostcuda_kernel_ash_coll_k_f16_to_f32)(&dims, args);
    src = fk, dst = back;
    (bf ? hostcuda_kernel_ash_coll_k_f32_to_bf16 : hostcuda_kernel_ash_coll_k_f32_to_f16)(&dims, args);
    for (unsigned i = 0; i < 65536; i++) {
        if (ash_coll_f32_bits(fk[i]) != ash_coll_f32_bits(f[i]))
            fail_msg("kernel upcast of 0x%04x: 0x%08x vs host 0x%08x", i,
                     ash_coll_f32_bits(fk[i]), ash_coll_f32_bits(f[i]));
        if (back[i] != down(bf, f[i]))
            fail_msg("kernel downcast of %a: 0x%04x vs host 0x%04x", (double)f[i], back[i],
                     down(bf, f[i]));
    }
}

static void test_bf16_roundtrip_all(void **s) { (void)s; roundtrip_all(1); }
static void test_f16_roundtrip_all(void **s) { (void)s; roundtrip_all(0); }

/* midpoints between adjacent finite values (both signs): ties to even, neighbours to nearest */
static void ties(int bf)
{
    uint16_t last = bf ? 0x7f7fu : 0x7bffu;   /* largest finite; its successor is Inf */
    for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u)
        for (uint32_t a = 0; a <= last; a++) {
            uint16_t lo = (uint16_t)(sign | a), hi = (uint16_t)(sign | (a + 1));
            /* the successor of the largest finite value is Inf: use 2^128 / 2^16 for the midpoint */
            double vhi = a == last ? (bf ? 0x1p128 : 65536.0) * (sign ? -1 : 1) : (double)up(bf, hi);
            double m = ((double)up(bf, lo) + vhi) / 2;
            float mf = (float)m;
            uint16_t even = (a & 1u) ? hi : lo, got;
            if ((double)mf != m)
                fail_msg("midpoint not representable in f32 (test bug) at 0x%04x", lo);
            got = down(bf, mf);
            if (got != even)
                fail_msg("%s tie %a between 0x%04x and 0x%04x -> 0x%04x, expected even 0x%04x",
                         bf ? "bf16" : "f16", m, lo, hi, got, even);
            if (down(bf, nextafterf(mf, 0.0f)) != lo && mf != 0.0f)
                fail_msg("just below the midpoint of 0x%04x/0x%04x should give 0x%04x", lo, hi, lo);
            if (down(bf, nextafterf(mf, sign ? -INFINITY : INFINITY)) != hi)
                fail_msg("just above the midpoint of 0x%04x/0x%04x should give 0x%04x", lo, hi, hi);
        }
}

static void test_bf16_ties_to_even(void **s) { (void)s; ties(1); }
static void test_f16_ties_to_even(void **s) { (void)s; ties(0); }

/* independent oracle: nearest representable by exhaustive comparison in double, ties even */
static uint16_t oracle(int bf, float x)
{
    uint16_t best = 0;
    double bd = INFINITY, ax = fabs((double)x);
    uint16_t sign = signbit(x) ? 0x8000u : 0;
    uint16_t lim = bf ? 0x7f80u : 0x7c00u;   /* Inf */
    /* binary search the magnitude: up() is monotonic over 0 .. lim */
    uint32_t lo = 0, hi = lim;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if ((double)up(bf, (uint16_t)mid) <= ax) lo = mid; else hi = mid;
    }
    for (uint32_t c = lo; c <= hi; c++) {
        double v = c == lim ? (bf ? 0x1p128 : 65536.0) : (double)up(bf, (uint16_t)c);
        double d = fabs(v - ax);
        if (d < bd || (d == bd && !(c & 1u))) {
            bd = d;
            best = (uint16_t)c;
        }
    }
    return (uint16_t)(sign | best);
}

static uint64_t rng = 0x1234567887654321ull;
static uint32_t next32(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void random_vs_oracle(int bf)
{
    for (int i = 0; i < 300000; i++) {
        /* exponents concentrated on the 16-bit range (incl. subnormals and overflow) */
        uint32_t e = (bf ? 1u + next32() % 254u : 100u + next32() % 44u);
        uint32_t bits = (next32() & 0x807fffffu) | (e << 23);
        float x = ash_coll_bits_f32(bits);
        if (down(bf, x) != oracle(bf, x))
            fail_msg("%s(%a): 0x%04x, oracle 0x%04x", bf ? "bf16" : "f16", (double)x,
                     down(bf, x), oracle(bf, x));
    }
}

static void test_bf16_random_vs_oracle(void **s) { (void)s; random_vs_oracle(1); }
static void test_f16_random_vs_oracle(void **s) { (void)s; random_vs_oracle(0); }

static void test_specials(void **s)
{
    static const struct { uint32_t in; uint16_t bf, h; } cases[] = {
        {0x7fc00000u, 0x7fffu, 0x7fffu},   /* qNaN */
        {0x7f800001u, 0x7fffu, 0x7fffu},   /* sNaN */
        {0xffffffffu, 0x7fffu, 0x7fffu},   /* negative NaN -> canonical (positive) */
        {0x7f800000u, 0x7f80u, 0x7c00u},   /* +Inf */
        {0xff800000u, 0xff80u, 0xfc00u},   /* -Inf */
        {0x00000000u, 0x0000u, 0x0000u},
        {0x80000000u, 0x8000u, 0x8000u},   /* -0 */
        {0x00000001u, 0x0000u, 0x0000u},   /* f32 denormals */
        {0x00008000u, 0x0000u, 0x0000u},   /* bf16 tie -> even 0 */
        {0x00018000u, 0x0002u, 0x0000u},   /* bf16 tie -> even 2 (a bf16 denormal) */
        {0x7f7fffffu, 0x7f80u, 0x7c00u},   /* f32 max -> Inf in both */
        {0x33000000u, 0x3300u, 0x0000u},   /* 2^-25: f16 tie -> 0 */
        {0x33000001u, 0x3300u, 0x0001u},   /* just above: smallest f16 subnormal */
        {0x33800000u, 0x3380u, 0x0001u},   /* 2^-24 */
        {0x477fe000u, 0x4780u, 0x7bffu},   /* 65504 */
        {0x477fefffu, 0x4780u, 0x7bffu},   /* just below 65520 */
        {0x477ff000u, 0x4780u, 0x7c00u},   /* 65520 ties to Inf */
        {0x3f800000u, 0x3f80u, 0x3c00u},   /* 1.0 */
        {0xc0490fdbu, 0xc049u, 0xc248u},   /* -pi */
    };
    (void)s;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float x = ash_coll_bits_f32(cases[i].in);
        if (ash_coll_f32_to_bf16_rn(x) != cases[i].bf)
            fail_msg("bf16(0x%08x) = 0x%04x, expected 0x%04x", cases[i].in,
                     ash_coll_f32_to_bf16_rn(x), cases[i].bf);
        if (ash_coll_f32_to_f16_rn(x) != cases[i].h)
            fail_msg("f16(0x%08x) = 0x%04x, expected 0x%04x", cases[i].in,
                     ash_coll_f32_to_f16_rn(x), cases[i].h);
    }
    assert_int_equal(ash_coll_f32_bits(ash_coll_f16_to_f32(0x7e00u)), 0x7fffffffu);
    assert_int_equal(ash_coll_f32_bits(ash_coll_bf16_to_f32(0xffc1u)), 0xffc10000u);
}

/* scaled casts and in-place scales: kernel host build == host routines, bit for bit */
static void test_kernels_match_host(void **s)
{
    enum { N = 4099 };
    static float f[N], fo[N], ref[N];
    static uint16_t h[N], ho[N], hr[N];
    static const float scales[] = {1.0f, 0.25f, 1.0f / 3.0f, 65536.0f};
    long long n = N;
    float sc;
    void *p1, *p2;
    void *cast_args[4] = {&p1, &p2, &n, &sc};
    void *scale_args[3] = {&p1, &n, &sc};
    (void)s;

    for (int i = 0; i < N; i++)
        f[i] = ash_coll_bits_f32(next32() * 2654435761u ^ next32());
    f[0] = NAN, f[1] = INFINITY, f[2] = -0.0f, f[3] = 1e-40f;
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        sc = scales[k];
        for (int bf = 0; bf <= 1; bf++) {
            p1 = f, p2 = ho;
            (bf ? hostcuda_kernel_ash_coll_k_f32_to_bf16 : hostcuda_kernel_ash_coll_k_f32_to_f16)(&dims, cast_args);
            for (int i = 0; i < N; i++)
                if (ho[i] != down(bf, f[i] * sc))
                    fail_msg("down(%a * %a): kernel 0x%04x, host 0x%04x", (double)f[i],
                             (double)sc, ho[i], down(bf, f[i] * sc));
            p1 = ho, p2 = fo;
            (bf ? hostcuda_kernel_ash_coll_k_bf16_to_f32 : hostcuda_kernel_ash_coll_k_f16_to_f32)(&dims, cast_args);
            for (int i = 0; i < N; i++)
                if (ash_coll_f32_bits(fo[i]) != ash_coll_f32_bits(sc == 1.0f ? up(bf, ho[i]) : up(bf, ho[i]) * sc))
                    fail_msg("up(0x%04x) * %a: kernel 0x%08x", ho[i], (double)sc,
                             ash_coll_f32_bits(fo[i]));
            for (int i = 0; i < N; i++)
                h[i] = ho[i], hr[i] = down(bf, up(bf, ho[i]) * sc);
            p1 = h;
            (bf ? hostcuda_kernel_ash_coll_k_scale_bf16 : hostcuda_kernel_ash_coll_k_scale_f16)(&dims, scale_args);
            assert_memory_equal(h, hr, sizeof h);
        }
        for (int i = 0; i < N; i++)
            fo[i] = f[i], ref[i] = f[i] * sc;
        p1 = fo;
        hostcuda_kernel_ash_coll_k_scale_f32(&dims, scale_args);
        assert_memory_equal(fo, ref, sizeof fo);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_roundtrip_all),
        cmocka_unit_test(test_f16_roundtrip_all),
        cmocka_unit_test(test_bf16_ties_to_even),
        cmocka_unit_test(test_f16_ties_to_even),
        cmocka_unit_test(test_bf16_random_vs_oracle),
        cmocka_unit_test(test_f16_random_vs_oracle),
        cmocka_unit_test(test_specials),
        cmocka_unit_test(test_kernels_match_host),
    };
    return cmocka_run_group_tests_name("collectives host casts", tests, NULL, NULL);
}
