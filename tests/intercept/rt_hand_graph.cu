// rt_hand_graph.cu — hand_graph.c's step through the CUDA runtime, an unmodified nvcc -cudart shared
// program (run on hostcudart + hostcuda): rt_grad (a gradient that depends on the shard) then
// rt_sgd (the update a policy's sync point sits before), on cudaMalloc'ed buffers.
//   --build none     both kernels launched with <<<...>>> each step (the control);
//   --build add      a graph built by cudaGraphAddKernelNode;
//   --build addnode  the same with cudaGraphAddNode (cudaGraphNodeTypeKernel);
//   --build kset     the second node added as rt_grad, then set to rt_sgd by cudaGraphKernelNodeSetParams;
//   --build execset  the graph of kset before its set, instantiated, the exec's node set by
//                    cudaGraphExecKernelNodeSetParams.
// --graph step: both kernels are nodes; --graph grad: only rt_grad, rt_sgd launched directly
// after each cudaGraphLaunch. --shard R: the rank's data. Prints `params HASH w[0]=...` (FNV-1a
// 64 of the final parameters) and `graph launches N`; any runtime error prints the call, exit 1.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define THREADS 128
#define BLOCKS ((N + THREADS - 1) / THREADS)

#define OK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t ok__e = (call);                                                                \
        if (ok__e != cudaSuccess) {                                                                \
            fprintf(stderr, "rt_hand_graph: %s -> %s (line %d)\n", #call, cudaGetErrorName(ok__e), __LINE__); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

extern "C" __global__ void rt_grad(float *g, const float *w, int n, int shard)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        g[i] = 0.25f * w[i] + 0.01f * (float)((i * 7 + shard * 13) % 11) - 0.05f;
}

extern "C" __global__ void rt_sgd(float *w, const float *g, int n, float lr)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        w[i] -= lr * g[i];
}

static cudaKernelNodeParams kparams(void *fn, void **args)
{
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = fn;
    p.gridDim = dim3(BLOCKS);
    p.blockDim = dim3(THREADS);
    p.kernelParams = args;
    return p;
}

static cudaGraphNode_t add(const char *build, cudaGraph_t g, cudaGraphNode_t dep, const cudaKernelNodeParams *p)
{
    cudaGraphNode_t n = NULL;
    size_t nd = dep != NULL;
    if (!strcmp(build, "addnode")) {
        cudaGraphNodeParams np = {}; // a union with members that have constructors: value-initialised
        np.type = cudaGraphNodeTypeKernel;
        np.kernel.func = p->func;
        np.kernel.gridDim = p->gridDim;
        np.kernel.blockDim = p->blockDim;
        np.kernel.kernelParams = p->kernelParams;
        OK(cudaGraphAddNode(&n, g, &dep, NULL, nd, &np));
    } else {
        OK(cudaGraphAddKernelNode(&n, g, &dep, nd, p));
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *build = "none", *graph = "step";
    int steps = 5, shard = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--build") && i + 1 < argc)
            build = argv[++i];
        else if (!strcmp(argv[i], "--graph") && i + 1 < argc)
            graph = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc)
            shard = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: rt_hand_graph [--build none|add|addnode|kset|execset] [--graph step|grad] "
                            "[--steps N] [--shard R]\n");
            return 2;
        }
    }
    int eager = !strcmp(build, "none"), kset = !strcmp(build, "kset"), execset = !strcmp(build, "execset");
    int g_step = !strcmp(graph, "step");
    if ((!eager && !kset && !execset && strcmp(build, "add") && strcmp(build, "addnode")) ||
        (!g_step && strcmp(graph, "grad"))) {
        fprintf(stderr, "rt_hand_graph: --build %s --graph %s: unknown\n", build, graph);
        return 2;
    }
    float *w, *g;
    OK(cudaMalloc(&w, N * sizeof(float)));
    OK(cudaMalloc(&g, N * sizeof(float)));
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    OK(cudaMemcpy(w, host, sizeof host, cudaMemcpyHostToDevice));
    cudaStream_t s;
    OK(cudaStreamCreate(&s));

    int n = N;
    float lr = 0.125f;
    void *ga[] = {&g, &w, &n, &shard};
    void *ua[] = {&w, &g, &n, &lr};
    cudaKernelNodeParams gp = kparams((void *)rt_grad, ga), up = kparams((void *)rt_sgd, ua);
    cudaGraph_t gr = NULL;
    cudaGraphExec_t gx = NULL;
    if (!eager) {
        OK(cudaGraphCreate(&gr, 0));
        cudaGraphNode_t a = add(build, gr, NULL, &gp), b = NULL;
        if (g_step)
            b = add(build, gr, a, (kset || execset) ? &gp : &up);
        if (g_step && kset)
            OK(cudaGraphKernelNodeSetParams(b, &up));
        OK(cudaGraphInstantiate(&gx, gr, 0));
        if (g_step && execset)
            OK(cudaGraphExecKernelNodeSetParams(gx, b, &up));
    }
    int launches = 0;
    for (int step = 0; step < steps; step++) {
        if (gx != NULL) {
            OK(cudaGraphLaunch(gx, s));
            launches++;
        } else {
            rt_grad<<<BLOCKS, THREADS, 0, s>>>(g, w, n, shard);
            OK(cudaGetLastError());
        }
        if (!g_step || eager) {
            rt_sgd<<<BLOCKS, THREADS, 0, s>>>(w, g, n, lr);
            OK(cudaGetLastError());
        }
    }
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpy(host, w, sizeof host, cudaMemcpyDeviceToHost));
    uint64_t hash = 1469598103934665603ull;
    const unsigned char *bytes = (const unsigned char *)host;
    for (size_t i = 0; i < sizeof host; i++)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    printf("params %016llx w[0]=%a w[1]=%a w[999]=%a\n", (unsigned long long)hash, host[0], host[1], host[N - 1]);
    printf("graph launches %d\n", launches);
    if (gx != NULL) {
        OK(cudaGraphExecDestroy(gx));
        OK(cudaGraphDestroy(gr));
    }
    OK(cudaFree(w));
    OK(cudaFree(g));
    return 0;
}
