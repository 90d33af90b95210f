/* hc_stream.c — hostcuda streams and events: in-order queues run by one worker thread each.
 *
 * Every op carries a mark (hc_internal.h) that is set when it completes, and a list of marks it
 * must wait for. Ordering rules applied at enqueue time, as on a GPU:
 *   - ops on one stream run in order (one worker per stream);
 *   - an op on the legacy default stream waits for the last op of every blocking stream in its
 *     context (user streams without CU_STREAM_NON_BLOCKING and per-thread default streams);
 *   - an op on a blocking stream waits for the last op of the legacy stream;
 *   - cuStreamWaitEvent adds an empty op that waits for the event's mark.
 * Events hold a reference to the mark of the op recorded last; elapsed time uses the host clock
 * taken when that op completed. Threading: everything under hc_mu; run() is called without it.
 * Workers start on a stream's first op and exit (freeing the stream) once it is destroyed and drained.
 * HOSTCUDA_JITTER=SEED makes workers delay ops by seeded random amounts (see jitter()).
 * Must not: run an op before every mark it waits for is set; call an op's run() under hc_mu; free a
 * stream before it is destroyed and drained.
 */
#include "hc_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long hc_next_stream_id = 16;

/* ---------------------------------------------------------------- marks and ops */
hc_mark *hc_mark_new(void)
{
    hc_mark *m = calloc(1, sizeof *m);
    if (m)
        m->refs = 1;
    return m;
}

hc_mark *hc_mark_ref(hc_mark *m)
{
    if (m)
        m->refs++;
    return m;
}

void hc_mark_unref(hc_mark *m)
{
    if (m && --m->refs == 0)
        free(m);
}

void hc_mark_wait(hc_mark *m)
{
    while (m && !m->done)
        pthread_cond_wait(&hc_cv, &hc_mu);
}

hc_op *hc_op_new(void (*run)(hc_op *), void (*fini)(hc_op *), void *payload)
{
    hc_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->mark = hc_mark_new();
    if (!op->mark) {
        free(op);
        return NULL;
    }
    op->run = run;
    op->fini = fini;
    op->payload = payload;
    return op;
}

static void op_add_dep(hc_op *op, hc_mark *m)
{
    if (!m || m->done)
        return;
    if (op->ndeps == op->cap_deps) {
        int ncap = op->cap_deps ? op->cap_deps * 2 : 4;
        hc_mark **nd = realloc(op->deps, (size_t)ncap * sizeof *nd);
        if (!nd) {
            hc_mark_wait(m);   /* cannot record the dependency: honour it now instead */
            return;
        }
        op->deps = nd;
        op->cap_deps = ncap;
    }
    op->deps[op->ndeps++] = hc_mark_ref(m);
}

static int op_ready(const hc_op *op)
{
    for (int i = 0; i < op->ndeps; i++)
        if (!op->deps[i]->done)
            return 0;
    return 1;
}

static void op_free(hc_op *op)   /* hc_mu held */
{
    for (int i = 0; i < op->ndeps; i++)
        hc_mark_unref(op->deps[i]);
    free(op->deps);
    hc_mark_unref(op->mark);
    free(op);
}

/* ---------------------------------------------------------------- workers */
static void stream_free(struct CUstream_st *s)
{
    hc_mark_unref(s->last);
    free(s);
}

/* HOSTCUDA_JITTER=SEED: before each op (its dependencies met), the worker sleeps a random time
 * from a per-stream generator seeded by SEED and the stream id — 0.5-3 ms on the legacy stream,
 * 0-0.5 ms elsewhere — and a legacy-stream op then also lets the context's non-blocking streams
 * drain what they have queued (at most 20 ms). Every order this produces is one the CUDA model
 * allows (nothing orders a non-blocking stream after the legacy stream), so a program whose
 * result changes is racy. hc_mu held on entry and exit. */
static uint64_t jitter_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void jitter(struct CUstream_st *s, uint64_t *rng)
{
    int legacy = s->kind == HC_S_LEGACY;
    uint64_t us = legacy ? 500 + jitter_next(rng) % 2500 : jitter_next(rng) % 500;
    pthread_mutex_unlock(&hc_mu);
    struct timespec d = {0, (long)us * 1000};
    while (nanosleep(&d, &d) != 0)
        ;
    pthread_mutex_lock(&hc_mu);
    if (!legacy)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    for (;;) {
        int busy = 0;
        for (struct CUstream_st *o = s->ctx->streams; o && !busy; o = o->next)
            busy = (o->flags & CU_STREAM_NON_BLOCKING) && o->head != NULL;
        if (!busy || pthread_cond_timedwait(&hc_cv, &hc_mu, &until) != 0)
            return;
    }
}

static void *worker_main(void *arg)
{
    struct CUstream_st *s = arg;
    uint64_t rng = (hc_opt.jitter_seed * 0x9E3779B97F4A7C15ull) ^ (s->id * 0xBF58476D1CE4E5B9ull);
    if (rng == 0)
        rng = 1;
    pthread_mutex_lock(&hc_mu);
    for (;;) {
        while (!s->head && !s->dying)
            pthread_cond_wait(&hc_cv, &hc_mu);
        if (!s->head)
            break;   /* dying and drained */
        hc_op *op = s->head;
        while (!op_ready(op))
            pthread_cond_wait(&hc_cv, &hc_mu);
        if (hc_opt.jitter)
            jitter(s, &rng);
        pthread_mutex_unlock(&hc_mu);
        if (op->run)
            op->run(op);
        if (op->fini)
            op->fini(op);
        pthread_mutex_lock(&hc_mu);
        op->mark->time_ns = hc_now_ns();
        op->mark->done = 1;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        op_free(op);
        pthread_cond_broadcast(&hc_cv);
    }
    stream_free(s);
    pthread_mutex_unlock(&hc_mu);
    return NULL;
}

hc_mark *hc_enqueue(struct CUstream_st *s, hc_op *op)
{
    if (s->capture)   /* stream capture: recorded for the graph, not run (hc_capture.c) */
        return hc_graph_capture_op(s, op);
    struct CUctx_st *c = s->ctx;
    if (s->kind == HC_S_LEGACY) {
        for (struct CUstream_st *o = c->streams; o; o = o->next)
            if (!(o->flags & CU_STREAM_NON_BLOCKING))
                op_add_dep(op, o->last);
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && c->legacy) {
        op_add_dep(op, c->legacy->last);
    }
    if (!s->worker_started) {
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&s->worker, &at, worker_main, s) == 0) {
            s->worker_started = 1;
        } else {
            /* no thread: run inline, in order (wait for the queue to drain first) */
            pthread_attr_destroy(&at);
            while (s->head)
                pthread_cond_wait(&hc_cv, &hc_mu);
            while (!op_ready(op))
                pthread_cond_wait(&hc_cv, &hc_mu);
            hc_mark *m = op->mark;
            pthread_mutex_unlock(&hc_mu);
            if (op->run)
                op->run(op);
            if (op->fini)
                op->fini(op);
            pthread_mutex_lock(&hc_mu);
            m->time_ns = hc_now_ns();
            m->done = 1;
            hc_mark_unref(s->last);
            s->last = hc_mark_ref(m);
            op_free(op);
            pthread_cond_broadcast(&hc_cv);
            return m;
        }
        pthread_attr_destroy(&at);
    }
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    hc_mark_unref(s->last);
    s->last = hc_mark_ref(op->mark);
    pthread_cond_broadcast(&hc_cv);
    return op->mark;
}

/* ---------------------------------------------------------------- stream objects */
static struct CUstream_st *stream_new(struct CUctx_st *c, enum hc_stream_kind kind, unsigned int flags,
                                      int prio)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = HC_K_STREAM;
    s->ctx = c;
    s->kind = kind;
    s->flags = flags;
    s->priority = prio;
    s->id = hc_next_stream_id++;
    if (kind == HC_S_LEGACY) {
        c->legacy = s;
    } else {
        s->next = c->streams;
        c->streams = s;
    }
    if (kind == HC_S_USER)
        hc_reg_add(s, HC_K_STREAM);
    return s;
}

struct CUstream_st *hc_stream_default(struct CUctx_st *c, int per_thread)
{
    if (!per_thread)
        return c->legacy ? c->legacy : stream_new(c, HC_S_LEGACY, 0, 0);
    pthread_t me = pthread_self();
    for (struct CUstream_st *s = c->streams; s; s = s->next)
        if (s->kind == HC_S_PTDS && pthread_equal(s->owner, me))
            return s;
    struct CUstream_st *s = stream_new(c, HC_S_PTDS, 0, 0);
    if (s)
        s->owner = me;
    return s;
}

CUresult hc_stream_resolve(CUstream h, int per_thread, struct CUstream_st **out)
{
    struct CUctx_st *c;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        CUresult rc = hc_current_ctx(&c);
        if (rc != CUDA_SUCCESS)
            return rc;
        int pt = h == CU_STREAM_PER_THREAD || (h == NULL && per_thread);
        *out = hc_stream_default(c, pt);
        return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (hc_reg_kind(h) != HC_K_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!hc_ctx_valid(h->ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = h;
    return CUDA_SUCCESS;
}

/* Is s idle? The legacy stream synchronises with every blocking stream of its context, so
 * querying or synchronising it covers their work too. */
static int stream_idle(const struct CUstream_st *s)
{
    if (s->last && !s->last->done)
        return 0;
    if (s->kind == HC_S_LEGACY)
        for (const struct CUstream_st *o = s->ctx->streams; o; o = o->next)
            if (!(o->flags & CU_STREAM_NON_BLOCKING) && o->last && !o->last->done)
                return 0;
    return 1;
}

void hc_stream_sync(struct CUstream_st *s)
{
    if (s->kind != HC_S_LEGACY) {
        hc_mark *m = hc_mark_ref(s->last);
        hc_mark_wait(m);
        hc_mark_unref(m);
        return;
    }
    /* a synchronise on the legacy stream is an action in it: queue an empty op (which waits for
     * the blocking streams, as every legacy op does) and wait for that */
    hc_op *op = hc_op_new(NULL, NULL, NULL);
    if (!op) {
        hc_ctx_sync(s->ctx);
        return;
    }
    hc_mark *m = hc_mark_ref(hc_enqueue(s, op));
    hc_mark_wait(m);
    hc_mark_unref(m);
}

void hc_ctx_sync(struct CUctx_st *c)
{
    /* collect first: waiting drops hc_mu and the stream list may change meanwhile */
    int n = 1;
    for (struct CUstream_st *s = c->streams; s; s = s->next)
        n++;
    hc_mark **ms = calloc((size_t)n, sizeof *ms);
    if (!ms)
        return;
    int k = 0;
    if (c->legacy)
        ms[k++] = hc_mark_ref(c->legacy->last);
    for (struct CUstream_st *s = c->streams; s; s = s->next)
        ms[k++] = hc_mark_ref(s->last);
    for (int i = 0; i < k; i++) {
        hc_mark_wait(ms[i]);
        hc_mark_unref(ms[i]);
    }
    free(ms);
}

void hc_stream_destroy_locked(struct CUstream_st *s)
{
    struct CUctx_st *c = s->ctx;
    if (s->capture)
        hc_graph_stream_gone(s);
    if (s == c->legacy) {
        c->legacy = NULL;
    } else {
        for (struct CUstream_st **pp = &c->streams; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
    }
    hc_reg_del(s);
    s->dying = 1;
    if (s->worker_started)
        pthread_cond_broadcast(&hc_cv);   /* the worker drains the queue, then frees s */
    else
        stream_free(s);
}

static CUresult stream_create(CUstream *phStream, unsigned int Flags, int priority)
{
    HC_CHECK_INIT();
    if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    if (priority > 0)
        priority = 0;
    if (priority < -5)
        priority = -5;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS) {
        struct CUstream_st *s = stream_new(c, HC_S_USER, Flags, priority);
        if (s)
            *phStream = s;
        else
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    HC_COUNT(cuStreamCreate);
    return stream_create(phStream, Flags, 0);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    HC_COUNT(cuStreamCreateWithPriority);
    return stream_create(phStream, flags, priority);
}

static CUresult stream_destroy(CUstream h)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(h) != HC_K_STREAM)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        hc_stream_destroy_locked(h);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    HC_COUNT(cuStreamDestroy);
    return stream_destroy(hStream);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    HC_COUNT(cuStreamDestroy_v2);
    return stream_destroy(hStream);
}

/* Resolve hStream under hc_mu and run body with `s`; rc is returned. */
#define WITH_STREAM(h, pt, s, body)                                                              \
    do {                                                                                       \
        HC_CHECK_INIT();                                                                       \
        pthread_mutex_lock(&hc_mu);                                                            \
        struct CUstream_st *s;                                                                 \
        CUresult rc = hc_stream_resolve(h, pt, &s);                                            \
        if (rc == CUDA_SUCCESS) { body }                                                       \
        pthread_mutex_unlock(&hc_mu);                                                          \
        return rc;                                                                             \
    } while (0)

static CUresult stream_sync(CUstream h, int pt)
{
    WITH_STREAM(h, pt, s, {
        if (s->capture) {
            rc = hc_graph_invalidate(s);   /* conflicts with its capture, which it invalidates */
        } else {
            hc_stream_sync(s);
            hc_ctx_flush_printf(s->ctx);
            rc = hc_ctx_sticky(s->ctx);
        }
    });
}
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    HC_COUNT(cuStreamSynchronize);
    return stream_sync(hStream, 0);
}
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    HC_COUNT(cuStreamSynchronize_ptsz);
    return stream_sync(hStream, 1);
}

static CUresult stream_query(CUstream h, int pt)
{
    WITH_STREAM(h, pt, s, if (s->capture) rc = hc_graph_invalidate(s); else if (!stream_idle(s)) rc = CUDA_ERROR_NOT_READY;);
}
CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    HC_COUNT(cuStreamQuery);
    return stream_query(hStream, 0);
}
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
    HC_COUNT(cuStreamQuery_ptsz);
    return stream_query(hStream, 1);
}

static CUresult stream_flags(CUstream h, unsigned int *flags, int pt)
{
    if (!flags)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, *flags = s->flags;);
}
CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    HC_COUNT(cuStreamGetFlags);
    return stream_flags(hStream, flags, 0);
}
CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    HC_COUNT(cuStreamGetFlags_ptsz);
    return stream_flags(hStream, flags, 1);
}

static CUresult stream_prio(CUstream h, int *priority, int pt)
{
    if (!priority)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, *priority = s->priority;);
}
CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
    HC_COUNT(cuStreamGetPriority);
    return stream_prio(hStream, priority, 0);
}
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
    HC_COUNT(cuStreamGetPriority_ptsz);
    return stream_prio(hStream, priority, 1);
}

static CUresult stream_id(CUstream h, unsigned long long *id, int pt)
{
    if (!id)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, *id = s->id;);
}
CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    HC_COUNT(cuStreamGetId);
    return stream_id(hStream, streamId, 0);
}
CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
    HC_COUNT(cuStreamGetId_ptsz);
    return stream_id(hStream, streamId, 1);
}

static CUresult stream_ctx(CUstream h, CUcontext *pctx, CUgreenCtx *pgreen, int pt)
{
    if (!pctx)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, *pctx = s->ctx; if (pgreen) *pgreen = NULL;);
}
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    HC_COUNT(cuStreamGetCtx);
    return stream_ctx(hStream, pctx, NULL, 0);
}
CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    HC_COUNT(cuStreamGetCtx_ptsz);
    return stream_ctx(hStream, pctx, NULL, 1);
}
CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    HC_COUNT(cuStreamGetCtx_v2);
    return stream_ctx(hStream, pCtx, pGreenCtx, 0);
}
CUresult CUDAAPI cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    HC_COUNT(cuStreamGetCtx_v2_ptsz);
    return stream_ctx(hStream, pCtx, pGreenCtx, 1);
}

/* ---------------------------------------------------------------- host functions and callbacks */
typedef struct {
    CUhostFn fn;
    CUstreamCallback cb;
    CUstream handle;   /* as the caller passed it, for callbacks */
    void *user;
} host_payload;

static void run_host(hc_op *op)
{
    host_payload *p = op->payload;
    if (p->fn)
        p->fn(p->user);
    else
        p->cb(p->handle, CUDA_SUCCESS, p->user);
}

static void fini_payload(hc_op *op)
{
    free(op->payload);
}

static CUresult launch_host(CUstream h, CUhostFn fn, CUstreamCallback cb, void *user, int pt)
{
    if (!fn && !cb)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, {
        host_payload *p = malloc(sizeof *p);
        hc_op *op = p ? hc_op_new(run_host, fini_payload, p) : NULL;
        if (!op) {
            free(p);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            p->fn = fn;
            p->cb = cb;
            p->handle = h;
            p->user = user;
            hc_enqueue(s, op);
        }
    });
}
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    HC_COUNT(cuLaunchHostFunc);
    return launch_host(hStream, fn, NULL, userData, 0);
}
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    HC_COUNT(cuLaunchHostFunc_ptsz);
    return launch_host(hStream, fn, NULL, userData, 1);
}
CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                                     unsigned int flags)
{
    HC_COUNT(cuStreamAddCallback);
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return launch_host(hStream, NULL, callback, userData, 0);
}
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                                          unsigned int flags)
{
    HC_COUNT(cuStreamAddCallback_ptsz);
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return launch_host(hStream, NULL, callback, userData, 1);
}

/* ---------------------------------------------------------------- events */
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    HC_COUNT(cuEventCreate);
    HC_CHECK_INIT();
    if (!phEvent || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c;
    CUresult rc = hc_current_ctx(&c);
    if (rc == CUDA_SUCCESS) {
        struct CUevent_st *e = calloc(1, sizeof *e);
        if (!e) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e->magic = HC_K_EVENT;
            e->ctx = c;
            e->flags = Flags;
            e->next = c->events;
            c->events = e;
            hc_reg_add(e, HC_K_EVENT);
            *phEvent = e;
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult event_record(CUevent e, CUstream h, unsigned int flags, int pt)
{
    HC_CHECK_INIT();
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(e) != HC_K_EVENT)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && s->ctx != e->ctx)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS) {
        hc_op *op = hc_op_new(NULL, NULL, NULL);
        if (!op) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            hc_mark *m = hc_enqueue(s, op);
            hc_mark_unref(e->mark);
            e->mark = hc_mark_ref(m);
            hc_graph_event_record(s, e);   /* in a capture, a wait on e joins it (hc_capture.c) */
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    HC_COUNT(cuEventRecord);
    return event_record(hEvent, hStream, 0, 0);
}
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    HC_COUNT(cuEventRecord_ptsz);
    return event_record(hEvent, hStream, 0, 1);
}
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    HC_COUNT(cuEventRecordWithFlags);
    return event_record(hEvent, hStream, flags, 0);
}
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    HC_COUNT(cuEventRecordWithFlags_ptsz);
    return event_record(hEvent, hStream, flags, 1);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    HC_COUNT(cuEventQuery);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(hEvent) != HC_K_EVENT)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (hEvent->captured)
        rc = CUDA_ERROR_CAPTURED_EVENT;   /* it stands for no work that will run */
    else if (hEvent->mark && !hEvent->mark->done)
        rc = CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    HC_COUNT(cuEventSynchronize);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(hEvent) != HC_K_EVENT) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    } else if (hEvent->captured) {
        rc = CUDA_ERROR_CAPTURED_EVENT;
    } else {
        hc_mark *m = hc_mark_ref(hEvent->mark);
        hc_mark_wait(m);
        hc_mark_unref(m);
        hc_ctx_flush_printf(hEvent->ctx);
        rc = hc_ctx_sticky(hEvent->ctx);
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

void hc_event_destroy_locked(struct CUevent_st *e)
{
    for (struct CUevent_st **pp = &e->ctx->events; *pp; pp = &(*pp)->next)
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    hc_reg_del(e);
    hc_mark_unref(e->mark);
    free(e);
}

static CUresult event_destroy(CUevent e)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(e) != HC_K_EVENT)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else
        hc_event_destroy_locked(e);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    HC_COUNT(cuEventDestroy);
    return event_destroy(hEvent);
}
CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    HC_COUNT(cuEventDestroy_v2);
    return event_destroy(hEvent);
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
    HC_CHECK_INIT();
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(a) != HC_K_EVENT || hc_reg_kind(b) != HC_K_EVENT)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->mark || !b->mark)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->mark->done || !b->mark->done)
        rc = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)((double)((int64_t)(b->mark->time_ns - a->mark->time_ns)) / 1e6);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    HC_COUNT(cuEventElapsedTime);
    return elapsed(pMilliseconds, hStart, hEnd);
}
CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    HC_COUNT(cuEventElapsedTime_v2);
    return elapsed(pMilliseconds, hStart, hEnd);
}

static CUresult wait_event(CUstream h, CUevent e, unsigned int flags, int pt)
{
    HC_CHECK_INIT();
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(e) != HC_K_EVENT)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && hc_graph_event_wait(s, e, &rc))
        ;   /* e was recorded in a capture: s joined it */
    else if (rc == CUDA_SUCCESS && e->mark && !e->mark->done) {
        hc_op *op = hc_op_new(NULL, NULL, NULL);
        if (!op) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            op_add_dep(op, e->mark);
            hc_enqueue(s, op);
        }
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    HC_COUNT(cuStreamWaitEvent);
    return wait_event(hStream, hEvent, Flags, 0);
}
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    HC_COUNT(cuStreamWaitEvent_ptsz);
    return wait_event(hStream, hEvent, Flags, 1);
}

/* ---------------------------------------------------------------- stream attributes, device */
/* the stream attributes (access policy window, synchronization policy, priority, memory sync
 * domain and its map) are checked and kept: each reads back as set; PRIORITY is the stream's own,
 * clamped to the context's range [-5, 0] as at creation */
static CUresult stream_attr_check(CUstreamAttrID id, const CUstreamAttrValue *v)
{
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
        const CUaccessPolicyWindow *w = &v->accessPolicyWindow;
        int prop_ok = w->hitProp <= CU_ACCESS_PROPERTY_PERSISTING && w->missProp <= CU_ACCESS_PROPERTY_PERSISTING;
        return !(w->hitRatio >= 0.0f && w->hitRatio <= 1.0f) || !prop_ok || w->missProp == CU_ACCESS_PROPERTY_PERSISTING ||
                       w->num_bytes > 134213632 /* CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE */
                   ? CUDA_ERROR_INVALID_VALUE
                   : CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        return v->syncPolicy >= CU_SYNC_POLICY_AUTO && v->syncPolicy <= CU_SYNC_POLICY_BLOCKING_SYNC
                   ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        return v->memSyncDomain <= CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;   /* not a stream attribute */
    }
}

static void stream_attr_set(struct CUstream_st *s, CUstreamAttrID id, const CUstreamAttrValue *v)
{
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: s->apw = v->accessPolicyWindow; break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: s->sync_policy = v->syncPolicy; break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: s->priority = v->priority > 0 ? 0 : v->priority < -5 ? -5 : v->priority; break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: s->dom_map = v->memSyncDomainMap; break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: s->dom = v->memSyncDomain; break;
    default: break;
    }
}

static void stream_attr_get(const struct CUstream_st *s, CUstreamAttrID id, CUstreamAttrValue *v)
{
    memset(v, 0, sizeof *v);
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: v->accessPolicyWindow = s->apw; break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: v->syncPolicy = s->sync_policy ? s->sync_policy : CU_SYNC_POLICY_AUTO; break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: v->priority = s->priority; break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: v->memSyncDomainMap = s->dom_map; break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: v->memSyncDomain = s->dom; break;
    default: break;
    }
}

static CUresult stream_set_attr(CUstream h, CUstreamAttrID id, const CUstreamAttrValue *v, int pt)
{
    if (!v)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, rc = stream_attr_check(id, v); if (rc == CUDA_SUCCESS) stream_attr_set(s, id, v););
}
CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value)
{
    HC_COUNT(cuStreamSetAttribute);
    return stream_set_attr(hStream, attr, value, 0);
}
CUresult CUDAAPI cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value)
{
    HC_COUNT(cuStreamSetAttribute_ptsz);
    return stream_set_attr(hStream, attr, value, 1);
}

static CUresult stream_get_attr(CUstream h, CUstreamAttrID id, CUstreamAttrValue *v, int pt)
{
    if (!v)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    CUstreamAttrValue probe;
    memset(&probe, 0, sizeof probe);
    probe.syncPolicy = CU_SYNC_POLICY_AUTO;
    WITH_STREAM(h, pt, s, rc = stream_attr_check(id, &probe); if (rc == CUDA_SUCCESS) stream_attr_get(s, id, v););
}
CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value_out)
{
    HC_COUNT(cuStreamGetAttribute);
    return stream_get_attr(hStream, attr, value_out, 0);
}
CUresult CUDAAPI cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue *value_out)
{
    HC_COUNT(cuStreamGetAttribute_ptsz);
    return stream_get_attr(hStream, attr, value_out, 1);
}

static CUresult stream_copy_attrs(CUstream dst, CUstream src, int pt)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *d, *s;
    CUresult rc = hc_stream_resolve(dst, pt, &d);
    if (rc == CUDA_SUCCESS)
        rc = hc_stream_resolve(src, pt, &s);
    if (rc == CUDA_SUCCESS) {
        d->apw = s->apw;
        d->sync_policy = s->sync_policy;
        d->priority = s->priority;
        d->dom_map = s->dom_map;
        d->dom = s->dom;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}
CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src)
{
    HC_COUNT(cuStreamCopyAttributes);
    return stream_copy_attrs(dst, src, 0);
}
CUresult CUDAAPI cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
    HC_COUNT(cuStreamCopyAttributes_ptsz);
    return stream_copy_attrs(dst, src, 1);
}

static CUresult stream_device(CUstream h, CUdevice *dev, int pt)
{
    if (!dev)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    WITH_STREAM(h, pt, s, *dev = s->ctx->dev;);
}
CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    HC_COUNT(cuStreamGetDevice);
    return stream_device(hStream, device, 0);
}
CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    HC_COUNT(cuStreamGetDevice_ptsz);
    return stream_device(hStream, device, 1);
}
