/* hc_gnode.c — hostcuda: graph nodes built by hand. The ops of kernel, memcpy (CUDA_MEMCPY3D
 * between host, device and unified memory), memset (2-D), host and memory alloc/free nodes, the
 * cuGraphAdd*Node calls and cuGraphAddNode for those kinds, and node parameters (get/set).
 *
 * A kernel op is built by launching on a private capturing stream (hc_launch_on), so it is
 * exactly the op cuLaunchKernel would queue; copies and memsets resolve their whole span when the
 * node is made. Memory nodes: an alloc node's block is allocated when the node is made and held
 * for the graph (hc_mem_graph_hold): a free only marks it freed, the alloc node's replay makes it
 * live again at the same address. Threading: node lists under hc_mu; ops are built without it
 * (they take it themselves) and finalised outside it.
 * Must not: change an op after it is built.
 */
#include "hc_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- building ops */
/* A kernel op, exactly as cuLaunchKernel builds it: launched on a private capturing stream.
 * hc_mu not held. */
CUresult hc_gbuild_kernel(const CUDA_KERNEL_NODE_PARAMS *kp, hc_op **out)
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
static CUresult copy_side(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t x, size_t y,
                          size_t z, size_t *pitch, size_t *height, const CUDA_MEMCPY3D *c, unsigned char **out)
{
    uintptr_t base;
    switch (t) {
    case CU_MEMORYTYPE_HOST: base = (uintptr_t)host; break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = (uintptr_t)dev; break;
    case CU_MEMORYTYPE_ARRAY:   /* the array's own buffer, pitch and rows (hc_array.c) */
        return hc_array_span(arr, x, y, z, c->WidthInBytes, c->Height, c->Depth, (char **)out, pitch, height);
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
    CUresult rc = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcXInBytes, c->srcY,
                            c->srcZ, &p->spitch, &p->sheight, c, &s);
    if (rc == CUDA_SUCCESS)
        rc = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstXInBytes, c->dstY, c->dstZ,
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
    case CU_GRAPH_NODE_TYPE_KERNEL: return hc_gbuild_kernel(params, op);
    case CU_GRAPH_NODE_TYPE_MEMCPY: return build_copy(params, op);
    case CU_GRAPH_NODE_TYPE_MEMSET: return build_set(params, op);
    case CU_GRAPH_NODE_TYPE_HOST: return build_host(params, op);
    default: return CUDA_SUCCESS;
    }
}

void hc_gop_discard(hc_op *op) /* hc_mu not held: an op never queued */
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
            hc_gnode_free(nd, &d);
        }
    }
    pthread_mutex_unlock(&hc_mu);
    hc_gdead_free(&d);
    hc_gop_discard(op);
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
    else if (!(c = hc_graph_clone(childGraph, 1, &d)))
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
            hc_gnode_free(nd, &d);
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
        hc_gnode_free(nd, &d);
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
    hc_gop_discard(op);
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

CUresult hc_gedges_default(const CUgraphEdgeData *e, size_t n)
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
    CUresult rc = hc_gedges_default(edges, n);
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


/* the node type of an op a capture records */
CUgraphNodeType hc_gop_type(const hc_op *op)
{
    const hc_op *inner = hc_graph_replay_inner(op);
    if (inner)
        return hc_gop_type(inner);
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

