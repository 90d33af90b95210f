/* isa_cases.c — C references of the PTX ISA's definitions for the instruction forms of
 * isa_kernels.cu, and the table test_ptx_isa.c runs (isa_cases.h). A reference takes the operands'
 * bits and returns the result's bits, with flags for results the ISA leaves unspecified (F_ANY) or
 * a zero of either sign (F_ZSIGN). Rounding modes come from the host FPU (isa_ref.h; compiled with
 * -frounding-math). Not thread-safe: the FPU mode is global.
 */
#include "isa_cases.h"
#include "isa_ref.h"

#include <limits.h>
#include <stdio.h>

/* ---------------------------------------------------------------- references */
#define I32(v) ((int32_t)(uint32_t)(v))
#define U32V(v) ((uint32_t)(v))
#define I64(v) ((int64_t)(v))
#define R(name) static int name(const uint64_t *x, uint64_t *r)

static float with_mode32(int mode, float (*op)(float, float, float), float a, float b, float c)
{
    int old = fegetround();
    fesetround(ref_fe[mode]);
    volatile float va = a, vb = b, vc = c;
    float v = op(va, vb, vc);
    fesetround(old);
    return v;
}
static double with_mode64(int mode, double (*op)(double, double, double), double a, double b, double c)
{
    int old = fegetround();
    fesetround(ref_fe[mode]);
    volatile double va = a, vb = b, vc = c;
    double v = op(va, vb, vc);
    fesetround(old);
    return v;
}
static float op_add32(float a, float b, float c) { (void)c; volatile float v = a + b; return v; }
static float op_sub32(float a, float b, float c) { (void)c; volatile float v = a - b; return v; }
static float op_mul32(float a, float b, float c) { (void)c; volatile float v = a * b; return v; }
static float op_div32(float a, float b, float c) { (void)c; volatile float v = a / b; return v; }
static float op_fma32(float a, float b, float c) { return fmaf(a, b, c); }
static double op_add64(double a, double b, double c) { (void)c; volatile double v = a + b; return v; }
static double op_mul64(double a, double b, double c) { (void)c; volatile double v = a * b; return v; }
static double op_div64(double a, double b, double c) { (void)c; volatile double v = a / b; return v; }
static double op_fma64(double a, double b, double c) { return fma(a, b, c); }

#define F32OP(name, op, mode)                                                     \
    R(name)                                                                        \
    {                                                                              \
        *r = bits_f32(with_mode32(mode, op, f32_of(x[0]), f32_of(x[1]), f32_of(x[2]))); \
        return 0;                                                                  \
    }
F32OP(r_add_rn32, op_add32, RN) F32OP(r_add_rz32, op_add32, RZ) F32OP(r_add_rm32, op_add32, RM)
F32OP(r_add_rp32, op_add32, RP) F32OP(r_sub_rn32, op_sub32, RN) F32OP(r_mul_rn32, op_mul32, RN)
F32OP(r_mul_rz32, op_mul32, RZ) F32OP(r_mul_rm32, op_mul32, RM) F32OP(r_mul_rp32, op_mul32, RP)
F32OP(r_fma_rn32, op_fma32, RN) F32OP(r_fma_rz32, op_fma32, RZ) F32OP(r_fma_rm32, op_fma32, RM)
F32OP(r_fma_rp32, op_fma32, RP) F32OP(r_div_rn32, op_div32, RN) F32OP(r_div_rz32, op_div32, RZ)
#define F64OP(name, op, mode)                                                     \
    R(name)                                                                        \
    {                                                                              \
        *r = bits_f64(with_mode64(mode, op, f64_of(x[0]), f64_of(x[1]), f64_of(x[2]))); \
        return 0;                                                                  \
    }
F64OP(r_add_rn64, op_add64, RN) F64OP(r_add_rz64, op_add64, RZ) F64OP(r_add_rm64, op_add64, RM)
F64OP(r_add_rp64, op_add64, RP) F64OP(r_mul_rn64, op_mul64, RN) F64OP(r_mul_rz64, op_mul64, RZ)
F64OP(r_fma_rn64, op_fma64, RN) F64OP(r_fma_rm64, op_fma64, RM) F64OP(r_fma_rp64, op_fma64, RP)
F64OP(r_div_rn64, op_div64, RN)

/* .ftz: subnormal operands and results flushed to sign-preserving zero */
R(r_add_ftz32) { *r = bits_f32(ftz32(op_add32(ftz32(f32_of(x[0])), ftz32(f32_of(x[1])), 0))); return 0; }
R(r_mul_ftz32) { *r = bits_f32(ftz32(op_mul32(ftz32(f32_of(x[0])), ftz32(f32_of(x[1])), 0))); return 0; }
/* .sat: clamped to [0, 1], NaN -> +0 */
static float sat32(float v) { return isnan(v) ? 0.0f : v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }
R(r_fadd_sat32) { *r = bits_f32(sat32(op_add32(f32_of(x[0]), f32_of(x[1]), 0))); return F_ZSIGN; }
R(r_fma_ftz_sat32)
{
    float v = fmaf(ftz32(f32_of(x[0])), ftz32(f32_of(x[1])), ftz32(f32_of(x[2])));
    *r = bits_f32(sat32(ftz32(v)));
    return F_ZSIGN;
}
R(r_sqrt32) { *r = bits_f32(sqrtf(f32_of(x[0]))); return 0; }
R(r_rcp32) { *r = bits_f32(1.0f / f32_of(x[0])); return 0; }
R(r_rsqrt32) { *r = bits_f32((float)(1.0 / sqrt((double)f32_of(x[0])))); return 0; }
R(r_ex2_32) { *r = bits_f32((float)exp2((double)f32_of(x[0]))); return 0; }
R(r_ex2_ftz32) { *r = bits_f32(ftz32((float)exp2((double)ftz32(f32_of(x[0]))))); return 0; }
R(r_lg2_32) { *r = bits_f32((float)log2((double)f32_of(x[0]))); return 0; }
R(r_sin32) { *r = bits_f32((float)sin((double)f32_of(x[0]))); return 0; }
R(r_cos32) { *r = bits_f32((float)cos((double)f32_of(x[0]))); return 0; }
R(r_tanh32) { *r = bits_f32((float)tanh((double)f32_of(x[0]))); return 0; }
/* div.approx: the stated bound holds for 2^-126 <= |b| <= 2^126 only */
R(r_div_approx32)
{
    float b = fabsf(f32_of(x[1]));
    *r = bits_f32(f32_of(x[0]) / f32_of(x[1]));
    return b >= 0x1p-126f && b <= 0x1p126f ? 0 : F_ANY;
}
R(r_abs32) { *r = x[0] & 0x7fffffffu; return 0; }
R(r_neg32) { *r = (x[0] ^ 0x80000000u) & 0xffffffffu; return 0; }
R(r_copysign32) { *r = (x[1] & 0x7fffffffu) | (x[0] & 0x80000000u); return 0; }
/* min/max: a NaN operand yields the other one; two NaNs a NaN; +0/-0 either */
static double minmax(double a, double b, int max, int nan_propagates, int *flags)
{
    if (isnan(a) || isnan(b))
        return (nan_propagates || (isnan(a) && isnan(b))) ? NAN : isnan(a) ? b : a;
    if (a == 0 && b == 0 && signbit(a) != signbit(b))
        *flags |= F_ZSIGN;
    return max ? (a > b ? a : b) : (a < b ? a : b);
}
R(r_min32) { int f = 0; *r = bits_f32((float)minmax(f32_of(x[0]), f32_of(x[1]), 0, 0, &f)); return f; }
R(r_max32) { int f = 0; *r = bits_f32((float)minmax(f32_of(x[0]), f32_of(x[1]), 1, 0, &f)); return f; }
R(r_min_nan32) { int f = 0; *r = bits_f32((float)minmax(f32_of(x[0]), f32_of(x[1]), 0, 1, &f)); return f; }
R(r_max_ftz32)
{
    int f = 0;
    *r = bits_f32((float)minmax(ftz32(f32_of(x[0])), ftz32(f32_of(x[1])), 1, 0, &f));
    return f;
}
R(r_min64) { int f = 0; *r = bits_f64(minmax(f64_of(x[0]), f64_of(x[1]), 0, 0, &f)); return f; }
R(r_max64) { int f = 0; *r = bits_f64(minmax(f64_of(x[0]), f64_of(x[1]), 1, 0, &f)); return f; }
R(r_sqrt64) { *r = bits_f64(sqrt(f64_of(x[0]))); return 0; }
R(r_rcp64) { *r = bits_f64(1.0 / f64_of(x[0])); return 0; }
R(r_neg64) { *r = x[0] ^ 0x8000000000000000ull; return 0; }

/* ---- f16 / bf16: exact double arithmetic (fma: round-to-odd), then one rounding */
static uint64_t h_op(uint64_t a, uint64_t b, uint64_t c, ref_fmt f, int op)
{
    double x = narrow_to_f64((uint32_t)a & 0xffff, f), y = narrow_to_f64((uint32_t)b & 0xffff, f);
    double z = narrow_to_f64((uint32_t)c & 0xffff, f), v;
    switch (op) {
    case 0: v = x + y; break;
    case 1: v = x * y; break;
    case 2: v = x - y; break;
    default: v = fma_rodd(x, y, z); break;
    }
    return f64_to_narrow(v, f, RN);
}
R(r_add_f16) { *r = h_op(x[0], x[1], 0, FMT_F16, 0); return 0; }
R(r_mul_f16) { *r = h_op(x[0], x[1], 0, FMT_F16, 1); return 0; }
R(r_sub_f16) { *r = h_op(x[0], x[1], 0, FMT_F16, 2); return 0; }
R(r_fma_f16) { *r = h_op(x[0], x[1], x[2], FMT_F16, 3); return 0; }
R(r_fma_bf16) { *r = h_op(x[0], x[1], x[2], FMT_BF16, 3); return 0; }
static uint64_t h2_op(const uint64_t *x, ref_fmt f, int op)
{
    uint64_t lo = h_op(x[0], x[1], x[2], f, op), hi = h_op(x[0] >> 16, x[1] >> 16, x[2] >> 16, f, op);
    return lo | hi << 16;
}
R(r_add_f16x2) { *r = h2_op(x, FMT_F16, 0); return 0; }
R(r_mul_f16x2) { *r = h2_op(x, FMT_F16, 1); return 0; }
R(r_fma_f16x2) { *r = h2_op(x, FMT_F16, 3); return 0; }
R(r_fma_bf16x2) { *r = h2_op(x, FMT_BF16, 3); return 0; }
R(r_min_bf16)
{
    int f = 0;
    double v = minmax(narrow_to_f64((uint32_t)x[0], FMT_BF16), narrow_to_f64((uint32_t)x[1], FMT_BF16), 0, 0, &f);
    *r = f64_to_narrow(v, FMT_BF16, RN);
    return f;
}
R(r_max_f16)
{
    int f = 0;
    double v = minmax(narrow_to_f64((uint32_t)x[0], FMT_F16), narrow_to_f64((uint32_t)x[1], FMT_F16), 1, 0, &f);
    *r = f64_to_narrow(v, FMT_F16, RN);
    return f;
}
R(r_neg_f16) { *r = (x[0] ^ 0x8000) & 0xffff; return 0; }

/* ---- integer */
R(r_addc) { uint64_t s = (uint64_t)U32V(x[0]) + U32V(x[1]); *r = (s & 0xffffffffu) | (s >> 32) << 32; return 0; }
R(r_add32) { *r = (uint32_t)(U32V(x[0]) + U32V(x[1])); return 0; }
R(r_sub32) { *r = (uint32_t)(U32V(x[0]) - U32V(x[1])); return 0; }
static uint32_t sat_s32(int64_t v) { return (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v); }
R(r_add_sat32) { *r = sat_s32((int64_t)I32(x[0]) + I32(x[1])); return 0; }
R(r_sub_sat32) { *r = sat_s32((int64_t)I32(x[0]) - I32(x[1])); return 0; }
R(r_add64) { *r = x[0] + x[1]; return 0; }
R(r_sub64) { *r = x[0] - x[1]; return 0; }
R(r_mul_lo32) { *r = (uint32_t)(U32V(x[0]) * U32V(x[1])); return 0; }
R(r_mul_hi_u32) { *r = (uint32_t)(((uint64_t)U32V(x[0]) * U32V(x[1])) >> 32); return 0; }
R(r_mul_hi_s32) { *r = (uint32_t)(((int64_t)I32(x[0]) * I32(x[1])) >> 32); return 0; }
R(r_mul_wide_u32) { *r = (uint64_t)U32V(x[0]) * U32V(x[1]); return 0; }
R(r_mul_wide_s32) { *r = (uint64_t)((int64_t)I32(x[0]) * I32(x[1])); return 0; }
R(r_mul_lo64) { *r = x[0] * x[1]; return 0; }
R(r_mul_hi_u64) { *r = (uint64_t)(((unsigned __int128)x[0] * x[1]) >> 64); return 0; }
R(r_mul_hi_s64) { *r = (uint64_t)(((__int128)I64(x[0]) * I64(x[1])) >> 64); return 0; }
R(r_mul24_lo) { *r = (uint32_t)((uint64_t)(U32V(x[0]) & 0xffffff) * (U32V(x[1]) & 0xffffff)); return 0; }
R(r_mad_lo32) { *r = (uint32_t)(U32V(x[0]) * U32V(x[1]) + U32V(x[2])); return 0; }
R(r_mad_hi_u32) { *r = (uint32_t)((((uint64_t)U32V(x[0]) * U32V(x[1])) >> 32) + U32V(x[2])); return 0; }
R(r_mad_wide_s32) { *r = (uint64_t)((int64_t)I32(x[0]) * I32(x[1])) + x[2]; return 0; }
R(r_mad_wide_u32) { *r = (uint64_t)U32V(x[0]) * U32V(x[1]) + x[2]; return 0; }
R(r_mad_lo64) { *r = x[0] * x[1] + x[2]; return 0; }
/* division by zero: the ISA leaves the value unspecified; INT_MIN / -1 likewise (overflow) */
R(r_div_u32) { if (!U32V(x[1])) return F_ANY; *r = U32V(x[0]) / U32V(x[1]); return 0; }
R(r_rem_u32) { if (!U32V(x[1])) return F_ANY; *r = U32V(x[0]) % U32V(x[1]); return 0; }
R(r_div_s32)
{
    if (!I32(x[1]) || (I32(x[0]) == INT32_MIN && I32(x[1]) == -1)) return F_ANY;
    *r = (uint32_t)(I32(x[0]) / I32(x[1]));
    return 0;
}
R(r_rem_s32)
{
    if (!I32(x[1]) || (I32(x[0]) == INT32_MIN && I32(x[1]) == -1)) return F_ANY;
    *r = (uint32_t)(I32(x[0]) % I32(x[1]));
    return 0;
}
R(r_div_u64) { if (!x[1]) return F_ANY; *r = x[0] / x[1]; return 0; }
R(r_div_s64)
{
    if (!x[1] || (I64(x[0]) == INT64_MIN && I64(x[1]) == -1)) return F_ANY;
    *r = (uint64_t)(I64(x[0]) / I64(x[1]));
    return 0;
}
R(r_rem_s64)
{
    if (!x[1] || (I64(x[0]) == INT64_MIN && I64(x[1]) == -1)) return F_ANY;
    *r = (uint64_t)(I64(x[0]) % I64(x[1]));
    return 0;
}
/* shifts: amounts past the width clamp to the width (unsigned amount) */
R(r_shl32) { uint32_t n = U32V(x[1]); *r = n >= 32 ? 0 : (uint32_t)(U32V(x[0]) << n); return 0; }
R(r_shr_u32) { uint32_t n = U32V(x[1]); *r = n >= 32 ? 0 : U32V(x[0]) >> n; return 0; }
R(r_shr_s32) { uint32_t n = U32V(x[1]); *r = (uint32_t)(I32(x[0]) >> (n >= 32 ? 31 : n)); return 0; }
R(r_shl64) { uint32_t n = U32V(x[1]); *r = n >= 64 ? 0 : x[0] << n; return 0; }
R(r_shr_s64) { uint32_t n = U32V(x[1]); *r = (uint64_t)(I64(x[0]) >> (n >= 64 ? 63 : n)); return 0; }
/* bfe / bfi as the ISA's pseudocode (pos, len: low 8 bits) */
static uint64_t bfe(uint64_t a, uint32_t b, uint32_t c, int msb, int is_signed)
{
    uint32_t pos = b & 0xff, len = c & 0xff;
    int sbit = 0;
    if (is_signed && len != 0) {
        uint32_t top = pos + len - 1 > (uint32_t)msb ? (uint32_t)msb : pos + len - 1;
        sbit = (int)(a >> top & 1);
    }
    uint64_t d = 0;
    for (int i = 0; i <= msb; i++) {
        uint64_t bit = ((uint32_t)i < len && pos + (uint32_t)i <= (uint32_t)msb) ? (a >> (pos + i) & 1) : (uint64_t)sbit;
        d |= bit << i;
    }
    return d;
}
R(r_bfe_u32) { *r = bfe(U32V(x[0]), U32V(x[1]), U32V(x[2]), 31, 0); return 0; }
R(r_bfe_s32) { *r = bfe(U32V(x[0]), U32V(x[1]), U32V(x[2]), 31, 1); return 0; }
R(r_bfe_s64) { *r = bfe(x[0], U32V(x[1]), U32V(x[2]), 63, 1); return 0; }
R(r_bfi32)
{
    uint32_t a = U32V(x[0]), f = U32V(x[1]), pos = U32V(x[2]) & 0xff, len = U32V(x[3]) & 0xff;
    for (uint32_t i = 0; i < len && pos + i <= 31; i++)
        f = (f & ~(1u << (pos + i))) | (a >> i & 1) << (pos + i);
    *r = f;
    return 0;
}
R(r_brev32) { uint32_t a = U32V(x[0]), d = 0; for (int i = 0; i < 32; i++) d |= (a >> i & 1) << (31 - i); *r = d; return 0; }
R(r_brev64) { uint64_t d = 0; for (int i = 0; i < 64; i++) d |= (x[0] >> i & 1) << (63 - i); *r = d; return 0; }
R(r_popc32) { *r = (uint64_t)__builtin_popcount(U32V(x[0])); return 0; }
R(r_popc64) { *r = (uint64_t)__builtin_popcountll(x[0]); return 0; }
R(r_clz32) { *r = U32V(x[0]) ? (uint64_t)__builtin_clz(U32V(x[0])) : 32; return 0; }
R(r_clz64) { *r = x[0] ? (uint64_t)__builtin_clzll(x[0]) : 64; return 0; }
/* prmt default mode: bytes {b, a} = b7..b4 a3..a0; selector nibble: bits 0-2 byte, bit 3 sign */
R(r_prmt)
{
    uint64_t bytes = (uint64_t)U32V(x[1]) << 32 | U32V(x[0]);
    uint32_t c = U32V(x[2]), d = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t sel = c >> (4 * k) & 0xf, byte = (uint32_t)(bytes >> (8 * (sel & 7))) & 0xff;
        if (sel & 8)
            byte = (byte & 0x80) ? 0xff : 0;
        d |= byte << (8 * k);
    }
    *r = d;
    return 0;
}
/* shf: {b:a} (b the high word) shifted by c (wrap: c & 31; clamp: min(c, 32)) */
static uint32_t shf(uint32_t a, uint32_t b, uint32_t c, int left, int clamp)
{
    uint32_t n = clamp ? (c > 32 ? 32 : c) : (c & 31);
    uint64_t v = (uint64_t)b << 32 | a;
    return left ? (uint32_t)((v << n) >> 32) : (uint32_t)(v >> n);
}
R(r_shf_lw) { *r = shf(U32V(x[0]), U32V(x[1]), U32V(x[2]), 1, 0); return 0; }
R(r_shf_rw) { *r = shf(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0, 0); return 0; }
R(r_shf_lc) { *r = shf(U32V(x[0]), U32V(x[1]), U32V(x[2]), 1, 1); return 0; }
R(r_shf_rc) { *r = shf(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0, 1); return 0; }
static uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut)
{
    uint32_t d = 0;
    for (int i = 0; i < 32; i++) {
        uint32_t idx = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
        d |= (lut >> idx & 1) << i;
    }
    return d;
}
R(r_lop3_96) { *r = lop3(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0x96); return 0; }
R(r_lop3_e8) { *r = lop3(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0xe8); return 0; }
R(r_lop3_f8) { *r = lop3(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0xf8); return 0; }
R(r_lop3_01) { *r = lop3(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0x01); return 0; }
R(r_and32) { *r = U32V(x[0]) & U32V(x[1]); return 0; }
R(r_or64) { *r = x[0] | x[1]; return 0; }
R(r_xor32) { *r = U32V(x[0]) ^ U32V(x[1]); return 0; }
R(r_not32) { *r = (uint32_t)~U32V(x[0]); return 0; }
R(r_min_s32) { *r = (uint32_t)(I32(x[0]) < I32(x[1]) ? I32(x[0]) : I32(x[1])); return 0; }
R(r_max_s32) { *r = (uint32_t)(I32(x[0]) > I32(x[1]) ? I32(x[0]) : I32(x[1])); return 0; }
R(r_min_u32) { *r = U32V(x[0]) < U32V(x[1]) ? U32V(x[0]) : U32V(x[1]); return 0; }
R(r_max_u64) { *r = x[0] > x[1] ? x[0] : x[1]; return 0; }
R(r_min_s64) { *r = (uint64_t)(I64(x[0]) < I64(x[1]) ? I64(x[0]) : I64(x[1])); return 0; }
R(r_abs_s32) { *r = I32(x[0]) < 0 ? (uint32_t)(0u - U32V(x[0])) : U32V(x[0]); return 0; }   /* abs(INT_MIN) = INT_MIN */
R(r_neg_s32) { *r = (uint32_t)(0u - U32V(x[0])); return 0; }
R(r_abs_s64) { *r = I64(x[0]) < 0 ? 0 - x[0] : x[0]; return 0; }

/* ---- conversions: float -> integer rounds, saturates to the range, NaN -> 0 */
static int64_t f2i(double v, int mode, int64_t lo, int64_t hi, int *nan)
{
    *nan = isnan(v);
    if (*nan)
        return 0;
    double t = mode == RN ? nearbyint(v) : mode == RZ ? trunc(v) : mode == RM ? floor(v) : ceil(v);
    if (t <= (double)lo)
        return lo;
    if (t >= (double)hi)
        return hi;
    return (int64_t)t;
}
static uint64_t f2u64(double v, int mode)
{
    if (isnan(v))
        return 0;
    double t = mode == RN ? nearbyint(v) : trunc(v);
    if (t <= 0)
        return 0;
    if (t >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)t;
}
#define CVT_F2S32(name, mode) R(name) { int n; *r = (uint32_t)(int32_t)f2i(f32_of(x[0]), mode, INT32_MIN, INT32_MAX, &n); return 0; }
CVT_F2S32(r_cvt_rni_s32, RN) CVT_F2S32(r_cvt_rzi_s32, RZ) CVT_F2S32(r_cvt_rmi_s32, RM) CVT_F2S32(r_cvt_rpi_s32, RP)
R(r_cvt_rzi_u32) { int n; *r = (uint32_t)f2i(f32_of(x[0]), RZ, 0, UINT32_MAX, &n); return 0; }
R(r_cvt_rzi_s64) { int n; *r = (uint64_t)f2i(f64_of(x[0]), RZ, INT64_MIN, INT64_MAX, &n); return 0; }
R(r_cvt_rni_u64) { *r = f2u64(f32_of(x[0]), RN); return 0; }
static float i2f_mode(int mode, double exact_or_i64, int is_u64, uint64_t u)
{
    int old = fegetround();
    fesetround(ref_fe[mode]);
    volatile float v = is_u64 ? (float)u : (float)exact_or_i64;
    fesetround(old);
    return v;
}
R(r_cvt_rn_f32_s32) { *r = bits_f32(i2f_mode(RN, (double)I32(x[0]), 0, 0)); return 0; }
R(r_cvt_rz_f32_u32) { *r = bits_f32(i2f_mode(RZ, (double)U32V(x[0]), 0, 0)); return 0; }
R(r_cvt_rn_f32_u64) { *r = bits_f32(i2f_mode(RN, 0, 1, x[0])); return 0; }
R(r_cvt_rn_f64_s64) { *r = bits_f64((double)I64(x[0])); return 0; }
R(r_cvt_f64_f32) { *r = bits_f64((double)f32_of(x[0])); return 0; }
static float d2f_mode(int mode, double d)
{
    int old = fegetround();
    fesetround(ref_fe[mode]);
    volatile double vd = d;
    volatile float v = (float)vd;
    fesetround(old);
    return v;
}
R(r_cvt_rn_f32_f64) { *r = bits_f32(d2f_mode(RN, f64_of(x[0]))); return 0; }
R(r_cvt_rz_f32_f64) { *r = bits_f32(d2f_mode(RZ, f64_of(x[0]))); return 0; }
R(r_cvt_rni_f32) { *r = bits_f32(nearbyintf(f32_of(x[0]))); return 0; }
R(r_cvt_rzi_f32) { *r = bits_f32(truncf(f32_of(x[0]))); return 0; }
R(r_cvt_sat_f32) { *r = bits_f32(sat32(f32_of(x[0]))); return F_ZSIGN; }
R(r_cvt_ftz_f32) { *r = bits_f32(ftz32(f32_of(x[0]))); return 0; }
R(r_cvt_rn_f16) { *r = f64_to_narrow(f32_of(x[0]), FMT_F16, RN); return 0; }
R(r_cvt_rz_f16) { *r = f64_to_narrow(f32_of(x[0]), FMT_F16, RZ); return 0; }
R(r_cvt_f32_f16) { *r = bits_f32((float)narrow_to_f64((uint32_t)x[0] & 0xffff, FMT_F16)); return 0; }
R(r_cvt_rn_bf16) { *r = f64_to_narrow(f32_of(x[0]), FMT_BF16, RN); return 0; }
R(r_cvt_f32_bf16) { *r = bits_f32((float)narrow_to_f64((uint32_t)x[0] & 0xffff, FMT_BF16)); return 0; }
/* the pair forms: d = {a -> upper half, b -> lower half} */
R(r_cvt_f16x2) { *r = (uint64_t)f64_to_narrow(f32_of(x[0]), FMT_F16, RN) << 16 | f64_to_narrow(f32_of(x[1]), FMT_F16, RN); return 0; }
R(r_cvt_bf16x2) { *r = (uint64_t)f64_to_narrow(f32_of(x[0]), FMT_BF16, RN) << 16 | f64_to_narrow(f32_of(x[1]), FMT_BF16, RN); return 0; }
R(r_cvt_sat_s8) { int32_t v = I32(x[0]); *r = (uint32_t)(v > 127 ? 127 : v < -128 ? -128 : v); return 0; }
R(r_cvt_s32_s16) { *r = (uint32_t)(int32_t)(int16_t)(uint16_t)x[0]; return 0; }

/* ---- comparison and selection (f: ordered comparisons are false on NaN, u-forms true) */
#define CMPF(name, get, expr) R(name) { double a = get(x[0]), b = get(x[1]); (void)a; (void)b; *r = (expr) ? 1 : 0; return 0; }
CMPF(r_setp_lt_f32, f32_of, a < b)
CMPF(r_setp_ltu_f32, f32_of, a < b || isnan(a) || isnan(b))
CMPF(r_setp_ne_f32, f32_of, a != b && !isnan(a) && !isnan(b))
CMPF(r_setp_neu_f32, f32_of, a != b)
CMPF(r_setp_num_f32, f32_of, !isnan(a) && !isnan(b))
CMPF(r_setp_nan_f32, f32_of, isnan(a) || isnan(b))
CMPF(r_setp_ge_f64, f64_of, a >= b)
R(r_setp_lt_s32) { *r = I32(x[0]) < I32(x[1]); return 0; }
R(r_setp_lo_u32) { *r = U32V(x[0]) < U32V(x[1]); return 0; }
R(r_setp_hs_u64) { *r = x[0] >= x[1]; return 0; }
R(r_setp_gt_s64) { *r = I64(x[0]) > I64(x[1]); return 0; }
R(r_set_lt_u32_f32) { *r = f32_of(x[0]) < f32_of(x[1]) ? 0xffffffffu : 0; return 0; }
R(r_set_geu_f32)
{
    float a = f32_of(x[0]), b = f32_of(x[1]);
    *r = bits_f32(a >= b || isnan(a) || isnan(b) ? 1.0f : 0.0f);
    return 0;
}
R(r_slct_u32_f32)
{
    float c = f32_of(x[2]);
    if (isnan(c))
        return F_ANY;
    *r = c >= 0.0f ? U32V(x[0]) : U32V(x[1]);
    return 0;
}
R(r_slct_s32) { *r = I32(x[2]) >= 0 ? U32V(x[0]) : U32V(x[1]); return 0; }


/* ---- more forms (predicates, testp, bfind, dot products, sad, prmt modes, 16-bit, cvt) */
R(r_pred_plain) { *r = I32(x[0]) < I32(x[1]); return 0; }
R(r_testp32)
{
    float a = f32_of(x[0]);
    int c = fpclassify(a);
    /* glibc's isinf() is -1 for -inf: every class test normalised to 0 / 1 */
    *r = (uint64_t)((isfinite(a) != 0) | (isinf(a) != 0) << 1 | !isnan(a) << 2 | (isnan(a) != 0) << 3 |
                    (c == FP_NORMAL) << 4 | (c == FP_SUBNORMAL) << 5);
    return 0;
}
R(r_testp64)
{
    double a = f64_of(x[0]);
    int c = fpclassify(a);
    *r = (uint64_t)((isfinite(a) != 0) | (c == FP_NORMAL) << 4 | (c == FP_SUBNORMAL) << 5);
    return 0;
}
R(r_pred_logic)
{
    int a = I32(x[0]), b = I32(x[1]), c = I32(x[2]);
    int p = a < b, q = b < c, gt = a > c;
    *r = (uint64_t)(p | q << 1 | (p & q) << 2 | (p | q) << 3 | (p ^ q) << 4 | !p << 5 | (gt && q) << 6 |
                    (!gt && q) << 7 | p << 8 | !q << 9);
    return 0;
}
R(r_mov_pack) { *r = x[0] >> 32 | x[0] << 32; return 0; }
static uint32_t bfind_u(uint32_t a) { return a ? 31u - (uint32_t)__builtin_clz(a) : 0xffffffffu; }
R(r_bfind_u32) { *r = bfind_u(U32V(x[0])); return 0; }
R(r_bfind_s32) { int32_t a = I32(x[0]); *r = bfind_u((uint32_t)(a < 0 ? ~a : a)); return 0; }
R(r_bfind_shiftamt) { uint32_t p = bfind_u(U32V(x[0])); *r = p == 0xffffffffu ? p : 31u - p; return 0; }
/* bmsk, szext: the PTX ISA's pseudo-code (positions and widths of 32 or more differ by mode) */
static uint32_t bmsk(uint32_t a, uint32_t b, int clamp)
{
    uint32_t a1 = a & 31, b1 = b & 31, sum = a1 + b1;
    uint32_t mask0 = ~0u << a1, mask1 = sum >= 32 ? 0 : ~0u << sum;
    if (clamp && a >= 32)
        mask0 = 0;
    if (sum >= 32 || (clamp && (a >= 32 || b >= 32)))
        mask1 = 0;
    else if (b1 == 0)
        mask1 = ~0u;
    return mask0 & ~mask1;
}
static uint32_t szext(uint32_t a, uint32_t b, int clamp, int sgn)
{
    uint32_t b1 = b & 31;
    int too_large = b >= 32 && clamp;
    uint32_t mask = too_large ? 0 : ~0u << b1;
    int sign = b1 != 0 && !too_large && sgn && (a >> ((b1 - 1) & 31) & 1);
    return (a & ~mask) | (sign ? mask : 0);
}
R(r_bmsk_c) { *r = bmsk(U32V(x[0]), U32V(x[1]), 1); return 0; }
R(r_bmsk_w) { *r = bmsk(U32V(x[0]), U32V(x[1]), 0); return 0; }
R(r_szext_cs) { *r = szext(U32V(x[0]), U32V(x[1]), 1, 1); return 0; }
R(r_szext_ws) { *r = szext(U32V(x[0]), U32V(x[1]), 0, 1); return 0; }
R(r_szext_cu) { *r = szext(U32V(x[0]), U32V(x[1]), 1, 0); return 0; }
R(r_szext_wu) { *r = szext(U32V(x[0]), U32V(x[1]), 0, 0); return 0; }
static uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c, int sgn)
{
    uint32_t d = c;
    for (int k = 0; k < 4; k++) {
        int32_t x = sgn ? (int8_t)(a >> 8 * k) : (int32_t)(uint8_t)(a >> 8 * k);
        int32_t y = sgn ? (int8_t)(b >> 8 * k) : (int32_t)(uint8_t)(b >> 8 * k);
        d += (uint32_t)(x * y);
    }
    return d;
}
R(r_dp4a_u) { *r = dp4a(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0); return 0; }
R(r_dp4a_s) { *r = dp4a(U32V(x[0]), U32V(x[1]), U32V(x[2]), 1); return 0; }
static uint32_t dp2a(uint32_t a, uint32_t b, uint32_t c, int hi, int sgn)
{
    uint32_t d = c;
    for (int k = 0; k < 2; k++) {
        int32_t x = sgn ? (int16_t)(a >> 16 * k) : (int32_t)(uint16_t)(a >> 16 * k);
        int bi = k + (hi ? 2 : 0);
        int32_t y = sgn ? (int8_t)(b >> 8 * bi) : (int32_t)(uint8_t)(b >> 8 * bi);
        d += (uint32_t)(x * y);
    }
    return d;
}
R(r_dp2a_lo_u) { *r = dp2a(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0, 0); return 0; }
R(r_dp2a_hi_s) { *r = dp2a(U32V(x[0]), U32V(x[1]), U32V(x[2]), 1, 1); return 0; }
R(r_sad_u) { uint32_t a = U32V(x[0]), b = U32V(x[1]); *r = (uint32_t)(U32V(x[2]) + (a < b ? b - a : a - b)); return 0; }
R(r_sad_s)
{
    int32_t a = I32(x[0]), b = I32(x[1]);
    *r = (uint32_t)(U32V(x[2]) + (a < b ? (uint32_t)b - (uint32_t)a : (uint32_t)a - (uint32_t)b));
    return 0;
}
R(r_cnot) { *r = U32V(x[0]) == 0; return 0; }
static uint32_t prmt_mode(uint32_t a, uint32_t b, uint32_t c, int mode)
{
    uint64_t bytes = (uint64_t)b << 32 | a;
    uint32_t n = c & 3, d = 0;
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t sel;
        switch (mode) {
        case 0: sel = n + k; break;                        /* f4e */
        case 1: sel = n; break;                            /* rc8 */
        case 2: sel = k > n ? k : n; break;                /* ecl */
        case 3: sel = k < n ? k : n; break;                /* ecr */
        default: sel = (k & 1) + 2 * (c & 1); break;       /* rc16 */
        }
        d |= (uint32_t)(bytes >> (8 * sel) & 0xff) << (8 * k);
    }
    return d;
}
R(r_prmt_f4e) { *r = prmt_mode(U32V(x[0]), U32V(x[1]), U32V(x[2]), 0); return 0; }
R(r_prmt_rc8) { *r = prmt_mode(U32V(x[0]), U32V(x[1]), U32V(x[2]), 1); return 0; }
R(r_prmt_ecl) { *r = prmt_mode(U32V(x[0]), U32V(x[1]), U32V(x[2]), 2); return 0; }
R(r_prmt_ecr) { *r = prmt_mode(U32V(x[0]), U32V(x[1]), U32V(x[2]), 3); return 0; }
R(r_prmt_rc16) { *r = prmt_mode(U32V(x[0]), U32V(x[1]), U32V(x[2]), 4); return 0; }
R(r_add_s16) { *r = (uint16_t)((uint16_t)x[0] + (uint16_t)x[1]); return 0; }
R(r_mul_lo_u16) { *r = (uint16_t)((uint32_t)(uint16_t)x[0] * (uint16_t)x[1]); return 0; }
R(r_max_s16) { int16_t a = (int16_t)(uint16_t)x[0], b = (int16_t)(uint16_t)x[1]; *r = (uint16_t)(a > b ? a : b); return 0; }
R(r_mul_wide_s16) { *r = (uint32_t)((int32_t)(int16_t)(uint16_t)x[0] * (int16_t)(uint16_t)x[1]); return 0; }
R(r_div_full_ftz)
{
    *r = bits_f32(ftz32(ftz32(f32_of(x[0])) / ftz32(f32_of(x[1]))));
    return 0;
}
R(r_abs_ftz32) { *r = bits_f32(fabsf(ftz32(f32_of(x[0])))); if (isnan(f32_of(x[0]))) *r = x[0] & 0x7fffffffu; return 0; }
R(r_neg_ftz32) { *r = bits_f32(-ftz32(f32_of(x[0]))); if (isnan(f32_of(x[0]))) *r = (x[0] ^ 0x80000000u) & 0xffffffffu; return 0; }
R(r_cvt_rmi_f32) { *r = bits_f32(floorf(f32_of(x[0]))); return 0; }
R(r_cvt_rpi_f32) { *r = bits_f32(ceilf(f32_of(x[0]))); return 0; }
R(r_cvt_rn_f64_u32) { *r = bits_f64((double)U32V(x[0])); return 0; }
R(r_cvt_rzi_s32_f64) { int n; *r = (uint32_t)(int32_t)f2i(f64_of(x[0]), RZ, INT32_MIN, INT32_MAX, &n); return 0; }
R(r_cvt_rni_s16) { int n; *r = (uint16_t)(int16_t)f2i(f32_of(x[0]), RN, INT16_MIN, INT16_MAX, &n); return 0; }
R(r_cvt_rn_f16_f64) { *r = f64_to_narrow(f64_of(x[0]), FMT_F16, RN); return 0; }   /* one rounding, not via f32 */
R(r_cvt_rm_f32_f64) { *r = bits_f32(d2f_mode(RM, f64_of(x[0]))); return 0; }
R(r_cvt_rp_f32_f64) { *r = bits_f32(d2f_mode(RP, f64_of(x[0]))); return 0; }
R(r_cvt_u8_u32) { *r = U32V(x[0]) & 0xff; return 0; }
R(r_cvt_sat_u16_s32) { int32_t v = I32(x[0]); *r = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v); return 0; }

/* ---------------------------------------------------------------- the table */
#define E1(k, s, o, t, f) {k, s, o, 1, {t}, f, C_EXACT, 0, 0}
#define E2(k, s, o, t, f) {k, s, o, 2, {t, t}, f, C_EXACT, 0, 0}
#define E3(k, s, o, t, f) {k, s, o, 3, {t, t, t}, f, C_EXACT, 0, 0}
const isa_case isa_cases[] = {
    {"k_addc_u32", "add.cc.u32 + addc.u32", U64, 2, {U32, U32}, r_addc, C_EXACT, 0, 0},
    E2("k_add_s32", "add.s32", U32, U32, r_add32),
    E2("k_sub_s32", "sub.s32", U32, U32, r_sub32),
    E2("k_add_sat_s32", "add.sat.s32", U32, U32, r_add_sat32),
    E2("k_sub_sat_s32", "sub.sat.s32", U32, U32, r_sub_sat32),
    E2("k_add_u64", "add.u64", U64, U64, r_add64),
    E2("k_sub_s64", "sub.s64", U64, U64, r_sub64),
    E2("k_mul_lo_u32", "mul.lo.u32", U32, U32, r_mul_lo32),
    E2("k_mul_hi_u32", "mul.hi.u32", U32, U32, r_mul_hi_u32),
    E2("k_mul_hi_s32", "mul.hi.s32", U32, U32, r_mul_hi_s32),
    E2("k_mul_wide_u32", "mul.wide.u32", U64, U32, r_mul_wide_u32),
    E2("k_mul_wide_s32", "mul.wide.s32", U64, U32, r_mul_wide_s32),
    E2("k_mul_lo_u64", "mul.lo.u64", U64, U64, r_mul_lo64),
    E2("k_mul_hi_u64", "mul.hi.u64", U64, U64, r_mul_hi_u64),
    E2("k_mul_hi_s64", "mul.hi.s64", U64, U64, r_mul_hi_s64),
    E2("k_mul24_lo_u32", "mul24.lo.u32", U32, U32, r_mul24_lo),
    E3("k_mad_lo_s32", "mad.lo.s32", U32, U32, r_mad_lo32),
    E3("k_mad_hi_u32", "mad.hi.u32", U32, U32, r_mad_hi_u32),
    {"k_mad_wide_s32", "mad.wide.s32", U64, 3, {U32, U32, U64}, r_mad_wide_s32, C_EXACT, 0, 0},
    {"k_mad_wide_u32", "mad.wide.u32", U64, 3, {U32, U32, U64}, r_mad_wide_u32, C_EXACT, 0, 0},
    E3("k_mad_lo_u64", "mad.lo.u64", U64, U64, r_mad_lo64),
    E2("k_div_u32", "div.u32", U32, U32, r_div_u32),
    E2("k_div_s32", "div.s32", U32, U32, r_div_s32),
    E2("k_rem_u32", "rem.u32", U32, U32, r_rem_u32),
    E2("k_rem_s32", "rem.s32", U32, U32, r_rem_s32),
    E2("k_div_u64", "div.u64", U64, U64, r_div_u64),
    E2("k_div_s64", "div.s64", U64, U64, r_div_s64),
    E2("k_rem_s64", "rem.s64", U64, U64, r_rem_s64),
    E2("k_shl_b32", "shl.b32", U32, U32, r_shl32),
    E2("k_shr_u32", "shr.u32", U32, U32, r_shr_u32),
    E2("k_shr_s32", "shr.s32", U32, U32, r_shr_s32),
    {"k_shl_b64", "shl.b64", U64, 2, {U64, U32}, r_shl64, C_EXACT, 0, 0},
    {"k_shr_s64", "shr.s64", U64, 2, {U64, U32}, r_shr_s64, C_EXACT, 0, 0},
    E3("k_bfe_u32", "bfe.u32", U32, U32, r_bfe_u32),
    E3("k_bfe_s32", "bfe.s32", U32, U32, r_bfe_s32),
    {"k_bfe_s64", "bfe.s64", U64, 3, {U64, U32, U32}, r_bfe_s64, C_EXACT, 0, 0},
    {"k_bfi_b32", "bfi.b32", U32, 4, {U32, U32, U32, U32}, r_bfi32, C_EXACT, 0, 0},
    E1("k_brev_b32", "brev.b32", U32, U32, r_brev32),
    E1("k_brev_b64", "brev.b64", U64, U64, r_brev64),
    E1("k_popc_b32", "popc.b32", U32, U32, r_popc32),
    E1("k_clz_b32", "clz.b32", U32, U32, r_clz32),
    E1("k_popc_b64", "popc.b64", U32, U64, r_popc64),
    E1("k_clz_b64", "clz.b64", U32, U64, r_clz64),
    E3("k_prmt_b32", "prmt.b32", U32, U32, r_prmt),
    E3("k_shf_l_wrap_b32", "shf.l.wrap.b32", U32, U32, r_shf_lw),
    E3("k_shf_r_wrap_b32", "shf.r.wrap.b32", U32, U32, r_shf_rw),
    E3("k_shf_l_clamp_b32", "shf.l.clamp.b32", U32, U32, r_shf_lc),
    E3("k_shf_r_clamp_b32", "shf.r.clamp.b32", U32, U32, r_shf_rc),
    E3("k_lop3_96", "lop3.b32 0x96", U32, U32, r_lop3_96),
    E3("k_lop3_e8", "lop3.b32 0xe8", U32, U32, r_lop3_e8),
    E3("k_lop3_f8", "lop3.b32 0xf8", U32, U32, r_lop3_f8),
    E3("k_lop3_01", "lop3.b32 0x01", U32, U32, r_lop3_01),
    E2("k_and_b32", "and.b32", U32, U32, r_and32),
    E2("k_or_b64", "or.b64", U64, U64, r_or64),
    E2("k_xor_b32", "xor.b32", U32, U32, r_xor32),
    E1("k_not_b32", "not.b32", U32, U32, r_not32),
    E2("k_min_s32", "min.s32", U32, U32, r_min_s32),
    E2("k_max_s32", "max.s32", U32, U32, r_max_s32),
    E2("k_min_u32", "min.u32", U32, U32, r_min_u32),
    E2("k_max_u64", "max.u64", U64, U64, r_max_u64),
    E2("k_min_s64", "min.s64", U64, U64, r_min_s64),
    E1("k_abs_s32", "abs.s32", U32, U32, r_abs_s32),
    E1("k_neg_s32", "neg.s32", U32, U32, r_neg_s32),
    E1("k_abs_s64", "abs.s64", U64, U64, r_abs_s64),

    E2("k_add_rn_f32", "add.rn.f32", F32, F32, r_add_rn32),
    E2("k_add_rz_f32", "add.rz.f32", F32, F32, r_add_rz32),
    E2("k_add_rm_f32", "add.rm.f32", F32, F32, r_add_rm32),
    E2("k_add_rp_f32", "add.rp.f32", F32, F32, r_add_rp32),
    E2("k_add_ftz_f32", "add.rn.ftz.f32", F32, F32, r_add_ftz32),
    E2("k_add_sat_f32", "add.rn.sat.f32", F32, F32, r_fadd_sat32),
    E2("k_sub_rn_f32", "sub.rn.f32", F32, F32, r_sub_rn32),
    E2("k_mul_rn_f32", "mul.rn.f32", F32, F32, r_mul_rn32),
    E2("k_mul_rz_f32", "mul.rz.f32", F32, F32, r_mul_rz32),
    E2("k_mul_rm_f32", "mul.rm.f32", F32, F32, r_mul_rm32),
    E2("k_mul_rp_f32", "mul.rp.f32", F32, F32, r_mul_rp32),
    E2("k_mul_ftz_f32", "mul.rn.ftz.f32", F32, F32, r_mul_ftz32),
    E3("k_fma_rn_f32", "fma.rn.f32", F32, F32, r_fma_rn32),
    E3("k_fma_rz_f32", "fma.rz.f32", F32, F32, r_fma_rz32),
    E3("k_fma_rm_f32", "fma.rm.f32", F32, F32, r_fma_rm32),
    E3("k_fma_rp_f32", "fma.rp.f32", F32, F32, r_fma_rp32),
    E3("k_fma_ftz_sat_f32", "fma.rn.ftz.sat.f32", F32, F32, r_fma_ftz_sat32),
    E2("k_div_rn_f32", "div.rn.f32", F32, F32, r_div_rn32),
    E2("k_div_rz_f32", "div.rz.f32", F32, F32, r_div_rz32),
    /* bounds: the PTX ISA's stated maximum errors, rounded up */
    {"k_div_approx_f32", "div.approx.f32 (2 ulp, 2^-126 <= |b| <= 2^126)", F32, 2, {F32, F32}, r_div_approx32, C_ULP, 2, 0},
    {"k_div_full_f32", "div.full.f32 (2 ulp)", F32, 2, {F32, F32}, r_div_rn32, C_ULP, 2, 0},
    E1("k_sqrt_rn_f32", "sqrt.rn.f32", F32, F32, r_sqrt32),
    {"k_sqrt_approx_f32", "sqrt.approx.f32 (rel 2^-23 -> 2 ulp)", F32, 1, {F32}, r_sqrt32, C_ULP, 2, 0},
    E1("k_rcp_rn_f32", "rcp.rn.f32", F32, F32, r_rcp32),
    {"k_rcp_approx_f32", "rcp.approx.f32 (1 ulp)", F32, 1, {F32}, r_rcp32, C_ULP, 1, 0},
    {"k_rsqrt_approx_f32", "rsqrt.approx.f32 (rel 2^-22.9 -> 3 ulp)", F32, 1, {F32}, r_rsqrt32, C_ULP, 3, 0},
    {"k_ex2_approx_f32", "ex2.approx.f32 (rel 2^-22 -> 4 ulp)", F32, 1, {F32}, r_ex2_32, C_ULP, 4, 0},
    {"k_ex2_approx_ftz_f32", "ex2.approx.ftz.f32 (4 ulp, subnormals flushed)", F32, 1, {F32}, r_ex2_ftz32, C_ULP, 4, 0},
    {"k_lg2_approx_f32", "lg2.approx.f32 (abs 2^-22 + 2 ulp)", F32, 1, {F32}, r_lg2_32, C_ABS, 0x1p-22, 2},
    {"k_sin_approx_f32", "sin.approx.f32 (abs 2^-20.5 on [-pi, pi])", F32, 1, {F32}, r_sin32, C_ABS, 0x1.6a09e6p-21, 1},
    {"k_cos_approx_f32", "cos.approx.f32 (abs 2^-20.5 on [-pi, pi])", F32, 1, {F32}, r_cos32, C_ABS, 0x1.6a09e6p-21, 1},
    {"k_tanh_approx_f32", "tanh.approx.f32 (rel 2^-10.5)", F32, 1, {F32}, r_tanh32, C_REL, 0x1.6a09e6p-11, 0},
    E1("k_abs_f32", "abs.f32", F32, F32, r_abs32),
    E1("k_neg_f32", "neg.f32", F32, F32, r_neg32),
    E2("k_min_f32", "min.f32", F32, F32, r_min32),
    E2("k_max_f32", "max.f32", F32, F32, r_max32),
    E2("k_min_nan_f32", "min.NaN.f32", F32, F32, r_min_nan32),
    E2("k_max_ftz_f32", "max.ftz.f32", F32, F32, r_max_ftz32),
    E2("k_copysign_f32", "copysign.f32", F32, F32, r_copysign32),

    E2("k_add_rn_f64", "add.rn.f64", F64, F64, r_add_rn64),
    E2("k_add_rz_f64", "add.rz.f64", F64, F64, r_add_rz64),
    E2("k_add_rm_f64", "add.rm.f64", F64, F64, r_add_rm64),
    E2("k_add_rp_f64", "add.rp.f64", F64, F64, r_add_rp64),
    E2("k_mul_rn_f64", "mul.rn.f64", F64, F64, r_mul_rn64),
    E2("k_mul_rz_f64", "mul.rz.f64", F64, F64, r_mul_rz64),
    E3("k_fma_rn_f64", "fma.rn.f64", F64, F64, r_fma_rn64),
    E3("k_fma_rm_f64", "fma.rm.f64", F64, F64, r_fma_rm64),
    E3("k_fma_rp_f64", "fma.rp.f64", F64, F64, r_fma_rp64),
    E2("k_div_rn_f64", "div.rn.f64", F64, F64, r_div_rn64),
    E1("k_sqrt_rn_f64", "sqrt.rn.f64", F64, F64, r_sqrt64),
    E1("k_rcp_rn_f64", "rcp.rn.f64", F64, F64, r_rcp64),
    E2("k_min_f64", "min.f64", F64, F64, r_min64),
    E2("k_max_f64", "max.f64", F64, F64, r_max64),
    E1("k_neg_f64", "neg.f64", F64, F64, r_neg64),

    E2("k_add_f16", "add.rn.f16", F16, F16, r_add_f16),
    E2("k_mul_f16", "mul.rn.f16", F16, F16, r_mul_f16),
    E2("k_sub_f16", "sub.rn.f16", F16, F16, r_sub_f16),
    E3("k_fma_f16", "fma.rn.f16", F16, F16, r_fma_f16),
    E2("k_add_f16x2", "add.rn.f16x2", H2, H2, r_add_f16x2),
    E2("k_mul_f16x2", "mul.rn.f16x2", H2, H2, r_mul_f16x2),
    E3("k_fma_f16x2", "fma.rn.f16x2", H2, H2, r_fma_f16x2),
    E3("k_fma_bf16", "fma.rn.bf16", BF16, BF16, r_fma_bf16),
    E3("k_fma_bf16x2", "fma.rn.bf16x2", BH2, BH2, r_fma_bf16x2),
    E2("k_min_bf16", "min.bf16", BF16, BF16, r_min_bf16),
    E2("k_max_f16", "max.f16", F16, F16, r_max_f16),
    E1("k_neg_f16", "neg.f16", F16, F16, r_neg_f16),

    E1("k_cvt_rni_s32_f32", "cvt.rni.s32.f32", U32, F32, r_cvt_rni_s32),
    E1("k_cvt_rzi_s32_f32", "cvt.rzi.s32.f32", U32, F32, r_cvt_rzi_s32),
    E1("k_cvt_rmi_s32_f32", "cvt.rmi.s32.f32", U32, F32, r_cvt_rmi_s32),
    E1("k_cvt_rpi_s32_f32", "cvt.rpi.s32.f32", U32, F32, r_cvt_rpi_s32),
    E1("k_cvt_rzi_u32_f32", "cvt.rzi.u32.f32", U32, F32, r_cvt_rzi_u32),
    E1("k_cvt_rzi_s64_f64", "cvt.rzi.s64.f64", U64, F64, r_cvt_rzi_s64),
    E1("k_cvt_rni_u64_f32", "cvt.rni.u64.f32", U64, F32, r_cvt_rni_u64),
    E1("k_cvt_rn_f32_s32", "cvt.rn.f32.s32", F32, U32, r_cvt_rn_f32_s32),
    E1("k_cvt_rz_f32_u32", "cvt.rz.f32.u32", F32, U32, r_cvt_rz_f32_u32),
    E1("k_cvt_rn_f32_u64", "cvt.rn.f32.u64", F32, U64, r_cvt_rn_f32_u64),
    E1("k_cvt_rn_f64_s64", "cvt.rn.f64.s64", F64, U64, r_cvt_rn_f64_s64),
    E1("k_cvt_f64_f32", "cvt.f64.f32", F64, F32, r_cvt_f64_f32),
    E1("k_cvt_rn_f32_f64", "cvt.rn.f32.f64", F32, F64, r_cvt_rn_f32_f64),
    E1("k_cvt_rz_f32_f64", "cvt.rz.f32.f64", F32, F64, r_cvt_rz_f32_f64),
    E1("k_cvt_rni_f32_f32", "cvt.rni.f32.f32", F32, F32, r_cvt_rni_f32),
    E1("k_cvt_rzi_f32_f32", "cvt.rzi.f32.f32", F32, F32, r_cvt_rzi_f32),
    E1("k_cvt_sat_f32_f32", "cvt.sat.f32.f32", F32, F32, r_cvt_sat_f32),
    E1("k_cvt_ftz_f32_f32", "cvt.ftz.f32.f32", F32, F32, r_cvt_ftz_f32),
    E1("k_cvt_rn_f16_f32", "cvt.rn.f16.f32", F16, F32, r_cvt_rn_f16),
    E1("k_cvt_rz_f16_f32", "cvt.rz.f16.f32", F16, F32, r_cvt_rz_f16),
    E1("k_cvt_f32_f16", "cvt.f32.f16", F32, F16, r_cvt_f32_f16),
    E1("k_cvt_rn_bf16_f32", "cvt.rn.bf16.f32", BF16, F32, r_cvt_rn_bf16),
    E1("k_cvt_f32_bf16", "cvt.f32.bf16", F32, BF16, r_cvt_f32_bf16),
    E2("k_cvt_rn_f16x2_f32", "cvt.rn.f16x2.f32", H2, F32, r_cvt_f16x2),
    E2("k_cvt_rn_bf16x2_f32", "cvt.rn.bf16x2.f32", BH2, F32, r_cvt_bf16x2),
    E1("k_cvt_sat_s8_s32", "cvt.sat.s8.s32", U32, U32, r_cvt_sat_s8),
    E1("k_cvt_s32_s16", "cvt.s32.s16", U32, U16, r_cvt_s32_s16),

    E2("k_setp_lt_f32", "setp.lt.f32", U32, F32, r_setp_lt_f32),
    E2("k_setp_ltu_f32", "setp.ltu.f32", U32, F32, r_setp_ltu_f32),
    E2("k_setp_ne_f32", "setp.ne.f32", U32, F32, r_setp_ne_f32),
    E2("k_setp_neu_f32", "setp.neu.f32", U32, F32, r_setp_neu_f32),
    E2("k_setp_num_f32", "setp.num.f32", U32, F32, r_setp_num_f32),
    E2("k_setp_nan_f32", "setp.nan.f32", U32, F32, r_setp_nan_f32),
    E2("k_setp_ge_f64", "setp.ge.f64", U32, F64, r_setp_ge_f64),
    E2("k_setp_lt_s32", "setp.lt.s32", U32, U32, r_setp_lt_s32),
    E2("k_setp_lo_u32", "setp.lo.u32", U32, U32, r_setp_lo_u32),
    E2("k_setp_hs_u64", "setp.hs.u64", U32, U64, r_setp_hs_u64),
    E2("k_setp_gt_s64", "setp.gt.s64", U32, U64, r_setp_gt_s64),
    E2("k_set_lt_u32_f32", "set.lt.u32.f32", U32, F32, r_set_lt_u32_f32),
    E2("k_set_geu_f32_f32", "set.geu.f32.f32", F32, F32, r_set_geu_f32),
    {"k_slct_u32_f32", "slct.u32.f32", U32, 3, {U32, U32, F32}, r_slct_u32_f32, C_EXACT, 0, 0},
    {"k_slct_s32_s32", "slct.s32.s32", U32, 3, {U32, U32, U32}, r_slct_s32, C_EXACT, 0, 0},
    {"k_pred_plain_name", "a .pred register named without % (setp.lt.s32 p)", U32, 2, {U32, U32}, r_pred_plain, C_EXACT, 0, 0},
    {"k_addc_multiline", "add.cc.u32 + addc.u32 (two lines)", U64, 2, {U32, U32}, r_addc, C_EXACT, 0, 0},
    E1("k_testp_f32", "testp.finite/infinite/number/notanumber/normal/subnormal.f32", U32, F32, r_testp32),
    E1("k_testp_f64", "testp.finite/normal/subnormal.f64", U32, F64, r_testp64),
    E3("k_pred_logic", "and/or/xor/not.pred, setp.gt.and.s32 p|q, @p / @!p", U32, U32, r_pred_logic),
    E1("k_mov_pack", "mov.b64 {lo, hi} and back", U64, U64, r_mov_pack),
    E1("k_bfind_u32", "bfind.u32", U32, U32, r_bfind_u32),
    E1("k_bfind_s32", "bfind.s32", U32, U32, r_bfind_s32),
    E1("k_bfind_shiftamt_u32", "bfind.shiftamt.u32", U32, U32, r_bfind_shiftamt),
    E2("k_bmsk_clamp_b32", "bmsk.clamp.b32", U32, U32, r_bmsk_c),
    E2("k_bmsk_wrap_b32", "bmsk.wrap.b32", U32, U32, r_bmsk_w),
    E2("k_szext_clamp_s32", "szext.clamp.s32", U32, U32, r_szext_cs),
    E2("k_szext_wrap_s32", "szext.wrap.s32", U32, U32, r_szext_ws),
    E2("k_szext_clamp_u32", "szext.clamp.u32", U32, U32, r_szext_cu),
    E2("k_szext_wrap_u32", "szext.wrap.u32", U32, U32, r_szext_wu),
    E3("k_dp4a_u32", "dp4a.u32.u32", U32, U32, r_dp4a_u),
    E3("k_dp4a_s32", "dp4a.s32.s32", U32, U32, r_dp4a_s),
    E3("k_dp2a_lo_u32", "dp2a.lo.u32.u32", U32, U32, r_dp2a_lo_u),
    E3("k_dp2a_hi_s32", "dp2a.hi.s32.s32", U32, U32, r_dp2a_hi_s),
    E3("k_sad_u32", "sad.u32", U32, U32, r_sad_u),
    E3("k_sad_s32", "sad.s32", U32, U32, r_sad_s),
    E1("k_cnot_b32", "cnot.b32", U32, U32, r_cnot),
    E3("k_prmt_f4e", "prmt.b32.f4e", U32, U32, r_prmt_f4e),
    E3("k_prmt_rc8", "prmt.b32.rc8", U32, U32, r_prmt_rc8),
    E3("k_prmt_ecl", "prmt.b32.ecl", U32, U32, r_prmt_ecl),
    E3("k_prmt_ecr", "prmt.b32.ecr", U32, U32, r_prmt_ecr),
    E3("k_prmt_rc16", "prmt.b32.rc16", U32, U32, r_prmt_rc16),
    E2("k_add_s16", "add.s16", U16, U16, r_add_s16),
    E2("k_mul_lo_u16", "mul.lo.u16", U16, U16, r_mul_lo_u16),
    E2("k_max_s16", "max.s16", U16, U16, r_max_s16),
    E2("k_mul_wide_s16", "mul.wide.s16", U32, U16, r_mul_wide_s16),
    {"k_div_full_ftz_f32", "div.full.ftz.f32 (2 ulp)", F32, 2, {F32, F32}, r_div_full_ftz, C_ULP, 2, 0},
    E1("k_abs_ftz_f32", "abs.ftz.f32", F32, F32, r_abs_ftz32),
    E1("k_neg_ftz_f32", "neg.ftz.f32", F32, F32, r_neg_ftz32),
    E1("k_cvt_rmi_f32_f32", "cvt.rmi.f32.f32", F32, F32, r_cvt_rmi_f32),
    E1("k_cvt_rpi_f32_f32", "cvt.rpi.f32.f32", F32, F32, r_cvt_rpi_f32),
    E1("k_cvt_rn_f64_u32", "cvt.rn.f64.u32", F64, U32, r_cvt_rn_f64_u32),
    E1("k_cvt_rzi_s32_f64", "cvt.rzi.s32.f64", U32, F64, r_cvt_rzi_s32_f64),
    E1("k_cvt_rni_s16_f32", "cvt.rni.s16.f32", U16, F32, r_cvt_rni_s16),
    E1("k_cvt_rn_f16_f64", "cvt.rn.f16.f64 (one rounding)", F16, F64, r_cvt_rn_f16_f64),
    E1("k_cvt_rm_f32_f64", "cvt.rm.f32.f64", F32, F64, r_cvt_rm_f32_f64),
    E1("k_cvt_rp_f32_f64", "cvt.rp.f32.f64", F32, F64, r_cvt_rp_f32_f64),
    E1("k_cvt_u8_u32", "cvt.u8.u32", U32, U32, r_cvt_u8_u32),
    E1("k_cvt_sat_u16_s32", "cvt.sat.u16.s32", U16, U32, r_cvt_sat_u16_s32),
};
const int isa_ncases = (int)(sizeof isa_cases / sizeof isa_cases[0]);

int isa_ref_add_rn32(const uint64_t *x, uint64_t *r) { return r_add_rn32(x, r); }

/* the reference's own known answers (from the ISA text and IEEE 754), checked first */
int isa_ref_self_check(void)
{
    int bad = 0;
    uint64_t r, x[4] = {0};
#define KA(fn, a0, a1, a2, want)                                                                 \
    do {                                                                                         \
        x[0] = a0, x[1] = a1, x[2] = a2;                                                         \
        fn(x, &r);                                                                               \
        if (r != (uint64_t)(want)) {                                                             \
            printf("# reference %s(%#llx, %#llx, %#llx) = %#llx, expected %#llx\n", #fn,         \
                   (unsigned long long)a0, (unsigned long long)a1, (unsigned long long)a2,       \
                   (unsigned long long)r, (unsigned long long)(want));                           \
            bad++;                                                                               \
        }                                                                                        \
    } while (0)
    KA(r_add_rz32, 0x3f800000, 0x33800000, 0, 0x3f800000);   /* 1 + 2^-24: rz keeps 1 */
    KA(r_add_rn32, 0x3f800000, 0x33c00000, 0, 0x3f800001);   /* 1 + 1.5*2^-24: rn rounds up */
    KA(r_add_rp32, 0x3f800000, 0x00000001, 0, 0x3f800001);
    KA(r_add_rm32, 0xbf800000, 0x80000001, 0, 0xbf800001);
    KA(r_add_ftz32, 0x00000001, 0x00000001, 0, 0x00000000);
    KA(r_mul_ftz32, 0x00800000, 0x3f000000, 0, 0x00000000);  /* min normal / 2 flushed */
    KA(r_shl32, 1, 32, 0, 0);
    KA(r_shr_s32, 0x80000000, 40, 0, 0xffffffff);
    KA(r_bfe_s32, 0x000000f0, 4, 4, 0xffffffff);
    KA(r_bfe_u32, 0x000000f0, 4, 4, 0xf);
    KA(r_prmt, 0x33221100, 0x77665544, 0x7654, 0x77665544);
    KA(r_prmt, 0x33221100, 0x77665544, 0x8880, 0x00000000);  /* bytes 0 (0x00) with sign bits: 0 */
    KA(r_shf_lw, 0x80000000, 0x00000001, 1, 0x00000003);
    KA(r_lop3_96, 0xf0, 0xcc, 0xaa, 0x96);
    KA(r_clz32, 0, 0, 0, 32);
    KA(r_cvt_rni_s32, 0x40200000, 0, 0, 2);                  /* 2.5 -> 2 (ties to even) */
    KA(r_cvt_rzi_s32, 0x7fc00000, 0, 0, 0);                  /* NaN -> 0 */
    KA(r_cvt_rzi_s32, 0x4f800000, 0, 0, 0x7fffffff);         /* 2^32 saturates */
    KA(r_cvt_rzi_u32, 0xbf800000, 0, 0, 0);                  /* -1 -> 0 */
    KA(r_cvt_rn_f16, 0x477ff000, 0, 0, 0x7c00);              /* 65520 rounds to inf */
    KA(r_cvt_rn_f16, 0x477fe000, 0, 0, 0x7bff);              /* 65504 = max f16 */
    KA(r_cvt_rz_f16, 0x477ff000, 0, 0, 0x7bff);
    KA(r_cvt_rn_f16, 0x33800000, 0, 0, 0x0001);              /* 2^-24: the least f16 subnormal */
    KA(r_cvt_rn_f16, 0x33000000, 0, 0, 0x0000);              /* 2^-25: a tie, to even (0) */
    KA(r_cvt_rn_f16, 0x33400000, 0, 0, 0x0001);              /* 1.5 * 2^-25 rounds up */
    KA(r_cvt_rn_bf16, 0x3f808000, 0, 0, 0x3f80);             /* tie to even */
    KA(r_cvt_rn_bf16, 0x3f818000, 0, 0, 0x3f82);
    KA(r_add_f16, 0x3c00, 0x3c00, 0, 0x4000);
    KA(r_fma_f16, 0x3c01, 0x3c01, 0xbc00, 0x1800);           /* (1+2^-10)^2 - 1 = 2^-9 + 2^-20: a tie -> 2^-9 */
    KA(r_fma_f16, 0x3c01, 0x3c02, 0xbc00, 0x1a01);           /* 2^-9 + 2^-10 + 2^-19: exact */
    KA(r_mul_hi_s32, 0x80000000, 0x80000000, 0, 0x40000000);
    KA(r_abs_s32, 0x80000000, 0, 0, 0x80000000);
    KA(r_add_sat32, 0x7fffffff, 1, 0, 0x7fffffff);
#undef KA
    return bad;
}

