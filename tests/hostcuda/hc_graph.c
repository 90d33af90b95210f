/* hc_graph.c — hostcuda: CUDA graphs. Graph objects and their structure (cuGraphCreate, edges,
 * node lists, clones, node destroy), instantiation, replay and updates of instantiated graphs
 * (cuGraphExecKernelNodeSetParams, cuGraphExecUpdate). Nodes built by hand are hc_gnode.c,
 * stream capture hc_capture.c.
 *
 * A node's work is an op built once and never changed (hc_gop, hc_graph.h), shared by the node,
 * its clones, the execs instantiated from it and queued replays. Instantiation flattens the graph
 * (child graphs inlined) into one topological order, ties broken by creation order; a launch
 * enqueues one replay op per node on the launch stream, so a replay runs in stream order, every
 * dependency honoured, and a capturing launch stream records the replay itself. An exec keeps a
 * private clone of the graph it was made from: an update must match its shape.
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


void hc_gnode_free(struct CUgraphNode_st *nd, hc_gdead *d) /* hc_mu held; registered nodes only */
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
        hc_gnode_free(g->nodes[i], d);
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
struct CUgraph_st *hc_graph_clone(const struct CUgraph_st *g, int reg, hc_gdead *d)
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
        if (ok && o->child && (nd->child = hc_graph_clone(o->child, reg, d)) != NULL)
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

/* ---------------------------------------------------------------- graph structure */
static CUresult add_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e,
                         size_t n)
{
    HC_CHECK_INIT();
    if (n && (!from || !to))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = hc_gedges_default(e, n);
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
    if (rc == CUDA_SUCCESS && !(c = hc_graph_clone(originalGraph, 1, &d)))
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
        hc_gnode_free(hNode, &d);
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
    if (rc == CUDA_SUCCESS && !(x->shape = hc_graph_clone(g, 0, &d)))
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

const hc_op *hc_graph_replay_inner(const hc_op *op)
{
    return op->run == run_replay ? ((const hc_gop *)op->payload)->op : NULL;
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
    CUresult rc = hc_gbuild_kernel(nodeParams, &op);
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
    hc_gop_discard(op);
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

