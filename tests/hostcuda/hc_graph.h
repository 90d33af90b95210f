/* hc_graph.h — private to hostcuda's graph files (hc_graph.c: graphs, structure, execs,
 * replays, updates; hc_gnode.c: nodes built by hand; hc_capture.c: stream capture). It owns the
 * shapes they share: the immutable op (hc_gop), the list of ops finalised after unlocking
 * (hc_gdead), nodes, graphs and a stream's part in a capture. Threading: everything under hc_mu (hc_internal.h); hc_gdead_free without it.
 */
#ifndef HC_GRAPH_H
#define HC_GRAPH_H

#include "hc_internal.h"

/* an op built once and never changed, shared by nodes, clones, execs and queued replays */
typedef struct hc_gop {
    int refs;
    hc_op *op;
} hc_gop;

/* ops whose last reference went under hc_mu, finalised by hc_gdead_free after unlocking */
typedef struct hc_gdead {
    hc_gop **v;
    int n, cap;
} hc_gdead;


struct CUgraphNode_st {
    uint32_t magic;
    struct CUgraph_st *g;
    CUgraphNodeType type;
    int captured;                 /* made by stream capture: parameters not kept */
    hc_gop *op;                   /* its work; NULL for empty and child-graph nodes */
    struct CUgraph_st *child;     /* CU_GRAPH_NODE_TYPE_GRAPH: the node's own copy */
    struct CUgraphNode_st **deps;
    int ndeps, capdeps;
    struct CUgraphNode_st *orig;  /* in a clone: the node it copies */
    union {
        CUDA_KERNEL_NODE_PARAMS k;
        CUDA_MEMCPY3D c;
        CUDA_MEMSET_NODE_PARAMS m;
        CUDA_HOST_NODE_PARAMS h;
        CUDA_MEM_ALLOC_NODE_PARAMS a;
        CUdeviceptr f;
    } p;
    void **kargs;                 /* kernel node: its parameter values (p.k.kernelParams) */
    size_t kargs_bytes;
    int scratch;                  /* instantiation and comparison, under hc_mu */
};

struct CUgraph_st {
    uint32_t magic;
    int owned;                      /* a child-graph node's copy: not the caller's to destroy */
    struct CUgraphNode_st **nodes;  /* creation order */
    int n, cap;
};


struct hc_capsh;
struct hc_capture {                /* one stream's part in a capture */
    struct hc_capsh *sh;           /* NULL: hc_graph.c's own op-building stream */
    struct CUgraphNode_st **deps;  /* the stream's frontier: what its next node depends on */
    int ndeps, capdeps;
    hc_op *built;                  /* op-building stream: the op the call made */
};

hc_gop *hc_gop_wrap(hc_op *op);                      /* refs = 1; NULL when out of memory */
hc_gop *hc_gop_ref(hc_gop *g);                       /* hc_mu held; NULL-safe */
void hc_gop_unref(hc_gop *g, hc_gdead *d);           /* hc_mu held: the last reference goes to d */
void hc_gdead_free(hc_gdead *d);                     /* without hc_mu: finalise and free d's ops */
CUgraphNodeType hc_gop_type(const hc_op *op);        /* the node type of a captured op */
hc_op *hc_gmem_op(CUdeviceptr ptr, int alloc);       /* hc_mu held: a memory alloc (1) / free (0) op */
struct CUgraph_st *hc_graph_alloc(void);             /* unregistered, empty */
void hc_graph_free(struct CUgraph_st *g, hc_gdead *d);  /* hc_mu held: unregisters it and its nodes */
/* hc_mu held: a new node of g depending on deps[0..n) (checked: nodes of g, no repeats) */
CUresult hc_gnode_new(struct CUgraph_st *g, CUgraphNodeType type, const CUgraphNode *deps, size_t n,
                      struct CUgraphNode_st **out);

void hc_gnode_free(struct CUgraphNode_st *nd, hc_gdead *d);   /* hc_mu held; registered nodes only */
/* hc_mu held: a deep copy of g (ops shared, kernel parameters copied), registered if reg; NULL
 * when out of memory (what was built goes to d) */
struct CUgraph_st *hc_graph_clone(const struct CUgraph_st *g, int reg, hc_gdead *d);
const hc_op *hc_graph_replay_inner(const hc_op *op);   /* a graph replay's op: the node's op, else NULL */
CUresult hc_gbuild_kernel(const CUDA_KERNEL_NODE_PARAMS *kp, hc_op **out);   /* hc_mu not held */
/* CUDA_SUCCESS when every edge is a default one, else NOT_SUPPORTED (one line on stderr) */
CUresult hc_gedges_default(const CUgraphEdgeData *e, size_t n);
void hc_gop_discard(hc_op *op);                      /* hc_mu not held: an op never queued */

#endif /* HC_GRAPH_H */
