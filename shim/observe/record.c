/* record.c — regression recording of what a legacy binary computes: an observer of the engine.
 *
 * At each sync point the engine tells it the buffer before the collective (what THIS rank
 * computed) and after it (the reduced values every rank holds; with one rank, the same values),
 * and when its nan_check stops the job (the record's last line). A recorded buffer is
 * copied to the host through the REAL driver on the launch's stream and summarised: xxHash3-64
 * of its bytes, and over its finite elements sum, sum of |x|, L2 norm, min, max, plus NaN and Inf
 * counts. Lines: tools/accelshim-compare.c documents the format. Files are opened O_NOFOLLOW; an
 * existing non-empty file is overwritten only when it is an accelshim record (a rerun), never
 * otherwise. Invariant: a line is complete or absent (one write(2) each), so a killed run leaves
 * a readable record. Threading: one mutex serialises everything here (the engine may already
 * hold its own lock: always engine lock first). Callers: the engine's events (ash_observer.h).
 * Must not: issue a collective or any work on the engine's behalf (it reads buffers through the
 * real driver); take the engine's lock while holding its own; overwrite a file that is not an
 * accelshim record; write a line with more than one write(2).
 */
#include "ash_record.h"
#include "ash_sync.h"

#include "ash_alloc.h"
#include "ash_driver.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_world.h"

#define XXH_INLINE_ALL /* header-only: the preloaded library gains no runtime dependency */
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_MAX_RULES 64
#define REC_MAX_BUFS 256
#define REC_LINE 2048
#define REC_MAGIC "{\"kind\":\"header\",\"format\":\"accelshim-record\""

typedef struct {
    const ash_policy_rule_t *rule;
    unsigned long long seq;      /* sync points of this rule seen so far (recorded or not) */
} rec_rule_t;

typedef struct {                 /* a buffer a parameter rule resolved (exit lines, world-1 post) */
    const ash_policy_rule_t *rule;
    CUdeviceptr base;
    size_t count;
} rec_buf_t;

typedef struct {
    char hash[17];
    double sum, abs_sum, l2, min, max;
    unsigned long long finite, nan, inf;
} rec_stats_t;

static struct {
    pthread_mutex_t lock;
    _Atomic int state;           /* 0: not initialised, 1: off, 2: on */
    int fd;                      /* -1: not recording */
    unsigned long long every;
    rec_rule_t rules[REC_MAX_RULES];
    size_t nrules;
    rec_buf_t bufs[REC_MAX_BUFS];
    size_t nbufs;
    unsigned char *host;
    size_t host_cap;
    unsigned long long lines;
    char path[4096];
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* ---- output ------------------------------------------------------------------------------ */

/* One line, complete or absent: a write that lands only in part (the disk filled up) is cut back
 * off (ftruncate to where the line began), so the record ends with its last whole line. */
static void rec_write(const char *line, size_t n)
{
    if (R.fd < 0)
        return;
    off_t start = lseek(R.fd, 0, SEEK_CUR);
    while (n > 0) {
        ssize_t w = write(R.fd, line, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            int cut = start >= 0 && ftruncate(R.fd, start) == 0;
            ash_error("record", "%s: write failed (%s): recording stops here%s", R.path,
                      strerror(e), cut ? " (the record ends with its last whole line)"
                                       : "; the last line may be cut");
            close(R.fd);
            R.fd = -1;
            return;
        }
        line += w;
        n -= (size_t)w;
    }
    R.lines++;
}

/* append to buf at *off, never past cap (a truncated line is still cut at cap - 2 for "}\n") */
static void rec_put(char *buf, size_t cap, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rec_put(char *buf, size_t cap, size_t *off, const char *fmt, ...)
{
    if (*off >= cap - 3)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, cap - 2 - *off, fmt, ap);
    va_end(ap);
    if (n > 0)
        *off += (size_t)n < cap - 2 - *off ? (size_t)n : cap - 3 - *off;
}

static void rec_put_str(char *buf, size_t cap, size_t *off, const char *key, const char *s)
{
    rec_put(buf, cap, off, ",\"%s\":\"", key);
    for (; s && *s && *off < cap - 12; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            rec_put(buf, cap, off, "\\%c", c);
        else if (c < 0x20)
            rec_put(buf, cap, off, "\\u%04x", c);
        else
            buf[(*off)++] = (char)c;
    }
    rec_put(buf, cap, off, "\"");
}

static void rec_end_line(char *buf, size_t *off)
{
    buf[(*off)++] = '}';
    buf[(*off)++] = '\n';
    rec_write(buf, *off);
}

static void rec_rule_name(const ash_policy_rule_t *r, char *out, size_t cap)
{
    snprintf(out, cap, "%s[%u]", r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters",
             r->index);
}

/* ---- statistics -------------------------------------------------------------------------- */

static float rec_f16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, u;
    if (exp == 0x1f)
        u = sign | 0x7f800000u | (mant << 13);
    else if (exp != 0)
        u = sign | ((exp + 112) << 23) | (mant << 13);
    else if (mant == 0)
        u = sign;
    else {                                  /* subnormal: normalise */
        exp = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        u = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* one element: NaN / Inf counted from the bits, finite values accumulated in double */
#define REC_ACCUMULATE(st, f, bits, expmask, mantmask)                                         \
    do {                                                                                       \
        if (((bits) & (expmask)) == (expmask)) {                                               \
            if ((bits) & (mantmask))                                                           \
                (st)->nan++;                                                                   \
            else                                                                               \
                (st)->inf++;                                                                   \
        } else {                                                                               \
            double x_ = (f);                                                                   \
            sum += x_;                                                                         \
            abs_sum += x_ < 0 ? -x_ : x_;                                                      \
            l2 += x_ * x_;                                                                     \
            mn = x_ < mn ? x_ : mn;                                                            \
            mx = x_ > mx ? x_ : mx;                                                            \
        }                                                                                      \
    } while (0)

static void rec_stats(const unsigned char *b, size_t count, ash_policy_dtype_t dt, rec_stats_t *st)
{
    size_t es = dt == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    snprintf(st->hash, sizeof st->hash, "%016llx", (unsigned long long)XXH3_64bits(b, count * es));
    double sum = 0, abs_sum = 0, l2 = 0, mn = INFINITY, mx = -INFINITY;
    st->nan = st->inf = 0;
    if (dt == ASH_POLICY_DTYPE_F32) {
        for (size_t i = 0; i < count; i++) {
            uint32_t u;
            float f;
            memcpy(&u, b + 4 * i, 4);
            memcpy(&f, &u, 4);
            REC_ACCUMULATE(st, f, u, 0x7f800000u, 0x007fffffu);
        }
    } else if (dt == ASH_POLICY_DTYPE_BF16) {
        for (size_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            uint32_t u = (uint32_t)h << 16;
            float f;
            memcpy(&f, &u, 4);
            REC_ACCUMULATE(st, f, h, 0x7f80u, 0x007fu);
        }
    } else {
        for (size_t i = 0; i < count; i++) {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            REC_ACCUMULATE(st, rec_f16(h), h, 0x7c00u, 0x03ffu);
        }
    }
    st->finite = count - st->nan - st->inf;
    st->sum = sum;
    st->abs_sum = abs_sum;
    st->l2 = sqrt(l2);
    st->min = mn;
    st->max = mx;
}

/* Copy the buffer to R.host (ordered on s) and summarise it. */
static ash_status_t rec_read(CUdeviceptr p, size_t count,
                             ash_policy_dtype_t dt, CUstream s, rec_stats_t *st)
{
    size_t bytes = count * (dt == ASH_POLICY_DTYPE_F32 ? 4 : 2);
    if (bytes > R.host_cap) {
        unsigned char *h = realloc(R.host, bytes);
        if (!h) {
            ash_error("record", "out of host memory for a %zu-byte buffer: not recorded", bytes);
            return ASH_ERR_NOMEM;
        }
        R.host = h;
        R.host_cap = bytes;
    }
    CUresult r = ASH_CU(cuMemcpyDtoHAsync_v2(R.host, p, bytes, s));
    if (r == CUDA_SUCCESS)
        r = ASH_CU(cuStreamSynchronize(s));
    if (r != CUDA_SUCCESS) {
        ash_error("record", "copying %zu bytes at 0x%llx to the host failed (CUresult %d): not "
                  "recorded", bytes, (unsigned long long)p, (int)r);
        return ASH_ERR_DRIVER;
    }
    rec_stats(R.host, count, dt, st);
    return ASH_OK;
}

/* One summary line: {"kind":K,"rule":...,"seq":N,...stats} */
static void rec_line(const char *kind, const ash_policy_rule_t *r, const char *kernel,
                     unsigned long long seq, size_t count, const rec_stats_t *st)
{
    char line[REC_LINE], name[64];
    size_t off = 0;
    rec_rule_name(r, name, sizeof name);
    rec_put(line, sizeof line, &off, "{\"kind\":\"%s\",\"rule\":\"%s\"", kind, name);
    rec_put_str(line, sizeof line, &off, "at", r->at);
    if (kernel)
        rec_put_str(line, sizeof line, &off, "kernel", kernel);
    rec_put(line, sizeof line, &off, ",\"seq\":%llu,\"count\":%zu,\"dtype\":\"%s\"", seq, count,
            ash_policy_dtype_name(r->dtype));
    if (st) {
        rec_put(line, sizeof line, &off, ",\"hash\":\"%s\",\"sum\":%.17g,\"abs_sum\":%.17g,"
                "\"l2\":%.17g", st->hash, st->sum, st->abs_sum, st->l2);
        if (st->finite)
            rec_put(line, sizeof line, &off, ",\"min\":%.17g,\"max\":%.17g", st->min, st->max);
        else
            rec_put(line, sizeof line, &off, ",\"min\":null,\"max\":null");
        rec_put(line, sizeof line, &off, ",\"nan\":%llu,\"inf\":%llu", st->nan, st->inf);
    }
    rec_end_line(line, &off);
}

/* ---- init and exit ----------------------------------------------------------------------- */

/* "{rank}" -> rank. A directory (an existing one, or a path ending in '/') -> DIR/rank-R.jsonl.
 * (a missing last level is created). A file path without {rank}, with several ranks: ".R" is
 * appended (one file per rank). */
static int rec_expand(const char *tmpl, int rank, int size, char *out, size_t cap)
{
    size_t o = 0, tl = strlen(tmpl);
    int had = 0;
    struct stat sb;
    if ((tl > 0 && tmpl[tl - 1] == '/') || (stat(tmpl, &sb) == 0 && S_ISDIR(sb.st_mode))) {
        if (mkdir(tmpl, 0755) != 0 && errno != EEXIST) /* one level; ranks may race: EEXIST */
            ash_warn("record", "%s: cannot create the directory (%s)", tmpl, strerror(errno));
        int n = snprintf(out, cap, "%s%srank-%d.jsonl", tmpl, tmpl[tl - 1] == '/' ? "" : "/", rank);
        return n < 0 || (size_t)n >= cap ? -1 : 0;
    }
    for (const char *p = tmpl; *p; ) {
        if (!strncmp(p, "{rank}", 6)) {
            int n = snprintf(out + o, cap - o, "%d", rank);
            if (n < 0 || (size_t)n >= cap - o)
                return -1;
            o += (size_t)n;
            p += 6;
            had = 1;
        } else {
            if (o + 1 >= cap)
                return -1;
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    if (!had && size > 1) {
        int n = snprintf(out + o, cap - o, ".%d", rank);
        if (n < 0 || (size_t)n >= cap - o)
            return -1;
    }
    return 0;
}

static int rec_open(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        ash_error("record", "%s: cannot open (%s)%s: not recording", path, strerror(errno),
                  errno == ELOOP ? "; it is a symbolic link, which a record never follows" : "");
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        ash_error("record", "%s: not a regular file: not recording", path);
        close(fd);
        return -1;
    }
    if (sb.st_size > 0) {
        char head[sizeof REC_MAGIC];
        ssize_t n = pread(fd, head, sizeof head - 1, 0);
        if (n != (ssize_t)sizeof head - 1 || memcmp(head, REC_MAGIC, sizeof head - 1) != 0) {
            ash_error("record", "%s exists and is not an accelshim record: not overwritten, not "
                      "recording (remove it or choose another path)", path);
            close(fd);
            return -1;
        }
        if (ftruncate(fd, 0) != 0) { /* a rerun replaces its own earlier record */
            ash_error("record", "%s: cannot truncate the earlier record (%s): not recording",
                      path, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void rec_init_locked(const ash_policy_t *pol)
{
    long every = 1;
    (void)ash_opt_int(ASH_OPT_RECORD_EVERY, &every); /* default 1 */
    R.every = (unsigned long long)every;
    const char *tmpl = ash_opt_str(ASH_OPT_RECORD);
    const ash_world_t *w = ash_world();
    if (tmpl && *tmpl) {
        if (rec_expand(tmpl, w->rank, w->size, R.path, sizeof R.path) != 0)
            ash_error("record", "ACCELSHIM_RECORD path too long: not recording");
        else if ((R.fd = rec_open(R.path)) >= 0) {
            char line[REC_LINE];
            size_t off = 0;
            rec_put(line, sizeof line, &off, REC_MAGIC ",\"version\":1,\"rank\":%d,"
                    "\"world_size\":%d,\"every\":%llu,\"pid\":%ld", w->rank, w->size, R.every,
                    (long)getpid());
            rec_put_str(line, sizeof line, &off, "policy", pol ? ash_policy_source(pol) : "");
            rec_end_line(line, &off);
            ash_info("record", "recording sync points to %s (every %llu)", R.path, R.every);
        }
    }
    atomic_store(&R.state, R.fd >= 0 ? 2 : 1);
}

/* 1 when recording (initialising on the first call). */
static int rec_on(void)
{
    const ash_policy_t *pol = ash_sync_policy();
    int st = atomic_load_explicit(&R.state, memory_order_acquire);
    if (st == 0) {
        pthread_mutex_lock(&R.lock);
        if (atomic_load(&R.state) == 0)
            rec_init_locked(pol);
        pthread_mutex_unlock(&R.lock);
        st = atomic_load(&R.state);
    }
    if (st == 2 && !ash_driver()) {
        ASH_WARN_CAPPED("record", "the real driver lacks what recording needs: sync point not "
                        "recorded");
        return 0;
    }
    return st == 2;
}

/* Exit sequence, final-values step: the final values of every buffer a parameter rule resolved,
 * then the "end" line. */
static void rec_exit(void)
{
    if (atomic_load_explicit(&R.state, memory_order_acquire) != 2)
        return;
    pthread_mutex_lock(&R.lock);
    CUcontext ctx = NULL;
    int have_ctx = ash_driver() && ASH_CU(cuCtxGetCurrent(&ctx)) == CUDA_SUCCESS && ctx;
    for (size_t i = 0; i < R.nbufs && R.fd >= 0; i++) {
        const rec_buf_t *b = &R.bufs[i];
        size_t es = b->rule->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        ash_alloc_entry_t e;
        unsigned long long nth = 0;
        for (size_t j = 0; j < i; j++)
            nth += R.bufs[j].rule == b->rule;
        int live = ash_alloc_find(b->base, &e) == ASH_ALLOC_OK &&
                   b->base + b->count * es <= e.base + e.size;
        rec_stats_t st;
        if (have_ctx && live && rec_read(b->base, b->count, b->rule->dtype, NULL, &st) == ASH_OK) {
            rec_line("exit", b->rule, NULL, nth, b->count, &st);
        } else {
            char line[REC_LINE], name[64];
            size_t off = 0;
            rec_rule_name(b->rule, name, sizeof name);
            rec_put(line, sizeof line, &off, "{\"kind\":\"exit\",\"rule\":\"%s\",\"seq\":%llu,"
                    "\"count\":%zu,\"dtype\":\"%s\",\"state\":\"%s\"", name, nth, b->count,
                    ash_policy_dtype_name(b->rule->dtype),
                    !live ? "freed" : !have_ctx ? "no-context" : "unreadable");
            rec_end_line(line, &off);
        }
    }
    if (R.fd >= 0) {
        char line[128];
        size_t off = 0;
        rec_put(line, sizeof line, &off, "{\"kind\":\"end\",\"lines\":%llu", R.lines + 1);
        rec_end_line(line, &off);
        close(R.fd);
        R.fd = -1;
    }
    pthread_mutex_unlock(&R.lock);
}

/* ---- sync points ------------------------------------------------------------------------- */

static rec_rule_t *rec_rule(const ash_policy_rule_t *r)
{
    for (size_t i = 0; i < R.nrules; i++)
        if (R.rules[i].rule == r)
            return &R.rules[i];
    if (R.nrules == REC_MAX_RULES)
        return NULL;
    R.rules[R.nrules] = (rec_rule_t){r, 0};
    return &R.rules[R.nrules++];
}

/* Remember a parameter buffer; 1 if it is new (its first sync point: where a broadcast runs). */
static int rec_param_buffer(const ash_policy_rule_t *r, CUdeviceptr base, size_t count)
{
    for (size_t i = 0; i < R.nbufs; i++)
        if (R.bufs[i].rule == r && R.bufs[i].base == base && R.bufs[i].count == count)
            return 0;
    if (R.nbufs < REC_MAX_BUFS)
        R.bufs[R.nbufs++] = (rec_buf_t){r, base, count};
    return 1;
}

/* The engine's nan_check found NaN/Inf in this buffer: the record's last line says so. */
static void rec_nan_found(const ash_sync_event_t *e)
{
    if (atomic_load_explicit(&R.state, memory_order_acquire) != 2)
        return;
    char name[64], line[REC_LINE];
    size_t off = 0;
    rec_rule_name(e->rule, name, sizeof name);
    rec_put(line, sizeof line, &off, "{\"kind\":\"stop\",\"reason\":\"nan_check\",\"rule\":\"%s\","
            "\"seq\":%llu,\"count\":%zu,\"nan\":%llu,\"inf\":%llu", name, e->seq, e->count, e->nan,
            e->inf);
    pthread_mutex_lock(&R.lock);
    rec_end_line(line, &off);
    pthread_mutex_unlock(&R.lock);
}

/* A sync point's buffer before its collective: a parameter rule's first match per distinct
 * buffer is remembered (exit lines); every Nth sync point of a rule gets a "pre" line. */
static void rec_before_buffer(const ash_sync_event_t *e)
{
    const ash_policy_rule_t *r = e->rule;
    if (!rec_on() || !r || e->count == 0)
        return;
    pthread_mutex_lock(&R.lock);
    if (r->kind == ASH_POLICY_RULE_PARAMETER)
        (void)rec_param_buffer(r, e->ptr, e->count);
    rec_rule_t *rr = rec_rule(r);
    unsigned long long seq = rr ? rr->seq++ : 0;
    rec_stats_t st;
    if (R.fd >= 0 && rr && seq % R.every == 0 &&
        rec_read(e->ptr, e->count, r->dtype, e->stream, &st) == ASH_OK)
        rec_line("pre", r, e->kernel ? e->kernel->demangled : NULL, seq, e->count, &st);
    pthread_mutex_unlock(&R.lock);
}

/* The same buffer after its collective (with one rank: unchanged): a "post" line. */
static void rec_after_buffer(const ash_sync_event_t *e)
{
    const ash_policy_rule_t *r = e->rule;
    if (atomic_load_explicit(&R.state, memory_order_acquire) != 2 || !ash_driver() || !r)
        return;
    pthread_mutex_lock(&R.lock);
    rec_rule_t *rr = rec_rule(r);
    if (R.fd >= 0 && rr && rr->seq > 0 && (rr->seq - 1) % R.every == 0) {
        rec_stats_t st;
        if (rec_read(e->ptr, e->count, r->dtype, e->stream, &st) == ASH_OK)
            rec_line("post", r, NULL, rr->seq - 1, e->count, &st);
    }
    pthread_mutex_unlock(&R.lock);
}

static int rec_wants_buffers(void) { return rec_on(); }

const ash_observer_t ash_record_observer = {
    .name = "record",
    .wants_buffers = rec_wants_buffers,
    .before_buffer = rec_before_buffer,
    .nan_found = rec_nan_found,
    .after_buffer = rec_after_buffer,
    .final_values = rec_exit,
};
