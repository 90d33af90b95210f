/* accelshim-compare — compare two records written by ACCELSHIM_RECORD / accelerate-run --record.
 *
 *   accelshim-compare A B [--bitwise | --rtol R --atol T] [--rank R]
 * A and B: a record file, or a directory of them (accelerate-run --record DIR writes
 * DIR/rank-R.jsonl). Prints `same` (exit 0) or the first divergence (exit 1): rule, seq, line
 * kind, rank, which statistic, both values. Unreadable input: a message on stderr, exit 2.
 * Record format (JSON Lines, one object per line, shim/observe/record.c): a "header" line
 * {format:"accelshim-record", version:1, rank, world_size, every}; per recorded sync point and
 * buffer a "pre" line (this rank's values, before the collective) and a "post" line (after it:
 * the reduced values, identical on every rank; a 1-rank record has them too); "exit" lines (the
 * parameter buffers at exit, or state "freed"); an "end" line. Summary fields: rule, seq, count,
 * dtype, hash (xxHash3-64 of the bytes), sum, abs_sum, l2, min, max (over finite elements), nan,
 * inf. A last line without its newline (a killed run) is ignored with a note.
 * What is compared: records of the same world size, rank by rank, every line kind. Records of
 * different world sizes: the pre-collective values differ by construction (each rank's local
 * gradient; the 1-rank gradient is their MEAN), so only "post" and "exit" lines are compared,
 * rank R (default 0) of each side. Bitwise (the default): hash, and then every statistic,
 * exactly. With --rtol/--atol: count, dtype, nan, inf exactly; |a - b| <= atol + rtol * scale
 * where scale is the buffer's magnitude: abs_sum for sum and abs_sum, max(l2) for l2,
 * max(|min|, |max|) over both sides for min and max. Parsing: jansson.
 * Must not: need CUDA or the shim; compare "pre" lines of records of different world sizes; call a
 * divergence "same"; pass on unreadable input (exit 2).
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { K_PRE, K_POST, K_EXIT, K_OTHER };
static const char *const kind_names[] = {"pre", "post", "exit", "?"};
enum { S_SUM, S_ABS_SUM, S_L2, S_MIN, S_MAX, S_N };
static const char *const stat_names[] = {"sum", "abs_sum", "l2", "min", "max"};

typedef struct {
    int kind;
    char *rule;
    unsigned long long seq, count, nan, inf;
    char dtype[8], hash[24], state[24];
    int has_stats;
    double st[S_N];
    int st_null[S_N];
    unsigned line;              /* 1-based line number in its file */
} entry_t;

typedef struct {
    char *path;
    int rank, world_size;
    unsigned long long every;
    entry_t *e;
    size_t n, cap;
    int ended;                  /* an "end" line was read */
    int truncated;              /* the last line had no newline */
    unsigned lines;
} rec_t;

static void die2(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die2(const char *fmt, ...)
{
    va_list ap;
    fputs("accelshim-compare: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static int kind_of(const char *s)
{
    for (int k = 0; k < K_OTHER; k++)
        if (!strcmp(s, kind_names[k]))
            return k;
    return K_OTHER;
}

static const char *get_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int get_u64(json_t *o, const char *key, unsigned long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (unsigned long long)json_integer_value(v);
    return 0;
}

static void parse_line(rec_t *r, const char *text, size_t len, unsigned lineno)
{
    json_error_t err;
    json_t *o = json_loadb(text, len, 0, &err);
    if (!o || !json_is_object(o)) {
        if (lineno == 1)
            die2("%s: not an accelshim record (line 1 is not a JSON object%s%s)", r->path,
                 o ? "" : ": ", o ? "" : err.text);
        die2("%s:%u: not a record line (%s)", r->path, lineno, o ? "not a JSON object" : err.text);
    }
    const char *kind = get_str(o, "kind");
    if (!kind)
        die2("%s:%u: not a record line (no \"kind\")", r->path, lineno);
    if (lineno == 1) {
        const char *fmt = get_str(o, "format");
        unsigned long long v = 0, rank = 0, ws = 0, every = 1;
        if (strcmp(kind, "header") || !fmt || strcmp(fmt, "accelshim-record"))
            die2("%s: not an accelshim record (the first line is no accelshim-record header)",
                 r->path);
        if (get_u64(o, "version", &v) || v != 1)
            die2("%s: record format version %llu: this tool reads version 1", r->path, v);
        if (get_u64(o, "rank", &rank) || get_u64(o, "world_size", &ws) || ws < 1 || rank >= ws)
            die2("%s:1: header lacks a valid rank / world_size", r->path);
        (void)get_u64(o, "every", &every);
        r->rank = (int)rank;
        r->world_size = (int)ws;
        r->every = every ? every : 1;
        json_decref(o);
        return;
    }
    if (!strcmp(kind, "end")) {
        r->ended = 1;
        json_decref(o);
        return;
    }
    int k = kind_of(kind);
    if (k == K_OTHER) { /* "stop" and kinds of later versions: not compared */
        json_decref(o);
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        if (!(r->e = realloc(r->e, r->cap * sizeof *r->e)))
            die2("out of memory");
    }
    entry_t *e = &r->e[r->n];
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->line = lineno;
    const char *rule = get_str(o, "rule"), *dt = get_str(o, "dtype"), *hash = get_str(o, "hash");
    const char *state = get_str(o, "state");
    if (!rule || !dt || get_u64(o, "seq", &e->seq) || get_u64(o, "count", &e->count))
        die2("%s:%u: %s line lacks rule / seq / count / dtype", r->path, lineno, kind);
    if (!(e->rule = strdup(rule)))
        die2("out of memory");
    snprintf(e->dtype, sizeof e->dtype, "%s", dt);
    snprintf(e->state, sizeof e->state, "%s", state ? state : "");
    if (hash) {
        e->has_stats = 1;
        snprintf(e->hash, sizeof e->hash, "%s", hash);
        for (int s = 0; s < S_N; s++) {
            json_t *v = json_object_get(o, stat_names[s]);
            if (json_is_null(v))
                e->st_null[s] = 1;
            else if (json_is_number(v))
                e->st[s] = json_number_value(v);
            else
                die2("%s:%u: '%s' is not a number", r->path, lineno, stat_names[s]);
        }
        if (get_u64(o, "nan", &e->nan) || get_u64(o, "inf", &e->inf))
            die2("%s:%u: nan / inf counts missing", r->path, lineno);
    }
    r->n++;
    json_decref(o);
}

static void load_file(rec_t *r, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die2("%s: cannot open: %s", path, strerror(errno));
    memset(r, 0, sizeof *r);
    if (!(r->path = strdup(path)))
        die2("out of memory");
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    while ((len = getline(&buf, &cap, f)) > 0) {
        if (buf[len - 1] != '\n') { /* the run died while writing this line */
            r->truncated = 1;
            break;
        }
        lineno++;
        parse_line(r, buf, (size_t)len, lineno);
    }
    if (ferror(f))
        die2("%s: read error: %s", path, strerror(errno));
    free(buf);
    fclose(f);
    if (lineno == 0)
        die2("%s: empty: not an accelshim record%s", path,
             r->truncated ? " (its only line is incomplete)" : "");
    r->lines = lineno;
    if (r->truncated)
        fprintf(stderr, "accelshim-compare: note: %s: last line incomplete (the run was killed?): "
                "read up to line %u\n", path, lineno);
}

static int by_rank(const void *a, const void *b)
{
    return ((const rec_t *)a)->rank - ((const rec_t *)b)->rank;
}

/* A path: one file, or a directory whose *.jsonl files are one rank each. */
static rec_t *load_side(const char *path, size_t *nranks)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        die2("%s: %s", path, strerror(errno));
    rec_t *v = NULL;
    size_t n = 0;
    if (!S_ISDIR(sb.st_mode)) {
        v = calloc(1, sizeof *v);
        if (!v)
            die2("out of memory");
        load_file(v, path);
        *nranks = 1;
        return v;
    }
    DIR *d = opendir(path);
    if (!d)
        die2("%s: %s", path, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl"))
            continue;
        if (!(v = realloc(v, (n + 1) * sizeof *v)))
            die2("out of memory");
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, de->d_name);
        load_file(&v[n++], full);
    }
    closedir(d);
    if (n == 0)
        die2("%s: a directory without records (*.jsonl)", path);
    qsort(v, n, sizeof *v, by_rank);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (v[i].rank == v[j].rank)
                die2("%s and %s both hold rank %d", v[i].path, v[j].path, v[i].rank);
    *nranks = n;
    return v;
}

static rec_t *find_rank(rec_t *v, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].rank == rank)
            return &v[i];
    return NULL;
}

/* ---- comparison -------------------------------------------------------------------------- */

static int bitwise = 1;
static double rtol, atol_;

static int same_key(const entry_t *a, const entry_t *b)
{
    return a->kind == b->kind && a->seq == b->seq && !strcmp(a->rule, b->rule);
}

static const entry_t *lookup(const rec_t *r, const entry_t *key, size_t *hint)
{
    for (size_t i = *hint; i < r->n; i++)   /* usually the next one: records share an order */
        if (same_key(&r->e[i], key)) {
            *hint = i + 1;
            return &r->e[i];
        }
    for (size_t i = 0; i < *hint && i < r->n; i++)
        if (same_key(&r->e[i], key))
            return &r->e[i];
    return NULL;
}

static void where(char *out, size_t cap, const entry_t *e, const rec_t *ra, const rec_t *rb)
{
    if (ra->rank == rb->rank)
        snprintf(out, cap, "%s seq %llu (%s, rank %d)", e->rule, e->seq, kind_names[e->kind],
                 ra->rank);
    else
        snprintf(out, cap, "%s seq %llu (%s, rank %d vs rank %d)", e->rule, e->seq,
                 kind_names[e->kind], ra->rank, rb->rank);
}

/* 0 same; 1 differs (printed) */
static int compare_entry(const entry_t *a, const entry_t *b, const rec_t *ra, const rec_t *rb)
{
    char w[256];
    where(w, sizeof w, a, ra, rb);
    if (a->count != b->count) {
        printf("differs: %s: count: A=%llu B=%llu\n", w, a->count, b->count);
        return 1;
    }
    if (strcmp(a->dtype, b->dtype)) {
        printf("differs: %s: dtype: A=%s B=%s\n", w, a->dtype, b->dtype);
        return 1;
    }
    if (a->has_stats != b->has_stats || strcmp(a->state, b->state)) {
        printf("differs: %s: state: A=%s B=%s\n", w, a->has_stats ? "values" : a->state,
               b->has_stats ? "values" : b->state);
        return 1;
    }
    if (!a->has_stats)
        return 0;
    if (a->nan != b->nan || a->inf != b->inf) {
        const char *s = a->nan != b->nan ? "nan" : "inf";
        printf("differs: %s: %s: A=%llu B=%llu\n", w, s, a->nan != b->nan ? a->nan : a->inf,
               a->nan != b->nan ? b->nan : b->inf);
        return 1;
    }
    double absmax = 0;
    for (int s = S_MIN; s <= S_MAX; s++) {
        if (!a->st_null[s] && fabs(a->st[s]) > absmax)
            absmax = fabs(a->st[s]);
        if (!b->st_null[s] && fabs(b->st[s]) > absmax)
            absmax = fabs(b->st[s]);
    }
    for (int s = 0; s < S_N; s++) {
        if (a->st_null[s] || b->st_null[s]) {
            if (a->st_null[s] != b->st_null[s]) {
                printf("differs: %s: %s: A=%s B=%s\n", w, stat_names[s],
                       a->st_null[s] ? "null" : "a number", b->st_null[s] ? "null" : "a number");
                return 1;
            }
            continue;
        }
        double x = a->st[s], y = b->st[s], scale;
        int bad;
        if (bitwise) {
            bad = memcmp(&x, &y, sizeof x) != 0;
        } else {
            scale = s <= S_ABS_SUM ? fmax(a->st[S_ABS_SUM], b->st[S_ABS_SUM])
                  : s == S_L2 ? fmax(a->st[S_L2], b->st[S_L2]) : absmax;
            bad = !(fabs(x - y) <= atol_ + rtol * scale);
        }
        if (bad) {
            printf("differs: %s: %s: A=%.17g B=%.17g (|diff| %.3g)\n", w, stat_names[s], x, y,
                   fabs(x - y));
            return 1;
        }
    }
    if (bitwise && strcmp(a->hash, b->hash)) {
        printf("differs: %s: hash: A=%s B=%s (every statistic equal: the bytes differ)\n", w,
               a->hash, b->hash);
        return 1;
    }
    return 0;
}

static int wanted(const entry_t *e, int cross)
{
    return !cross || e->kind == K_POST || e->kind == K_EXIT;
}

/* Compare two rank records; 0 same, 1 differs. cross: different world sizes. */
static int compare_rank(const rec_t *a, const rec_t *b, int cross, size_t *compared)
{
    size_t hint = 0;
    for (size_t i = 0; i < a->n; i++) {
        const entry_t *e = &a->e[i];
        if (!wanted(e, cross) || e->seq % b->every)
            continue;
        const entry_t *f = lookup(b, e, &hint);
        if (!f) {
            char w[256];
            where(w, sizeof w, e, a, b);
            printf("differs: %s: in A (%s:%u), absent from B (%s: %u lines%s)\n", w, a->path,
                   e->line, b->path, b->lines,
                   b->ended ? "" : ", no end line: the run stopped early");
            return 1;
        }
        if (compare_entry(e, f, a, b))
            return 1;
        (*compared)++;
    }
    for (size_t i = 0; i < b->n; i++) {   /* lines only B has */
        const entry_t *f = &b->e[i];
        size_t h = 0;
        if (!wanted(f, cross) || f->seq % a->every || lookup(a, f, &h))
            continue;
        char w[256];
        where(w, sizeof w, f, a, b);
        printf("differs: %s: in B (%s:%u), absent from A (%s: %u lines%s)\n", w, b->path,
               f->line, a->path, a->lines, a->ended ? "" : ", no end line: the run stopped early");
        return 1;
    }
    return 0;
}

static const char usage[] =
    "usage: accelshim-compare A B [--bitwise | --rtol R --atol T] [--rank R]\n"
    "A, B: a record (ACCELSHIM_RECORD) or a directory of them (accelerate-run --record DIR).\n"
    "Prints `same` (exit 0) or the first divergence (exit 1); unreadable input exits 2.\n"
    "  --bitwise      hashes and statistics exactly equal (default)\n"
    "  --rtol R --atol T   statistics within atol + rtol * (the buffer's magnitude)\n"
    "  --rank R       compare rank R only (default: every rank; across world sizes: rank 0)\n";

static double parse_tol(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || !isfinite(v))
        die2("%s: '%s' is not a number >= 0", opt, s);
    return v;
}

int main(int argc, char **argv)
{
    const char *pa = NULL, *pb = NULL;
    int rank = -1, tol_given = 0, bit_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(s, "--bitwise")) {
            bit_given = 1;
        } else if (!strcmp(s, "--rtol") || !strcmp(s, "--atol") || !strcmp(s, "--rank")) {
            if (i + 1 >= argc)
                die2("%s needs a value\n%s", s, usage);
            const char *v = argv[++i];
            if (!strcmp(s, "--rank")) {
                char *end;
                long r = strtol(v, &end, 10);
                if (end == v || *end || r < 0 || r > 1 << 20)
                    die2("--rank: '%s' is not a rank", v);
                rank = (int)r;
            } else {
                tol_given = 1;
                if (!strcmp(s, "--rtol"))
                    rtol = parse_tol(s, v);
                else
                    atol_ = parse_tol(s, v);
            }
        } else if (s[0] == '-' && s[1]) {
            die2("unknown option '%s'\n%s", s, usage);
        } else if (!pa) {
            pa = s;
        } else if (!pb) {
            pb = s;
        } else {
            die2("unexpected argument '%s'\n%s", s, usage);
        }
    }
    if (!pa || !pb)
        die2("two records needed\n%s", usage);
    if (bit_given && tol_given)
        die2("--bitwise and --rtol/--atol exclude each other");
    bitwise = !tol_given;

    size_t na, nb;
    rec_t *va = load_side(pa, &na), *vb = load_side(pb, &nb);
    int cross = va[0].world_size != vb[0].world_size;
    size_t compared = 0;
    if (cross || na == 1 || nb == 1) {
        /* one rank each: the asked rank where a side has it, else that side's only / rank 0 */
        int want = rank >= 0 ? rank : 0;
        rec_t *a = find_rank(va, na, want), *b = find_rank(vb, nb, want);
        if (!a)
            a = na == 1 ? &va[0] : find_rank(va, na, 0);
        if (!b)
            b = nb == 1 ? &vb[0] : find_rank(vb, nb, 0);
        if (!a || !b)
            die2("rank %d: not in %s", want, !a ? pa : pb);
        if (compare_rank(a, b, cross, &compared))
            return 1;
    } else {
        for (size_t i = 0; i < na; i++) {
            if (rank >= 0 && va[i].rank != rank)
                continue;
            rec_t *b = find_rank(vb, nb, va[i].rank);
            if (!b) {
                printf("differs: rank %d: in A (%s), absent from B\n", va[i].rank, va[i].path);
                return 1;
            }
            if (compare_rank(&va[i], b, 0, &compared))
                return 1;
        }
        if (rank >= 0 && !find_rank(va, na, rank))
            die2("rank %d: not in %s", rank, pa);
        if (rank < 0)
            for (size_t i = 0; i < nb; i++)
                if (!find_rank(va, na, vb[i].rank)) {
                    printf("differs: rank %d: in B (%s), absent from A\n", vb[i].rank, vb[i].path);
                    return 1;
                }
    }
    if (compared == 0)
        die2("nothing to compare: no %s lines in common", cross ? "post or exit" : "record");
    puts("same");
    return 0;
}
