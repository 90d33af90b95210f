/* isa_kernels.cu — one kernel per PTX instruction form under test (tests/ptx/test_ptx_isa.c).
 *
 * Each kernel is `NAME(a, b, c, d, out, n)`: element i reads up to four operands from 64-bit slots
 * (a value of any width sits in the low bits), runs the ONE instruction named in its inline asm and
 * writes the result's bits to out[i]. The instruction is written out in PTX, so the test checks
 * exactly that form against a C reference of the PTX ISA's definition; the loads, stores and
 * conversions nvcc adds around it are ordinary instructions the interpreter must run too.
 * Built with nvcc -ptx -arch=compute_80 (bf16 fma/min/max and min.NaN need sm_80). No host build:
 * these kernels exist only as PTX, so hostcuda can run them only through its interpreter.
 */
typedef unsigned long long u64;

#define KSIG(name) extern "C" __global__ void name(const u64 *a, const u64 *b, const u64 *c, \
                                                   const u64 *d, u64 *o, int n)
#define IDX                                         \
    int i = blockIdx.x * blockDim.x + threadIdx.x; \
    if (i >= n)                                     \
        return;

#define CT_U16 unsigned short
#define CT_U32 unsigned int
#define CT_U64 unsigned long long
#define CT_F32 float
#define CT_F64 double
#define CN_U16 "h"
#define CN_U32 "r"
#define CN_U64 "l"
#define CN_F32 "f"
#define CN_F64 "d"
#define LD_U16(x) ((unsigned short)(x))
#define LD_U32(x) ((unsigned int)(x))
#define LD_U64(x) (x)
#define LD_F32(x) __uint_as_float((unsigned int)(x))
#define LD_F64(x) __longlong_as_double((long long)(x))
#define ST_U16(v) ((u64)(v))
#define ST_U32(v) ((u64)(v))
#define ST_U64(v) ((u64)(v))
#define ST_F32(v) ((u64)__float_as_uint(v))
#define ST_F64(v) ((u64)__double_as_longlong(v))

/* K1..K4: OT = result type, IT = operand type; TAIL: text after the operands (an immediate) */
#define K1(name, OT, IT, insn)                                             \
    KSIG(name)                                                             \
    {                                                                      \
        IDX CT_##OT r;                                                     \
        asm volatile(insn " %0, %1;" : "=" CN_##OT(r) : CN_##IT(LD_##IT(a[i]))); \
        o[i] = ST_##OT(r);                                                 \
    }
#define K2(name, OT, IT, insn)                                                                  \
    KSIG(name)                                                                                  \
    {                                                                                           \
        IDX CT_##OT r;                                                                          \
        asm volatile(insn " %0, %1, %2;" : "=" CN_##OT(r) : CN_##IT(LD_##IT(a[i])), CN_##IT(LD_##IT(b[i]))); \
        o[i] = ST_##OT(r);                                                                      \
    }
#define K3(name, OT, IT, insn, TAIL)                                                            \
    KSIG(name)                                                                                  \
    {                                                                                           \
        IDX CT_##OT r;                                                                          \
        asm volatile(insn " %0, %1, %2, %3" TAIL ";"                                            \
                     : "=" CN_##OT(r)                                                           \
                     : CN_##IT(LD_##IT(a[i])), CN_##IT(LD_##IT(b[i])), CN_##IT(LD_##IT(c[i]))); \
        o[i] = ST_##OT(r);                                                                      \
    }
/* three operands of different types (mad.wide: a, b narrow, c wide; slct: c is the selector) */
#define K3M(name, OT, T1, T2, T3, insn)                                                         \
    KSIG(name)                                                                                  \
    {                                                                                           \
        IDX CT_##OT r;                                                                          \
        asm volatile(insn " %0, %1, %2, %3;"                                                    \
                     : "=" CN_##OT(r)                                                           \
                     : CN_##T1(LD_##T1(a[i])), CN_##T2(LD_##T2(b[i])), CN_##T3(LD_##T3(c[i]))); \
        o[i] = ST_##OT(r);                                                                      \
    }
#define K4(name, OT, IT, insn)                                                                  \
    KSIG(name)                                                                                  \
    {                                                                                           \
        IDX CT_##OT r;                                                                          \
        asm volatile(insn " %0, %1, %2, %3, %4;"                                                \
                     : "=" CN_##OT(r)                                                           \
                     : CN_##IT(LD_##IT(a[i])), CN_##IT(LD_##IT(b[i])), CN_##IT(LD_##IT(c[i])),  \
                       CN_##IT(LD_##IT(d[i])));                                                 \
        o[i] = ST_##OT(r);                                                                      \
    }
/* a comparison: setp into a predicate, selp turns it into 1 / 0 */
#define KSETP(name, IT, insn)                                                                   \
    KSIG(name)                                                                                  \
    {                                                                                           \
        IDX CT_U32 r;                                                                           \
        asm volatile("{ .reg .pred %%p0; " insn " %%p0, %1, %2; selp.u32 %0, 1, 0, %%p0; }"     \
                     : "=r"(r) : CN_##IT(LD_##IT(a[i])), CN_##IT(LD_##IT(b[i])));               \
        o[i] = r;                                                                               \
    }
/* a predicate register named without '%' (a plain identifier is a legal PTX register name) */
KSIG(k_pred_plain_name)
{
    IDX unsigned r;
    asm volatile("{ .reg .pred p; setp.lt.s32 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r)
                 : "r"((unsigned)a[i]), "r"((unsigned)b[i]));
    o[i] = r;
}

/* a result with a carry: add.cc then addc (out = sum | carry << 32) */
KSIG(k_addc_u32)
{
    IDX unsigned lo, hi;
    asm volatile("add.cc.u32 %0, %2, %3; addc.u32 %1, 0, 0;" : "=r"(lo), "=r"(hi)
                 : "r"((unsigned)a[i]), "r"((unsigned)b[i]));
    o[i] = (u64)lo | (u64)hi << 32;
}

/* ---- integer */
K2(k_add_s32, U32, U32, "add.s32")
K2(k_sub_s32, U32, U32, "sub.s32")
K2(k_add_sat_s32, U32, U32, "add.sat.s32")
K2(k_sub_sat_s32, U32, U32, "sub.sat.s32")
K2(k_add_u64, U64, U64, "add.u64")
K2(k_sub_s64, U64, U64, "sub.s64")
K2(k_mul_lo_u32, U32, U32, "mul.lo.u32")
K2(k_mul_hi_u32, U32, U32, "mul.hi.u32")
K2(k_mul_hi_s32, U32, U32, "mul.hi.s32")
K2(k_mul_wide_u32, U64, U32, "mul.wide.u32")
K2(k_mul_wide_s32, U64, U32, "mul.wide.s32")
K2(k_mul_lo_u64, U64, U64, "mul.lo.u64")
K2(k_mul_hi_u64, U64, U64, "mul.hi.u64")
K2(k_mul_hi_s64, U64, U64, "mul.hi.s64")
K2(k_mul24_lo_u32, U32, U32, "mul24.lo.u32")
K3(k_mad_lo_s32, U32, U32, "mad.lo.s32", "")
K3(k_mad_hi_u32, U32, U32, "mad.hi.u32", "")
K3M(k_mad_wide_s32, U64, U32, U32, U64, "mad.wide.s32")
K3M(k_mad_wide_u32, U64, U32, U32, U64, "mad.wide.u32")
K3(k_mad_lo_u64, U64, U64, "mad.lo.u64", "")
K2(k_div_u32, U32, U32, "div.u32")
K2(k_div_s32, U32, U32, "div.s32")
K2(k_rem_u32, U32, U32, "rem.u32")
K2(k_rem_s32, U32, U32, "rem.s32")
K2(k_div_u64, U64, U64, "div.u64")
K2(k_div_s64, U64, U64, "div.s64")
K2(k_rem_s64, U64, U64, "rem.s64")
K2(k_shl_b32, U32, U32, "shl.b32")
K2(k_shr_u32, U32, U32, "shr.u32")
K2(k_shr_s32, U32, U32, "shr.s32")
KSIG(k_shl_b64)   /* 64-bit shifts take a 32-bit shift amount */
{
    IDX u64 r;
    asm volatile("shl.b64 %0, %1, %2;" : "=l"(r) : "l"(a[i]), "r"((unsigned)b[i]));
    o[i] = r;
}
KSIG(k_shr_s64)
{
    IDX u64 r;
    asm volatile("shr.s64 %0, %1, %2;" : "=l"(r) : "l"(a[i]), "r"((unsigned)b[i]));
    o[i] = r;
}
K3(k_bfe_u32, U32, U32, "bfe.u32", "")
K3(k_bfe_s32, U32, U32, "bfe.s32", "")
KSIG(k_bfe_s64)
{
    IDX u64 r;
    asm volatile("bfe.s64 %0, %1, %2, %3;" : "=l"(r) : "l"(a[i]), "r"((unsigned)b[i]), "r"((unsigned)c[i]));
    o[i] = r;
}
K4(k_bfi_b32, U32, U32, "bfi.b32")
K1(k_brev_b32, U32, U32, "brev.b32")
K1(k_brev_b64, U64, U64, "brev.b64")
K1(k_popc_b32, U32, U32, "popc.b32")
K1(k_clz_b32, U32, U32, "clz.b32")
KSIG(k_popc_b64)
{
    IDX unsigned r;
    asm volatile("popc.b64 %0, %1;" : "=r"(r) : "l"(a[i]));
    o[i] = r;
}
KSIG(k_clz_b64)
{
    IDX unsigned r;
    asm volatile("clz.b64 %0, %1;" : "=r"(r) : "l"(a[i]));
    o[i] = r;
}
K3(k_prmt_b32, U32, U32, "prmt.b32", "")
K3(k_shf_l_wrap_b32, U32, U32, "shf.l.wrap.b32", "")
K3(k_shf_r_wrap_b32, U32, U32, "shf.r.wrap.b32", "")
K3(k_shf_l_clamp_b32, U32, U32, "shf.l.clamp.b32", "")
K3(k_shf_r_clamp_b32, U32, U32, "shf.r.clamp.b32", "")
K3(k_lop3_96, U32, U32, "lop3.b32", ", 0x96")
K3(k_lop3_e8, U32, U32, "lop3.b32", ", 0xe8")
K3(k_lop3_f8, U32, U32, "lop3.b32", ", 0xf8")
K3(k_lop3_01, U32, U32, "lop3.b32", ", 0x01")
K2(k_and_b32, U32, U32, "and.b32")
K2(k_or_b64, U64, U64, "or.b64")
K2(k_xor_b32, U32, U32, "xor.b32")
K1(k_not_b32, U32, U32, "not.b32")
K2(k_min_s32, U32, U32, "min.s32")
K2(k_max_s32, U32, U32, "max.s32")
K2(k_min_u32, U32, U32, "min.u32")
K2(k_max_u64, U64, U64, "max.u64")
K2(k_min_s64, U64, U64, "min.s64")
K1(k_abs_s32, U32, U32, "abs.s32")
K1(k_neg_s32, U32, U32, "neg.s32")
K1(k_abs_s64, U64, U64, "abs.s64")

/* ---- f32 */
K2(k_add_rn_f32, F32, F32, "add.rn.f32")
K2(k_add_rz_f32, F32, F32, "add.rz.f32")
K2(k_add_rm_f32, F32, F32, "add.rm.f32")
K2(k_add_rp_f32, F32, F32, "add.rp.f32")
K2(k_add_ftz_f32, F32, F32, "add.rn.ftz.f32")
K2(k_add_sat_f32, F32, F32, "add.rn.sat.f32")
K2(k_sub_rn_f32, F32, F32, "sub.rn.f32")
K2(k_mul_rn_f32, F32, F32, "mul.rn.f32")
K2(k_mul_rz_f32, F32, F32, "mul.rz.f32")
K2(k_mul_rm_f32, F32, F32, "mul.rm.f32")
K2(k_mul_rp_f32, F32, F32, "mul.rp.f32")
K2(k_mul_ftz_f32, F32, F32, "mul.rn.ftz.f32")
K3(k_fma_rn_f32, F32, F32, "fma.rn.f32", "")
K3(k_fma_rz_f32, F32, F32, "fma.rz.f32", "")
K3(k_fma_rm_f32, F32, F32, "fma.rm.f32", "")
K3(k_fma_rp_f32, F32, F32, "fma.rp.f32", "")
K3(k_fma_ftz_sat_f32, F32, F32, "fma.rn.ftz.sat.f32", "")
K2(k_div_rn_f32, F32, F32, "div.rn.f32")
K2(k_div_rz_f32, F32, F32, "div.rz.f32")
K2(k_div_approx_f32, F32, F32, "div.approx.f32")
K2(k_div_full_f32, F32, F32, "div.full.f32")
K1(k_sqrt_rn_f32, F32, F32, "sqrt.rn.f32")
K1(k_sqrt_approx_f32, F32, F32, "sqrt.approx.f32")
K1(k_rcp_rn_f32, F32, F32, "rcp.rn.f32")
K1(k_rcp_approx_f32, F32, F32, "rcp.approx.f32")
K1(k_rsqrt_approx_f32, F32, F32, "rsqrt.approx.f32")
K1(k_ex2_approx_f32, F32, F32, "ex2.approx.f32")
K1(k_ex2_approx_ftz_f32, F32, F32, "ex2.approx.ftz.f32")
K1(k_lg2_approx_f32, F32, F32, "lg2.approx.f32")
K1(k_sin_approx_f32, F32, F32, "sin.approx.f32")
K1(k_cos_approx_f32, F32, F32, "cos.approx.f32")
K1(k_tanh_approx_f32, F32, F32, "tanh.approx.f32")
K1(k_abs_f32, F32, F32, "abs.f32")
K1(k_neg_f32, F32, F32, "neg.f32")
K2(k_min_f32, F32, F32, "min.f32")
K2(k_max_f32, F32, F32, "max.f32")
K2(k_min_nan_f32, F32, F32, "min.NaN.f32")
K2(k_max_ftz_f32, F32, F32, "max.ftz.f32")
K2(k_copysign_f32, F32, F32, "copysign.f32")

/* ---- f64 */
K2(k_add_rn_f64, F64, F64, "add.rn.f64")
K2(k_add_rz_f64, F64, F64, "add.rz.f64")
K2(k_add_rm_f64, F64, F64, "add.rm.f64")
K2(k_add_rp_f64, F64, F64, "add.rp.f64")
K2(k_mul_rn_f64, F64, F64, "mul.rn.f64")
K2(k_mul_rz_f64, F64, F64, "mul.rz.f64")
K3(k_fma_rn_f64, F64, F64, "fma.rn.f64", "")
K3(k_fma_rm_f64, F64, F64, "fma.rm.f64", "")
K3(k_fma_rp_f64, F64, F64, "fma.rp.f64", "")
K2(k_div_rn_f64, F64, F64, "div.rn.f64")
K1(k_sqrt_rn_f64, F64, F64, "sqrt.rn.f64")
K1(k_rcp_rn_f64, F64, F64, "rcp.rn.f64")
K2(k_min_f64, F64, F64, "min.f64")
K2(k_max_f64, F64, F64, "max.f64")
K1(k_neg_f64, F64, F64, "neg.f64")

/* ---- f16 / bf16 (scalar in .b16, pairs in .b32) */
K2(k_add_f16, U16, U16, "add.rn.f16")
K2(k_mul_f16, U16, U16, "mul.rn.f16")
K2(k_sub_f16, U16, U16, "sub.rn.f16")
K3(k_fma_f16, U16, U16, "fma.rn.f16", "")
K2(k_add_f16x2, U32, U32, "add.rn.f16x2")
K2(k_mul_f16x2, U32, U32, "mul.rn.f16x2")
K3(k_fma_f16x2, U32, U32, "fma.rn.f16x2", "")
K3(k_fma_bf16, U16, U16, "fma.rn.bf16", "")
K3(k_fma_bf16x2, U32, U32, "fma.rn.bf16x2", "")
K2(k_min_bf16, U16, U16, "min.bf16")
K2(k_max_f16, U16, U16, "max.f16")
K1(k_neg_f16, U16, U16, "neg.f16")

/* ---- conversions */
K1(k_cvt_rni_s32_f32, U32, F32, "cvt.rni.s32.f32")
K1(k_cvt_rzi_s32_f32, U32, F32, "cvt.rzi.s32.f32")
K1(k_cvt_rmi_s32_f32, U32, F32, "cvt.rmi.s32.f32")
K1(k_cvt_rpi_s32_f32, U32, F32, "cvt.rpi.s32.f32")
K1(k_cvt_rzi_u32_f32, U32, F32, "cvt.rzi.u32.f32")
K1(k_cvt_rzi_s64_f64, U64, F64, "cvt.rzi.s64.f64")
K1(k_cvt_rni_u64_f32, U64, F32, "cvt.rni.u64.f32")
K1(k_cvt_rn_f32_s32, F32, U32, "cvt.rn.f32.s32")
K1(k_cvt_rz_f32_u32, F32, U32, "cvt.rz.f32.u32")
K1(k_cvt_rn_f32_u64, F32, U64, "cvt.rn.f32.u64")
K1(k_cvt_rn_f64_s64, F64, U64, "cvt.rn.f64.s64")
K1(k_cvt_f64_f32, F64, F32, "cvt.f64.f32")
K1(k_cvt_rn_f32_f64, F32, F64, "cvt.rn.f32.f64")
K1(k_cvt_rz_f32_f64, F32, F64, "cvt.rz.f32.f64")
K1(k_cvt_rni_f32_f32, F32, F32, "cvt.rni.f32.f32")
K1(k_cvt_rzi_f32_f32, F32, F32, "cvt.rzi.f32.f32")
K1(k_cvt_sat_f32_f32, F32, F32, "cvt.sat.f32.f32")
K1(k_cvt_ftz_f32_f32, F32, F32, "cvt.ftz.f32.f32")
K1(k_cvt_rn_f16_f32, U16, F32, "cvt.rn.f16.f32")
K1(k_cvt_rz_f16_f32, U16, F32, "cvt.rz.f16.f32")
K1(k_cvt_f32_f16, F32, U16, "cvt.f32.f16")
K1(k_cvt_rn_bf16_f32, U16, F32, "cvt.rn.bf16.f32")
K1(k_cvt_f32_bf16, F32, U16, "cvt.f32.bf16")
K2(k_cvt_rn_f16x2_f32, U32, F32, "cvt.rn.f16x2.f32")
K2(k_cvt_rn_bf16x2_f32, U32, F32, "cvt.rn.bf16x2.f32")
K1(k_cvt_sat_s8_s32, U32, U32, "cvt.sat.s8.s32")
K1(k_cvt_s32_s16, U32, U16, "cvt.s32.s16")

/* ---- comparison and selection */
KSETP(k_setp_lt_f32, F32, "setp.lt.f32")
KSETP(k_setp_ltu_f32, F32, "setp.ltu.f32")
KSETP(k_setp_ne_f32, F32, "setp.ne.f32")
KSETP(k_setp_neu_f32, F32, "setp.neu.f32")
KSETP(k_setp_num_f32, F32, "setp.num.f32")
KSETP(k_setp_nan_f32, F32, "setp.nan.f32")
KSETP(k_setp_ge_f64, F64, "setp.ge.f64")
KSETP(k_setp_lt_s32, U32, "setp.lt.s32")
KSETP(k_setp_lo_u32, U32, "setp.lo.u32")
KSETP(k_setp_hs_u64, U64, "setp.hs.u64")
KSETP(k_setp_gt_s64, U64, "setp.gt.s64")
K2(k_set_lt_u32_f32, U32, F32, "set.lt.u32.f32")
K2(k_set_geu_f32_f32, F32, F32, "set.geu.f32.f32")
K3M(k_slct_u32_f32, U32, U32, U32, F32, "slct.u32.f32")
K3M(k_slct_s32_s32, U32, U32, U32, U32, "slct.s32.s32")

/* ---- more integer forms nvcc emits */
KSIG(k_testp_f32)   /* out: bit 0 finite, 1 infinite, 2 number, 3 notanumber, 4 normal, 5 subnormal */
{
    IDX unsigned r;
    asm volatile("{ .reg .pred %%q<6>; .reg .u32 %%t<6>;\n\t"
                 "testp.finite.f32 %%q0, %1; testp.infinite.f32 %%q1, %1; testp.number.f32 %%q2, %1;\n\t"
                 "testp.notanumber.f32 %%q3, %1; testp.normal.f32 %%q4, %1; testp.subnormal.f32 %%q5, %1;\n\t"
                 "selp.u32 %%t0, 1, 0, %%q0; selp.u32 %%t1, 2, 0, %%q1; selp.u32 %%t2, 4, 0, %%q2;\n\t"
                 "selp.u32 %%t3, 8, 0, %%q3; selp.u32 %%t4, 16, 0, %%q4; selp.u32 %%t5, 32, 0, %%q5;\n\t"
                 "or.b32 %%t0, %%t0, %%t1; or.b32 %%t0, %%t0, %%t2; or.b32 %%t0, %%t0, %%t3;\n\t"
                 "or.b32 %%t0, %%t0, %%t4; or.b32 %0, %%t0, %%t5; }"
                 : "=r"(r) : "f"(LD_F32(a[i])));
    o[i] = r;
}
KSIG(k_testp_f64)
{
    IDX unsigned r;
    asm volatile("{ .reg .pred %%q<3>; .reg .u32 %%t<3>;\n\t"
                 "testp.finite.f64 %%q0, %1; testp.normal.f64 %%q1, %1; testp.subnormal.f64 %%q2, %1;\n\t"
                 "selp.u32 %%t0, 1, 0, %%q0; selp.u32 %%t1, 16, 0, %%q1; selp.u32 %%t2, 32, 0, %%q2;\n\t"
                 "or.b32 %%t0, %%t0, %%t1; or.b32 %0, %%t0, %%t2; }"
                 : "=r"(r) : "d"(LD_F64(a[i])));
    o[i] = r;
}
/* predicate logic and setp's combining form: bits of {p, q, and, or, xor, not p, p2, q2, @p mov} */
KSIG(k_pred_logic)
{
    IDX unsigned r;
    asm volatile("{ .reg .pred %%p, %%q, %%r<4>, %%p2, %%q2; .reg .u32 %%t<9>;\n\t"
                 "setp.lt.s32 %%p, %1, %2; setp.lt.s32 %%q, %2, %3;\n\t"
                 "and.pred %%r0, %%p, %%q; or.pred %%r1, %%p, %%q; xor.pred %%r2, %%p, %%q; not.pred %%r3, %%p;\n\t"
                 "setp.gt.and.s32 %%p2|%%q2, %1, %3, %%q;\n\t"
                 "selp.u32 %%t0, 1, 0, %%p; selp.u32 %%t1, 2, 0, %%q; selp.u32 %%t2, 4, 0, %%r0;\n\t"
                 "selp.u32 %%t3, 8, 0, %%r1; selp.u32 %%t4, 16, 0, %%r2; selp.u32 %%t5, 32, 0, %%r3;\n\t"
                 "selp.u32 %%t6, 64, 0, %%p2; selp.u32 %%t7, 128, 0, %%q2;\n\t"
                 "mov.u32 %%t8, 0; @%%p mov.u32 %%t8, 256; @!%%q or.b32 %%t8, %%t8, 512;\n\t"
                 "or.b32 %%t0, %%t0, %%t1; or.b32 %%t0, %%t0, %%t2; or.b32 %%t0, %%t0, %%t3;\n\t"
                 "or.b32 %%t0, %%t0, %%t4; or.b32 %%t0, %%t0, %%t5; or.b32 %%t0, %%t0, %%t6;\n\t"
                 "or.b32 %%t0, %%t0, %%t7; or.b32 %0, %%t0, %%t8; }"
                 : "=r"(r) : "r"((unsigned)a[i]), "r"((unsigned)b[i]), "r"((unsigned)c[i]));
    o[i] = r;
}
KSIG(k_addc_multiline)   /* add.cc / addc as separate statements on separate lines */
{
    IDX unsigned lo, hi;
    asm volatile("add.cc.u32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(lo), "=r"(hi)
                 : "r"((unsigned)a[i]), "r"((unsigned)b[i]));
    o[i] = (u64)lo | (u64)hi << 32;
}
KSIG(k_mov_pack)   /* mov.b64 {lo, hi} -> d, and back: out = swap of the halves */
{
    IDX u64 r;
    asm volatile("{ .reg .u32 %%lo, %%hi;\n\tmov.b64 {%%lo, %%hi}, %1;\n\tmov.b64 %0, {%%hi, %%lo}; }" : "=l"(r) : "l"(a[i]));
    o[i] = r;
}
K1(k_bfind_u32, U32, U32, "bfind.u32")
K2(k_bmsk_clamp_b32, U32, U32, "bmsk.clamp.b32")
K2(k_bmsk_wrap_b32, U32, U32, "bmsk.wrap.b32")
K2(k_szext_clamp_s32, U32, U32, "szext.clamp.s32")
K2(k_szext_wrap_s32, U32, U32, "szext.wrap.s32")
K2(k_szext_clamp_u32, U32, U32, "szext.clamp.u32")
K2(k_szext_wrap_u32, U32, U32, "szext.wrap.u32")
K1(k_bfind_s32, U32, U32, "bfind.s32")
K1(k_bfind_shiftamt_u32, U32, U32, "bfind.shiftamt.u32")
K3(k_dp4a_u32, U32, U32, "dp4a.u32.u32", "")
K3(k_dp4a_s32, U32, U32, "dp4a.s32.s32", "")
K3(k_dp2a_lo_u32, U32, U32, "dp2a.lo.u32.u32", "")
K3(k_dp2a_hi_s32, U32, U32, "dp2a.hi.s32.s32", "")
K3(k_sad_u32, U32, U32, "sad.u32", "")
K3(k_sad_s32, U32, U32, "sad.s32", "")
K1(k_cnot_b32, U32, U32, "cnot.b32")
K3(k_prmt_f4e, U32, U32, "prmt.b32.f4e", "")
K3(k_prmt_rc8, U32, U32, "prmt.b32.rc8", "")
K3(k_prmt_ecl, U32, U32, "prmt.b32.ecl", "")
K3(k_prmt_ecr, U32, U32, "prmt.b32.ecr", "")
K3(k_prmt_rc16, U32, U32, "prmt.b32.rc16", "")
K2(k_add_s16, U16, U16, "add.s16")
K2(k_mul_lo_u16, U16, U16, "mul.lo.u16")
K2(k_max_s16, U16, U16, "max.s16")
KSIG(k_mul_wide_s16)
{
    IDX unsigned r;
    asm volatile("mul.wide.s16 %0, %1, %2;" : "=r"(r) : "h"((unsigned short)a[i]), "h"((unsigned short)b[i]));
    o[i] = r;
}
K2(k_div_full_ftz_f32, F32, F32, "div.full.ftz.f32")
K1(k_abs_ftz_f32, F32, F32, "abs.ftz.f32")
K1(k_neg_ftz_f32, F32, F32, "neg.ftz.f32")
K1(k_cvt_rmi_f32_f32, F32, F32, "cvt.rmi.f32.f32")
K1(k_cvt_rpi_f32_f32, F32, F32, "cvt.rpi.f32.f32")
K1(k_cvt_rn_f64_u32, F64, U32, "cvt.rn.f64.u32")
K1(k_cvt_rzi_s32_f64, U32, F64, "cvt.rzi.s32.f64")
K1(k_cvt_rni_s16_f32, U16, F32, "cvt.rni.s16.f32")
K1(k_cvt_rn_f16_f64, U16, F64, "cvt.rn.f16.f64")
K1(k_cvt_rm_f32_f64, F32, F64, "cvt.rm.f32.f64")
K1(k_cvt_rp_f32_f64, F32, F64, "cvt.rp.f32.f64")
K1(k_cvt_u8_u32, U32, U32, "cvt.u8.u32")
K1(k_cvt_sat_u16_s32, U16, U32, "cvt.sat.u16.s32")
