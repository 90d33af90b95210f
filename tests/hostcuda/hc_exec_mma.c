/* hc_exec_mma.c — the executor's tensor-core instructions: wmma.load / wmma.store / wmma.mma,
 * mma.sync, ldmatrix, stmatrix, and cvt to .tf32 (docs/hostcuda.md "Tensor-core instructions").
 *
 * mma.sync, ldmatrix and stmatrix place each element in the lane and register the PTX ISA gives.
 * wmma's fragment layout is unspecified by the ISA; here slot s of lane l (the s-th element of the
 * lane's fragment registers, low half / low byte first) holds element e = (l * S + s) mod (R * C) of
 * the logical R x C matrix, row e / C, column e % C (S: slots per lane). Only f16 A and B fragments
 * have more slots than elements (copies, as the ISA's 8 registers imply): a load fills every copy,
 * mma reads the first. .row / .col and the stride only say where elements sit in memory.
 * Arithmetic: D[i][j] = C[i][j] + A[i][0] * B[0][j] + A[i][1] * B[1][j] + ... (k ascending), in
 * f32 for f16 / bf16 / tf32 inputs (each product is exact in f32; one rounding per addition, to
 * nearest even), fma per step for f64, exactly in 64 bits for integers (then wrapped to s32, or
 * clamped with .satfinite); an f16 D is rounded once at the end. A GPU's summation order is
 * unspecified, so its last bits may differ. .tf32 operands use their top 19 bits (the low 13
 * mantissa bits are ignored); cvt.rna.tf32.f32 rounds to nearest, ties away from zero.
 * Threading: called by one CTA worker for one warp.
 * Must not: touch memory except through hc_exec_addr (which checks every access) or span() (a
 * whole row inside the shared window or the warp's last allocation, the test fast_addr in
 * hc_exec_ops.c makes).
 */
#include "hc_exec_mma.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hc_exec_int.h"
#include "hc_exec_num.h"

static const struct {
    uint8_t m, n, k;
} shp[ASH_PTX_MMA_NSHAPES] = {
    [ASH_PTX_MMA_M16N16K16] = {16, 16, 16}, [ASH_PTX_MMA_M32N8K16] = {32, 8, 16},
    [ASH_PTX_MMA_M8N32K16] = {8, 32, 16},   [ASH_PTX_MMA_M16N16K8] = {16, 16, 8},
    [ASH_PTX_MMA_M8N8K4] = {8, 8, 4},       [ASH_PTX_MMA_M16N8K4] = {16, 8, 4},
    [ASH_PTX_MMA_M16N8K8] = {16, 8, 8},     [ASH_PTX_MMA_M16N8K16] = {16, 8, 16},
    [ASH_PTX_MMA_M16N8K32] = {16, 8, 32},   [ASH_PTX_MMA_M8N8K16] = {8, 8, 16},
    [ASH_PTX_MMA_M8N8] = {8, 8, 0},
};

/* elements per 32/64-bit register, bytes per element */
static int per_reg(int t)
{
    return t == ASH_PTX_T_F16 || t == ASH_PTX_T_BF16 ? 2 : t == ASH_PTX_T_S8 || t == ASH_PTX_T_U8 ? 4 : 1;
}
static int esize(int t)
{
    return t == ASH_PTX_T_F64 ? 8 : 4 / per_reg(t);
}
static int is_int(int t)
{
    return t == ASH_PTX_T_S8 || t == ASH_PTX_T_U8 || t == ASH_PTX_T_S32;
}

/* rows and columns of fragment f (ASH_PTX_MMA_A..D) of a shape */
static void frag_dims(int shape, int f, int *rows, int *cols)
{
    int m = shp[shape].m, n = shp[shape].n, k = shp[shape].k;
    *rows = f == ASH_PTX_MMA_B ? k : m;
    *cols = f == ASH_PTX_MMA_A ? k : n;
}

/* registers of a wmma fragment (the PTX ISA's counts) */
static int wmma_regs(int shape, int f, int t)
{
    int r, c;
    frag_dims(shape, f, &r, &c);
    if (t == ASH_PTX_T_F16 && (f == ASH_PTX_MMA_A || f == ASH_PTX_MMA_B))
        return 8;
    return r * c / 32 / per_reg(t);
}

/* registers of an mma.sync operand: each lane holds exactly rows * cols / 32 elements */
static int mma_regs(int shape, int f, int t)
{
    int r, c;
    frag_dims(shape, f, &r, &c);
    return r * c / 32 / per_reg(t);
}

static int wmma_types_ok(int shape, int f, int t)
{
    int ab = f == ASH_PTX_MMA_A || f == ASH_PTX_MMA_B;
    switch (shape) {
    case ASH_PTX_MMA_M16N16K16: case ASH_PTX_MMA_M32N8K16: case ASH_PTX_MMA_M8N32K16:
        return ab ? t == ASH_PTX_T_F16 || t == ASH_PTX_T_BF16 || t == ASH_PTX_T_S8 || t == ASH_PTX_T_U8
                  : t == ASH_PTX_T_F16 || t == ASH_PTX_T_F32 || t == ASH_PTX_T_S32;
    case ASH_PTX_MMA_M16N16K8: return ab ? t == ASH_PTX_T_TF32 : t == ASH_PTX_T_F32;
    case ASH_PTX_MMA_M8N8K4: return t == ASH_PTX_T_F64;
    default: return 0;
    }
}

/* D, A, B, C types of an mma (wmma.mma or mma.sync) make one of the ISA's combinations */
static int mma_combo_ok(const ash_ptx_insn *in, int sync)
{
    int d = in->type, a = in->type2, b = in->type3, c = in->type4, sh = in->shape;
    int f16 = a == ASH_PTX_T_F16 && b == a && (c == ASH_PTX_T_F16 || c == ASH_PTX_T_F32) &&
              (d == ASH_PTX_T_F16 || d == ASH_PTX_T_F32);
    int bf16 = a == ASH_PTX_T_BF16 && b == a && c == ASH_PTX_T_F32 && d == ASH_PTX_T_F32;
    int tf32 = a == ASH_PTX_T_TF32 && b == a && c == ASH_PTX_T_F32 && d == ASH_PTX_T_F32;
    int i8 = (a == ASH_PTX_T_S8 || a == ASH_PTX_T_U8) && (b == ASH_PTX_T_S8 || b == ASH_PTX_T_U8) &&
             c == ASH_PTX_T_S32 && d == ASH_PTX_T_S32;
    int f64 = a == ASH_PTX_T_F64 && b == a && c == a && d == a;
    if (!sync) {
        if (sh == ASH_PTX_MMA_M16N16K8)
            return tf32;
        if (sh == ASH_PTX_MMA_M8N8K4)
            return f64;
        return (sh == ASH_PTX_MMA_M16N16K16 || sh == ASH_PTX_MMA_M32N8K16 || sh == ASH_PTX_MMA_M8N32K16) &&
               (f16 || bf16 || i8);
    }
    switch (sh) {
    case ASH_PTX_MMA_M16N8K8: return f16 || bf16 || tf32;
    case ASH_PTX_MMA_M16N8K16: return f16 || bf16 || i8;
    case ASH_PTX_MMA_M16N8K4: return tf32;
    case ASH_PTX_MMA_M8N8K4: return f64;
    case ASH_PTX_MMA_M16N8K32: case ASH_PTX_MMA_M8N8K16: return i8;
    default: return 0;
    }
}

/* the registers of a vector (or single register) operand */
static int opnd_regs(const ash_ptx_module *m, const ash_ptx_opnd *o, const int32_t **r)
{
    if (o->kind == ASH_PTX_K_REG) {
        *r = &o->reg;
        return 1;
    }
    *r = o->n > 4 ? m->vregs + o->imm : o->vec;
    return o->n;
}

static int regs_ok(const ash_ptx_module *m, const ash_ptx_opnd *o, int want)
{
    if (o->kind != ASH_PTX_K_REG && o->kind != ASH_PTX_K_VEC)
        return 0;
    const int32_t *r;
    int n = opnd_regs(m, o, &r);
    if (n != want)
        return 0;
    for (int i = 0; i < n; i++)
        if (r[i] < 0)
            return 0;
    return 1;
}

int hc_mma_check(const ash_ptx_module *m, const ash_ptx_insn *in, const char **why)
{
    int f = in->mma & ASH_PTX_MMA_FRAG, nlay = (in->mma & ASH_PTX_MMA_NLAY) >> 6;
    *why = "tensor-core instruction variant not supported";
    if (in->op == ASH_PTX_OP_CVT) {   /* cvt.rna / .rn / .rz .tf32.f32 */
        if (in->type2 != ASH_PTX_T_F32 || (in->flags & (ASH_PTX_F_SATFINITE | ASH_PTX_F_RELU | ASH_PTX_F_PACK)) ||
            (in->rnd != ASH_PTX_R_RNA && in->rnd != ASH_PTX_R_RN && in->rnd != ASH_PTX_R_RZ) || in->nops != 2 ||
            in->o[0].kind != ASH_PTX_K_REG || (in->o[1].kind != ASH_PTX_K_REG && in->o[1].kind != ASH_PTX_K_IMM)) {
            *why = "cvt variant not supported";
            return 0;
        }
        return 1;
    }
    if (in->rnd && in->rnd != ASH_PTX_R_RN)   /* f64 wmma.mma .rz/.rm/.rp: not here */
        return 0;
    if (in->op == ASH_PTX_OP_LDMATRIX || in->op == ASH_PTX_OP_STMATRIX) {
        int ld = in->op == ASH_PTX_OP_LDMATRIX;
        const ash_ptx_opnd *mem = &in->o[ld ? 1 : 0], *v = &in->o[ld ? 0 : 1];
        return in->shape == ASH_PTX_MMA_M8N8 && in->type == ASH_PTX_T_B16 && !in->type2 && in->nops == 2 &&
               (in->space == ASH_PTX_S_SHARED || in->space == ASH_PTX_S_NONE || in->space == ASH_PTX_S_GENERIC) &&
               mem->kind == ASH_PTX_K_MEM && regs_ok(m, v, in->vec) && !nlay;
    }
    if (in->op == ASH_PTX_OP_WMMA) {
        if (!in->shape || in->shape == ASH_PTX_MMA_M8N8 || !f)
            return 0;
        if (f == ASH_PTX_MMA_OP) {
            if (nlay != 2 || !mma_combo_ok(in, 0) || in->nops != 4)
                return 0;
            if ((in->flags & ASH_PTX_F_SATFINITE) && !is_int(in->type))
                return 0;
            return regs_ok(m, &in->o[0], wmma_regs(in->shape, ASH_PTX_MMA_D, in->type)) &&
                   regs_ok(m, &in->o[1], wmma_regs(in->shape, ASH_PTX_MMA_A, in->type2)) &&
                   regs_ok(m, &in->o[2], wmma_regs(in->shape, ASH_PTX_MMA_B, in->type3)) &&
                   regs_ok(m, &in->o[3], wmma_regs(in->shape, ASH_PTX_MMA_C, in->type4));
        }
        int st = f == ASH_PTX_MMA_D;
        const ash_ptx_opnd *mem = &in->o[st ? 0 : 1], *v = &in->o[st ? 1 : 0];
        if (nlay != 1 || in->type2 || !wmma_types_ok(in->shape, f, in->type) || in->nops < 2 || in->nops > 3 ||
            mem->kind != ASH_PTX_K_MEM || (in->nops == 3 && in->o[2].kind != ASH_PTX_K_REG && in->o[2].kind != ASH_PTX_K_IMM))
            return 0;
        if (in->space != ASH_PTX_S_NONE && in->space != ASH_PTX_S_GLOBAL && in->space != ASH_PTX_S_SHARED &&
            in->space != ASH_PTX_S_GENERIC)
            return 0;
        return regs_ok(m, v, wmma_regs(in->shape, f, in->type));
    }
    /* mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype */
    if (!(in->flags & ASH_PTX_F_SYNC) || nlay != 2 || (in->mma & ASH_PTX_MMA_ACOL) || !(in->mma & ASH_PTX_MMA_BCOL) ||
        !mma_combo_ok(in, 1) || in->nops != 4)
        return 0;
    if ((in->flags & ASH_PTX_F_SATFINITE) && !is_int(in->type))
        return 0;
    return regs_ok(m, &in->o[0], mma_regs(in->shape, ASH_PTX_MMA_D, in->type)) &&
           regs_ok(m, &in->o[1], mma_regs(in->shape, ASH_PTX_MMA_A, in->type2)) &&
           regs_ok(m, &in->o[2], mma_regs(in->shape, ASH_PTX_MMA_B, in->type3)) &&
           regs_ok(m, &in->o[3], mma_regs(in->shape, ASH_PTX_MMA_C, in->type4));
}

/* ---------------------------------------------------------------- helpers */
static void where(const hc_cta *C, const hc_warp *W, int lane, unsigned t[3])
{
    hc_thread_xyz(C->X, (unsigned)(W->id * 32 + lane), t);
}

/* the warp gathers: 1 when every live lane is here (E then must be all 32), 0 while M waits */
static int gather(hc_warp *W, uint32_t M)
{
    if (W->force || !(W->live & ~M))
        return 1;
    hc_exec_deuniform(W);
    W->wsync |= M;
    return 0;
}

static int need_full_warp(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    if (E == ~0u)
        return 1;
    xlaunch *X = C->X;
    hc_xfail(X, CUDA_ERROR_ILLEGAL_INSTRUCTION,
             "%s in %s (PTX line %d: %s) block (%u,%u,%u) warp %d: executed by lanes 0x%08x only; it is "
             ".sync.aligned: all 32 lanes of the warp must execute it together (undefined in the PTX ISA "
             "otherwise)",
             ash_ptx_opcode_name(in->op), X->f->name, in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0],
             C->ctaid[1], C->ctaid[2], W->id, E);
    return 0;
}

static uint64_t opnd_val(const hc_warp *W, const ash_ptx_opnd *o, int l)
{
    return o->kind == ASH_PTX_K_REG ? W->R[(size_t)o->reg * 32 + l] : (uint64_t)o->imm;
}

/* element bits as a number */
static double to_num(uint64_t v, int t)
{
    switch (t) {
    case ASH_PTX_T_F16: return hc_h2f((uint32_t)v & 0xffff);
    case ASH_PTX_T_BF16: return f32((v & 0xffff) << 16);
    case ASH_PTX_T_TF32: return f32(v & 0xffffe000u);
    case ASH_PTX_T_F32: return f32(v);
    case ASH_PTX_T_F64: return f64(v);
    case ASH_PTX_T_S8: return (int8_t)(v & 0xff);
    case ASH_PTX_T_U8: return (double)(v & 0xff);
    default: return (int32_t)(uint32_t)v;
    }
}

/* D = A x B + C on logical row-major matrices of element bits (the class comment's order); the
 * inputs are converted once, B transposed, so the inner loop is a plain dot product */
static void mma_compute(const ash_ptx_insn *in, int M, int N, int K, const uint64_t *a, const uint64_t *b,
                        const uint64_t *c, uint64_t *d)
{
    int dt = in->type, at = in->type2, bt = in->type3, ct = in->type4;
    if (is_int(dt)) {
        int32_t ai[512], bi[512];
        for (int i = 0; i < M * K; i++)
            ai[i] = (int32_t)to_num(a[i], at);
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
                bi[j * K + k] = (int32_t)to_num(b[k * N + j], bt);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int64_t acc = (int32_t)(uint32_t)c[i * N + j];
                for (int k = 0; k < K; k++)
                    acc += (int64_t)ai[i * K + k] * bi[j * K + k];
                if (in->flags & ASH_PTX_F_SATFINITE)
                    acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                d[i * N + j] = (uint32_t)acc;
            }
        return;
    }
    if (dt == ASH_PTX_T_F64) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = f64(c[i * N + j]);
                for (int k = 0; k < K; k++)
                    acc = fma(f64(a[i * K + k]), f64(b[k * N + j]), acc);
                memcpy(&d[i * N + j], &acc, 8);
            }
        return;
    }
    float af[512], bf[512];
    for (int i = 0; i < M * K; i++)
        af[i] = (float)to_num(a[i], at);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            bf[j * K + k] = (float)to_num(b[k * N + j], bt);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = (float)to_num(c[i * N + j], ct);
            const float *x = &af[i * K], *y = &bf[j * K];
            for (int k = 0; k < K; k++)
                acc += x[k] * y[k];   /* exact product: fused or not, one rounding per step */
            d[i * N + j] = dt == ASH_PTX_T_F16 ? hc_f2h(acc, ASH_PTX_R_RN) : bf32(acc);
        }
}

/* element i of register file slot: register i / per, bits (i % per) * size */
static uint64_t slot_get(const hc_warp *W, const int32_t *regs, int t, int l, int i)
{
    int per = per_reg(t), bits = esize(t) * 8;
    uint64_t v = W->R[(size_t)regs[i / per] * 32 + l];
    return bits == 64 ? v : (v >> ((i % per) * bits)) & ((1ull << bits) - 1);
}
static void slot_put(hc_warp *W, const int32_t *regs, int t, int l, int i, uint64_t v)
{
    int per = per_reg(t), bits = esize(t) * 8;
    uint64_t *r = &W->R[(size_t)regs[i / per] * 32 + l];
    if (bits == 64 || per == 1) {
        *r = v;
        return;
    }
    int sh = (i % per) * bits;
    uint64_t mask = ((1ull << bits) - 1) << sh;
    *r = (*r & ~mask & 0xffffffffull) | (v << sh & mask);
}

/* ---------------------------------------------------------------- wmma */
/* host address of [a, a + n) when the shared window or the warp's last allocation holds all of it,
 * else NULL (the caller then goes element by element through hc_exec_addr, which checks and faults) */
static unsigned char *span(hc_cta *C, hc_warp *W, int space, uint64_t a, uint64_t n)
{
    if (space == ASH_PTX_S_GENERIC && (a & HC_WIN_MASK) == HC_WIN_SHARED) {
        space = ASH_PTX_S_SHARED;
        a -= HC_WIN_SHARED;
    }
    if (space == ASH_PTX_S_SHARED)
        return a + n <= C->shared_bytes && a + n > a ? C->shared + a : NULL;
    if ((space == ASH_PTX_S_GLOBAL || (space == ASH_PTX_S_GENERIC && !(a & HC_WIN_MASK))) &&
        W->cache >= 0) {
        const hc_exec_range *r = &C->ranges[W->cache];
        if (a >= r->lo && a - r->lo + n <= r->size)
            return (unsigned char *)r->rw + (a - r->lo);
    }
    return NULL;
}

/* the wmma layout: slot s of lane l is element (l * S + s) mod n */
static int wmma_elem(int l, int s, int S, int n)
{
    return (l * S + s) % n;
}

/* the n elements of a fragment of S slots per lane (the first copy of each, in lane order) */
static void wmma_gather(const hc_warp *W, const int32_t *regs, int t, int S, int n, uint64_t *el)
{
    unsigned char seen[512] = {0};
    for (int l = 0; l < 32; l++)
        for (int s = 0; s < S; s++) {
            int e = wmma_elem(l, s, S, n);
            if (!seen[e]) {
                seen[e] = 1;
                el[e] = slot_get(W, regs, t, l, s);
            }
        }
}

static int wmma_ldst(hc_cta *C, hc_warp *W, const ash_ptx_insn *in)
{
    xlaunch *X = C->X;
    int f = in->mma & ASH_PTX_MMA_FRAG, st = f == ASH_PTX_MMA_D, t = in->type;
    const ash_ptx_opnd *mem = &in->o[st ? 0 : 1];
    const int32_t *regs;
    int nregs = opnd_regs(X->m, &in->o[st ? 1 : 0], &regs);
    int rows, cols, colmajor = (in->mma & ASH_PTX_MMA_ACOL) != 0;
    frag_dims(in->shape, f, &rows, &cols);
    int n = rows * cols, S = nregs * per_reg(t), es = esize(t), space = in->space ? in->space : ASH_PTX_S_GENERIC;
    int acc = st ? HC_ACC_ST : HC_ACC_LD;
    uint64_t p = hc_exec_mem_addr(C, W, in, (int)(mem - in->o), 0);
    uint64_t stride = in->nops > 2 ? (uint32_t)opnd_val(W, &in->o[2], 0) : (uint64_t)(colmajor ? rows : cols);
    for (int l = 1; l < 32; l++) {
        uint64_t pl = hc_exec_mem_addr(C, W, in, (int)(mem - in->o), l);
        uint64_t sl = in->nops > 2 ? (uint32_t)opnd_val(W, &in->o[2], l) : stride;
        if (pl != p || sl != stride) {
            unsigned th[3];
            where(C, W, l, th);
            hc_xfail(X, CUDA_ERROR_ILLEGAL_INSTRUCTION,
                     "wmma in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): address 0x%llx stride %llu, "
                     "but lane 0 of its warp gives 0x%llx stride %llu; the warp must give one matrix",
                     X->f->name, in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2],
                     th[0], th[1], th[2], (unsigned long long)pl, (unsigned long long)sl, (unsigned long long)p,
                     (unsigned long long)stride);
            return -1;
        }
    }
    /* every row (.row) or column (.col) must start 128-bit aligned: a misaligned one faults as a
     * 16-byte access there does. (The CUDA C++ guide asks for 256-bit aligned matrix pointers;
     * NVIDIA's immaTensorCoreGemm passes 8-bit tiles at 16-byte offsets, which GPUs run.) */
    int lines = colmajor ? cols : rows;
    for (int i = 0; i < lines; i++) {
        uint64_t a = p + (uint64_t)i * stride * (uint64_t)es;
        if ((a & 15) && !hc_exec_addr(C, W, 0, in, space, a, 16, acc))
            return -1;
    }
    uint64_t el[512];
    if (st)
        wmma_gather(W, regs, t, S, n, el);
    int len = colmajor ? rows : cols;   /* elements of one line, contiguous in memory */
    for (int i = 0; i < lines; i++) {
        uint64_t a0 = p + (uint64_t)i * stride * (uint64_t)es;
        unsigned char *h = span(C, W, space, a0, (uint64_t)(len * es));
        for (int j = 0; j < len; j++) {
            int e = colmajor ? j * cols + i : i * cols + j;
            unsigned char *q = h ? h + j * es : hc_exec_addr(C, W, 0, in, space, a0 + (uint64_t)(j * es), (unsigned)es, acc);
            if (!q)
                return -1;
            if (st) {
                memcpy(q, &el[e], (size_t)es);   /* little endian: the low bytes */
            } else {
                el[e] = 0;
                memcpy(&el[e], q, (size_t)es);
            }
        }
    }
    if (!st)
        for (int l = 0; l < 32; l++)
            for (int s = 0; s < S; s++)
                slot_put(W, regs, t, l, s, el[wmma_elem(l, s, S, n)]);
    return HC_STEP_NEXT;
}

static int wmma_mma(hc_cta *C, hc_warp *W, const ash_ptx_insn *in)
{
    const ash_ptx_module *m = C->X->m;
    int M = shp[in->shape].m, N = shp[in->shape].n, K = shp[in->shape].k;
    static const int fr[4] = {ASH_PTX_MMA_D, ASH_PTX_MMA_A, ASH_PTX_MMA_B, ASH_PTX_MMA_C};
    const int ty[4] = {in->type, in->type2, in->type3, in->type4};
    uint64_t mat[4][512];
    const int32_t *regs[4];
    int S[4], n[4];
    for (int k = 0; k < 4; k++) {
        int rows, cols;
        frag_dims(in->shape, fr[k], &rows, &cols);
        n[k] = rows * cols;
        S[k] = opnd_regs(m, &in->o[k], &regs[k]) * per_reg(ty[k]);
    }
    for (int k = 1; k < 4; k++)
        wmma_gather(W, regs[k], ty[k], S[k], n[k], mat[k]);
    mma_compute(in, M, N, K, mat[1], mat[2], mat[3], mat[0]);
    for (int l = 0; l < 32; l++)
        for (int s = 0; s < S[0]; s++)
            slot_put(W, regs[0], ty[0], l, s, mat[0][wmma_elem(l, s, S[0], n[0])]);
    return HC_STEP_NEXT;
}

/* ---------------------------------------------------------------- mma.sync */
/* row and column of element i of lane l's fragment f, as the PTX ISA lays them out */
static void mma_pos(int shape, int f, int t, int l, int i, int *row, int *col)
{
    int g = l >> 2, q = l & 3;
    int m = shp[shape].m;
    if (f == ASH_PTX_MMA_C || f == ASH_PTX_MMA_D) {
        *row = m == 16 ? g + 8 * (i >> 1) : g;
        *col = m == 16 ? 2 * q + (i & 1) : 2 * q + i;
        return;
    }
    int a = f == ASH_PTX_MMA_A, r = 0, c = 0;   /* r: the M (A) or N (B) index, c: the K index */
    switch (shape) {
    case ASH_PTX_MMA_M16N8K16:
        if (is_int(t)) {
            r = a ? g + 8 * (i >> 2) : g;
            c = 4 * q + (i & 3);
        } else {
            r = a ? g + 8 * ((i >> 1) & 1) : g;
            c = a ? 2 * q + (i & 1) + 8 * (i >> 2) : 2 * q + (i & 1) + 8 * (i >> 1);
        }
        break;
    case ASH_PTX_MMA_M16N8K8:
        if (t == ASH_PTX_T_TF32) {
            r = a ? g + 8 * (i & 1) : g;
            c = a ? q + 4 * (i >> 1) : q + 4 * i;
        } else {
            r = a ? g + 8 * (i >> 1) : g;
            c = a ? 2 * q + (i & 1) : 2 * q + i;
        }
        break;
    case ASH_PTX_MMA_M16N8K4:   /* tf32 */
        r = a ? g + 8 * i : g;
        c = q;
        break;
    case ASH_PTX_MMA_M8N8K4:    /* f64 */
        r = g;
        c = q;
        break;
    case ASH_PTX_MMA_M8N8K16:
        r = g;
        c = 4 * q + i;
        break;
    case ASH_PTX_MMA_M16N8K32:
        r = a ? g + 8 * ((i >> 2) & 1) : g;
        c = a ? 4 * q + (i & 3) + 16 * (i >> 3) : 4 * q + (i & 3) + 16 * (i >> 2);
        break;
    default: break;
    }
    if (a) {
        *row = r;
        *col = c;
    } else {   /* B is K x N: its row is the K index */
        *row = c;
        *col = r;
    }
}

static int mma_sync(hc_cta *C, hc_warp *W, const ash_ptx_insn *in)
{
    const ash_ptx_module *m = C->X->m;
    int M = shp[in->shape].m, N = shp[in->shape].n, K = shp[in->shape].k;
    static const int fr[4] = {ASH_PTX_MMA_D, ASH_PTX_MMA_A, ASH_PTX_MMA_B, ASH_PTX_MMA_C};
    const int ty[4] = {in->type, in->type2, in->type3, in->type4};
    uint64_t mat[4][512];
    const int32_t *regs[4];
    int cnt[4], cols[4];
    for (int k = 0; k < 4; k++) {
        int rows;
        frag_dims(in->shape, fr[k], &rows, &cols[k]);
        cnt[k] = opnd_regs(m, &in->o[k], &regs[k]) * per_reg(ty[k]);
    }
    for (int k = 1; k < 4; k++)
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < cnt[k]; i++) {
                int r, c;
                mma_pos(in->shape, fr[k], ty[k], l, i, &r, &c);
                mat[k][r * cols[k] + c] = slot_get(W, regs[k], ty[k], l, i);
            }
    mma_compute(in, M, N, K, mat[1], mat[2], mat[3], mat[0]);
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < cnt[0]; i++) {
            int r, c;
            mma_pos(in->shape, ASH_PTX_MMA_D, ty[0], l, i, &r, &c);
            slot_put(W, regs[0], ty[0], l, i, mat[0][r * cols[0] + c]);
        }
    return HC_STEP_NEXT;
}

/* ---------------------------------------------------------------- ldmatrix / stmatrix */
/* matrix j's row r comes from (goes to) the address of lane 8 j + r; lane l holds in register j the
 * b16 pair at row l / 4, columns 2 (l % 4) and + 1 (.trans: rows 2 (l % 4) and + 1 of column l / 4) */
static int ldst_matrix(hc_cta *C, hc_warp *W, const ash_ptx_insn *in)
{
    int ld = in->op == ASH_PTX_OP_LDMATRIX, nm = in->vec, tr = (in->mma & ASH_PTX_MMA_TRANS) != 0;
    int space = in->space ? in->space : ASH_PTX_S_GENERIC;
    const ash_ptx_opnd *mem = &in->o[ld ? 1 : 0];
    const int32_t *regs;
    opnd_regs(C->X->m, &in->o[ld ? 0 : 1], &regs);
    uint16_t mat[4][8][8];
    unsigned char *row[4][8];
    for (int j = 0; j < nm; j++)
        for (int r = 0; r < 8; r++) {
            int lane = 8 * j + r;
            row[j][r] = hc_exec_addr(C, W, lane, in, space, hc_exec_mem_addr(C, W, in, (int)(mem - in->o), lane), 16, ld ? HC_ACC_LD : HC_ACC_ST);
            if (!row[j][r])
                return -1;
            if (ld)
                memcpy(mat[j][r], row[j][r], 16);
        }
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, q = l & 3;
        for (int j = 0; j < nm; j++) {
            uint16_t *e0 = tr ? &mat[j][2 * q][g] : &mat[j][g][2 * q];
            uint16_t *e1 = tr ? &mat[j][2 * q + 1][g] : &mat[j][g][2 * q + 1];
            uint64_t *R = &W->R[(size_t)regs[j] * 32 + l];
            if (ld) {
                *R = (uint64_t)*e0 | (uint64_t)*e1 << 16;
            } else {
                *e0 = (uint16_t)*R;
                *e1 = (uint16_t)(*R >> 16);
            }
        }
    }
    if (!ld)
        for (int j = 0; j < nm; j++)
            for (int r = 0; r < 8; r++)
                memcpy(row[j][r], mat[j][r], 16);
    return HC_STEP_NEXT;
}

/* ---------------------------------------------------------------- cvt to .tf32 */
static uint32_t to_tf32(uint32_t u, int rnd)
{
    if ((u & 0x7f800000u) == 0x7f800000u)   /* inf stays, NaN becomes the canonical NaN */
        return (u & 0x7fffffu) ? 0x7fffffffu : u;
    if (rnd == ASH_PTX_R_RNA)
        u += 0x1000u;
    else if (rnd == ASH_PTX_R_RN)
        u += 0xfffu + ((u >> 13) & 1);
    return u & 0xffffe000u;
}

int hc_exec_mma(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t M, uint32_t E)
{
    (void)fe_mode;   /* hc_exec_num.h's rounding helper: this file rounds to nearest only */
    if (in->op == ASH_PTX_OP_CVT) {
        uint64_t *D = &W->R[(size_t)in->o[0].reg * 32];
        LOOP(E, { D[l] = to_tf32((uint32_t)opnd_val(W, &in->o[1], l), in->rnd); });
        return HC_STEP_NEXT;
    }
    if (!gather(W, M))
        return HC_STEP_DONE;
    if (!E)
        return HC_STEP_NEXT;
    if (!need_full_warp(C, W, in, E))
        return -1;
    if (in->op == ASH_PTX_OP_LDMATRIX || in->op == ASH_PTX_OP_STMATRIX)
        return ldst_matrix(C, W, in);
    if (in->op == ASH_PTX_OP_MMA)
        return mma_sync(C, W, in);
    if ((in->mma & ASH_PTX_MMA_FRAG) == ASH_PTX_MMA_OP)
        return wmma_mma(C, W, in);
    return wmma_ldst(C, W, in);
}
