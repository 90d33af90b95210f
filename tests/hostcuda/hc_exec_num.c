/* hc_exec_num.c — the executor's conversions (cvt in every rounding mode, f16/bf16 bit-exact),
 * half-precision arithmetic (computed in f32 or, for fma, in double rounded to odd, then rounded
 * once) and atomics (host __atomic operations; float ones as compare-and-swap loops).
 * Built with -frounding-math: directed roundings use fesetround around the one operation.
 * Threading: pure functions of their arguments, apart from the memory an atomic updates.
 * Must not: leave the rounding mode changed, or touch memory other than an atomic's target.
 */
#include "hc_exec_num.h"

float hc_h2f(uint32_t h)
{
    uint32_t s = (h >> 15) & 1, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0) {
        if (!m) {
            u = s << 31;
        } else {
            int ee = 113;
            while (!(m & 0x400)) {
                m <<= 1;
                ee--;
            }
            u = (s << 31) | ((uint32_t)ee << 23) | ((m & 0x3ff) << 13);
        }
    } else if (e == 31) {
        u = (s << 31) | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0);
    } else {
        u = (s << 31) | ((e + 112) << 23) | (m << 13);
    }
    return f32(u);
}

static int round_up(uint64_t q, uint64_t rem, uint64_t half, int sign, int rnd)
{
    switch (rnd) {
    case ASH_PTX_R_RZ: case ASH_PTX_R_RZI: return 0;
    case ASH_PTX_R_RM: case ASH_PTX_R_RMI: return sign && rem;
    case ASH_PTX_R_RP: case ASH_PTX_R_RPI: return !sign && rem;
    default: return rem > half || (rem == half && (q & 1));
    }
}

uint32_t hc_f2h(float f, int rnd)
{
    uint32_t x = (uint32_t)bf32(f), sign = (x >> 31) & 1, e = (x >> 23) & 0xff, mant = x & 0x7fffff;
    uint32_t s16 = sign << 15;
    if (e == 255)
        return mant ? 0x7fff : s16 | 0x7c00;
    if (e == 0 && mant == 0)
        return s16;
    int E = (int)e - 127 + 15;
    uint64_t sig = e ? (0x800000u | mant) : mant;
    int shift = E >= 1 ? 13 : 13 + 1 - E;
    if (!e)
        shift = 40;   /* an f32 subnormal is far below the smallest f16 subnormal */
    uint64_t q, rem, half;
    if (shift >= 40) {
        q = 0;
        rem = sig ? 1 : 0;
        half = 1ull << 40;
    } else {
        q = sig >> shift;
        rem = sig & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    }
    if (round_up(q, rem, half, (int)sign, rnd))
        q++;
    uint64_t r = E >= 1 ? ((uint64_t)(E - 1) << 10) + q : q;
    if (r >= 0x7c00) {
        int to_inf = rnd == ASH_PTX_R_RN || rnd == ASH_PTX_R_NONE || rnd == ASH_PTX_R_RNI ||
                     ((rnd == ASH_PTX_R_RM || rnd == ASH_PTX_R_RMI) && sign) ||
                     ((rnd == ASH_PTX_R_RP || rnd == ASH_PTX_R_RPI) && !sign);
        r = to_inf ? 0x7c00 : 0x7bff;
    }
    return s16 | (uint32_t)r;
}

uint32_t hc_f2bh(float f, int rnd)
{
    uint32_t x = (uint32_t)bf32(f), sign = x >> 31, a = x & 0x7fffffff;
    if (a > 0x7f800000u)
        return 0x7fff;
    uint32_t q = a >> 16, rem = a & 0xffff;
    if (a != 0x7f800000u && round_up(q, rem, 0x8000, (int)sign, rnd))
        q++;
    return (sign << 15) | q;
}

float hc_d2f_odd(double d)
{
    int old = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile float t = (float)d;
    fesetround(old);
    if ((double)t != d && !isnan(d))
        return f32(bf32(t) | 1);
    return t;
}

/* ---------------------------------------------------------------- f16 / bf16 element ops */

static float half_op(int op, float a, float b, float c, uint32_t flags, int *ok)
{
    switch (op) {
    case ASH_PTX_OP_ADD: return a + b;
    case ASH_PTX_OP_SUB: return a - b;
    case ASH_PTX_OP_MUL: return a * b;
    case ASH_PTX_OP_FMA: case ASH_PTX_OP_MAD: return (float)((double)a * (double)b + (double)c);
    case ASH_PTX_OP_NEG: return -a;
    case ASH_PTX_OP_ABS: return fabsf(a);
    case ASH_PTX_OP_MIN:
        if (isnan(a) || isnan(b))
            return (flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b)) ? NAN : isnan(a) ? b : a;
        return a < b || (a == b && signbit(a)) ? a : b;
    case ASH_PTX_OP_MAX:
        if (isnan(a) || isnan(b))
            return (flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b)) ? NAN : isnan(a) ? b : a;
        return a > b || (a == b && !signbit(a)) ? a : b;
    case ASH_PTX_OP_EX2: return exp2f(a);
    case ASH_PTX_OP_TANH: return tanhf(a);
    case ASH_PTX_OP_RCP: return 1.0f / a;
    case ASH_PTX_OP_SQRT: return sqrtf(a);
    case ASH_PTX_OP_RSQRT: return 1.0f / sqrtf(a);
    default: *ok = 0; return 0;
    }
}

int hc_exec_half(const ash_ptx_insn *in, uint32_t E, uint64_t *D, const uint64_t *A, const uint64_t *B,
                     const uint64_t *Cc)
{
    int t = in->type, bf = t == ASH_PTX_T_BF16 || t == ASH_PTX_T_BF16X2;
    int n = t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16X2 ? 2 : 1;
    int ok = 1, rnd = in->rnd ? in->rnd : ASH_PTX_R_RN;
    LOOP(E, {
        uint64_t r = 0;
        for (int h = 0; h < n; h++) {
            uint32_t ah = (uint32_t)(A[l] >> (16 * h)) & 0xffff;
            uint32_t bh = B ? (uint32_t)(B[l] >> (16 * h)) & 0xffff : 0;
            uint32_t ch = Cc ? (uint32_t)(Cc[l] >> (16 * h)) & 0xffff : 0;
            uint32_t res;
            if (in->op == ASH_PTX_OP_NEG || in->op == ASH_PTX_OP_ABS) {
                res = in->op == ASH_PTX_OP_NEG ? ah ^ 0x8000 : ah & 0x7fff;
            } else {
                float a = bf ? bh2f(ah) : hc_h2f(ah), b = bf ? bh2f(bh) : hc_h2f(bh), c = bf ? bh2f(ch) : hc_h2f(ch);
                if (in->flags & ASH_PTX_F_FTZ && !bf) {
                    if (!(ah & 0x7c00)) a = copysignf(0, a);
                    if (!(bh & 0x7c00)) b = copysignf(0, b);
                    if (!(ch & 0x7c00)) c = copysignf(0, c);
                }
                float v;
                if (in->op == ASH_PTX_OP_FMA || in->op == ASH_PTX_OP_MAD) {
                    /* a*b is exact in double; the sum rounded to odd, twice, then once to the
                     * half type: one correct rounding of the exact a*b+c */
                    int old = fegetround();
                    feclearexcept(FE_INEXACT);
                    fesetround(FE_TOWARDZERO);
                    volatile double p = (double)a * (double)b;
                    volatile double sum = p + (double)c;
                    int inexact = fetestexcept(FE_INEXACT) != 0;
                    fesetround(old);
                    double d = sum;
                    if (inexact && !isnan(d) && !isinf(d))
                        d = f64(bf64(d) | 1);
                    v = hc_d2f_odd(d);
                } else if (in->flags & ASH_PTX_F_XORSIGN) {   /* min/max.xorsign.abs */
                    v = half_op(in->op, fabsf(a), fabsf(b), c, in->flags, &ok);
                    if (!isnan(v))
                        v = copysignf(v, (signbit(a) != 0) != (signbit(b) != 0) ? -1.0f : 1.0f);
                } else {
                    v = half_op(in->op, a, b, c, in->flags, &ok);
                }
                if (in->flags & ASH_PTX_F_SAT)
                    v = sat32(v);
                if ((in->flags & ASH_PTX_F_RELU) && !isnan(v) && v < 0)   /* .relu: negative results to +0 */
                    v = 0.0f;
                if (in->op == ASH_PTX_OP_MIN || in->op == ASH_PTX_OP_MAX)
                    res = isnan(v) ? 0x7fff : bf ? hc_f2bh(v, ASH_PTX_R_RN) : hc_f2h(v, ASH_PTX_R_RN);
                else
                    res = bf ? hc_f2bh(v, rnd) : hc_f2h(v, rnd);
                if (in->flags & ASH_PTX_F_FTZ && !bf && !(res & 0x7c00))
                    res &= 0x8000;
            }
            r |= (uint64_t)res << (16 * h);
        }
        D[l] = r;
    });
    return ok ? 0 : -1;
}

/* fma.rn.f32 for a whole warp: the hardware fused multiply-add where the CPU has one (a clone
 * chosen when the library loads), libm's exact fmaf elsewhere */
__attribute__((target_clones("fma", "default"))) void hc_fma32_warp(uint64_t *D, const uint64_t *A,
                                                                        const uint64_t *B, const uint64_t *Cc,
                                                                        int ftz)
{
    float r[32];
    if (ftz) {
        for (int l = 0; l < 32; l++)
            r[l] = ftz32(__builtin_fmaf(ftz32(f32(A[l])), ftz32(f32(B[l])), ftz32(f32(Cc[l]))));
    } else {
        for (int l = 0; l < 32; l++)
            r[l] = __builtin_fmaf(f32(A[l]), f32(B[l]), f32(Cc[l]));
    }
    for (int l = 0; l < 32; l++)
        D[l] = bf32(r[l]);
}

/* ---------------------------------------------------------------- conversions */
uint64_t hc_cvt_one(uint64_t v, int dt, int st, int rnd, uint32_t flags)
{
    int ftz = flags & ASH_PTX_F_FTZ, sat = flags & ASH_PTX_F_SAT;
    int sfl = st == ASH_PTX_T_F32 || st == ASH_PTX_T_F64 || st == ASH_PTX_T_F16 || st == ASH_PTX_T_BF16;
    int dfl = dt == ASH_PTX_T_F32 || dt == ASH_PTX_T_F64 || dt == ASH_PTX_T_F16 || dt == ASH_PTX_T_BF16;
    int db = tbits(dt);
    if (!sfl && !dfl) {   /* integer to integer */
        uint64_t x = ext(v, st);
        if (sat) {
            int ss = tsigned(st), ds = tsigned(dt);
            if (ds) {
                int64_t lo = db == 64 ? INT64_MIN : -(1ll << (db - 1)), hi = db == 64 ? INT64_MAX : (1ll << (db - 1)) - 1;
                if (ss) {
                    int64_t s = (int64_t)x;
                    x = (uint64_t)(s < lo ? lo : s > hi ? hi : s);
                } else {
                    x = x > (uint64_t)hi ? (uint64_t)hi : x;
                }
            } else {
                uint64_t hi = db == 64 ? UINT64_MAX : (1ull << db) - 1;
                if (ss && (int64_t)x < 0)
                    x = 0;
                else if (x > hi)
                    x = hi;
            }
        }
        return tsigned(dt) ? (uint64_t)sx(x, db) : zx(x, db);
    }
    /* source as double (exact for every f32/f16/bf16 and for integers up to 2^53) */
    double d = 0;
    float fsrc = 0;
    int src_is_f32 = 0;
    if (st == ASH_PTX_T_F32) {
        fsrc = f32(v);
        if (ftz)
            fsrc = ftz32(fsrc);
        d = fsrc;
        src_is_f32 = 1;
    } else if (st == ASH_PTX_T_F64) {
        d = f64(v);
    } else if (st == ASH_PTX_T_F16) {
        fsrc = hc_h2f((uint32_t)v & 0xffff);
        d = fsrc;
        src_is_f32 = 1;
    } else if (st == ASH_PTX_T_BF16) {
        fsrc = bh2f((uint32_t)v & 0xffff);
        d = fsrc;
        src_is_f32 = 1;
    }
    if (!dfl) {   /* float to integer: round as asked, NaN -> 0, saturate to the range */
        if (isnan(d))
            return 0;
        double r;
        switch (rnd) {
        case ASH_PTX_R_RZI: r = trunc(d); break;
        case ASH_PTX_R_RMI: r = floor(d); break;
        case ASH_PTX_R_RPI: r = ceil(d); break;
        default: r = nearbyint(d); break;
        }
        if (tsigned(dt)) {
            double lo = -ldexp(1.0, db - 1), hi = ldexp(1.0, db - 1);
            int64_t s = r < lo ? (db == 64 ? INT64_MIN : -(1ll << (db - 1)))
                      : r >= hi ? (db == 64 ? INT64_MAX : (1ll << (db - 1)) - 1) : (int64_t)r;
            return zx((uint64_t)s, db);
        }
        double hi = ldexp(1.0, db);
        uint64_t u = r <= 0 ? 0 : r >= hi ? (db == 64 ? UINT64_MAX : (1ull << db) - 1) : (uint64_t)r;
        return u;
    }
    if (!sfl) {   /* integer to float, rounded as asked */
        uint64_t x = ext(v, st);
        int fm = fe_mode(rnd), old = FE_TONEAREST;
        if (fm != FE_TONEAREST) {
            old = fegetround();
            fesetround(fm);
        }
        uint64_t r;
        if (dt == ASH_PTX_T_F64) {
            volatile double o = tsigned(st) ? (double)(int64_t)x : (double)x;
            r = bf64(sat ? sat64(o) : o);
        } else {
            volatile float o = tsigned(st) ? (float)(int64_t)x : (float)x;
            if (sat)
                o = sat32(o);
            r = dt == ASH_PTX_T_F32 ? bf32(o) : dt == ASH_PTX_T_F16 ? hc_f2h(o, rnd) : hc_f2bh(o, rnd);
            if (dt == ASH_PTX_T_F16 && tbits(st) > 16) {
                /* an integer may need more than 24 bits: round once, from the integer, via odd */
                volatile double od = tsigned(st) ? (double)(int64_t)x : (double)x;
                r = hc_f2h(hc_d2f_odd(od), rnd);
            }
        }
        if (fm != FE_TONEAREST)
            fesetround(old);
        return r;
    }
    /* float to float */
    int integral = rnd == ASH_PTX_R_RNI || rnd == ASH_PTX_R_RZI || rnd == ASH_PTX_R_RMI || rnd == ASH_PTX_R_RPI;
    if (integral) {
        switch (rnd) {
        case ASH_PTX_R_RZI: d = trunc(d); break;
        case ASH_PTX_R_RMI: d = floor(d); break;
        case ASH_PTX_R_RPI: d = ceil(d); break;
        default: d = nearbyint(d); break;
        }
        if (src_is_f32)
            fsrc = (float)d;
    }
    switch (dt) {
    case ASH_PTX_T_F64: {
        double o = sat ? sat64(d) : d;
        return bf64(o);
    }
    case ASH_PTX_T_F32: {
        float o;
        if (src_is_f32 || integral) {
            o = (float)d;
        } else {
            int fm = fe_mode(rnd), old = FE_TONEAREST;
            if (fm != FE_TONEAREST) {
                old = fegetround();
                fesetround(fm);
            }
            volatile double vd = d;
            o = (float)vd;
            if (fm != FE_TONEAREST)
                fesetround(old);
        }
        if (ftz)
            o = ftz32(o);
        if (sat)
            o = sat32(o);
        return bf32(o);
    }
    case ASH_PTX_T_F16: case ASH_PTX_T_BF16: {
        int r = integral ? ASH_PTX_R_RN : rnd;
        float o = src_is_f32 ? fsrc : hc_d2f_odd(d);
        if (sat)
            o = sat32(o);
        return dt == ASH_PTX_T_F16 ? hc_f2h(o, r) : hc_f2bh(o, r);
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- atomics */
#define ATOM_CAS_LOOP(T, p, expr)                                                               \
    do {                                                                                       \
        T old_ = __atomic_load_n((T *)(p), __ATOMIC_SEQ_CST), new_;                            \
        do {                                                                                   \
            T o = old_;                                                                        \
            new_ = (expr);                                                                     \
        } while (!__atomic_compare_exchange_n((T *)(p), &old_, new_, 0, __ATOMIC_SEQ_CST,      \
                                              __ATOMIC_SEQ_CST));                              \
        res = old_;                                                                            \
    } while (0)

static uint64_t half2_add(uint32_t o, uint32_t b, int bf)
{
    uint32_t r = 0;
    for (int h = 0; h < 2; h++) {
        uint32_t x = (o >> (16 * h)) & 0xffff, y = (b >> (16 * h)) & 0xffff;
        float s = bf ? bh2f(x) + bh2f(y) : hc_h2f(x) + hc_h2f(y);
        r |= (bf ? hc_f2bh(s, ASH_PTX_R_RN) : hc_f2h(s, ASH_PTX_R_RN)) << (16 * h);
    }
    return r;
}

uint64_t hc_atom_one(void *p, int op, int t, uint64_t b, uint64_t c, int *ok)
{
    int bits = tbits(t), s = tsigned(t);
    uint64_t res = 0;
    if (bits == 32) {
        uint32_t B = (uint32_t)b, Cv = (uint32_t)c;
        switch (op) {
        case ASH_PTX_A_ADD:
            if (t == ASH_PTX_T_F32) {
                ATOM_CAS_LOOP(uint32_t, p, (uint32_t)bf32(f32(o) + f32(B)));
            } else if (t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16X2) {
                ATOM_CAS_LOOP(uint32_t, p, (uint32_t)half2_add(o, B, t == ASH_PTX_T_BF16X2));
            } else {
                res = __atomic_fetch_add((uint32_t *)p, B, __ATOMIC_SEQ_CST);
            }
            break;
        case ASH_PTX_A_MIN:
            if (t == ASH_PTX_T_F32)
                ATOM_CAS_LOOP(uint32_t, p, (uint32_t)bf32(fminf(f32(o), f32(B))));
            else if (s)
                ATOM_CAS_LOOP(uint32_t, p, (int32_t)o < (int32_t)B ? o : B);
            else
                ATOM_CAS_LOOP(uint32_t, p, o < B ? o : B);
            break;
        case ASH_PTX_A_MAX:
            if (t == ASH_PTX_T_F32)
                ATOM_CAS_LOOP(uint32_t, p, (uint32_t)bf32(fmaxf(f32(o), f32(B))));
            else if (s)
                ATOM_CAS_LOOP(uint32_t, p, (int32_t)o > (int32_t)B ? o : B);
            else
                ATOM_CAS_LOOP(uint32_t, p, o > B ? o : B);
            break;
        case ASH_PTX_A_INC: ATOM_CAS_LOOP(uint32_t, p, o >= B ? 0 : o + 1); break;
        case ASH_PTX_A_DEC: ATOM_CAS_LOOP(uint32_t, p, (o == 0 || o > B) ? B : o - 1); break;
        case ASH_PTX_A_AND: res = __atomic_fetch_and((uint32_t *)p, B, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_OR: res = __atomic_fetch_or((uint32_t *)p, B, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_XOR: res = __atomic_fetch_xor((uint32_t *)p, B, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_EXCH: res = __atomic_exchange_n((uint32_t *)p, B, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_CAS: {
            uint32_t e = B;
            __atomic_compare_exchange_n((uint32_t *)p, &e, Cv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            res = e;
            break;
        }
        default: *ok = 0;
        }
        return res;
    }
    if (bits == 64) {
        switch (op) {
        case ASH_PTX_A_ADD:
            if (t == ASH_PTX_T_F64)
                ATOM_CAS_LOOP(uint64_t, p, bf64(f64(o) + f64(b)));
            else
                res = __atomic_fetch_add((uint64_t *)p, b, __ATOMIC_SEQ_CST);
            break;
        case ASH_PTX_A_MIN:
            if (s)
                ATOM_CAS_LOOP(uint64_t, p, (int64_t)o < (int64_t)b ? o : b);
            else
                ATOM_CAS_LOOP(uint64_t, p, o < b ? o : b);
            break;
        case ASH_PTX_A_MAX:
            if (s)
                ATOM_CAS_LOOP(uint64_t, p, (int64_t)o > (int64_t)b ? o : b);
            else
                ATOM_CAS_LOOP(uint64_t, p, o > b ? o : b);
            break;
        case ASH_PTX_A_AND: res = __atomic_fetch_and((uint64_t *)p, b, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_OR: res = __atomic_fetch_or((uint64_t *)p, b, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_XOR: res = __atomic_fetch_xor((uint64_t *)p, b, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_EXCH: res = __atomic_exchange_n((uint64_t *)p, b, __ATOMIC_SEQ_CST); break;
        case ASH_PTX_A_CAS: {
            uint64_t e = b;
            __atomic_compare_exchange_n((uint64_t *)p, &e, c, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            res = e;
            break;
        }
        default: *ok = 0;
        }
        return res;
    }
    if (bits == 16 && (t == ASH_PTX_T_F16 || t == ASH_PTX_T_BF16 || t == ASH_PTX_T_B16 || t == ASH_PTX_T_U16)) {
        uint16_t B = (uint16_t)b;
        if (op == ASH_PTX_A_ADD && (t == ASH_PTX_T_F16 || t == ASH_PTX_T_BF16)) {
            int bf = t == ASH_PTX_T_BF16;
            ATOM_CAS_LOOP(uint16_t, p, (uint16_t)(bf ? hc_f2bh(bh2f(o) + bh2f(B), ASH_PTX_R_RN)
                                                    : hc_f2h(hc_h2f(o) + hc_h2f(B), ASH_PTX_R_RN)));
        } else if (op == ASH_PTX_A_CAS) {
            uint16_t e = B;
            __atomic_compare_exchange_n((uint16_t *)p, &e, (uint16_t)c, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            res = e;
        } else if (op == ASH_PTX_A_EXCH) {
            res = __atomic_exchange_n((uint16_t *)p, B, __ATOMIC_SEQ_CST);
        } else {
            *ok = 0;
        }
        return res;
    }
    *ok = 0;
    return 0;
}

