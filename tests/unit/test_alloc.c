/* test_alloc.c — properties of the allocation table (shim/core/alloc.c):
 *  1. it works from its static state with no init call;
 *  2. find answers "which allocation contains ptr" exactly at base, base+size-1 and not at base+size;
 *  3. size 0, devices outside 0..63, wrapping ranges are rejected; unknown bases are a status;
 *  4. an overlapping insert returns ASH_ALLOC_ERR_OVERLAP, replaces the stale entry, counts it;
 *  5. per-device current/peak/count are exact;
 *  6. 100k random insert/remove/find ops (fixed seed, printed) agree with a linear-scan model;
 *  7. 8 threads inserting/removing/finding concurrently leave exactly the union of their models;
 *  and it prints (does not assert) the cost of one lookup with 10k live entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ash_alloc.h"

#ifdef __SANITIZE_THREAD__
#define SCALE_DOWN 10 /* ThreadSanitizer is ~10x slower: fewer ops, same properties */
#else
#define SCALE_DOWN 1
#endif

/* ---- helpers ---- */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fmt_entry(char *buf, size_t len, ash_alloc_status_t st, const ash_alloc_entry_t *e)
{
    if (st == ASH_ALLOC_OK || st == ASH_ALLOC_ERR_OVERLAP)
        snprintf(buf, len, "%s {base=0x%" PRIx64 " size=0x%" PRIx64 " dev=%d kind=%s}",
                 ash_alloc_status_name(st), e->base, e->size, e->device,
                 ash_alloc_kind_name(e->kind));
    else
        snprintf(buf, len, "%s", ash_alloc_status_name(st));
}

static int entry_eq(const ash_alloc_entry_t *a, const ash_alloc_entry_t *b)
{
    return a->base == b->base && a->size == b->size && a->device == b->device && a->kind == b->kind;
}

/* ---- reference model: a plain array scanned linearly, same semantics as the table ---- */

typedef struct {
    ash_alloc_entry_t *v;
    size_t n, cap;
    uint64_t cur[ASH_ALLOC_MAX_DEVICES], peak[ASH_ALLOC_MAX_DEVICES], cnt[ASH_ALLOC_MAX_DEVICES];
    uint64_t stale;
} model_t;

static void model_free(model_t *m) { free(m->v); memset(m, 0, sizeof *m); }

static void model_del_at(model_t *m, size_t i)
{
    m->cur[m->v[i].device] -= m->v[i].size;
    m->cnt[m->v[i].device]--;
    m->v[i] = m->v[--m->n];
}

static ash_alloc_status_t model_insert(model_t *m, uint64_t b, uint64_t s, int d, ash_alloc_kind_t k)
{
    if (s == 0 || b + s < b || d < 0 || d >= ASH_ALLOC_MAX_DEVICES)
        return ASH_ALLOC_ERR_INVALID;
    ash_alloc_status_t st = ASH_ALLOC_OK;
    for (size_t i = 0; i < m->n;) {
        if (m->v[i].base < b + s && b < m->v[i].base + m->v[i].size) {
            model_del_at(m, i);
            m->stale++;
            st = ASH_ALLOC_ERR_OVERLAP;
        } else {
            i++;
        }
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
        assert_non_null(m->v);
    }
    m->v[m->n++] = (ash_alloc_entry_t){.base = b, .size = s, .device = d, .kind = k};
    m->cur[d] += s;
    m->cnt[d]++;
    if (m->cur[d] > m->peak[d])
        m->peak[d] = m->cur[d];
    return st;
}

static ash_alloc_status_t model_remove(model_t *m, uint64_t b, ash_alloc_entry_t *out)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].base == b) {
            *out = m->v[i];
            model_del_at(m, i);
            return ASH_ALLOC_OK;
        }
    return ASH_ALLOC_ERR_NOT_FOUND;
}

static ash_alloc_status_t model_find(const model_t *m, uint64_t p, ash_alloc_entry_t *out)
{
    for (size_t i = 0; i < m->n; i++)
        if (p >= m->v[i].base && p - m->v[i].base < m->v[i].size) {
            *out = m->v[i];
            return ASH_ALLOC_OK;
        }
    return ASH_ALLOC_ERR_NOT_FOUND;
}

static int cmp_base(const void *a, const void *b)
{
    uint64_t x = ((const ash_alloc_entry_t *)a)->base, y = ((const ash_alloc_entry_t *)b)->base;
    return x < y ? -1 : x > y;
}

/* The table's snapshot equals `want` (n entries, any order; sorted here). */
static void assert_table_equals(ash_alloc_entry_t *want, size_t n, const char *what)
{
    qsort(want, n, sizeof *want, cmp_base);
    ash_alloc_entry_t *got = calloc(n + 1, sizeof *got);
    assert_non_null(got);
    size_t total = 0, copied = ash_alloc_snapshot(got, n + 1, &total);
    if (total != n || copied != n) {
        print_error("%s: table holds %zu entries (copied %zu), model holds %zu\n", what, total,
                    copied, n);
        free(got);
        fail();
    }
    for (size_t i = 0; i < n; i++)
        if (!entry_eq(&got[i], &want[i])) {
            char a[160], b[160];
            fmt_entry(a, sizeof a, ASH_ALLOC_OK, &got[i]);
            fmt_entry(b, sizeof b, ASH_ALLOC_OK, &want[i]);
            print_error("%s: entry %zu differs: table %s, model %s\n", what, i, a, b);
            free(got);
            fail();
        }
    free(got);
}

static int reset_table(void **state)
{
    (void)state;
    ash_alloc_reset();
    return 0;
}

#define ASSERT_STATUS(expr, want)                                                                  \
    do {                                                                                           \
        ash_alloc_status_t got_ = (expr), want_ = (want);                                          \
        if (got_ != want_)                                                                         \
            fail_msg("%s: got %s, want %s", #expr, ash_alloc_status_name(got_),                    \
                     ash_alloc_status_name(want_));                                                \
    } while (0)

#define ASSERT_U64(got, want)                                                                      \
    do {                                                                                           \
        uint64_t g_ = (got), w_ = (want);                                                          \
        if (g_ != w_)                                                                              \
            fail_msg("%s = %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")", #got,   \
                     g_, g_, w_, w_);                                                              \
    } while (0)

/* ---- 1. static state, no init ---- */

static void test_usable_before_init(void **state)
{
    (void)state;
    printf("# property: the static table answers before any init or reset call\n");
    uint64_t cur = 1, peak = 1, cnt = 1;
    ASSERT_STATUS(ash_alloc_find(0x1000, NULL), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_stats(0, &cur, &peak, &cnt), ASH_ALLOC_OK);
    ASSERT_U64(cur, 0);
    ASSERT_U64(peak, 0);
    ASSERT_U64(cnt, 0);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 0x100, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_find(0x10ff, NULL), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
}

/* ---- 2. boundaries ---- */

static void test_boundaries(void **state)
{
    (void)state;
    printf("# property: find(p) succeeds exactly for base <= p < base+size, adjacent ranges "
           "resolve to the right one\n");
    const uint64_t b = 0x7f0000200000ull, s = 0x3000;
    ASSERT_STATUS(ash_alloc_insert(b, s, 3, ASH_ALLOC_KIND_PITCH), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(b + s, 0x10, 4, ASH_ALLOC_KIND_MANAGED), ASH_ALLOC_OK); /* adjacent */
    ash_alloc_entry_t e;
    memset(&e, 0, sizeof e);
    ASSERT_STATUS(ash_alloc_find(b - 1, &e), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_find(b, &e), ASH_ALLOC_OK);
    ASSERT_U64(e.base, b);
    ASSERT_U64(e.size, s);
    assert_int_equal(e.device, 3);
    assert_int_equal(e.kind, ASH_ALLOC_KIND_PITCH);
    ASSERT_STATUS(ash_alloc_find(b + s - 1, &e), ASH_ALLOC_OK);
    ASSERT_U64(e.base, b);
    ASSERT_STATUS(ash_alloc_find(b + s, &e), ASH_ALLOC_OK); /* first byte of the neighbour */
    ASSERT_U64(e.base, b + s);
    assert_int_equal(e.device, 4);
    ASSERT_STATUS(ash_alloc_find(b + s + 0x10, &e), ASH_ALLOC_ERR_NOT_FOUND);
    /* the top of the address space: base + size == 2^64 would wrap, the last byte is fine */
    ASSERT_STATUS(ash_alloc_insert(UINT64_MAX - 0xff, 0x100, 0, ASH_ALLOC_KIND_DEVICE),
                  ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(UINT64_MAX - 0xff, 0xff, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_find(UINT64_MAX - 1, &e), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_find(UINT64_MAX, &e), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_insert(0, 1, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK); /* base 0 */
    ASSERT_STATUS(ash_alloc_find(0, &e), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_find(1, &e), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
}

/* ---- 3. rejected input and unknown bases ---- */

static void test_invalid_and_unknown(void **state)
{
    (void)state;
    printf("# property: size 0 / device outside 0..63 / bad kind are INVALID and change nothing; "
           "removing an unknown base or an interior pointer is NOT_FOUND\n");
    ASSERT_STATUS(ash_alloc_insert(0x1000, 0, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 16, -1, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 16, 64, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 16, 0, ASH_ALLOC_KIND_COUNT_), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 16, 0, (ash_alloc_kind_t)-1), ASH_ALLOC_ERR_INVALID);
    size_t total = 99;
    ash_alloc_snapshot(NULL, 0, &total);
    ASSERT_U64(total, 0);
    ASSERT_STATUS(ash_alloc_find(0x1000, NULL), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_stats(64, NULL, NULL, NULL), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_stats(-1, NULL, NULL, NULL), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_insert(0x1000, 16, 63, ASH_ALLOC_KIND_HOST_REGISTERED), ASH_ALLOC_OK);

    ash_alloc_entry_t e = {.base = 0xdead, .size = 1, .device = 7, .kind = ASH_ALLOC_KIND_POOL};
    const ash_alloc_entry_t untouched = e;
    ASSERT_STATUS(ash_alloc_remove(0x2000, &e), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_remove(0x1001, &e), ASH_ALLOC_ERR_NOT_FOUND); /* interior pointer */
    ASSERT_STATUS(ash_alloc_remove(0x1001, NULL), ASH_ALLOC_ERR_NOT_FOUND);
    assert_true(entry_eq(&e, &untouched));
    ASSERT_STATUS(ash_alloc_remove(0x1000, &e), ASH_ALLOC_OK);
    ASSERT_U64(e.base, 0x1000);
    ASSERT_U64(e.size, 16);
    assert_int_equal(e.device, 63);
    assert_int_equal(e.kind, ASH_ALLOC_KIND_HOST_REGISTERED);
    ASSERT_STATUS(ash_alloc_remove(0x1000, &e), ASH_ALLOC_ERR_NOT_FOUND); /* double free */
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
}

/* ---- 4. overlap ---- */

static void test_overlap_replaces_stale(void **state)
{
    (void)state;
    printf("# property: an insert overlapping live entries returns OVERLAP, is recorded, drops "
           "every overlapped (stale) entry from table and stats, and counts each\n");
    ash_alloc_entry_t e;
    ASSERT_STATUS(ash_alloc_insert(0x10000, 0x1000, 1, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    /* a base inside a live allocation */
    ASSERT_STATUS(ash_alloc_insert(0x10800, 0x100, 2, ASH_ALLOC_KIND_ASYNC), ASH_ALLOC_ERR_OVERLAP);
    ASSERT_U64(ash_alloc_stale_count(), 1);
    ASSERT_STATUS(ash_alloc_find(0x10000, &e), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_find(0x10850, &e), ASH_ALLOC_OK);
    ASSERT_U64(e.base, 0x10800);
    assert_int_equal(e.kind, ASH_ALLOC_KIND_ASYNC);
    uint64_t cur, peak, cnt;
    ash_alloc_stats(1, &cur, &peak, &cnt);
    ASSERT_U64(cur, 0);
    ASSERT_U64(peak, 0x1000);
    ASSERT_U64(cnt, 0);
    /* the same base again (a missed free, then the driver reused the address) */
    ASSERT_STATUS(ash_alloc_insert(0x10800, 0x100, 2, ASH_ALLOC_KIND_ASYNC), ASH_ALLOC_ERR_OVERLAP);
    ASSERT_U64(ash_alloc_stale_count(), 2);
    ash_alloc_stats(2, &cur, &peak, &cnt);
    ASSERT_U64(cur, 0x100);
    ASSERT_U64(cnt, 1);
    /* a new range that starts before and covers several live entries */
    ASSERT_STATUS(ash_alloc_insert(0x20000, 0x10, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x20100, 0x10, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x20200, 0x10, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x1ff00, 0x301, 0, ASH_ALLOC_KIND_POOL), ASH_ALLOC_ERR_OVERLAP);
    ASSERT_U64(ash_alloc_stale_count(), 5);
    ash_alloc_stats(0, &cur, &peak, &cnt);
    ASSERT_U64(cur, 0x301);
    ASSERT_U64(cnt, 1);
    /* touching (end == other's base) is not an overlap */
    ASSERT_STATUS(ash_alloc_insert(0x20201, 0x10, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x1fe00, 0x100, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_U64(ash_alloc_stale_count(), 5);
    size_t total;
    ash_alloc_snapshot(NULL, 0, &total);
    ASSERT_U64(total, 4);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
    ash_alloc_reset();
    ASSERT_U64(ash_alloc_stale_count(), 0);
}

/* ---- 5. stats ---- */

/* remove_range: every entry whose base is in [base, base + size) goes (a mapping that starts
 * before the range stays), copies come back ascending, stats follow; a bad range changes nothing. */
static void test_remove_range(void **state)
{
    (void)state;
    ASSERT_STATUS(ash_alloc_insert(0x1000, 0x1000, 1, ASH_ALLOC_KIND_MAPPED), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x2000, 0x1000, 1, ASH_ALLOC_KIND_MAPPED), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x3000, 0x1000, 1, ASH_ALLOC_KIND_MAPPED), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x4000, 0x1000, 1, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ash_alloc_entry_t out[4];
    size_t n = 99;
    ASSERT_STATUS(ash_alloc_remove_range(0x1800, 0x2800, out, 4, &n), ASH_ALLOC_OK); /* bases 0x2000, 0x3000 */
    ASSERT_U64(n, 2);
    ASSERT_U64(out[0].base, 0x2000);
    ASSERT_U64(out[1].base, 0x3000);
    assert_int_equal(out[0].kind, ASH_ALLOC_KIND_MAPPED);
    ASSERT_STATUS(ash_alloc_find(0x1fff, NULL), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_find(0x2000, NULL), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_find(0x3fff, NULL), ASH_ALLOC_ERR_NOT_FOUND);
    ASSERT_STATUS(ash_alloc_find(0x4000, NULL), ASH_ALLOC_OK);
    uint64_t cur = 0, cnt = 0;
    ASSERT_STATUS(ash_alloc_stats(1, &cur, NULL, &cnt), ASH_ALLOC_OK);
    ASSERT_U64(cur, 0x2000);
    ASSERT_U64(cnt, 2);
    ASSERT_STATUS(ash_alloc_remove_range(0x8000, 0x1000, NULL, 0, &n), ASH_ALLOC_OK); /* none */
    ASSERT_U64(n, 0);
    ASSERT_STATUS(ash_alloc_remove_range(0x1000, 0, NULL, 0, &n), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_remove_range(UINT64_MAX, 2, NULL, 0, &n), ASH_ALLOC_ERR_INVALID);
    ASSERT_STATUS(ash_alloc_remove_range(0, UINT64_MAX, out, 1, &n), ASH_ALLOC_OK); /* all; one copied */
    ASSERT_U64(n, 2);
    ASSERT_U64(out[0].base, 0x1000);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
}

static void test_stats_current_peak(void **state)
{
    (void)state;
    printf("# property: current/peak/count are per device and exact through allocs and frees\n");
    uint64_t cur, peak, cnt;
    ASSERT_STATUS(ash_alloc_insert(0x100000, 1000, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x200000, 3000, 0, ASH_ALLOC_KIND_MANAGED), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x300000, 500, 5, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x400000, 7, 63, ASH_ALLOC_KIND_POOL), ASH_ALLOC_OK);
    ash_alloc_stats(0, &cur, &peak, &cnt);
    ASSERT_U64(cur, 4000);
    ASSERT_U64(peak, 4000);
    ASSERT_U64(cnt, 2);
    ASSERT_STATUS(ash_alloc_remove(0x200000, NULL), ASH_ALLOC_OK);
    ASSERT_STATUS(ash_alloc_insert(0x500000, 2000, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ash_alloc_stats(0, &cur, &peak, &cnt);
    ASSERT_U64(cur, 3000);
    ASSERT_U64(peak, 4000);
    ASSERT_U64(cnt, 2);
    ASSERT_STATUS(ash_alloc_insert(0x600000, 1500, 0, ASH_ALLOC_KIND_DEVICE), ASH_ALLOC_OK);
    ash_alloc_stats(0, &cur, &peak, NULL);
    ASSERT_U64(cur, 4500);
    ASSERT_U64(peak, 4500);
    ash_alloc_stats(5, &cur, &peak, &cnt);
    ASSERT_U64(cur, 500);
    ASSERT_U64(peak, 500);
    ASSERT_U64(cnt, 1);
    ash_alloc_stats(63, &cur, &peak, &cnt);
    ASSERT_U64(cur, 7);
    ASSERT_U64(cnt, 1);
    ash_alloc_stats(1, &cur, &peak, &cnt);
    ASSERT_U64(cur, 0);
    ASSERT_U64(peak, 0);
    ASSERT_U64(cnt, 0);
    /* a failed insert or remove changes nothing */
    ash_alloc_insert(0x700000, 0, 5, ASH_ALLOC_KIND_DEVICE);
    ash_alloc_remove(0x300001, NULL);
    ash_alloc_stats(5, &cur, &peak, &cnt);
    ASSERT_U64(cur, 500);
    ASSERT_U64(cnt, 1);
    ASSERT_STATUS(ash_alloc_remove(0x300000, NULL), ASH_ALLOC_OK);
    ash_alloc_stats(5, &cur, &peak, &cnt);
    ASSERT_U64(cur, 0);
    ASSERT_U64(peak, 500);
    ASSERT_U64(cnt, 0);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
    ash_alloc_reset();
    ash_alloc_stats(0, &cur, &peak, &cnt);
    ASSERT_U64(cur + peak + cnt, 0);
}

/* ---- 6. random ops against the model ---- */

#define RAND_REGION 0x7f0000000000ull
#define RAND_SPAN (1ull << 35)

static uint64_t rand_size(uint64_t *s)
{
    uint64_t r = rng_next(s) % 100;
    if (r < 10)
        return 1 + rng_next(s) % 64;               /* tiny */
    if (r < 99)
        return 1 + rng_next(s) % (1ull << 20);     /* up to 1 MiB */
    return 1 + rng_next(s) % (1ull << 24);         /* up to 16 MiB */
}

/* A pointer to look up: near the edges of a live entry half of the time, else anywhere. */
static uint64_t rand_probe(uint64_t *s, const model_t *m, uint64_t region, uint64_t span)
{
    if (m->n && rng_next(s) % 2) {
        const ash_alloc_entry_t *e = &m->v[rng_next(s) % m->n];
        switch (rng_next(s) % 5) {
        case 0: return e->base - 1;
        case 1: return e->base;
        case 2: return e->base + e->size - 1;
        case 3: return e->base + e->size;
        default: return e->base + rng_next(s) % e->size;
        }
    }
    return region + rng_next(s) % span;
}

static void test_random_vs_model(void **state)
{
    (void)state;
    const uint64_t seed = 0xA110CA7E5EED0001ull;
    const int ops = 100000 / SCALE_DOWN;
    printf("# property: %d random insert/remove/find ops agree with a linear-scan model "
           "(seed 0x%" PRIx64 ")\n", ops, seed);
    uint64_t s = seed;
    model_t m;
    memset(&m, 0, sizeof m);
    unsigned n_ins = 0, n_rem = 0, n_find = 0, n_hit = 0, n_overlap = 0, n_notfound = 0;
    size_t max_live = 0;
    char a[160], b[160];
    for (int i = 0; i < ops; i++) {
        uint64_t r = rng_next(&s) % 100;
        unsigned p_insert = m.n < 1000 ? 35 : 25;
        ash_alloc_entry_t got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        if (r < p_insert) {
            uint64_t base = RAND_REGION + (rng_next(&s) % (RAND_SPAN >> 8)) * 256;
            uint64_t size = rng_next(&s) % 500 == 0 ? 0 : rand_size(&s); /* some size 0 */
            int dev = rng_next(&s) % 20 == 0 ? 63 : (int)(rng_next(&s) % 8);
            ash_alloc_kind_t kind = (ash_alloc_kind_t)(rng_next(&s) % ASH_ALLOC_KIND_COUNT_);
            ash_alloc_status_t sw = model_insert(&m, base, size, dev, kind);
            ash_alloc_status_t sg = ash_alloc_insert(base, size, dev, kind);
            n_ins++;
            n_overlap += sw == ASH_ALLOC_ERR_OVERLAP;
            if (sg != sw)
                fail_msg("op %d (seed 0x%" PRIx64 "): insert(0x%" PRIx64 ", 0x%" PRIx64
                         ", %d): table %s, model %s", i, seed, base, size, dev,
                         ash_alloc_status_name(sg), ash_alloc_status_name(sw));
        } else if (r < 65) {
            uint64_t q = rng_next(&s) % 100, base;
            if (m.n && q < 85)
                base = m.v[rng_next(&s) % m.n].base;
            else if (m.n && q < 95)
                base = m.v[rng_next(&s) % m.n].base + 1;
            else
                base = RAND_REGION + rng_next(&s) % RAND_SPAN;
            ash_alloc_status_t sw = model_remove(&m, base, &want);
            ash_alloc_status_t sg = ash_alloc_remove(base, &got);
            n_rem++;
            n_notfound += sw == ASH_ALLOC_ERR_NOT_FOUND;
            if (sg != sw || (sw == ASH_ALLOC_OK && !entry_eq(&got, &want))) {
                fmt_entry(a, sizeof a, sg, &got);
                fmt_entry(b, sizeof b, sw, &want);
                fail_msg("op %d (seed 0x%" PRIx64 "): remove(0x%" PRIx64 "): table %s, model %s",
                         i, seed, base, a, b);
            }
        } else {
            uint64_t p = rand_probe(&s, &m, RAND_REGION, RAND_SPAN);
            ash_alloc_status_t sw = model_find(&m, p, &want);
            ash_alloc_status_t sg = ash_alloc_find(p, &got);
            n_find++;
            n_hit += sw == ASH_ALLOC_OK;
            if (sg != sw || (sw == ASH_ALLOC_OK && !entry_eq(&got, &want))) {
                fmt_entry(a, sizeof a, sg, &got);
                fmt_entry(b, sizeof b, sw, &want);
                fail_msg("op %d (seed 0x%" PRIx64 "): find(0x%" PRIx64 "): table %s, model %s",
                         i, seed, p, a, b);
            }
        }
        if (m.n > max_live)
            max_live = m.n;
        if (i % 1000 == 999) {
            if (ash_alloc_check() != ASH_ALLOC_OK)
                fail_msg("op %d (seed 0x%" PRIx64 "): ash_alloc_check failed", i, seed);
            ASSERT_U64(ash_alloc_stale_count(), m.stale);
            for (int d = 0; d < ASH_ALLOC_MAX_DEVICES; d++) {
                uint64_t cur, peak, cnt;
                ash_alloc_stats(d, &cur, &peak, &cnt);
                if (cur != m.cur[d] || peak != m.peak[d] || cnt != m.cnt[d])
                    fail_msg("op %d dev %d: table cur/peak/count %" PRIu64 "/%" PRIu64 "/%" PRIu64
                             ", model %" PRIu64 "/%" PRIu64 "/%" PRIu64, i, d, cur, peak, cnt,
                             m.cur[d], m.peak[d], m.cnt[d]);
            }
        }
        if (i % 10000 == 9999)
            assert_table_equals(m.v, m.n, "snapshot vs model");
    }
    assert_table_equals(m.v, m.n, "final snapshot vs model");
    printf("# %u inserts (%u overlapped stale entries, %" PRIu64 " replaced), %u removes (%u of "
           "unknown bases), %u finds (%u hits), max %zu live\n", n_ins, n_overlap, m.stale, n_rem,
           n_notfound, n_find, n_hit, max_live);
    /* the run must have exercised every path */
    assert_true(n_overlap > 0 && n_notfound > 0 && n_hit > 0 && n_hit < n_find);
    model_free(&m);
}

/* ---- 7. concurrency ---- */

#define CT_THREADS 8
#define CT_SPAN (1ull << 33)

typedef struct {
    int id;
    int ops;
    uint64_t seed;
    model_t m;
    unsigned own_finds, foreign_finds, foreign_hits;
} ct_arg_t;

static atomic_uint ct_errors;

static uint64_t ct_region(int id) { return (uint64_t)(id + 1) << 40; }

static void ct_error(const char *fmt, ...)
{
    if (atomic_fetch_add(&ct_errors, 1) >= 10)
        return;
    va_list ap;
    va_start(ap, fmt);
    flockfile(stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    funlockfile(stderr);
    va_end(ap);
}

static void *ct_thread(void *p)
{
    ct_arg_t *t = p;
    uint64_t s = t->seed, region = ct_region(t->id);
    char a[160], b[160];
    for (int i = 0; i < t->ops; i++) {
        uint64_t r = rng_next(&s) % 100;
        ash_alloc_entry_t got, want;
        memset(&got, 0, sizeof got);
        memset(&want, 0, sizeof want);
        if (r < (t->m.n < 300 ? 30u : 20u)) {
            uint64_t base = region + (rng_next(&s) % (CT_SPAN >> 8)) * 256;
            uint64_t size = 1 + rng_next(&s) % (1ull << 20);
            ash_alloc_kind_t kind = (ash_alloc_kind_t)(rng_next(&s) % ASH_ALLOC_KIND_COUNT_);
            ash_alloc_status_t sw = model_insert(&t->m, base, size, t->id, kind);
            ash_alloc_status_t sg = ash_alloc_insert(base, size, t->id, kind);
            if (sg != sw)
                ct_error("thread %d op %d: insert(0x%" PRIx64 ", 0x%" PRIx64 "): table %s, model %s",
                         t->id, i, base, size, ash_alloc_status_name(sg), ash_alloc_status_name(sw));
        } else if (r < 55) {
            uint64_t base = t->m.n && rng_next(&s) % 10 ? t->m.v[rng_next(&s) % t->m.n].base
                                                        : region + rng_next(&s) % CT_SPAN;
            ash_alloc_status_t sw = model_remove(&t->m, base, &want);
            ash_alloc_status_t sg = ash_alloc_remove(base, &got);
            if (sg != sw || (sw == ASH_ALLOC_OK && !entry_eq(&got, &want))) {
                fmt_entry(a, sizeof a, sg, &got);
                fmt_entry(b, sizeof b, sw, &want);
                ct_error("thread %d op %d: remove(0x%" PRIx64 "): table %s, model %s", t->id, i,
                         base, a, b);
            }
        } else if (r < 80) {
            uint64_t ptr = rand_probe(&s, &t->m, region, CT_SPAN);
            ash_alloc_status_t sw = model_find(&t->m, ptr, &want);
            ash_alloc_status_t sg = ash_alloc_find(ptr, &got);
            t->own_finds++;
            if (sg != sw || (sw == ASH_ALLOC_OK && !entry_eq(&got, &want))) {
                fmt_entry(a, sizeof a, sg, &got);
                fmt_entry(b, sizeof b, sw, &want);
                ct_error("thread %d op %d: find(0x%" PRIx64 "): table %s, model %s", t->id, i, ptr,
                         a, b);
            }
        } else {
            /* someone else's range: the answer changes under us, but any hit must be a
             * consistent entry of that owner containing the pointer */
            int other = (t->id + 1 + (int)(rng_next(&s) % (CT_THREADS - 1))) % CT_THREADS;
            uint64_t oreg = ct_region(other), ptr = oreg + rng_next(&s) % CT_SPAN;
            ash_alloc_status_t sg = ash_alloc_find(ptr, &got);
            t->foreign_finds++;
            if (sg == ASH_ALLOC_OK) {
                t->foreign_hits++;
                if (got.device != other || got.base < oreg || got.base >= oreg + CT_SPAN ||
                    ptr < got.base || ptr - got.base >= got.size || got.size > (1ull << 20)) {
                    fmt_entry(a, sizeof a, sg, &got);
                    ct_error("thread %d op %d: find(0x%" PRIx64 ") in thread %d's range: %s",
                             t->id, i, ptr, other, a);
                }
            } else if (sg != ASH_ALLOC_ERR_NOT_FOUND) {
                ct_error("thread %d op %d: find(0x%" PRIx64 "): %s", t->id, i, ptr,
                         ash_alloc_status_name(sg));
            }
        }
    }
    return NULL;
}

static void test_concurrent_threads(void **state)
{
    (void)state;
    const int ops = 40000 / SCALE_DOWN;
    printf("# property: %d threads x %d ops (own range: insert/remove/find vs own model; others' "
           "ranges: consistent finds) leave the table equal to the union of the models\n",
           CT_THREADS, ops);
    ct_arg_t args[CT_THREADS];
    pthread_t th[CT_THREADS];
    atomic_store(&ct_errors, 0);
    for (int i = 0; i < CT_THREADS; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].id = i;
        args[i].ops = ops;
        args[i].seed = 0xC0C0A110C0000000ull + (uint64_t)i;
        assert_int_equal(pthread_create(&th[i], NULL, ct_thread, &args[i]), 0);
    }
    for (int i = 0; i < CT_THREADS; i++)
        pthread_join(th[i], NULL);
    unsigned errors = atomic_load(&ct_errors);
    if (errors)
        fail_msg("%u mismatches during concurrent use (first ones printed above)", errors);

    size_t n = 0;
    uint64_t stale = 0;
    unsigned ff = 0, fh = 0;
    for (int i = 0; i < CT_THREADS; i++)
        n += args[i].m.n;
    ash_alloc_entry_t *all = calloc(n + 1, sizeof *all);
    assert_non_null(all);
    size_t k = 0;
    for (int i = 0; i < CT_THREADS; i++) {
        memcpy(all + k, args[i].m.v, args[i].m.n * sizeof *all);
        k += args[i].m.n;
        stale += args[i].m.stale;
        ff += args[i].foreign_finds;
        fh += args[i].foreign_hits;
        uint64_t cur, peak, cnt;
        ash_alloc_stats(i, &cur, &peak, &cnt);
        if (cur != args[i].m.cur[i] || cnt != args[i].m.cnt[i] || peak != args[i].m.peak[i])
            fail_msg("device %d: table cur/peak/count %" PRIu64 "/%" PRIu64 "/%" PRIu64
                     ", model %" PRIu64 "/%" PRIu64 "/%" PRIu64, i, cur, peak, cnt,
                     args[i].m.cur[i], args[i].m.peak[i], args[i].m.cnt[i]);
    }
    assert_table_equals(all, n, "table vs union of thread models");
    ASSERT_U64(ash_alloc_stale_count(), stale);
    ASSERT_STATUS(ash_alloc_check(), ASH_ALLOC_OK);
    printf("# %zu live at the end, %u lookups in other threads' ranges (%u hits), %" PRIu64
           " stale replaced\n", n, ff, fh, stale);
    free(all);
    for (int i = 0; i < CT_THREADS; i++)
        model_free(&args[i].m);
}

/* ---- micro-measurement (printed, not asserted) ---- */

#define BENCH_LIVE 10000
#define BENCH_PROBES (1u << 20)

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct {
    const uint64_t *probes;
    unsigned n, rounds, hits;
} bench_arg_t;

static void *bench_lookups(void *p)
{
    bench_arg_t *b = p;
    unsigned hits = 0;
    for (unsigned r = 0; r < b->rounds; r++)
        for (unsigned i = 0; i < b->n; i++)
            hits += ash_alloc_find(b->probes[i], NULL) == ASH_ALLOC_OK;
    b->hits = hits;
    return NULL;
}

static void test_lookup_cost(void **state)
{
    (void)state;
    printf("# measurement: ns per ash_alloc_find with %d live entries (printed, not asserted)\n",
           BENCH_LIVE);
    uint64_t s = 0xBE7C0000ull;
    uint64_t *bases = malloc(BENCH_LIVE * sizeof *bases), *sizes = malloc(BENCH_LIVE * sizeof *sizes);
    uint64_t *probes = malloc(BENCH_PROBES * sizeof *probes);
    assert_true(bases && sizes && probes);
    for (int i = 0; i < BENCH_LIVE; i++) { /* disjoint: one per 2 MiB slot, up to 1 MiB each */
        bases[i] = 0x7f0000000000ull + ((uint64_t)i << 21) + (rng_next(&s) % 4096) * 256;
        sizes[i] = 1 + rng_next(&s) % (1ull << 20);
    }
    double t0 = now_ns();
    for (int i = 0; i < BENCH_LIVE; i++)
        ASSERT_STATUS(ash_alloc_insert(bases[i], sizes[i], i % 8, ASH_ALLOC_KIND_DEVICE),
                      ASH_ALLOC_OK);
    double t_insert = (now_ns() - t0) / BENCH_LIVE;
    for (unsigned i = 0; i < BENCH_PROBES; i++) { /* 80% hits at random offsets, 20% in gaps */
        unsigned j = (unsigned)(rng_next(&s) % BENCH_LIVE);
        probes[i] = rng_next(&s) % 5 ? bases[j] + rng_next(&s) % sizes[j] : bases[j] + sizes[j];
    }
    bench_arg_t one = {.probes = probes, .n = BENCH_PROBES, .rounds = 1};
    bench_lookups(&one); /* warm */
    one.rounds = 4 / (SCALE_DOWN > 1 ? 4 : 1);
    t0 = now_ns();
    bench_lookups(&one);
    double t_one = (now_ns() - t0) / ((double)one.rounds * BENCH_PROBES);
    bench_arg_t hot = {.probes = probes, .n = 64, .rounds = BENCH_PROBES / 64 / SCALE_DOWN};
    t0 = now_ns(); /* the launch-path case: the same few gradient buffers, step after step */
    bench_lookups(&hot);
    double t_hot = (now_ns() - t0) / ((double)hot.rounds * hot.n);

    enum { NT = 4 };
    bench_arg_t many[NT];
    pthread_t th[NT];
    t0 = now_ns();
    for (int i = 0; i < NT; i++) {
        many[i] = (bench_arg_t){.probes = probes, .n = BENCH_PROBES, .rounds = 1};
        assert_int_equal(pthread_create(&th[i], NULL, bench_lookups, &many[i]), 0);
    }
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    double t_many = now_ns() - t0;

    t0 = now_ns();
    for (int i = 0; i < BENCH_LIVE; i++)
        ASSERT_STATUS(ash_alloc_remove(bases[i], NULL), ASH_ALLOC_OK);
    double t_remove = (now_ns() - t0) / BENCH_LIVE;

    printf("# lookup, 1 thread: %.1f ns (%u%% hits, random probes, %u lookups)\n", t_one,
           (unsigned)(100.0 * one.hits / ((double)one.rounds * BENCH_PROBES)),
           one.rounds * BENCH_PROBES);
    printf("# lookup, 1 thread, the same 64 pointers again and again: %.1f ns\n", t_hot);
    printf("# lookup, %d threads at once on %ld CPUs: %.1f ns per lookup seen by each thread, "
           "%.1f ns per lookup in aggregate\n", NT, sysconf(_SC_NPROCESSORS_ONLN),
           t_many / BENCH_PROBES, t_many / (NT * (double)BENCH_PROBES));
    printf("# insert %.1f ns, remove %.1f ns (average while filling/emptying to %d)\n", t_insert,
           t_remove, BENCH_LIVE);
    free(bases);
    free(sizes);
    free(probes);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep "# ..." notes in order with cmocka's stderr */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usable_before_init), /* first, and without a reset */
        cmocka_unit_test_setup(test_boundaries, reset_table),
        cmocka_unit_test_setup(test_invalid_and_unknown, reset_table),
        cmocka_unit_test_setup(test_overlap_replaces_stale, reset_table),
        cmocka_unit_test_setup(test_remove_range, reset_table),
        cmocka_unit_test_setup(test_stats_current_peak, reset_table),
        cmocka_unit_test_setup(test_random_vs_model, reset_table),
        cmocka_unit_test_setup(test_concurrent_threads, reset_table),
        cmocka_unit_test_setup(test_lookup_cost, reset_table),
    };
    return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
