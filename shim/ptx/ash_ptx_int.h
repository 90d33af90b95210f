/* ash_ptx_int.h — private to shim/ptx: the reader's tokens, scopes and parser state, shared by
 * ash_ptx_lex.c (names, tokenizer, numbers, scopes, special registers) and ash_ptx.c (the
 * declarations and instructions). Internal names carry the ash_ptx__ prefix (macros below keep
 * the short names in the sources).
 */
#ifndef ASH_PTX_INT_H
#define ASH_PTX_INT_H

#include "ash_ptx.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- tokens */
enum { TK_EOF = 0, TK_WORD = 'w', TK_STR = 's' };

typedef struct tok {
    int kind;          /* TK_*, or the punctuation character */
    const char *s;
    int n;
    int line, col;
} tok;

typedef struct scope_ent {
    const char *name;  /* points into the text */
    int n;
    int count;         /* 0: one register; N: name<N> range */
    int base;          /* first slot, or variable index when is_var */
    int depth;
    int is_var;
} scope_ent;

typedef struct label_ent {
    const char *name;
    int n;
    int insn;          /* index in m->insns */
} label_ent;

typedef struct fixup {
    int insn, opnd;    /* opnd -1: insn is an entry of m->targets (a .branchtargets label) */
    const char *name;
    int n, line, col;
} fixup;

typedef struct parser {
    const char *text, *p, *name;
    int line;
    const char *line_start;
    tok cur;
    int have;
    char *err;
    size_t errlen;
    int failed;
    ash_ptx_module *m;
    int caps_vars, caps_funcs, caps_insns, caps_callvars;
    /* current function */
    int fn;
    scope_ent *scope;
    int nscope, capscope, depth;
    label_ent *labels;
    int nlabels, caplabels;
    fixup *fix;
    int nfix, capfix;
    label_ent *tlists;    /* the function's .branchtargets lists: insn = first entry in m->targets */
    int ntlists, captlists, captargets;
    int capregs;
    int unit;          /* the text being parsed (ash_ptx_parse_units) */
    int linkage;       /* of the module-scope declaration being parsed */
    int line_base;     /* lines of the units before this one (messages give the unit's own line) */
} parser;


#define ASH_PTX__HIDDEN __attribute__((visibility("hidden")))
#define type_of ash_ptx__type_of
#define perr ash_ptx__perr
#define lex ash_ptx__lex
#define peek ash_ptx__peek
#define next ash_ptx__next
#define is ash_ptx__is
#define accept ash_ptx__accept
#define expect ash_ptx__expect
#define skip_line ash_ptx__skip_line
#define skip_to_semicolon ash_ptx__skip_to_semicolon
#define dupn ash_ptx__dupn
#define grow ash_ptx__grow
#define parse_number ash_ptx__parse_number
#define scope_push ash_ptx__scope_push
#define scope_pop ash_ptx__scope_pop
#define reg_lookup ash_ptx__reg_lookup
#define var_lookup ash_ptx__var_lookup
#define func_lookup ash_ptx__func_lookup
#define sreg_of ash_ptx__sreg_of

ASH_PTX__HIDDEN int type_of(const char *s, int n);
ASH_PTX__HIDDEN void perr(parser *P, const tok *t, const char *fmt, ...);
ASH_PTX__HIDDEN void lex(parser *P, tok *t);
ASH_PTX__HIDDEN tok *peek(parser *P);
ASH_PTX__HIDDEN tok next(parser *P);
ASH_PTX__HIDDEN int is(const tok *t, const char *w);
ASH_PTX__HIDDEN int accept(parser *P, int kind);
ASH_PTX__HIDDEN int expect(parser *P, int kind, const char *what);
ASH_PTX__HIDDEN void skip_line(parser *P);
ASH_PTX__HIDDEN void skip_to_semicolon(parser *P);
ASH_PTX__HIDDEN char *dupn(const char *s, int n);
ASH_PTX__HIDDEN void *grow(void *p, int *cap, int need, size_t elem);
ASH_PTX__HIDDEN int parse_number(const tok *t, int neg, int64_t *out, int *kind);
ASH_PTX__HIDDEN int scope_push(parser *P, const char *name, int n, int count, int base, int is_var);
ASH_PTX__HIDDEN void scope_pop(parser *P);
ASH_PTX__HIDDEN int reg_lookup(parser *P, const char *s, int n);
ASH_PTX__HIDDEN int var_lookup(parser *P, const char *s, int n);
ASH_PTX__HIDDEN int func_lookup(ash_ptx_module *m, int unit, const char *s, int n);
ASH_PTX__HIDDEN int sreg_of(const tok *t);

#define GROW(P, arr, cap, need)                                                                 \
    do {                                                                                       \
        void *g__ = grow((arr), &(cap), (need), sizeof *(arr));                               \
        if (!g__) {                                                                            \
            perr((P), NULL, "out of memory");                                                 \
            return -1;                                                                         \
        }                                                                                      \
        (arr) = g__;                                                                           \
    } while (0)

#endif /* ASH_PTX_INT_H */
