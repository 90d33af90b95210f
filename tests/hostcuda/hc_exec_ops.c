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
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hc_exec_num.h"
#include "hc_exec_mma.h"

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

/* One warning per kernel (the first 64 of the process) whose shfl.sync read a lane not executing
 * it, naming the first such instruction: the reading is undefined in the PTX ISA, so a program
 * that depends on it is named, not failed. */
static void shfl_inactive_warn(const hc_cta *C, const ash_ptx_insn *in, int lane, int src)
{
    enum { SLOTS = 64 };
    static _Atomic(const ash_ptx_func *) seen[SLOTS];
    const ash_ptx_module *m = hc_exec_launch_of(C)->m;
    const ash_ptx_func *fn = &m->funcs[in->func];
    int i = 0;
    for (; i < SLOTS; i++) {
        const ash_ptx_func *cur = atomic_load(&seen[i]);
        if (cur == fn)
            return;
        if (!cur) {
            const ash_ptx_func *none = NULL;
            if (atomic_compare_exchange_strong(&seen[i], &none, fn))
                break;
            if (none == fn)
                return;
        }
    }
    if (i == SLOTS)
        return;
    fprintf(stderr, "hostcuda: warning: %s (PTX line %d: %s): lane %d reads lane %d, which does not execute "
            "this shfl.sync (undefined in the PTX ISA; a GPU returns 0 in practice, and so does hostcuda)\n",
            fn->name, in->line, ash_ptx_line_text(m, in->line), lane, src);
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
    case ASH_PTX_K_FUNC:   /* mov %rd, function: its address */
        for (int l = 0; l < 32; l++)
            tmp[l] = hc_exec_func_addr(o->sym);
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

/* for hc_exec_async.c: operand k's 32 values, its destination, a memory operand's address */
const uint64_t *hc_exec_src(const hc_cta *C, const hc_warp *W, const ash_ptx_insn *in, int k, uint64_t *tmp)
{
    return src(C, W, in, k, tmp);
}

uint64_t *hc_exec_dst(hc_warp *W, const ash_ptx_insn *in, int k)
{
    return dst(W, in, k);
}

uint64_t hc_exec_mem_addr(const hc_cta *C, const hc_warp *W, const ash_ptx_insn *in, int k, int l)
{
    const ash_ptx_opnd *a = &in->o[k];
    if (a->reg >= 0)
        return (W->R[(size_t)a->reg * 32 + l] + (uint64_t)a->imm) & (a->n == 32 ? 0xffffffffull : ~0ull);
    if (a->sym < 0)
        return (uint64_t)a->imm;
    const ash_ptx_module *m = hc_exec_launch_of(C)->m;
    return sym_value(C, m, &(ash_ptx_opnd){.sym = a->sym}) + (sym_per_lane(m, a->sym) ? W->lbase[l] : 0) +
           (uint64_t)a->imm;
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
        const uint64_t amask = a->n == 32 ? 0xffffffffull : ~0ull;   /* a 32-bit address register */
        uint64_t *Dv[4];
        for (int i = 0; i < n; i++) {
            int r = in->o[0].kind == ASH_PTX_K_VEC ? in->o[0].vec[i] : in->o[0].reg;
            Dv[i] = r >= 0 ? W->R + (size_t)r * 32 : sink;
        }
        const int sgn = tsigned(t);
        const unsigned total = (unsigned)(esz * n);
        if (n == 1 && esz == 4 && Rb && space == ASH_PTX_S_SHARED) {
            /* the tiled kernels' inner loop: one 32-bit word from shared memory per lane */
            uint64_t *D0 = Dv[0];
            const uint64_t off = (uint64_t)a->imm, lim = C->shared_bytes;
            for (int l = 0; l < 32; l++) {
                if (!(E >> l & 1))
                    continue;
                uint64_t addr = (Rb[l] + off) & amask;
                uint32_t v;
                if (!(addr & 3) && addr + 4 <= lim) {
                    memcpy(&v, C->shared + addr, 4);
                } else {
                    const unsigned char *p = hc_exec_addr(C, W, l, in, space, addr, 4, HC_ACC_LD);
                    if (!p)
                        return -1;
                    memcpy(&v, p, 4);
                }
                D0[l] = sgn ? (uint64_t)(int64_t)(int32_t)v : v;
            }
            return HC_STEP_NEXT;
        }
        if (n == 1 && esz == 4 && Rb && W->cache >= 0) {
            /* one 32-bit word per lane from the warp's last allocation */
            uint64_t *D0 = Dv[0];
            const uint64_t off = (uint64_t)a->imm;
            for (int l = 0; l < 32; l++) {
                if (!(E >> l & 1))
                    continue;
                uint64_t addr = (Rb[l] + off) & amask;
                const hc_exec_range *r = &C->ranges[W->cache];
                uint32_t v;
                if ((space == ASH_PTX_S_GLOBAL || space == ASH_PTX_S_GENERIC) && !(addr & 3) && addr >= r->lo &&
                    addr - r->lo + 4 <= r->size) {
                    memcpy(&v, r->rw + (addr - r->lo), 4);
                } else {
                    const unsigned char *p = fast_addr(C, W, l, in, space, addr, 4, HC_ACC_LD);
                    if (!p)
                        return -1;
                    memcpy(&v, p, 4);
                }
                D0[l] = sgn ? (uint64_t)(int64_t)(int32_t)v : v;
            }
            return HC_STEP_NEXT;
        }
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            uint64_t addr = Rb ? (Rb[l] + (uint64_t)a->imm) & amask
                              : base_sym + (pl ? W->lbase[l] : 0) + (uint64_t)a->imm;
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
        const uint64_t amask = a->n == 32 ? 0xffffffffull : ~0ull;   /* a 32-bit address register */
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
            uint64_t addr = Rb ? (Rb[l] + (uint64_t)a->imm) & amask
                              : base_sym + (pl ? W->lbase[l] : 0) + (uint64_t)a->imm;
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
        if (t == ASH_PTX_T_TF32)
            return hc_exec_mma(C, W, in, M, E);
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        int st = in->type2 ? in->type2 : t;
        if (t == ASH_PTX_T_F16X2 || t == ASH_PTX_T_BF16X2) {   /* d = {cvt(a) high, cvt(b) low} */
            const uint64_t *B = src(C, W, in, 2, tb);
            int et = t == ASH_PTX_T_F16X2 ? ASH_PTX_T_F16 : ASH_PTX_T_BF16;
            LOOP(E, { D[l] = (hc_cvt_one(A[l], et, st, in->rnd, in->flags) << 16) |
                             hc_cvt_one(B[l], et, st, in->rnd, in->flags); });
            return HC_STEP_NEXT;
        }
        if (t == ASH_PTX_T_F32 && st == ASH_PTX_T_F16 && !in->flags)
            LOOP(E, { D[l] = bf32(hc_h2f((uint32_t)A[l] & 0xffff)); });
        else if (t == ASH_PTX_T_BF16 && st == ASH_PTX_T_F32 && in->rnd == ASH_PTX_R_RN && !in->flags)
            LOOP(E, { D[l] = hc_f2bh(f32(A[l]), ASH_PTX_R_RN); });
        else
            LOOP(E, { D[l] = hc_cvt_one(A[l], t, st, in->rnd, in->flags); });
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
            return hc_exec_half(in, E, D, A, B, Cc) ? -1 : HC_STEP_NEXT;
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
                    hc_fma32_warp(D, A, B, Cc, ftz);
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
    case ASH_PTX_OP_ISSPACEP: {   /* does generic address a lie in the space? */
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta);
        int sp = in->space;
        LOOP(E, {
            uint64_t w = A[l] & HC_WIN_MASK;
            int r = sp == ASH_PTX_S_SHARED ? w == HC_WIN_SHARED : sp == ASH_PTX_S_LOCAL ? w == HC_WIN_LOCAL
                  : sp == ASH_PTX_S_PARAM ? w == HC_WIN_PARAM
                  : (w != HC_WIN_SHARED && w != HC_WIN_LOCAL && w != HC_WIN_PARAM);   /* global, const */
            D[l] = (uint64_t)r;
        });
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_BMSK: case ASH_PTX_OP_SZEXT: {   /* the PTX ISA's pseudo-code */
        uint64_t *D = dst(W, in, 0);
        const uint64_t *A = src(C, W, in, 1, ta), *B = src(C, W, in, 2, tb);
        int clamp = (in->flags & ASH_PTX_F_CLAMP) != 0, bmsk = in->op == ASH_PTX_OP_BMSK;
        LOOP(E, {
            uint32_t a = (uint32_t)A[l], b = (uint32_t)B[l], a1 = a & 31, b1 = b & 31, r;
            if (bmsk) {
                uint32_t sum = a1 + b1, mask0 = clamp && a >= 32 ? 0 : ~0u << a1, mask1;
                if (sum >= 32 || (clamp && (a >= 32 || b >= 32)))
                    mask1 = 0;
                else
                    mask1 = b1 == 0 ? ~0u : ~0u << sum;
                r = mask0 & ~mask1;
            } else {
                int too_large = clamp && b >= 32;
                uint32_t mask = too_large ? 0 : ~0u << b1;
                int sign = b1 && !too_large && tsigned(t) && (a >> (b1 - 1) & 1);
                r = (a & ~mask) | (sign ? mask : 0);
            }
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
        C->live_threads -= (unsigned)hc_popc32(E);
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
            C->bar_count[id] += (unsigned)hc_popc32(E);
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
        const uint64_t amask = a->n == 32 ? 0xffffffffull : ~0ull;   /* a 32-bit address register */
        const uint64_t *B = src(C, W, in, k + 1, tb);
        const uint64_t *Cc = in->nops > k + 2 ? src(C, W, in, k + 2, tc) : NULL;
        uint64_t *D = isred ? NULL : dst(W, in, 0);
        int esz = ash_ptx_type_size(t);
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            uint64_t addr = Rb ? (Rb[l] + (uint64_t)a->imm) & amask
                              : base_sym + (pl ? W->lbase[l] : 0) + (uint64_t)a->imm;
            void *p = hc_exec_addr(C, W, l, in, space, addr, (unsigned)esz, HC_ACC_ATOM);
            if (!p)
                return -1;
            int ok = 1;
            uint64_t old = hc_atom_one(p, in->sub, t, B[l], Cc ? Cc[l] : 0, &ok);
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
        uint32_t inact = 0;
        int jl = 0, jj = 0;
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
            /* a source lane that does not execute this shfl: undefined in the PTX ISA; a GPU
             * returns 0 in practice (programs such as cuda-samples' reduction depend on it) */
            if (!(E >> (j & 31) & 1))
                inact |= 1u << l, jl = (int)l, jj = j;
            td[l] = inact >> l & 1 ? 0 : zx(val[j & 31], 32);
            pv[l] = (uint64_t)ok;
        });
        if (inact)
            shfl_inactive_warn(C, in, jl, jj);
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
    case ASH_PTX_OP_WMMA: case ASH_PTX_OP_MMA: case ASH_PTX_OP_LDMATRIX: case ASH_PTX_OP_STMATRIX:
        return hc_exec_mma(C, W, in, M, E);
    case ASH_PTX_OP_CALL:
        return hc_exec_call(C, W, in, pc, M, E);
    case ASH_PTX_OP_TEX: case ASH_PTX_OP_TLD4: case ASH_PTX_OP_TXQ:
    case ASH_PTX_OP_SULD: case ASH_PTX_OP_SUST: case ASH_PTX_OP_SUQ:
        return hc_exec_tex(C, W, in, E);
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
    case ASH_PTX_OP_CPASYNC ... ASH_PTX_OP_BRX:   /* asynchronous copies, mbarriers, brx.idx */
        return hc_exec_async(C, W, in, pc, M, E);
    default:
        return -1;
    }
}
