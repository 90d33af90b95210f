/* hcrt_graph.c — the runtime's CUDA graph calls on the driver's: graphs built node by node,
 * clones, node parameters, instantiation with parameters, exec updates, capture info and modes.
 * (Capture begin/end, cudaGraphLaunch and the plain instantiate/destroy calls are in
 * hcrt_stream.c and hcrt_mem.c.) The runtime's graph, node and exec handles are the driver's.
 * A kernel node names its kernel by the host stub nvcc registered: it becomes the CUfunction of
 * the current context as cudaLaunchKernel resolves it, and a small table maps it back for
 * cudaGraphKernelNodeGetParams. Every driver call goes through the driver's public symbols.
 * Threading: the table is guarded by its own mutex; everything else is the driver's.
 * Must not: hand the driver a runtime structure where the layouts differ (each is converted). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hcrt_internal.h"

/* the per-thread twins, declared by cuda.h only in a per-thread-default-stream build */
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);

#define ENTER() do { cudaError_t e_ = hcrt_enter(); if (e_ != cudaSuccess) return e_; } while (0)

/* ---- CUfunction -> host stub, for reading kernel nodes back ---- */
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { CUfunction f; const void *host; } *fn_map;
static size_t fn_n, fn_cap;

static void fn_remember(CUfunction f, const void *host)
{
    pthread_mutex_lock(&fn_lock);
    size_t i = 0;
    while (i < fn_n && fn_map[i].f != f)
        i++;
    if (i == fn_n && fn_n == fn_cap) {
        size_t ncap = fn_cap ? 2 * fn_cap : 16;
        void *n = realloc(fn_map, ncap * sizeof *fn_map);
        if (n) {
            fn_map = n;
            fn_cap = ncap;
        }
    }
    if (i < fn_cap) {
        fn_map[i].f = f;
        fn_map[i].host = host;
        if (i == fn_n)
            fn_n++;
    }
    pthread_mutex_unlock(&fn_lock);
}

static const void *fn_host(CUfunction f)
{
    const void *h = NULL;
    pthread_mutex_lock(&fn_lock);
    for (size_t i = 0; i < fn_n && !h; i++)
        if (fn_map[i].f == f)
            h = fn_map[i].host;
    pthread_mutex_unlock(&fn_lock);
    return h;
}

/* ---- conversions ---- */
static cudaError_t kernel_params(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *k)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    CUfunction f;
    cudaError_t e = hcrt_func_of(p->func, &f);
    if (e != cudaSuccess)
        return e;
    fn_remember(f, p->func);
    memset(k, 0, sizeof *k);
    k->func = f;
    k->gridDimX = p->gridDim.x;
    k->gridDimY = p->gridDim.y;
    k->gridDimZ = p->gridDim.z;
    k->blockDimX = p->blockDim.x;
    k->blockDimY = p->blockDim.y;
    k->blockDimZ = p->blockDim.z;
    k->sharedMemBytes = p->sharedMemBytes;
    k->kernelParams = p->kernelParams;
    k->extra = p->extra;
    return cudaSuccess;
}

/* cudaMemcpy3DParms -> CUDA_MEMCPY3D: hostcuda's pointers are one address space, so both sides
 * are unified addresses (or arrays); widths and x positions are bytes, or an array's elements when
 * an array takes part (as cudaMemcpy3D counts them) */
static cudaError_t copy_params(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *c)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    if ((unsigned)p->kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    memset(c, 0, sizeof *c);
    c->srcXInBytes = p->srcPos.x;
    c->srcY = p->srcPos.y;
    c->srcZ = p->srcPos.z;
    c->srcMemoryType = p->srcArray ? CU_MEMORYTYPE_ARRAY : CU_MEMORYTYPE_UNIFIED;
    c->srcDevice = (CUdeviceptr)(uintptr_t)p->srcPtr.ptr;
    c->srcArray = (CUarray)p->srcArray;
    c->srcPitch = p->srcPtr.pitch;
    c->srcHeight = p->srcPtr.ysize;
    c->dstXInBytes = p->dstPos.x;
    c->dstY = p->dstPos.y;
    c->dstZ = p->dstPos.z;
    c->dstMemoryType = p->dstArray ? CU_MEMORYTYPE_ARRAY : CU_MEMORYTYPE_UNIFIED;
    c->dstDevice = (CUdeviceptr)(uintptr_t)p->dstPtr.ptr;
    c->dstArray = (CUarray)p->dstArray;
    c->dstPitch = p->dstPtr.pitch;
    c->dstHeight = p->dstPtr.ysize;
    c->WidthInBytes = p->extent.width;
    c->Height = p->extent.height;
    c->Depth = p->extent.depth;
    if (p->srcArray || p->dstArray) {
        CUDA_ARRAY3D_DESCRIPTOR d;
        CUresult r = cuArray3DGetDescriptor(&d, (CUarray)(p->srcArray ? p->srcArray : p->dstArray));
        if (r != CUDA_SUCCESS)
            return hcrt_from_cu(r);
        size_t es = (d.Format == CU_AD_FORMAT_UNSIGNED_INT8 || d.Format == CU_AD_FORMAT_SIGNED_INT8 ? 1
                     : d.Format == CU_AD_FORMAT_UNSIGNED_INT16 || d.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                       d.Format == CU_AD_FORMAT_HALF ? 2 : 4) * d.NumChannels;
        c->WidthInBytes *= es;
        if (p->srcArray)
            c->srcXInBytes *= es;
        if (p->dstArray)
            c->dstXInBytes *= es;
    }
    return cudaSuccess;
}

static cudaError_t set_params(const struct cudaMemsetParams *p, CUDA_MEMSET_NODE_PARAMS *m)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    *m = (CUDA_MEMSET_NODE_PARAMS){(CUdeviceptr)(uintptr_t)p->dst, p->pitch, p->value, p->elementSize, p->width,
                                   p->height};
    return cudaSuccess;
}

/* ---- building graphs ---- */
HCRT_API cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags)
{
    ENTER();
    return HCRT_CU(cuGraphCreate((CUgraph *)g, flags));
}

HCRT_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                            size_t n, const struct cudaKernelNodeParams *p)
{
    ENTER();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(p, &k);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphAddKernelNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n, &k));
}

HCRT_API cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *p)
{
    ENTER();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(p, &k);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphKernelNodeSetParams((CUgraphNode)node, &k));
}

HCRT_API cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *p)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = HCRT_CU(cuGraphKernelNodeGetParams((CUgraphNode)node, &k));
    if (e != cudaSuccess)
        return e;
    p->func = (void *)fn_host(k.func);
    if (p->func == NULL)
        return hcrt_ret(cudaErrorInvalidDeviceFunction);   /* a kernel the runtime did not name */
    p->gridDim = (dim3){k.gridDimX, k.gridDimY, k.gridDimZ};
    p->blockDim = (dim3){k.blockDimX, k.blockDimY, k.blockDimZ};
    p->sharedMemBytes = k.sharedMemBytes;
    p->kernelParams = k.kernelParams;
    p->extra = k.extra;
    return cudaSuccess;
}

HCRT_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                            size_t n, const struct cudaMemcpy3DParms *p)
{
    ENTER();
    CUDA_MEMCPY3D c;
    cudaError_t e = copy_params(p, &c);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUcontext ctx = NULL;
    (void)cuCtxGetCurrent(&ctx);
    return HCRT_CU(cuGraphAddMemcpyNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n, &c, ctx));
}

HCRT_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                              size_t n, void *dst, const void *src, size_t count,
                                              enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
    p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
    p.extent = (struct cudaExtent){count, 1, 1};
    p.kind = kind;
    return cudaGraphAddMemcpyNode(node, g, deps, n, &p);
}

HCRT_API cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *p)
{
    ENTER();
    CUDA_MEMCPY3D c;
    cudaError_t e = copy_params(p, &c);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphMemcpyNodeSetParams((CUgraphNode)node, &c));
}

HCRT_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                            size_t n, const struct cudaMemsetParams *p)
{
    ENTER();
    CUDA_MEMSET_NODE_PARAMS m;
    cudaError_t e = set_params(p, &m);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    CUcontext ctx = NULL;
    (void)cuCtxGetCurrent(&ctx);
    return HCRT_CU(cuGraphAddMemsetNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n, &m, ctx));
}

HCRT_API cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *p)
{
    ENTER();
    CUDA_MEMSET_NODE_PARAMS m;
    cudaError_t e = set_params(p, &m);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphMemsetNodeSetParams((CUgraphNode)node, &m));
}

/* cudaHostNodeParams and CUDA_HOST_NODE_PARAMS have one layout (a function and its argument) */
HCRT_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          size_t n, const struct cudaHostNodeParams *p)
{
    ENTER();
    return HCRT_CU(cuGraphAddHostNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n,
                                      (const CUDA_HOST_NODE_PARAMS *)p));
}

HCRT_API cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *p)
{
    ENTER();
    return HCRT_CU(cuGraphHostNodeSetParams((CUgraphNode)node, (const CUDA_HOST_NODE_PARAMS *)p));
}

HCRT_API cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *p)
{
    ENTER();
    return HCRT_CU(cuGraphHostNodeGetParams((CUgraphNode)node, (CUDA_HOST_NODE_PARAMS *)p));
}

HCRT_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                           size_t n)
{
    ENTER();
    return HCRT_CU(cuGraphAddEmptyNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n));
}

HCRT_API cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                                size_t n, cudaGraph_t child)
{
    ENTER();
    return HCRT_CU(cuGraphAddChildGraphNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n,
                                            (CUgraph)child));
}

HCRT_API cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *g)
{
    ENTER();
    return HCRT_CU(cuGraphChildGraphNodeGetGraph((CUgraphNode)node, (CUgraph *)g));
}

/* the runtime's pool properties and allocation node parameters have the driver's layout up to
 * bytesize and dptr, which are copied field by field */
HCRT_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                              size_t n, struct cudaMemAllocNodeParams *p)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUDA_MEM_ALLOC_NODE_PARAMS a;
    memset(&a, 0, sizeof a);
    a.poolProps.allocType = (CUmemAllocationType)p->poolProps.allocType;
    a.poolProps.handleTypes = (CUmemAllocationHandleType)p->poolProps.handleTypes;
    a.poolProps.location.type = (CUmemLocationType)p->poolProps.location.type;
    a.poolProps.location.id = p->poolProps.location.id;
    a.accessDescs = (const CUmemAccessDesc *)p->accessDescs;
    a.accessDescCount = p->accessDescCount;
    a.bytesize = p->bytesize;
    cudaError_t e = HCRT_CU(cuGraphAddMemAllocNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n, &a));
    if (e == cudaSuccess)
        p->dptr = (void *)(uintptr_t)a.dptr;
    return e;
}

HCRT_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                             size_t n, void *dptr)
{
    ENTER();
    return HCRT_CU(cuGraphAddMemFreeNode((CUgraphNode *)node, (CUgraph)g, (const CUgraphNode *)deps, n,
                                         (CUdeviceptr)(uintptr_t)dptr));
}

HCRT_API cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
    ENTER();
    return HCRT_CU(cuGraphMemFreeNodeGetParams((CUgraphNode)node, (CUdeviceptr *)dptr_out));
}

/* cudaGraphAddNode: the kinds hostcuda builds; a conditional node reaches the driver, which
 * refuses it by name */
HCRT_API cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                      const cudaGraphEdgeData *edges, size_t n, struct cudaGraphNodeParams *p)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    const CUgraphNode *d = (const CUgraphNode *)deps;
    const CUgraphEdgeData *ed = (const CUgraphEdgeData *)edges;   /* one layout */
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = (CUgraphNodeType)p->type;
    cudaError_t e = cudaSuccess;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = {p->kernel.func, p->kernel.gridDim, p->kernel.blockDim,
                                         p->kernel.sharedMemBytes, p->kernel.kernelParams, p->kernel.extra};
        CUDA_KERNEL_NODE_PARAMS ck;
        if ((e = kernel_params(&k, &ck)) == cudaSuccess)
            memcpy(&np.kernel, &ck, sizeof ck);
        break;
    }
    case cudaGraphNodeTypeMemcpy: e = copy_params(&p->memcpy.copyParams, &np.memcpy.copyParams); break;
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = {p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                                     p->memset.width, p->memset.height};
        CUDA_MEMSET_NODE_PARAMS cm;
        if ((e = set_params(&m, &cm)) == cudaSuccess) {
            np.memset.dst = cm.dst;
            np.memset.pitch = cm.pitch;
            np.memset.value = cm.value;
            np.memset.elementSize = cm.elementSize;
            np.memset.width = cm.width;
            np.memset.height = cm.height;
        }
        break;
    }
    case cudaGraphNodeTypeHost:
        np.host.fn = p->host.fn;
        np.host.userData = p->host.userData;
        break;
    case cudaGraphNodeTypeGraph: np.graph.graph = (CUgraph)p->graph.graph; break;
    case cudaGraphNodeTypeMemFree: np.free.dptr = (CUdeviceptr)(uintptr_t)p->free.dptr; break;
    case cudaGraphNodeTypeEmpty: break;
    default: break;   /* the driver names what it does not build */
    }
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphAddNode((CUgraphNode *)node, (CUgraph)g, d, ed, n, &np));
}

HCRT_API cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                              const cudaGraphEdgeData *edges, size_t n)
{
    ENTER();
    return HCRT_CU(cuGraphAddDependencies((CUgraph)g, (const CUgraphNode *)from, (const CUgraphNode *)to,
                                          (const CUgraphEdgeData *)edges, n));
}

HCRT_API cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n)
{
    ENTER();
    return HCRT_CU(cuGraphGetNodes((CUgraph)g, (CUgraphNode *)nodes, n));
}

HCRT_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n)
{
    ENTER();
    return HCRT_CU(cuGraphGetRootNodes((CUgraph)g, (CUgraphNode *)nodes, n));
}

HCRT_API cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps,
                                                  cudaGraphEdgeData *edges, size_t *n)
{
    ENTER();
    return HCRT_CU(cuGraphNodeGetDependencies((CUgraphNode)node, (CUgraphNode *)deps, (CUgraphEdgeData *)edges, n));
}

HCRT_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *type)
{
    ENTER();
    return HCRT_CU(cuGraphNodeGetType((CUgraphNode)node, (CUgraphNodeType *)type));
}

HCRT_API cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t g)
{
    ENTER();
    return HCRT_CU(cuGraphClone((CUgraph *)clone, (CUgraph)g));
}

HCRT_API cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *node, cudaGraphNode_t orig, cudaGraph_t clone)
{
    ENTER();
    return HCRT_CU(cuGraphNodeFindInClone((CUgraphNode *)node, (CUgraphNode)orig, (CUgraph)clone));
}

HCRT_API cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    ENTER();
    return HCRT_CU(cuGraphDestroyNode((CUgraphNode)node));
}

/* ---- instantiated graphs ---- */
HCRT_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t node,
                                                      const struct cudaKernelNodeParams *p)
{
    ENTER();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(p, &k);
    if (e != cudaSuccess)
        return hcrt_ret(e);
    return HCRT_CU(cuGraphExecKernelNodeSetParams((CUgraphExec)x, (CUgraphNode)node, &k));
}

/* cudaGraphExecUpdateResultInfo and CUgraphExecUpdateResultInfo: one layout, results numbered alike */
HCRT_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
    ENTER();
    return HCRT_CU(cuGraphExecUpdate((CUgraphExec)x, (CUgraph)g, (CUgraphExecUpdateResultInfo *)info));
}

HCRT_API cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t x, unsigned long long *flags)
{
    ENTER();
    return HCRT_CU(cuGraphExecGetFlags((CUgraphExec)x, (cuuint64_t *)flags));
}

static cudaError_t instantiate_params(cudaGraphExec_t *x, cudaGraph_t g, cudaGraphInstantiateParams *p, int pt)
{
    ENTER();
    if (p == NULL)
        return hcrt_ret(cudaErrorInvalidValue);
    CUDA_GRAPH_INSTANTIATE_PARAMS c = {.flags = p->flags, .hUploadStream = (CUstream)p->uploadStream};
    CUresult r = pt ? cuGraphInstantiateWithParams_ptsz((CUgraphExec *)x, (CUgraph)g, &c)
                    : cuGraphInstantiateWithParams((CUgraphExec *)x, (CUgraph)g, &c);
    p->errNode_out = (cudaGraphNode_t)c.hErrNode_out;
    p->result_out = (enum cudaGraphInstantiateResult)c.result_out;
    return HCRT_CU(r);
}

HCRT_API cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *x, cudaGraph_t g, cudaGraphInstantiateParams *p)
{
    return instantiate_params(x, g, p, 0);
}

HCRT_API cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *x, cudaGraph_t g,
                                                         cudaGraphInstantiateParams *p)
{
    return instantiate_params(x, g, p, 1);
}

HCRT_API cudaError_t cudaGraphUpload(cudaGraphExec_t x, cudaStream_t s)
{
    ENTER();
    return HCRT_CU(cuGraphUpload((CUgraphExec)x, (CUstream)s));
}

HCRT_API cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t x, cudaStream_t s)
{
    ENTER();
    return HCRT_CU(cuGraphUpload_ptsz((CUgraphExec)x, (CUstream)s));
}

/* ---- capture ---- */
HCRT_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                              unsigned long long *id, cudaGraph_t *g, const cudaGraphNode_t **deps,
                                              const cudaGraphEdgeData **edges, size_t *n)
{
    ENTER();
    return HCRT_CU(cuStreamGetCaptureInfo_v3((CUstream)s, (CUstreamCaptureStatus *)st, (cuuint64_t *)id, (CUgraph *)g,
                                             (const CUgraphNode **)deps, (const CUgraphEdgeData **)edges, n));
}

HCRT_API cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                                   unsigned long long *id, cudaGraph_t *g,
                                                   const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                   size_t *n)
{
    ENTER();
    return HCRT_CU(cuStreamGetCaptureInfo_v3_ptsz((CUstream)s, (CUstreamCaptureStatus *)st, (cuuint64_t *)id,
                                                  (CUgraph *)g, (const CUgraphNode **)deps,
                                                  (const CUgraphEdgeData **)edges, n));
}

HCRT_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    ENTER();
    return HCRT_CU(cuThreadExchangeStreamCaptureMode((CUstreamCaptureMode *)mode));
}
