/* hc_graph.c — hostcuda: stream capture and the graphs it makes (cuStreamBeginCapture_v2,
 * cuStreamEndCapture, cuStreamIsCapturing and their _ptsz twins; cuGraphInstantiateWithFlags,
 * cuGraphLaunch(_ptsz), cuGraphDestroy, cuGraphExecDestroy).
 *
 * While a stream captures, hc_enqueue hands every op to hc_graph_capture_op instead of queueing
 * it: the op is kept, unrun, in the capture's body (its mark is set done at once, so a caller
 * that waits returns: nothing runs while capturing). The body is the graph: a list of ops in
 * capture order, shared (refcounted) by the graph, its execs and in-flight replays. cuGraphLaunch
 * enqueues one replay op per captured op on the launch stream, in order; a replay calls the
 * captured op's run() (every op kind's run only reads its payload, so it may run again).
 * Not modelled: cross-stream capture (events joining other streams), capture invalidation by
 * synchronous calls, graph nodes built by hand, updates of instantiated graphs.
 * Threading: everything under hc_mu (hc_internal.h); payloads are freed outside it.
 * Must not: run an op while its stream captures; change a captured op's payload (a replay only
 * reads it); free payloads under hc_mu.
 */
#include "hc_internal.h"

#include <stdlib.h>

typedef struct hc_gbody {
    int refs;
    int nops, cap;
    hc_op **ops;
} hc_gbody;

struct hc_capture {
    hc_gbody *body;
    CUstreamCaptureMode mode;
};

struct CUgraph_st {
    uint32_t magic;
    hc_gbody *body;
};

struct CUgraphExec_st {
    uint32_t magic;
    hc_gbody *body;
};

static hc_gbody *body_new(void)
{
    hc_gbody *b = calloc(1, sizeof *b);
    if (b)
        b->refs = 1;
    return b;
}

/* hc_mu held; returns the body when its last reference went, for body_free after unlocking */
static hc_gbody *body_unref(hc_gbody *b)
{
    return b && --b->refs == 0 ? b : NULL;
}

static void body_free(hc_gbody *b) /* without hc_mu: payload finalisers may do anything */
{
    if (!b)
        return;
    for (int i = 0; i < b->nops; i++) {
        hc_op *op = b->ops[i];
        if (op->fini)
            op->fini(op);
        pthread_mutex_lock(&hc_mu);
        hc_mark_unref(op->mark);
        pthread_mutex_unlock(&hc_mu);
        free(op->deps);
        free(op);
    }
    free(b->ops);
    free(b);
}

hc_mark *hc_graph_capture_op(struct CUstream_st *s, hc_op *op)
{
    hc_gbody *b = s->capture->body;
    op->mark->done = 1; /* captured, not run: nobody may wait for it */
    op->mark->time_ns = hc_now_ns();
    if (b->nops == b->cap) {
        int ncap = b->cap ? 2 * b->cap : 8;
        hc_op **n = realloc(b->ops, (size_t)ncap * sizeof *n);
        if (!n)
            abort(); /* a test double: no graceful way to lose a captured op */
        b->ops = n;
        b->cap = ncap;
    }
    b->ops[b->nops++] = op;
    pthread_cond_broadcast(&hc_cv);
    return op->mark;
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
    struct hc_capture *c = NULL;
    if (rc == CUDA_SUCCESS && s->kind == HC_S_LEGACY)
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (rc == CUDA_SUCCESS && s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    else if (rc == CUDA_SUCCESS && (!(c = calloc(1, sizeof *c)) || !(c->body = body_new()))) {
        free(c);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc == CUDA_SUCCESS) {
        c->mode = mode;
        s->capture = c;
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

static CUresult end_capture(CUstream h, CUgraph *out, int pt)
{
    HC_CHECK_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS && !s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    struct CUgraph_st *g = NULL;
    if (rc == CUDA_SUCCESS && !(g = calloc(1, sizeof *g)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        g->magic = HC_K_GRAPH;
        g->body = s->capture->body;
        free(s->capture);
        s->capture = NULL;
        hc_reg_add(g, HC_K_GRAPH);
        *out = g;
    }
    pthread_mutex_unlock(&hc_mu);
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

static CUresult is_capturing(CUstream h, CUstreamCaptureStatus *status, int pt)
{
    HC_CHECK_INIT();
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_stream_resolve(h, pt, &s);
    if (rc == CUDA_SUCCESS)
        *status = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
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

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    HC_COUNT(cuGraphInstantiateWithFlags);
    HC_CHECK_INIT();
    if (!phGraphExec)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&hc_mu);
    struct CUgraphExec_st *x = NULL;
    if (hc_reg_kind(hGraph) != HC_K_GRAPH)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(x = calloc(1, sizeof *x)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        x->magic = HC_K_GEXEC;
        x->body = hGraph->body;
        x->body->refs++;
        hc_reg_add(x, HC_K_GEXEC);
        *phGraphExec = x;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---- replay ---- */
typedef struct {
    hc_gbody *body;
    hc_op *op;
} replay_payload;

static void run_replay(hc_op *w)
{
    replay_payload *p = w->payload;
    if (p->op->run)
        p->op->run(p->op);
}

static void fini_replay(hc_op *w)
{
    replay_payload *p = w->payload;
    pthread_mutex_lock(&hc_mu);
    hc_gbody *gone = body_unref(p->body);
    pthread_mutex_unlock(&hc_mu);
    body_free(gone);
    free(p);
}

static CUresult graph_launch(CUgraphExec x, CUstream h, int pt)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_reg_kind(x) == HC_K_GEXEC ? hc_stream_resolve(h, pt, &s) : CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; rc == CUDA_SUCCESS && i < x->body->nops; i++) {
        replay_payload *p = malloc(sizeof *p);
        hc_op *w = p ? hc_op_new(run_replay, fini_replay, p) : NULL;
        if (!w) {
            free(p);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        p->body = x->body;
        p->op = x->body->ops[i];
        x->body->refs++;
        hc_enqueue(s, w); /* a capturing stream records the replay itself: graphs nest */
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    HC_COUNT(cuGraphLaunch);
    return graph_launch(hGraphExec, hStream, 0);
}
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    HC_COUNT(cuGraphLaunch_ptsz);
    return graph_launch(hGraphExec, hStream, 1);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    HC_COUNT(cuGraphExecDestroy);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(hGraphExec) != HC_K_GEXEC) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    hc_reg_del(hGraphExec);
    hc_gbody *gone = body_unref(hGraphExec->body);
    pthread_mutex_unlock(&hc_mu);
    body_free(gone);
    free(hGraphExec);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    HC_COUNT(cuGraphDestroy);
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(hGraph) != HC_K_GRAPH) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    hc_reg_del(hGraph);
    hc_gbody *gone = body_unref(hGraph->body);
    pthread_mutex_unlock(&hc_mu);
    body_free(gone);
    free(hGraph);
    return CUDA_SUCCESS;
}
