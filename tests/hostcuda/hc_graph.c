/* hc_graph.c — hostcuda: CUDA graphs. Graphs built node by node (kernel, memcpy, memset, host,
 * empty, child-graph, memory alloc/free nodes; cuGraphAddNode for the same kinds), node
 * parameters, clones, instantiation, replay, and updates of instantiated graphs
 * (cuGraphExecKernelNodeSetParams, cuGraphExecUpdate). Stream capture is hc_capture.c.
 *
 * A node's work is an op (hc_internal.h) built once and never changed (hc_gop, hc_graph.h): set
 * parameters build a new op. A kernel op is built by launching on a private capturing stream
 * (hc_launch_on), so it is exactly the op cuLaunchKernel would queue. Instantiation flattens the
 * graph (child graphs inlined) into one topological order, ties broken by creation order; a
 * launch enqueues one replay op per node on the launch stream, so a replay runs in stream order,
 * every dependency honoured. Memory nodes: an alloc node's block is allocated when the node is
 * made and held for the graph (hc_mem_graph_hold): a free only marks it freed, the alloc node's
 * replay makes it live again at the same address.
 * Threading: everything under hc_mu; ops are finalised outside it (hc_gdead).
 * Must not: change an op's payload after it is built; free payloads under hc_mu.
 */
#include "hc_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared ops */
hc_gop *hc_gop_wrap(hc_op *op)
{
    hc_gop *g = calloc(1, sizeof *g);
    if (g) {
        g->refs = 1;
        g->op = op;
    }
    return g;
}

hc_gop *hc_gop_ref(hc_gop *g)
{
    if (g)
        g->refs++;
    return g;
}

void hc_gop_unref(hc_gop *g, hc_gdead *d) /* hc_mu held */
{
    if (!g || --g->refs > 0)
        return;
    if (d->n == d->cap) {
        int ncap = d->cap ? 2 * d->cap : 16;
        hc_gop **nv = realloc(d->v, (size_t)ncap * sizeof *nv);
        if (!nv)
            return; /* cannot queue it for finalising: leak it rather than finalise under hc_mu */
        d->v = nv;
        d->cap = ncap;
    }
    d->v[d->n++] = g;
}

void hc_gdead_free(hc_gdead *d) /* without hc_mu: finalisers may take it */
{
    for (int i = 0; i < d->n; i++) {
        hc_op *op = d->v[i]->op;
        if (op->fini)
            op->fini(op);
        pthread_mutex_lock(&hc_mu);
        for (int k = 0; k < op->ndeps; k++)
            hc_mark_unref(op->deps[k]);
        hc_mark_unref(op->mark);
        pthread_mutex_unlock(&hc_mu);
        free(op->deps);
        free(op);
        free(d->v[i]);
    }
    free(d->v);
    d->v = NULL;
    d->n = d->cap = 0;
}

/* ---------------------------------------------------------------- graphs and nodes */
struct CUgraphExec_st {
    uint32_t magic;
    unsigned long long flags;
    struct CUgraph_st *shape;       /* a private clone of the graph instantiated: updates must match it */
    int n;
    hc_gop **ops;                   /* in execution order; NULL entries do nothing */
    struct CUgraphNode_st **key;    /* the instantiated graph's node of each entry (NULL: in a child) */
    CUgraphNodeType *type;
};

struct CUgraph_st *hc_graph_alloc(void)
{
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (g)
        g->magic = HC_K_GRAPH;
    return g;
}


static void node_free(struct CUgraphNode_st *nd, hc_gdead *d) /* hc_mu held; registered nodes only */
{
    hc_reg_del(nd);
    hc_gop_unref(nd->op, d);
    if (nd->child)
        hc_graph_free(nd->child, d);
    free(nd->deps);
    free(nd->kargs);
    free(nd);
}

void hc_graph_free(struct CUgraph_st *g, hc_gdead *d) /* hc_mu held */
{
    if (hc_reg_kind(g) == HC_K_GRAPH)
        hc_reg_del(g);
    for (int i = 0; i < g->n; i++)
        node_free(g->nodes[i], d);
    free(g->nodes);
    free(g);
}

static int node_of(const void *h, const struct CUgraph_st *g) /* hc_mu held: a live node of g */
{
    return hc_reg_kind(h) == HC_K_GNODE && ((const struct CUgraphNode_st *)h)->g == g;
}

static CUresult node_dep_add(struct CUgraphNode_st *nd, struct CUgraphNode_st *dep)
{
    if (nd->ndeps == nd->capdeps) {
        int ncap = nd->capdeps ? 2 * nd->capdeps : 4;
        struct CUgraphNode_st **nv = realloc(nd->deps, (size_t)ncap * sizeof *nv);
        if (!nv)
            return CUDA_ERROR_OUT_OF_MEMORY;
        nd->deps = nv;
        nd->capdeps = ncap;
    }
    nd->deps[nd->ndeps++] = dep;
    return CUDA_SUCCESS;
}

static int node_has_dep(const struct CUgraphNode_st *nd, const struct CUgraphNode_st *dep)
{
    for (int i = 0; i < nd->ndeps; i++)
        if (nd->deps[i] == dep)
            return 1;
    return 0;
}

/* hc_mu held: a new node of g depending on deps[0..n) (checked: nodes of g, no repeats) */
CUresult hc_gnode_new(struct CUgraph_st *g, CUgraphNodeType type, const CUgraphNode *deps, size_t n,
                         struct CUgraphNode_st **out)
{
    if (n && !deps)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        if (!node_of(deps[i], g))
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    struct CUgraphNode_st *nd = calloc(1, sizeof *nd);
    if (!nd)
        return CUDA_ERROR_OUT_OF_MEMORY;
    nd->magic = HC_K_GNODE;
    nd->g = g;
    nd->type = type;
    for (size_t i = 0; i < n; i++)
        if (node_dep_add(nd, deps[i]) != CUDA_SUCCESS) {
            free(nd->deps);
            free(nd);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    if (g->n == g->cap) {
        int ncap = g->cap ? 2 * g->cap : 8;
        struct CUgraphNode_st **nv = realloc(g->nodes, (size_t)ncap * sizeof *nv);
        if (!nv) {
            free(nd->deps);
            free(nd);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g->nodes = nv;
        g->cap = ncap;
    }
    g->nodes[g->n++] = nd;
    hc_reg_add(nd, HC_K_GNODE);
    *out = nd;
    return CUDA_SUCCESS;
}

static int node_index(const struct CUgraph_st *g, const struct CUgraphNode_st *nd)
{
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i] == nd)
            return i;
    return -1;
}

/* hc_mu held: a deep copy of g (ops shared, kernel parameters copied), registered if reg;
 * NULL when out of memory (what was built goes to d) */
static struct CUgraph_st *graph_clone(const struct CUgraph_st *g, int reg, hc_gdead *d)
{
    struct CUgraph_st *c = hc_graph_alloc();
    if (!c)
        return NULL;
    int ok = 1;
    for (int i = 0; i < g->n && ok; i++) {
        const struct CUgraphNode_st *o = g->nodes[i];
        struct CUgraphNode_st *nd = NULL;
        ok = hc_gnode_new(c, o->type, NULL, 0, &nd) == CUDA_SUCCESS;
        if (!ok)
            break;
        nd->captured = o->captured;
        nd->p = o->p;
        nd->orig = (struct CUgraphNode_st *)o;
        nd->op = hc_gop_ref(o->op);
        for (int k = 0; k < o->ndeps && ok; k++)
            ok = node_dep_add(nd, c->nodes[node_index(g, o->deps[k])]) == CUDA_SUCCESS;
        if (ok && o->child && (nd->child = graph_clone(o->child, reg, d)) != NULL)
            nd->child->owned = 1;
        else if (o->child)
            ok = 0;
        if (ok && o->kargs) {
            ok = (nd->kargs = malloc(o->kargs_bytes)) != NULL;
            if (ok) {
                memcpy(nd->kargs, o->kargs, o->kargs_bytes);
                nd->kargs_bytes = o->kargs_bytes;
                for (int k = 0; o->kargs[k]; k++)
                    nd->kargs[k] = (unsigned char *)nd->kargs + ((unsigned char *)o->kargs[k] - (unsigned char *)o->kargs);
                nd->p.k.kernelParams = nd->kargs;
            }
        }
    }
    if (!ok) {
        hc_graph_free(c, d);
        return NULL;
    }
    if (reg)
        hc_reg_add(c, HC_K_GRAPH);
    return c;
}

/* ---------------------------------------------------------------- building ops */
/* A kernel op, exactly as cuLaunchKernel builds it: launched on a private capturing stream.
 * hc_mu not held. */
static CUresult build_kernel(const CUDA_KERNEL_NODE_PARAMS *kp, hc_op **out)
{
    const void *f = kp->func ? (const void *)kp->func : (const void *)kp->kern;
    pthread_mutex_lock(&hc_mu);
    struct CUctx_st *c = NULL;
    CUresult rc = hc_current_ctx(&c);
    if (rc != CUDA_SUCCESS && !kp->func && kp->ctx && hc_reg_kind(kp->ctx) == HC_K_CTX)
        c = kp->ctx, rc = CUDA_SUCCESS;
    struct CUstream_st *bs = NULL;
    struct hc_capture cap = {0};
    if (rc == CUDA_SUCCESS && !(bs = calloc(1, sizeof *bs)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        bs->magic = HC_K_STREAM;
        bs->ctx = c;
        bs->kind = HC_S_USER;
        bs->flags = CU_STREAM_NON_BLOCKING;
        bs->capture = &cap;
        hc_reg_add(bs, HC_K_STREAM);
    }
    pthread_mutex_unlock(&hc_mu);
    if (rc != CUDA_SUCCESS)
        return rc;
    unsigned int dims[6] = {kp->gridDimX, kp->gridDimY, kp->gridDimZ, kp->blockDimX, kp->blockDimY, kp->blockDimZ};
    rc = hc_launch_on(f, dims, kp->sharedMemBytes, bs, kp->kernelParams, kp->extra);
    pthread_mutex_lock(&hc_mu);
    hc_reg_del(bs);
    pthread_mutex_unlock(&hc_mu);
    free(bs);
    if (rc == CUDA_SUCCESS && !cap.built)
        rc = CUDA_ERROR_UNKNOWN;
    if (rc == CUDA_SUCCESS)
        *out = cap.built;
    return rc;
}

/* memcpy nodes: CUDA_MEMCPY3D between host, device and unified memory (no arrays) */
typedef struct {
    unsigned char *dst;
    const unsigned char *src;
    size_t w, h, d;
    size_t dpitch, spitch, dheight, sheight;
} copy3d_payload;

static void run_copy3d(hc_op *op)
{
    const copy3d_payload *p = op->payload;
    for (size_t z = 0; z < p->d; z++)
        for (size_t y = 0; y < p->h; y++)
            memmove(p->dst + (z * p->dheight + y) * p->dpitch, p->src + (z * p->sheight + y) * p->spitch, p->w);
}

static void fini_payload(hc_op *op)
{
    free(op->payload);
}

/* one side of a 3-D copy: the host address of its first byte, the whole span checked */
static CUresult copy_side(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
                          size_t *pitch, size_t *height, const CUDA_MEMCPY3D *c, unsigned char **out)
{
    uintptr_t base;
    switch (t) {
    case CU_MEMORYTYPE_HOST: base = (uintptr_t)host; break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = (uintptr_t)dev; break;
    case CU_MEMORYTYPE_ARRAY:
        fprintf(stderr, "hostcuda: a memcpy node with a CUDA array is not supported\n");
        return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (!base)
        return CUDA_ERROR_INVALID_VALUE;
    if (!*pitch && c->Height <= 1 && c->Depth <= 1)
        *pitch = x + c->WidthInBytes;
    if (!*height)
        *height = c->Height;
    if (*pitch < x + c->WidthInBytes || (c->Depth > 1 && *height < y + c->Height))
        return CUDA_ERROR_INVALID_VALUE;
    size_t start = (z * *height + y) * *pitch + x;
    size_t span = ((c->Depth - 1) * *height + (c->Height - 1)) * *pitch + c->WidthInBytes;
    int kind;
    void *p = hc_mem_resolve(base + start, span, &kind, NULL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    *out = p;
    return CUDA_SUCCESS;
}

static CUresult build_copy(const CUDA_MEMCPY3D *c, hc_op **out) /* hc_mu not held */
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c->WidthInBytes || !c->Height || !c->Depth)
        return CUDA_ERROR_INVALID_VALUE;
    copy3d_payload *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->w = c->WidthInBytes;
    p->h = c->Height;
    p->d = c->Depth;
    p->spitch = c->srcPitch;
    p->sheight = c->srcHeight;
    p->dpitch = c->dstPitch;
    p->dheight = c->dstHeight;
    unsigned char *d = NULL, *s = NULL;
    CUresult rc = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
                            &p->spitch, &p->sheight, c, &s);
    if (rc == CUDA_SUCCESS)
        rc = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
                       &p->dpitch, &p->dheight, c, &d);
    hc_op *op = NULL;
    if (rc == CUDA_SUCCESS) {
        p->src = s;
        p->dst = d;
        pthread_mutex_lock(&hc_mu);
        op = hc_op_new(run_copy3d, fini_payload, p);
        pthread_mutex_unlock(&hc_mu);
        if (!op)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc != CUDA_SUCCESS) {
        free(p);
        return rc;
    }
    *out = op;
    return CUDA_SUCCESS;
}

typedef struct {
    unsigned char *dst;
    size_t pitch, width, height;
    unsigned int value, es;
} set2d_payload;

static void run_set2d(hc_op *op)
{
    const set2d_payload *p = op->payload;
    for (size_t y = 0; y < p->height; y++) {
        unsigned char *row = p->dst + y * p->pitch;
        for (size_t x = 0; x < p->width; x++) {
            if (p->es == 1) {
                row[x] = (unsigned char)p->value;
            } else if (p->es == 2) {
                uint16_t v = (uint16_t)p->value;
                memcpy(row + 2 * x, &v, 2);
            } else {
                memcpy(row + 4 * x, &p->value, 4);
            }
        }
    }
}

static CUresult build_set(const CUDA_MEMSET_NODE_PARAMS *m, hc_op **out) /* hc_mu not held */
{
    if (!m || (m->elementSize != 1 && m->elementSize != 2 && m->elementSize != 4) || !m->width || !m->height ||
        !m->dst || (m->dst & (m->elementSize - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t row = m->width * m->elementSize;
    if (m->height > 1 && m->pitch < row)
        return CUDA_ERROR_INVALID_VALUE;
    int kind;
    void *d = hc_mem_resolve(m->dst, (m->height - 1) * m->pitch + row, &kind, NULL);
    if (!d || kind == HC_MEM_PAGEABLE)
        return CUDA_ERROR_INVALID_VALUE;
    set2d_payload *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (set2d_payload){d, m->pitch, m->width, m->height, m->value, m->elementSize};
    pthread_mutex_lock(&hc_mu);
    hc_op *op = hc_op_new(run_set2d, fini_payload, p);
    pthread_mutex_unlock(&hc_mu);
    if (!op) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = op;
    return CUDA_SUCCESS;
}

static void run_host(hc_op *op)
{
    const CUDA_HOST_NODE_PARAMS *h = op->payload;
    h->fn(h->userData);
}

static CUresult build_host(const CUDA_HOST_NODE_PARAMS *h, hc_op **out) /* hc_mu not held */
{
    if (!h || !h->fn)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_HOST_NODE_PARAMS *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = *h;
    pthread_mutex_lock(&hc_mu);
    hc_op *op = hc_op_new(run_host, fini_payload, p);
    pthread_mutex_unlock(&hc_mu);
    if (!op) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = op;
    return CUDA_SUCCESS;
}

/* memory nodes. An alloc node's block is held for the graph from its creation: a free (a free
 * node, cuMemFreeAsync, cuMemFree) then only marks it freed, and the alloc node's replay makes it
 * live again at the same address; the hold ends when the last graph or exec with the node goes. */
typedef struct {
    CUdeviceptr p;
} gmem_payload;

static void run_galloc(hc_op *op)
{
    pthread_mutex_lock(&hc_mu);
    (void)hc_mem_graph_hold(((gmem_payload *)op->payload)->p, 0);
    pthread_mutex_unlock(&hc_mu);
}

static void fini_galloc(hc_op *op)
{
    pthread_mutex_lock(&hc_mu);
    (void)hc_mem_graph_hold(((gmem_payload *)op->payload)->p, -1);
    pthread_mutex_unlock(&hc_mu);
    free(op->payload);
}

static void run_gfree(hc_op *op)
{
    pthread_mutex_lock(&hc_mu);
    (void)hc_mem_free(((gmem_payload *)op->payload)->p);
    pthread_mutex_unlock(&hc_mu);
}

hc_op *hc_gmem_op(CUdeviceptr ptr, int alloc) /* hc_mu held */
{
    gmem_payload *p = malloc(sizeof *p);
    hc_op *op = p ? hc_op_new(alloc ? run_galloc : run_gfree, alloc ? fini_galloc : fini_payload, p) : NULL;
    if (!op) {
        free(p);
        return NULL;
    }
    p->p = ptr;
    return op;
}

/* the op of a node's parameters (hc_mu not held); kernel nodes also get their parameter copy */
static CUresult build_node_op(CUgraphNodeType type, const void *params, hc_op **op)
{
    *op = NULL;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return build_kernel(params, op);
    case CU_GRAPH_NODE_TYPE_MEMCPY: return build_copy(params, op);
    case CU_GRAPH_NODE_TYPE_MEMSET: return build_set(params, op);
    case CU_GRAPH_NODE_TYPE_HOST: return build_host(params, op);
    default: return CUDA_SUCCESS;
    }
}

static void op_discard(hc_op *op) /* hc_mu not held: an op never queued */
{
    if (!op)
        return;
    hc_gdead d = {0};
    hc_gop *g = hc_gop_wrap(op);
    if (!g)
        return;   /* out of memory: leaked */
    pthread_mutex_lock(&hc_mu);
    hc_gop_unref(g, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
}

/* hc_mu held: set nd's parameters (and its op, already built) */
static CUresult node_set(struct CUgraphNode_st *nd, const void *params, hc_op *op, hc_gdead *d)
{
    void **kargs = NULL;
    size_t kbytes = 0;
    if (nd->type == CU_GRAPH_NODE_TYPE_KERNEL) {
        const CUDA_KERNEL_NODE_PARAMS *kp = params;
        const void *f = kp->func ? (const void *)kp->func : (const void *)kp->kern;
        CUresult rc = hc_kernel_params_copy(f, kp->kernelParams, kp->extra, &kargs, &kbytes);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    hc_gop *g = NULL;
    if (op && !(g = hc_gop_wrap(op))) {
        free(kargs);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    hc_gop_unref(nd->op, d);
    nd->op = g;
    switch (nd->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        nd->p.k = *(const CUDA_KERNEL_NODE_PARAMS *)params;
        nd->p.k.kernelParams = kargs;
        nd->p.k.extra = NULL;
        free(nd->kargs);
        nd->kargs = kargs;
        nd->kargs_bytes = kbytes;
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY: nd->p.c = *(const CUDA_MEMCPY3D *)params; break;
    case CU_GRAPH_NODE_TYPE_MEMSET: nd->p.m = *(const CUDA_MEMSET_NODE_PARAMS *)params; break;
    case CU_GRAPH_NODE_TYPE_HOST: nd->p.h = *(const CUDA_HOST_NODE_PARAMS *)params; break;
    default: break;
    }
    nd->captured = 0;
    return CUDA_SUCCESS;
}

/* the shared body of the cuGraphAdd*Node calls for nodes with an op or none */
static CUresult add_node(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type,
                         const void *params)
{
    HC_CHECK_INIT();
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(g) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (type != CU_GRAPH_NODE_TYPE_EMPTY && !params)
        return CUDA_ERROR_INVALID_VALUE;
    hc_op *op = NULL;
    rc = build_node_op(type, params, &op);
    if (rc != CUDA_SUCCESS)
        return rc;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    struct CUgraphNode_st *nd = NULL;
    if (hc_reg_kind(g) != HC_K_GRAPH)
        rc = CUDA_ERROR_INVALID_VALUE;   /* destroyed meanwhile */
    if (rc == CUDA_SUCCESS)
        rc = hc_gnode_new(g, type, deps, n, &nd);
    if (rc == CUDA_SUCCESS) {
        rc = node_set(nd, params, op, &d);
        if (rc == CUDA_SUCCESS) {
            op = NULL;
            *ph = nd;
        } else {
            g->n--;
            node_free(nd, &d);
        }
    }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    op_discard(op);
    return rc;
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    HC_COUNT(cuGraphCreate);
    HC_CHECK_INIT();
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *g = hc_graph_alloc();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&hc_mu);
    hc_reg_add(g, HC_K_GRAPH);
    pthread_mutex_unlock(&hc_mu);
    *phGraph = g;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphAddKernelNode_v2);
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams);
}

CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    HC_COUNT(cuGraphAddMemcpyNode);
    (void)ctx;   /* hostcuda's memory is one address space: the copy needs no context */
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMCPY, copyParams);
}

CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                      CUcontext ctx)
{
    HC_COUNT(cuGraphAddMemsetNode);
    (void)ctx;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMSET, memsetParams);
}

CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                    size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphAddHostNode);
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_HOST, nodeParams);
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies)
{
    HC_COUNT(cuGraphAddEmptyNode);
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY, NULL);
}

CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                          size_t numDependencies, CUgraph childGraph)
{
    HC_COUNT(cuGraphAddChildGraphNode);
    HC_CHECK_INIT();
    if (!phGraphNode)
        return CUDA_ERROR_INVALID_VALUE;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    struct CUgraphNode_st *nd = NULL;
    struct CUgraph_st *c = NULL;
    if (hc_reg_kind(hGraph) != HC_K_GRAPH || hc_reg_kind(childGraph) != HC_K_GRAPH || hGraph == childGraph)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(c = graph_clone(childGraph, 1, &d)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (c)
        c->owned = 1;
    if (rc == CUDA_SUCCESS)
        rc = hc_gnode_new(hGraph, CU_GRAPH_NODE_TYPE_GRAPH, dependencies, numDependencies, &nd);
    if (rc == CUDA_SUCCESS) {
        nd->child = c;
        *phGraphNode = nd;
    } else if (c) {
        hc_graph_free(c, &d);
    }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
    HC_COUNT(cuGraphChildGraphNodeGetGraph);
    HC_CHECK_INIT();
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE && hNode->type == CU_GRAPH_NODE_TYPE_GRAPH
                      ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *phGraph = hNode->child;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphAddMemAllocNode);
    HC_CHECK_INIT();
    if (!phGraphNode || !nodeParams || !nodeParams->bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    const CUmemPoolProps *pp = &nodeParams->poolProps;
    if (pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED || pp->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        pp->location.id < 0 || pp->location.id >= hc_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hGraph) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = NULL;
    if (rc == CUDA_SUCCESS)
        rc = hc_current_ctx(&c);
    struct CUgraphNode_st *nd = NULL;
    if (rc == CUDA_SUCCESS)
        rc = hc_gnode_new(hGraph, CU_GRAPH_NODE_TYPE_MEM_ALLOC, dependencies, numDependencies, &nd);
    CUdeviceptr p = 0;
    if (rc == CUDA_SUCCESS) {
        /* allocated now, at a fixed address, and held for the graph */
        rc = hc_mem_alloc(c, nodeParams->bytesize, &hc_devs[pp->location.id].default_pool, &p);
        hc_op *op = rc == CUDA_SUCCESS ? hc_gmem_op(p, 1) : NULL;
        if (op && !(nd->op = hc_gop_wrap(op)))
            op = NULL;
        if (rc == CUDA_SUCCESS && !op) {
            (void)hc_mem_free(p);
            rc = CUDA_ERROR_OUT_OF_MEMORY;   /* the op, if any, leaks */
        }
        if (rc != CUDA_SUCCESS) {
            hc_gdead d = {0};
            nd->op = NULL;
            hGraph->n--;
            node_free(nd, &d);
        } else {
            (void)hc_mem_graph_hold(p, 1);
        }
    }
    if (rc == CUDA_SUCCESS) {
        nodeParams->dptr = p;
        nd->p.a = *nodeParams;
        *phGraphNode = nd;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                       size_t numDependencies, CUdeviceptr dptr)
{
    HC_COUNT(cuGraphAddMemFreeNode);
    HC_CHECK_INIT();
    if (!phGraphNode || !dptr)
        return CUDA_ERROR_INVALID_VALUE;
    int kind;
    if (!hc_mem_resolve(dptr, 1, &kind, NULL) || kind != HC_MEM_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hGraph) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st *nd = NULL;
    if (rc == CUDA_SUCCESS)
        rc = hc_gnode_new(hGraph, CU_GRAPH_NODE_TYPE_MEM_FREE, dependencies, numDependencies, &nd);
    hc_op *op = NULL;
    if (rc == CUDA_SUCCESS && (!(op = hc_gmem_op(dptr, 0)) || !(nd->op = hc_gop_wrap(op)))) {
        hc_gdead d = {0};
        hGraph->n--;
        node_free(nd, &d);
        rc = CUDA_ERROR_OUT_OF_MEMORY;   /* the op, if any, leaks */
    }
    if (rc == CUDA_SUCCESS) {
        nd->p.f = dptr;
        *phGraphNode = nd;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    HC_COUNT(cuGraphMemAllocNodeGetParams);
    HC_CHECK_INIT();
    if (!params_out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE && hNode->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC
                      ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *params_out = hNode->p.a;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    HC_COUNT(cuGraphMemFreeNodeGetParams);
    HC_CHECK_INIT();
    if (!dptr_out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE && hNode->type == CU_GRAPH_NODE_TYPE_MEM_FREE
                      ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *dptr_out = hNode->p.f;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- node parameters */
static CUresult get_params(CUgraphNode h, CUgraphNodeType type, void *out, size_t size)
{
    HC_CHECK_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(h) == HC_K_GNODE && h->type == type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && h->captured) {
        fprintf(stderr, "hostcuda: the parameters of a node made by stream capture are not kept (node %p)\n",
                (void *)h);
        rc = CUDA_ERROR_NOT_SUPPORTED;
    }
    if (rc == CUDA_SUCCESS)
        memcpy(out, &h->p, size);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

static CUresult set_params(CUgraphNode h, CUgraphNodeType type, const void *params)
{
    HC_CHECK_INIT();
    if (!params)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(h) == HC_K_GNODE && h->type == type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    hc_op *op = NULL;
    if (rc == CUDA_SUCCESS)
        rc = build_node_op(type, params, &op);
    if (rc != CUDA_SUCCESS)
        return rc;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(h) != HC_K_GNODE || h->type != type)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && (rc = node_set(h, params, op, &d)) == CUDA_SUCCESS)
        op = NULL;
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    op_discard(op);
    return rc;
}

CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphKernelNodeGetParams_v2);
    return get_params(hNode, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams, sizeof *nodeParams);
}
CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphKernelNodeSetParams_v2);
    return set_params(hNode, CU_GRAPH_NODE_TYPE_KERNEL, nodeParams);
}
CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
    HC_COUNT(cuGraphMemcpyNodeGetParams);
    return get_params(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, nodeParams, sizeof *nodeParams);
}
CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)
{
    HC_COUNT(cuGraphMemcpyNodeSetParams);
    return set_params(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, nodeParams);
}
CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphMemsetNodeGetParams);
    return get_params(hNode, CU_GRAPH_NODE_TYPE_MEMSET, nodeParams, sizeof *nodeParams);
}
CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphMemsetNodeSetParams);
    return set_params(hNode, CU_GRAPH_NODE_TYPE_MEMSET, nodeParams);
}
CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphHostNodeGetParams);
    return get_params(hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams, sizeof *nodeParams);
}
CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphHostNodeSetParams);
    return set_params(hNode, CU_GRAPH_NODE_TYPE_HOST, nodeParams);
}

/* cuGraphAddNode: the generic form, for the node kinds hostcuda builds */
static const char *node_type_name(CUgraphNodeType t)
{
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
    case CU_GRAPH_NODE_TYPE_HOST: return "host";
    case CU_GRAPH_NODE_TYPE_GRAPH: return "child graph";
    case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event wait";
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "external semaphore signal";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "external semaphore wait";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "memory alloc";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "memory free";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "batch memop";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
    default: return "unknown";
    }
}

static CUresult edges_default(const CUgraphEdgeData *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        if (e[i].from_port || e[i].to_port || e[i].type) {
            fprintf(stderr, "hostcuda: graph edges with port or type data are not supported\n");
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    return CUDA_SUCCESS;
}

static CUresult add_generic(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                            size_t n, CUgraphNodeParams *np)
{
    HC_CHECK_INIT();
    if (!np)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = edges_default(edges, n);
    if (rc != CUDA_SUCCESS)
        return rc;
    switch (np->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS k;
        memcpy(&k, &np->kernel, sizeof k);   /* _v3 and _v2 have one layout */
        return add_node(ph, g, deps, n, np->type, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (np->memcpy.flags || np->memcpy.reserved)
            return CUDA_ERROR_INVALID_VALUE;
        return add_node(ph, g, deps, n, np->type, &np->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS m = {np->memset.dst, np->memset.pitch, np->memset.value, np->memset.elementSize,
                                     np->memset.width, np->memset.height};
        return add_node(ph, g, deps, n, np->type, &m);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {np->host.fn, np->host.userData};
        return add_node(ph, g, deps, n, np->type, &h);
    }
    case CU_GRAPH_NODE_TYPE_EMPTY: return add_node(ph, g, deps, n, np->type, NULL);
    case CU_GRAPH_NODE_TYPE_GRAPH: return cuGraphAddChildGraphNode(ph, g, deps, n, np->graph.graph);
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return cuGraphAddMemFreeNode(ph, g, deps, n, np->free.dptr);
    default:
        fprintf(stderr, "hostcuda: cuGraphAddNode: %s nodes (type %d) are not supported\n",
                node_type_name(np->type), (int)np->type);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUgraphNodeParams *nodeParams);
CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    HC_COUNT(cuGraphAddNode);
    return add_generic(phGraphNode, hGraph, dependencies, NULL, numDependencies, nodeParams);
}
CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                   const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                   CUgraphNodeParams *nodeParams)
{
    HC_COUNT(cuGraphAddNode_v2);
    return add_generic(phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams);
}

/* ---------------------------------------------------------------- graph structure */
static CUresult add_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e,
                         size_t n)
{
    HC_CHECK_INIT();
    if (n && (!from || !to))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = edges_default(e, n);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(g) != HC_K_GRAPH)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
        if (!node_of(from[i], g) || !node_of(to[i], g) || from[i] == to[i] || node_has_dep(to[i], from[i]))
            rc = CUDA_ERROR_INVALID_VALUE;   /* not g's, a self edge, or an edge that exists */
        for (size_t j = 0; rc == CUDA_SUCCESS && j < i; j++)
            if (from[j] == from[i] && to[j] == to[i])
                rc = CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++)
        rc = node_dep_add(to[i], from[i]);
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                        size_t numDependencies);
CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                        size_t numDependencies)
{
    HC_COUNT(cuGraphAddDependencies);
    return add_deps(hGraph, from, to, NULL, numDependencies);
}
CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                           const CUgraphEdgeData *edgeData, size_t numDependencies)
{
    HC_COUNT(cuGraphAddDependencies_v2);
    return add_deps(hGraph, from, to, edgeData, numDependencies);
}

/* the nodes of g that pass keep(), into out[0..*n) as cuGraphGetNodes documents */
static CUresult list_nodes(CUgraph g, CUgraphNode *out, size_t *n, int roots)
{
    HC_CHECK_INIT();
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(g) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        size_t k = 0;
        for (int i = 0; i < g->n; i++) {
            if (roots && g->nodes[i]->ndeps)
                continue;
            if (out && k < *n)
                out[k] = g->nodes[i];
            k++;
        }
        if (out)
            for (size_t i = k; i < *n; i++)
                out[i] = NULL;
        *n = out && *n < k ? *n : k;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    HC_COUNT(cuGraphGetNodes);
    return list_nodes(hGraph, nodes, numNodes, 0);
}
CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{
    HC_COUNT(cuGraphGetRootNodes);
    return list_nodes(hGraph, rootNodes, numRootNodes, 1);
}

CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
                                               size_t *numDependencies)
{
    HC_COUNT(cuGraphNodeGetDependencies_v2);
    HC_CHECK_INIT();
    if (!numDependencies)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        size_t k = (size_t)hNode->ndeps;
        for (size_t i = 0; dependencies && i < *numDependencies; i++) {
            dependencies[i] = i < k ? hNode->deps[i] : NULL;
            if (edgeData)
                memset(&edgeData[i], 0, sizeof edgeData[i]);
        }
        *numDependencies = dependencies && *numDependencies < k ? *numDependencies : k;
    }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    HC_COUNT(cuGraphNodeGetType);
    HC_CHECK_INIT();
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *type = hNode->type;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    HC_COUNT(cuGraphClone);
    HC_CHECK_INIT();
    if (!phGraphClone)
        return CUDA_ERROR_INVALID_VALUE;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(originalGraph) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *c = NULL;
    if (rc == CUDA_SUCCESS && !(c = graph_clone(originalGraph, 1, &d)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS)
        *phGraphClone = c;
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{
    HC_COUNT(cuGraphNodeFindInClone);
    HC_CHECK_INIT();
    if (!phNode)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (hc_reg_kind(hClonedGraph) == HC_K_GRAPH)
        for (int i = 0; i < hClonedGraph->n; i++)
            if (hClonedGraph->nodes[i]->orig == hOriginalNode && hOriginalNode) {
                *phNode = hClonedGraph->nodes[i];
                rc = CUDA_SUCCESS;
                break;
            }
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode)
{
    HC_COUNT(cuGraphDestroyNode);
    HC_CHECK_INIT();
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hNode) == HC_K_GNODE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        struct CUgraph_st *g = hNode->g;
        int at = node_index(g, hNode);
        for (int i = 0; i < g->n; i++) {   /* its edges go with it */
            struct CUgraphNode_st *o = g->nodes[i];
            int k = 0;
            for (int j = 0; j < o->ndeps; j++)
                if (o->deps[j] != hNode)
                    o->deps[k++] = o->deps[j];
            o->ndeps = k;
        }
        memmove(g->nodes + at, g->nodes + at + 1, (size_t)(g->n - at - 1) * sizeof *g->nodes);
        g->n--;
        node_free(hNode, &d);
    }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    HC_COUNT(cuGraphDestroy);
    HC_CHECK_INIT();
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(hGraph) != HC_K_GRAPH || hGraph->owned) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_VALUE;   /* a child node's copy goes with its node */
    }
    hc_graph_free(hGraph, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags)
{
    HC_COUNT(cuGraphDebugDotPrint);
    (void)hGraph, (void)path, (void)flags;
    fprintf(stderr, "hostcuda: cuGraphDebugDotPrint is not supported\n");
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---------------------------------------------------------------- instantiation */
typedef struct {
    hc_gop **ops;
    struct CUgraphNode_st **key;
    CUgraphNodeType *type;
    int n, cap;
} flat;

static int flat_push(flat *f, hc_gop *op, struct CUgraphNode_st *key, CUgraphNodeType type)
{
    if (f->n == f->cap) {
        int ncap = f->cap ? 2 * f->cap : 16;
        hc_gop **o = realloc(f->ops, (size_t)ncap * sizeof *o);
        if (o)
            f->ops = o;
        struct CUgraphNode_st **k = o ? realloc(f->key, (size_t)ncap * sizeof *k) : NULL;
        if (k)
            f->key = k;
        CUgraphNodeType *t = k ? realloc(f->type, (size_t)ncap * sizeof *t) : NULL;
        if (!t)
            return 0;
        f->type = t;
        f->cap = ncap;
    }
    f->ops[f->n] = hc_gop_ref(op);
    f->key[f->n] = key;
    f->type[f->n] = type;
    f->n++;
    return 1;
}

/* hc_mu held: g's nodes in a topological order (a node comes after all it depends on; among
 * nodes ready together, creation order), child graphs inlined; top: key entries by node */
static CUresult flatten(const struct CUgraph_st *g, int top, flat *f)
{
    for (int i = 0; i < g->n; i++)
        g->nodes[i]->scratch = 0;
    int left = g->n;
    while (left > 0) {
        int progress = 0;
        for (int i = 0; i < g->n; i++) {
            struct CUgraphNode_st *nd = g->nodes[i];
            if (nd->scratch)
                continue;
            int ready = 1;
            for (int k = 0; k < nd->ndeps && ready; k++)
                ready = nd->deps[k]->scratch;
            if (!ready)
                continue;
            if (nd->child) {
                CUresult rc = flatten(nd->child, 0, f);
                if (rc != CUDA_SUCCESS)
                    return rc;
            } else if (!flat_push(f, nd->op, top ? nd : NULL, nd->type)) {
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            nd->scratch = 1;
            left--;
            progress = 1;
        }
        if (!progress) {
            fprintf(stderr, "hostcuda: cuGraphInstantiate: the graph's dependencies form a cycle (%d nodes in it "
                            "or after it)\n", left);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

static void flat_drop(flat *f, hc_gdead *d)
{
    for (int i = 0; i < f->n; i++)
        hc_gop_unref(f->ops[i], d);
    free(f->ops);
    free(f->key);
    free(f->type);
    *f = (flat){0};
}

static CUresult instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    HC_CHECK_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    hc_gdead d = {0};
    flat f = {0};
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(g) == HC_K_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *x = NULL;
    if (rc == CUDA_SUCCESS)
        rc = flatten(g, 1, &f);
    if (rc == CUDA_SUCCESS && !(x = calloc(1, sizeof *x)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS && !(x->shape = graph_clone(g, 0, &d)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        x->magic = HC_K_GEXEC;
        x->flags = flags;
        x->n = f.n;
        x->ops = f.ops;
        x->key = f.key;
        x->type = f.type;
        f = (flat){0};
        hc_reg_add(x, HC_K_GEXEC);
        *out = x;
    } else {
        free(x);
    }
    flat_drop(&f, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    HC_COUNT(cuGraphInstantiateWithFlags);
    return instantiate(phGraphExec, hGraph, flags);
}

static CUresult instantiate_params(CUgraphExec *out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return atomic_load(&hc_initialized) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = instantiate(out, g, p->flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
    p->hErrNode_out = NULL;
    p->result_out = rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return rc;
}
CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    HC_COUNT(cuGraphInstantiateWithParams);
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    HC_COUNT(cuGraphInstantiateWithParams_ptsz);
    return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
    HC_COUNT(cuGraphExecGetFlags);
    HC_CHECK_INIT();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&hc_mu);
    CUresult rc = hc_reg_kind(hGraphExec) == HC_K_GEXEC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *flags = hGraphExec->flags;
    pthread_mutex_unlock(&hc_mu);
    return rc;
}

/* ---------------------------------------------------------------- replay */
static void run_replay(hc_op *w)
{
    hc_gop *g = w->payload;
    if (g->op->run)
        g->op->run(g->op);
}

static void fini_replay(hc_op *w)
{
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    hc_gop_unref(w->payload, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
}

/* the node type of an op a capture records */
CUgraphNodeType hc_gop_type(const hc_op *op)
{
    if (op->run == run_replay)
        return hc_gop_type(((const hc_gop *)op->payload)->op);
    if (hc_op_is_launch(op))
        return CU_GRAPH_NODE_TYPE_KERNEL;
    if (hc_xfer_kind(op) == 1 || op->run == run_copy3d)
        return CU_GRAPH_NODE_TYPE_MEMCPY;
    if (hc_xfer_kind(op) == 2 || op->run == run_set2d)
        return CU_GRAPH_NODE_TYPE_MEMSET;
    if (hc_op_is_free(op) || op->run == run_gfree)
        return CU_GRAPH_NODE_TYPE_MEM_FREE;
    if (op->run == run_galloc)
        return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    return op->run ? CU_GRAPH_NODE_TYPE_HOST : CU_GRAPH_NODE_TYPE_EMPTY;
}

static CUresult graph_launch(CUgraphExec x, CUstream h, int pt)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_reg_kind(x) == HC_K_GEXEC ? hc_stream_resolve(h, pt, &s) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && hc_ctx_sticky(s->ctx) != CUDA_SUCCESS)
        rc = hc_ctx_sticky(s->ctx);
    for (int i = 0; rc == CUDA_SUCCESS && i < x->n; i++) {
        if (!x->ops[i])
            continue;
        hc_op *w = hc_op_new(run_replay, fini_replay, x->ops[i]);
        if (!w) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;   /* the replay stops short: as a GPU's failed launch */
            break;
        }
        hc_gop_ref(x->ops[i]);
        hc_enqueue(s, w);   /* a capturing stream records the replay itself: graphs nest */
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

static CUresult graph_upload(CUgraphExec x, CUstream h, int pt)
{
    HC_CHECK_INIT();
    pthread_mutex_lock(&hc_mu);
    struct CUstream_st *s;
    CUresult rc = hc_reg_kind(x) == HC_K_GEXEC ? hc_stream_resolve(h, pt, &s) : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&hc_mu);
    return rc;   /* nothing to upload: a launch finds everything in host memory */
}
CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    HC_COUNT(cuGraphUpload);
    return graph_upload(hGraphExec, hStream, 0);
}
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    HC_COUNT(cuGraphUpload_ptsz);
    return graph_upload(hGraphExec, hStream, 1);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    HC_COUNT(cuGraphExecDestroy);
    HC_CHECK_INIT();
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    if (hc_reg_kind(hGraphExec) != HC_K_GEXEC) {
        pthread_mutex_unlock(&hc_mu);
        return CUDA_ERROR_INVALID_VALUE;
    }
    hc_reg_del(hGraphExec);
    flat f = {hGraphExec->ops, hGraphExec->key, hGraphExec->type, hGraphExec->n, hGraphExec->n};
    flat_drop(&f, &d);   /* queued replays hold their own references */
    hc_graph_free(hGraphExec->shape, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    free(hGraphExec);
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- updates */
CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    HC_COUNT(cuGraphExecKernelNodeSetParams_v2);
    HC_CHECK_INIT();
    if (!nodeParams || !hNode)
        return CUDA_ERROR_INVALID_VALUE;
    hc_op *op = NULL;
    CUresult rc = build_kernel(nodeParams, &op);
    if (rc != CUDA_SUCCESS)
        return rc;
    hc_gdead d = {0};
    pthread_mutex_lock(&hc_mu);
    rc = hc_reg_kind(hGraphExec) == HC_K_GEXEC ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_ERROR_INVALID_VALUE)
        for (int i = 0; i < hGraphExec->n; i++) {
            if (hGraphExec->key[i] != hNode)
                continue;
            if (hGraphExec->type[i] != CU_GRAPH_NODE_TYPE_KERNEL)
                break;
            hc_gop *g = hc_gop_wrap(op);
            rc = g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
            if (g) {
                hc_gop_unref(hGraphExec->ops[i], &d);
                hGraphExec->ops[i] = g;   /* the graph's own node keeps its parameters */
                op = NULL;
            }
            break;
        }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    op_discard(op);
    return rc;
}

/* hc_mu held: does b have a's shape (node types and edges, child graphs alike)? On a difference,
 * the result code and b's node where it shows */
static CUgraphExecUpdateResult same_shape(const struct CUgraph_st *a, const struct CUgraph_st *b,
                                          struct CUgraphNode_st **where)
{
    *where = NULL;
    if (a->n != b->n)
        return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (int i = 0; i < a->n; i++) {
        a->nodes[i]->scratch = i;
        b->nodes[i]->scratch = i;
    }
    for (int i = 0; i < a->n; i++) {
        const struct CUgraphNode_st *x = a->nodes[i];
        struct CUgraphNode_st *y = b->nodes[i];
        *where = y;
        if (x->type != y->type)
            return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        if (x->ndeps != y->ndeps)
            return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        for (int k = 0; k < x->ndeps; k++)
            if (x->deps[k]->scratch != y->deps[k]->scratch)
                return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    }
    for (int i = 0; i < a->n; i++)
        if (a->nodes[i]->child) {
            struct CUgraphNode_st *w;
            CUgraphExecUpdateResult r = same_shape(a->nodes[i]->child, b->nodes[i]->child, &w);
            if (r != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
                *where = b->nodes[i];
                return r;
            }
        }
    *where = NULL;
    return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
    HC_COUNT(cuGraphExecUpdate_v2);
    HC_CHECK_INIT();
    if (!resultInfo)
        return CUDA_ERROR_INVALID_VALUE;
    hc_gdead d = {0};
    flat f = {0};
    pthread_mutex_lock(&hc_mu);
    CUresult rc = CUDA_SUCCESS;
    if (hc_reg_kind(hGraphExec) != HC_K_GEXEC || hc_reg_kind(hGraph) != HC_K_GRAPH)
        rc = CUDA_ERROR_INVALID_VALUE;
    struct CUgraphNode_st *where = NULL;
    CUgraphExecUpdateResult r = CU_GRAPH_EXEC_UPDATE_ERROR;
    if (rc == CUDA_SUCCESS && (r = same_shape(hGraphExec->shape, hGraph, &where)) != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    if (rc == CUDA_SUCCESS)
        rc = flatten(hGraph, 1, &f);
    if (rc == CUDA_SUCCESS && f.n != hGraphExec->n)
        rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, r = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    if (rc == CUDA_SUCCESS) {
        for (int i = 0; i < f.n; i++) {   /* same shape, same order: entry i is node i's new work */
            hc_gop *old = hGraphExec->ops[i];
            hGraphExec->ops[i] = f.ops[i];
            f.ops[i] = old;
        }
        r = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    }
    resultInfo->result = r;
    resultInfo->errorNode = where;
    resultInfo->errorFromNode = NULL;
    flat_drop(&f, &d);
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    return rc;
}

