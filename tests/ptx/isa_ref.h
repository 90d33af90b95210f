/* isa_ref.h — C references for the PTX instructions that tests/ptx/test_ptx_isa.c checks, written
 * from the PTX ISA's definitions (not from any interpreter): bit patterns in, bit patterns out.
 * Rounding modes come from the host FPU (fesetround; the file is compiled with -frounding-math);
 * narrow formats (f16, bf16) are rounded from an exact double, or from a round-to-odd double for
 * fma, which is exact for formats of at most 26 bits. Not thread-safe (the FPU mode is global).
 */
#ifndef ISA_REF_H
#define ISA_REF_H

#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { RN, RZ, RM, RP };
static const int ref_fe[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};

static inline float f32_of(uint64_t b) { uint32_t u = (uint32_t)b; float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t bits_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double f64_of(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static inline uint64_t bits_f64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* sign-preserving flush of an f32 subnormal to zero (.ftz) */
static inline float ftz32(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

/* ---- narrow formats: ebits exponent bits, mbits stored mantissa bits */
typedef struct {
    int ebits, mbits;
} ref_fmt;
static const ref_fmt FMT_F16 = {5, 10}, FMT_BF16 = {8, 7};

static inline double narrow_to_f64(uint32_t b, ref_fmt f)
{
    int bias = (1 << (f.ebits - 1)) - 1;
    uint32_t sign = b >> (f.ebits + f.mbits) & 1, e = b >> f.mbits & ((1u << f.ebits) - 1);
    uint32_t m = b & ((1u << f.mbits) - 1);
    double v;
    if (e == (1u << f.ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - f.mbits);
    else
        v = ldexp((double)(m | 1u << f.mbits), (int)e - bias - f.mbits);
    return sign ? -v : v;
}

/* x (exact, or round-to-odd with >= 2*mbits+4 bits) rounded to format f in mode `mode` */
static inline uint32_t f64_to_narrow(double x, ref_fmt f, int mode)
{
    int bias = (1 << (f.ebits - 1)) - 1, emin = 1 - bias, emax = bias;
    uint32_t sign = signbit(x) ? 1u << (f.ebits + f.mbits) : 0, einf = (1u << f.ebits) - 1;
    uint32_t inf = sign | einf << f.mbits, maxfin = sign | ((einf << f.mbits) - 1);
    if (isnan(x))
        return einf << f.mbits | 1u << (f.mbits - 1);   /* the canonical NaN */
    double a = fabs(x);
    if (a == 0)
        return sign;
    if (isinf(x))
        return inf;
    int e;
    frexp(a, &e);   /* a = m 2^e, m in [0.5, 1): leading bit 2^(e-1) */
    int lead = e - 1 < emin ? emin : e - 1;
    double q = ldexp(1.0, lead - f.mbits), s = a / q, r;
    int up = (mode == RP && !sign) || (mode == RM && sign);
    if (mode == RN) {
        r = floor(s);
        double frac = s - r;
        if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0))
            r += 1;
    } else if (up)
        r = ceil(s);
    else
        r = floor(s);
    double mag = r * q;
    if (mag >= ldexp(1.0, emax + 1))
        return (mode == RN || up) ? inf : maxfin;
    if (lead == emin && r < ldexp(1.0, f.mbits))
        return sign | (uint32_t)r;                      /* subnormal (or zero) */
    int eb = lead + bias;
    return sign | (((uint32_t)eb << f.mbits) + ((uint32_t)r - (1u << f.mbits)));
}

/* a*b+c in double, rounded to odd (exact enough to round again to <= 26 bits) */
static inline double fma_rodd(double a, double b, double c)
{
    int old = fegetround();
    fesetround(FE_TOWARDZERO);
    feclearexcept(FE_INEXACT);
    volatile double r = fma(a, b, c);
    int inexact = fetestexcept(FE_INEXACT);
    fesetround(old);
    double v = r;
    if (inexact && isfinite(v)) {
        uint64_t u = bits_f64(v) | 1;
        v = f64_of(u);
    }
    return v;
}

#endif /* ISA_REF_H */
