/* overlap.c — gradient all-reduces overlapped with the backward pass (see ash_overlap.h).
 *
 * Per gradient rule with ready points: a step is the span from the first ready launch (or, for
 * learned rules, the first other launch) after the rule's sync point(s) to its next sync point.
 * In a step: regions handed to the worker ("covered", sorted, disjoint), the sync buffers seen
 * ("consumed": a sync buffer that overlaps one already seen begins the next step), the hull of
 * the sync buffers (a ready region must lie inside the previous step's hull, else it waits for
 * the sync point), the N-th counters of the ready list. With `fuse: true` regions wait in a
 * bucket until it holds bucket_cap_bytes (or a collective of the program's thread comes), and
 * the worker packs non-contiguous ones into one device buffer (real cuMemAlloc).
 * The worker: one thread, its own non-blocking stream in the program's context; per job it
 * waits for the job's events on its stream, has the engine issue the all-reduce there
 * (ash_sync_issue_allreduce: fingerprint, watchdog, observers), records `done`.
 * Learned rules: L_RECORD records the step's launches that take pointers into the buffer (every
 * 8-byte word of every parameter is looked at), L_CHECK records the next step and compares, L_USE
 * offers regions after their last writer and checks each launch against the record.
 * Threading: see ash_overlap.h; the queue, the event pool and `busy` under O.mu.
 * Must not: issue a collective itself (the worker has the engine issue it:
 * ash_sync_issue_allreduce); hand the worker a region outside the previous step's hull; allocate
 * through our hooks; touch its queue, event pool or `busy` without O.mu.
 */
#include "ash_overlap.h"

#include "ash_capture.h"
#include "ash_driver.h"
#include "ash_fatal.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "ash_world.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- span lists ---- */

typedef struct {
    ash_span_t *v;
    size_t n, cap;
} spans_t;

/* The one growth rule of this file's arrays: *V holds at least NEED elements of SIZE bytes
 * (capacity doubled from FIRST); -1 when memory runs out (*V unchanged). */
static int grow(void *v, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *p = realloc(*(void **)v, c * size);
    if (!p)
        return -1;
    *(void **)v = p;
    *cap = c;
    return 0;
}

static int spans_push(spans_t *s, CUdeviceptr lo, CUdeviceptr hi)
{
    if (grow(&s->v, &s->cap, s->n + 1, sizeof *s->v, 16) != 0)
        return -1;
    s->v[s->n++] = (ash_span_t){lo, hi};
    return 0;
}

/* Insert [lo, hi) into a sorted, disjoint list, merging neighbours. */
static int spans_add(spans_t *s, CUdeviceptr lo, CUdeviceptr hi)
{
    size_t i = 0;
    while (i < s->n && s->v[i].hi < lo)
        i++;
    size_t j = i;
    while (j < s->n && s->v[j].lo <= hi) {
        lo = s->v[j].lo < lo ? s->v[j].lo : lo;
        hi = s->v[j].hi > hi ? s->v[j].hi : hi;
        j++;
    }
    if (i == j) { /* no overlap: insert at i */
        if (spans_push(s, 0, 0) != 0)
            return -1;
        memmove(s->v + i + 1, s->v + i, (s->n - 1 - i) * sizeof *s->v);
    } else if (j > i + 1) {
        memmove(s->v + i + 1, s->v + j, (s->n - j) * sizeof *s->v);
        s->n -= j - i - 1;
    }
    s->v[i] = (ash_span_t){lo, hi};
    return 0;
}

/* OUT = [lo, hi) minus the sorted list S (OUT cleared first). */
static int spans_minus(const spans_t *s, CUdeviceptr lo, CUdeviceptr hi, spans_t *out)
{
    out->n = 0;
    for (size_t i = 0; i < s->n && lo < hi; i++) {
        if (s->v[i].hi <= lo)
            continue;
        if (s->v[i].lo >= hi)
            break;
        if (s->v[i].lo > lo && spans_push(out, lo, s->v[i].lo) != 0)
            return -1;
        lo = s->v[i].hi;
    }
    if (lo < hi && spans_push(out, lo, hi) != 0)
        return -1;
    return 0;
}

/* Remove [lo, hi) from a sorted, disjoint list (a span may split in two); the bytes removed. */
static size_t spans_cut(spans_t *s, CUdeviceptr lo, CUdeviceptr hi)
{
    size_t cut = 0;
    for (size_t i = 0; i < s->n; i++) {
        ash_span_t v = s->v[i];
        if (v.hi <= lo || hi <= v.lo)
            continue;
        cut += (size_t)((v.hi < hi ? v.hi : hi) - (v.lo > lo ? v.lo : lo));
        if (v.lo < lo && hi < v.hi) { /* split: [v.lo, lo) and [hi, v.hi) */
            if (spans_push(s, 0, 0) != 0)
                return cut; /* out of memory: keep the left part only (reduced again: safe) */
            memmove(s->v + i + 2, s->v + i + 1, (s->n - i - 2) * sizeof *s->v);
            s->v[i] = (ash_span_t){v.lo, lo};
            s->v[i + 1] = (ash_span_t){hi, v.hi};
            return cut;
        }
        if (v.lo < lo) {
            s->v[i].hi = lo;
        } else if (hi < v.hi) {
            s->v[i].lo = hi;
        } else {
            memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof *s->v);
            s->n--;
            i--;
        }
    }
    return cut;
}

static int spans_overlap(const spans_t *s, CUdeviceptr lo, CUdeviceptr hi)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].lo < hi && lo < s->v[i].hi)
            return 1;
    return 0;
}

/* ---- state ---- */

typedef enum { L_NONE, L_RECORD, L_CHECK, L_USE, L_OFF } learn_t;

/* One launch that took pointers into the buffer: its kernel and the pointers (into ptrs). */
typedef struct {
    const void *handle;
    size_t first, n; /* ptrs[first .. first + n) */
} touch_t;

typedef struct {
    touch_t *t;
    size_t n, cap;
    CUdeviceptr *ptrs;
    size_t np, pcap;
} trace_t;

typedef struct {
    const ash_policy_rule_t *r;
    size_t esize;
    int off;             /* fallen back for good (auto rules), or no state */
    int in_step;         /* 1: between the step's first ready/other launch and its sync point */
    ash_span_t known;    /* the previous step's sync hull (lo == hi: unknown) */
    ash_span_t hull;     /* this step's sync buffers */
    spans_t covered, consumed, scratch, bucket;
    CUevent *bev;        /* the bucket's events */
    size_t nbev, cbev;
    size_t bucket_bytes;
    const ash_kernel_info_t *bucket_k;
    unsigned *nth;       /* per ready entry: matching launches this step */
    unsigned char *dropped; /* per ready entry: it fired twice in a step (not the last writer): off */
    /* learned */
    learn_t learn;
    trace_t rec, cur;    /* the learned step, and this step's launches so far */
    size_t pos;          /* L_USE: touching launches seen this step */
    spans_t *after;      /* L_USE: per recorded launch, the regions final after it */
    /* report */
    unsigned long long early_regions, early_bytes, sync_bytes, steps;
} ov_rule_t;

typedef struct job {
    struct job *next;
    ov_rule_t *o;
    const ash_kernel_info_t *k;
    ash_span_t *spans;
    size_t n, bytes;
    CUevent *ev;
    size_t nev;
} job_t;

static struct {
    int enabled;            /* ACCELSHIM_OVERLAP=on and a rule with ready points */
    int observe_all;
    ov_rule_t *rules;
    size_t nrules;
    /* worker */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int started, stop, busy;
    job_t *head, *tail;
    CUevent *pool;
    size_t npool, cpool;
    CUcontext ctx;
    CUstream comm;
    CUevent done;
    int dirty;              /* jobs enqueued since the last quiesce */
    CUdeviceptr pack;       /* the worker's bucket buffer */
    size_t pack_bytes;
} O = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Rule r's state when it overlaps; ANY: also after its learned ready points fell back (its sync
 * points still take only what no ready point covered: a fallback in the middle of a step must
 * not reduce the regions already sent a second time). */
static ov_rule_t *ov_state(const ash_policy_rule_t *r, int any)
{
    if (!O.enabled || !r || r->kind != ASH_POLICY_RULE_GRADIENT || r->index >= O.nrules)
        return NULL;
    ov_rule_t *o = &O.rules[r->index];
    return o->r && (any || !o->off) ? o : NULL;
}

static ov_rule_t *ov_of(const ash_policy_rule_t *r) { return ov_state(r, 0); }

void ash_overlap_init(const ash_policy_t *p)
{
    size_t n = ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT);
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, i)->overlap != ASH_POLICY_OVERLAP_NONE;
    if (!any)
        return;
    if (ash_opt_enum(ASH_OPT_OVERLAP) == 1) { /* on|off */
        ash_info("overlap", "ACCELSHIM_OVERLAP=off: every gradient region is reduced at its sync point");
        return;
    }
    if (!(O.rules = calloc(n, sizeof *O.rules)))
        return;
    O.nrules = n;
    for (size_t i = 0; i < n; i++) {
        const ash_policy_rule_t *r = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, i);
        ov_rule_t *o = &O.rules[i];
        if (r->overlap == ASH_POLICY_OVERLAP_NONE)
            continue;
        o->r = r;
        o->esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        if (r->nready && (!(o->nth = calloc(r->nready, sizeof *o->nth)) ||
                          !(o->dropped = calloc(r->nready, 1))))
            o->r = NULL;
        if (r->overlap == ASH_POLICY_OVERLAP_AUTO) {
            o->learn = L_RECORD;
            O.observe_all = 1;
        }
    }
    O.enabled = 1;
}

void ash_overlap_disable(const char *why)
{
    if (!O.enabled)
        return;
    ash_info("overlap", "overlap off: %s; every gradient region is reduced at its sync point", why);
    O.enabled = 0;
    O.observe_all = 0;
}

int ash_overlap_on(const ash_policy_rule_t *r) { return ov_state(r, 1) != NULL; }

int ash_overlap_observes_all(void) { return O.enabled && O.observe_all; }

/* ---- the worker ---- */

static void worker_fail(const char *call, CUresult r)
{
    ash_fatal(ASH_EXIT_CONFIG, "overlap: %s failed (%d) on the communication stream", call, (int)r);
}

static void worker_run(job_t *j)
{
    ov_rule_t *o = j->o;
    CUresult cr;
    for (size_t i = 0; i < j->nev; i++)
        if ((cr = ASH_CU(cuStreamWaitEvent(O.comm, j->ev[i], 0))) != CUDA_SUCCESS)
            worker_fail("cuStreamWaitEvent", cr);
    char what[384];
    snprintf(what, sizeof what, "gradients[%u] (at: \"%s\"): %zu region(s) ready after %s",
             o->r->index, o->r->at, j->n, j->k ? j->k->demangled : "?");
    if (j->n == 1) {
        ash_sync_issue_allreduce(j->k, o->r, O.comm, j->spans[0].lo, j->bytes / o->esize, 1, what);
    } else { /* a bucket of non-contiguous regions: packed into one buffer */
        if (O.pack_bytes < j->bytes) {
            if (O.pack) {
                ASH_CU(cuStreamSynchronize(O.comm));
                ASH_CU(cuMemFree_v2(O.pack));
                O.pack = 0;
                O.pack_bytes = 0;
            }
            if ((cr = ASH_CU(cuMemAlloc_v2(&O.pack, j->bytes))) != CUDA_SUCCESS)
                worker_fail("cuMemAlloc (bucket buffer)", cr);
            O.pack_bytes = j->bytes;
        }
        size_t off = 0;
        for (size_t i = 0; i < j->n; i++, off += j->spans[i - 1].hi - j->spans[i - 1].lo)
            if ((cr = ASH_CU(cuMemcpyDtoDAsync_v2(O.pack + off, j->spans[i].lo,
                                                  j->spans[i].hi - j->spans[i].lo, O.comm))) != CUDA_SUCCESS)
                worker_fail("cuMemcpyDtoDAsync (bucket in)", cr);
        ash_sync_issue_allreduce(j->k, o->r, O.comm, O.pack, j->bytes / o->esize, (unsigned)j->n, what);
        off = 0;
        for (size_t i = 0; i < j->n; i++, off += j->spans[i - 1].hi - j->spans[i - 1].lo)
            if ((cr = ASH_CU(cuMemcpyDtoDAsync_v2(j->spans[i].lo, O.pack + off,
                                                  j->spans[i].hi - j->spans[i].lo, O.comm))) != CUDA_SUCCESS)
                worker_fail("cuMemcpyDtoDAsync (bucket out)", cr);
    }
    if ((cr = ASH_CU(cuEventRecord(O.done, O.comm))) != CUDA_SUCCESS)
        worker_fail("cuEventRecord", cr);
}

static void *worker_main(void *arg)
{
    (void)arg;
    ASH_CU(cuCtxSetCurrent(O.ctx));
    pthread_mutex_lock(&O.mu);
    for (;;) {
        while (!O.head && !O.stop)
            pthread_cond_wait(&O.cv, &O.mu);
        if (!O.head)
            break;
        job_t *j = O.head;
        O.head = j->next;
        if (!O.head)
            O.tail = NULL;
        O.busy = 1;
        pthread_mutex_unlock(&O.mu);
        worker_run(j);
        pthread_mutex_lock(&O.mu);
        for (size_t i = 0; i < j->nev; i++) { /* waited for on the stream: reusable */
            if (O.npool < O.cpool)
                O.pool[O.npool++] = j->ev[i];
            else
                ASH_CU(cuEventDestroy_v2(j->ev[i]));
        }
        free(j->ev);
        free(j->spans);
        free(j);
        O.busy = 0;
        pthread_cond_broadcast(&O.cv);
    }
    pthread_mutex_unlock(&O.mu);
    return NULL;
}

/* The worker, its stream and events, at the first ready region (the program's thread, with its
 * context current). 0 = running. */
static int worker_start(void)
{
    if (O.started)
        return O.started > 0 ? 0 : -1;
    O.started = -1;
    if (!ASH_CU_HAS(cuStreamCreate) || !ASH_CU_HAS(cuStreamWaitEvent) || !ASH_CU_HAS(cuEventRecord) ||
        !ASH_CU_HAS(cuEventCreate) || !ASH_CU_HAS(cuCtxSetCurrent) || !ASH_CU_HAS(cuMemcpyDtoDAsync_v2)) {
        ash_overlap_disable("the driver lacks streams/events for a communication stream");
        return -1;
    }
    if (ASH_CU(cuCtxGetCurrent(&O.ctx)) != CUDA_SUCCESS || !O.ctx ||
        ASH_CU(cuStreamCreate(&O.comm, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS ||
        ASH_CU(cuEventCreate(&O.done, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS) {
        ash_overlap_disable("the communication stream could not be created");
        return -1;
    }
    O.cpool = 256;
    if (!(O.pool = calloc(O.cpool, sizeof *O.pool)) ||
        pthread_create(&O.thread, NULL, worker_main, NULL) != 0) {
        ash_overlap_disable("the communication thread could not be started");
        return -1;
    }
    O.started = 1;
    ash_info("overlap", "communication stream and thread started: gradient regions are reduced "
             "as their ready launches come");
    return 0;
}

static CUevent event_take(CUstream s)
{
    CUevent e = NULL;
    pthread_mutex_lock(&O.mu);
    if (O.npool)
        e = O.pool[--O.npool];
    pthread_mutex_unlock(&O.mu);
    if (!e && ASH_CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
        return NULL;
    if (ASH_CU(cuEventRecord(e, s)) != CUDA_SUCCESS) {
        ASH_CU(cuEventDestroy_v2(e));
        return NULL;
    }
    return e;
}

static void enqueue(job_t *j)
{
    pthread_mutex_lock(&O.mu);
    if (O.tail)
        O.tail->next = j;
    else
        O.head = j;
    O.tail = j;
    O.dirty = 1;
    pthread_cond_broadcast(&O.cv);
    pthread_mutex_unlock(&O.mu);
}

static void bucket_flush(ov_rule_t *o)
{
    if (!o->bucket.n)
        return;
    job_t *j = calloc(1, sizeof *j);
    if (!j)
        ash_fatal(ASH_EXIT_CONFIG, "overlap: out of memory");
    *j = (job_t){.o = o, .k = o->bucket_k, .n = o->bucket.n, .bytes = o->bucket_bytes,
                 .ev = o->bev, .nev = o->nbev};
    if (!(j->spans = malloc(o->bucket.n * sizeof *j->spans)))
        ash_fatal(ASH_EXIT_CONFIG, "overlap: out of memory");
    memcpy(j->spans, o->bucket.v, o->bucket.n * sizeof *j->spans);
    o->bev = NULL;
    o->nbev = o->cbev = 0;
    o->bucket.n = 0;
    o->bucket_bytes = 0;
    enqueue(j);
}

/* Hand the parts of [lo, hi) not covered yet to the worker, ordered after stream s's work. */
static void offer(ov_rule_t *o, const ash_kernel_info_t *k, CUstream s, CUdeviceptr lo, CUdeviceptr hi)
{
    if (spans_minus(&o->covered, lo, hi, &o->scratch) != 0)
        return;
    if (!o->scratch.n || worker_start() != 0)
        return;
    CUevent ev = event_take(s);
    if (!ev) {
        ASH_WARN_CAPPED("overlap", "cannot record an event after %s: its region waits for the "
                        "sync point", k->demangled);
        return;
    }
    for (size_t i = 0; i < o->scratch.n; i++) {
        spans_add(&o->covered, o->scratch.v[i].lo, o->scratch.v[i].hi);
        o->early_regions++;
        o->early_bytes += o->scratch.v[i].hi - o->scratch.v[i].lo;
    }
    if (o->r->fuse) { /* a bucket: one collective when it is full */
        if (grow(&o->bev, &o->cbev, o->nbev + 1, sizeof *o->bev, 8) != 0)
            ash_fatal(ASH_EXIT_CONFIG, "overlap: out of memory");
        o->bev[o->nbev++] = ev;
        for (size_t i = 0; i < o->scratch.n; i++) {
            /* adjacent regions merge, so a bucket of neighbours is one contiguous span */
            spans_add(&o->bucket, o->scratch.v[i].lo, o->scratch.v[i].hi);
            o->bucket_bytes += o->scratch.v[i].hi - o->scratch.v[i].lo;
        }
        o->bucket_k = k;
        if (o->bucket_bytes >= o->r->bucket_cap_bytes)
            bucket_flush(o);
        return;
    }
    for (size_t i = 0; i < o->scratch.n; i++) { /* one collective per region */
        job_t *j = calloc(1, sizeof *j);
        ash_span_t *sp = malloc(sizeof *sp);
        CUevent *evs = i == 0 ? malloc(sizeof *evs) : NULL;
        if (!j || !sp || (i == 0 && !evs))
            ash_fatal(ASH_EXIT_CONFIG, "overlap: out of memory");
        *sp = o->scratch.v[i];
        /* the first job waits for the event; the rest follow it on the worker's stream */
        if (evs)
            evs[0] = ev;
        *j = (job_t){.o = o, .k = k, .spans = sp, .n = 1, .bytes = sp->hi - sp->lo,
                     .ev = evs, .nev = evs != NULL};
        enqueue(j);
    }
}

/* Flush the open buckets and wait until the worker has issued everything; 1 when anything was
 * handed to it since the last wait. */
static int worker_wait(void)
{
    for (size_t i = 0; i < O.nrules; i++)
        if (O.rules[i].r)
            bucket_flush(&O.rules[i]);
    pthread_mutex_lock(&O.mu);
    int dirty = O.dirty;
    while (O.head || O.busy)
        pthread_cond_wait(&O.cv, &O.mu);
    O.dirty = 0;
    pthread_mutex_unlock(&O.mu);
    return dirty;
}

void ash_overlap_quiesce(CUstream s)
{
    if (!O.enabled && !O.started)
        return;
    if (worker_wait() && ASH_CU(cuStreamWaitEvent(s, O.done, 0)) != CUDA_SUCCESS)
        ASH_CU(cuStreamSynchronize(O.comm)); /* order by waiting on the host instead */
}

/* ---- steps ---- */

static void step_begin(ov_rule_t *o)
{
    o->known = o->hull;
    o->hull = (ash_span_t){0, 0};
    o->covered.n = 0;
    o->consumed.n = 0;
    o->in_step = 1;
    o->pos = 0;
    o->cur.n = o->cur.np = 0;
    if (o->nth)
        memset(o->nth, 0, o->r->nready * sizeof *o->nth);
}

/* ---- learned ready points ---- */

static int trace_add(trace_t *t, const void *handle, const CUdeviceptr *p, size_t n)
{
    if (grow(&t->t, &t->cap, t->n + 1, sizeof *t->t, 64) != 0 ||
        grow(&t->ptrs, &t->pcap, t->np + n, sizeof *t->ptrs, 256) != 0)
        return -1;
    memcpy(t->ptrs + t->np, p, n * sizeof *p);
    t->t[t->n++] = (touch_t){handle, t->np, n};
    t->np += n;
    return 0;
}

static int touch_equal(const trace_t *a, size_t i, const trace_t *b, size_t j)
{
    const touch_t *x = &a->t[i], *y = &b->t[j];
    return x->handle == y->handle && x->n == y->n &&
           !memcmp(a->ptrs + x->first, b->ptrs + y->first, x->n * sizeof *a->ptrs);
}

/* The pointers into [lo, hi) among the launch's parameters (every 8-byte word of each), in
 * parameter order, without repeats; -1 when the parameters cannot be read. */
static long scan_params(const ash_kernel_info_t *k, void **params, void **extra, CUdeviceptr lo,
                        CUdeviceptr hi, CUdeviceptr *out, size_t cap)
{
    if (k->nparams < 0)
        return -1;
    size_t n = 0;
    for (int i = 0; i < k->nparams; i++) {
        uint32_t sz = k->param_sizes[i];
        const char *p = ash_sync_arg(k, params, extra, (unsigned)i, sz);
        if (!p)
            return -1;
        for (uint32_t off = 0; off + 8 <= sz; off += 8) {
            CUdeviceptr v;
            memcpy(&v, p + off, sizeof v);
            if (v < lo || v >= hi)
                continue;
            size_t m = 0;
            while (m < n && out[m] != v)
                m++;
            if (m == n && n < cap)
                out[n++] = v;
        }
    }
    return (long)n;
}

static void learn_off(ov_rule_t *o, const char *why, const ash_kernel_info_t *k)
{
    ash_warn("overlap", "gradients[%u] (at: \"%s\"), overlap: auto: %s%s%s; learned ready points "
             "off for this rule (every region is reduced at its sync point from now on)",
             o->r->index, o->r->at, why, k ? ": " : "", k ? k->demangled : "");
    o->learn = L_OFF;
    o->off = 1;
}

static int cmp_ptr(const void *a, const void *b)
{
    CUdeviceptr x = *(const CUdeviceptr *)a, y = *(const CUdeviceptr *)b;
    return x < y ? -1 : x > y;
}

/* From the recorded step: regions start at every pointer any launch passed (and the buffer's
 * start); each region's last writer is the last launch with a pointer in it. */
static int learn_derive(ov_rule_t *o)
{
    trace_t *t = &o->rec;
    CUdeviceptr *starts = malloc((t->np + 2) * sizeof *starts);
    if (!starts || !(o->after = calloc(t->n ? t->n : 1, sizeof *o->after))) {
        free(starts);
        return -1;
    }
    size_t ns = 0;
    starts[ns++] = o->known.lo;
    memcpy(starts + ns, t->ptrs, t->np * sizeof *starts);
    ns += t->np;
    qsort(starts, ns, sizeof *starts, cmp_ptr);
    size_t u = 0;
    for (size_t i = 0; i < ns; i++)
        if (!u || starts[u - 1] != starts[i])
            starts[u++] = starts[i];
    size_t regions = 0;
    for (size_t i = 0; i < u; i++) {
        CUdeviceptr lo = starts[i], hi = i + 1 < u ? starts[i + 1] : o->known.hi;
        long last = -1;
        for (size_t j = 0; j < t->n; j++)
            for (size_t m = 0; m < t->t[j].n; m++)
                if (t->ptrs[t->t[j].first + m] >= lo && t->ptrs[t->t[j].first + m] < hi)
                    last = (long)j;
        if (last >= 0 && lo < hi) { /* never written by a launch: left to the sync point */
            spans_add(&o->after[last], lo, hi);
            regions++;
        }
    }
    free(starts);
    ash_info("overlap", "gradients[%u] (at: \"%s\"), overlap: auto: learned %zu region(s) written "
             "by %zu launch(es) a step; overlapping from the next step", o->r->index, o->r->at,
             regions, t->n);
    return 0;
}

/* A launch (or library call) that took pointers P[0..n) into the buffer, after it was issued,
 * while an auto rule learns or uses its ready points. */
static void learn_touch(ov_rule_t *o, const ash_kernel_info_t *k, CUstream s, const CUdeviceptr *p, size_t n)
{
    if (n == 0)
        return;
    if (o->learn == L_RECORD || o->learn == L_CHECK) {
        if (trace_add(&o->cur, k->handle, p, n) != 0)
            learn_off(o, "out of memory", NULL);
        return;
    }
    /* L_USE: the same launch as recorded, then its regions */
    if (o->pos >= o->rec.n || trace_add(&o->cur, k->handle, p, n) != 0 ||
        !touch_equal(&o->cur, o->cur.n - 1, &o->rec, o->pos)) {
        learn_off(o, "a step's launches differ from the learned ones at", k);
        return;
    }
    spans_t *fin = &o->after[o->pos++];
    for (size_t i = 0; i < fin->n; i++)
        offer(o, k, s, fin->v[i].lo, fin->v[i].hi);
}

static void learn_after(ov_rule_t *o, const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    if (o->known.lo == o->known.hi)
        return; /* the buffer is not known before its first sync point */
    CUdeviceptr p[64];
    long n = scan_params(k, params, extra, o->known.lo, o->known.hi, p, 64);
    if (n < 0)
        learn_off(o, "a launch's parameters cannot be read", k);
    else
        learn_touch(o, k, s, p, (size_t)n);
}

/* At the sync point that ends a step of an auto rule: move through RECORD -> CHECK -> USE. */
static void learn_step_end(ov_rule_t *o)
{
    if (o->known.lo == o->known.hi || o->learn == L_OFF)
        return;
    if (o->learn == L_RECORD) {
        trace_t t = o->rec;
        o->rec = o->cur;
        o->cur = t;
        o->cur.n = o->cur.np = 0;
        o->learn = L_CHECK;
        return;
    }
    if (o->learn == L_CHECK) {
        int same = o->cur.n == o->rec.n;
        for (size_t i = 0; same && i < o->rec.n; i++)
            same = touch_equal(&o->cur, i, &o->rec, i);
        if (!same) {
            learn_off(o, "the launches that touch the buffer differ between two steps", NULL);
            return;
        }
        if (!o->rec.n) {
            learn_off(o, "no launch takes a pointer into the buffer", NULL);
            return;
        }
        if (learn_derive(o) != 0) {
            learn_off(o, "out of memory", NULL);
            return;
        }
        o->learn = L_USE;
        return;
    }
    if (o->learn == L_USE && o->pos != o->rec.n)
        learn_off(o, "a step ended before all learned launches came", NULL);
}

/* ---- the engine's entry points ---- */

static int is_sync_of(const ov_rule_t *o, const ash_policy_rule_t *const *sync_rules, size_t nsync)
{
    for (size_t r = 0; r < nsync; r++)
        if (sync_rules[r] == o->r)
            return 1;
    return 0;
}


static void ready_region(ov_rule_t *o, const ash_policy_ready_t *rp, const ash_kernel_info_t *k,
                         CUstream s, void **params, void **extra)
{
    CUdeviceptr lo;
    size_t count;
    if (rp->has_buffer) { /* the ready entry's buffer form, the rule's element type */
        if (ash_sync_resolve_buffer(k, &rp->buffer, o->r->dtype, params, extra, &lo, &count, NULL) !=
            ASH_SYNC_RESOLVED) {
            ASH_WARN_CAPPED("overlap", "gradients[%u].ready[%u] (after: \"%s\"): region cannot be "
                            "resolved from %s's arguments: it waits for the sync point",
                            o->r->index, rp->index, rp->after, k->demangled);
            return;
        }
    } else {
        lo = o->known.lo + (CUdeviceptr)(rp->offset * o->esize);
        count = (size_t)rp->count;
    }
    CUdeviceptr hi = lo + (CUdeviceptr)(count * o->esize);
    if (o->known.lo == o->known.hi)
        return; /* before the rule's first sync point: the buffer is not known yet */
    if (lo < o->known.lo || hi > o->known.hi || hi <= lo) {
        ASH_WARN_CAPPED("overlap", "gradients[%u].ready[%u] (after: \"%s\"): region [0x%llx, 0x%llx) "
                        "after %s lies outside the rule's buffer [0x%llx, 0x%llx): it waits for the "
                        "sync point", o->r->index, rp->index, rp->after, (unsigned long long)lo,
                        (unsigned long long)hi, k->demangled, (unsigned long long)o->known.lo,
                        (unsigned long long)o->known.hi);
        return;
    }
    if (ash_capture_check(k, s, o->r, NULL) != NULL)
        return; /* inside graph capture: the sync point stops the job */
    offer(o, k, s, lo, hi);
}

void ash_overlap_after_launch(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                              const ash_policy_ready_match_t *ready, size_t n,
                              const ash_policy_rule_t *const *sync_rules, size_t nsync)
{
    if (!O.enabled)
        return;
    for (size_t i = 0; i < n; i++) {
        ov_rule_t *o = ov_of(ready[i].rule);
        if (!o)
            continue;
        if (!o->in_step)
            step_begin(o);
        const ash_policy_ready_t *rp = ready[i].ready;
        unsigned c = ++o->nth[rp->index];
        if ((!rp->nth || c == rp->nth) && !o->dropped[rp->index])
            ready_region(o, rp, k, s, params, extra);
    }
    if (!O.observe_all)
        return;
    for (size_t i = 0; i < O.nrules; i++) {
        ov_rule_t *o = &O.rules[i];
        if (!o->r || o->off || o->learn == L_NONE)
            continue;
        if (is_sync_of(o, sync_rules, nsync))
            continue; /* the rule's own sync point: not a launch of its step */
        if (!o->in_step)
            step_begin(o);
        learn_after(o, k, s, params, extra);
    }
}

/* Before the launch of a kernel with explicit ready points: a ready point whose region (its
 * buffer form, read from this launch) overlaps what was reduced early this step fires twice in
 * one step, which proves it is not that region's last writer. The launch is ordered after the
 * early all-reduce (no race with it), the region is taken out of `covered` so that the sync
 * point reduces it again, and the ready point is off from now on (one warning). Reducing again
 * is right only for a mean (every rank holds the same early average; the average of it plus each
 * rank's later part is the average of the whole); an early sum cannot be taken back: exit 2. */
void ash_overlap_before_ready(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                              const ash_policy_ready_match_t *ready, size_t n)
{
    for (size_t i = 0; O.enabled && i < n; i++) {
        ov_rule_t *o = ov_of(ready[i].rule);
        const ash_policy_ready_t *rp = ready[i].ready;
        if (!o || !o->in_step || !o->covered.n || !rp->has_buffer)
            continue;
        CUdeviceptr lo;
        size_t count;
        if (ash_sync_resolve_buffer(k, &rp->buffer, o->r->dtype, params, extra, &lo, &count, NULL) !=
            ASH_SYNC_RESOLVED || count == 0)
            continue;
        CUdeviceptr hi = lo + (CUdeviceptr)(count * o->esize);
        if (!spans_overlap(&o->covered, lo, hi))
            continue;
        const ash_policy_t *pol = ash_sync_policy();
        if (o->r->reduce == ASH_POLICY_REDUCE_SUM)
            ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: gradients[%u].ready[%u] (after: \"%s\") fires twice "
                      "in one step: %s writes region [0x%llx, 0x%llx) again after its early all-reduce, "
                      "so the ready point is not its last writer, and with reduce: sum the early sum "
                      "cannot be taken back; stopping the job (exit 2). Give the ready point `nth:` "
                      "(its launch in the last pass), or use reduce: mean",
                      pol ? ash_policy_source(pol) : "?", rp->line, rp->col, o->r->index, rp->index,
                      rp->after, k->demangled, (unsigned long long)lo, (unsigned long long)hi);
        ash_overlap_quiesce(s); /* this launch runs after the early all-reduce */
        spans_cut(&o->covered, lo, hi);
        if (!o->dropped[rp->index]) {
            o->dropped[rp->index] = 1;
            ash_warn("overlap", "gradients[%u].ready[%u] (after: \"%s\", %s:%u:%u) fires twice in one "
                     "step: %s writes its region again after the region's early all-reduce, so the "
                     "ready point is not the region's last writer; that region is reduced again at "
                     "the sync point, and this ready point is off for the rest of the run (give it "
                     "`nth:`, its launch in the last pass, to keep the overlap)", o->r->index,
                     rp->index, rp->after, pol ? ash_policy_source(pol) : "?", rp->line, rp->col,
                     k->demangled);
        }
    }
}

/* Before a launch (or library call) with pointers P[0..n) into the buffer of a rule that uses
 * learned ready points: one into a region already handed to the worker is a write after its
 * early all-reduce (a deviation; learn_touch says so after the launch): the launch is ordered
 * after the worker, and the region is reduced again at the sync point. */
static void protect(ov_rule_t *o, const ash_kernel_info_t *k, CUstream s, const CUdeviceptr *p, size_t n)
{
    int hit = 0;
    for (size_t m = 0; m < n; m++)
        for (size_t c = 0; c < o->covered.n; c++)
            hit |= p[m] >= o->covered.v[c].lo && p[m] < o->covered.v[c].hi;
    if (!hit)
        return;
    ash_overlap_quiesce(s);
    for (size_t m = 0; m < n; m++)
        for (size_t c = 0; c < o->covered.n; c++)
            if (p[m] >= o->covered.v[c].lo && p[m] < o->covered.v[c].hi) {
                memmove(o->covered.v + c, o->covered.v + c + 1,
                        (o->covered.n - c - 1) * sizeof *o->covered.v);
                o->covered.n--;
                break;
            }
    ash_warn("overlap", "gradients[%u] (at: \"%s\"): %s takes a pointer into a region already "
             "reduced early this step: it runs after that reduction and the region is reduced "
             "again at the sync point", o->r->index, o->r->at, k->demangled);
}

static int protecting(const ov_rule_t *o)
{
    return o->r && !o->off && o->learn == L_USE && o->in_step && o->covered.n;
}

void ash_overlap_before_launch(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                               const ash_policy_rule_t *const *sync_rules, size_t nsync)
{
    for (size_t i = 0; O.enabled && O.observe_all && i < O.nrules; i++) {
        ov_rule_t *o = &O.rules[i];
        if (!protecting(o) || is_sync_of(o, sync_rules, nsync))
            continue;
        CUdeviceptr p[64];
        long n = scan_params(k, params, extra, o->known.lo, o->known.hi, p, 64);
        if (n > 0)
            protect(o, k, s, p, (size_t)n);
    }
}

void ash_overlap_library_write(const ash_kernel_info_t *site, CUstream s, CUdeviceptr out, int seen,
                               int before)
{
    for (size_t i = 0; O.enabled && O.observe_all && i < O.nrules; i++) {
        ov_rule_t *o = &O.rules[i];
        if (!o->r || o->off || o->learn == L_NONE || o->known.lo == o->known.hi)
            continue;
        if (!seen) { /* e.g. a batched GEMM: its outputs are in device memory */
            if (before && protecting(o)) {
                ash_overlap_quiesce(s); /* it runs after the early reductions, at least */
                ash_warn("overlap", "gradients[%u] (at: \"%s\"): %s, whose outputs cannot be seen, "
                         "runs after %zu region(s) were reduced early this step: if it writes "
                         "them, this step's gradients are wrong (use explicit ready points for "
                         "this program)", o->r->index, o->r->at, site->demangled, o->covered.n);
            }
            learn_off(o, "a library call whose outputs cannot be seen", site);
            continue;
        }
        if (out < o->known.lo || out >= o->known.hi)
            continue;
        if (before) {
            if (protecting(o))
                protect(o, site, s, &out, 1);
            continue;
        }
        if (!o->in_step)
            step_begin(o);
        learn_touch(o, site, s, &out, 1);
    }
}

size_t ash_overlap_sync(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t bytes,
                        const ash_span_t **pieces)
{
    ov_rule_t *o = ov_state(r, 1);
    static ash_span_t whole;
    whole = (ash_span_t){ptr, ptr + bytes};
    *pieces = &whole;
    if (!o)
        return 1;
    CUdeviceptr lo = ptr, hi = ptr + bytes;
    if (o->in_step) { /* the step's first sync launch */
        if (o->learn != L_NONE)
            learn_step_end(o);
        if (o->covered.n)
            o->steps++;
        o->in_step = 0;
        o->consumed.n = 0;
        o->hull = (ash_span_t){lo, hi};
    } else if (spans_overlap(&o->consumed, lo, hi)) { /* a new step without ready launches */
        step_begin(o);
        if (o->learn != L_NONE)
            learn_step_end(o);
        o->in_step = 0;
        o->hull = (ash_span_t){lo, hi};
    } else if (o->hull.lo == o->hull.hi) {
        o->hull = (ash_span_t){lo, hi};
    } else {
        o->hull.lo = lo < o->hull.lo ? lo : o->hull.lo;
        o->hull.hi = hi > o->hull.hi ? hi : o->hull.hi;
    }
    spans_add(&o->consumed, lo, hi);
    if (spans_minus(&o->covered, lo, hi, &o->scratch) != 0)
        return 1; /* out of memory: the whole buffer, as without overlap */
    for (size_t i = 0; i < o->scratch.n; i++)
        o->sync_bytes += o->scratch.v[i].hi - o->scratch.v[i].lo;
    *pieces = o->scratch.v;
    return o->scratch.n;
}

int ash_overlap_active(void) { return O.started > 0; }

void ash_overlap_drain(void)
{
    if (O.started <= 0)
        return;
    worker_wait();
    ASH_CU(cuStreamSynchronize(O.comm));
}

void ash_overlap_fini(void)
{
    ash_overlap_drain();
    if (O.started > 0) {
        pthread_mutex_lock(&O.mu);
        O.stop = 1;
        pthread_cond_broadcast(&O.cv);
        pthread_mutex_unlock(&O.mu);
        pthread_join(O.thread, NULL);
        O.started = 0;
    }
    for (size_t i = 0; i < O.nrules; i++) {
        ov_rule_t *o = &O.rules[i];
        if (!o->r || (!o->early_regions && !o->sync_bytes))
            continue; /* its sync point never came */
        ash_info("report", "overlap: gradients[%u] (at: \"%s\"): %llu region(s), %llu bytes reduced "
                 "early in %llu step(s); %llu bytes at the sync points%s", o->r->index, o->r->at,
                 o->early_regions, o->early_bytes, o->steps, o->sync_bytes,
                 o->learn == L_OFF ? " (learned ready points fell back)" : "");
    }
}
