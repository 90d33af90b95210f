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
#define ITRAIN_PROG "graph_train"
#include "itrain.h"

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
    itrain_t t;
    itrain_open(&t);

    CUdeviceptr w, g;
    CK(cuMemAlloc(&w, ITRAIN_N * sizeof(float)));
    CK(cuMemAlloc(&g, ITRAIN_N * sizeof(float)));
    itrain_init_params(w);

    int n = ITRAIN_N, step0 = 0;
    float lr = 0.125f;
    void *ga[] = {&g, &w, &n, &shard, &step0};
    void *ua[] = {&w, &g, &n, &lr};
    CUgraph gr = NULL;
    CUgraphExec gx = NULL;
    for (int i = 0; i < warmup; i++) {
        CK(itrain_launch(&t, t.grad, ga));
        CK(itrain_launch(&t, t.sgd, ua));
    }
    if (g_step || g_grad) {
        CK(cuStreamBeginCapture(t.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
        CK(cuStreamIsCapturing(t.s, &st));
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            fprintf(stderr, "graph_train: the stream is not capturing after cuStreamBeginCapture\n");
            return 1;
        }
        CK(itrain_launch(&t, t.grad, ga));
        if (g_step)
            CK(itrain_launch(&t, t.sgd, ua));
        CK(cuStreamEndCapture(t.s, &gr));
        CK(cuGraphInstantiate(&gx, gr, 0));
    }
    int launches = 0;
    for (int step = 0; step < steps; step++) {
        if (gx != NULL) {
            CK(cuGraphLaunch(gx, t.s));
            launches++;
        } else {
            CK(itrain_launch(&t, t.grad, ga));
        }
        if (!g_step)
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
