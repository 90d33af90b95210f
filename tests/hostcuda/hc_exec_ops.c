/* hc_exec_ops.c — the executor's instructions: one call per warp instruction, the lanes of the
 * active mask in a loop (see hc_exec_ops.h for the warp record, hc_exec.c for scheduling).
 *
 * Semantics follow the PTX ISA: integer ops at their type's width (readers truncate a register
 * cell to the width they read, so writers need not); floating point in IEEE single/double with
 * the instruction's rounding mode (fesetround around the lane loop; this file is built with
 * -frounding-math), .ftz flushing subnormal inputs and results to signed zero, .sat clamping to
 * [0, 1] with NaN to 0; f16/bf16 converted bit-exactly (all rounding modes) and computed in f32,
 * which is exact before the one final rounding for add, sub, mul (24 >= 2*11+2 bits).
 * .approx functions use libm (more accurate than the GPU's, within its documented bounds).
 * Threading: called by one CTA worker for one warp; atomics on shared and global are host atomics.
 * Must not: touch memory other than through hc_exec_addr / fast_addr (which check every access),
 * or leave the rounding mode changed after an instruction.
 */
#include "hc_exec_ops.h"

#include <fenv.h>
#include <math.h>
#include <string.h>
#include <time.h>

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
static inline int tbits(int t)
{
    return ash_ptx_type_size(t) * 8;
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

/* f16 / bf16 <-> f32, bit-exact, every rounding mode */
static float h2f(uint32_t h)
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
static inline float bh2f(uint32_t h)
{
    return f32((uint64_t)(h & 0xffff) << 16);
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
static uint32_t f2h(float f, int rnd)
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
static uint32_t f2bh(float f, int rnd)
{
    uint32_t x = (uint32_t)bf32(f), sign = x >> 31, a = x & 0x7fffffff;
    if (a > 0x7f800000u)
        return 0x7fff;
    uint32_t q = a >> 16, rem = a & 0xffff;
    if (a != 0x7f800000u && round_up(q, rem, 0x8000, (int)sign, rnd))
        q++;
    return (sign << 15) | q;
}
/* f64 -> f32 rounded to odd (then a second rounding to f16/bf16 is exact) */
static float d2f_odd(double d)
{
    int old = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile float t = (float)d;
    fesetround(old);
    if ((double)t != d && !isnan(d))
        return f32(bf32(t) | 1);
    return t;
}

/* ---------------------------------------------------------------- operands */
static uint64_t sym_value(const hc_cta *C, const ash_ptx_module *m, const ash_ptx_opnd *o)
{
    const ash_ptx_var *v = &m->vars[o->sym];
    uint64_t base;
    switch (v->space) {
    case ASH_PTX_S_SHARED: base = v->is_extern ? hc_exec_dyn_base(C) : v->offset; break;
    case ASH_PTX_S_LOCAL: base = v->offset; break;
    case ASH_PTX_S_PARAM: base = v->offset; break;
    default: base = hc_exec_var_addr(C)[o->sym]; break;
    }
    return base + (uint64_t)o->imm;
}

static uint64_t sreg_value(const hc_cta *C, const hc_warp *W, int sr, int l)
{
    const hc_exec_launch *L = hc_exec_launch_of(C);
    unsigned t = (unsigned)(W->id * 32 + l);
    switch (sr) {
    case ASH_PTX_SR_TID: return t % L->block[0];
    case ASH_PTX_SR_TID + 1: return (t / L->block[0]) % L->block[1];
    case ASH_PTX_SR_TID + 2: return t / (L->block[0] * L->block[1]);
    case ASH_PTX_SR_NTID: case ASH_PTX_SR_NTID + 1: case ASH_PTX_SR_NTID + 2: return L->block[sr - ASH_PTX_SR_NTID];
    case ASH_PTX_SR_CTAID: case ASH_PTX_SR_CTAID + 1: case ASH_PTX_SR_CTAID + 2: return C->ctaid[sr - ASH_PTX_SR_CTAID];
    case ASH_PTX_SR_NCTAID: case ASH_PTX_SR_NCTAID + 1: case ASH_PTX_SR_NCTAID + 2:
        return L->grid[sr - ASH_PTX_SR_NCTAID];
    case ASH_PTX_SR_LANEID: return (uint64_t)l;
    case ASH_PTX_SR_WARPID: return (uint64_t)W->id;
    case ASH_PTX_SR_NWARPID: return C->nwarps;
    case ASH_PTX_SR_SMID: return 0;
    case ASH_PTX_SR_NSMID: return 1;
    case ASH_PTX_SR_CLOCK: case ASH_PTX_SR_CLOCK64: case ASH_PTX_SR_GLOBALTIMER: {
        struct timespec ts;
        clock_gettime(sr == ASH_PTX_SR_GLOBALTIMER ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
        uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        return sr == ASH_PTX_SR_CLOCK ? (uint32_t)ns : ns;
    }
    case ASH_PTX_SR_LANEMASK_EQ: return 1u << l;
    case ASH_PTX_SR_LANEMASK_LE: return (uint32_t)((2ull << l) - 1);
    case ASH_PTX_SR_LANEMASK_LT: return (1u << l) - 1;
    case ASH_PTX_SR_LANEMASK_GE: return ~((1u << l) - 1);
    case ASH_PTX_SR_LANEMASK_GT: return (uint32_t)~((2ull << l) - 1);
    case ASH_PTX_SR_DYNSMEM: return L->shmem;
    case ASH_PTX_SR_TOTALSMEM: return hc_exec_dyn_base(C) + L->shmem;
    case ASH_PTX_SR_WARPSZ: return 32;
    case ASH_PTX_SR_ENVREG + 0 ... ASH_PTX_SR_ENVREG + 31: return L->envreg[sr - ASH_PTX_SR_ENVREG];
    default: return 0;
    }
}

/* a symbol whose address differs per lane: local variables and .param variables of functions */
static int sym_per_lane(const ash_ptx_module *m, int sym)
{
    const ash_ptx_var *v = &m->vars[sym];
    return v->space == ASH_PTX_S_LOCAL || (v->space == ASH_PTX_S_PARAM && !v->is_entry_param);
}

/* the 32 values of source operand k */
static const uint64_t *src(const hc_cta *C, const hc_warp *W, const ash_ptx_insn *in, int k, uint64_t *tmp)
{
    const ash_ptx_opnd *o = &in->o[k];
    switch (o->kind) {
    case ASH_PTX_K_REG:
        if (o->neg) {
            const uint64_t *r = W->R + (size_t)o->reg * 32;
            for (int l = 0; l < 32; l++)
                tmp[l] = !(r[l] & 1);
            return tmp;
        }
        return W->R + (size_t)o->reg * 32;
    case ASH_PTX_K_IMM:
        for (int l = 0; l < 32; l++)
            tmp[l] = (uint64_t)o->imm;
        return tmp;
    case ASH_PTX_K_SREG:
        for (int l = 0; l < 32; l++)
            tmp[l] = sreg_value(C, W, o->sreg, l);
        return tmp;
    case ASH_PTX_K_SYM: {
        const ash_ptx_module *m = hc_exec_launch_of(C)->m;
        uint64_t v = sym_value(C, m, o);
        int pl = sym_per_lane(m, o->sym);
        for (int l = 0; l < 32; l++)
            tmp[l] = v + (pl ? W->lbase[l] : 0);
        return tmp;
    }
    default:
        memset(tmp, 0, 32 * sizeof *tmp);
        return tmp;
    }
}

static _Thread_local uint64_t sink[32];
static uint64_t *dst(hc_warp *W, const ash_ptx_insn *in, int k)
{
    const ash_ptx_opnd *o = &in->o[k];
    return o->kind == ASH_PTX_K_REG ? W->R + (size_t)o->reg * 32 : sink;
}

static int fe_mode(int rnd)
{
    switch (rnd) {
    case ASH_PTX_R_RZ: case ASH_PTX_R_RZI: return FE_TOWARDZERO;
    case ASH_PTX_R_RM: case ASH_PTX_R_RMI: return FE_DOWNWARD;
    case ASH_PTX_R_RP: case ASH_PTX_R_RPI: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

/* ---------------------------------------------------------------- f16 / bf16 element ops */
static int is_half(int t)
{
    return t == ASH_PTX_T_F16 || t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16 || t == ASH_PTX_T_BF16X2;
}

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

static int exec_half(const ash_ptx_insn *in, uint32_t E, uint64_t *D, const uint64_t *A, const uint64_t *B,
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
                float a = bf ? bh2f(ah) : h2f(ah), b = bf ? bh2f(bh) : h2f(bh), c = bf ? bh2f(ch) : h2f(ch);
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
                    v = d2f_odd(d);
                } else {
                    v = half_op(in->op, a, b, c, in->flags, &ok);
                }
                if (in->flags & ASH_PTX_F_SAT)
                    v = sat32(v);
                if (in->op == ASH_PTX_OP_MIN || in->op == ASH_PTX_OP_MAX)
                    res = isnan(v) ? 0x7fff : bf ? f2bh(v, ASH_PTX_R_RN) : f2h(v, ASH_PTX_R_RN);
                else
                    res = bf ? f2bh(v, rnd) : f2h(v, rnd);
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
__attribute__((target_clones("fma", "default"))) static void fma32_warp(uint64_t *D, const uint64_t *A,
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
static uint64_t cvt_one(uint64_t v, int dt, int st, int rnd, uint32_t flags)
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
        fsrc = h2f((uint32_t)v & 0xffff);
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
            r = dt == ASH_PTX_T_F32 ? bf32(o) : dt == ASH_PTX_T_F16 ? f2h(o, rnd) : f2bh(o, rnd);
            if (dt == ASH_PTX_T_F16 && tbits(st) > 16) {
                /* an integer may need more than 24 bits: round once, from the integer, via odd */
                volatile double od = tsigned(st) ? (double)(int64_t)x : (double)x;
                r = f2h(d2f_odd(od), rnd);
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
        float o = src_is_f32 ? fsrc : d2f_odd(d);
        if (sat)
            o = sat32(o);
        return dt == ASH_PTX_T_F16 ? f2h(o, r) : f2bh(o, r);
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- comparisons */
static int cmp_f(double a, double b, int c)
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

static int cmp_i(uint64_t a, uint64_t b, int t, int c)
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

static double fval(uint64_t v, int t, int ftz)
{
    switch (t) {
    case ASH_PTX_T_F32: return ftz ? ftz32(f32(v)) : f32(v);
    case ASH_PTX_T_F64: return ftz ? ftz64(f64(v)) : f64(v);
    case ASH_PTX_T_F16: return h2f((uint32_t)v & 0xffff);
    case ASH_PTX_T_BF16: return bh2f((uint32_t)v & 0xffff);
    default: return 0;
    }
}
static int is_float(int t)
{
    return t == ASH_PTX_T_F32 || t == ASH_PTX_T_F64 || is_half(t);
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
        float s = bf ? bh2f(x) + bh2f(y) : h2f(x) + h2f(y);
        r |= (bf ? f2bh(s, ASH_PTX_R_RN) : f2h(s, ASH_PTX_R_RN)) << (16 * h);
    }
    return r;
}

static uint64_t atom_one(void *p, int op, int t, uint64_t b, uint64_t c, int *ok)
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
            ATOM_CAS_LOOP(uint16_t, p, (uint16_t)(bf ? f2bh(bh2f(o) + bh2f(B), ASH_PTX_R_RN)
                                                    : f2h(h2f(o) + h2f(B), ASH_PTX_R_RN)));
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

/* ---------------------------------------------------------------- control helpers */
static void set_pcs(hc_warp *W, uint32_t M, uint32_t E, uint32_t target, uint32_t next)
{
    if (E == M || E == 0) {
        uint32_t to = E ? target : next;
        if (W->uniform) {
            W->upc = to;
        } else {
            for (int l = 0; l < 32; l++)
                if (M >> l & 1)
                    W->pc[l] = to;
        }
        return;
    }
    hc_exec_deuniform(W);
    for (int l = 0; l < 32; l++)
        if (M >> l & 1)
            W->pc[l] = (E >> l & 1) ? target : next;
}

/* a warp-synchronous op with member mask mm: 1 if it may run now, 0 if M parks to wait */
static int warp_sync_ready(hc_warp *W, uint32_t M, uint32_t mm)
{
    uint32_t need = mm & W->live;
    if (W->force || !(need & ~M))
        return 1;
    hc_exec_deuniform(W);
    W->wsync |= M;
    return 0;
}

static uint32_t first_lane(uint32_t E)
{
    return E ? (uint32_t)__builtin_ctz(E) : 0;
}

/* the common accesses without a call: shared memory in range, global memory in the warp's last
 * allocation; the rest (and every fault) through hc_exec_addr */
static inline void *fast_addr(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int space, uint64_t a,
                              unsigned size, int acc)
{
    if (!(a & (size - 1))) {
        if (space == ASH_PTX_S_SHARED && a + size <= C->shared_bytes)
            return C->shared + a;
        if ((space == ASH_PTX_S_GLOBAL || space == ASH_PTX_S_GENERIC) && W->cache >= 0) {
            const hc_exec_range *r = &C->ranges[W->cache];
            if (a >= r->lo && a - r->lo + size <= r->size)
                return r->rw + (a - r->lo);
        }
    }
    return hc_exec_addr(C, W, l, in, space, a, size, acc);
}

/* ---------------------------------------------------------------- the instructions */
int hc_exec_insn(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E)
{
    uint64_t ta[32], tb[32], tc[32], td[32];
    const int t = in->type;
    const int bits = tbits(t);
    switch (in->op) {
    case ASH_PTX_OP_MOV: {
        if (in->o[0].kind == ASH_PTX_K_VEC) {   /* unpack */
            const uint64_t *A = src(C, W, in, 1, ta);
            int n = in->o[0].n, w = bits / n;
            LOOP(E, {
                uint64_t v = A[l];
                for (int i = 0; i < n; i++)
                    if (in->o[0].vec[i] >= 0)
                        W->R[(size_t)in->o[0].vec[i] * 32 + l] = zx(v >> (w * i), w);
            });
            return HC_STEP_NEXT;
        }
        uint64_t *D = dst(W, in, 0);
        if (in->o[1].kind == ASH_PTX_K_VEC) {   /* pack */
            int n = in->o[1].n, w = bits / n;
            LOOP(E, {
                uint64_t v = 0;
                for (int i = 0; i < n; i++)
                    if (in->o[1].vec[i] >= 0)
                        v |= zx(W->R[(size_t)in->o[1].vec[i] * 32 + l], w) << (w * i);
                    else if (in->o[1].vec[i] == -2)
                        v |= zx((uint64_t)in->o[1].vimm[i], w) << (w * i);
                D[l] = v;
            });
            return HC_STEP_NEXT;
        }
        const uint64_t *A = src(C, W, in, 1, ta);
        if (t == ASH_PTX_T_PRED)
            LOOP(E, { D[l] = A[l] & 1; });
        else
            LOOP(E, { D[l] = A[l]; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_LD:
    case ASH_PTX_OP_LDU: {
        const ash_ptx_opnd *a = &in->o[1];
        int space = in->space ? in->space : ASH_PTX_S_GENERIC;
        const ash_ptx_module *m = hc_exec_launch_of(C)->m;
        if (space == ASH_PTX_S_PARAM && a->sym >= 0 && !m->vars[a->sym].is_entry_param)
            space = ASH_PTX_S_LOCAL;
        int esz = ash_ptx_type_size(t), n = in->vec;
        uint64_t base_sym = a->sym >= 0 ? sym_value(C, m, &(ash_ptx_opnd){.sym = a->sym}) : 0;
        int pl = a->sym >= 0 && sym_per_lane(m, a->sym);
        const uint64_t *Rb = a->reg >= 0 ? W->R + (size_t)a->reg * 32 : NULL;
        uint64_t *Dv[4];
        for (int i = 0; i < n; i++) {
            int r = in->o[0].kind == ASH_PTX_K_VEC ? in->o[0].vec[i] : in->o[0].reg;
            Dv[i] = r >= 0 ? W->R + (size_t)r * 32 : sink;
        }
        const int sgn = tsigned(t);
        const unsigned total = (unsigned)(esz * n);
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            uint64_t addr = (Rb ? Rb[l] : base_sym + (pl ? W->lbase[l] : 0)) + (uint64_t)a->imm;
            const unsigned char *p = fast_addr(C, W, l, in, space, addr, total, HC_ACC_LD);
            if (!p)
                return -1;
            switch (esz) {
            case 4:
                for (int i = 0; i < n; i++) {
                    uint32_t v;
                    memcpy(&v, p + 4 * i, 4);
                    Dv[i][l] = sgn ? (uint64_t)(int64_t)(int32_t)v : v;
                }
                break;
            case 8:
                for (int i = 0; i < n; i++)
                    memcpy(&Dv[i][l], p + 8 * i, 8);
                break;
            case 2:
                for (int i = 0; i < n; i++) {
                    uint16_t v;
                    memcpy(&v, p + 2 * i, 2);
                    Dv[i][l] = sgn ? (uint64_t)(int64_t)(int16_t)v : v;
                }
                break;
            default:
                for (int i = 0; i < n; i++)
                    Dv[i][l] = sgn ? (uint64_t)(int64_t)(int8_t)p[i] : p[i];
                break;
            }
        }
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_ST: {
        const ash_ptx_opnd *a = &in->o[0];
        int space = in->space ? in->space : ASH_PTX_S_GENERIC;
        const ash_ptx_module *m = hc_exec_launch_of(C)->m;
        if (space == ASH_PTX_S_PARAM && a->sym >= 0)
            space = ASH_PTX_S_LOCAL;
        int esz = ash_ptx_type_size(t), n = in->vec;
        uint64_t base_sym = a->sym >= 0 ? sym_value(C, m, &(ash_ptx_opnd){.sym = a->sym}) : 0;
        int pl = a->sym >= 0 && sym_per_lane(m, a->sym);
        const uint64_t *Rb = a->reg >= 0 ? W->R + (size_t)a->reg * 32 : NULL;
        const uint64_t *V = in->o[1].kind == ASH_PTX_K_VEC ? NULL : src(C, W, in, 1, ta);
        const uint64_t *Sv[4];
        uint64_t imm[4][1];
        for (int i = 0; i < n; i++) {
            int r = V ? -3 : in->o[1].vec[i];
            if (V) {
                Sv[i] = V;
            } else if (r >= 0) {
                Sv[i] = W->R + (size_t)r * 32;
            } else {   /* an immediate or `_`: the same value in every lane */
                for (int l = 0; l < 32; l++)
                    tb[l] = r == -2 ? (uint64_t)in->o[1].vimm[i] : 0;
                imm[i][0] = 0;
                Sv[i] = i == 0 ? tb : i == 1 ? tc : i == 2 ? td : ta;
                if (Sv[i] != tb)
                    memcpy((uint64_t *)Sv[i], tb, sizeof tb);
            }
        }
        (void)imm;
        const unsigned total = (unsigned)(esz * n);
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            uint64_t addr = (Rb ? Rb[l] : base_sym + (pl ? W->lbase[l] : 0)) + (uint64_t)a->imm;
            unsigned char *p = fast_addr(C, W, l, in, space, addr, total, HC_ACC_ST);
            if (!p)
                return -1;
            switch (esz) {
            case 4:
                for (int i = 0; i < n; i++) {
                    uint32_t v = (uint32_t)Sv[i][l];
                    memcpy(p + 4 * i, &v, 4);
                }
                break;
            case 8:
                for (int i = 0; i < n; i++)
                    memcpy(p + 8 * i, &Sv[i][l], 8);
                break;
            case 2:
                for (int i = 0; i < n; i++) {
                    uint16_t v = (uint16_t)Sv[i][l];
                    memcpy(p + 2 * i, &v, 2);
                }
                break;
            default:
                for (int i = 0; i < n; i++)
                    p[i] = (unsigned char)Sv[i][l];
                break;
            }
        }
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CVTA: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        uint64_t win = in->space == ASH_PTX_S_SHARED ? HC_WIN_SHARED : in->space == ASH_PTX_S_LOCAL ? HC_WIN_LOCAL
                     : in->space == ASH_PTX_S_PARAM ? HC_WIN_PARAM : 0;
        int to = (in->flags & ASH_PTX_F_TO) != 0;
        LOOP(E, {
            uint64_t v = A[l];
            if (win)
                v = to ? ((v & HC_WIN_MASK) == win ? v - win : v) : v + win;
            D[l] = zx(v, bits);
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CVT: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        int st = in->type2 ? in->type2 : t;
        if (t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16X2) {   /* d = {cvt(a) high, cvt(b) low} */
            const uint64_t *B = src(C, W, in, 2, tb);
            int et = t == ASH_PTX_T_F16X2 ? ASH_PTX_T_F16 : ASH_PTX_T_BF16;
            LOOP(E, { D[l] = (cvt_one(A[l], et, st, in->rnd, in->flags) << 16) |
                             cvt_one(B[l], et, st, in->rnd, in->flags); });
            return HC_STEP_NEXT;
        }
        if (t == ASH_PTX_T_F32 && st == ASH_PTX_T_F16 && !in->flags)
            LOOP(E, { D[l] = bf32(h2f((uint32_t)A[l] & 0xffff)); });
        else if (t == ASH_PTX_T_BF16 && st == ASH_PTX_T_F32 && in->rnd == ASH_PTX_R_RN && !in->flags)
            LOOP(E, { D[l] = f2bh(f32(A[l]), ASH_PTX_R_RN); });
        else
            LOOP(E, { D[l] = cvt_one(A[l], t, st, in->rnd, in->flags); });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_ADD: case ASH_PTX_OP_SUB: case ASH_PTX_OP_MUL: case ASH_PTX_OP_MAD: case ASH_PTX_OP_FMA:
    case ASH_PTX_OP_DIV: case ASH_PTX_OP_MIN: case ASH_PTX_OP_MAX: case ASH_PTX_OP_NEG: case ASH_PTX_OP_ABS:
    case ASH_PTX_OP_RCP: case ASH_PTX_OP_SQRT: case ASH_PTX_OP_RSQRT: case ASH_PTX_OP_EX2: case ASH_PTX_OP_LG2:
    case ASH_PTX_OP_SIN: case ASH_PTX_OP_COS: case ASH_PTX_OP_TANH: case ASH_PTX_OP_REM:
    case ASH_PTX_OP_COPYSIGN: case ASH_PTX_OP_ADDC: case ASH_PTX_OP_SUBC: case ASH_PTX_OP_MADC:
        break;
    default:
        goto other;
    }
    /* arithmetic */
    {
        uint64_t *D = dst(W, in, 0);
        int nsrc = in->nops - 1;
        const uint64_t *A = nsrc > 0 ? src(C, W, in, 1, ta) : ta;
        const uint64_t *B = nsrc > 1 ? src(C, W, in, 2, tb) : NULL;
        const uint64_t *Cc = nsrc > 2 ? src(C, W, in, 3, tc) : NULL;
        const int op = in->op;
        if (is_half(t))
            return exec_half(in, E, D, A, B, Cc) ? -1 : HC_STEP_NEXT;
        if (t == ASH_PTX_T_F32) {
            const int ftz = (in->flags & ASH_PTX_F_FTZ) != 0, sat = (in->flags & ASH_PTX_F_SAT) != 0;
            int fm = fe_mode(in->rnd), old = FE_TONEAREST;
            if (fm != FE_TONEAREST) {
                old = fegetround();
                fesetround(fm);
            }
/* three loops, so the common forms carry no per-lane test of the flags */
#define F32OP(expr)                                                                             \
    do {                                                                                       \
        if (!ftz && !sat) {                                                                    \
            LOOP(E, {                                                                          \
                float a = f32(A[l]), b = B ? f32(B[l]) : 0.0f, c = Cc ? f32(Cc[l]) : 0.0f;     \
                D[l] = bf32(expr);                                                             \
                (void)a; (void)b; (void)c;                                                     \
            });                                                                                \
        } else if (!sat) {                                                                     \
            LOOP(E, {                                                                          \
                float a = ftz32(f32(A[l])), b = B ? ftz32(f32(B[l])) : 0.0f;                   \
                float c = Cc ? ftz32(f32(Cc[l])) : 0.0f;                                       \
                D[l] = bf32(ftz32(expr));                                                      \
                (void)a; (void)b; (void)c;                                                     \
            });                                                                                \
        } else {                                                                               \
            LOOP(E, {                                                                          \
                float a = f32(A[l]), b = B ? f32(B[l]) : 0.0f, c = Cc ? f32(Cc[l]) : 0.0f;     \
                if (ftz) { a = ftz32(a); b = ftz32(b); c = ftz32(c); }                         \
                float r = (expr);                                                              \
                if (ftz) r = ftz32(r);                                                         \
                D[l] = bf32(sat32(r));                                                         \
            });                                                                                \
        }                                                                                      \
    } while (0)
            switch (op) {
            case ASH_PTX_OP_ADD: F32OP(a + b); break;
            case ASH_PTX_OP_SUB: F32OP(a - b); break;
            case ASH_PTX_OP_MUL: F32OP(a * b); break;
            case ASH_PTX_OP_FMA: case ASH_PTX_OP_MAD:
                if (E == ~0u && !sat && Cc && B && fm == FE_TONEAREST && (in->rnd || op == ASH_PTX_OP_FMA))
                    fma32_warp(D, A, B, Cc, ftz);
                else if (in->rnd || op == ASH_PTX_OP_FMA)
                    F32OP(fmaf(a, b, c));
                else
                    F32OP(a * b + c);
                break;
            case ASH_PTX_OP_DIV: F32OP(a / b); break;
            case ASH_PTX_OP_NEG: LOOP(E, { float a = f32(A[l]); if (ftz) a = ftz32(a); D[l] = bf32(-a); }); break;
            case ASH_PTX_OP_ABS: LOOP(E, { float a = f32(A[l]); if (ftz) a = ftz32(a); D[l] = bf32(fabsf(a)); }); break;
            case ASH_PTX_OP_MIN:   /* a NaN operand (quiet or signalling) gives the other; two: canonical NaN */
                F32OP((isnan(a) || isnan(b)) ? (((in->flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b))) ? f32(0x7fffffff)
                                                : isnan(a) ? b : a)
                      : (a < b || (a == b && signbit(a))) ? a : b);
                break;
            case ASH_PTX_OP_MAX:
                F32OP((isnan(a) || isnan(b)) ? (((in->flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b))) ? f32(0x7fffffff)
                                                : isnan(a) ? b : a)
                      : (a > b || (a == b && !signbit(a))) ? a : b);
                break;
            case ASH_PTX_OP_RCP: F32OP(1.0f / a); break;
            case ASH_PTX_OP_SQRT: F32OP(sqrtf(a)); break;
            case ASH_PTX_OP_RSQRT: F32OP(1.0f / sqrtf(a)); break;
            case ASH_PTX_OP_EX2: F32OP(exp2f(a)); break;
            case ASH_PTX_OP_LG2: F32OP(log2f(a)); break;
            case ASH_PTX_OP_SIN: F32OP(sinf(a)); break;
            case ASH_PTX_OP_COS: F32OP(cosf(a)); break;
            case ASH_PTX_OP_TANH: F32OP(tanhf(a)); break;
            case ASH_PTX_OP_COPYSIGN: F32OP(copysignf(b, a)); break;
            default:
                if (fm != FE_TONEAREST)
                    fesetround(old);
                return -1;
            }
#undef F32OP
            if (fm != FE_TONEAREST)
                fesetround(old);
            return HC_STEP_NEXT;
        }
        if (t == ASH_PTX_T_F64) {
            const int ftz = (in->flags & ASH_PTX_F_FTZ) != 0, sat = (in->flags & ASH_PTX_F_SAT) != 0;
            int fm = fe_mode(in->rnd), old = FE_TONEAREST;
            if (fm != FE_TONEAREST) {
                old = fegetround();
                fesetround(fm);
            }
#define F64OP(expr)                                                                             \
    LOOP(E, {                                                                                  \
        double a = f64(A[l]), b = B ? f64(B[l]) : 0.0, c = Cc ? f64(Cc[l]) : 0.0;              \
        if (ftz) { a = ftz64(a); b = ftz64(b); c = ftz64(c); }                                 \
        double r = (expr);                                                                     \
        if (sat) r = sat64(r);                                                                 \
        D[l] = bf64(r);                                                                        \
        (void)c;                                                                               \
    })
            switch (op) {
            case ASH_PTX_OP_ADD: F64OP(a + b); break;
            case ASH_PTX_OP_SUB: F64OP(a - b); break;
            case ASH_PTX_OP_MUL: F64OP(a * b); break;
            case ASH_PTX_OP_FMA: case ASH_PTX_OP_MAD: F64OP(fma(a, b, c)); break;
            case ASH_PTX_OP_DIV: F64OP(a / b); break;
            case ASH_PTX_OP_NEG: F64OP(-a); break;
            case ASH_PTX_OP_ABS: F64OP(fabs(a)); break;
            case ASH_PTX_OP_MIN:
                F64OP((isnan(a) || isnan(b)) ? (((in->flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b))) ? f64(0x7fffffffffffffffull)
                                                : isnan(a) ? b : a)
                      : (a < b || (a == b && signbit(a))) ? a : b);
                break;
            case ASH_PTX_OP_MAX:
                F64OP((isnan(a) || isnan(b)) ? (((in->flags & ASH_PTX_F_NAN) || (isnan(a) && isnan(b))) ? f64(0x7fffffffffffffffull)
                                                : isnan(a) ? b : a)
                      : (a > b || (a == b && !signbit(a))) ? a : b);
                break;
            case ASH_PTX_OP_RCP: F64OP(1.0 / a); break;
            case ASH_PTX_OP_SQRT: F64OP(sqrt(a)); break;
            case ASH_PTX_OP_RSQRT: F64OP(1.0 / sqrt(a)); break;
            case ASH_PTX_OP_EX2: F64OP(exp2(a)); break;
            case ASH_PTX_OP_LG2: F64OP(log2(a)); break;
            case ASH_PTX_OP_COPYSIGN: F64OP(copysign(b, a)); break;
            default:
                if (fm != FE_TONEAREST)
                    fesetround(old);
                return -1;
            }
#undef F64OP
            if (fm != FE_TONEAREST)
                fesetround(old);
            return HC_STEP_NEXT;
        }
        /* integers */
        const int s = tsigned(t);
        const uint32_t fl = in->flags;
        if ((fl & ASH_PTX_F_CC) || op == ASH_PTX_OP_ADDC || op == ASH_PTX_OP_SUBC || op == ASH_PTX_OP_MADC) {
            /* extended precision: the carry flag is per lane (add.cc/addc, sub.cc/subc, mad.cc/madc) */
            int cin = op == ASH_PTX_OP_ADDC || op == ASH_PTX_OP_SUBC || op == ASH_PTX_OP_MADC;
            int cout = (fl & ASH_PTX_F_CC) != 0;
            uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
            LOOP(E, {
                unsigned __int128 c = cin ? W->cc[l] : 0, r;
                uint64_t a = zx(A[l], bits), b = zx(B[l], bits);
                if (op == ASH_PTX_OP_ADD || op == ASH_PTX_OP_ADDC) {
                    r = (unsigned __int128)a + b + c;
                } else if (op == ASH_PTX_OP_SUB || op == ASH_PTX_OP_SUBC) {
                    r = (unsigned __int128)a - b - c;
                } else {
                    unsigned __int128 p = (unsigned __int128)(s ? (unsigned __int128)(__int128)sx(a, bits) * (unsigned __int128)(__int128)sx(b, bits)
                                                                : (unsigned __int128)a * b);
                    uint64_t part = (fl & ASH_PTX_F_HI) ? (uint64_t)(p >> bits) & mask : (uint64_t)p & mask;
                    r = (unsigned __int128)part + zx(Cc ? Cc[l] : 0, bits) + c;
                }
                D[l] = (uint64_t)r & mask;
                if (cout)
                    W->cc[l] = (uint8_t)((r >> bits) & 1);
            });
            return HC_STEP_NEXT;
        }
        switch (op) {
        case ASH_PTX_OP_ADD:
            if (fl & ASH_PTX_F_SAT)
                LOOP(E, { int64_t r = (int64_t)sx(A[l], 32) + sx(B[l], 32);
                          D[l] = zx((uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r), 32); });
            else
                LOOP(E, { D[l] = A[l] + B[l]; });
            break;
        case ASH_PTX_OP_SUB:
            if (fl & ASH_PTX_F_SAT)
                LOOP(E, { int64_t r = (int64_t)sx(A[l], 32) - sx(B[l], 32);
                          D[l] = zx((uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r), 32); });
            else
                LOOP(E, { D[l] = A[l] - B[l]; });
            break;
        case ASH_PTX_OP_MUL:
        case ASH_PTX_OP_MAD:
            if (fl & ASH_PTX_F_WIDE) {
                LOOP(E, { uint64_t r = ext(A[l], t) * ext(B[l], t); D[l] = r + (Cc ? Cc[l] : 0); });
            } else if (fl & ASH_PTX_F_HI) {
                if (bits == 64)
                    LOOP(E, {
                        uint64_t r = s ? (uint64_t)(((__int128)(int64_t)A[l] * (__int128)(int64_t)B[l]) >> 64)
                                       : (uint64_t)(((unsigned __int128)A[l] * B[l]) >> 64);
                        D[l] = r + (Cc ? Cc[l] : 0);
                    });
                else
                    LOOP(E, {
                        uint64_t r = s ? (uint64_t)(((int64_t)ext(A[l], t) * (int64_t)ext(B[l], t)) >> bits)
                                       : (ext(A[l], t) * ext(B[l], t)) >> bits;
                        D[l] = r + (Cc ? Cc[l] : 0);
                    });
            } else {
                if (fl & ASH_PTX_F_SAT)   /* mad.lo.sat.s32? only mad.hi.sat.s32 exists: treat like the PTX ISA */
                    LOOP(E, { int64_t r = (int64_t)sx(A[l], 32) * sx(B[l], 32) + (Cc ? sx(Cc[l], 32) : 0);
                              D[l] = zx((uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r), 32); });
                else
                    LOOP(E, { D[l] = A[l] * B[l] + (Cc ? Cc[l] : 0); });
            }
            break;
        case ASH_PTX_OP_DIV:
            if (s)
                LOOP(E, { int64_t a = sx(A[l], bits), b = sx(B[l], bits);
                          D[l] = b == 0 ? ~0ull : (b == -1 ? (uint64_t)(-(uint64_t)a) : (uint64_t)(a / b)); });
            else
                LOOP(E, { uint64_t a = zx(A[l], bits), b = zx(B[l], bits); D[l] = b ? a / b : ~0ull; });
            break;
        case ASH_PTX_OP_REM:
            if (s)
                LOOP(E, { int64_t a = sx(A[l], bits), b = sx(B[l], bits);
                          D[l] = b == 0 ? (uint64_t)a : b == -1 ? 0 : (uint64_t)(a % b); });
            else
                LOOP(E, { uint64_t a = zx(A[l], bits), b = zx(B[l], bits); D[l] = b ? a % b : a; });
            break;
        case ASH_PTX_OP_MIN:
            if (s) LOOP(E, { int64_t a = sx(A[l], bits), b = sx(B[l], bits); D[l] = (uint64_t)(a < b ? a : b); });
            else LOOP(E, { uint64_t a = zx(A[l], bits), b = zx(B[l], bits); D[l] = a < b ? a : b; });
            break;
        case ASH_PTX_OP_MAX:
            if (s) LOOP(E, { int64_t a = sx(A[l], bits), b = sx(B[l], bits); D[l] = (uint64_t)(a > b ? a : b); });
            else LOOP(E, { uint64_t a = zx(A[l], bits), b = zx(B[l], bits); D[l] = a > b ? a : b; });
            break;
        case ASH_PTX_OP_NEG: LOOP(E, { D[l] = -A[l]; }); break;
        case ASH_PTX_OP_ABS: LOOP(E, { int64_t a = sx(A[l], bits); D[l] = (uint64_t)(a < 0 ? -(uint64_t)a : (uint64_t)a); }); break;
        default: return -1;
        }
        return HC_STEP_NEXT;
    }
other:
    switch (in->op) {
    case ASH_PTX_OP_AND: case ASH_PTX_OP_OR: case ASH_PTX_OP_XOR: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb);
        if (in->op == ASH_PTX_OP_AND) LOOP(E, { D[l] = A[l] & B[l]; });
        else if (in->op == ASH_PTX_OP_OR) LOOP(E, { D[l] = A[l] | B[l]; });
        else LOOP(E, { D[l] = A[l] ^ B[l]; });
        if (t == ASH_PTX_T_PRED)
            LOOP(E, { D[l] &= 1; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_NOT: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        if (t == ASH_PTX_T_PRED) LOOP(E, { D[l] = !(A[l] & 1); });
        else LOOP(E, { D[l] = ~A[l]; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CNOT: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        LOOP(E, { D[l] = zx(A[l], bits) == 0; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SHL: case ASH_PTX_OP_SHR: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb);
        if (in->op == ASH_PTX_OP_SHL)
            LOOP(E, { uint32_t b = (uint32_t)B[l]; D[l] = b >= (uint32_t)bits ? 0 : A[l] << b; });
        else if (tsigned(t))
            LOOP(E, { uint32_t b = (uint32_t)B[l]; D[l] = (uint64_t)(sx(A[l], bits) >> (b >= (uint32_t)bits ? 63 : b)); });
        else
            LOOP(E, { uint32_t b = (uint32_t)B[l]; D[l] = b >= (uint32_t)bits ? 0 : zx(A[l], bits) >> b; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SETP: case ASH_PTX_OP_SET: {
        int pair = (in->flags & ASH_PTX_F_BOOL_NEG) != 0;
        int k = pair ? 2 : 1;
        uint64_t *P = dst(W, in, 0);
        uint64_t *Q = pair ? dst(W, in, 1) : NULL;
        int ct = in->op == ASH_PTX_OP_SET ? (in->type2 ? in->type2 : t) : t;
        const uint64_t *A = src(C, W, in, k, ta), *B = src(C, W, in, k + 1, tb);
        const uint64_t *Cc = in->nops > k + 2 ? src(C, W, in, k + 2, tc) : NULL;
        int ftz = (in->flags & ASH_PTX_F_FTZ) != 0;
        LOOP(E, {
            int r = is_float(ct) ? cmp_f(fval(A[l], ct, ftz), fval(B[l], ct, ftz), in->cmp)
                                 : cmp_i(ext(A[l], ct), ext(B[l], ct), ct, in->cmp);
            int q = !r;
            if (Cc) {
                int c = (int)(Cc[l] & 1);
                switch (in->bop) {
                case ASH_PTX_A_AND: r = r && c; q = q && c; break;
                case ASH_PTX_A_OR: r = r || c; q = q || c; break;
                case ASH_PTX_A_XOR: r = r ^ c; q = q ^ c; break;
                default: break;
                }
            }
            if (in->op == ASH_PTX_OP_SET) {
                uint64_t one = in->type == ASH_PTX_T_F32 ? 0x3f800000u : 0xffffffffu;
                P[l] = r ? one : 0;
            } else {
                P[l] = (uint64_t)r;
                if (Q)
                    Q[l] = (uint64_t)q;
            }
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SELP: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        LOOP(E, { D[l] = (Cc[l] & 1) ? A[l] : B[l]; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SLCT: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int ct = in->type2;
        LOOP(E, {
            int ge = ct == ASH_PTX_T_F32 ? f32(Cc[l]) >= 0.0f : sx(Cc[l], 32) >= 0;
            D[l] = ge ? A[l] : B[l];
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_POPC: case ASH_PTX_OP_CLZ: case ASH_PTX_OP_BREV: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        if (in->op == ASH_PTX_OP_POPC)
            LOOP(E, { D[l] = (uint64_t)__builtin_popcountll(zx(A[l], bits)); });
        else if (in->op == ASH_PTX_OP_CLZ)
            LOOP(E, { uint64_t a = zx(A[l], bits); D[l] = a ? (uint64_t)(__builtin_clzll(a) - (64 - bits)) : (uint64_t)bits; });
        else
            LOOP(E, {
                uint64_t a = zx(A[l], bits), r = 0;
                for (int i = 0; i < bits; i++)
                    r |= ((a >> i) & 1) << (bits - 1 - i);
                D[l] = r;
            });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_BFE: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int s = tsigned(t);
        LOOP(E, {   /* the PTX ISA's definition, bit by bit */
            uint32_t pos = (uint32_t)B[l] & 0xff, len = (uint32_t)Cc[l] & 0xff, msb = (uint32_t)bits - 1;
            uint64_t a = zx(A[l], bits), r = 0;
            uint32_t top = pos + len - 1 < msb ? pos + len - 1 : msb;
            uint64_t sbit = (!s || len == 0) ? 0 : (a >> top) & 1;
            for (uint32_t i = 0; i <= msb; i++) {
                uint64_t bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
                r |= bit << i;
            }
            D[l] = r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_BFI: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc),
                       *Dd = src(C, W, in, 4, td);
        LOOP(E, {
            uint32_t pos = (uint32_t)Cc[l] & 0xff, len = (uint32_t)Dd[l] & 0xff;
            uint64_t b = zx(B[l], bits);
            if (len && pos < (uint32_t)bits) {
                uint64_t mask = (len >= 64 ? ~0ull : (1ull << len) - 1) << pos;
                b = (b & ~mask) | ((A[l] << pos) & mask);
            }
            D[l] = zx(b, bits);
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_PRMT: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int mode = in->sub;
        LOOP(E, {
            uint64_t x = (zx(B[l], 32) << 32) | zx(A[l], 32);
            uint32_t c = (uint32_t)Cc[l], r = 0;
            for (int i = 0; i < 4; i++) {
                uint32_t sel, byte;
                if (!mode) {
                    sel = (c >> (4 * i)) & 0xf;
                    byte = (uint32_t)(x >> (8 * (sel & 7))) & 0xff;
                    if (sel & 8)
                        byte = (byte & 0x80) ? 0xff : 0;
                } else {
                    static const uint8_t tab[6][4][4] = {
                        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},   /* f4e */
                        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},   /* b4e */
                        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},   /* rc8 */
                        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},   /* ecl */
                        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},   /* ecr */
                        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},   /* rc16 */
                    };
                    sel = tab[mode - ASH_PTX_P_F4E][c & 3][i];
                    byte = (uint32_t)(x >> (8 * sel)) & 0xff;
                }
                r |= byte << (8 * i);
            }
            D[l] = r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SHF: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int left = in->sub == ASH_PTX_SHF_L, clamp = (in->flags & ASH_PTX_F_CLAMP) != 0;
        LOOP(E, {
            uint32_t n = (uint32_t)Cc[l];
            n = clamp ? (n > 32 ? 32 : n) : (n & 31);
            uint64_t x = (zx(B[l], 32) << 32) | zx(A[l], 32);
            D[l] = left ? (uint32_t)((x << n) >> 32) : (uint32_t)(x >> n);
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_LOP3: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        const uint64_t *L = src(C, W, in, 4, td);
        LOOP(E, {
            uint32_t lut = (uint32_t)L[l] & 0xff, a = (uint32_t)A[l], b = (uint32_t)B[l], c = (uint32_t)Cc[l], r = 0;
            for (int i = 0; i < 8; i++)
                if (lut >> i & 1)
                    r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
            D[l] = r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_BFIND: {   /* the most significant non-sign bit; .shiftamt: the left shift to it */
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        int s = tsigned(t), amt = (in->flags & ASH_PTX_F_SHIFTAMT) != 0;
        LOOP(E, {
            uint64_t a = zx(A[l], bits);
            if (s && (a >> (bits - 1) & 1))
                a = zx(~a, bits);
            uint32_t r = 0xffffffffu;
            if (a) {
                uint32_t pos = (uint32_t)(63 - __builtin_clzll(a));
                r = amt ? (uint32_t)bits - 1 - pos : pos;
            }
            D[l] = r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_DP4A: case ASH_PTX_OP_DP2A: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int sa = tsigned(t), sb = tsigned(in->type2 ? in->type2 : t), hi = (in->flags & ASH_PTX_F_HI) != 0;
        int dp4 = in->op == ASH_PTX_OP_DP4A;
        LOOP(E, {
            uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l];
            int64_t acc = (sa || sb) ? (int64_t)(int32_t)(uint32_t)Cc[l] : (int64_t)(uint32_t)Cc[l];
            for (int i = 0; i < (dp4 ? 4 : 2); i++) {
                int64_t x = dp4 ? (sa ? (int64_t)(int8_t)(a >> (8 * i)) : (int64_t)((a >> (8 * i)) & 0xff))
                                : (sa ? (int64_t)(int16_t)(a >> (16 * i)) : (int64_t)((a >> (16 * i)) & 0xffff));
                int bi = dp4 ? i : (hi ? 2 : 0) + i;
                int64_t y = sb ? (int64_t)(int8_t)(b >> (8 * bi)) : (int64_t)((b >> (8 * bi)) & 0xff);
                acc += x * y;
            }
            D[l] = (uint32_t)acc;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SAD: {   /* c + |a - b| */
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb), *Cc = src(C, W, in, 3, tc);
        int s = tsigned(t);
        LOOP(E, {
            uint64_t d;
            if (s) {
                int64_t a = sx(A[l], bits), b = sx(B[l], bits);
                d = a < b ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
            } else {
                uint64_t a = zx(A[l], bits), b = zx(B[l], bits);
                d = a < b ? b - a : a - b;
            }
            D[l] = zx(Cc[l] + d, bits);
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_MUL24: case ASH_PTX_OP_MAD24: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb);
        const uint64_t *Cc = in->op == ASH_PTX_OP_MAD24 ? src(C, W, in, 3, tc) : NULL;
        int s = tsigned(t), hi = (in->flags & ASH_PTX_F_HI) != 0;
        LOOP(E, {
            int64_t a = s ? sx(A[l], 24) : (int64_t)zx(A[l], 24), b = s ? sx(B[l], 24) : (int64_t)zx(B[l], 24);
            uint64_t p = (uint64_t)(a * b);
            D[l] = (hi ? p >> 16 : p) + (Cc ? Cc[l] : 0);
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_TESTP: {
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        LOOP(E, {
            double a = fval(A[l], t, 0);
            int c = fpclassify(t == ASH_PTX_T_F32 ? (double)f32(A[l]) : a), r = 0;
            if (t == ASH_PTX_T_F32)
                c = fpclassify(f32(A[l]));
            switch (in->sub) {
            case ASH_PTX_T_FINITE: r = isfinite(a); break;
            case ASH_PTX_T_INFINITE: r = isinf(a); break;
            case ASH_PTX_T_NUMBER: r = !isnan(a); break;
            case ASH_PTX_T_NOTANUMBER: r = isnan(a); break;
            case ASH_PTX_T_NORMAL: r = c == FP_NORMAL; break;
            case ASH_PTX_T_SUBNORMAL: r = c == FP_SUBNORMAL; break;
            default: break;
            }
            D[l] = (uint64_t)r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_BRA:
        set_pcs(W, M, E, (uint32_t)in->o[0].imm, pc + 1);
        return HC_STEP_DONE;
    case ASH_PTX_OP_RET:
    case ASH_PTX_OP_EXIT: {
        uint32_t inner = 0;   /* lanes returning from a .func */
        if (in->op == ASH_PTX_OP_RET)
            LOOP(E, { if (W->depth[l]) inner |= 1u << l; });
        if (inner) {
            if (hc_exec_return(C, W, in, inner) < 0)
                return -1;
            E &= ~inner;
            M &= ~inner;
            if (!M)
                return HC_STEP_DONE;
        }
        W->live &= ~E;
        C->live_threads -= (unsigned)__builtin_popcount(E);
        if (M & ~E)
            set_pcs(W, M & ~E, 0, 0, pc + 1);
        return HC_STEP_DONE;
    }
    case ASH_PTX_OP_BAR:
    case ASH_PTX_OP_BARRIER: {
        if (in->sub == ASH_PTX_B_WARP) {   /* bar.warp.sync mask */
            const uint64_t *A = src(C, W, in, 0, ta);
            if (!warp_sync_ready(W, M, (uint32_t)A[first_lane(M)]))
                return HC_STEP_DONE;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            return HC_STEP_NEXT;
        }
        int red = in->sub == ASH_PTX_B_RED_POPC || in->sub == ASH_PTX_B_RED_AND || in->sub == ASH_PTX_B_RED_OR;
        int k = red ? 1 : 0;
        const uint64_t *Id = src(C, W, in, k, ta);
        const uint64_t *Cnt = in->nops > k + 1 + red ? src(C, W, in, k + 1, tb) : NULL;
        const uint64_t *Pr = red ? src(C, W, in, in->nops - 1, tc) : NULL;
        hc_exec_deuniform(W);
        if (E) {
            unsigned fl = first_lane(E);
            unsigned id = (unsigned)Id[fl] & (HC_NBAR - 1);
            C->bar_count[id] += (unsigned)__builtin_popcount(E);
            C->bar_arr[id][W->id] |= E;
            if (Cnt)
                C->bar_expect[id] = (unsigned)Cnt[fl];
            if (red)
                LOOP(E, {
                    unsigned p = (unsigned)(Pr[l] & 1);
                    C->bar_red[id] += in->sub == ASH_PTX_B_RED_POPC ? p : (p ? 1 : 0);
                    if (!p) C->bar_red_and[id] = 0;
                });
            if (in->sub != ASH_PTX_B_ARRIVE) {
                W->blocked |= E;
                LOOP(E, { W->bar_id[l] = (uint8_t)id; });
            }
        }
        for (int l = 0; l < 32; l++)
            if (M >> l & 1)
                W->pc[l] = pc + 1;
        return HC_STEP_YIELD;
    }
    case ASH_PTX_OP_MEMBAR:
    case ASH_PTX_OP_FENCE:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return HC_STEP_NEXT;
    case ASH_PTX_OP_ATOM:
    case ASH_PTX_OP_RED: {
        int isred = in->op == ASH_PTX_OP_RED;
        int k = isred ? 0 : 1;
        const ash_ptx_opnd *a = &in->o[k];
        const ash_ptx_module *m = hc_exec_launch_of(C)->m;
        int space = in->space ? in->space : ASH_PTX_S_GENERIC;
        uint64_t base_sym = a->sym >= 0 ? sym_value(C, m, &(ash_ptx_opnd){.sym = a->sym}) : 0;
        int pl = a->sym >= 0 && sym_per_lane(m, a->sym);
        const uint64_t *Rb = a->reg >= 0 ? W->R + (size_t)a->reg * 32 : NULL;
        const uint64_t *B = src(C, W, in, k + 1, tb);
        const uint64_t *Cc = in->nops > k + 2 ? src(C, W, in, k + 2, tc) : NULL;
        uint64_t *D = isred ? NULL : dst(W, in, 0);
        int esz = ash_ptx_type_size(t);
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            uint64_t addr = (Rb ? Rb[l] : base_sym + (pl ? W->lbase[l] : 0)) + (uint64_t)a->imm;
            void *p = hc_exec_addr(C, W, l, in, space, addr, (unsigned)esz, HC_ACC_ATOM);
            if (!p)
                return -1;
            int ok = 1;
            uint64_t old = atom_one(p, in->sub, t, B[l], Cc ? Cc[l] : 0, &ok);
            if (!ok)
                return -1;
            if (D)
                D[l] = tsigned(t) ? (uint64_t)sx(old, esz * 8) : old;
        }
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_SHFL: {
        int pair = (in->flags & ASH_PTX_F_BOOL_NEG) != 0;
        int k = pair ? 2 : 1;
        const uint64_t *A = src(C, W, in, k, ta), *B = src(C, W, in, k + 1, tb), *Cc = src(C, W, in, k + 2, tc);
        const uint64_t *Mm = in->nops > k + 3 ? src(C, W, in, k + 3, td) : NULL;
        if (Mm && !warp_sync_ready(W, M, (uint32_t)Mm[first_lane(M)]))
            return HC_STEP_DONE;
        uint64_t *D = dst(W, in, 0);
        uint64_t *P = pair ? dst(W, in, 1) : NULL;
        uint64_t val[32], pv[32];
        memcpy(val, A, sizeof val);
        LOOP(E, {
            uint32_t bval = (uint32_t)B[l] & 31, cval = (uint32_t)Cc[l] & 31, seg = ((uint32_t)Cc[l] >> 8) & 31;
            uint32_t lane = (uint32_t)l;
            uint32_t maxl = (lane & seg) | (cval & ~seg), minl = lane & seg;
            int32_t j;
            int ok;
            switch (in->sub) {
            case ASH_PTX_SH_UP: j = (int32_t)lane - (int32_t)bval; ok = j >= (int32_t)maxl; break;
            case ASH_PTX_SH_DOWN: j = (int32_t)(lane + bval); ok = j <= (int32_t)maxl; break;
            case ASH_PTX_SH_BFLY: j = (int32_t)(lane ^ bval); ok = j <= (int32_t)maxl; break;
            default: j = (int32_t)(minl | (bval & ~seg)); ok = j <= (int32_t)maxl; break;
            }
            if (!ok)
                j = (int32_t)lane;
            td[l] = zx(val[j & 31], 32);
            pv[l] = (uint64_t)ok;
        });
        LOOP(E, { D[l] = td[l]; if (P) P[l] = pv[l]; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_VOTE: {
        int k = 1;
        const uint64_t *A = src(C, W, in, k, ta);
        const uint64_t *Mm = in->nops > 2 ? src(C, W, in, 2, tb) : NULL;
        if (Mm && !warp_sync_ready(W, M, (uint32_t)Mm[first_lane(M)]))
            return HC_STEP_DONE;
        uint64_t *D = dst(W, in, 0);
        uint32_t ballot = 0;
        LOOP(E, { ballot |= (uint32_t)(A[l] & 1) << l; });
        uint64_t r;
        switch (in->sub) {
        case ASH_PTX_V_ALL: r = ballot == E; break;
        case ASH_PTX_V_ANY: r = ballot != 0; break;
        case ASH_PTX_V_UNI: r = ballot == 0 || ballot == E; break;
        default: r = ballot; break;
        }
        LOOP(E, { D[l] = r; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_ACTIVEMASK: {
        uint64_t *D = dst(W, in, 0);
        LOOP(E, { D[l] = E; });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_MATCH: {
        int pair = (in->flags & ASH_PTX_F_BOOL_NEG) != 0;
        int k = pair ? 2 : 1;
        const uint64_t *A = src(C, W, in, k, ta);
        const uint64_t *Mm = src(C, W, in, k + 1, tb);
        uint32_t mm = (uint32_t)Mm[first_lane(M)];
        if (!warp_sync_ready(W, M, mm))
            return HC_STEP_DONE;
        uint64_t *D = dst(W, in, 0);
        uint64_t *P = pair ? dst(W, in, 1) : NULL;
        uint32_t act = E & mm;
        LOOP(E, {
            uint32_t same = 0;
            for (int j = 0; j < 32; j++)
                if (act >> j & 1 && zx(A[j], bits) == zx(A[l], bits))
                    same |= 1u << j;
            if (in->sub == ASH_PTX_M_ANY) {
                D[l] = same;
            } else {
                D[l] = same == act ? act : 0;
                if (P)
                    P[l] = same == act;
            }
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CREDUX: {
        const uint64_t *A = src(C, W, in, 1, ta);
        const uint64_t *Mm = src(C, W, in, 2, tb);
        if (!warp_sync_ready(W, M, (uint32_t)Mm[first_lane(M)]))
            return HC_STEP_DONE;
        uint64_t *D = dst(W, in, 0);
        int s = tsigned(t);
        uint64_t r = in->sub == ASH_PTX_A_AND ? ~0ull : in->sub == ASH_PTX_A_MIN ? (s ? (uint64_t)INT32_MAX : UINT32_MAX)
                   : in->sub == ASH_PTX_A_MAX ? (s ? (uint64_t)(int64_t)INT32_MIN : 0) : 0;
        int first = 1;
        LOOP(E, {
            uint64_t a = ext(A[l], t);
            switch (in->sub) {
            case ASH_PTX_A_ADD: r += a; break;
            case ASH_PTX_A_AND: r &= a; break;
            case ASH_PTX_A_OR: r |= a; break;
            case ASH_PTX_A_XOR: r ^= a; break;
            case ASH_PTX_A_MIN: r = first ? a : s ? ((int64_t)a < (int64_t)r ? a : r) : (a < r ? a : r); break;
            case ASH_PTX_A_MAX: r = first ? a : s ? ((int64_t)a > (int64_t)r ? a : r) : (a > r ? a : r); break;
            default: break;
            }
            first = 0;
        });
        LOOP(E, { D[l] = zx(r, 32); });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CALL:
        return hc_exec_call(C, W, in, pc, M, E);
    case ASH_PTX_OP_TRAP:
        if (E) {
            hc_exec_trap(C, W, in, (int)first_lane(E));
            return -1;
        }
        return HC_STEP_NEXT;
    case ASH_PTX_OP_NANOSLEEP:
        return E ? HC_STEP_NEXT : HC_STEP_NEXT;
    case ASH_PTX_OP_PREFETCH: case ASH_PTX_OP_PREFETCHU: case ASH_PTX_OP_DISCARD: case ASH_PTX_OP_APPLYPRIORITY:
        return HC_STEP_NEXT;
    default:
        return -1;
    }
}
