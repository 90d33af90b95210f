/* hc_ptx.c — hostcuda's PTX scanner: finds `.entry NAME(...)` with its `.param` list, and
 * module-scope `.global` / `.const` variables with their sizes and initialisers.
 *
 * It is not a PTX parser: comments are blanked, then the text is read as tokens. Parameter sizes:
 * .u64/.s64/.f64/.b64 = 8, .u32/.s32/.f32/.b32 = 4, .u16/.s16/.f16/.b16 = 2, .u8/.s8/.b8 = 1,
 * times the array length for `name[N]`; each offset is aligned to `.align A` or the element size.
 * Threading: pure functions on private buffers.
 * Must not: parse or check PTX beyond the entry and variable declarations it scans; keep shared
 * state.
 */
#include "hc_ptx.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int type_size(const char *t, size_t n)
{
    if (n < 3 || t[0] != '.')
        return 0;
    char k = t[1];
    if (k != 'u' && k != 's' && k != 'f' && k != 'b')
        return 0;
    if (n == 3 && t[2] == '8')
        return 1;
    if (n != 4)
        return 0;
    if (!memcmp(t + 2, "16", 2)) return 2;
    if (!memcmp(t + 2, "32", 2)) return 4;
    if (!memcmp(t + 2, "64", 2)) return 8;
    return 0;
}

/* blank // and block comments so the scanners never match inside them */
static char *strip_comments(const char *src)
{
    size_t n = strlen(src);
    char *t = malloc(n + 1);
    if (!t)
        return NULL;
    memcpy(t, src, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '/' && t[i + 1] == '/') {
            while (i < n && t[i] != '\n')
                t[i++] = ' ';
        } else if (t[i] == '/' && t[i + 1] == '*') {
            while (i < n && !(t[i] == '*' && t[i + 1] == '/'))
                t[i++] = ' ';
            if (i < n) {
                t[i] = ' ';
                t[i + 1] = ' ';
            }
        } else if (t[i] == '"') {   /* skip string literals (e.g. .file names) */
            for (i++; i < n && t[i] != '"'; i++)
                ;
        }
    }
    return t;
}

static const char *skip_ws(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

static int is_ident(int c)
{
    return isalnum(c) || c == '_' || c == '$' || c == '.' || c == '%';
}

/* read one token: identifier/directive, or a single punctuation character */
static const char *token(const char *p, const char **tok, size_t *len)
{
    p = skip_ws(p);
    *tok = p;
    if (!*p) {
        *len = 0;
        return p;
    }
    if (is_ident((unsigned char)*p)) {
        while (*p && is_ident((unsigned char)*p))
            p++;
    } else {
        p++;
    }
    *len = (size_t)(p - *tok);
    return p;
}

static int tok_is(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && !memcmp(t, s, n);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* one declaration "<directives> NAME[N]" up to a ',' or ')': element size, align, count */
static int parse_param(const char *p, const char *end, hc_ptx_param *out, size_t *cursor)
{
    int esz = 0;
    size_t align = 0, count = 1;
    const char *t;
    size_t n;
    int have_name = 0;
    while (p < end) {
        p = token(p, &t, &n);
        if (!n || t >= end)
            break;
        if (tok_is(t, n, ".align")) {
            p = token(p, &t, &n);
            align = strtoul(t, NULL, 10);
        } else if (type_size(t, n)) {
            esz = type_size(t, n);
        } else if (tok_is(t, n, "[")) {
            count = strtoul(p, NULL, 10);
            while (p < end && *p != ']')
                p++;
            if (p < end)
                p++;
        } else if (t[0] != '.') {
            have_name = 1;
        }
    }
    if (!esz || !have_name)
        return -1;
    if (!align)
        align = (size_t)esz;
    out->size = (size_t)esz * count;
    out->offset = (*cursor + align - 1) & ~(align - 1);
    *cursor = out->offset + out->size;
    return 0;
}

static int parse_entry(const char *name, size_t nlen, const char *p, hc_ptx_entry *e, const char **after)
{
    e->name = dup_n(name, nlen);
    if (!e->name)
        return -1;
    p = skip_ws(p);
    *after = p;
    if (*p != '(')
        return 0;   /* no parameter list */
    const char *close = strchr(p, ')');
    if (!close)
        return -1;
    *after = close + 1;
    size_t cursor = 0;
    const char *q = p + 1;
    while (q < close) {
        const char *comma = memchr(q, ',', (size_t)(close - q));
        const char *stop = comma ? comma : close;
        const char *t;
        size_t n;
        token(q, &t, &n);
        if (n && t < stop) {
            hc_ptx_param *np = realloc(e->params, (size_t)(e->nparams + 1) * sizeof *np);
            if (!np)
                return -1;
            e->params = np;
            if (parse_param(q, stop, &e->params[e->nparams], &cursor) == 0)
                e->nparams++;
        }
        q = stop + 1;
    }
    e->argsize = cursor;
    return 0;
}

/* numeric initialiser element: decimal, hex, or PTX float bits 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX */
static void put_value(unsigned char *dst, int esz, char kind, const char *s, size_t n)
{
    char buf[64];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    uint64_t bits;
    if ((buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F' || buf[1] == 'd' || buf[1] == 'D'))) {
        bits = strtoull(buf + 2, NULL, 16);
    } else if (kind == 'f') {
        double d = strtod(buf, NULL);
        if (esz == 4) {
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, 4);
            bits = u;
        } else {
            memcpy(&bits, &d, 8);
        }
    } else {
        bits = (uint64_t)strtoll(buf, NULL, 0);
    }
    memcpy(dst, &bits, (size_t)esz);   /* little-endian host */
}

static int parse_var(const char *p, hc_ptx_var *v, const char **after)
{
    int esz = 0;
    char kind = 'b';
    size_t count = 1, ninit = 0;
    const char *t;
    size_t n;
    const char *name = NULL;
    size_t name_len = 0;
    unsigned char *init = NULL;
    for (;;) {
        p = token(p, &t, &n);
        if (!n)
            return -1;
        if (tok_is(t, n, ";"))
            break;
        if (tok_is(t, n, ".align")) {
            p = token(p, &t, &n);
        } else if (type_size(t, n) && !name) {
            esz = type_size(t, n);
            kind = t[1];
        } else if (tok_is(t, n, "[")) {
            count = strtoul(p, NULL, 10);
            while (*p && *p != ']')
                p++;
            if (*p)
                p++;
        } else if (tok_is(t, n, "=")) {
            if (!esz || !name)
                return -1;
            init = calloc(count, (size_t)esz);
            if (!init)
                return -1;
            for (;;) {
                p = token(p, &t, &n);
                if (!n || tok_is(t, n, ";"))
                    break;
                if (tok_is(t, n, "{") || tok_is(t, n, "}") || tok_is(t, n, ","))
                    continue;
                if (tok_is(t, n, "-")) {   /* negative literal */
                    const char *t2;
                    size_t n2;
                    p = token(p, &t2, &n2);
                    n = (size_t)(t2 + n2 - t);
                }
                if (ninit < count)
                    put_value(init + ninit * (size_t)esz, esz, kind, t, n);
                ninit++;
            }
            break;
        } else if (t[0] != '.' && !name) {
            name = t;
            name_len = n;
        }
    }
    *after = p;
    if (!esz || !name) {
        free(init);
        return -1;
    }
    v->name = dup_n(name, name_len);
    v->size = (size_t)esz * count;
    v->init = init;
    return v->name ? 0 : -1;
}

int hc_ptx_parse(const char *text, hc_ptx_image *img)
{
    memset(img, 0, sizeof *img);
    if (!strstr(text, ".version"))
        return -1;
    char *t = strip_comments(text);
    if (!t)
        return -1;
    const char *p = t;
    int depth = 0, rc = 0;
    while (*p && rc == 0) {
        const char *tok;
        size_t n;
        const char *next = token(p, &tok, &n);
        if (!n)
            break;
        if (tok_is(tok, n, "{")) {
            depth++;
        } else if (tok_is(tok, n, "}")) {
            depth--;
        } else if (depth == 0 && tok_is(tok, n, ".entry")) {
            const char *nm;
            size_t nl;
            next = token(next, &nm, &nl);
            hc_ptx_entry *ne = realloc(img->entries, (size_t)(img->nentries + 1) * sizeof *ne);
            if (!ne) {
                rc = -1;
                break;
            }
            img->entries = ne;
            memset(&ne[img->nentries], 0, sizeof *ne);
            rc = parse_entry(nm, nl, next, &ne[img->nentries], &next);
            img->nentries++;
        } else if (depth == 0 && tok_is(tok, n, ".extern")) {
            const char *semi = strchr(next, ';');   /* declaration only: no storage here */
            next = semi ? semi + 1 : next + strlen(next);
        } else if (depth == 0 && (tok_is(tok, n, ".global") || tok_is(tok, n, ".const"))) {
            hc_ptx_var v = {0};
            const char *after = NULL;
            if (parse_var(next, &v, &after) == 0) {
                hc_ptx_var *nv = realloc(img->vars, (size_t)(img->nvars + 1) * sizeof *nv);
                if (!nv) {
                    free(v.name);
                    free(v.init);
                    rc = -1;
                    break;
                }
                img->vars = nv;
                nv[img->nvars++] = v;
            }
            next = after ? after : next;
        }
        p = next;
    }
    free(t);
    if (rc != 0)
        hc_ptx_free(img);
    return rc;
}

void hc_ptx_free(hc_ptx_image *img)
{
    for (int i = 0; i < img->nentries; i++) {
        free(img->entries[i].name);
        free(img->entries[i].params);
    }
    for (int i = 0; i < img->nvars; i++) {
        free(img->vars[i].name);
        free(img->vars[i].init);
    }
    free(img->entries);
    free(img->vars);
    memset(img, 0, sizeof *img);
}
