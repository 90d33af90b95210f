/* ash_policy.c — validate the YAML node tree into struct ash_policy (DESIGN.md §4, version 1).
 *
 * Owns: the schema (allowed keys, types, ranges, defaults, required keys), the first-error
 * diagnostics with file:line:col, load/parse/free and the accessors. The schema is documented
 * once, in ash_policy.h. The first error wins: a missing or unsupported 'version' first, then
 * document order, except that a mapping's key errors (unknown, duplicate) come before its value
 * errors. No global state; callers: shim/, the CLI, tests.
 * Must not: keep global state; touch CUDA or anything of accelshim outside policy/; report more
 * than the first error; hand out a policy that is incomplete or can change before ash_policy_free.
 */
#include "ash_policy_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POLICY_ENOTREG (-1) /* ash_policy_load: a FIFO, socket or device (not an errno) */

typedef ash_policy__node_t node_t;
typedef ash_policy__diag_t diag_t;

/* ---------- names ---------- */

#define ASH_POLICY__RESULT_NAME(e, v, s) case e: return s;
const char *ash_policy_result_name(ash_policy_result_t r)
{
    switch (r) {
    ASH_POLICY_RESULTS(ASH_POLICY__RESULT_NAME)
    }
    return "unknown result";
}

static const char *const dtype_names[] = {"f32", "f16", "bf16"};
static const char *const wire_names[] = {"same", "f32", "f16", "bf16"};
static const char *const reduce_names[] = {"mean", "sum"};
static const char *const broadcast_names[] = {"once"};
static const char *const region_names[] = {"allocation"};
static const char *const matmul_names[] = {"default", "tf32", "bf16", "f16"};
static const char *const overlap_names[] = {"none", "auto"};

const char *ash_policy_dtype_name(ash_policy_dtype_t d)
{
    return (unsigned)d < 3 ? dtype_names[d] : "?";
}
size_t ash_policy_dtype_size(ash_policy_dtype_t d)
{
    return d == ASH_POLICY_DTYPE_F32 ? 4 : 2;
}
const char *ash_policy_wire_name(ash_policy_wire_t w)
{
    return (unsigned)w < 4 ? wire_names[w] : "?";
}
const char *ash_policy_reduce_name(ash_policy_reduce_t r)
{
    return (unsigned)r < 2 ? reduce_names[r] : "?";
}
const char *ash_policy_matmul_name(ash_policy_matmul_t m)
{
    return (unsigned)m < 4 ? matmul_names[m] : "?";
}
bool ash_policy_matmul_parse(const char *text, ash_policy_matmul_t *out)
{
    for (int i = 0; text && i < 4; i++) {
        if (!strcmp(text, matmul_names[i])) {
            *out = (ash_policy_matmul_t)i;
            return true;
        }
    }
    return false;
}

/* ---------- describing what was found ---------- */

/* Up to 40 bytes of S, control characters shown as '?', for messages. */
static const char *clip(const char *s, size_t len, char *buf, size_t cap)
{
    size_t n = 0, max = cap - 4;
    for (size_t i = 0; i < len && n < max; i++)
        buf[n++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (len > max)
        memcpy(buf + n, "...", 3), n += 3;
    buf[n] = '\0';
    return buf;
}

static const char *found(const node_t *n, char *buf, size_t cap)
{
    char v[48];
    if (n->type == ASH_POLICY__MAP)
        return "a mapping";
    if (n->type == ASH_POLICY__SEQ)
        return "a list";
    if (n->plain && n->len == 0)
        return "nothing (an empty value)";
    snprintf(buf, cap, "%s\"%s\"", n->plain ? "" : "the quoted string ",
             clip(n->str, n->len, v, sizeof v));
    return buf;
}

static bool is_null(const node_t *n)
{
    return n->type == ASH_POLICY__SCALAR && n->plain &&
           (n->len == 0 || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
            !strcmp(n->str, "Null") || !strcmp(n->str, "NULL"));
}

/* ---------- typed scalars ---------- */

/* KEY must be an integer in [MIN, MAX]; EXPECT says what it is, for the messages. */
static ash_policy_result_t get_int(diag_t *d, const node_t *n, const char *key, long long min,
                                   long long max, const char *expect, long long *out)
{
    char b[96];
    if (n->type != ASH_POLICY__SCALAR || !n->plain || n->len == 0)
        return ash_policy__fail(d, n->line, n->col, "'%s' must be %s, found %s%s", key, expect,
                                found(n, b, sizeof b),
                                n->type == ASH_POLICY__SCALAR && !n->plain
                                    ? " (write integers without quotes)" : "");
    const char *s = n->str;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    unsigned long long v = 0;
    bool big = false;
    if (!*s)
        goto bad;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            goto bad;
        if (v > (ULLONG_MAX - 9) / 10)
            big = true;
        else
            v = v * 10 + (unsigned)(*s - '0');
    }
    if ((size_t)(s - n->str) != n->len)
        goto bad; /* an inner NUL */
    long long val = neg ? -(long long)(v & (unsigned long long)LLONG_MAX) : (long long)v;
    if (big || v > (unsigned long long)LLONG_MAX || val < min || val > max)
        return ash_policy__fail(d, n->line, n->col, "'%s' %s out of range: expected %s", key,
                                clip(n->str, n->len, b, 48), expect);
    *out = val;
    return ASH_POLICY_OK;
bad:
    return ash_policy__fail(d, n->line, n->col, "'%s' must be %s, found %s", key, expect,
                            found(n, b, sizeof b));
}

/* KEY must be one of NAMES (plain or quoted). */
static ash_policy_result_t get_enum(diag_t *d, const node_t *n, const char *key,
                                    const char *const *names, size_t count, const char *meaning,
                                    int *out)
{
    char b[96], list[96] = "";
    if (n->type == ASH_POLICY__SCALAR) {
        for (size_t i = 0; i < count; i++) {
            if (strlen(names[i]) == n->len && !memcmp(names[i], n->str, n->len)) {
                *out = (int)i;
                return ASH_POLICY_OK;
            }
        }
    }
    for (size_t i = 0; i < count; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i == 0 ? "" : i + 1 == count ? " or " : ", ",
                 names[i]);
    }
    return ash_policy__fail(d, n->line, n->col, "'%s' must be %s (%s), found %s", key, list,
                            meaning, found(n, b, sizeof b));
}

static ash_policy_result_t get_bool(diag_t *d, const node_t *n, const char *key, bool *out)
{
    static const char *const t[] = {"true", "True", "TRUE"};
    static const char *const f[] = {"false", "False", "FALSE"};
    char b[96];
    if (n->type == ASH_POLICY__SCALAR && n->plain) {
        for (int i = 0; i < 3; i++) {
            if (!strcmp(n->str, t[i]) || !strcmp(n->str, f[i])) {
                *out = !strcmp(n->str, t[i]);
                return ASH_POLICY_OK;
            }
        }
    }
    return ash_policy__fail(d, n->line, n->col, "'%s' must be true or false, found %s", key,
                            found(n, b, sizeof b));
}

/* A glob (plain or quoted), non-empty, no NUL, brackets balanced; *OUT is a copy. */
static ash_policy_result_t get_glob(diag_t *d, const node_t *n, const char *key,
                                    const char *example, char **out)
{
    char b[96];
    size_t at;
    const char *why;
    if (n->type != ASH_POLICY__SCALAR)
        return ash_policy__fail(d, n->line, n->col, "'%s' must be a glob such as %s, found %s",
                                key, example, found(n, b, sizeof b));
    if (n->len == 0)
        return ash_policy__fail(d, n->line, n->col, "'%s' is empty: expected a glob such as %s",
                                key, example);
    if (strlen(n->str) != n->len)
        return ash_policy__fail(d, n->line, n->col, "'%s' contains a NUL character", key);
    if ((why = ash_policy__glob_problem(n->str, &at)))
        return ash_policy__fail(d, n->line, n->col, "bad glob \"%s\" in '%s' (character %zu): %s",
                                clip(n->str, n->len, b, 48), key, at + 1, why);
    if (!(*out = strdup(n->str)))
        return ash_policy__oom(d);
    return ASH_POLICY_OK;
}

/* A file path (plain or quoted scalar), non-empty, no NUL; *OUT is a copy. */
static ash_policy_result_t get_path(diag_t *d, const node_t *n, const char *key,
                                    const char *example, char **out)
{
    char b[96];
    if (n->type != ASH_POLICY__SCALAR || is_null(n))
        return ash_policy__fail(d, n->line, n->col, "'%s' must be a file path such as %s, found %s",
                                key, example, found(n, b, sizeof b));
    if (n->len == 0)
        return ash_policy__fail(d, n->line, n->col, "'%s' is empty: expected a file path such as %s",
                                key, example);
    if (strlen(n->str) != n->len)
        return ash_policy__fail(d, n->line, n->col, "'%s' contains a NUL character", key);
    free(*out);
    if (!(*out = strdup(n->str)))
        return ash_policy__oom(d);
    return ASH_POLICY_OK;
}

const char *ash_policy__glob_problem(const char *g, size_t *at)
{
    static const char *const classes[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                          "lower", "print", "punct", "space", "upper", "xdigit"};
    for (size_t i = 0; g[i]; i++) {
        if (g[i] == '\\') {
            if (!g[i + 1]) {
                *at = i;
                return "a trailing '\\' escapes nothing";
            }
            i++;
        } else if (g[i] == '[') {
            size_t j = i + 1;
            if (g[j] == '!' || g[j] == '^')
                j++;
            if (g[j] == ']')
                j++; /* a ']' first in the set is literal */
            for (;; j++) {
                if (!g[j]) {
                    *at = i;
                    return "unbalanced '[' (expected a closing ']'; write \\[ for a literal '[')";
                }
                if (g[j] == '\\' && g[j + 1]) {
                    j++;
                } else if (g[j] == '[' && (g[j + 1] == '=' || g[j + 1] == '.')) {
                    *at = j;
                    return "collating elements ([= =], [. .]) are not supported";
                } else if (g[j] == '[' && g[j + 1] == ':') {
                    const char *end = strstr(g + j + 2, ":]");
                    size_t len = end ? (size_t)(end - (g + j + 2)) : 0;
                    bool ok = false;
                    for (size_t c = 0; end && c < sizeof classes / sizeof *classes; c++)
                        ok |= strlen(classes[c]) == len && !memcmp(classes[c], g + j + 2, len);
                    if (!ok) {
                        *at = j;
                        return "unknown character class (expected [:alpha:], [:digit:], "
                               "[:alnum:], [:upper:], [:lower:], [:space:], [:punct:], "
                               "[:xdigit:] ...)";
                    }
                    j = (size_t)(end - g) + 1; /* at the ']' of ":]" */
                } else if (g[j] == ']') {
                    break;
                }
            }
            i = j;
        }
    }
    return NULL;
}

/* ---------- mappings ---------- */

typedef struct {
    const char *const *keys; /* allowed keys, in canonical order */
    size_t nkeys;
    const char *hint;        /* added to an unknown-key message, or NULL */
    bool rule;               /* a rule mapping: buffer keys here are misplaced */
} schema_t;

static const char *const buffer_keys[4] = {"arg", "count_arg", "count", "region"};

/* Checks every key first (a scalar, allowed, not repeated), then calls FN(ctx, key index, key
 * node, value) for each pair in document order. SEEN[i] = value of keys[i], or NULL. */
typedef ash_policy_result_t (*pair_fn)(void *ctx, size_t k, const node_t *key, const node_t *v);

static ash_policy_result_t walk_map(diag_t *d, const node_t *m, const char *where,
                                    const schema_t *s, const node_t **seen, void *ctx, pair_fn fn)
{
    char b[96], allowed[160] = "";
    for (size_t k = 0; k < s->nkeys; k++)
        seen[k] = NULL;
    for (size_t k = 0; k < s->nkeys; k++) {
        size_t l = strlen(allowed);
        snprintf(allowed + l, sizeof allowed - l, "%s%s", k ? ", " : "", s->keys[k]);
    }
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const node_t *key = m->items[i], *v = m->items[i + 1];
        size_t k;
        if (key->type != ASH_POLICY__SCALAR)
            return ash_policy__fail(d, key->line, key->col,
                                    "expected a key in %s (one of: %s), found %s", where, allowed,
                                    found(key, b, sizeof b));
        for (k = 0; k < s->nkeys; k++)
            if (strlen(s->keys[k]) == key->len && !memcmp(s->keys[k], key->str, key->len))
                break;
        if (k == s->nkeys) {
            bool inner = false; /* a buffer key one level too high? */
            for (size_t j = 0; s->rule && j < 4; j++)
                inner |= !strcmp(buffer_keys[j], key->str);
            return ash_policy__fail(
                d, key->line, key->col, "unknown key '%s' in %s (allowed: %s)%s",
                clip(key->str, key->len, b, 48), where, allowed,
                inner ? " (it belongs inside 'buffer': { arg: 1, count_arg: 2 })"
                      : s->hint ? s->hint : "");
        }
        if (seen[k]) {
            const node_t *first = NULL;
            for (size_t j = 0; j < i; j += 2)
                if (m->items[j + 1] == seen[k])
                    first = m->items[j];
            return ash_policy__fail(d, key->line, key->col,
                                    "duplicate key '%s' in %s (first given at %u:%u)", s->keys[k],
                                    where, first ? first->line : 0, first ? first->col : 0);
        }
        seen[k] = v;
    }
    /* second pass: values, in document order, once the keys are known to be right */
    for (size_t i = 0; fn && i + 1 < m->n; i += 2) {
        const node_t *key = m->items[i];
        ash_policy_result_t r;
        size_t k = 0;
        while (strlen(s->keys[k]) != key->len || memcmp(s->keys[k], key->str, key->len))
            k++;
        if ((r = fn(ctx, k, key, m->items[i + 1])))
            return r;
    }
    return ASH_POLICY_OK;
}

static ash_policy_result_t expect_map(diag_t *d, const node_t *n, const char *what,
                                      const char *example)
{
    char b[96];
    if (n->type == ASH_POLICY__MAP)
        return ASH_POLICY_OK;
    return ash_policy__fail(d, n->line, n->col, "%s must be a mapping such as %s, found %s", what,
                            example, found(n, b, sizeof b));
}

/* ---------- buffer ---------- */

enum { B_ARG, B_COUNT_ARG, B_COUNT, B_REGION, B_N };
static const schema_t buffer_schema = {buffer_keys, B_N, NULL, false};
#define ARG_EXPECT "a kernel argument index 0..31"
#define BUFFER_EXAMPLE "{ arg: 1, count_arg: 2 }"

typedef struct {
    diag_t *d;
    ash_policy_buffer_t *b;
} buffer_ctx_t;

static ash_policy_result_t buffer_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    buffer_ctx_t *c = vc;
    long long x = 0;
    int e = 0;
    ash_policy_result_t r;
    (void)key;
    switch (k) {
    case B_ARG:
    case B_COUNT_ARG:
        if ((r = get_int(c->d, v, buffer_keys[k], 0, ASH_POLICY_MAX_ARG, ARG_EXPECT, &x)))
            return r;
        *(k == B_ARG ? &c->b->arg : &c->b->count_arg) = (unsigned)x;
        return ASH_POLICY_OK;
    case B_COUNT:
        if ((r = get_int(c->d, v, "count", 1, LLONG_MAX, "an element count 1..2^63-1", &x)))
            return r;
        c->b->count = (uint64_t)x;
        return ASH_POLICY_OK;
    default:
        return get_enum(c->d, v, "region", region_names, 1,
                        "the whole allocation containing the pointer", &e);
    }
}

static ash_policy_result_t parse_buffer(diag_t *d, const node_t *n, ash_policy_buffer_t *b)
{
    const node_t *seen[B_N];
    buffer_ctx_t c = {d, b};
    ash_policy_result_t r;
    const char *forms[3] = {"count_arg", "count", "region"};
    int given = 0, first = -1, second = -1;

    memset(b, 0, sizeof *b);
    if ((r = expect_map(d, n, "'buffer'", BUFFER_EXAMPLE)) ||
        (r = walk_map(d, n, "buffer", &buffer_schema, seen, &c, buffer_pair)))
        return r;
    if (!seen[B_ARG])
        return ash_policy__fail(d, n->line, n->col,
                                "'buffer' is missing 'arg' (the index of the kernel argument that "
                                "holds the pointer, 0..31)");
    for (int f = 0; f < 3; f++) {
        const node_t *v = seen[B_COUNT_ARG + f];
        if (!v)
            continue;
        given++;
        /* order by position so the later one is blamed */
        if (first < 0) {
            first = f;
        } else {
            const node_t *a = seen[B_COUNT_ARG + first];
            if (v->line < a->line || (v->line == a->line && v->col < a->col))
                second = first, first = f;
            else if (second < 0)
                second = f;
        }
    }
    if (given == 0)
        return ash_policy__fail(d, n->line, n->col,
                                "'buffer' needs one of count_arg (the argument holding the element "
                                "count), count (a number of elements) or region: allocation");
    if (given > 1) {
        const node_t *v = seen[B_COUNT_ARG + second];
        return ash_policy__fail(d, v->line, v->col,
                                "'%s' conflicts with '%s': give exactly one of count_arg, count, "
                                "region",
                                forms[second], forms[first]);
    }
    b->kind = first == 0 ? ASH_POLICY_BUFFER_COUNT_ARG
            : first == 1 ? ASH_POLICY_BUFFER_COUNT : ASH_POLICY_BUFFER_REGION;
    if (b->kind == ASH_POLICY_BUFFER_COUNT_ARG && b->count_arg == b->arg) {
        const node_t *v = seen[B_COUNT_ARG];
        return ash_policy__fail(d, v->line, v->col,
                                "'count_arg' %u is the same argument as 'arg': the element count "
                                "must come from a different argument",
                                b->count_arg);
    }
    return ASH_POLICY_OK;
}

/* ---------- rules ---------- */

/* ---------- ready points (gradients[].ready) ---------- */

enum { RP_AFTER, RP_NTH, RP_BUFFER, RP_OFFSET, RP_COUNT, RP_N };
static const char *const ready_keys[] = {"after", "nth", "buffer", "offset", "count"};
static const schema_t ready_schema = {ready_keys, RP_N,
                                      " (a ready point is { after: GLOB, buffer: {...} } or "
                                      "{ after: GLOB, offset: E, count: N })", false};
#define READY_EXAMPLE "{ after: \"layer_backward*\", buffer: { arg: 0, count_arg: 1 } }"

typedef struct {
    diag_t *d;
    ash_policy_ready_t *rp;
    char **after;
} ready_ctx_t;

static ash_policy_result_t ready_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    ready_ctx_t *c = vc;
    long long x = 0;
    ash_policy_result_t r;
    (void)key;
    switch (k) {
    case RP_AFTER:
        return get_glob(c->d, v, "after", "\"layer_backward*\"", c->after);
    case RP_NTH:
        r = get_int(c->d, v, "nth", 1, INT32_MAX,
                    "1..2^31-1 (the N-th matching launch since the sync point)", &x);
        c->rp->nth = (unsigned)x;
        return r;
    case RP_BUFFER:
        c->rp->has_buffer = true;
        return parse_buffer(c->d, v, &c->rp->buffer);
    case RP_OFFSET:
        r = get_int(c->d, v, "offset", 0, LLONG_MAX,
                    "an element offset 0..2^63-1 into the rule's buffer", &x);
        c->rp->offset = (uint64_t)x;
        return r;
    default:
        r = get_int(c->d, v, "count", 1, LLONG_MAX, "an element count 1..2^63-1", &x);
        c->rp->count = (uint64_t)x;
        return r;
    }
}

static ash_policy_result_t parse_ready_one(diag_t *d, const node_t *n, const char *where,
                                           ash_policy_ready_t *rp)
{
    const node_t *seen[RP_N];
    char *after = NULL;
    ready_ctx_t c = {d, rp, &after};
    ash_policy_result_t r;
    if ((r = expect_map(d, n, where, READY_EXAMPLE)) ||
        (r = walk_map(d, n, where, &ready_schema, seen, &c, ready_pair)))
        goto out;
    if (!seen[RP_AFTER]) {
        r = ash_policy__fail(d, n->line, n->col, "%s is missing 'after' (the glob of the launch "
                             "after which the region is final)", where);
    } else if (seen[RP_BUFFER] && (seen[RP_OFFSET] || seen[RP_COUNT])) {
        const node_t *v = seen[RP_OFFSET] ? seen[RP_OFFSET] : seen[RP_COUNT];
        r = ash_policy__fail(d, v->line, v->col, "%s: give either 'buffer' (from the ready "
                             "launch's arguments) or 'offset' and 'count' (in the rule's buffer), "
                             "not both", where);
    } else if (!seen[RP_BUFFER] && !(seen[RP_OFFSET] && seen[RP_COUNT])) {
        r = ash_policy__fail(d, n->line, n->col, "%s needs the final region: 'buffer' (from the "
                             "ready launch's arguments) or both 'offset' and 'count' (elements "
                             "in the rule's buffer)", where);
    }
out:
    if (r != ASH_POLICY_OK) {
        free(after);
        return r;
    }
    rp->after = after;
    return ASH_POLICY_OK;
}

static void free_ready(ash_policy_rule_t *rule)
{
    for (size_t i = 0; i < rule->nready; i++)
        free((char *)rule->ready[i].after);
    free((void *)rule->ready);
    rule->ready = NULL;
    rule->nready = 0;
}

static ash_policy_result_t parse_ready(diag_t *d, const node_t *n, const char *rule_where,
                                       ash_policy_rule_t *rule)
{
    char b[96], where[80];
    if (is_null(n))
        return ASH_POLICY_OK;
    if (n->type != ASH_POLICY__SEQ)
        return ash_policy__fail(d, n->line, n->col, "'ready' in %s must be a list of ready "
                                "points such as - " READY_EXAMPLE ", found %s", rule_where,
                                found(n, b, sizeof b));
    if (n->n > ASH_POLICY_MAX_READY)
        return ash_policy__fail(d, n->line, n->col, "'ready' in %s has %zu entries (at most %d)",
                                rule_where, n->n, ASH_POLICY_MAX_READY);
    if (n->n == 0)
        return ASH_POLICY_OK;
    ash_policy_ready_t *list = calloc(n->n, sizeof *list);
    if (!list)
        return ash_policy__oom(d);
    rule->ready = list;
    for (size_t i = 0; i < n->n; i++) {
        snprintf(where, sizeof where, "%s.ready[%zu]", rule_where, i);
        list[i] = (ash_policy_ready_t){.index = (unsigned)i, .line = n->items[i]->line,
                                       .col = n->items[i]->col};
        ash_policy_result_t r = parse_ready_one(d, n->items[i], where, &list[i]);
        if (r)
            return r; /* the caller frees the entries parsed so far */
        rule->nready = i + 1;
    }
    rule->overlap = ASH_POLICY_OVERLAP_READY;
    return ASH_POLICY_OK;
}

/* ---------- rules ---------- */

enum { R_AT, R_BUFFER, R_DTYPE, R_REDUCE, R_WIRE, R_FUSE, R_FUSE_CAP, R_READY, R_OVERLAP,
       R_BUCKET_CAP, R_BROADCAST, R_N };
static const char *const grad_keys[] = {"at", "buffer", "dtype", "reduce", "wire", "fuse",
                                        "fuse_cap_bytes", "ready", "overlap", "bucket_cap_bytes"};
static const char *const param_keys[] = {"at", "buffer", "dtype", "broadcast"};
static const schema_t grad_schema = {grad_keys, 10, " (broadcast applies to parameters only)",
                                     true};
static const schema_t param_schema = {param_keys, 4,
                                      " (reduce, wire, fuse, ready and overlap apply to gradients "
                                      "only)", true};

typedef struct {
    diag_t *d;
    ash_policy_rule_t *rule;
    char **at;
    const char *where;
} rule_ctx_t;

static ash_policy_result_t rule_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    rule_ctx_t *c = vc;
    int e = 0;
    long long x = 0;
    ash_policy_result_t r = ASH_POLICY_OK;
    (void)key;
    if (c->rule->kind == ASH_POLICY_RULE_PARAMETER && k == 3)
        k = R_BROADCAST; /* parameter keys: at, buffer, dtype, broadcast */
    switch (k) {
    case R_AT:
        return get_glob(c->d, v, "at", "\"adamw_kernel*\"", c->at);
    case R_BUFFER:
        return parse_buffer(c->d, v, &c->rule->buffer);
    case R_DTYPE:
        r = get_enum(c->d, v, "dtype", dtype_names, 3, "the element type in memory", &e);
        c->rule->dtype = (ash_policy_dtype_t)e;
        return r;
    case R_REDUCE:
        r = get_enum(c->d, v, "reduce", reduce_names, 2, "how ranks' values combine", &e);
        c->rule->reduce = (ash_policy_reduce_t)e;
        return r;
    case R_WIRE:
        r = get_enum(c->d, v, "wire", wire_names, 4, "the type sent between ranks", &e);
        c->rule->wire = (ash_policy_wire_t)e;
        return r;
    case R_FUSE:
        return get_bool(c->d, v, "fuse", &c->rule->fuse);
    case R_FUSE_CAP:
        r = get_int(c->d, v, "fuse_cap_bytes", 1, (long long)ASH_POLICY_MAX_FUSE_CAP_BYTES,
                    "a number of bytes 1..2^62", &x);
        c->rule->fuse_cap_bytes = (uint64_t)x;
        return r;
    case R_READY:
        return parse_ready(c->d, v, c->where, c->rule);
    case R_OVERLAP:
        r = get_enum(c->d, v, "overlap", overlap_names, 2,
                     "auto: learned ready points; none: reduce at the sync point", &e);
        if (e == 1)
            c->rule->overlap = ASH_POLICY_OVERLAP_AUTO;
        return r;
    case R_BUCKET_CAP:
        r = get_int(c->d, v, "bucket_cap_bytes", 1, (long long)ASH_POLICY_MAX_FUSE_CAP_BYTES,
                    "a number of bytes 1..2^62", &x);
        c->rule->bucket_cap_bytes = (uint64_t)x;
        return r;
    default:
        r = get_enum(c->d, v, "broadcast", broadcast_names, 1,
                     "rank 0's values, once per distinct buffer", &e);
        c->rule->broadcast = (ash_policy_broadcast_t)e;
        return r;
    }
}

/* wire == dtype means "same"; f16/bf16 wire downcasts an f32 buffer only; f32 wire upcasts a
 * 16-bit buffer (reduce in f32 for accuracy, then round back). */
static ash_policy_result_t check_wire(diag_t *d, ash_policy_rule_t *rule, const node_t *wv)
{
    static const ash_policy_wire_t as_wire[] = {ASH_POLICY_WIRE_F32, ASH_POLICY_WIRE_F16,
                                                ASH_POLICY_WIRE_BF16};
    const char *dt = dtype_names[rule->dtype];
    if (rule->wire == ASH_POLICY_WIRE_SAME || rule->wire == as_wire[rule->dtype]) {
        rule->wire = ASH_POLICY_WIRE_SAME;
        return ASH_POLICY_OK;
    }
    if (rule->dtype == ASH_POLICY_DTYPE_F32)
        return ASH_POLICY_OK; /* f32 -> f16 / bf16 downcast */
    if (rule->wire == ASH_POLICY_WIRE_F32)
        return ASH_POLICY_OK; /* f16 / bf16 -> f32 upcast */
    return ash_policy__fail(d, wv->line, wv->col,
                            "wire %s on a %s buffer: f16 and bf16 wire types downcast an f32 "
                            "buffer; for a %s buffer use wire: same",
                            wire_names[rule->wire], dt, dt);
}

static ash_policy_result_t parse_rule(diag_t *d, const node_t *n, ash_policy_rule_kind_t kind,
                                      size_t index, ash_policy_rule_t *rule)
{
    static const char *const required[3][2] = {
        {"at", "a kernel-name glob such as \"adamw_kernel*\""},
        {"buffer", "where the data is, such as " BUFFER_EXAMPLE},
        {"dtype", "f32, f16 or bf16: the element type in memory"}};
    const schema_t *s = kind == ASH_POLICY_RULE_GRADIENT ? &grad_schema : &param_schema;
    const char *list = kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    const node_t *seen[R_N];
    char where[48], *at = NULL;
    rule_ctx_t c = {d, rule, &at, where};
    ash_policy_result_t r;

    snprintf(where, sizeof where, "%s[%zu]", list, index);
    *rule = (ash_policy_rule_t){.kind = kind, .index = (unsigned)index, .line = n->line,
                                .col = n->col, .fuse_cap_bytes = ASH_POLICY_DEFAULT_FUSE_CAP_BYTES,
                                .bucket_cap_bytes = ASH_POLICY_DEFAULT_BUCKET_CAP_BYTES};
    if ((r = expect_map(d, n, where, "{ at: \"name*\", buffer: " BUFFER_EXAMPLE ", dtype: f32 }")))
        return r;
    r = walk_map(d, n, where, s, seen, &c, rule_pair);
    for (int k = 0; r == ASH_POLICY_OK && k < 3; k++)
        if (!seen[k])
            r = ash_policy__fail(d, n->line, n->col, "%s is missing '%s' (%s)", where,
                                 required[k][0], required[k][1]);
    if (r == ASH_POLICY_OK && kind == ASH_POLICY_RULE_GRADIENT)
        r = check_wire(d, rule, seen[R_WIRE] ? seen[R_WIRE] : n);
    if (r == ASH_POLICY_OK && kind == ASH_POLICY_RULE_GRADIENT && seen[R_FUSE_CAP] && !rule->fuse)
        r = ash_policy__fail(d, seen[R_FUSE_CAP]->line, seen[R_FUSE_CAP]->col,
                             "'fuse_cap_bytes' applies only with 'fuse: true' in %s", where);
    if (r == ASH_POLICY_OK && kind == ASH_POLICY_RULE_GRADIENT && seen[R_READY] && seen[R_OVERLAP])
        r = ash_policy__fail(d, seen[R_OVERLAP]->line, seen[R_OVERLAP]->col,
                             "'overlap' conflicts with 'ready' in %s: explicit ready points, or "
                             "overlap: auto (learned ones), not both", where);
    if (r == ASH_POLICY_OK && kind == ASH_POLICY_RULE_GRADIENT &&
        rule->overlap == ASH_POLICY_OVERLAP_AUTO && rule->reduce == ASH_POLICY_REDUCE_SUM)
        r = ash_policy__fail(d, seen[R_OVERLAP]->line, seen[R_OVERLAP]->col,
                             "'overlap: auto' needs reduce: mean in %s: a launch that writes a "
                             "region after its early all-reduce is repaired by reducing the region "
                             "again, which only a mean allows (with reduce: sum, name the ready "
                             "points with 'ready')", where);
    if (r == ASH_POLICY_OK && kind == ASH_POLICY_RULE_GRADIENT && seen[R_BUCKET_CAP] &&
        (!rule->fuse || rule->overlap == ASH_POLICY_OVERLAP_NONE))
        r = ash_policy__fail(d, seen[R_BUCKET_CAP]->line, seen[R_BUCKET_CAP]->col,
                             "'bucket_cap_bytes' applies only with 'fuse: true' and ready points "
                             "('ready' or 'overlap: auto') in %s", where);
    if (r != ASH_POLICY_OK) {
        free(at);
        rule->at = NULL;
        free_ready(rule);
        return r;
    }
    rule->at = at;
    return ASH_POLICY_OK;
}

static ash_policy_result_t parse_rules(diag_t *d, const node_t *n, ash_policy_rule_kind_t kind,
                                       struct ash_policy *p)
{
    const char *list = kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    char b[96];
    if (is_null(n))
        return ASH_POLICY_OK;
    if (n->type != ASH_POLICY__SEQ)
        return ash_policy__fail(d, n->line, n->col,
                                "'%s' must be a list of rules (each starting \"- at: ...\"), "
                                "found %s",
                                list, found(n, b, sizeof b));
    if (n->n == 0)
        return ASH_POLICY_OK;
    if (!(p->rules[kind] = calloc(n->n, sizeof *p->rules[kind])))
        return ash_policy__oom(d);
    for (size_t i = 0; i < n->n; i++) {
        ash_policy_result_t r = parse_rule(d, n->items[i], kind, i, &p->rules[kind][i]);
        if (r)
            return r;
        p->nrules[kind] = i + 1;
    }
    return ASH_POLICY_OK;
}

/* ---------- outputs, debug, top level ---------- */

static const char *const outputs_keys[] = {"main_process_only"};
static const schema_t outputs_schema = {outputs_keys, 1, NULL, false};
static const char *const debug_keys[] = {"check_collectives", "timeout_s", "nan_check", "trace"};
static const schema_t debug_schema = {debug_keys, 4, NULL, false};
static const char *const precision_keys[] = {"matmul", "matmul_exclude"};
static const schema_t precision_schema = {precision_keys, 2, NULL, false};
enum { T_VERSION, T_GRADIENTS, T_PARAMETERS, T_OUTPUTS, T_DEBUG, T_PRECISION, T_SYNC, T_N };
static const char *const top_keys[] = {"version", "gradients", "parameters", "outputs", "debug",
                                       "precision", "sync"};
static const char *const sync_names[] = {"required", "optional"};
static const schema_t top_schema = {top_keys, T_N, NULL, false};

typedef struct {
    diag_t *d;
    struct ash_policy *p;
} top_ctx_t;

static ash_policy_result_t outputs_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    top_ctx_t *c = vc;
    char b[96];
    (void)k, (void)key;
    if (is_null(v))
        return ASH_POLICY_OK;
    if (v->type != ASH_POLICY__SEQ)
        return ash_policy__fail(c->d, v->line, v->col,
                                "'main_process_only' must be a list of path globs such as "
                                "[\"*.ckpt\", \"out/*\"], found %s",
                                found(v, b, sizeof b));
    if (v->n && !(c->p->outputs = calloc(v->n, sizeof *c->p->outputs)))
        return ash_policy__oom(c->d);
    for (size_t i = 0; i < v->n; i++) {
        ash_policy_result_t r = get_glob(c->d, v->items[i], "main_process_only", "\"*.ckpt\"",
                                         &c->p->outputs[i]);
        if (r)
            return r;
        c->p->noutputs = i + 1;
    }
    return ASH_POLICY_OK;
}

static ash_policy_result_t debug_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    top_ctx_t *c = vc;
    long long x = 0;
    ash_policy_result_t r;
    (void)key;
    if (k == 0)
        return get_bool(c->d, v, "check_collectives", &c->p->check_collectives);
    if (k == 2)
        return get_bool(c->d, v, "nan_check", &c->p->nan_check);
    if (k == 3)
        return get_path(c->d, v, "trace", "\"trace-{rank}.json\"", &c->p->trace);
    r = get_int(c->d, v, "timeout_s", 0, INT_MAX, "a number of seconds 0..2147483647 (0: never)",
                &x);
    c->p->timeout_s = (unsigned)x;
    return r;
}

static ash_policy_result_t precision_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    top_ctx_t *c = vc;
    char b[96];
    int e = 0;
    ash_policy_result_t r;
    (void)key;
    if (k == 0) {
        r = get_enum(c->d, v, "matmul", matmul_names, 4,
                     "the compute type for fp32 GEMMs in cuBLAS", &e);
        c->p->matmul = (ash_policy_matmul_t)e;
        return r;
    }
    if (is_null(v))
        return ASH_POLICY_OK;
    if (v->type != ASH_POLICY__SEQ)
        return ash_policy__fail(c->d, v->line, v->col,
                                "'matmul_exclude' must be a list of caller-function globs such as "
                                "[\"*loss*\", \"lm_head_forward\"], found %s",
                                found(v, b, sizeof b));
    if (v->n && !(c->p->matmul_exclude = calloc(v->n, sizeof *c->p->matmul_exclude)))
        return ash_policy__oom(c->d);
    for (size_t i = 0; i < v->n; i++) {
        r = get_glob(c->d, v->items[i], "matmul_exclude", "\"*loss*\"", &c->p->matmul_exclude[i]);
        if (r)
            return r;
        c->p->nmatmul_exclude = i + 1;
    }
    return ASH_POLICY_OK;
}

static ash_policy_result_t section(diag_t *d, const node_t *v, const char *name,
                                   const schema_t *s, const char *example, void *ctx, pair_fn fn)
{
    const node_t *seen[8]; /* >= the largest section schema's key count */
    char what[48];
    ash_policy_result_t r;
    if (is_null(v))
        return ASH_POLICY_OK;
    snprintf(what, sizeof what, "'%s'", name);
    if ((r = expect_map(d, v, what, example)))
        return r;
    return walk_map(d, v, name, s, seen, ctx, fn);
}

static ash_policy_result_t top_pair(void *vc, size_t k, const node_t *key, const node_t *v)
{
    top_ctx_t *c = vc;
    (void)key;
    switch (k) {
    case T_VERSION:
        return ASH_POLICY_OK; /* checked before anything else */
    case T_GRADIENTS:
        return parse_rules(c->d, v, ASH_POLICY_RULE_GRADIENT, c->p);
    case T_PARAMETERS:
        return parse_rules(c->d, v, ASH_POLICY_RULE_PARAMETER, c->p);
    case T_OUTPUTS:
        return section(c->d, v, "outputs", &outputs_schema,
                       "{ main_process_only: [\"*.ckpt\"] }", c, outputs_pair);
    case T_DEBUG:
        return section(c->d, v, "debug", &debug_schema, "{ check_collectives: false }", c,
                       debug_pair);
    case T_SYNC: {
        int e = 0;
        ash_policy_result_t r = get_enum(c->d, v, "sync", sync_names, 2,
                                         "optional: the ranks may run unsynchronised", &e);
        c->p->sync_optional = e == 1;
        return r;
    }
    default:
        return section(c->d, v, "precision", &precision_schema, "{ matmul: bf16 }", c,
                       precision_pair);
    }
}

static ash_policy_result_t check_version(diag_t *d, const node_t *root)
{
    const node_t *v = NULL;
    long long ver = 0;
    char b[96];
    for (size_t i = 0; i + 1 < root->n && !v; i += 2) {
        const node_t *key = root->items[i];
        if (key->type == ASH_POLICY__SCALAR && !strcmp(key->str, "version"))
            v = root->items[i + 1];
    }
    if (!v)
        return ash_policy__fail(d, root->line, root->col,
                                "missing 'version': a policy starts with 'version: 1'");
    if (v->type != ASH_POLICY__SCALAR || !v->plain || v->len == 0)
        return ash_policy__fail(d, v->line, v->col, "'version' must be the integer 1, found %s",
                                found(v, b, sizeof b));
    if (get_int(d, v, "version", LLONG_MIN, LLONG_MAX, "the integer 1", &ver))
        return d->result;
    if (ver != ASH_POLICY_VERSION)
        return ash_policy__fail(d, v->line, v->col,
                                "unsupported version %lld (this accelshim reads version %d)", ver,
                                ASH_POLICY_VERSION);
    return ASH_POLICY_OK;
}

static ash_policy_result_t build(diag_t *d, const node_t *root, struct ash_policy *p)
{
    const node_t *seen[T_N];
    top_ctx_t c = {d, p};
    char b[96];
    ash_policy_result_t r;
    if (!root || is_null(root))
        return ash_policy__fail(d, root ? root->line : 1, root ? root->col : 1,
                                "empty policy: expected a mapping that starts with 'version: 1'");
    if (root->type != ASH_POLICY__MAP)
        return ash_policy__fail(d, root->line, root->col,
                                "expected a mapping at the top level (starting with 'version: "
                                "1'), found %s",
                                found(root, b, sizeof b));
    if ((r = check_version(d, root)))
        return r;
    return walk_map(d, root, "the top-level mapping", &top_schema, seen, &c, top_pair);
}

/* ---------- public entry points ---------- */

void ash_policy_free(ash_policy_t *p)
{
    if (!p)
        return;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < p->nrules[k]; i++) {
            free((char *)p->rules[k][i].at);
            free_ready(&p->rules[k][i]);
        }
        free(p->rules[k]);
    }
    for (size_t i = 0; i < p->noutputs; i++)
        free(p->outputs[i]);
    free(p->outputs);
    for (size_t i = 0; i < p->nmatmul_exclude; i++)
        free(p->matmul_exclude[i]);
    free(p->matmul_exclude);
    free(p->trace);
    free(p->source);
    free(p);
}

ash_policy_result_t ash_policy_parse(const char *text, size_t len, const char *name,
                                     ash_policy_t **out, char *err, size_t errlen)
{
    diag_t d = {.name = name ? name : "<policy>", .buf = err, .cap = errlen};
    ash_policy__node_t *root = NULL;
    ash_policy_t *p = NULL;
    ash_policy_result_t r;

    if (err && errlen)
        err[0] = '\0';
    if (!out || (!text && len)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: invalid argument to ash_policy_parse", d.name);
        return ASH_POLICY_EINVAL;
    }
    *out = NULL;
    if (!(p = calloc(1, sizeof *p)) || !(p->source = strdup(d.name))) {
        r = ash_policy__oom(&d);
        goto out;
    }
    p->timeout_s = ASH_POLICY_DEFAULT_TIMEOUT_S;
    if ((r = ash_policy__yaml_tree(text ? text : "", len, &d, &root)))
        goto out;
    r = build(&d, root, p);
out:
    ash_policy__node_free(root);
    if (r != ASH_POLICY_OK) {
        ash_policy_free(p);
        return r;
    }
    *out = p;
    return ASH_POLICY_OK;
}

ash_policy_result_t ash_policy_load(const char *path, ash_policy_t **out, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    int e = 0;
    FILE *f = NULL;
    ash_policy_result_t r;

    if (err && errlen)
        err[0] = '\0';
    if (!path || !out) {
        if (err && errlen)
            snprintf(err, errlen, "<policy>: invalid argument to ash_policy_load");
        return ASH_POLICY_EINVAL;
    }
    *out = NULL;
    /* O_NONBLOCK and a regular file only: a FIFO with no writer would block its reader forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        e = errno;
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        e = S_ISDIR(st.st_mode) ? EISDIR : POLICY_ENOTREG;
        close(fd);
    } else if (!(f = fdopen(fd, "rb"))) {
        e = errno;
        close(fd);
    } else {
        if (!(buf = malloc(ASH_POLICY_MAX_FILE_BYTES + 1))) {
            fclose(f);
            if (err && errlen)
                snprintf(err, errlen, "%s: out of memory while reading the policy", path);
            return ASH_POLICY_ENOMEM;
        }
        len = fread(buf, 1, ASH_POLICY_MAX_FILE_BYTES + 1, f);
        if (ferror(f))
            e = errno ? errno : EIO;
        else if (len > ASH_POLICY_MAX_FILE_BYTES)
            e = EFBIG;
        fclose(f);
    }
    if (e) {
        free(buf);
        if (err && errlen) {
            if (e == EFBIG)
                snprintf(err, errlen, "%s: cannot read policy: larger than %u bytes", path,
                         ASH_POLICY_MAX_FILE_BYTES);
            else if (e == POLICY_ENOTREG)
                snprintf(err, errlen, "%s: cannot read policy: not a regular file (a FIFO, "
                         "socket or device is never read)", path);
            else
                snprintf(err, errlen, "%s: cannot read policy: %s", path, strerror(e));
        }
        return ASH_POLICY_EIO;
    }
    r = ash_policy_parse(buf, len, path, out, err, errlen);
    free(buf);
    return r;
}

const char *ash_policy_source(const ash_policy_t *p)
{
    return p ? p->source : NULL;
}

size_t ash_policy_rule_count(const ash_policy_t *p, ash_policy_rule_kind_t kind)
{
    return p && (unsigned)kind < 2 ? p->nrules[kind] : 0;
}

const ash_policy_rule_t *ash_policy_rule(const ash_policy_t *p, ash_policy_rule_kind_t kind,
                                         size_t index)
{
    return p && (unsigned)kind < 2 && index < p->nrules[kind] ? &p->rules[kind][index] : NULL;
}

size_t ash_policy_output_count(const ash_policy_t *p)
{
    return p ? p->noutputs : 0;
}

const char *ash_policy_output(const ash_policy_t *p, size_t index)
{
    return p && index < p->noutputs ? p->outputs[index] : NULL;
}

bool ash_policy_check_collectives(const ash_policy_t *p)
{
    return p && p->check_collectives;
}

const char *ash_policy_trace(const ash_policy_t *p)
{
    return p ? p->trace : NULL;
}

bool ash_policy_sync_optional(const ash_policy_t *p) { return p && p->sync_optional; }

bool ash_policy_nan_check(const ash_policy_t *p)
{
    return p && p->nan_check;
}

unsigned ash_policy_timeout_s(const ash_policy_t *p)
{
    return p ? p->timeout_s : ASH_POLICY_DEFAULT_TIMEOUT_S;
}

ash_policy_matmul_t ash_policy_matmul(const ash_policy_t *p)
{
    return p ? p->matmul : ASH_POLICY_MATMUL_DEFAULT;
}

size_t ash_policy_matmul_exclude_count(const ash_policy_t *p)
{
    return p ? p->nmatmul_exclude : 0;
}

const char *ash_policy_matmul_exclude(const ash_policy_t *p, size_t index)
{
    return p && index < p->nmatmul_exclude ? p->matmul_exclude[index] : NULL;
}
