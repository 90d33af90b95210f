/* ash_ptx.c — the PTX reader (see ash_ptx.h): tokenizer, module/function/variable declarations,
 * registers with their scopes, instructions decoded with their modifiers and resolved operands.
 *
 * Tokens, numbers and scopes are in ash_ptx_lex.c. One pass over the text; labels are resolved at the end of each function. An opcode or modifier
 * the reader does not know is not an error here: the instruction is kept with op NONE, so the
 * loader can refuse the kernels that reach it with the PTX line. Syntax errors stop the parse.
 * Threading: no global state; every allocation belongs to the module.
 * Must not: depend on hostcuda or the shim (libc only), execute anything, or keep a pointer into
 * the caller's text after ash_ptx_parse returns (messages quote lines copied into the module).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ash_ptx_int.h"   /* last: its macros rename the reader's internal functions */

/* ---------------------------------------------------------------- variables */
static int var_new(parser *P, ash_ptx_var **out)
{
    GROW(P, P->m->vars, P->caps_vars, P->m->nvars + 1);
    ash_ptx_var *v = &P->m->vars[P->m->nvars++];
    memset(v, 0, sizeof *v);
    v->func = -1;
    v->unit = P->unit;
    v->linkage = P->linkage;
    *out = v;
    return P->m->nvars - 1;
}

static size_t align_up(size_t v, size_t a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

static int put_reloc(parser *P, ash_ptx_var *v, size_t off, int esz, int sym, int64_t add, int generic, int func)
{
    int cap = v->nrelocs;   /* grow by one each time: initialisers with addresses are short */
    ash_ptx_reloc *r = realloc(v->relocs, (size_t)(cap + 1) * sizeof *r);
    if (!r) {
        perr(P, NULL, "out of memory");
        return -1;
    }
    v->relocs = r;
    r[v->nrelocs++] = (ash_ptx_reloc){off, esz, sym, add, generic, func};
    return 0;
}

static void put_value(unsigned char *dst, int esz, int type, int64_t bits, int kind)
{
    if (type == ASH_PTX_T_F32 && (kind == 2 || kind == 3)) {
        double d;
        memcpy(&d, &bits, 8);
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u;
    } else if (type == ASH_PTX_T_F64 && kind == 1) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        double d = f;
        memcpy(&bits, &d, 8);
    } else if (type == ASH_PTX_T_F64 && kind == 0) {
        double d = (double)bits;
        memcpy(&bits, &d, 8);
    } else if (type == ASH_PTX_T_F32 && kind == 0) {
        float f = (float)bits;
        uint32_t u;
        memcpy(&u, &f, 4);
        bits = u;
    }
    uint64_t u = (uint64_t)bits;
    for (int i = 0; i < esz; i++)
        dst[i] = (unsigned char)(u >> (8 * i));   /* little endian, as on the GPU */
}

/* initialiser elements, flattened in order: numbers, `sym`, `sym+N`, `generic(sym)`, nested {} */
static int parse_init(parser *P, ash_ptx_var *v, int esz, size_t *idx, size_t count)
{
    tok *t = peek(P);
    if (t->kind == '{') {
        next(P);
        if (accept(P, '}'))
            return 0;
        do {
            if (parse_init(P, v, esz, idx, count))
                return -1;
        } while (accept(P, ','));
        return expect(P, '}', "'}' closing the initialiser") ? 0 : -1;
    }
    tok e = next(P);
    if (*idx >= count) {
        perr(P, &e, "too many initialiser elements for %s", v->name);
        return -1;
    }
    size_t off = *idx * (size_t)esz;
    (*idx)++;
    int neg = 0;
    if (e.kind == '-') {
        neg = 1;
        e = next(P);
    }
    int64_t bits;
    int kind;
    if (e.kind == TK_WORD && isdigit((unsigned char)e.s[0])) {
        if (parse_number(&e, neg, &bits, &kind)) {
            perr(P, &e, "bad number in the initialiser of %s", v->name);
            return -1;
        }
        put_value(v->init + off, esz, v->type, bits, kind);
        return 0;
    }
    int generic = 0;
    if (e.kind == TK_WORD && (is(&e, "generic") || is(&e, "global"))) {
        generic = is(&e, "generic");
        if (!expect(P, '(', "'(' after generic"))
            return -1;
        e = next(P);
    }
    int sym = e.kind == TK_WORD ? var_lookup(P, e.s, e.n) : -1;
    int func = sym < 0 && e.kind == TK_WORD ? func_lookup(P->m, P->unit, e.s, e.n) : -1;   /* a vtable's entry */
    if (sym < 0 && func < 0) {
        perr(P, &e, "unknown symbol in the initialiser of %s", v->name);
        return -1;
    }
    if (generic && !expect(P, ')', "')' after generic(symbol"))
        return -1;
    int64_t add = 0;
    if (peek(P)->kind == '+' || peek(P)->kind == '-') {
        int sub = next(P).kind == '-';
        tok nt = next(P);
        if (parse_number(&nt, sub, &add, &kind) || kind) {
            perr(P, &nt, "bad offset in the initialiser of %s", v->name);
            return -1;
        }
    }
    if (esz != 4 && esz != 8) {
        perr(P, &e, "a symbol address needs a 32- or 64-bit element in %s", v->name);
        return -1;
    }
    return put_reloc(P, v, off, esz, sym, add, generic, func);
}

/* [.align N] [.vN] .type [.ptr ...] name[dims] [= init]; `space` already read. func >= 0 inside a body.
 * kind: 0 a plain variable, 1 an entry parameter, 2 a function parameter / return value */
static int parse_var(parser *P, int space, int is_extern, int func, int kind, int *out)
{
    size_t align = 0;
    int type = 0, vecn = 1, is_ptr = 0;
    tok t;
    for (;;) {
        t = *peek(P);
        if (t.kind != TK_WORD || t.s[0] != '.')
            break;
        next(P);
        if (is(&t, ".align")) {
            tok a = next(P);
            int64_t av;
            int k;
            if (parse_number(&a, 0, &av, &k) || k || av <= 0 || (av & (av - 1))) {
                perr(P, &a, "bad .align value");
                return -1;
            }
            align = (size_t)av;
        } else if (is(&t, ".v2") || is(&t, ".v4") || is(&t, ".v8")) {
            vecn = t.s[2] - '0';
        } else if (is(&t, ".ptr")) {
            is_ptr = 1;
        } else if (is(&t, ".global") || is(&t, ".shared") || is(&t, ".const") || is(&t, ".local")) {
            /* .ptr state space */
        } else if (type_of(t.s + 1, t.n - 1)) {
            type = type_of(t.s + 1, t.n - 1);
        } else {
            perr(P, &t, "unknown variable attribute");
            return -1;
        }
    }
    if (!type) {
        perr(P, peek(P), "variable without a type");
        return -1;
    }
    tok nm = next(P);
    if (nm.kind != TK_WORD) {
        perr(P, &nm, "expected a variable name, found");
        return -1;
    }
    int esz = ash_ptx_type_size(type) * vecn;
    size_t count = 1;
    int unsized = 0;
    while (peek(P)->kind == '[') {
        next(P);
        if (accept(P, ']')) {
            unsized = 1;
            count = 0;
            continue;
        }
        tok d = next(P);
        int64_t dv;
        int k;
        if (parse_number(&d, 0, &dv, &k) || k || dv < 0) {
            perr(P, &d, "bad array size");
            return -1;
        }
        count *= (size_t)dv;
        if (!expect(P, ']', "']'"))
            return -1;
    }
    ash_ptx_var *v;
    int vi = var_new(P, &v);
    if (vi < 0)
        return -1;
    v->name = dupn(nm.s, nm.n);
    v->space = space;
    v->type = type;
    v->size = (size_t)esz * count;
    v->align = align ? align : (size_t)(esz ? esz / vecn : 1);
    v->is_extern = is_extern || unsized;
    v->func = func;
    v->is_entry_param = kind == 1;
    v->is_func_param = kind == 2;
    if (!v->name) {
        perr(P, NULL, "out of memory");
        return -1;
    }
    (void)is_ptr;
    if (accept(P, '=')) {
        if (unsized) {
            /* `x[] = {...}`: size from the initialiser; count elements first on a copy */
            parser save = *P;
            int depth = 0;
            size_t n = 0;
            for (;;) {
                tok c = next(P);
                if (c.kind == '{') depth++;
                else if (c.kind == '}') depth--;
                else if (c.kind == ',' || c.kind == '(' || c.kind == ')' || c.kind == '+' || c.kind == '-') {}
                else if (c.kind == TK_WORD && !is(&c, "generic")) {
                    /* an offset after '+' is not an element */
                    n++;
                }
                if (c.kind == ';' || c.kind == TK_EOF || (depth == 0 && c.kind != '{' && peek(P)->kind == ';'))
                    break;
            }
            int line = P->line;
            const char *ls = P->line_start;
            *P = save;
            (void)line;
            (void)ls;
            count = n;
            v = &P->m->vars[vi];
            v->size = (size_t)esz * count;
            v->is_extern = 0;
        }
        v->init = calloc(1, v->size ? v->size : 1);
        if (!v->init) {
            perr(P, NULL, "out of memory");
            return -1;
        }
        size_t idx = 0;
        if (parse_init(P, v, esz / vecn, &idx, count * (size_t)vecn))
            return -1;
    }
    if (func >= 0 && (kind == 0 || kind == 2)) {
        if (scope_push(P, P->m->vars[vi].name, nm.n, 0, vi, 1))
            return -1;
    }
    *out = vi;
    return 0;
}

/* ---------------------------------------------------------------- instructions */
typedef struct mod_ent {
    const char *s;
    int what, val;
} mod_ent;
enum { M_TYPE = 1, M_SPACE, M_RND, M_FLAG, M_CMP, M_SUB, M_VEC, M_IGNORE };

static const mod_ent mods[] = {
    {"global", M_SPACE, ASH_PTX_S_GLOBAL}, {"shared", M_SPACE, ASH_PTX_S_SHARED},
    {"shared::cta", M_SPACE, ASH_PTX_S_SHARED}, {"local", M_SPACE, ASH_PTX_S_LOCAL},
    {"const", M_SPACE, ASH_PTX_S_CONST}, {"param", M_SPACE, ASH_PTX_S_PARAM},
    {"param::entry", M_SPACE, ASH_PTX_S_PARAM}, {"param::func", M_SPACE, ASH_PTX_S_PARAM},
    {"rn", M_RND, ASH_PTX_R_RN}, {"rz", M_RND, ASH_PTX_R_RZ}, {"rm", M_RND, ASH_PTX_R_RM},
    {"rp", M_RND, ASH_PTX_R_RP}, {"rni", M_RND, ASH_PTX_R_RNI}, {"rzi", M_RND, ASH_PTX_R_RZI},
    {"rmi", M_RND, ASH_PTX_R_RMI}, {"rpi", M_RND, ASH_PTX_R_RPI}, {"rna", M_RND, ASH_PTX_R_RNA},
    {"ftz", M_FLAG, ASH_PTX_F_FTZ}, {"sat", M_FLAG, ASH_PTX_F_SAT}, {"approx", M_FLAG, ASH_PTX_F_APPROX},
    {"full", M_FLAG, ASH_PTX_F_FULL}, {"wide", M_FLAG, ASH_PTX_F_WIDE}, {"uni", M_FLAG, ASH_PTX_F_UNI},
    {"nc", M_FLAG, ASH_PTX_F_NC}, {"volatile", M_FLAG, ASH_PTX_F_VOLATILE}, {"cc", M_FLAG, ASH_PTX_F_CC},
    {"wrap", M_FLAG, ASH_PTX_F_WRAP}, {"clamp", M_FLAG, ASH_PTX_F_CLAMP}, {"aligned", M_FLAG, ASH_PTX_F_ALIGNED},
    {"shiftamt", M_FLAG, ASH_PTX_F_SHIFTAMT}, {"relu", M_FLAG, ASH_PTX_F_RELU}, {"noftz", M_FLAG, ASH_PTX_F_NOFTZ},
    {"to", M_FLAG, ASH_PTX_F_TO}, {"sync", M_FLAG, ASH_PTX_F_SYNC}, {"satfinite", M_FLAG, ASH_PTX_F_SATFINITE},
    {"xorsign", M_FLAG, ASH_PTX_F_XORSIGN}, {"NaN", M_FLAG, ASH_PTX_F_NAN},
    {"v2", M_VEC, 2}, {"v4", M_VEC, 4},
    /* cache, eviction, memory-order and scope qualifiers: no effect on a host's coherent memory
     * (atomics and fences are sequentially consistent here, which is stronger than any of them) */
    {"ca", M_IGNORE, 0}, {"cg", M_IGNORE, 0}, {"cs", M_IGNORE, 0}, {"lu", M_IGNORE, 0},
    {"cv", M_IGNORE, 0}, {"wb", M_IGNORE, 0}, {"wt", M_IGNORE, 0}, {"relaxed", M_IGNORE, 0},
    {"acquire", M_IGNORE, 0}, {"release", M_IGNORE, 0}, {"acq_rel", M_IGNORE, 0}, {"sc", M_IGNORE, 0},
    {"weak", M_IGNORE, 0}, {"cta", M_IGNORE, 0}, {"gpu", M_IGNORE, 0}, {"sys", M_IGNORE, 0},
    {"gl", M_IGNORE, 0}, {"L1::evict_last", M_IGNORE, 0}, {"L1::evict_first", M_IGNORE, 0},
    {"L1::evict_normal", M_IGNORE, 0}, {"L1::evict_unchanged", M_IGNORE, 0},
    {"L1::no_allocate", M_IGNORE, 0}, {"L2::evict_last", M_IGNORE, 0}, {"L2::evict_first", M_IGNORE, 0},
    {"L2::evict_normal", M_IGNORE, 0}, {"L2::64B", M_IGNORE, 0}, {"L2::128B", M_IGNORE, 0},
    {"L2::256B", M_IGNORE, 0}, {"L1", M_IGNORE, 0}, {"L2", M_IGNORE, 0},
};

static const struct { const char *s; int v; } cmps[] = {
    {"eq", ASH_PTX_C_EQ}, {"ne", ASH_PTX_C_NE}, {"lt", ASH_PTX_C_LT}, {"le", ASH_PTX_C_LE},
    {"gt", ASH_PTX_C_GT}, {"ge", ASH_PTX_C_GE}, {"lo", ASH_PTX_C_LO}, {"ls", ASH_PTX_C_LS},
    {"hi", ASH_PTX_C_HI}, {"hs", ASH_PTX_C_HS}, {"equ", ASH_PTX_C_EQU}, {"neu", ASH_PTX_C_NEU},
    {"ltu", ASH_PTX_C_LTU}, {"leu", ASH_PTX_C_LEU}, {"gtu", ASH_PTX_C_GTU}, {"geu", ASH_PTX_C_GEU},
    {"num", ASH_PTX_C_NUM}, {"nan", ASH_PTX_C_NAN},
};

static const struct { const char *s; int v; } subs[] = {
    {"add", ASH_PTX_A_ADD}, {"min", ASH_PTX_A_MIN}, {"max", ASH_PTX_A_MAX}, {"inc", ASH_PTX_A_INC},
    {"dec", ASH_PTX_A_DEC}, {"cas", ASH_PTX_A_CAS}, {"exch", ASH_PTX_A_EXCH}, {"and", ASH_PTX_A_AND},
    {"or", ASH_PTX_A_OR}, {"xor", ASH_PTX_A_XOR}, {"up", ASH_PTX_SH_UP}, {"down", ASH_PTX_SH_DOWN},
    {"bfly", ASH_PTX_SH_BFLY}, {"idx", ASH_PTX_SH_IDX}, {"all", ASH_PTX_V_ALL}, {"any", ASH_PTX_V_ANY},
    {"uni", ASH_PTX_V_UNI}, {"ballot", ASH_PTX_V_BALLOT}, {"arrive", ASH_PTX_B_ARRIVE},
    {"popc", ASH_PTX_B_RED_POPC}, {"warp", ASH_PTX_B_WARP}, {"l", ASH_PTX_SHF_L}, {"r", ASH_PTX_SHF_R},
    {"f4e", ASH_PTX_P_F4E}, {"b4e", ASH_PTX_P_B4E}, {"rc8", ASH_PTX_P_RC8}, {"ecl", ASH_PTX_P_ECL},
    {"ecr", ASH_PTX_P_ECR}, {"rc16", ASH_PTX_P_RC16}, {"finite", ASH_PTX_T_FINITE},
    {"infinite", ASH_PTX_T_INFINITE}, {"number", ASH_PTX_T_NUMBER}, {"notanumber", ASH_PTX_T_NOTANUMBER},
    {"normal", ASH_PTX_T_NORMAL}, {"subnormal", ASH_PTX_T_SUBNORMAL},
};

static int lookup_tab_cmp(const char *s, int n)
{
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
        if ((int)strlen(cmps[i].s) == n && !memcmp(cmps[i].s, s, (size_t)n))
            return cmps[i].v;
    return 0;
}

static int lookup_tab_sub(const char *s, int n)
{
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if ((int)strlen(subs[i].s) == n && !memcmp(subs[i].s, s, (size_t)n))
            return subs[i].v;
    return 0;
}

/* a modifier of tex / tld4 / txq / suld / sust / suq: 1 taken (geometry, query, mode), 0 not one
 * of theirs (types, .v4 follow the common path), -1 one of theirs that is not supported */
static int tex_word(int op, const char *ms, int mn, ash_ptx_insn *in)
{
    static const struct { const char *s; int geom; } geoms[] = {
        {"1d", ASH_PTX_G_1D}, {"2d", ASH_PTX_G_2D}, {"3d", ASH_PTX_G_3D}, {"a1d", ASH_PTX_G_A1D},
        {"a2d", ASH_PTX_G_A2D}, {"cube", 0}, {"acube", 0}, {"2dms", 0}, {"a2dms", 0},
    };
    static const struct { const char *s; int sub, ops; } words[] = {   /* ops: 1 tex, 2 tld4, 4 txq/suq, 8 su */
        {"level", ASH_PTX_TX_LEVEL, 1}, {"grad", ASH_PTX_TX_GRAD, 1},
        {"r", ASH_PTX_TX_R, 2}, {"g", ASH_PTX_TX_G, 2}, {"b", ASH_PTX_TX_B, 2}, {"a", ASH_PTX_TX_A, 2},
        {"width", ASH_PTX_TQ_WIDTH, 4}, {"height", ASH_PTX_TQ_HEIGHT, 4}, {"depth", ASH_PTX_TQ_DEPTH, 4},
        {"array_size", ASH_PTX_TQ_ARRAY_SIZE, 4}, {"normalized_coords", ASH_PTX_TQ_NORMALIZED, 4},
        {"filter_mode", ASH_PTX_TQ_FILTER, 4}, {"addr_mode_0", ASH_PTX_TQ_ADDR0, 4},
        {"addr_mode_1", ASH_PTX_TQ_ADDR1, 4}, {"addr_mode_2", ASH_PTX_TQ_ADDR2, 4},
        {"num_mipmap_levels", ASH_PTX_TQ_MIPLEVELS, 4},
        {"trap", ASH_PTX_SU_TRAP, 8}, {"clamp", ASH_PTX_SU_CLAMP, 8}, {"zero", ASH_PTX_SU_ZERO, 8},
    };
    int cls = op == ASH_PTX_OP_TEX ? 1 : op == ASH_PTX_OP_TLD4 ? 2
            : op == ASH_PTX_OP_TXQ || op == ASH_PTX_OP_SUQ ? 4 : 8;
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        if ((int)strlen(geoms[i].s) == mn && !memcmp(geoms[i].s, ms, (size_t)mn)) {
            if (!geoms[i].geom || in->geom)
                return -1;
            in->geom = (uint8_t)geoms[i].geom;
            return 1;
        }
    if (cls == 8 && mn == 1 && ms[0] == 'b')
        return 1;   /* suld.b / sust.b: unformatted (.p, formatted, is not supported) */
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if ((int)strlen(words[i].s) == mn && !memcmp(words[i].s, ms, (size_t)mn) && (words[i].ops & cls)) {
            if (in->sub)
                return -1;
            in->sub = (uint8_t)words[i].sub;
            return 1;
        }
    return 0;
}

/* a modifier of wmma/mma/ldmatrix/stmatrix: 1 if it is one of theirs (in->shape / mma / types set) */
static int mma_modifier(int op, const char *ms, int mn, ash_ptx_insn *in)
{
    static const char *const shapes[ASH_PTX_MMA_NSHAPES] = {
        "", "m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8", "m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16",
        "m16n8k32", "m8n8k16", "m8n8",
    };
    for (int i = 1; i < ASH_PTX_MMA_NSHAPES; i++)
        if ((int)strlen(shapes[i]) == mn && !memcmp(shapes[i], ms, (size_t)mn) && !in->shape) {
            in->shape = (uint8_t)i;
            return 1;
        }
    int ty = type_of(ms, mn);
    if (ty) {
        uint8_t *slot = !in->type ? &in->type : !in->type2 ? &in->type2 : !in->type3 ? &in->type3
                      : !in->type4 ? &in->type4 : NULL;
        if (!slot)
            return 0;
        *slot = (uint8_t)ty;
        return 1;
    }
    if (mn == 3 && (!memcmp(ms, "row", 3) || !memcmp(ms, "col", 3))) {
        int k = (in->mma & ASH_PTX_MMA_NLAY) >> 6;
        if (k >= 2)
            return 0;
        if (ms[0] == 'c')
            in->mma |= k ? ASH_PTX_MMA_BCOL : ASH_PTX_MMA_ACOL;
        in->mma = (uint8_t)(in->mma + ASH_PTX_MMA_NLAY1);
        return 1;
    }
    if (op == ASH_PTX_OP_WMMA && !(in->mma & ASH_PTX_MMA_FRAG)) {
        static const char *const frags[] = {"", "a", "b", "c", "d", "mma"};
        for (int i = 1; i < 6; i++)
            if ((int)strlen(frags[i]) == mn && !memcmp(frags[i], ms, (size_t)mn)) {
                in->mma |= (uint8_t)i;
                return 1;
            }
        if ((mn == 4 && (!memcmp(ms, "load", 4))) || (mn == 5 && !memcmp(ms, "store", 5)))
            return 1;   /* the fragment letter that follows says which */
    }
    if ((op == ASH_PTX_OP_LDMATRIX || op == ASH_PTX_OP_STMATRIX) && mn == 2 && ms[0] == 'x' &&
        (ms[1] == '1' || ms[1] == '2' || ms[1] == '4') && !in->vec) {
        in->vec = (uint8_t)(ms[1] - '0');
        return 1;
    }
    if ((op == ASH_PTX_OP_LDMATRIX || op == ASH_PTX_OP_STMATRIX) && mn == 5 && !memcmp(ms, "trans", 5)) {
        in->mma |= ASH_PTX_MMA_TRANS;
        return 1;
    }
    return 0;
}

/* decode the opcode word into in->op and modifiers; 0 if a part is unknown (op stays NONE) */
static int decode_opcode(const tok *t, ash_ptx_insn *in)
{
    const char *s = t->s, *end = t->s + t->n;
    int op = 0, bn = 0;
    for (int i = 1; i < ASH_PTX_OP_COUNT; i++) {   /* the longest name that is the word or its prefix up to a dot */
        const char *nm = ash_ptx_opcode_name(i);
        int nl = (int)strlen(nm);
        if (nl > bn && nl <= t->n && !memcmp(nm, s, (size_t)nl) && (nl == t->n || s[nl] == '.')) {
            op = i;
            bn = nl;
        }
    }
    if (!op)
        return 0;
    const char *dot = bn < t->n ? s + bn : NULL;
    int ok = 1;
    const char *p = dot;
    while (p && p < end) {
        const char *q = p + 1;
        while (q < end && *q != '.')
            q++;
        const char *ms = p + 1;
        int mn = (int)(q - ms);
        p = q < end ? q : NULL;
        if ((op == ASH_PTX_OP_WMMA || op == ASH_PTX_OP_MMA || op == ASH_PTX_OP_LDMATRIX ||
             op == ASH_PTX_OP_STMATRIX) && mma_modifier(op, ms, mn, in))
            continue;
        int ty = type_of(ms, mn);
        if (ty) {
            if (!in->type)
                in->type = (uint8_t)ty;
            else if (!in->type2)
                in->type2 = (uint8_t)ty;
            else
                ok = 0;
            continue;
        }
        /* opcode-specific words first */
        if (op == ASH_PTX_OP_SETP || op == ASH_PTX_OP_SET) {
            int c = lookup_tab_cmp(ms, mn);
            if (c && !in->cmp) {
                in->cmp = (uint8_t)c;
                continue;
            }
            int b = lookup_tab_sub(ms, mn);
            if (b == ASH_PTX_A_AND || b == ASH_PTX_A_OR || b == ASH_PTX_A_XOR) {
                in->bop = (uint8_t)b;
                continue;
            }
        }
        if ((op == ASH_PTX_OP_MUL || op == ASH_PTX_OP_MAD || op == ASH_PTX_OP_MUL24 || op == ASH_PTX_OP_MAD24 ||
             op == ASH_PTX_OP_MADC || op == ASH_PTX_OP_DP2A) &&
            mn == 2 && (!memcmp(ms, "hi", 2) || !memcmp(ms, "lo", 2))) {
            in->flags |= ms[0] == 'h' ? ASH_PTX_F_HI : ASH_PTX_F_LO;
            continue;
        }
        if (op == ASH_PTX_OP_BAR && mn == 3 && !memcmp(ms, "red", 3))
            continue;   /* bar.red.popc / .and / .or: the operation follows */
        if (op == ASH_PTX_OP_BAR || op == ASH_PTX_OP_BARRIER) {
            int b = lookup_tab_sub(ms, mn);
            if (b == ASH_PTX_A_AND) { in->sub = ASH_PTX_B_RED_AND; continue; }
            if (b == ASH_PTX_A_OR) { in->sub = ASH_PTX_B_RED_OR; continue; }
        }
        if (op == ASH_PTX_OP_MATCH && mn == 3 && (!memcmp(ms, "any", 3) || !memcmp(ms, "all", 3))) {
            in->sub = ms[1] == 'n' ? ASH_PTX_M_ANY : ASH_PTX_M_ALL;
            continue;
        }
        if (op == ASH_PTX_OP_MIN || op == ASH_PTX_OP_MAX) {
            if (mn == 3 && !memcmp(ms, "abs", 3))
                continue;   /* with xorsign */
        }
        if (op == ASH_PTX_OP_VOTE && mn == 3 && !memcmp(ms, "uni", 3)) {   /* not the .uni of bra/call */
            in->sub = ASH_PTX_V_UNI;
            continue;
        }
        if (op >= ASH_PTX_OP_TEX && op <= ASH_PTX_OP_SUQ) {
            int v = tex_word(op, ms, mn, in);
            if (v > 0)
                continue;
            if (v < 0) {
                ok = 0;
                continue;
            }
        }
        if (op == ASH_PTX_OP_CVT && mn == 4 && !memcmp(ms, "pack", 4)) {
            in->flags |= ASH_PTX_F_PACK;
            continue;
        }
        if (op == ASH_PTX_OP_FENCE && ((mn == 5 && !memcmp(ms, "proxy", 5)) || (mn == 5 && !memcmp(ms, "async", 5)) ||
                                       (mn == 5 && !memcmp(ms, "alias", 5)) ||
                                       (mn == 13 && !memcmp(ms, "mbarrier_init", 13)) ||
                                       (mn == 7 && !memcmp(ms, "cluster", 7))))
            continue;   /* fence.proxy.async / .alias, fence.mbarrier_init, .cluster: one coherent memory here */
        if (op >= ASH_PTX_OP_CPASYNC && op < ASH_PTX_OP_BRX) {   /* their own words (sub bits) */
            static const struct { const char *s; unsigned bit; } mb[] = {
                {"noinc", ASH_PTX_MB_NOINC}, {"noComplete", ASH_PTX_MB_NOCOMPLETE}, {"parity", ASH_PTX_MB_PARITY},
                {"expect_tx", ASH_PTX_MB_EXPECT_TX}, {"cluster", ASH_PTX_MB_CLUSTER},
                {"shared::cluster", ASH_PTX_MB_CLUSTER}, {"cg", ASH_PTX_MB_CG}, {"L2::cache_hint", 0},
                {"mbarrier::complete_tx::bytes", ASH_PTX_MB_COMPLETE_TX}, {"bulk_group", ASH_PTX_MB_BULK_GROUP},
                {"read", 0},
            };
            int hit = 0;
            for (size_t i = 0; i < sizeof mb / sizeof mb[0] && !hit; i++)
                if ((int)strlen(mb[i].s) == mn && !memcmp(mb[i].s, ms, (size_t)mn)) {
                    in->sub |= (uint8_t)mb[i].bit;
                    if (mb[i].bit == ASH_PTX_MB_CLUSTER && ms[0] == 's')
                        in->space = ASH_PTX_S_SHARED;
                    hit = 1;
                }
            if (hit)
                continue;
        }
        int done = 0;
        for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++)
            if ((int)strlen(mods[i].s) == mn && !memcmp(mods[i].s, ms, (size_t)mn)) {
                switch (mods[i].what) {
                case M_SPACE: in->space = (uint8_t)mods[i].val; break;
                case M_RND: in->rnd = (uint8_t)mods[i].val; break;
                case M_FLAG: in->flags |= (uint32_t)mods[i].val; break;
                case M_VEC: in->vec = (uint8_t)mods[i].val; break;
                default: break;
                }
                done = 1;
                break;
            }
        if (done)
            continue;
        int b = lookup_tab_sub(ms, mn);
        if (b && !in->sub && (op == ASH_PTX_OP_ATOM || op == ASH_PTX_OP_RED || op == ASH_PTX_OP_SHFL ||
                              op == ASH_PTX_OP_VOTE || op == ASH_PTX_OP_BAR || op == ASH_PTX_OP_BARRIER ||
                              op == ASH_PTX_OP_SHF || op == ASH_PTX_OP_PRMT || op == ASH_PTX_OP_TESTP ||
                              op == ASH_PTX_OP_CREDUX)) {
            in->sub = (uint8_t)b;
            continue;
        }
        ok = 0;
    }
    if (!ok)
        return 0;
    /* wmma.mma on f16 names two types (.dtype.ctype): A and B are f16 */
    if (op == ASH_PTX_OP_WMMA && (in->mma & ASH_PTX_MMA_FRAG) == ASH_PTX_MMA_OP && in->type2 && !in->type3) {
        in->type4 = in->type2;
        in->type2 = in->type3 = ASH_PTX_T_F16;
    }
    in->op = (uint16_t)op;
    if (!in->vec)
        in->vec = 1;
    return 1;
}

static int add_fixup(parser *P, int insn, int opnd, const tok *t)
{
    GROW(P, P->fix, P->capfix, P->nfix + 1);
    P->fix[P->nfix++] = (fixup){insn, opnd, t->s, t->n, t->line, t->col};
    return 0;
}

static int parse_reg_operand(parser *P, const tok *t)
{
    int r = reg_lookup(P, t->s, t->n);
    if (r < 0)
        perr(P, t, "undeclared register");
    return r;
}

/* one operand; insn index for label fixups */
static int parse_operand(parser *P, ash_ptx_insn *in, int k, int ii)
{
    ash_ptx_opnd *o = &in->o[k];
    o->reg = -1;
    o->sym = -1;
    tok t = next(P);
    if (t.kind == '[') {
        o->kind = ASH_PTX_K_MEM;
        tok b = next(P);
        int neg = 0;
        if (b.kind == TK_WORD && b.s[0] == '%') {
            if ((o->reg = parse_reg_operand(P, &b)) < 0)
                return -1;
        } else if (b.kind == TK_WORD && isdigit((unsigned char)b.s[0])) {
            int kind;
            if (parse_number(&b, 0, &o->imm, &kind) || kind) {
                perr(P, &b, "bad address");
                return -1;
            }
        } else if (b.kind == TK_WORD && reg_lookup(P, b.s, b.n) >= 0) {
            o->reg = reg_lookup(P, b.s, b.n);
        } else if (b.kind == TK_WORD) {
            if ((o->sym = var_lookup(P, b.s, b.n)) < 0) {
                perr(P, &b, "unknown symbol in address");
                return -1;
            }
        } else {
            perr(P, &b, "bad address operand");
            return -1;
        }
        if (peek(P)->kind == '+' || peek(P)->kind == '-') {
            neg = next(P).kind == '-';
            if (peek(P)->kind == '-') {
                next(P);
                neg = !neg;
            }
            tok n = next(P);
            int64_t off;
            int kind;
            if (parse_number(&n, neg, &off, &kind) || kind) {
                perr(P, &n, "bad address offset");
                return -1;
            }
            o->imm += off;
        }
        if (o->reg >= 0 && ash_ptx_type_size(P->m->funcs[P->fn].reg_type[o->reg]) == 4)
            o->n = 32;   /* a 32-bit address register: the address is its value (+ offset) mod 2^32 */
        int more = 0;
        if (in->op >= ASH_PTX_OP_TEX && in->op <= ASH_PTX_OP_SUQ && accept(P, ',')) {
            /* [handle, {coordinates}] of tex / tld4 / suld / sust: the coordinates are operand k + 1 */
            if (k + 1 >= ASH_PTX_MAX_OPNDS || parse_operand(P, in, k + 1, ii) < 0)
                return -1;
            if (in->o[k + 1].kind != ASH_PTX_K_VEC && in->o[k + 1].kind != ASH_PTX_K_REG) {
                perr(P, peek(P), "expected the coordinates");
                return -1;
            }
            if (peek(P)->kind == ',') {   /* [tex, sampler, coordinates]: independent mode, not decoded */
                in->op = ASH_PTX_OP_NONE;
                skip_to_semicolon(P);
                return 2;
            }
            more = 1;
        }
        return expect(P, ']', "']' closing the address") ? more : -1;
    }
    if (t.kind == '{') {
        o->kind = ASH_PTX_K_VEC;
        /* tensor-core fragments hold up to 8 registers (kept in the module's vregs past 4) */
        int longok = in->op == ASH_PTX_OP_WMMA || in->op == ASH_PTX_OP_MMA;
        int32_t all[8];
        do {
            tok e = next(P);
            if (o->n >= (longok ? 8 : 4)) {
                perr(P, &e, longok ? "vector operand longer than 8" : "vector operand longer than 4");
                return -1;
            }
            if (is(&e, "_")) {
                all[o->n] = -1;
                if (o->n < 4)
                    o->vec[o->n] = -1;
                o->n++;
                continue;
            }
            if (e.kind == TK_WORD && isdigit((unsigned char)e.s[0])) {   /* {0, %rs1} in inline asm */
                int kind;
                if (o->n >= 4) {
                    perr(P, &e, "immediate past the 4th element of a vector operand");
                    return -1;
                }
                int texop = in->op >= ASH_PTX_OP_TEX && in->op <= ASH_PTX_OP_SUQ;
                if (parse_number(&e, 0, &o->vimm[o->n], &kind) || (kind && !texop)) {
                    perr(P, &e, "bad immediate in the vector operand");
                    return -1;
                }
                if (kind == 2 || kind == 3) {   /* a texture coordinate written as a double: its f32 bits */
                    double d;
                    memcpy(&d, &o->vimm[o->n], 8);
                    float f = (float)d;
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    o->vimm[o->n] = u;
                }
                all[o->n] = -2;
                o->vec[o->n++] = -2;
                continue;
            }
            int r = e.kind == TK_WORD ? parse_reg_operand(P, &e) : -1;
            if (r < 0) {
                if (!P->failed)
                    perr(P, &e, "expected a register in the vector operand");
                return -1;
            }
            all[o->n] = r;
            if (o->n < 4)
                o->vec[o->n] = r;
            o->n++;
        } while (accept(P, ','));
        if (o->n > 4) {
            ash_ptx_module *m = P->m;
            int32_t *nv = realloc(m->vregs, sizeof *nv * (size_t)(m->nvregs + o->n));
            if (!nv) {
                perr(P, &t, "out of memory");
                return -1;
            }
            m->vregs = nv;
            o->imm = m->nvregs;
            memcpy(m->vregs + m->nvregs, all, sizeof *nv * o->n);
            m->nvregs += o->n;
        }
        return expect(P, '}', "'}' closing the vector operand") ? 0 : -1;
    }
    if (t.kind == '!') {
        t = next(P);
        o->neg = 1;
    }
    int neg = 0;
    if (t.kind == '-') {
        neg = 1;
        t = next(P);
    }
    if (t.kind != TK_WORD) {
        perr(P, &t, "bad operand");
        return -1;
    }
    if (isdigit((unsigned char)t.s[0])) {
        int kind;
        o->kind = ASH_PTX_K_IMM;
        if (parse_number(&t, neg, &o->imm, &kind)) {
            perr(P, &t, "bad number");
            return -1;
        }
        o->n = (uint8_t)kind;
        return 0;
    }
    if (neg) {
        perr(P, &t, "'-' before a non-number operand");
        return -1;
    }
    if (is(&t, "_")) {
        o->kind = ASH_PTX_K_SINK;
        return 0;
    }
    int sr = sreg_of(&t);
    if (sr >= 0) {
        o->kind = ASH_PTX_K_SREG;
        o->sreg = (uint8_t)sr;
        return 0;
    }
    if (t.s[0] == '%') {
        o->kind = ASH_PTX_K_REG;
        o->reg = parse_reg_operand(P, &t);
        return o->reg < 0 ? -1 : 0;
    }
    int rr = reg_lookup(P, t.s, t.n);   /* registers need no '%': inline asm declares `p`, `q` */
    if (rr >= 0) {
        o->kind = ASH_PTX_K_REG;
        o->reg = rr;
        return 0;
    }
    if (in->op == ASH_PTX_OP_BRA) {
        o->kind = ASH_PTX_K_LABEL;
        return add_fixup(P, ii, k, &t);
    }
    if (in->op == ASH_PTX_OP_BRX && k == 1) {   /* the .branchtargets list, declared before (PTX ISA) */
        for (int j = 0; j < P->ntlists; j++)
            if (P->tlists[j].n == t.n && !memcmp(P->tlists[j].name, t.s, (size_t)t.n)) {
                o->kind = ASH_PTX_K_LABEL;
                o->imm = P->tlists[j].insn;
                o->vimm[0] = (j + 1 < P->ntlists ? P->tlists[j + 1].insn : P->m->ntargets) - P->tlists[j].insn;
                return 0;
            }
        perr(P, &t, "brx.idx: not a .branchtargets list declared before it in this function");
        return -1;
    }
    int v = var_lookup(P, t.s, t.n);
    if (v >= 0) {
        o->kind = ASH_PTX_K_SYM;
        o->sym = v;
        if (peek(P)->kind == '+') {   /* mov %rd, sym+8 */
            next(P);
            tok n = next(P);
            int kind;
            if (parse_number(&n, 0, &o->imm, &kind) || kind) {
                perr(P, &n, "bad symbol offset");
                return -1;
            }
        }
        return 0;
    }
    int f = func_lookup(P->m, P->unit, t.s, t.n);
    if (f >= 0) {
        o->kind = ASH_PTX_K_FUNC;
        o->sym = f;
        return 0;
    }
    perr(P, &t, "unknown symbol");
    return -1;
}

/* call[.uni] [(ret, ...),] func [, (arg, ...)] [, proto]; */
static int parse_call(parser *P, ash_ptx_insn *in)
{
    int rets[16], nret = 0, args[32], narg = 0;
    if (accept(P, '(')) {
        do {
            tok r = next(P);
            int v = r.kind == TK_WORD ? var_lookup(P, r.s, r.n) : -1;
            if (v < 0 || nret >= 16) {
                perr(P, &r, "bad call return parameter");
                return -1;
            }
            rets[nret++] = v;
        } while (accept(P, ','));
        if (!expect(P, ')', "')'") || !expect(P, ',', "','"))
            return -1;
    }
    tok f = next(P);
    int fi = f.kind == TK_WORD ? func_lookup(P->m, P->unit, f.s, f.n) : -1;
    int freg = fi < 0 && f.kind == TK_WORD ? reg_lookup(P, f.s, f.n) : -1;
    if (fi < 0 && freg < 0) {
        perr(P, &f, "bad call target");
        return -1;
    }
    /* an indirect call (a function pointer, a virtual function): o[0] is the register */
    in->o[0] = fi >= 0 ? (ash_ptx_opnd){.kind = ASH_PTX_K_FUNC, .sym = fi, .reg = -1}
                       : (ash_ptx_opnd){.kind = ASH_PTX_K_REG, .sym = -1, .reg = freg};
    in->nops = 1;
    if (accept(P, ',')) {
        if (!expect(P, '(', "'(' before the call arguments"))
            return -1;
        if (!accept(P, ')')) {
            do {
                tok a = next(P);
                int v = a.kind == TK_WORD ? var_lookup(P, a.s, a.n) : -1;
                if (v < 0 || narg >= 32) {
                    perr(P, &a, "bad call argument");
                    return -1;
                }
                args[narg++] = v;
            } while (accept(P, ','));
            if (!expect(P, ')', "')'"))
                return -1;
        }
        if (accept(P, ',')) {   /* prototype: indirect calls only */
            next(P);
        }
    }
    if (!expect(P, ';', "';' after the call"))
        return -1;
    ash_ptx_module *m = P->m;
    GROW(P, m->callvars, P->caps_callvars, m->ncallvars + nret + narg);
    in->call_args = m->ncallvars;
    for (int i = 0; i < nret; i++)
        m->callvars[m->ncallvars++] = rets[i];
    for (int i = 0; i < narg; i++)
        m->callvars[m->ncallvars++] = args[i];
    in->call_nret = (uint8_t)nret;
    in->call_nargs = (uint8_t)narg;
    P->m->funcs[P->fn].has_calls = 1;
    return 1;
}

/* immediates written as floats: convert to the instruction's float width */
static void fix_immediates(ash_ptx_insn *in)
{
    int t = in->type;
    if (in->op == ASH_PTX_OP_CVT || in->op == ASH_PTX_OP_SET)
        t = in->type2 ? in->type2 : in->type;
    for (int k = 0; k < in->nops; k++) {
        ash_ptx_opnd *o = &in->o[k];
        if (o->kind != ASH_PTX_K_IMM || !o->n)
            continue;
        if (t == ASH_PTX_T_F64 && o->n == 1) {
            uint32_t u = (uint32_t)o->imm;
            float f;
            memcpy(&f, &u, 4);
            double d = f;
            memcpy(&o->imm, &d, 8);
        } else if (t != ASH_PTX_T_F64 && (o->n == 2 || o->n == 3)) {
            double d;
            memcpy(&d, &o->imm, 8);
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, 4);
            o->imm = u;
        }
        o->n = 0;
    }
}

static int insn_new(parser *P, ash_ptx_insn **out)
{
    GROW(P, P->m->insns, P->caps_insns, P->m->ninsns + 1);
    ash_ptx_insn *in = &P->m->insns[P->m->ninsns++];
    memset(in, 0, sizeof *in);
    in->guard = -1;
    in->func = P->fn;
    *out = in;
    return P->m->ninsns - 1;
}

static int parse_insn(parser *P, tok first)
{
    ash_ptx_insn *in;
    int guard = -1, gneg = 0, gline = first.line;
    if (first.kind == '@') {
        tok g = next(P);
        if (g.kind == '!') {
            gneg = 1;
            g = next(P);
        }
        if (g.kind != TK_WORD || (guard = reg_lookup(P, g.s, g.n)) < 0) {
            perr(P, &g, "bad guard predicate");
            return -1;
        }
        first = next(P);
    }
    if (first.kind != TK_WORD) {
        perr(P, &first, "expected an instruction, found");
        return -1;
    }
    int ii = insn_new(P, &in);
    if (ii < 0)
        return -1;
    in->guard = guard;
    in->guard_neg = (uint8_t)gneg;
    in->line = gline;
    if (!decode_opcode(&first, in)) {
        in->op = ASH_PTX_OP_NONE;
        skip_to_semicolon(P);
        return 0;
    }
    if (in->op == ASH_PTX_OP_CALL) {
        int r = parse_call(P, in);
        return r < 0 ? -1 : 0;
    }
    if (accept(P, ';'))
        return 0;
    int k = 0;
    do {
        if (k >= ASH_PTX_MAX_OPNDS) {
            perr(P, peek(P), "too many operands");
            return -1;
        }
        /* a predicate pair d|p (setp, shfl, vote...): the second is its own operand */
        int took = parse_operand(P, &P->m->insns[ii], k, ii);   /* 1: a texture's coordinates too */
        if (took < 0)
            return -1;
        if (took == 2)
            return 0;   /* skipped to its ';' (kept with op NONE) */
        k += 1 + took;
        if (peek(P)->kind == '|') {
            next(P);
            if (k >= ASH_PTX_MAX_OPNDS || parse_operand(P, &P->m->insns[ii], k, ii))
                return -1;
            P->m->insns[ii].o[k - 1].n = P->m->insns[ii].o[k - 1].n;   /* keep */
            P->m->insns[ii].flags |= ASH_PTX_F_BOOL_NEG;               /* marks "has |p" */
            k++;
        }
    } while (accept(P, ','));
    in = &P->m->insns[ii];
    in->nops = (uint8_t)k;
    fix_immediates(in);
    return expect(P, ';', "';' after the instruction") ? 0 : -1;
}

/* .reg [.vN] .type name[, name...]; names may be ranges `%r<N>` */
static int parse_reg_decl(parser *P)
{
    tok t = next(P);
    if (is(&t, ".v2") || is(&t, ".v4"))
        t = next(P);
    int type = t.kind == TK_WORD && t.s[0] == '.' ? type_of(t.s + 1, t.n - 1) : 0;
    if (!type) {
        perr(P, &t, "expected a register type, found");
        return -1;
    }
    ash_ptx_func *f = &P->m->funcs[P->fn];
    do {
        tok nm = next(P);
        if (nm.kind != TK_WORD) {
            perr(P, &nm, "expected a register name, found");
            return -1;
        }
        int count = 0;
        if (accept(P, '<')) {
            tok c = next(P);
            int64_t v;
            int kind;
            if (parse_number(&c, 0, &v, &kind) || kind || v < 0 || v > 1 << 20) {
                perr(P, &c, "bad register range");
                return -1;
            }
            count = (int)v;
            if (!expect(P, '>', "'>'"))
                return -1;
        }
        int n = count ? count : 1;
        int base = f->nregs;
        int cap = P->capregs;
        void *g1 = grow(f->reg_type, &cap, base + n, 1);
        if (!g1) {
            perr(P, NULL, "out of memory");
            return -1;
        }
        f->reg_type = g1;
        cap = P->capregs;
        void *g2 = grow(f->reg_name, &cap, base + n, sizeof(char *));
        if (!g2) {
            perr(P, NULL, "out of memory");
            return -1;
        }
        f->reg_name = g2;
        P->capregs = cap;
        for (int i = 0; i < n; i++) {
            f->reg_type[base + i] = (uint8_t)type;
            char buf[96];
            if (count)
                snprintf(buf, sizeof buf, "%.*s%d", nm.n > 80 ? 80 : nm.n, nm.s, i);
            else
                snprintf(buf, sizeof buf, "%.*s", nm.n > 80 ? 80 : nm.n, nm.s);
            f->reg_name[base + i] = strdup(buf);
        }
        f->nregs += n;
        if (scope_push(P, nm.s, nm.n, count, base, 0))
            return -1;
        if (count == 0 && reg_lookup(P, nm.s, nm.n) != base) {
            perr(P, &nm, "register declared twice");
            return -1;
        }
    } while (accept(P, ','));
    return expect(P, ';', "';' after .reg") ? 0 : -1;
}

static int resolve_labels(parser *P, int fi)
{
    for (int i = 0; i < P->nfix; i++) {
        fixup *x = &P->fix[i];
        int found = -1;
        for (int j = 0; j < P->nlabels; j++)
            if (P->labels[j].n == x->n && !memcmp(P->labels[j].name, x->name, (size_t)x->n)) {
                found = P->labels[j].insn;
                break;
            }
        if (found < 0) {
            tok t = {TK_WORD, x->name, x->n, x->line, x->col};
            perr(P, &t, "undefined label");
            return -1;
        }
        if (x->opnd < 0)
            P->m->targets[x->insn] = found;
        else
            P->m->insns[x->insn].o[x->opnd].imm = found;
    }
    (void)fi;
    P->nfix = 0;
    P->nlabels = 0;
    P->ntlists = 0;
    return 0;
}

/* a function body after '{' */
static int parse_body(parser *P, int fi)
{
    ash_ptx_func *f = &P->m->funcs[fi];
    f->first = P->m->ninsns;
    f->defined = 1;
    P->depth = 1;
    for (;;) {
        if (P->failed)
            return -1;
        tok t = next(P);
        if (t.kind == TK_EOF) {
            perr(P, &t, "function body not closed");
            return -1;
        }
        if (t.kind == '}') {
            scope_pop(P);
            P->depth--;
            if (P->depth == 0)
                break;
            continue;
        }
        if (t.kind == '{') {
            P->depth++;
            continue;
        }
        if (t.kind == TK_WORD && t.s[0] == '.') {
            if (is(&t, ".reg")) {
                if (parse_reg_decl(P))
                    return -1;
            } else if (is(&t, ".local") || is(&t, ".shared") || is(&t, ".param") || is(&t, ".const") ||
                       is(&t, ".global")) {
                int space = is(&t, ".local") ? ASH_PTX_S_LOCAL : is(&t, ".shared") ? ASH_PTX_S_SHARED
                          : is(&t, ".param") ? ASH_PTX_S_PARAM : is(&t, ".const") ? ASH_PTX_S_CONST
                          : ASH_PTX_S_GLOBAL;
                int vi;
                if (parse_var(P, space, 0, fi, 0, &vi))
                    return -1;
                ash_ptx_var *v = &P->m->vars[vi];
                f = &P->m->funcs[fi];
                if (space == ASH_PTX_S_LOCAL || space == ASH_PTX_S_PARAM) {
                    f->frame_size = align_up(f->frame_size, v->align < 8 ? 8 : v->align);
                    v->offset = f->frame_size;
                    f->frame_size += v->size;
                } else if (space == ASH_PTX_S_SHARED && !f->is_entry && !v->is_extern) {
                    /* a device function's static shared variable: one CTA offset that every kernel
                     * reaching the function shares, so it is laid out with the module's variables */
                    P->m->module_shared = align_up(P->m->module_shared, v->align);
                    v->offset = P->m->module_shared;
                    P->m->module_shared += v->size;
                } else if (space == ASH_PTX_S_SHARED) {
                    f->shared_size = align_up(f->shared_size, v->align);
                    v->offset = f->shared_size;
                    f->shared_size += v->size;
                }
                if (!expect(P, ';', "';' after the declaration"))
                    return -1;
            } else if (is(&t, ".loc") || is(&t, ".file")) {
                skip_line(P);
            } else if (is(&t, ".pragma")) {
                skip_to_semicolon(P);
            } else {
                perr(P, &t, "unknown directive in a function body");
                return -1;
            }
            continue;
        }
        if (t.kind == TK_WORD && peek(P)->kind == ':') {
            next(P);
            if (peek(P)->kind == TK_WORD && is(peek(P), ".callprototype")) {
                skip_to_semicolon(P);
                continue;
            }
            if (peek(P)->kind == TK_WORD && is(peek(P), ".branchtargets")) {   /* name: .branchtargets L1, L2; */
                next(P);
                ash_ptx_module *m = P->m;
                /* the lists of a function are consecutive in m->targets, so each one ends where the next starts */
                GROW(P, P->tlists, P->captlists, P->ntlists + 1);
                P->tlists[P->ntlists++] = (label_ent){t.s, t.n, m->ntargets};
                do {
                    tok l = next(P);
                    if (l.kind != TK_WORD) {
                        perr(P, &l, "expected a label in .branchtargets, found");
                        return -1;
                    }
                    GROW(P, m->targets, P->captargets, m->ntargets + 1);
                    m->targets[m->ntargets] = -1;
                    GROW(P, P->fix, P->capfix, P->nfix + 1);
                    P->fix[P->nfix++] = (fixup){m->ntargets, -1, l.s, l.n, l.line, l.col};
                    m->ntargets++;
                } while (accept(P, ','));
                if (!expect(P, ';', "';' after .branchtargets"))
                    return -1;
                continue;
            }
            GROW(P, P->labels, P->caplabels, P->nlabels + 1);
            P->labels[P->nlabels++] = (label_ent){t.s, t.n, P->m->ninsns};
            continue;
        }
        if (parse_insn(P, t))
            return -1;
        f = &P->m->funcs[fi];
    }
    f = &P->m->funcs[fi];
    f->count = P->m->ninsns - f->first;
    /* a body that falls off its end returns */
    ash_ptx_insn *in;
    if (insn_new(P, &in) < 0)
        return -1;
    in->op = ASH_PTX_OP_RET;
    in->line = P->line;
    P->m->funcs[fi].count++;
    return resolve_labels(P, fi);
}

/* (.param ..., .param ...) */
static int parse_params(parser *P, int fi, int entry, int is_ret)
{
    if (!expect(P, '(', "'('"))
        return -1;
    if (accept(P, ')'))
        return 0;
    do {
        tok t = next(P);
        if (!is(&t, ".param") && !is(&t, ".reg")) {
            perr(P, &t, "expected .param, found");
            return -1;
        }
        int vi;
        if (parse_var(P, ASH_PTX_S_PARAM, 0, fi, entry ? 1 : 2, &vi))
            return -1;
        ash_ptx_func *f = &P->m->funcs[fi];
        ash_ptx_var *v = &P->m->vars[vi];
        if (entry) {
            size_t al = v->align ? v->align : 1;
            size_t off = align_up(f->argsize, al);
            v->offset = off;
            f->argsize = off + v->size;
            ash_ptx_param *np = realloc(f->params, (size_t)(f->nparams + 1) * sizeof *np);
            if (!np) {
                perr(P, NULL, "out of memory");
                return -1;
            }
            f->params = np;
            f->params[f->nparams++] = (ash_ptx_param){off, v->size, al, vi,
                                                      v->size == 8 && v->type != ASH_PTX_T_F64};
            /* entry parameters are visible by name in the body */
            if (scope_push(P, v->name, (int)strlen(v->name), 0, vi, 1))
                return -1;
        } else {
            f->frame_size = align_up(f->frame_size, v->align < 8 ? 8 : v->align);
            v->offset = f->frame_size;
            f->frame_size += v->size;
            int *arr = is_ret ? f->rets : NULL;
            int n = is_ret ? f->nrets : f->nparams;
            if (is_ret) {
                arr = realloc(f->rets, (size_t)(n + 1) * sizeof *arr);
                if (!arr) {
                    perr(P, NULL, "out of memory");
                    return -1;
                }
                f->rets = arr;
                f->rets[f->nrets++] = vi;
            } else {
                ash_ptx_param *np = realloc(f->params, (size_t)(n + 1) * sizeof *np);
                if (!np) {
                    perr(P, NULL, "out of memory");
                    return -1;
                }
                f->params = np;
                f->params[f->nparams++] = (ash_ptx_param){v->offset, v->size, v->align, vi, 0};
            }
        }
    } while (accept(P, ','));
    return expect(P, ')', "')' closing the parameters") ? 0 : -1;
}

static int parse_function(parser *P, int entry, int is_extern)
{
    ash_ptx_module *m = P->m;
    int fi;
    P->nscope = 0;
    P->depth = 1;   /* parameters live in the function's scope */
    P->capregs = 0;
    /* .func (.param ret) name (params) */
    parser save = *P;
    int has_ret = 0;
    if (!entry && peek(P)->kind == '(')
        has_ret = 1;
    (void)save;
    GROW(P, m->funcs, P->caps_funcs, m->nfuncs + 1);
    fi = m->nfuncs++;
    ash_ptx_func *f = &m->funcs[fi];
    memset(f, 0, sizeof *f);
    f->is_entry = entry;
    f->is_extern = is_extern;
    f->unit = P->unit;
    f->linkage = P->linkage;
    f->line = P->line;
    P->fn = fi;
    if (has_ret && parse_params(P, fi, 0, 1))
        return -1;
    tok nm = next(P);
    if (nm.kind != TK_WORD) {
        perr(P, &nm, "expected a function name, found");
        return -1;
    }
    f = &m->funcs[fi];
    f->name = dupn(nm.s, nm.n);
    /* a second declaration (or the definition after a prototype) replaces the first */
    int prev = -1;
    for (int i = 0; i < fi; i++)
        if (m->funcs[i].unit == P->unit && !strcmp(m->funcs[i].name, f->name))
            prev = i;
    if (peek(P)->kind == '(' && parse_params(P, fi, entry, 0))
        return -1;
    for (;;) {
        tok *t = peek(P);
        if (t->kind != TK_WORD || t->s[0] != '.')
            break;
        tok d = next(P);
        f = &m->funcs[fi];
        if (is(&d, ".maxntid") || is(&d, ".reqntid") || is(&d, ".minnctapersm") || is(&d, ".maxnreg") ||
            is(&d, ".maxnctapersm") || is(&d, ".reqnctapercluster") || is(&d, ".maxclusterrank") ||
            is(&d, ".explicitcluster")) {
            int *dst = is(&d, ".maxntid") ? f->maxntid : is(&d, ".reqntid") ? f->reqntid : NULL;
            int k = 0;
            while (peek(P)->kind == TK_WORD && isdigit((unsigned char)peek(P)->s[0])) {
                tok n = next(P);
                int64_t v;
                int kind;
                if (!parse_number(&n, 0, &v, &kind) && dst && k < 3)
                    dst[k++] = (int)v;
                if (!accept(P, ','))
                    break;
            }
        } else if (is(&d, ".noreturn") || is(&d, ".abi_preserve") || is(&d, ".abi_preserve_control")) {
            /* no effect here */
        } else if (is(&d, ".pragma")) {
            skip_to_semicolon(P);
            break;
        } else {
            perr(P, &d, "unknown function directive");
            return -1;
        }
    }
    if (accept(P, ';')) {
        if (prev >= 0) {   /* a repeated declaration: drop it */
            m->nfuncs--;
            free(m->funcs[fi].name);
            free(m->funcs[fi].params);
            free(m->funcs[fi].rets);
        }
        return 0;
    }
    if (!expect(P, '{', "'{' or ';' after the function header"))
        return -1;
    if (prev >= 0) {
        /* the definition of a declared function: it takes the declaration's place in calls */
        if (m->funcs[prev].defined) {
            perr(P, &nm, "function defined twice");
            return -1;
        }
        m->funcs[prev].is_extern = 1;   /* stays a declaration; calls resolved by name below */
    }
    P->depth = 1;
    int rc = parse_body(P, fi);
    if (!rc && prev >= 0) {
        /* calls made before the definition point at the declaration: redirect them, and the
         * function addresses taken before it (vtable initialisers, mov of the name) */
        for (int i = 0; i < m->ninsns; i++)
            for (int k = 0; k < m->insns[i].nops; k++)
                if (m->insns[i].o[k].kind == ASH_PTX_K_FUNC && m->insns[i].o[k].sym == prev)
                    m->insns[i].o[k].sym = fi;
        for (int v = 0; v < m->nvars; v++)
            for (int r = 0; r < m->vars[v].nrelocs; r++)
                if (m->vars[v].relocs[r].func == prev)
                    m->vars[v].relocs[r].func = fi;
    }
    return rc;
}

/* appends the lines of P->text to m->lines (one unit after another) */
static int keep_lines(parser *P)
{
    ash_ptx_module *m = P->m;
    int n = 1;
    for (const char *p = P->text; *p; p++)
        n += *p == '\n';
    char **nl = realloc(m->lines, (size_t)(m->nlines + n) * sizeof *m->lines);
    if (!nl)
        return -1;
    m->lines = nl;
    int base = m->nlines;
    memset(m->lines + base, 0, (size_t)n * sizeof *m->lines);
    const char *s = P->text;
    for (int i = 0; i < n; i++) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *b = s;
        while (len && (*b == ' ' || *b == '\t')) {
            b++;
            len--;
        }
        while (len && (b[len - 1] == ' ' || b[len - 1] == '\t' || b[len - 1] == '\r'))
            len--;
        /* instruction lines are what messages show: keep them; others too while short */
        char *ln = dupn(b, (int)(len > 200 ? 200 : len));
        if (!ln)
            return -1;
        m->lines[base + i] = ln;
        char *w = ln;   /* nvcc separates operands with tabs: one space for a run */
        for (const char *c = ln; *c; c++)
            if (!((*c == ' ' || *c == '\t') && w > ln && w[-1] == ' '))
                *w++ = *c == '\t' ? ' ' : *c;
        *w = 0;
        m->nlines = base + i + 1;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

/* one unit's module-scope directives, into P->m */
static void parse_unit(parser *P)
{
    ash_ptx_module *m = P->m;
    int seen_version = 0;
    while (!P->failed) {
        tok t = next(P);
        if (t.kind == TK_EOF)
            break;
        if (t.kind != TK_WORD) {
            perr(P, &t, "unexpected");
            break;
        }
        if (is(&t, ".version")) {
            tok v = next(P);
            if (sscanf(v.s, "%d.%d", &m->version_major, &m->version_minor) != 2)
                perr(P, &v, "bad .version");
            seen_version = 1;
        } else if (is(&t, ".target")) {
            do {
                tok v = next(P);
                if (v.n > 3 && !memcmp(v.s, "sm_", 3))
                    m->target_sm = atoi(v.s + 3);
            } while (accept(P, ','));
        } else if (is(&t, ".address_size")) {
            tok v = next(P);
            m->address_size = atoi(v.s);
        } else if (is(&t, ".file") || is(&t, ".loc")) {
            skip_line(P);
        } else if (is(&t, ".section")) {
            while (!P->failed && peek(P)->kind != '{' && peek(P)->kind != TK_EOF)
                next(P);
            int depth = 0;
            do {
                tok s = next(P);
                if (s.kind == '{') depth++;
                if (s.kind == '}') depth--;
                if (s.kind == TK_EOF) break;
            } while (depth > 0);
        } else if (is(&t, ".pragma")) {
            skip_to_semicolon(P);
        } else {
            int is_extern = 0, linkage = 1;
            P->linkage = ASH_PTX_L_INTERNAL;
            while (linkage && t.kind == TK_WORD) {
                if (is(&t, ".visible") || is(&t, ".weak") || is(&t, ".common")) {
                    P->linkage = is(&t, ".visible") ? ASH_PTX_L_VISIBLE : ASH_PTX_L_WEAK;
                    t = next(P);
                } else if (is(&t, ".extern")) {
                    is_extern = 1;
                    t = next(P);
                } else {
                    linkage = 0;
                }
            }
            if (is(&t, ".entry") || is(&t, ".func")) {
                if (parse_function(P, is(&t, ".entry"), is_extern))
                    break;
            } else if (is(&t, ".global") || is(&t, ".const") || is(&t, ".shared")) {
                int space = is(&t, ".global") ? ASH_PTX_S_GLOBAL : is(&t, ".const") ? ASH_PTX_S_CONST
                                                                                    : ASH_PTX_S_SHARED;
                P->nscope = 0;
                int vi;
                if (parse_var(P, space, is_extern, -1, 0, &vi))
                    break;
                ash_ptx_var *v = &m->vars[vi];
                if (space == ASH_PTX_S_SHARED && !v->is_extern) {
                    m->module_shared = align_up(m->module_shared, v->align);
                    v->offset = m->module_shared;
                    m->module_shared += v->size;
                }
                if (!expect(P, ';', "';' after the variable"))
                    break;
            } else {
                perr(P, &t, "unknown directive");
            }
            P->linkage = ASH_PTX_L_INTERNAL;
        }
    }
    if (!P->failed && !seen_version)
        perr(P, NULL, "not PTX: no .version directive");
}

/* the definition in another unit that a declaration of unit `unit` named `name` takes: the
 * .visible one, else the first .weak; -1 if none. `var`: among module variables, else functions. */
static int link_target(const ash_ptx_module *m, int var, const char *name, int unit)
{
    int weak = -1;
    int n = var ? m->nvars : m->nfuncs;
    for (int i = 0; i < n; i++) {
        const char *nm = var ? m->vars[i].name : m->funcs[i].name;
        int u = var ? m->vars[i].unit : m->funcs[i].unit;
        int lk = var ? m->vars[i].linkage : m->funcs[i].linkage;
        int def = var ? m->vars[i].func < 0 && !m->vars[i].is_extern : m->funcs[i].defined;
        if (u == unit || !def || lk == ASH_PTX_L_INTERNAL || strcmp(nm, name))
            continue;
        if (lk == ASH_PTX_L_VISIBLE)
            return i;
        if (weak < 0)
            weak = i;
    }
    return weak;
}

/* Resolve the units' declarations to definitions in other units (ash_ptx_parse_units). */
static int link_units(parser *P)
{
    ash_ptx_module *m = P->m;
    int *fmap = malloc(((size_t)m->nfuncs + 1) * sizeof *fmap);
    int *vmap = malloc(((size_t)m->nvars + 1) * sizeof *vmap);
    if (!fmap || !vmap) {
        free(fmap);
        free(vmap);
        perr(P, NULL, "out of memory");
        return -1;
    }
    for (int i = 0; i < m->nfuncs && !P->failed; i++) {
        const ash_ptx_func *f = &m->funcs[i];
        fmap[i] = i;
        if (!f->defined) {
            int t = link_target(m, 0, f->name, f->unit);
            fmap[i] = t >= 0 ? t : i;   /* none: stays a declaration (vprintf, malloc; else refused at load) */
        } else if (f->linkage == ASH_PTX_L_VISIBLE) {
            for (int j = 0; j < i; j++)
                if (m->funcs[j].defined && m->funcs[j].linkage == ASH_PTX_L_VISIBLE && !strcmp(m->funcs[j].name, f->name))
                    perr(P, NULL, "function %s is defined .visible in units %d and %d", f->name, m->funcs[j].unit + 1,
                         f->unit + 1);
        }
    }
    for (int i = 0; i < m->nvars && !P->failed; i++) {
        const ash_ptx_var *v = &m->vars[i];
        vmap[i] = i;
        if (v->func >= 0 || (v->space != ASH_PTX_S_GLOBAL && v->space != ASH_PTX_S_CONST))
            continue;
        if (v->is_extern) {
            int t = link_target(m, 1, v->name, v->unit);
            if (t < 0)
                perr(P, NULL, "undefined reference to variable %s (declared .extern in unit %d; no unit defines it)",
                     v->name, v->unit + 1);
            vmap[i] = t;
        } else if (v->linkage == ASH_PTX_L_VISIBLE) {
            for (int j = 0; j < i; j++)
                if (m->vars[j].func < 0 && !m->vars[j].is_extern && m->vars[j].linkage == ASH_PTX_L_VISIBLE &&
                    !strcmp(m->vars[j].name, v->name))
                    perr(P, NULL, "variable %s is defined .visible in units %d and %d", v->name, m->vars[j].unit + 1,
                         v->unit + 1);
        }
    }
    if (!P->failed) {
        for (int i = 0; i < m->ninsns; i++)
            for (int k = 0; k < m->insns[i].nops; k++) {
                ash_ptx_opnd *o = &m->insns[i].o[k];
                if (o->kind == ASH_PTX_K_FUNC)
                    o->sym = fmap[o->sym];
                else if ((o->kind == ASH_PTX_K_SYM || o->kind == ASH_PTX_K_MEM) && o->sym >= 0)
                    o->sym = vmap[o->sym];
            }
        for (int v = 0; v < m->nvars; v++)
            for (int r = 0; r < m->vars[v].nrelocs; r++) {
                ash_ptx_reloc *rl = &m->vars[v].relocs[r];
                if (rl->sym >= 0)
                    rl->sym = vmap[rl->sym];
                else if (rl->func >= 0)
                    rl->func = fmap[rl->func];
            }
    }
    free(fmap);
    free(vmap);
    return P->failed ? -1 : 0;
}

/* link: resolve declarations across the units (and report an undefined variable even in one) */
static int parse_texts(const char *const *texts, int n, const char *name, ash_ptx_module *m, char *err, size_t errlen,
                       int link)
{
    char dummy[8], uname[160];
    parser P;
    memset(&P, 0, sizeof P);
    memset(m, 0, sizeof *m);
    P.name = name ? name : "ptx";
    P.err = err ? err : dummy;
    P.errlen = err ? errlen : sizeof dummy;
    P.m = m;
    m->name = strdup(P.name);
    if (!m->name) {
        perr(&P, NULL, "out of memory");
        goto fail;
    }
    if (n < 1 || !texts) {
        perr(&P, NULL, "no PTX text to parse");
        goto fail;
    }
    for (int u = 0; u < n && !P.failed; u++) {
        P.unit = u;
        P.text = P.p = P.line_start = texts[u];
        P.line = m->nlines + 1;   /* lines run on through the units */
        P.line_base = m->nlines;
        P.have = 0;
        if (n > 1) {
            snprintf(uname, sizeof uname, "%s unit %d", m->name, u + 1);
            P.name = uname;
        }
        if (keep_lines(&P)) {
            perr(&P, NULL, "out of memory");
            break;
        }
        parse_unit(&P);
    }
    if (P.failed)
        goto fail;
    P.name = m->name;
    P.text = NULL;
    m->nunits = n;
    if (link && link_units(&P))
        goto fail;
    /* function-scope shared variables come after the module's */
    for (int i = 0; i < m->nvars; i++) {
        ash_ptx_var *v = &m->vars[i];
        if (v->space == ASH_PTX_S_SHARED && v->func >= 0 && !v->is_extern && m->funcs[v->func].is_entry)
            v->offset += align_up(m->module_shared, 16);
    }
    for (int i = 0; i < m->nfuncs; i++) {
        ash_ptx_func *f = &m->funcs[i];
        f->shared_size = f->shared_size ? align_up(m->module_shared, 16) + f->shared_size : m->module_shared;
    }
    free(P.scope);
    free(P.labels);
    free(P.fix);
    free(P.tlists);
    return 0;
fail:
    free(P.scope);
    free(P.labels);
    free(P.fix);
    free(P.tlists);
    ash_ptx_free(m);
    return -1;
}

int ash_ptx_parse_units(const char *const *texts, int n, const char *name, ash_ptx_module *m, char *err,
                        size_t errlen)
{
    return parse_texts(texts, n, name, m, err, errlen, 1);
}

int ash_ptx_parse(const char *text, const char *name, ash_ptx_module *m, char *err, size_t errlen)
{
    return parse_texts(&text, 1, name, m, err, errlen, 0);
}

void ash_ptx_free(ash_ptx_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nvars; i++) {
        free(m->vars[i].name);
        free(m->vars[i].init);
        free(m->vars[i].relocs);
    }
    for (int i = 0; i < m->nfuncs; i++) {
        ash_ptx_func *f = &m->funcs[i];
        free(f->name);
        free(f->params);
        free(f->rets);
        free(f->reg_type);
        if (f->reg_name)
            for (int r = 0; r < f->nregs; r++)
                free(f->reg_name[r]);
        free(f->reg_name);
    }
    for (int i = 0; i < m->nlines; i++)
        free(m->lines[i]);
    free(m->lines);
    free(m->vars);
    free(m->funcs);
    free(m->insns);
    free(m->callvars);
    free(m->targets);
    free(m->vregs);
    free(m->name);
    memset(m, 0, sizeof *m);
}
