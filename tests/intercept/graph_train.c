/* graph_train.c — vmm_train's step (ash_itest_grad then ash_itest_sgd on cuMemAlloc buffers, the
 * step argument fixed at 0 so a replayed graph computes what eager launches compute), run
 *   --graph none: eagerly, each step;
 *   --graph step: captured once (cuStreamBeginCapture_v2 .. cuStreamEndCapture) with both
 *                 launches, instantiated, then cuGraphLaunch'ed once per step;
 *   --graph grad: only ash_itest_grad captured and replayed; ash_itest_sgd launched eagerly.
 * --warmup W: W eager steps first (before any capture). Prints `params HASH ...` as vmm_train
 * does, and `graph launches N`. --shard R: the rank's data. Used by test_graph_capture.sh with
 * vmm_policy.yaml (a sync point before ash_itest_sgd) and graph_params_policy.yaml (also a
 * parameters broadcast, once, before ash_itest_grad).
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult ck__r = (call);                                                           \
        if (ck__r != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, "graph_train: %s -> CUresult %d (line %d)\n", #call, (int)ck__r, __LINE__); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "graph_train: cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    b[n] = '\0';
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    const char *graph = "none";
    int steps = 5, shard = 0, warmup = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--graph") && i + 1 < argc)
            graph = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc)
            shard = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: graph_train [--graph none|step|grad] [--steps N] [--warmup W] [--shard R]\n");
            return 2;
        }
    }
    int g_step = !strcmp(graph, "step"), g_grad = !strcmp(graph, "grad");
    if (!g_step && !g_grad && strcmp(graph, "none")) {
        fprintf(stderr, "graph_train: --graph %s: want none, step or grad\n", graph);
        return 2;
    }
    const char *ptx_path = getenv("ITEST_PTX");
    if (ptx_path == NULL) {
        fprintf(stderr, "graph_train: ITEST_PTX (kernels.ptx) is not set\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fgrad, fsgd;
    CUstream s;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    char *ptx = read_file(ptx_path);
    CK(cuModuleLoadData(&mod, ptx));
    free(ptx);
    CK(cuModuleGetFunction(&fgrad, mod, "ash_itest_grad"));
    CK(cuModuleGetFunction(&fsgd, mod, "ash_itest_sgd"));
    CK(cuStreamCreate(&s, 0));

    CUdeviceptr w, g;
    CK(cuMemAlloc(&w, N * sizeof(float)));
    CK(cuMemAlloc(&g, N * sizeof(float)));
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    CK(cuMemcpyHtoD(w, host, sizeof host));

    int n = N, step0 = 0;
    float lr = 0.125f;
    unsigned blocks = (N + 127) / 128;
    void *ga[] = {&g, &w, &n, &shard, &step0};
    void *ua[] = {&w, &g, &n, &lr};
    CUgraph gr = NULL;
    CUgraphExec gx = NULL;
    for (int i = 0; i < warmup; i++) {
        CK(cuLaunchKernel(fgrad, blocks, 1, 1, 128, 1, 1, 0, s, ga, NULL));
        CK(cuLaunchKernel(fsgd, blocks, 1, 1, 128, 1, 1, 0, s, ua, NULL));
    }
    if (g_step || g_grad) {
        CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
        CK(cuStreamIsCapturing(s, &st));
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            fprintf(stderr, "graph_train: the stream is not capturing after cuStreamBeginCapture\n");
            return 1;
        }
        CK(cuLaunchKernel(fgrad, blocks, 1, 1, 128, 1, 1, 0, s, ga, NULL));
        if (g_step)
            CK(cuLaunchKernel(fsgd, blocks, 1, 1, 128, 1, 1, 0, s, ua, NULL));
        CK(cuStreamEndCapture(s, &gr));
        CK(cuGraphInstantiate(&gx, gr, 0));
    }
    int launches = 0;
    for (int step = 0; step < steps; step++) {
        if (gx != NULL) {
            CK(cuGraphLaunch(gx, s));
            launches++;
        } else {
            CK(cuLaunchKernel(fgrad, blocks, 1, 1, 128, 1, 1, 0, s, ga, NULL));
        }
        if (!g_step)
            CK(cuLaunchKernel(fsgd, blocks, 1, 1, 128, 1, 1, 0, s, ua, NULL));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(host, w, sizeof host));
    uint64_t hash = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)host;
    for (size_t i = 0; i < sizeof host; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
    printf("params %016llx w[0]=%a w[1]=%a w[999]=%a\n", (unsigned long long)hash, host[0], host[1], host[N - 1]);
    printf("graph launches %d\n", launches);
    if (gx != NULL) {
        CK(cuGraphExecDestroy(gx));
        CK(cuGraphDestroy(gr));
    }
    CK(cuMemFree(w));
    CK(cuMemFree(g));
    return 0;
}
