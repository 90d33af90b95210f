/* alloc.c — the allocation table: live device allocations as an AVL tree keyed by base address.
 *
 * Why an AVL tree under a rwlock: O(log n) insert, remove and find with a bounded depth
 * (1.44 log2 n: 19 levels at 10k entries) and no rebuilds; a sorted array with copy-on-write
 * would make lookups lock-free but costs O(n) per alloc/free and needs deferred reclamation of
 * old arrays (epochs or hazard pointers) — more machinery than a table read once per matched
 * launch needs. Invariant: ranges are disjoint and non-empty, so "greatest base <= ptr" is the
 * only candidate container. Threading: one static writer-preferring rwlock (frees are not starved
 * by a stream of lookups); lookups take it shared and never allocate; nodes are malloc'ed before
 * the write lock and freed after it. No constructors: everything is statically initialised.
 * Must not: allocate or free under the write lock; allocate on a lookup; call the driver; include
 * anything of shim/ above shim/core/.
 */
#include "ash_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct ash_alloc_node {
    ash_alloc_entry_t e; /* first: the lookup reads base and size */
    struct ash_alloc_node *left;
    struct ash_alloc_node *right;
    int height; /* leaf = 1 */
} ash_alloc_node_t;

typedef struct {
    uint64_t current;
    uint64_t peak;
    uint64_t count;
} ash_alloc_dev_stats_t;

#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#define ASH_ALLOC_LOCK_INIT PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#else
#define ASH_ALLOC_LOCK_INIT PTHREAD_RWLOCK_INITIALIZER
#endif

/* All state below is guarded by ash_alloc_lock. */
static pthread_rwlock_t ash_alloc_lock = ASH_ALLOC_LOCK_INIT;
static ash_alloc_node_t *ash_alloc_root;
static size_t ash_alloc_live;
static uint64_t ash_alloc_stale;
static ash_alloc_dev_stats_t ash_alloc_devs[ASH_ALLOC_MAX_DEVICES];

/* The lock is statically initialised and never destroyed, so these only fail on misuse (EDEADLK)
 * or on a reader-count overflow; the table has no sane fallback, so it proceeds regardless. */
static inline void ash_alloc__rdlock(void) { (void)pthread_rwlock_rdlock(&ash_alloc_lock); }
static inline void ash_alloc__wrlock(void) { (void)pthread_rwlock_wrlock(&ash_alloc_lock); }
static inline void ash_alloc__unlock(void) { (void)pthread_rwlock_unlock(&ash_alloc_lock); }

/* ---- AVL primitives (caller holds the write lock) ---- */

static inline int ash_alloc__h(const ash_alloc_node_t *n) { return n ? n->height : 0; }

static inline void ash_alloc__fix_height(ash_alloc_node_t *n)
{
    int hl = ash_alloc__h(n->left), hr = ash_alloc__h(n->right);
    n->height = (hl > hr ? hl : hr) + 1;
}

static ash_alloc_node_t *ash_alloc__rotate_right(ash_alloc_node_t *n)
{
    ash_alloc_node_t *l = n->left;
    n->left = l->right;
    l->right = n;
    ash_alloc__fix_height(n);
    ash_alloc__fix_height(l);
    return l;
}

static ash_alloc_node_t *ash_alloc__rotate_left(ash_alloc_node_t *n)
{
    ash_alloc_node_t *r = n->right;
    n->right = r->left;
    r->left = n;
    ash_alloc__fix_height(n);
    ash_alloc__fix_height(r);
    return r;
}

static ash_alloc_node_t *ash_alloc__rebalance(ash_alloc_node_t *n)
{
    ash_alloc__fix_height(n);
    int bf = ash_alloc__h(n->left) - ash_alloc__h(n->right);
    if (bf > 1) {
        if (ash_alloc__h(n->left->left) < ash_alloc__h(n->left->right))
            n->left = ash_alloc__rotate_left(n->left);
        return ash_alloc__rotate_right(n);
    }
    if (bf < -1) {
        if (ash_alloc__h(n->right->right) < ash_alloc__h(n->right->left))
            n->right = ash_alloc__rotate_right(n->right);
        return ash_alloc__rotate_left(n);
    }
    return n;
}

/* Bases are unique here: the caller removed every overlapping entry first. */
static ash_alloc_node_t *ash_alloc__tree_insert(ash_alloc_node_t *n, ash_alloc_node_t *node)
{
    if (!n)
        return node;
    if (node->e.base < n->e.base)
        n->left = ash_alloc__tree_insert(n->left, node);
    else
        n->right = ash_alloc__tree_insert(n->right, node);
    return ash_alloc__rebalance(n);
}

static ash_alloc_node_t *ash_alloc__tree_remove_min(ash_alloc_node_t *n, ash_alloc_node_t **min)
{
    if (!n->left) {
        *min = n;
        return n->right;
    }
    n->left = ash_alloc__tree_remove_min(n->left, min);
    return ash_alloc__rebalance(n);
}

/* Detach the node with exactly this base into *out (left NULL when absent). */
static ash_alloc_node_t *ash_alloc__tree_remove(ash_alloc_node_t *n, uint64_t base,
                                                ash_alloc_node_t **out)
{
    if (!n)
        return NULL;
    if (base < n->e.base) {
        n->left = ash_alloc__tree_remove(n->left, base, out);
    } else if (base > n->e.base) {
        n->right = ash_alloc__tree_remove(n->right, base, out);
    } else {
        *out = n;
        if (!n->left)
            return n->right;
        if (!n->right)
            return n->left;
        ash_alloc_node_t *m;
        ash_alloc_node_t *r = ash_alloc__tree_remove_min(n->right, &m);
        m->left = n->left;
        m->right = r;
        n = m;
    }
    return ash_alloc__rebalance(n);
}

/* The entry with the greatest base <= key, or NULL (caller holds either lock). */
static inline const ash_alloc_node_t *ash_alloc__floor(uint64_t key)
{
    const ash_alloc_node_t *n = ash_alloc_root, *best = NULL;
    while (n) {
        if (key < n->e.base) {
            n = n->left;
        } else {
            best = n;
            n = n->right;
        }
    }
    return best;
}

/* ---- stats (caller holds the write lock) ---- */

static void ash_alloc__account_add(const ash_alloc_entry_t *e)
{
    ash_alloc_dev_stats_t *d = &ash_alloc_devs[e->device];
    d->current += e->size;
    d->count++;
    if (d->current > d->peak)
        d->peak = d->current;
    ash_alloc_live++;
}

static void ash_alloc__account_del(const ash_alloc_entry_t *e)
{
    ash_alloc_dev_stats_t *d = &ash_alloc_devs[e->device];
    d->current -= e->size;
    d->count--;
    ash_alloc_live--;
}

/* ---- public API ---- */

ash_alloc_status_t ash_alloc_insert(uint64_t base, uint64_t size, int device, ash_alloc_kind_t kind)
{
    if (size == 0 || base + size < base || device < 0 || device >= ASH_ALLOC_MAX_DEVICES ||
        (unsigned)kind >= (unsigned)ASH_ALLOC_KIND_COUNT_)
        return ASH_ALLOC_ERR_INVALID;
    ash_alloc_node_t *node = malloc(sizeof *node);
    if (!node)
        return ASH_ALLOC_ERR_NOMEM;
    node->e = (ash_alloc_entry_t){.base = base, .size = size, .device = device, .kind = kind};
    node->left = node->right = NULL;
    node->height = 1;

    ash_alloc_status_t st = ASH_ALLOC_OK;
    ash_alloc_node_t *stale_list = NULL; /* freed after unlock, chained through ->left */
    uint64_t last = base + size - 1;
    ash_alloc__wrlock();
    /* Ranges are disjoint, so the entry with the greatest base <= last is the only one that can
     * overlap [base, last] from the right end; drop it and look again until none overlaps. */
    for (;;) {
        const ash_alloc_node_t *f = ash_alloc__floor(last);
        if (!f || f->e.base + f->e.size <= base)
            break;
        ash_alloc_node_t *gone = NULL;
        ash_alloc_root = ash_alloc__tree_remove(ash_alloc_root, f->e.base, &gone);
        ash_alloc__account_del(&gone->e);
        ash_alloc_stale++;
        gone->left = stale_list;
        stale_list = gone;
        st = ASH_ALLOC_ERR_OVERLAP;
    }
    ash_alloc_root = ash_alloc__tree_insert(ash_alloc_root, node);
    ash_alloc__account_add(&node->e);
    ash_alloc__unlock();

    while (stale_list) {
        ash_alloc_node_t *next = stale_list->left;
        free(stale_list);
        stale_list = next;
    }
    return st;
}

ash_alloc_status_t ash_alloc_remove(uint64_t base, ash_alloc_entry_t *removed)
{
    ash_alloc_node_t *gone = NULL;
    ash_alloc__wrlock();
    ash_alloc_root = ash_alloc__tree_remove(ash_alloc_root, base, &gone);
    if (gone)
        ash_alloc__account_del(&gone->e);
    ash_alloc__unlock();
    if (!gone)
        return ASH_ALLOC_ERR_NOT_FOUND;
    if (removed)
        *removed = gone->e;
    free(gone);
    return ASH_ALLOC_OK;
}

ash_alloc_status_t ash_alloc_remove_range(uint64_t base, uint64_t size, ash_alloc_entry_t *out, size_t cap,
                                          size_t *n)
{
    if (size == 0 || base + size < base)
        return ASH_ALLOC_ERR_INVALID;
    ash_alloc_node_t *gone_list = NULL; /* freed after unlock, chained through ->left */
    size_t removed = 0;
    uint64_t last = base + size - 1;
    ash_alloc__wrlock();
    for (;;) { /* the entry with the greatest base <= last, while that base is in range */
        const ash_alloc_node_t *f = ash_alloc__floor(last);
        if (!f || f->e.base < base)
            break;
        ash_alloc_node_t *gone = NULL;
        ash_alloc_root = ash_alloc__tree_remove(ash_alloc_root, f->e.base, &gone);
        ash_alloc__account_del(&gone->e);
        gone->left = gone_list; /* pushed in descending order, so the list ascends */
        gone_list = gone;
        removed++;
    }
    ash_alloc__unlock();
    size_t copied = 0;
    while (gone_list) {
        ash_alloc_node_t *next = gone_list->left;
        if (copied < cap)
            out[copied++] = gone_list->e;
        free(gone_list);
        gone_list = next;
    }
    if (n)
        *n = removed;
    return ASH_ALLOC_OK;
}

ash_alloc_status_t ash_alloc_find(uint64_t ptr, ash_alloc_entry_t *entry)
{
    ash_alloc_status_t st = ASH_ALLOC_ERR_NOT_FOUND;
    ash_alloc__rdlock();
    const ash_alloc_node_t *n = ash_alloc_root;
    while (n) {
        if (ptr < n->e.base) {
            n = n->left;
        } else if (ptr - n->e.base < n->e.size) {
            if (entry)
                *entry = n->e;
            st = ASH_ALLOC_OK;
            break;
        } else {
            n = n->right;
        }
    }
    ash_alloc__unlock();
    return st;
}

ash_alloc_status_t ash_alloc_stats(int device, uint64_t *current, uint64_t *peak, uint64_t *count)
{
    if (device < 0 || device >= ASH_ALLOC_MAX_DEVICES)
        return ASH_ALLOC_ERR_INVALID;
    ash_alloc__rdlock();
    ash_alloc_dev_stats_t d = ash_alloc_devs[device];
    ash_alloc__unlock();
    if (current)
        *current = d.current;
    if (peak)
        *peak = d.peak;
    if (count)
        *count = d.count;
    return ASH_ALLOC_OK;
}

uint64_t ash_alloc_stale_count(void)
{
    ash_alloc__rdlock();
    uint64_t n = ash_alloc_stale;
    ash_alloc__unlock();
    return n;
}

/* In-order walk with an explicit stack: AVL height <= 1.44 log2(n + 2), so 96 covers any n. */
#define ASH_ALLOC_MAX_DEPTH 96

size_t ash_alloc_snapshot(ash_alloc_entry_t *out, size_t cap, size_t *total)
{
    const ash_alloc_node_t *stack[ASH_ALLOC_MAX_DEPTH];
    size_t depth = 0, copied = 0;
    ash_alloc__rdlock();
    if (total)
        *total = ash_alloc_live;
    const ash_alloc_node_t *n = ash_alloc_root;
    while ((n || depth) && copied < cap) {
        while (n) {
            stack[depth++] = n;
            n = n->left;
        }
        n = stack[--depth];
        out[copied++] = n->e;
        n = n->right;
    }
    ash_alloc__unlock();
    return copied;
}

static void ash_alloc__free_tree(ash_alloc_node_t *n)
{
    while (n) { /* recurse left, iterate right */
        ash_alloc__free_tree(n->left);
        ash_alloc_node_t *r = n->right;
        free(n);
        n = r;
    }
}

void ash_alloc_reset(void)
{
    ash_alloc__wrlock();
    ash_alloc_node_t *old = ash_alloc_root;
    ash_alloc_root = NULL;
    ash_alloc_live = 0;
    ash_alloc_stale = 0;
    memset(ash_alloc_devs, 0, sizeof ash_alloc_devs);
    ash_alloc__unlock();
    ash_alloc__free_tree(old);
}

/* Returns the subtree height, or -1 on a broken invariant. *prev_end: end of the previous range
 * in order (0 before the first); sums[]: per-device bytes and counts found. */
static int ash_alloc__check_node(const ash_alloc_node_t *n, uint64_t *prev_end, int *seen_any,
                                 ash_alloc_dev_stats_t *sums, size_t *nodes)
{
    if (!n)
        return 0;
    int hl = ash_alloc__check_node(n->left, prev_end, seen_any, sums, nodes);
    if (hl < 0)
        return -1;
    const ash_alloc_entry_t *e = &n->e;
    if (e->size == 0 || e->base + e->size < e->base || e->device < 0 ||
        e->device >= ASH_ALLOC_MAX_DEVICES || (unsigned)e->kind >= (unsigned)ASH_ALLOC_KIND_COUNT_)
        return -1;
    if (*seen_any && e->base < *prev_end) /* order and disjointness in one test */
        return -1;
    *seen_any = 1;
    *prev_end = e->base + e->size;
    sums[e->device].current += e->size;
    sums[e->device].count++;
    (*nodes)++;
    int hr = ash_alloc__check_node(n->right, prev_end, seen_any, sums, nodes);
    if (hr < 0)
        return -1;
    int h = (hl > hr ? hl : hr) + 1;
    if (n->height != h || hl - hr > 1 || hr - hl > 1)
        return -1;
    return h;
}

ash_alloc_status_t ash_alloc_check(void)
{
    ash_alloc_dev_stats_t sums[ASH_ALLOC_MAX_DEVICES];
    memset(sums, 0, sizeof sums);
    uint64_t prev_end = 0;
    int seen_any = 0;
    size_t nodes = 0;
    ash_alloc_status_t st = ASH_ALLOC_OK;
    ash_alloc__rdlock();
    if (ash_alloc__check_node(ash_alloc_root, &prev_end, &seen_any, sums, &nodes) < 0 ||
        nodes != ash_alloc_live)
        st = ASH_ALLOC_ERR_INVALID;
    for (int d = 0; d < ASH_ALLOC_MAX_DEVICES && st == ASH_ALLOC_OK; d++) {
        const ash_alloc_dev_stats_t *s = &ash_alloc_devs[d];
        if (s->current != sums[d].current || s->count != sums[d].count || s->peak < s->current)
            st = ASH_ALLOC_ERR_INVALID;
    }
    ash_alloc__unlock();
    return st;
}

const char *ash_alloc_status_name(ash_alloc_status_t status)
{
    switch (status) {
    case ASH_ALLOC_OK: return "ASH_ALLOC_OK";
    case ASH_ALLOC_ERR_INVALID: return "ASH_ALLOC_ERR_INVALID";
    case ASH_ALLOC_ERR_NOT_FOUND: return "ASH_ALLOC_ERR_NOT_FOUND";
    case ASH_ALLOC_ERR_NOMEM: return "ASH_ALLOC_ERR_NOMEM";
    case ASH_ALLOC_ERR_OVERLAP: return "ASH_ALLOC_ERR_OVERLAP";
    }
    return "ASH_ALLOC_(unknown status)";
}

const char *ash_alloc_kind_name(ash_alloc_kind_t kind)
{
    switch (kind) {
    case ASH_ALLOC_KIND_DEVICE: return "device";
    case ASH_ALLOC_KIND_PITCH: return "pitch";
    case ASH_ALLOC_KIND_MANAGED: return "managed";
    case ASH_ALLOC_KIND_ASYNC: return "async";
    case ASH_ALLOC_KIND_POOL: return "pool";
    case ASH_ALLOC_KIND_HOST_REGISTERED: return "host-registered";
    case ASH_ALLOC_KIND_MAPPED: return "mapped";
    case ASH_ALLOC_KIND_COUNT_: break;
    }
    return "unknown";
}
