/* ash_policy_match.c — using a validated policy: kernel-name and output-path matching, the
 * normalised (canonical YAML) print, and structural equality.
 *
 * Everything here reads a const policy only, allocates nothing on the match paths, and is safe
 * to call from any thread. Callers: shim/ (per kernel name, per opened path), the CLI, tests.
 * Must not: change a policy; allocate on the match paths; touch CUDA.
 */
#include "ash_policy_int.h"

#include <dlfcn.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*policy_demangle_fn)(const char *, char *, size_t *, int *);

char *ash_policy_demangle(const char *name, ash_policy_sym_fn sym, int *missing)
{
    static policy_demangle_fn fn;
    static int tried;
    if (missing)
        *missing = 0;
    if (!name || name[0] != '_' || name[1] != 'Z')
        return NULL;
    if (!tried) {
        tried = 1;
        void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (lib != NULL && sym != NULL) /* never dlsym itself: the shim wraps it (its real one is SYM) */
            fn = (policy_demangle_fn)sym(lib, "__cxa_demangle");
    }
    if (fn == NULL) {
        if (missing)
            *missing = 1;
        return NULL;
    }
    int status = -1;
    char *d = fn(name, NULL, NULL, &status);
    if (status != 0 || d == NULL) {
        free(d);
        return NULL;
    }
    return d;
}

bool ash_policy_glob_match(const char *pattern, const char *name)
{
    return pattern && name && fnmatch(pattern, name, 0) == 0;
}

/* The demangled name's base: "void k<float>(float*, int)" -> "k<float>", written into BUF. */
static const char *demangled_base(const char *dm, char *buf, size_t cap)
{
    size_t len = strlen(dm);
    if (len == 0 || dm[len - 1] != ')')
        return NULL;
    int depth = 0;
    size_t i = len;
    while (i-- > 0) { /* find the '(' that opens the final parameter list */
        if (dm[i] == ')')
            depth++;
        else if (dm[i] == '(' && --depth == 0)
            break;
    }
    if (i == (size_t)-1 || i == 0)
        return NULL;
    size_t start = strncmp(dm, "void ", 5) == 0 ? 5 : 0;
    if (i <= start || i - start >= cap)
        return NULL;
    memcpy(buf, dm + start, i - start);
    buf[i - start] = '\0';
    return buf;
}

size_t ash_policy_match(const ash_policy_t *p, const char *mangled, const char *demangled,
                        const ash_policy_rule_t **out, size_t cap)
{
    static const ash_policy_rule_kind_t order[2] = {ASH_POLICY_RULE_PARAMETER,
                                                    ASH_POLICY_RULE_GRADIENT};
    char basebuf[512];
    const char *base = demangled ? demangled_base(demangled, basebuf, sizeof basebuf) : NULL;
    size_t total = 0;
    if (!p)
        return 0;
    for (int o = 0; o < 2; o++) {
        ash_policy_rule_kind_t k = order[o];
        for (size_t i = 0; i < p->nrules[k]; i++) {
            const ash_policy_rule_t *r = &p->rules[k][i];
            if (ash_policy_glob_match(r->at, mangled) || ash_policy_glob_match(r->at, demangled) ||
                ash_policy_glob_match(r->at, base)) {
                if (out && total < cap)
                    out[total] = r;
                total++;
            }
        }
    }
    return total;
}

size_t ash_policy_match_ready(const ash_policy_t *p, const char *mangled, const char *demangled,
                              ash_policy_ready_match_t *out, size_t cap)
{
    char basebuf[512];
    const char *base = demangled ? demangled_base(demangled, basebuf, sizeof basebuf) : NULL;
    size_t total = 0;
    if (!p)
        return 0;
    for (size_t i = 0; i < p->nrules[ASH_POLICY_RULE_GRADIENT]; i++) {
        const ash_policy_rule_t *r = &p->rules[ASH_POLICY_RULE_GRADIENT][i];
        for (size_t j = 0; j < r->nready; j++) {
            const char *g = r->ready[j].after;
            if (ash_policy_glob_match(g, mangled) || ash_policy_glob_match(g, demangled) ||
                ash_policy_glob_match(g, base)) {
                if (out && total < cap)
                    out[total] = (ash_policy_ready_match_t){r, &r->ready[j]};
                total++;
            }
        }
    }
    return total;
}

bool ash_policy_has_auto_overlap(const ash_policy_t *p)
{
    for (size_t i = 0; p && i < p->nrules[ASH_POLICY_RULE_GRADIENT]; i++)
        if (p->rules[ASH_POLICY_RULE_GRADIENT][i].overlap == ASH_POLICY_OVERLAP_AUTO)
            return true;
    return false;
}

bool ash_policy_output_main_only(const ash_policy_t *p, const char *path)
{
    if (!p || !path)
        return false;
    while (path[0] == '.' && path[1] == '/') {
        path += 2;
        while (*path == '/')
            path++;
    }
    const char *slash = strrchr(path, '/');
    const char *last = slash ? slash + 1 : path;
    for (size_t i = 0; i < p->noutputs; i++) {
        const char *g = p->outputs[i];
        if (ash_policy_glob_match(g, path) || (!strchr(g, '/') && ash_policy_glob_match(g, last)))
            return true;
    }
    return false;
}

/* ---------- print ---------- */

/* S as a YAML double-quoted scalar; everything but printable ASCII and ordinary UTF-8 escaped. */
static void put_quoted(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; u[i]; i++) {
        unsigned c = u[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\x%02x", c);
        } else if (c == 0xC2 && (u[i + 1] == 0x85 || u[i + 1] == 0xA0)) {
            fprintf(f, "\\u%04x", u[i + 1]); /* NEL, NBSP: line-break / space characters */
            i++;
        } else if (c == 0xE2 && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) {
            fprintf(f, "\\u%04x", 0x2000u | (u[i + 2] & 0x3Fu)); /* LS, PS */
            i += 2;
        } else if (c == 0xEF && u[i + 1] == 0xBB && u[i + 2] == 0xBF) {
            fputs("\\ufeff", f); /* BOM */
            i += 2;
        } else {
            fputc((int)c, f);
        }
    }
    fputc('"', f);
}

static void print_buffer(FILE *f, const ash_policy_buffer_t *b)
{
    fprintf(f, "{ arg: %u, ", b->arg);
    if (b->kind == ASH_POLICY_BUFFER_COUNT_ARG)
        fprintf(f, "count_arg: %u }\n", b->count_arg);
    else if (b->kind == ASH_POLICY_BUFFER_COUNT)
        fprintf(f, "count: %llu }\n", (unsigned long long)b->count);
    else
        fputs("region: allocation }\n", f);
}

static void print_ready(FILE *f, const ash_policy_rule_t *r)
{
    if (r->overlap == ASH_POLICY_OVERLAP_AUTO)
        fputs("    overlap: auto\n", f);
    if (r->nready)
        fputs("    ready:\n", f);
    for (size_t i = 0; i < r->nready; i++) {
        const ash_policy_ready_t *rp = &r->ready[i];
        fputs("      - after: ", f);
        put_quoted(f, rp->after);
        fputc('\n', f);
        if (rp->nth)
            fprintf(f, "        nth: %u\n", rp->nth);
        if (rp->has_buffer) {
            fputs("        buffer: ", f);
            print_buffer(f, &rp->buffer);
        } else {
            fprintf(f, "        offset: %llu\n        count: %llu\n",
                    (unsigned long long)rp->offset, (unsigned long long)rp->count);
        }
    }
    if (r->overlap != ASH_POLICY_OVERLAP_NONE && r->fuse)
        fprintf(f, "    bucket_cap_bytes: %llu\n", (unsigned long long)r->bucket_cap_bytes);
}

static void print_rule(FILE *f, const ash_policy_rule_t *r)
{
    fputs("  - at: ", f);
    put_quoted(f, r->at);
    fputs("\n    buffer: ", f);
    print_buffer(f, &r->buffer);
    fprintf(f, "    dtype: %s\n", ash_policy_dtype_name(r->dtype));
    if (r->kind == ASH_POLICY_RULE_GRADIENT) {
        fprintf(f, "    reduce: %s\n    wire: %s\n    fuse: %s\n", ash_policy_reduce_name(r->reduce),
                ash_policy_wire_name(r->wire), r->fuse ? "true" : "false");
        if (r->fuse)
            fprintf(f, "    fuse_cap_bytes: %llu\n", (unsigned long long)r->fuse_cap_bytes);
        print_ready(f, r);
    } else {
        fputs("    broadcast: once\n", f);
    }
}

int ash_policy_print(const ash_policy_t *p, FILE *f)
{
    static const char *const lists[2] = {"gradients", "parameters"};
    if (!p || !f)
        return -1;
    fprintf(f, "version: %d\n", ASH_POLICY_VERSION);
    for (int k = 0; k < 2; k++) {
        fprintf(f, "%s:%s\n", lists[k], p->nrules[k] ? "" : " []");
        for (size_t i = 0; i < p->nrules[k]; i++)
            print_rule(f, &p->rules[k][i]);
    }
    fputs("outputs:\n  main_process_only: [", f);
    for (size_t i = 0; i < p->noutputs; i++) {
        if (i)
            fputs(", ", f);
        put_quoted(f, p->outputs[i]);
    }
    fprintf(f, "]\ndebug:\n  check_collectives: %s\n  timeout_s: %u\n  nan_check: %s\n",
            p->check_collectives ? "true" : "false", p->timeout_s, p->nan_check ? "true" : "false");
    if (p->trace) {
        fputs("  trace: ", f);
        put_quoted(f, p->trace);
        fputc('\n', f);
    }
    fprintf(f, "precision:\n  matmul: %s\n  matmul_exclude: [", ash_policy_matmul_name(p->matmul));
    for (size_t i = 0; i < p->nmatmul_exclude; i++) {
        if (i)
            fputs(", ", f);
        put_quoted(f, p->matmul_exclude[i]);
    }
    fputs("]\n", f);
    if (p->sync_optional)
        fputs("sync: optional\n", f);
    return ferror(f) || fflush(f) ? -1 : 0;
}

static bool buffer_equal(const ash_policy_buffer_t *a, const ash_policy_buffer_t *b)
{
    return a->kind == b->kind && a->arg == b->arg && a->count_arg == b->count_arg &&
           a->count == b->count;
}

static bool ready_equal(const ash_policy_rule_t *a, const ash_policy_rule_t *b)
{
    if (a->overlap != b->overlap || a->nready != b->nready ||
        (a->overlap != ASH_POLICY_OVERLAP_NONE && a->fuse && a->bucket_cap_bytes != b->bucket_cap_bytes))
        return false;
    for (size_t i = 0; i < a->nready; i++) {
        const ash_policy_ready_t *x = &a->ready[i], *y = &b->ready[i];
        if (strcmp(x->after, y->after) || x->nth != y->nth || x->has_buffer != y->has_buffer ||
            (x->has_buffer ? !buffer_equal(&x->buffer, &y->buffer)
                           : x->offset != y->offset || x->count != y->count))
            return false;
    }
    return true;
}

static bool rule_equal(const ash_policy_rule_t *a, const ash_policy_rule_t *b)
{
    return ready_equal(a, b) && a->kind == b->kind && a->index == b->index && !strcmp(a->at, b->at) &&
           a->buffer.kind == b->buffer.kind && a->buffer.arg == b->buffer.arg &&
           a->buffer.count_arg == b->buffer.count_arg && a->buffer.count == b->buffer.count &&
           a->dtype == b->dtype && a->reduce == b->reduce && a->wire == b->wire &&
           a->broadcast == b->broadcast && a->fuse == b->fuse &&
           a->fuse_cap_bytes == b->fuse_cap_bytes;
}

bool ash_policy_equal(const ash_policy_t *a, const ash_policy_t *b)
{
    if (!a || !b)
        return a == b;
    if (a->check_collectives != b->check_collectives || a->timeout_s != b->timeout_s ||
        a->nan_check != b->nan_check || a->sync_optional != b->sync_optional ||
        (a->trace || b->trace ? !a->trace || !b->trace || strcmp(a->trace, b->trace) : 0) ||
        a->noutputs != b->noutputs || a->matmul != b->matmul ||
        a->nmatmul_exclude != b->nmatmul_exclude)
        return false;
    for (size_t i = 0; i < a->nmatmul_exclude; i++)
        if (strcmp(a->matmul_exclude[i], b->matmul_exclude[i]))
            return false;
    for (int k = 0; k < 2; k++) {
        if (a->nrules[k] != b->nrules[k])
            return false;
        for (size_t i = 0; i < a->nrules[k]; i++)
            if (!rule_equal(&a->rules[k][i], &b->rules[k][i]))
                return false;
    }
    for (size_t i = 0; i < a->noutputs; i++)
        if (strcmp(a->outputs[i], b->outputs[i]))
            return false;
    return true;
}
