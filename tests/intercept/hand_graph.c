/* hand_graph.c — graph_train's step (ash_itest_grad then ash_itest_sgd, the step argument fixed at
 * 0), with the graph built BY HAND through the Driver API instead of stream capture:
 *   --build none         eager launches, each step (the control);
 *   --build add          cuGraphAddKernelNode_v2 (cuda.h's cuGraphAddKernelNode);
 *   --build add_v1       the second node through the legacy export cuGraphAddKernelNode
 *                        (CUDA_KERNEL_NODE_PARAMS_v1), the first through _v2;
 *   --build addnode      cuGraphAddNode_v2 (cuda.h's cuGraphAddNode) of type KERNEL;
 *   --build addnode_v1   the 12.2 export cuGraphAddNode (no edge data);
 *   --build kset         the nodes added with ash_itest_grad, the last one then set to its real
 *                        kernel by cuGraphKernelNodeSetParams_v2;
 *   --build kset_v1      the same through the legacy export cuGraphKernelNodeSetParams;
 *   --build nodeset      the same through cuGraphNodeSetParams;
 *   --build execset      the graph of --build kset before its set, instantiated, and the exec's
 *                        node set by cuGraphExecKernelNodeSetParams_v2;
 *   --build execset_v1   the same through the legacy export cuGraphExecKernelNodeSetParams;
 *   --build execnodeset  the same through cuGraphExecNodeSetParams.
 * --graph step: both kernels are graph nodes (grad -> sgd), the graph launched once per step;
 * --graph grad: only ash_itest_grad is a node, ash_itest_sgd is launched directly after each
 *               cuGraphLaunch.
 * --warmup W: W eager steps first, before the graph is built.
 * --gpa: the graph entry points are resolved with cuGetProcAddress_v2 (CUDA 13.0, default flags)
 *        instead of being called by their linked names.
 * Prints `params HASH ...` (itrain.h) and `graph launches N`; the tests compare those lines. The
 * _v1 and *nodeset builds use exports hostcuda lacks: only the shim's stop can be tested there.
 */
#define ITRAIN_PROG "hand_graph"
#include "itrain.h"

#include <cudaTypedefs.h>

#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphAddNode
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                      size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult CUDAAPI cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t ndeps,
                                CUgraphNodeParams *p);

static struct {
    PFN_cuGraphAddKernelNode_v12000 add;
    PFN_cuGraphAddNode_v12030 addnode;
    PFN_cuGraphKernelNodeSetParams_v12000 kset;
    PFN_cuGraphExecKernelNodeSetParams_v12000 execset;
} G;

static void resolve(int gpa)
{
    G.add = cuGraphAddKernelNode_v2;
    G.addnode = cuGraphAddNode_v2;
    G.kset = cuGraphKernelNodeSetParams_v2;
    G.execset = cuGraphExecKernelNodeSetParams_v2;
    if (!gpa)
        return;
    CUdriverProcAddressQueryResult q;
    CK(cuGetProcAddress_v2("cuGraphAddKernelNode", (void **)&G.add, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CK(cuGetProcAddress_v2("cuGraphAddNode", (void **)&G.addnode, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CK(cuGetProcAddress_v2("cuGraphKernelNodeSetParams", (void **)&G.kset, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CK(cuGetProcAddress_v2("cuGraphExecKernelNodeSetParams", (void **)&G.execset, 13000,
                           CU_GET_PROC_ADDRESS_DEFAULT, &q));
}

static CUDA_KERNEL_NODE_PARAMS kparams(CUfunction f, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = ITRAIN_BLOCKS;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = ITRAIN_THREADS;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
}

static CUDA_KERNEL_NODE_PARAMS_v1 v1_of(const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUDA_KERNEL_NODE_PARAMS_v1 o = {p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                                    p->blockDimZ, p->sharedMemBytes, p->kernelParams, p->extra};
    return o;
}

static CUgraphNodeParams gparams(const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUgraphNodeParams n;
    memset(&n, 0, sizeof n);
    n.type = CU_GRAPH_NODE_TYPE_KERNEL;
    memcpy(&n.kernel, p, sizeof *p); /* _v2 and _v3: one layout */
    return n;
}

/* One kernel node after DEP (NULL: a root), added the way BUILD says. */
static CUgraphNode add_kernel(const char *build, CUgraph g, CUgraphNode dep, const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUgraphNode n = NULL;
    size_t nd = dep != NULL;
    if (!strcmp(build, "add_v1")) {
        CUDA_KERNEL_NODE_PARAMS_v1 o = v1_of(p);
        CK(cuGraphAddKernelNode(&n, g, &dep, nd, &o));
    } else if (!strcmp(build, "addnode")) {
        CUgraphNodeParams np = gparams(p);
        CK(G.addnode(&n, g, &dep, NULL, nd, &np));
    } else if (!strcmp(build, "addnode_v1")) {
        CUgraphNodeParams np = gparams(p);
        CK(cuGraphAddNode(&n, g, &dep, nd, &np));
    } else {
        CK(G.add(&n, g, &dep, nd, p));
    }
    return n;
}

/* Node N (added with another kernel) set to P the way BUILD says (a *set build). */
static void set_kernel(const char *build, CUgraphNode n, CUgraphExec x, const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUDA_KERNEL_NODE_PARAMS_v1 o = v1_of(p);
    CUgraphNodeParams np = gparams(p);
    if (!strcmp(build, "kset"))
        CK(G.kset(n, p));
    else if (!strcmp(build, "kset_v1"))
        CK(cuGraphKernelNodeSetParams(n, &o));
    else if (!strcmp(build, "nodeset"))
        CK(cuGraphNodeSetParams(n, &np));
    else if (!strcmp(build, "execset"))
        CK(G.execset(x, n, p));
    else if (!strcmp(build, "execset_v1"))
        CK(cuGraphExecKernelNodeSetParams(x, n, &o));
    else if (!strcmp(build, "execnodeset"))
        CK(cuGraphExecNodeSetParams(x, n, &np));
}

int main(int argc, char **argv)
{
    const char *build = "none", *graph = "step";
    int steps = 5, shard = 0, gpa = 0, warmup = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--build") && i + 1 < argc)
            build = argv[++i];
        else if (!strcmp(argv[i], "--graph") && i + 1 < argc)
            graph = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc)
            shard = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gpa"))
            gpa = 1;
        else {
            fprintf(stderr, "usage: hand_graph [--build MODE] [--graph step|grad] [--gpa] [--steps N] [--warmup W] [--shard R]\n");
            return 2;
        }
    }
    static const char *const builds[] = {"none", "add", "add_v1", "addnode", "addnode_v1", "kset", "kset_v1",
                                         "nodeset", "execset", "execset_v1", "execnodeset"};
    int known = 0;
    for (size_t i = 0; i < sizeof builds / sizeof *builds; i++)
        known |= !strcmp(build, builds[i]);
    int g_step = !strcmp(graph, "step");
    if (!known || (!g_step && strcmp(graph, "grad"))) {
        fprintf(stderr, "hand_graph: --build %s --graph %s: unknown (see the header of hand_graph.c)\n", build, graph);
        return 2;
    }
    int eager = !strcmp(build, "none"), is_set = strstr(build, "set") != NULL, is_exec = !strncmp(build, "exec", 4);
    itrain_t t;
    itrain_open(&t);
    resolve(gpa);

    CUdeviceptr w, g;
    CK(cuMemAlloc(&w, ITRAIN_N * sizeof(float)));
    CK(cuMemAlloc(&g, ITRAIN_N * sizeof(float)));
    itrain_init_params(w);
    int n = ITRAIN_N, step0 = 0;
    float lr = 0.125f;
    void *ga[] = {&g, &w, &n, &shard, &step0};
    void *ua[] = {&w, &g, &n, &lr};
    CUDA_KERNEL_NODE_PARAMS gp = kparams(t.grad, ga), up = kparams(t.sgd, ua);

    for (int i = 0; i < warmup; i++) {
        CK(itrain_launch(&t, t.grad, ga));
        CK(itrain_launch(&t, t.sgd, ua));
    }
    CUgraph gr = NULL;
    CUgraphExec gx = NULL;
    if (!eager) {
        CK(cuGraphCreate(&gr, 0));
        /* add_v1: only the second node through the legacy export (hostcuda lacks it) */
        CUgraphNode a = add_kernel(strcmp(build, "add_v1") ? build : "add", gr, NULL, &gp), b = NULL;
        if (g_step) /* a *set build adds it as the gradient kernel first (recomputes g: harmless) */
            b = add_kernel(build, gr, a, is_set ? &gp : &up);
        if (g_step && is_set && !is_exec)
            set_kernel(build, b, NULL, &up);
        CK(cuGraphInstantiate(&gx, gr, 0));
        if (g_step && is_exec)
            set_kernel(build, b, gx, &up);
    }
    int launches = 0;
    for (int step = 0; step < steps; step++) {
        if (gx != NULL) {
            CK(cuGraphLaunch(gx, t.s));
            launches++;
        } else {
            CK(itrain_launch(&t, t.grad, ga));
        }
        if (!g_step || eager)
            CK(itrain_launch(&t, t.sgd, ua));
    }
    itrain_print_params(&t, w);
    printf("graph launches %d\n", launches);
    if (gx != NULL) {
        CK(cuGraphExecDestroy(gx));
        CK(cuGraphDestroy(gr));
    }
    CK(cuMemFree(w));
    CK(cuMemFree(g));
    return 0;
}
