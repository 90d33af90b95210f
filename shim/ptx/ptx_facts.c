/* ptx_facts.c — per-parameter facts of a parsed PTX module: pointer or not, read / written /
 * atomic through it, element types (the analysis is described in ash_ptx_facts.h).
 * Owns: the taint propagation over a module's instructions and the callee summaries.
 * Must not: depend on hostcuda or the shim (pure C11 and libc), change the parsed module, or
 *   track more than the first 64 parameters of a function (later ones keep all facts zero).
 */
#include "ash_ptx_facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t mask_t;
#define MAXP 64

typedef struct {
    const ash_ptx_module *m;
    ash_ptx_facts *out;
    mask_t **reg;        /* per function, per register slot */
    mask_t *var;         /* per module variable (locals, call arguments) */
    int *pidx;           /* per variable: its parameter index in its function, else -1 */
    int changed;
} ctx;

static int orm(mask_t *dst, mask_t v)
{
    if ((*dst | v) == *dst)
        return 0;
    *dst |= v;
    return 1;
}

/* the taint of an operand's value (registers and vectors; immediates carry none) */
static mask_t val(ctx *C, int f, const ash_ptx_opnd *o)
{
    const mask_t *r = C->reg[f];
    int nr = C->m->funcs[f].nregs;
    switch (o->kind) {
    case ASH_PTX_K_REG:
        return o->reg >= 0 && o->reg < nr ? r[o->reg] : 0;
    case ASH_PTX_K_VEC: {
        mask_t v = 0;
        for (int i = 0; i < o->n && i < 4; i++)
            if (o->vec[i] >= 0 && o->vec[i] < nr)
                v |= r[o->vec[i]];
        return v;
    }
    default:
        return 0;
    }
}

static void setdst(ctx *C, int f, const ash_ptx_opnd *o, mask_t v)
{
    if (!v)
        return;
    mask_t *r = C->reg[f];
    int nr = C->m->funcs[f].nregs;
    if (o->kind == ASH_PTX_K_REG && o->reg >= 0 && o->reg < nr)
        C->changed |= orm(&r[o->reg], v);
    else if (o->kind == ASH_PTX_K_VEC)
        for (int i = 0; i < o->n && i < 4; i++)
            if (o->vec[i] >= 0 && o->vec[i] < nr)
                C->changed |= orm(&r[o->vec[i]], v);
}

/* a memory access through the address o: apply to every parameter behind its base register */
static void access(ctx *C, int f, const ash_ptx_opnd *o, int type, int rd, int wr, int at)
{
    if (o->kind != ASH_PTX_K_MEM || o->reg < 0 || o->reg >= C->m->funcs[f].nregs)
        return;
    mask_t v = C->reg[f][o->reg];
    ash_ptx_ffacts *ff = &C->out->funcs[f];
    for (int p = 0; p < ff->nparams && p < MAXP; p++) {
        if (!(v >> p & 1))
            continue;
        ash_ptx_pfact *pf = &ff->params[p];
        int ptr = pf->size == 8;
        uint32_t t = type > 0 && type < 32 ? 1u << type : 0;
        if (ptr && !pf->is_ptr) { pf->is_ptr = 1; C->changed = 1; }
        if (!ptr)
            continue;
        if (rd && !pf->read) { pf->read = 1; C->changed = 1; }
        if (wr && !pf->written) { pf->written = 1; C->changed = 1; }
        if (at && !pf->atomic) { pf->atomic = 1; C->changed = 1; }
        if ((pf->elem_types | t) != pf->elem_types) { pf->elem_types |= t; C->changed = 1; }
    }
}

/* a store or atomic through the address o: one to global or generic memory whose base derives
 * from no parameter writes where the facts cannot say (ash_ptx_ffacts.untracked_write) */
static void untracked(ctx *C, int f, const ash_ptx_insn *in, const ash_ptx_opnd *o)
{
    int sp = in->space;
    if (sp != ASH_PTX_S_NONE && sp != ASH_PTX_S_GENERIC && sp != ASH_PTX_S_GLOBAL)
        return;
    if (o->reg < 0 || o->reg >= C->m->funcs[f].nregs || C->reg[f][o->reg] != 0)
        return;
    if (!C->out->funcs[f].untracked_write) {
        C->out->funcs[f].untracked_write = 1;
        C->changed = 1;
    }
}

/* a value loaded from or stored to a variable (not through a register) */
static mask_t var_load(ctx *C, int f, const ash_ptx_opnd *o)
{
    if (o->kind != ASH_PTX_K_MEM || o->sym < 0 || o->sym >= C->m->nvars)
        return 0;
    mask_t v = C->var[o->sym];
    const ash_ptx_var *var = &C->m->vars[o->sym];
    int p = C->pidx[o->sym];
    if (p >= 0 && p < MAXP && var->func == f && o->imm == 0)
        v |= (mask_t)1 << p;
    return v;
}

static void call(ctx *C, int f, const ash_ptx_insn *in)
{
    int g = in->o[0].sym;
    if (g < 0 || g >= C->m->nfuncs)
        return;
    const ash_ptx_ffacts *gf = &C->out->funcs[g];
    ash_ptx_ffacts *ff = &C->out->funcs[f];
    if (gf->untracked_write && !ff->untracked_write) {
        ff->untracked_write = 1;
        C->changed = 1;
    }
    for (int i = 0; i < in->call_nargs && i < gf->nparams; i++) {
        int av = C->m->callvars[in->call_args + in->call_nret + i];
        if (av < 0 || av >= C->m->nvars)
            continue;
        mask_t v = C->var[av];
        const ash_ptx_pfact *gp = &gf->params[i];
        if (!gp->is_ptr)
            continue;
        for (int p = 0; p < ff->nparams && p < MAXP; p++) {
            if (!(v >> p & 1) || ff->params[p].size != 8)
                continue;
            ash_ptx_pfact *pf = &ff->params[p];
            ash_ptx_pfact n = *pf;
            n.is_ptr = 1;
            n.read |= gp->read;
            n.written |= gp->written;
            n.atomic |= gp->atomic;
            n.elem_types |= gp->elem_types;
            if (memcmp(&n, pf, sizeof n)) { *pf = n; C->changed = 1; }
        }
    }
}

static void step(ctx *C, int f, const ash_ptx_insn *in)
{
    const ash_ptx_opnd *o = in->o;
    switch (in->op) {
    case ASH_PTX_OP_LD:
    case ASH_PTX_OP_LDU:
        if (o[1].kind != ASH_PTX_K_MEM)
            break;
        if (o[1].reg >= 0)
            access(C, f, &o[1], in->type, 1, 0, 0);
        else
            setdst(C, f, &o[0], var_load(C, f, &o[1]));
        break;
    case ASH_PTX_OP_ST:
        if (o[0].kind != ASH_PTX_K_MEM)
            break;
        if (o[0].reg >= 0) {
            access(C, f, &o[0], in->type, 0, 1, 0);
            untracked(C, f, in, &o[0]);
        }
        else if (o[0].sym >= 0 && o[0].sym < C->m->nvars)
            C->changed |= orm(&C->var[o[0].sym], val(C, f, &o[1]));
        break;
    case ASH_PTX_OP_ATOM:
    case ASH_PTX_OP_RED:
        for (int k = 0; k < in->nops; k++)
            if (o[k].kind == ASH_PTX_K_MEM) {
                access(C, f, &o[k], in->type, 0, 1, 1);
                untracked(C, f, in, &o[k]);
            }
        break;
    case ASH_PTX_OP_WMMA:      /* wmma.load.{a,b,c} [p] reads, wmma.store.d [p] writes (mma: no memory) */
    case ASH_PTX_OP_LDMATRIX:
    case ASH_PTX_OP_STMATRIX: {
        int wr = in->op == ASH_PTX_OP_STMATRIX || (in->mma & ASH_PTX_MMA_FRAG) == ASH_PTX_MMA_D;
        const ash_ptx_opnd *a = &o[wr ? 0 : 1];
        if (in->nops < 2 || a->kind != ASH_PTX_K_MEM || a->reg < 0)
            break;
        access(C, f, a, in->type == ASH_PTX_T_TF32 ? ASH_PTX_T_F32 : in->type, !wr, wr, 0);   /* tf32 sits in f32 */
        if (wr)
            untracked(C, f, in, a);
        break;
    }
    case ASH_PTX_OP_MOV:
    case ASH_PTX_OP_CVTA:
    case ASH_PTX_OP_CVT:
        setdst(C, f, &o[0], val(C, f, &o[1]));
        break;
    case ASH_PTX_OP_ADD:
    case ASH_PTX_OP_AND:
    case ASH_PTX_OP_OR:
        setdst(C, f, &o[0], val(C, f, &o[1]) | val(C, f, &o[2]));
        break;
    case ASH_PTX_OP_SUB:
        setdst(C, f, &o[0], val(C, f, &o[1]));
        break;
    case ASH_PTX_OP_SELP:
        setdst(C, f, &o[0], val(C, f, &o[1]) | val(C, f, &o[2]));
        break;
    case ASH_PTX_OP_MAD:
        setdst(C, f, &o[0], val(C, f, &o[3]));
        break;
    case ASH_PTX_OP_CALL:
        call(C, f, in);
        break;
    case ASH_PTX_OP_CPASYNC:   /* [shared dst], [global src]: reads its source */
        access(C, f, &o[1], ASH_PTX_T_NONE, 1, 0, 0);
        break;
    case ASH_PTX_OP_CPBULK:    /* into shared memory (reads a global source), or out to global memory */
        if (in->sub & ASH_PTX_MB_BULK_GROUP) {
            ash_ptx_insn g = *in;
            g.space = ASH_PTX_S_GLOBAL;   /* the destination's space (in->space is the source's) */
            access(C, f, &o[0], ASH_PTX_T_NONE, 0, 1, 0);
            untracked(C, f, &g, &o[0]);
        } else if (in->space == ASH_PTX_S_GLOBAL) {
            access(C, f, &o[1], ASH_PTX_T_NONE, 1, 0, 0);
        }
        break;
    default:
        break;
    }
}

static const char *const tnames[] = {
    [ASH_PTX_T_NONE] = "none", [ASH_PTX_T_B8] = "b8", [ASH_PTX_T_B16] = "b16",
    [ASH_PTX_T_B32] = "b32", [ASH_PTX_T_B64] = "b64", [ASH_PTX_T_U8] = "u8",
    [ASH_PTX_T_U16] = "u16", [ASH_PTX_T_U32] = "u32", [ASH_PTX_T_U64] = "u64",
    [ASH_PTX_T_S8] = "s8", [ASH_PTX_T_S16] = "s16", [ASH_PTX_T_S32] = "s32",
    [ASH_PTX_T_S64] = "s64", [ASH_PTX_T_F16] = "f16", [ASH_PTX_T_F16X2] = "f16x2",
    [ASH_PTX_T_BF16] = "bf16", [ASH_PTX_T_BF16X2] = "bf16x2", [ASH_PTX_T_F32] = "f32",
    [ASH_PTX_T_F64] = "f64", [ASH_PTX_T_PRED] = "pred", [ASH_PTX_T_B128] = "b128",
    [ASH_PTX_T_TF32] = "tf32",
};

const char *ash_ptx_type_name(int type)
{
    if (type < 0 || type >= (int)(sizeof tnames / sizeof *tnames) || !tnames[type])
        return "?";
    return tnames[type];
}

const char *ash_ptx_facts_types(uint32_t mask, char *buf, size_t len)
{
    size_t n = 0;
    if (!len)
        return buf;
    buf[0] = 0;
    for (int t = 1; t < 32; t++) {
        if (!(mask >> t & 1))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? "," : "", ash_ptx_type_name(t));
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (!n)
        snprintf(buf, len, "-");
    return buf;
}

void ash_ptx_facts_free(ash_ptx_facts *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->nfuncs; i++)
        free(f->funcs[i].params);
    free(f->funcs);
    f->funcs = NULL;
    f->nfuncs = 0;
}

int ash_ptx_facts_compute(const ash_ptx_module *m, ash_ptx_facts *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    ctx C = {.m = m, .out = out};
    int ok = 0;
    out->funcs = calloc((size_t)(m->nfuncs ? m->nfuncs : 1), sizeof *out->funcs);
    C.reg = calloc((size_t)(m->nfuncs ? m->nfuncs : 1), sizeof *C.reg);
    C.var = calloc((size_t)(m->nvars ? m->nvars : 1), sizeof *C.var);
    C.pidx = malloc((size_t)(m->nvars ? m->nvars : 1) * sizeof *C.pidx);
    if (!out->funcs || !C.reg || !C.var || !C.pidx)
        goto done;
    out->nfuncs = m->nfuncs;
    for (int v = 0; v < m->nvars; v++)
        C.pidx[v] = -1;
    for (int f = 0; f < m->nfuncs; f++) {
        const ash_ptx_func *fn = &m->funcs[f];
        ash_ptx_ffacts *ff = &out->funcs[f];
        ff->func = f;
        ff->nparams = fn->nparams;
        ff->params = calloc((size_t)(fn->nparams ? fn->nparams : 1), sizeof *ff->params);
        C.reg[f] = calloc((size_t)(fn->nregs ? fn->nregs : 1), sizeof **C.reg);
        if (!ff->params || !C.reg[f])
            goto done;
        for (int p = 0; p < fn->nparams; p++) {
            ff->params[p].size = fn->params[p].size;
            if (fn->params[p].var >= 0 && fn->params[p].var < m->nvars)
                C.pidx[fn->params[p].var] = p;
        }
    }
    do {
        C.changed = 0;
        for (int f = 0; f < m->nfuncs; f++) {
            const ash_ptx_func *fn = &m->funcs[f];
            if (!fn->defined)
                continue;
            for (int i = fn->first; i < fn->first + fn->count && i < m->ninsns; i++)
                step(&C, f, &m->insns[i]);
        }
    } while (C.changed);
    ok = 1;
done:
    if (C.reg)
        for (int f = 0; f < m->nfuncs; f++)
            free(C.reg[f]);
    free(C.reg);
    free(C.var);
    free(C.pidx);
    if (!ok) {
        ash_ptx_facts_free(out);
        snprintf(err, errlen, "%s: out of memory computing kernel facts", m->name ? m->name : "ptx");
        return -1;
    }
    return 0;
}
