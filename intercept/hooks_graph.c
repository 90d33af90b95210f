/* hooks_graph.c — the calls that put a kernel into a hand-built CUDA graph or an instantiated one:
 * cuGraphAddKernelNode[_v2], cuGraphAddNode[_v2] (a KERNEL node), cuGraphKernelNodeSetParams[_v2],
 * cuGraphNodeSetParams, cuGraphExecKernelNodeSetParams[_v2], cuGraphExecNodeSetParams.
 *
 * A graph runs its kernels at cuGraphLaunch without the launch hooks, so a sync point's kernel in
 * one would run without its collective (as a captured one would: capture.c). Each hook looks at
 * the node's kernel (func; kern when func is NULL) BEFORE the real call, learned as a launch
 * learns it (kernels.c): no rule -> the real call; rules -> the engine names the one the graph
 * would skip (ash_sync_graph_rule) and the job stops at this call, exit 6. Every kernel in a
 * graph came in through one of these calls (clones, child graphs and cuGraphExecUpdate copy such
 * nodes; a captured launch met the capture guard), so cuGraphLaunch is not hooked: a replay costs
 * nothing. Threading: any thread (the kernel cache's own lock; the engine locks its state).
 * Must not: change the arguments or the CUresult; stop for a kernel that matched no rule.
 */
#include "ash_capture.h"
#include "ash_hook.h"
#include "ash_kernels.h"

#include <stddef.h>

/* The node's kernel F (or KERN when F is NULL), about to go into a graph through CALL (after
 * ash_hook_init: the macros below, which every hook starts with). */
static void ash_graph_node(const void *f, const void *kern, void **params, void **extra, const char *call)
{
    const void *h = f != NULL ? f : kern;
    if (h == NULL)
        return; /* no kernel: the driver refuses the call */
    ash_kentry_t *k = ash_kernel_lookup(h);
    if (k == NULL || !k->learned)
        k = ash_kernel_learn(h);
    if (k == NULL || k->info.rules == NULL)
        return;
    const ash_policy_rule_t *r = ash_sync_graph_rule(&k->info, params, extra);
    if (r != NULL)
        ash_fatal(ASH_EXIT_CAPTURE, "%s",
                  ash_capture_graph_message(&k->info, r, ash_policy_source(ash_sync_policy()), call));
}

/* The hooks' first statement: init (the real slots), then the node's kernel, if any. */
#define ASH_GRAPH_KP(p, call)                                                              \
    do {                                                                                   \
        ash_hook_init();                                                                   \
        if ((p) != NULL)                                                                   \
            ash_graph_node((p)->func, NULL, (p)->kernelParams, (p)->extra, (call));        \
    } while (0)
#define ASH_GRAPH_KP2(p, call)                                                             \
    do {                                                                                   \
        ash_hook_init();                                                                   \
        if ((p) != NULL)                                                                   \
            ash_graph_node((p)->func, (p)->kern, (p)->kernelParams, (p)->extra, (call));   \
    } while (0)
#define ASH_GRAPH_NP(p, call)                                                              \
    do {                                                                                   \
        ash_hook_init();                                                                   \
        if ((p) != NULL && (p)->type == CU_GRAPH_NODE_TYPE_KERNEL)                         \
            ASH_GRAPH_KP2(&(p)->kernel, (call));                                           \
    } while (0)

ASH_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                 const CUgraphNode *dependencies, size_t numDependencies,
                                                 const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    ASH_GRAPH_KP(nodeParams, "cuGraphAddKernelNode");
    ASH_CALL_REAL(cuGraphAddKernelNode, (phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                    const CUgraphNode *dependencies, size_t numDependencies,
                                                    const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ASH_GRAPH_KP2(nodeParams, "cuGraphAddKernelNode_v2");
    ASH_CALL_REAL(cuGraphAddKernelNode_v2, (phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                           size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    ASH_GRAPH_NP(nodeParams, "cuGraphAddNode");
    ASH_CALL_REAL(cuGraphAddNode, (phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                              const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
                                              size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    ASH_GRAPH_NP(nodeParams, "cuGraphAddNode_v2");
    ASH_CALL_REAL(cuGraphAddNode_v2, (phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    ASH_GRAPH_KP(nodeParams, "cuGraphKernelNodeSetParams");
    ASH_CALL_REAL(cuGraphKernelNodeSetParams, (hNode, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ASH_GRAPH_KP2(nodeParams, "cuGraphKernelNodeSetParams_v2");
    ASH_CALL_REAL(cuGraphKernelNodeSetParams_v2, (hNode, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    ASH_GRAPH_NP(nodeParams, "cuGraphNodeSetParams");
    ASH_CALL_REAL(cuGraphNodeSetParams, (hNode, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                           const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    ASH_GRAPH_KP(nodeParams, "cuGraphExecKernelNodeSetParams");
    ASH_CALL_REAL(cuGraphExecKernelNodeSetParams, (hGraphExec, hNode, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                              const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    ASH_GRAPH_KP2(nodeParams, "cuGraphExecKernelNodeSetParams_v2");
    ASH_CALL_REAL(cuGraphExecKernelNodeSetParams_v2, (hGraphExec, hNode, nodeParams));
}

ASH_EXPORT CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     CUgraphNodeParams *nodeParams)
{
    ASH_GRAPH_NP(nodeParams, "cuGraphExecNodeSetParams");
    ASH_CALL_REAL(cuGraphExecNodeSetParams, (hGraphExec, hNode, nodeParams));
}
