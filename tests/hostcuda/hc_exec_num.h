/* hc_exec_num.h — private to hc_exec*.c: the executor's number helpers. Register cells are 64-bit;
 * these read them as the PTX types (readers truncate to their width), convert f16/bf16 bit-exactly,
 * compare as setp does; hc_exec_num.c holds the conversions, half-precision arithmetic and
 * atomics (built with -frounding-math: they change the rounding mode around an operation).
 */
#ifndef HC_EXEC_NUM_H
#define HC_EXEC_NUM_H

#include "hc_exec_ops.h"

#include <fenv.h>
#include <math.h>
#include <string.h>

#define HC_NUM __attribute__((visibility("hidden")))
HC_NUM float hc_h2f(uint32_t h);                 /* f16 bits -> f32, exact */
HC_NUM uint32_t hc_f2h(float f, int rnd);        /* f32 -> f16 bits, rounded as rnd says (ASH_PTX_R_*) */
HC_NUM uint32_t hc_f2bh(float f, int rnd);       /* f32 -> bf16 bits */
HC_NUM float hc_d2f_odd(double d);               /* f64 -> f32 rounded to odd (a later rounding is exact) */
/* cvt d, a from type st to dt with rounding rnd and flags (.ftz, .sat) for one value */
HC_NUM uint64_t hc_cvt_one(uint64_t v, int dt, int st, int rnd, uint32_t flags);
/* f16/bf16/x2 arithmetic of in for the lanes E: 0, or -1 for an operation they lack */
HC_NUM int hc_exec_half(const ash_ptx_insn *in, uint32_t E, uint64_t *D, const uint64_t *A, const uint64_t *B,
                        const uint64_t *Cc);
/* fma.rn.f32 for a full warp (.ftz when ftz) */
HC_NUM void hc_fma32_warp(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *Cc, int ftz);
/* one atomic read-modify-write at p: op (ASH_PTX_A_*) on type t; returns the old value; *ok = 0
 * for a combination PTX does not define */
HC_NUM uint64_t hc_atom_one(void *p, int op, int t, uint64_t b, uint64_t c, int *ok);

/* the body for each lane l of E; the full mask gets its own loop, which the compiler vectorises */
#define LOOP(E, ...)                                                                            \
    do {                                                                                       \
        if ((E) == ~0u) {                                                                      \
            for (int l = 0; l < 32; l++) { __VA_ARGS__ }                                       \
        } else {                                                                               \
            for (int l = 0; l < 32; l++)                                                       \
                if ((E) >> l & 1) { __VA_ARGS__ }                                              \
        }                                                                                      \
    } while (0)

/* ---------------------------------------------------------------- values */
static inline float f32(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint64_t bf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline double f64(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}
static inline uint64_t bf64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static const uint8_t type_bits[] = {
    [ASH_PTX_T_B8] = 8, [ASH_PTX_T_B16] = 16, [ASH_PTX_T_B32] = 32, [ASH_PTX_T_B64] = 64,
    [ASH_PTX_T_U8] = 8, [ASH_PTX_T_U16] = 16, [ASH_PTX_T_U32] = 32, [ASH_PTX_T_U64] = 64,
    [ASH_PTX_T_S8] = 8, [ASH_PTX_T_S16] = 16, [ASH_PTX_T_S32] = 32, [ASH_PTX_T_S64] = 64,
    [ASH_PTX_T_F16] = 16, [ASH_PTX_T_F16X2] = 32, [ASH_PTX_T_BF16] = 16, [ASH_PTX_T_BF16X2] = 32,
    [ASH_PTX_T_F32] = 32, [ASH_PTX_T_F64] = 64, [ASH_PTX_T_PRED] = 8, [ASH_PTX_T_B128] = 128,
};
static inline int tbits(int t)
{
    return t >= 0 && t < (int)sizeof type_bits ? type_bits[t] : 0;
}
static inline int tsigned(int t)
{
    return t >= ASH_PTX_T_S8 && t <= ASH_PTX_T_S64;
}
static inline int64_t sx(uint64_t v, int bits)
{
    return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}
static inline uint64_t zx(uint64_t v, int bits)
{
    return bits >= 64 ? v : v & ((1ull << bits) - 1);
}
static inline uint64_t ext(uint64_t v, int t)
{
    return tsigned(t) ? (uint64_t)sx(v, tbits(t)) : zx(v, tbits(t));
}
static inline float ftz32(float x)
{
    uint32_t u = (uint32_t)bf32(x);
    if (!(u & 0x7f800000u))
        u &= 0x80000000u;
    return f32(u);
}
static inline double ftz64(double x)
{
    uint64_t u = bf64(x);
    if (!(u & 0x7ff0000000000000ull))
        u &= 0x8000000000000000ull;
    return f64(u);
}
static inline float sat32(float x)
{
    return isnan(x) ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
static inline double sat64(double x)
{
    return isnan(x) ? 0.0 : x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

static inline float bh2f(uint32_t h)
{
    return f32((uint64_t)(h & 0xffff) << 16);
}

static inline int is_half(int t)
{
    return t == ASH_PTX_T_F16 || t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16 || t == ASH_PTX_T_BF16X2;
}

static inline int fe_mode(int rnd)
{
    switch (rnd) {
    case ASH_PTX_R_RZ: case ASH_PTX_R_RZI: return FE_TOWARDZERO;
    case ASH_PTX_R_RM: case ASH_PTX_R_RMI: return FE_DOWNWARD;
    case ASH_PTX_R_RP: case ASH_PTX_R_RPI: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

/* ---------------------------------------------------------------- comparisons */
static inline int cmp_f(double a, double b, int c)
{
    int un = isnan(a) || isnan(b);
    switch (c) {
    case ASH_PTX_C_EQ: return !un && a == b;
    case ASH_PTX_C_NE: return !un && a != b;
    case ASH_PTX_C_LT: return !un && a < b;
    case ASH_PTX_C_LE: return !un && a <= b;
    case ASH_PTX_C_GT: return !un && a > b;
    case ASH_PTX_C_GE: return !un && a >= b;
    case ASH_PTX_C_EQU: return un || a == b;
    case ASH_PTX_C_NEU: return un || a != b;
    case ASH_PTX_C_LTU: return un || a < b;
    case ASH_PTX_C_LEU: return un || a <= b;
    case ASH_PTX_C_GTU: return un || a > b;
    case ASH_PTX_C_GEU: return un || a >= b;
    case ASH_PTX_C_NUM: return !un;
    case ASH_PTX_C_NAN: return un;
    default: return 0;
    }
}

static inline int cmp_i(uint64_t a, uint64_t b, int t, int c)
{
    int s = tsigned(t);
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (c) {
    case ASH_PTX_C_EQ: return a == b;
    case ASH_PTX_C_NE: return a != b;
    case ASH_PTX_C_LT: return s ? sa < sb : a < b;
    case ASH_PTX_C_LE: return s ? sa <= sb : a <= b;
    case ASH_PTX_C_GT: return s ? sa > sb : a > b;
    case ASH_PTX_C_GE: return s ? sa >= sb : a >= b;
    case ASH_PTX_C_LO: return a < b;
    case ASH_PTX_C_LS: return a <= b;
    case ASH_PTX_C_HI: return a > b;
    case ASH_PTX_C_HS: return a >= b;
    default: return 0;
    }
}

static inline double fval(uint64_t v, int t, int ftz)
{
    switch (t) {
    case ASH_PTX_T_F32: return ftz ? ftz32(f32(v)) : f32(v);
    case ASH_PTX_T_F64: return ftz ? ftz64(f64(v)) : f64(v);
    case ASH_PTX_T_F16: return hc_h2f((uint32_t)v & 0xffff);
    case ASH_PTX_T_BF16: return bh2f((uint32_t)v & 0xffff);
    default: return 0;
    }
}
static inline int is_float(int t)
{
    return t == ASH_PTX_T_F32 || t == ASH_PTX_T_F64 || is_half(t);
}

#endif /* HC_EXEC_NUM_H */
