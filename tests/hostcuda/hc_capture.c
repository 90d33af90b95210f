/* hc_capture.c — hostcuda: stream capture into graphs (cuStreamBeginCapture_v2 .. cuStreamEndCapture,
 * cuStreamIsCapturing, cuStreamGetCaptureInfo_v2/_v3, their _ptsz twins,
 * cuThreadExchangeStreamCaptureMode) and the hooks the stream, event, memory and context calls
 * make while a capture is on.
 *
 * While a stream captures, hc_enqueue hands every op to hc_graph_capture_op instead of queueing
 * it: the op becomes a node (its mark set done at once: nothing runs while capturing) depending
 * on the stream's frontier, which it then replaces. A capture sequence (hc_capsh) is shared by
 * the streams in it: an event recorded in it remembers its stream's frontier, and a wait on that
 * event joins the waiting stream. Ops without work (event record/wait) make no node. A
 * synchronise or query of a capturing stream, a context synchronise, or a call its modes
 * prohibit invalidates the capture. Not modelled: cuStreamUpdateCaptureDependencies, capture
 * into an existing graph. Threading: everything under hc_mu.
 * Must not: run an op while its stream captures.
 */
#include "hc_graph.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- stream capture */
typedef struct {
    struct CUevent_st *e;
    struct CUgraphNode_st **deps;   /* the recording stream's frontier then */
    int ndeps;
} cap_event;

typedef struct hc_capsh {           /* one capture sequence, shared by the streams in it */
    struct CUgraph_st *g;
    CUstreamCaptureMode mode;
    pthread_t thread;               /* that began it */
    unsigned long long id;
    int invalid;
    struct CUstream_st *origin;
    struct CUstream_st **members;
    int nmem, capmem;
    cap_event *evs;
    int nev, capev;
    struct CUgraphNode_st **left;   /* frontiers of member streams destroyed before the end */
    int nleft, capleft;
    hc_gop **dropped;               /* ops that made no node (event record/wait): kept for their marks */
    int ndropped, capdropped;
    struct hc_capsh *next;
} hc_capsh;

static hc_capsh *live_caps;
static unsigned long long next_capture_id = 1;
static _Thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static int grow(void **v, int *cap, int n, size_t each)
{
    if (n < *cap)
        return 1;
    int ncap = *cap ? 2 * *cap : 8;
    void *nv = realloc(*v, (size_t)ncap * each);
    if (!nv)
        return 0;
    *v = nv;
    *cap = ncap;
    return 1;
}

static int frontier_set(struct hc_capture *c, struct CUgraphNode_st *const *deps, int n)
{
    c->ndeps = 0;
    for (int i = 0; i < n; i++) {
        if (!grow((void **)&c->deps, &c->capdeps, c->ndeps, sizeof *c->deps))
            return 0;
        c->deps[c->ndeps++] = deps[i];
    }
    return 1;
}

hc_mark *hc_graph_capture_op(struct CUstream_st *s, hc_op *op)
{
    struct hc_capture *c = s->capture;
    op->mark->done = 1; /* captured, not run: nobody may wait for it */
    op->mark->time_ns = hc_now_ns();
    pthread_cond_broadcast(&hc_cv);
    if (!c->sh) {       /* hc_graph.c's op-building stream */
        c->built = op;
        return op->mark;
    }
    hc_capsh *sh = c->sh;
    hc_mark *m = op->mark;
    hc_xfer_unstage(op);
    if (!op->run) {   /* event record/wait make no node; the op is kept, unrun, for its mark */
        if (grow((void **)&sh->dropped, &sh->capdropped, sh->ndropped, sizeof *sh->dropped)) {
            hc_gop *keep = hc_gop_wrap(op);
            if (keep)
                sh->dropped[sh->ndropped++] = keep;
        }
        return m;
    }
    struct CUgraphNode_st *nd = NULL;
    hc_gop *g = hc_gop_wrap(op);
    if (!g || hc_gnode_new(sh->g, hc_gop_type(op), (const CUgraphNode *)c->deps, (size_t)c->ndeps, &nd) != CUDA_SUCCESS)
        abort(); /* a test double: no graceful way to lose a captured op */
    nd->op = g;
    nd->captured = 1;
    if (!frontier_set(c, &nd, 1))
        abort();
    return m;
}

static int cap_member_add(hc_capsh *sh, struct CUstream_st *s, struct CUgraphNode_st *const *deps, int n)
{
    struct hc_capture *c = calloc(1, sizeof *c);
    if (!c || !grow((void **)&sh->members, &sh->capmem, sh->nmem, sizeof *sh->members) || !frontier_set(c, deps, n)) {
        if (c)
            free(c->deps);
        free(c);
        return 0;
    }
    c->sh = sh;
    sh->members[sh->nmem++] = s;
    s->capture = c;
    return 1;
}

static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, int pt)
{
    HC_CHECK_INIT();
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    hc_capsh *sh = NULL;
    if (rc == CUDA_SUCCESS && s->kind == HC_S_LEGACY)
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (rc == CUDA_SUCCESS && s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    else if (rc == CUDA_SUCCESS && (!(sh = calloc(1, sizeof *sh)) || !(sh->g = hc_graph_alloc()) ||
                                    !cap_member_add(sh, s, NULL, 0))) {
        if (sh) {
            free(sh->g);
            free(sh->members);
        }
        free(sh);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc == CUDA_SUCCESS) {
        sh->mode = mode;
        sh->thread = pthread_self();
        sh->id = next_capture_id++;
        sh->origin = s;
        sh->g->owned = 1;   /* the capture's until it ends */
        hc_reg_add(sh->g, HC_K_GRAPH);
        sh->next = live_caps;
        live_caps = sh;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    HC_COUNT(cuStreamBeginCapture_v2);
    return begin_capture(hStream, mode, 0);
}
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    HC_COUNT(cuStreamBeginCapture_v2_ptsz);
    return begin_capture(hStream, mode, 1);
}

/* is `want` an ancestor of (or one of) the nodes from[0..n)? */
static int reaches(struct CUgraphNode_st *const *from, int n, const struct CUgraphNode_st *want, int depth)
{
    for (int i = 0; i < n; i++) {
        if (from[i] == want)
            return 1;
        if (depth < 100000 && reaches(from[i]->deps, from[i]->ndeps, want, depth + 1))
            return 1;
    }
    return 0;
}

static void cap_end(hc_capsh *sh, hc_gdead *d) /* hc_mu held: every member leaves; sh freed */
{
    for (int i = 0; i < sh->nmem; i++) {
        struct hc_capture *c = sh->members[i]->capture;
        sh->members[i]->capture = NULL;
        if (c)
            free(c->deps);
        free(c);
    }
    for (hc_capsh **p = &live_caps; *p; p = &(*p)->next)
        if (*p == sh) {
            *p = sh->next;
            break;
        }
    for (int i = 0; i < sh->nev; i++)
        free(sh->evs[i].deps);
    for (int i = 0; i < sh->ndropped; i++)
        hc_gop_unref(sh->dropped[i], d);
    free(sh->dropped);
    free(sh->left);
    free(sh->evs);
    free(sh->members);
    free(sh);
}

static CUresult end_capture(CUstream h, CUgraph *out, int pt)
{
    HC_CHECK_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && (!s->capture || !s->capture->sh))
        rc = CUDA_ERROR_ILLEGAL_STATE;
    hc_capsh *sh = rc == CUDA_SUCCESS ? s->capture->sh : NULL;
    if (sh && sh->origin != s) {
        rc = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;   /* not the stream that began it */
        sh = NULL;
    }
    if (sh && !pthread_equal(sh->thread, pthread_self()) && sh->mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        sh = NULL;
    }
    if (sh) {
        struct hc_capture *o = s->capture;
        if (sh->invalid)
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        for (int i = 0; rc == CUDA_SUCCESS && i < sh->nmem; i++) {
            struct hc_capture *c = sh->members[i]->capture;
            for (int k = 0; c != o && rc == CUDA_SUCCESS && k < c->ndeps; k++)
                if (!reaches(o->deps, o->ndeps, c->deps[k], 0))
                    rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;   /* a fork not joined back into s */
        }
        for (int k = 0; rc == CUDA_SUCCESS && k < sh->nleft; k++)
            if (!reaches(o->deps, o->ndeps, sh->left[k], 0))
                rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
        struct CUgraph_st *g = sh->g;
        cap_end(sh, &d);
        if (rc == CUDA_SUCCESS) {
            g->owned = 0;
            *out = g;
        } else {
            *out = NULL;
            if (hc_reg_kind(g) == HC_K_GRAPH) {
                hc_reg_del(g);
                hc_graph_free(g, &d);
            }
        }
    }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    HC_COUNT(cuStreamEndCapture);
    return end_capture(hStream, phGraph, 0);
}
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    HC_COUNT(cuStreamEndCapture_ptsz);
    return end_capture(hStream, phGraph, 1);
}

static CUstreamCaptureStatus cap_status(const struct CUstream_st *s)
{
    if (!s->capture || !s->capture->sh)
        return CU_STREAM_CAPTURE_STATUS_NONE;
    return s->capture->sh->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* the legacy stream of a context where a blocking stream captures cannot say: IMPLICIT */
static int legacy_implicit(const struct CUstream_st *s)
{
    if (s->kind != HC_S_LEGACY)
        return 0;
    for (hc_capsh *sh = live_caps; sh; sh = sh->next)
        for (int i = 0; i < sh->nmem; i++)
            if (sh->members[i]->ctx == s->ctx && !(sh->members[i]->flags & CU_STREAM_NON_BLOCKING))
                return 1;
    return 0;
}

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *status, int pt)
{
    HC_CHECK_INIT();
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && legacy_implicit(s))
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (rc == CUDA_SUCCESS)
        *status = cap_status(s);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    HC_COUNT(cuStreamIsCapturing);
    return is_capturing(hStream, captureStatus, 0);
}
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    HC_COUNT(cuStreamIsCapturing_ptsz);
    return is_capturing(hStream, captureStatus, 1);
}

static CUresult capture_info(CUstream h, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps, int pt)
{
    HC_CHECK_INIT();
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && legacy_implicit(s))
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (rc == CUDA_SUCCESS) {
        *status = cap_status(s);
        int on = *status != CU_STREAM_CAPTURE_STATUS_NONE;
        struct hc_capture *c = s->capture;
        if (id && on)
            *id = c->sh->id;
        if (graph)
            *graph = on ? c->sh->g : NULL;
        if (deps)
            *deps = on ? (const CUgraphNode *)c->deps : NULL;
        if (edges)
            *edges = NULL;   /* every edge is a default one */
        if (ndeps)
            *ndeps = on ? (size_t)c->ndeps : 0;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
    HC_COUNT(cuStreamGetCaptureInfo_v2);
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out, 0);
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
    HC_COUNT(cuStreamGetCaptureInfo_v2_ptsz);
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out, 1);
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,
                                           size_t *numDependencies_out)
{
    HC_COUNT(cuStreamGetCaptureInfo_v3);
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, 0);
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    HC_COUNT(cuStreamGetCaptureInfo_v3_ptsz);
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, 1);
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    HC_COUNT(cuThreadExchangeStreamCaptureMode);
    HC_CHECK_INIT();
    if (!mode || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                  *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ---- the hooks hc_stream.c and hc_core.c call ---- */
void hc_graph_event_record(struct CUstream_st *s, struct CUevent_st *e)
{
    for (hc_capsh *sh = live_caps; sh; sh = sh->next)   /* a new record replaces the old one */
        for (int i = 0; i < sh->nev; i++)
            if (sh->evs[i].e == e) {
                free(sh->evs[i].deps);
                sh->evs[i] = sh->evs[--sh->nev];
                break;
            }
    struct hc_capture *c = s->capture;
    e->captured = c && c->sh;
    if (!e->captured)
        return;
    hc_capsh *sh = c->sh;
    struct CUgraphNode_st **deps = c->ndeps ? malloc((size_t)c->ndeps * sizeof *deps) : NULL;
    if ((c->ndeps && !deps) || !grow((void **)&sh->evs, &sh->capev, sh->nev, sizeof *sh->evs)) {
        free(deps);
        sh->invalid = 1;   /* cannot remember the join point: the capture cannot be trusted */
        return;
    }
    if (c->ndeps)
        memcpy(deps, c->deps, (size_t)c->ndeps * sizeof *deps);
    sh->evs[sh->nev++] = (cap_event){e, deps, c->ndeps};
}

int hc_graph_event_wait(struct CUstream_st *s, struct CUevent_st *e, CUresult *rc)
{
    for (hc_capsh *sh = live_caps; sh; sh = sh->next)
        for (int i = 0; i < sh->nev; i++) {
            if (sh->evs[i].e != e)
                continue;
            const cap_event *ev = &sh->evs[i];
            struct hc_capture *c = s->capture;
            *rc = CUDA_SUCCESS;
            if (c && c->sh != sh) {
                *rc = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;   /* joins two captures (or ours) */
            } else if (!c) {
                if (s->kind == HC_S_LEGACY)
                    *rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
                else if (!cap_member_add(sh, s, ev->deps, ev->ndeps))
                    *rc = CUDA_ERROR_OUT_OF_MEMORY;
            } else {
                for (int k = 0; k < ev->ndeps && *rc == CUDA_SUCCESS; k++) {
                    int have = 0;
                    for (int j = 0; j < c->ndeps && !have; j++)
                        have = c->deps[j] == ev->deps[k];
                    if (have)
                        continue;
                    if (!grow((void **)&c->deps, &c->capdeps, c->ndeps, sizeof *c->deps))
                        *rc = CUDA_ERROR_OUT_OF_MEMORY;
                    else
                        c->deps[c->ndeps++] = ev->deps[k];
                }
            }
            if (*rc != CUDA_SUCCESS)
                sh->invalid = 1;
            return 1;
        }
    return 0;
}

CUresult hc_graph_invalidate(struct CUstream_st *s)
{
    if (s->capture && s->capture->sh)
        s->capture->sh->invalid = 1;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult hc_graph_unsafe_call(void)
{
    if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    for (hc_capsh *sh = live_caps; sh; sh = sh->next) {
        int mine = pthread_equal(sh->thread, pthread_self());
        if ((mine && sh->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!mine && thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && sh->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            sh->invalid = 1;
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return rc;
}

void hc_graph_stream_gone(struct CUstream_st *s)
{
    struct hc_capture *c = s->capture;
    s->capture = NULL;
    if (!c)
        return;
    hc_capsh *sh = c->sh;
    for (int k = 0; k < c->ndeps; k++) {   /* its work must still be joined into the origin */
        if (!grow((void **)&sh->left, &sh->capleft, sh->nleft, sizeof *sh->left)) {
            sh->invalid = 1;
            break;
        }
        sh->left[sh->nleft++] = c->deps[k];
    }
    free(c->deps);
    free(c);
    for (int i = 0; i < sh->nmem; i++)
        if (sh->members[i] == s) {
            sh->members[i] = sh->members[--sh->nmem];
            break;
        }
    if (sh->origin == s) {   /* nobody can end it now */
        hc_gdead d = {0};
        struct CUgraph_st *g = sh->g;
        cap_end(sh, &d);
        if (hc_reg_kind(g) == HC_K_GRAPH) {
            hc_reg_del(g);
            hc_graph_free(g, &d);
        }
        /* ops without a finaliser that needs hc_mu could go now; keep it simple and leak them */
        free(d.v);
    }
}

CUresult hc_graph_ctx_sync(struct CUctx_st *c)
{
    CUresult rc = CUDA_SUCCESS;
    for (hc_capsh *sh = live_caps; sh; sh = sh->next)
        for (int i = 0; i < sh->nmem; i++)
            if (sh->members[i]->ctx == c) {
                sh->invalid = 1;
                rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
            }
    return rc;
}

CUresult hc_graph_capture_alloc(struct CUstream_st *s, CUdeviceptr p, size_t bytes)
{
    struct hc_capture *c = s->capture;
    if (!c->sh)
        return CUDA_SUCCESS;
    hc_op *op = hc_gmem_op(p, 1);
    hc_gop *g = op ? hc_gop_wrap(op) : NULL;
    struct CUgraphNode_st *nd = NULL;
    if (!g || hc_gnode_new(c->sh->g, CU_GRAPH_NODE_TYPE_MEM_ALLOC, (const CUgraphNode *)c->deps, (size_t)c->ndeps,
                       &nd) != CUDA_SUCCESS || !frontier_set(c, &nd, 1))
        abort(); /* a test double: no graceful way to lose a captured allocation */
    op->mark->done = 1;
    nd->op = g;
    nd->captured = 1;
    nd->p.a.bytesize = bytes;
    nd->p.a.dptr = p;
    nd->p.a.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    nd->p.a.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    nd->p.a.poolProps.location.id = s->ctx->dev;
    return hc_mem_graph_hold(p, 1);
}
