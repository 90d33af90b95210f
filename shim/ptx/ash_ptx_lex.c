/* ash_ptx_lex.c — the PTX reader's names (opcodes, types), tokenizer, number syntax (decimal,
 * hex, octal, binary, 0f/0d float bits, decimal floats), register and variable scopes and the
 * special registers. See ash_ptx_int.h for the parser state it works on.
 * Threading: no global state apart from constant tables.
 * Must not: depend on anything but libc and ash_ptx.h / ash_ptx_int.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ash_ptx_int.h"   /* last: its macros rename the reader's internal functions */

/* ---------------------------------------------------------------- names */
static const char *const opnames[] = {
    "(unsupported)",
#define ASH__X(n, s) s,
    ASH_PTX_OPCODES(ASH__X)
#undef ASH__X
};

const char *ash_ptx_opcode_name(int op)
{
    return op >= 0 && op < ASH_PTX_OP_COUNT ? opnames[op] : "?";
}

int ash_ptx_type_size(int t)
{
    switch (t) {
    case ASH_PTX_T_B8: case ASH_PTX_T_U8: case ASH_PTX_T_S8: case ASH_PTX_T_PRED: return 1;
    case ASH_PTX_T_B16: case ASH_PTX_T_U16: case ASH_PTX_T_S16: case ASH_PTX_T_F16: case ASH_PTX_T_BF16: return 2;
    case ASH_PTX_T_B32: case ASH_PTX_T_U32: case ASH_PTX_T_S32: case ASH_PTX_T_F32: case ASH_PTX_T_F16X2:
    case ASH_PTX_T_BF16X2: case ASH_PTX_T_TF32: return 4;
    case ASH_PTX_T_B64: case ASH_PTX_T_U64: case ASH_PTX_T_S64: case ASH_PTX_T_F64: return 8;
    case ASH_PTX_T_B128: return 16;
    default: return 0;
    }
}

static const struct { const char *s; int t; } type_names[] = {
    {"b8", ASH_PTX_T_B8}, {"b16", ASH_PTX_T_B16}, {"b32", ASH_PTX_T_B32}, {"b64", ASH_PTX_T_B64},
    {"u8", ASH_PTX_T_U8}, {"u16", ASH_PTX_T_U16}, {"u32", ASH_PTX_T_U32}, {"u64", ASH_PTX_T_U64},
    {"s8", ASH_PTX_T_S8}, {"s16", ASH_PTX_T_S16}, {"s32", ASH_PTX_T_S32}, {"s64", ASH_PTX_T_S64},
    {"f16", ASH_PTX_T_F16}, {"f16x2", ASH_PTX_T_F16X2}, {"bf16", ASH_PTX_T_BF16},
    {"bf16x2", ASH_PTX_T_BF16X2}, {"f32", ASH_PTX_T_F32}, {"f64", ASH_PTX_T_F64},
    {"pred", ASH_PTX_T_PRED}, {"b128", ASH_PTX_T_B128}, {"tf32", ASH_PTX_T_TF32},
};

int type_of(const char *s, int n)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if ((int)strlen(type_names[i].s) == n && !memcmp(type_names[i].s, s, (size_t)n))
            return type_names[i].t;
    return 0;
}

void perr(parser *P, const tok *t, const char *fmt, ...)
{
    if (P->failed)
        return;
    P->failed = 1;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!P->text) /* after the texts: linking them */
        snprintf(P->err, P->errlen, "%s: %s", P->name, msg);
    else if (t && t->kind != TK_EOF)
        snprintf(P->err, P->errlen, "%s:%d:%d: %s '%.*s'", P->name, t->line - P->line_base, t->col, msg,
                 t->n > 60 ? 60 : t->n, t->s);
    else
        snprintf(P->err, P->errlen, "%s:%d: %s (at end of text)", P->name, P->line - P->line_base, msg);
}

static int is_word_char(int c)
{
    return isalnum(c) || c == '_' || c == '$' || c == '%' || c == '.';
}

void lex(parser *P, tok *t)
{
    const char *p = P->p;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
            if (*p == '\n') {
                P->line++;
                P->line_start = p + 1;
            }
            p++;
        }
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            p += 2;
            while (*p && !(p[0] == '*' && p[1] == '/')) {
                if (*p == '\n') {
                    P->line++;
                    P->line_start = p + 1;
                }
                p++;
            }
            if (*p)
                p += 2;
            continue;
        }
        break;
    }
    t->s = p;
    t->line = P->line;
    t->col = (int)(p - P->line_start) + 1;
    if (!*p) {
        t->kind = TK_EOF;
        t->n = 0;
    } else if (is_word_char((unsigned char)*p)) {
        const char *q = p;
        while (is_word_char((unsigned char)*q) || (q[0] == ':' && q[1] == ':' && q > p)) {
            if (*q == ':')
                q++;
            q++;
        }
        t->kind = TK_WORD;
        t->n = (int)(q - p);
        p = q;
    } else if (*p == '"') {
        const char *q = p + 1;
        while (*q && *q != '"' && *q != '\n')
            q++;
        if (*q == '"')
            q++;
        t->kind = TK_STR;
        t->n = (int)(q - p);
        p = q;
    } else {
        t->kind = (unsigned char)*p;
        t->n = 1;
        p++;
    }
    P->p = p;
}

tok *peek(parser *P)
{
    if (!P->have) {
        lex(P, &P->cur);
        P->have = 1;
    }
    return &P->cur;
}

tok next(parser *P)
{
    tok t = *peek(P);
    P->have = 0;
    return t;
}

int is(const tok *t, const char *w)
{
    return (int)strlen(w) == t->n && !memcmp(t->s, w, (size_t)t->n);
}

int accept(parser *P, int kind)
{
    if (peek(P)->kind == kind) {
        next(P);
        return 1;
    }
    return 0;
}

int expect(parser *P, int kind, const char *what)
{
    tok *t = peek(P);
    if (t->kind != kind) {
        perr(P, t, "expected %s, found", what);
        return 0;
    }
    next(P);
    return 1;
}

/* the rest of the current line (for .loc, .file and directives without ';') */
void skip_line(parser *P)
{
    if (P->have) {
        /* the peeked token may be on the next line already: only skip if it is on this one */
        if (P->cur.line != P->line)
            return;
        P->have = 0;
    }
    while (*P->p && *P->p != '\n')
        P->p++;
}

void skip_to_semicolon(parser *P)
{
    for (;;) {
        tok t = next(P);
        if (t.kind == ';' || t.kind == TK_EOF)
            return;
    }
}

char *dupn(const char *s, int n)
{
    char *d = malloc((size_t)n + 1);
    if (d) {
        memcpy(d, s, (size_t)n);
        d[n] = 0;
    }
    return d;
}

void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    int nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(p, (size_t)nc * elem);
    if (!np)
        return NULL;
    memset((char *)np + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
    *cap = nc;
    return np;
}

/* ---------------------------------------------------------------- numbers */
/* kind: 0 integer, 1 0f (f32 bits), 2 0d (f64 bits), 3 decimal float (f64 bits) */
int parse_number(const tok *t, int neg, int64_t *out, int *kind)
{
    char buf[80];
    if (t->kind != TK_WORD || t->n >= (int)sizeof buf || !isdigit((unsigned char)t->s[0]))
        return -1;
    memcpy(buf, t->s, (size_t)t->n);
    buf[t->n] = 0;
    char *end;
    *kind = 0;
    if ((buf[0] == '0') && (buf[1] == 'f' || buf[1] == 'F') && t->n == 10) {
        uint64_t v = strtoull(buf + 2, &end, 16);
        if (*end)
            return -1;
        if (neg)
            v ^= 0x80000000u;
        *out = (int64_t)v;
        *kind = 1;
        return 0;
    }
    if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D') && t->n == 18) {
        uint64_t v = strtoull(buf + 2, &end, 16);
        if (*end)
            return -1;
        if (neg)
            v ^= 0x8000000000000000ull;
        *out = (int64_t)v;
        *kind = 2;
        return 0;
    }
    if (strchr(buf, '.') || ((strchr(buf, 'e') || strchr(buf, 'E')) && !(buf[1] == 'x' || buf[1] == 'X'))) {
        errno = 0;
        double d = strtod(buf, &end);
        if (*end || errno)
            return -1;
        if (neg)
            d = -d;
        memcpy(out, &d, 8);
        *kind = 3;
        return 0;
    }
    size_t len = strlen(buf);
    if (len && (buf[len - 1] == 'U' || buf[len - 1] == 'u'))
        buf[--len] = 0;
    errno = 0;
    uint64_t v;
    if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
        v = strtoull(buf + 2, &end, 2);
    else
        v = strtoull(buf, &end, 0);
    if (*end || errno)
        return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* ---------------------------------------------------------------- scopes */
int scope_push(parser *P, const char *name, int n, int count, int base, int is_var)
{
    GROW(P, P->scope, P->capscope, P->nscope + 1);
    P->scope[P->nscope++] = (scope_ent){name, n, count, base, P->depth, is_var};
    return 0;
}

void scope_pop(parser *P)
{
    while (P->nscope && P->scope[P->nscope - 1].depth >= P->depth)
        P->nscope--;
}

/* register slot of a name in the current function, -1 if none */
int reg_lookup(parser *P, const char *s, int n)
{
    for (int i = P->nscope - 1; i >= 0; i--) {
        scope_ent *e = &P->scope[i];
        if (e->is_var)
            continue;
        if (!e->count) {
            if (e->n == n && !memcmp(e->name, s, (size_t)n))
                return e->base;
        } else if (n > e->n && !memcmp(e->name, s, (size_t)e->n)) {
            int k = 0, j = e->n;
            if (s[j] == '0' && n > j + 1)
                continue;
            for (; j < n; j++) {
                if (!isdigit((unsigned char)s[j]))
                    break;
                k = k * 10 + (s[j] - '0');
                if (k > 1 << 24)
                    break;
            }
            if (j == n && k < e->count)
                return e->base + k;
        }
    }
    return -1;
}

int var_lookup(parser *P, const char *s, int n)
{
    for (int i = P->nscope - 1; i >= 0; i--) {
        scope_ent *e = &P->scope[i];
        if (e->is_var && e->n == n && !memcmp(e->name, s, (size_t)n))
            return e->base;
    }
    for (int i = 0; i < P->m->nvars; i++)
        if (P->m->vars[i].func < 0 && P->m->vars[i].unit == P->unit && !strncmp(P->m->vars[i].name, s, (size_t)n) &&
            !P->m->vars[i].name[n])
            return i;
    return -1;
}

/* unit < 0: any unit. The definition if there is one, else the first declaration. */
int func_lookup(ash_ptx_module *m, int unit, const char *s, int n)
{
    int decl = -1;
    for (int i = 0; i < m->nfuncs; i++)
        if ((unit < 0 || m->funcs[i].unit == unit) && !strncmp(m->funcs[i].name, s, (size_t)n) && !m->funcs[i].name[n]) {
            if (m->funcs[i].defined)
                return i;
            if (decl < 0)
                decl = i;
        }
    return decl;
}

int ash_ptx_find_func(const ash_ptx_module *m, const char *name)
{
    return func_lookup((ash_ptx_module *)m, -1, name, (int)strlen(name));
}

/* the definition if there is one, else the first declaration (any unit) */
int ash_ptx_find_var(const ash_ptx_module *m, const char *name)
{
    int decl = -1;
    for (int i = 0; i < m->nvars; i++)
        if (m->vars[i].func < 0 && !strcmp(m->vars[i].name, name)) {
            if (!m->vars[i].is_extern)
                return i;
            if (decl < 0)
                decl = i;
        }
    return decl;
}

const char *ash_ptx_line_text(const ash_ptx_module *m, int line)
{
    return line >= 1 && line <= m->nlines && m->lines[line - 1] ? m->lines[line - 1] : "";
}

/* ---------------------------------------------------------------- special registers */
static const struct { const char *s; int id; } sregs[] = {
    {"%tid.x", ASH_PTX_SR_TID}, {"%tid.y", ASH_PTX_SR_TID + 1}, {"%tid.z", ASH_PTX_SR_TID + 2},
    {"%ntid.x", ASH_PTX_SR_NTID}, {"%ntid.y", ASH_PTX_SR_NTID + 1}, {"%ntid.z", ASH_PTX_SR_NTID + 2},
    {"%ctaid.x", ASH_PTX_SR_CTAID}, {"%ctaid.y", ASH_PTX_SR_CTAID + 1}, {"%ctaid.z", ASH_PTX_SR_CTAID + 2},
    {"%nctaid.x", ASH_PTX_SR_NCTAID}, {"%nctaid.y", ASH_PTX_SR_NCTAID + 1},
    {"%nctaid.z", ASH_PTX_SR_NCTAID + 2}, {"%laneid", ASH_PTX_SR_LANEID}, {"%warpid", ASH_PTX_SR_WARPID},
    {"%nwarpid", ASH_PTX_SR_NWARPID}, {"%smid", ASH_PTX_SR_SMID}, {"%nsmid", ASH_PTX_SR_NSMID},
    {"%clock", ASH_PTX_SR_CLOCK}, {"%clock64", ASH_PTX_SR_CLOCK64}, {"%globaltimer", ASH_PTX_SR_GLOBALTIMER},
    {"%lanemask_eq", ASH_PTX_SR_LANEMASK_EQ}, {"%lanemask_le", ASH_PTX_SR_LANEMASK_LE},
    {"%lanemask_lt", ASH_PTX_SR_LANEMASK_LT}, {"%lanemask_ge", ASH_PTX_SR_LANEMASK_GE},
    {"%lanemask_gt", ASH_PTX_SR_LANEMASK_GT}, {"%gridid", ASH_PTX_SR_GRIDID},
    {"%dynamic_smem_size", ASH_PTX_SR_DYNSMEM}, {"%total_smem_size", ASH_PTX_SR_TOTALSMEM},
    {"WARP_SZ", ASH_PTX_SR_WARPSZ},
};

int sreg_of(const tok *t)
{
    if (t->n >= 8 && t->n <= 9 && !memcmp(t->s, "%envreg", 7)) {
        int k = atoi(t->s + 7);
        if (k >= 0 && k < 32 && isdigit((unsigned char)t->s[7]))
            return ASH_PTX_SR_ENVREG + k;
    }
    for (size_t i = 0; i < sizeof sregs / sizeof sregs[0]; i++)
        if (is(t, sregs[i].s))
            return sregs[i].id;
    return -1;
}

