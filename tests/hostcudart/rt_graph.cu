// rt_graph.cu — CUDA graphs through hostcudart and hostcuda, as an unmodified nvcc -cudart shared
// program uses them. Properties, one case each (argv[1]; every case prints "ok"/"FAIL" lines and
// exits non-zero on a FAIL):
//   equal     one order-sensitive pipeline (memset, x = 2x + i, x = x + 1, copy back) run on a plain
//             stream, captured, and built by hand gives the same array, and each replay applies it
//             again (replay N times: the result of N plain runs)
//   deps      a hand-built graph runs in dependency order, not creation order: node "x += 1" made
//             first, "x *= 3" second, then an edge mul -> add gives 1; the control without the
//             edge gives 3 (creation order), so the case can tell the two apart
//   fork      cross-stream capture: a second stream joins by waiting on an event recorded in the
//             capture, works in parallel and joins back; the graph equals the plain run; a fork
//             not joined back ends the capture with cudaErrorStreamCaptureUnjoined
//   update    cudaGraphExecKernelNodeSetParams changes the next replay only; cudaGraphExecUpdate
//             from a graph of the same shape takes its parameters, from another shape it rt_fails
//             with TopologyChanged and the exec keeps working as before
//   errors    a launch of a destroyed exec, a dependency from another graph, a cycle, a synchronise
//             inside capture (invalidates it), cudaMalloc during a global capture (relaxed mode:
//             allowed), a conditional node: each refused with its error; the same calls made
//             correctly succeed (the controls)
//   memnodes  alloc node -> kernel -> copy -> free node, replayed 3 times, gives the result each
//             time; the alloc node reports its address, which stays the same
//   params    cudaGraphKernelNodeGetParams gives back the host stub, dims and argument values
//   child     a child graph node runs its own copy of the child in place; host and empty nodes;
//             a clone, a node found in it and destroyed there changes the clone only
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt_expect.h"

#define OK(call) EXPECT_RT(#call, cudaSuccess, call)

#define N 256

__global__ void twice_plus_i(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = 2 * x[i] + i;
}

__global__ void add_k(int *x, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += k;
}

__global__ void mul_k(int *x, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= k;
}

__global__ void sum_into(int *dst, const int *a, const int *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = a[i] + b[i];
}

// the first index where a and b differ, both values printed; -1 when equal
static int diff(const char *what, const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) {
            printf("FAIL %s: %s: element %d differs: %d vs %d\n", rt_cur, what, i, a[i], b[i]);
            rt_fails++;
            return i;
        }
    printf("ok %s: %s (%d elements equal)\n", rt_cur, what, n);
    return -1;
}

static cudaKernelNodeParams kparams(void *fn, void **args)
{
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = fn;
    p.gridDim = dim3((N + 63) / 64);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    return p;
}

// ---- equal: plain stream vs capture vs hand-built, and replays
static void pipeline(int *d, int *h, cudaStream_t s)
{
    cudaMemsetAsync(d, 0, N * sizeof(int), s);
    twice_plus_i<<<(N + 63) / 64, 64, 0, s>>>(d, N);
    add_k<<<(N + 63) / 64, 64, 0, s>>>(d, N, 1);
    twice_plus_i<<<(N + 63) / 64, 64, 0, s>>>(d, N);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s);
}

static void c_equal(void)
{
    int *d, *h, plain[N], cap[N], hand[N];
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    OK(cudaMalloc(&d, N * sizeof(int)));
    OK(cudaMallocHost(&h, N * sizeof(int)));
    pipeline(d, h, s);
    OK(cudaStreamSynchronize(s));
    memcpy(plain, h, sizeof plain);
    EXPECT_EQ("plain: element 5 is 2(2*0+5+1)+5", 2 * (2 * 0 + 5 + 1) + 5, plain[5]);

    memset(h, 0x7f, N * sizeof(int));
    cudaGraph_t g;
    cudaGraphExec_t x;
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    pipeline(d, h, s);
    OK(cudaStreamEndCapture(s, &g));
    size_t nn = 0;
    OK(cudaGraphGetNodes(g, NULL, &nn));
    EXPECT_EQ("captured graph: 5 nodes", 5, nn);
    EXPECT_EQ("nothing ran while capturing", 0x7f7f7f7f, h[5]);
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, s));
    OK(cudaStreamSynchronize(s));
    memcpy(cap, h, sizeof cap);
    diff("captured graph equals the plain stream", plain, cap, N);

    cudaGraph_t hg;
    cudaGraphNode_t ms, k1, k2, k3, cp;
    OK(cudaGraphCreate(&hg, 0));
    cudaMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = d;
    mp.value = 0;
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    OK(cudaGraphAddMemsetNode(&ms, hg, NULL, 0, &mp));
    int n = N, one = 1;
    void *a1[] = {&d, &n};
    void *a2[] = {&d, &n, &one};
    cudaKernelNodeParams p1 = kparams((void *)twice_plus_i, a1), p2 = kparams((void *)add_k, a2);
    OK(cudaGraphAddKernelNode(&k1, hg, &ms, 1, &p1));
    OK(cudaGraphAddKernelNode(&k2, hg, &k1, 1, &p2));
    OK(cudaGraphAddKernelNode(&k3, hg, &k2, 1, &p1));
    OK(cudaGraphAddMemcpyNode1D(&cp, hg, &k3, 1, hand, d, N * sizeof(int), cudaMemcpyDeviceToHost));
    cudaGraphExec_t hx;
    OK(cudaGraphInstantiate(&hx, hg, 0));
    OK(cudaGraphLaunch(hx, s));
    OK(cudaStreamSynchronize(s));
    diff("hand-built graph equals the plain stream", plain, hand, N);
    // control: the same graph without the "+ 1" node gives another array, and the comparison says so
    cudaGraph_t ng;
    cudaGraphNode_t n1, n3, ncp, nms;
    cudaGraphExec_t nx;
    int other[N];
    OK(cudaGraphCreate(&ng, 0));
    OK(cudaGraphAddMemsetNode(&nms, ng, NULL, 0, &mp));
    OK(cudaGraphAddKernelNode(&n1, ng, &nms, 1, &p1));
    OK(cudaGraphAddKernelNode(&n3, ng, &n1, 1, &p1));
    OK(cudaGraphAddMemcpyNode1D(&ncp, ng, &n3, 1, other, d, N * sizeof(int), cudaMemcpyDeviceToHost));
    OK(cudaGraphInstantiate(&nx, ng, 0));
    OK(cudaGraphLaunch(nx, s));
    OK(cudaStreamSynchronize(s));
    int at = -1;
    for (int i = 0; i < N && at < 0; i++)
        if (other[i] != plain[i])
            at = i;
    if (at < 0) {
        printf("FAIL %s: control: a graph without the +1 node should differ from the plain run\n", rt_cur);
        rt_fails++;
    } else {
        printf("ok %s: control: without the +1 node element %d differs (%d vs %d)\n", rt_cur, at, other[at], plain[at]);
    }
    OK(cudaGraphExecDestroy(nx));
    OK(cudaGraphDestroy(ng));

    // replays: a graph of "x += 1" launched 5 times is 5 plain launches
    cudaGraph_t rg;
    cudaGraphNode_t rk;
    cudaGraphExec_t rx;
    OK(cudaMemset(d, 0, N * sizeof(int)));
    OK(cudaGraphCreate(&rg, 0));
    OK(cudaGraphAddKernelNode(&rk, rg, NULL, 0, &p2));
    OK(cudaGraphInstantiate(&rx, rg, 0));
    OK(cudaGraphDestroy(rg));   // the exec keeps what it needs
    for (int i = 0; i < 5; i++)
        OK(cudaGraphLaunch(rx, s));
    OK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s));
    OK(cudaStreamSynchronize(s));
    EXPECT_EQ("5 replays of x += 1", 5, h[N - 1]);
    // the cloned graph replays too
    cudaGraph_t cg;
    cudaGraphExec_t cx;
    OK(cudaGraphClone(&cg, hg));
    OK(cudaGraphInstantiate(&cx, cg, 0));
    memset(hand, 0, sizeof hand);
    OK(cudaGraphLaunch(cx, s));
    OK(cudaStreamSynchronize(s));
    diff("a clone of the hand-built graph equals the plain stream", plain, hand, N);
    OK(cudaGraphExecDestroy(cx));
    OK(cudaGraphDestroy(cg));
    OK(cudaGraphExecDestroy(rx));
    OK(cudaGraphExecDestroy(hx));
    OK(cudaGraphDestroy(hg));
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
    OK(cudaFree(d));
    OK(cudaFreeHost(h));
    OK(cudaStreamDestroy(s));
}

// ---- deps: dependency order, not creation order
static int run_add_mul(int with_edge)
{
    int *d, h = -1;
    cudaMalloc(&d, N * sizeof(int));
    cudaMemset(d, 0, N * sizeof(int));
    int n = N, one = 1, three = 3;
    void *aa[] = {&d, &n, &one}, *am[] = {&d, &n, &three};
    cudaKernelNodeParams pa = kparams((void *)add_k, aa), pm = kparams((void *)mul_k, am);
    cudaGraph_t g;
    cudaGraphNode_t add, mul;
    cudaGraphExec_t x;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddKernelNode(&add, g, NULL, 0, &pa));   // made first
    OK(cudaGraphAddKernelNode(&mul, g, NULL, 0, &pm));
    if (with_edge) {
        OK(cudaGraphAddDependencies(g, &mul, &add, NULL, 1));   // add depends on mul
        size_t nr = 0;
        OK(cudaGraphGetRootNodes(g, NULL, &nr));
        EXPECT_EQ("one root node (mul)", 1, nr);
    }
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaMemcpy(&h, d + 7, sizeof h, cudaMemcpyDeviceToHost));
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaFree(d);
    return h;
}

static void c_deps(void)
{
    EXPECT_EQ("with the edge mul -> add: 0 * 3 + 1", 1, run_add_mul(1));
    EXPECT_EQ("control, no edge: creation order, (0 + 1) * 3", 3, run_add_mul(0));
}

// ---- fork: cross-stream capture
static void forked(int *a, int *b, int *c, int *h, cudaStream_t s1, cudaStream_t s2, cudaEvent_t fork,
                   cudaEvent_t join, int do_join)
{
    cudaMemsetAsync(a, 0, N * sizeof(int), s1);
    cudaMemsetAsync(b, 0, N * sizeof(int), s1);
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    twice_plus_i<<<(N + 63) / 64, 64, 0, s2>>>(b, N);   // b = i, on the side stream
    add_k<<<(N + 63) / 64, 64, 0, s1>>>(a, N, 5);        // a = 5, meanwhile
    cudaEventRecord(join, s2);
    if (do_join)
        cudaStreamWaitEvent(s1, join, 0);
    sum_into<<<(N + 63) / 64, 64, 0, s1>>>(c, a, b, N);  // c = 5 + i
    cudaMemcpyAsync(h, c, N * sizeof(int), cudaMemcpyDeviceToHost, s1);
}

static void c_fork(void)
{
    int *a, *b, *c, *h, plain[N], cap[N];
    cudaStream_t s1, s2;
    cudaEvent_t fork, join;
    OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    OK(cudaEventCreate(&fork));
    OK(cudaEventCreate(&join));
    OK(cudaMalloc(&a, N * sizeof(int)));
    OK(cudaMalloc(&b, N * sizeof(int)));
    OK(cudaMalloc(&c, N * sizeof(int)));
    OK(cudaMallocHost(&h, N * sizeof(int)));
    forked(a, b, c, h, s1, s2, fork, join, 1);
    OK(cudaStreamSynchronize(s1));
    memcpy(plain, h, sizeof plain);
    EXPECT_EQ("plain: c[9] = 5 + 9", 14, plain[9]);
    memset(h, 0, N * sizeof(int));

    cudaGraph_t g;
    cudaGraphExec_t x;
    OK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    forked(a, b, c, h, s1, s2, fork, join, 1);
    enum cudaStreamCaptureStatus st;
    unsigned long long id = 0;
    const cudaGraphNode_t *deps = NULL;
    size_t nd = 0;
    OK(cudaStreamGetCaptureInfo(s2, &st, &id, NULL, &deps, NULL, &nd));
    EXPECT_EQ("the side stream joined the capture", cudaStreamCaptureStatusActive, st);
    EXPECT_EQ("the side stream's frontier: its kernel", 1, nd);
    OK(cudaStreamEndCapture(s1, &g));
    OK(cudaStreamIsCapturing(s2, &st));
    EXPECT_EQ("ending the capture ends the side stream's part", cudaStreamCaptureStatusNone, st);
    size_t nn = 0;
    OK(cudaGraphGetNodes(g, NULL, &nn));
    EXPECT_EQ("6 nodes (2 memsets, 3 kernels, 1 copy; events make none)", 6, nn);
    OK(cudaGraphInstantiate(&x, g, 0));
    for (int r = 0; r < 2; r++) {
        memset(h, 0, N * sizeof(int));
        OK(cudaGraphLaunch(x, s1));
        OK(cudaStreamSynchronize(s1));
        memcpy(cap, h, sizeof cap);
        diff("forked capture equals the plain run", plain, cap, N);
    }
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));

    // negative: the side stream's work is never joined back
    cudaGraph_t bad = (cudaGraph_t)1;
    OK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    forked(a, b, c, h, s1, s2, fork, join, 0);
    EXPECT_RT("an unjoined fork", cudaErrorStreamCaptureUnjoined, cudaStreamEndCapture(s1, &bad));
    EXPECT_EQ("no graph for it", 0, (long long)(size_t)bad);
    cudaGetLastError();
    OK(cudaStreamIsCapturing(s2, &st));
    EXPECT_EQ("the side stream left the failed capture", cudaStreamCaptureStatusNone, st);
    OK(cudaFree(a));
    OK(cudaFree(b));
    OK(cudaFree(c));
    OK(cudaFreeHost(h));
    OK(cudaStreamDestroy(s1));
    OK(cudaStreamDestroy(s2));
}

// ---- update
static void c_update(void)
{
    int *d, h = 0;
    OK(cudaMalloc(&d, N * sizeof(int)));
    int n = N, k1 = 1, k10 = 10;
    void *a1[] = {&d, &n, &k1}, *a10[] = {&d, &n, &k10};
    cudaKernelNodeParams p1 = kparams((void *)add_k, a1), p10 = kparams((void *)add_k, a10);
    cudaGraph_t g;
    cudaGraphNode_t k;
    cudaGraphExec_t x;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddKernelNode(&k, g, NULL, 0, &p1));
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaMemset(d, 0, N * sizeof(int)));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaGraphExecKernelNodeSetParams(x, k, &p10));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("one replay of +1, then one of +10 (exec parameters set)", 11, h);
    // the graph's own node is unchanged: a new instantiation adds 1
    cudaGraphExec_t x2;
    OK(cudaGraphInstantiate(&x2, g, 0));
    OK(cudaGraphLaunch(x2, 0));
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("the graph node kept +1", 12, h);

    // cudaGraphExecUpdate from a graph of the same shape (+100)
    int k100 = 100;
    void *a100[] = {&d, &n, &k100};
    cudaKernelNodeParams p100 = kparams((void *)add_k, a100);
    cudaGraph_t g2;
    cudaGraphNode_t k2;
    OK(cudaGraphCreate(&g2, 0));
    OK(cudaGraphAddKernelNode(&k2, g2, NULL, 0, &p100));
    cudaGraphExecUpdateResultInfo info;
    OK(cudaGraphExecUpdate(x, g2, &info));
    EXPECT_EQ("update result: success", cudaGraphExecUpdateSuccess, info.result);
    OK(cudaGraphLaunch(x, 0));
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("after the update a replay adds 100", 112, h);
    // from a graph of another shape: refused, the exec unchanged
    cudaGraph_t g3;
    cudaGraphNode_t k3a, k3b;
    OK(cudaGraphCreate(&g3, 0));
    OK(cudaGraphAddKernelNode(&k3a, g3, NULL, 0, &p1));
    OK(cudaGraphAddKernelNode(&k3b, g3, &k3a, 1, &p1));
    EXPECT_RT("update from another topology", cudaErrorGraphExecUpdateFailure, cudaGraphExecUpdate(x, g3, &info));
    cudaGetLastError();
    EXPECT_EQ("update result: topology changed", cudaGraphExecUpdateErrorTopologyChanged, info.result);
    OK(cudaGraphLaunch(x, 0));
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("the refused update left the exec adding 100", 212, h);
    cudaGraphExecDestroy(x);
    cudaGraphExecDestroy(x2);
    cudaGraphDestroy(g);
    cudaGraphDestroy(g2);
    cudaGraphDestroy(g3);
    cudaFree(d);
}

// ---- errors, each with its control
static void c_errors(void)
{
    int *d;
    OK(cudaMalloc(&d, N * sizeof(int)));
    int n = N, one = 1;
    void *a[] = {&d, &n, &one};
    cudaKernelNodeParams p = kparams((void *)add_k, a);
    cudaGraph_t g, other;
    cudaGraphNode_t k, ko, kc;
    cudaGraphExec_t x;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphCreate(&other, 0));
    OK(cudaGraphAddKernelNode(&k, g, NULL, 0, &p));
    OK(cudaGraphAddKernelNode(&ko, other, NULL, 0, &p));
    EXPECT_RT("a dependency on another graph's node", cudaErrorInvalidValue, cudaGraphAddKernelNode(&kc, g, &ko, 1, &p));
    cudaGetLastError();
    OK(cudaGraphAddKernelNode(&kc, g, &k, 1, &p));   // control: its own node
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphLaunch(x, 0));                        // control: a live exec launches
    OK(cudaDeviceSynchronize());
    OK(cudaGraphExecDestroy(x));
    EXPECT_RT("launch of a destroyed exec", cudaErrorInvalidValue, cudaGraphLaunch(x, 0));
    cudaGetLastError();
    // a cycle: k -> kc exists; kc -> k closes it
    OK(cudaGraphAddDependencies(g, &kc, &k, NULL, 1));
    EXPECT_RT("instantiating a cycle", cudaErrorInvalidValue, cudaGraphInstantiate(&x, g, 0));
    cudaGetLastError();
    EXPECT_RT("an edge that exists already", cudaErrorInvalidValue, cudaGraphAddDependencies(g, &kc, &k, NULL, 1));
    cudaGetLastError();

    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    cudaGraph_t cg = (cudaGraph_t)1;
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    add_k<<<1, 64, 0, s>>>(d, N, 1);
    EXPECT_RT("cudaStreamSynchronize of a capturing stream", cudaErrorStreamCaptureUnsupported, cudaStreamSynchronize(s));
    enum cudaStreamCaptureStatus st;
    OK(cudaStreamIsCapturing(s, &st));
    EXPECT_EQ("the capture is invalidated", cudaStreamCaptureStatusInvalidated, st);
    EXPECT_RT("ending an invalidated capture", cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &cg));
    EXPECT_EQ("no graph for it", 0, (long long)(size_t)cg);
    cudaGetLastError();
    // cudaMalloc is prohibited during a global capture, allowed in relaxed mode
    void *m = NULL;
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_RT("cudaMalloc during a global capture", cudaErrorStreamCaptureUnsupported, cudaMalloc(&m, 64));
    cudaGetLastError();
    EXPECT_RT("it invalidated the capture", cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &cg));
    cudaGetLastError();
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    OK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT_EQ("the thread's previous mode: global", cudaStreamCaptureModeGlobal, mode);
    OK(cudaMalloc(&m, 64));   // control: relaxed
    OK(cudaThreadExchangeStreamCaptureMode(&mode));
    OK(cudaStreamEndCapture(s, &cg));
    OK(cudaGraphDestroy(cg));
    OK(cudaFree(m));
    // conditional nodes are refused by name (stderr), not run wrongly
    cudaGraphNodeParams *cp = (cudaGraphNodeParams *)calloc(1, sizeof *cp);   // a union C++ cannot construct
    cp->type = cudaGraphNodeTypeConditional;
    cudaGraphNode_t cn;
    EXPECT_RT("a conditional node", cudaErrorNotSupported, cudaGraphAddNode(&cn, other, NULL, NULL, 0, cp));
    cudaGetLastError();
    memset(cp, 0, sizeof *cp);
    cp->type = cudaGraphNodeTypeEmpty;
    OK(cudaGraphAddNode(&cn, other, NULL, NULL, 0, cp));   // control: an empty node
    free(cp);
    OK(cudaStreamDestroy(s));
    OK(cudaGraphDestroy(g));
    OK(cudaGraphDestroy(other));
    OK(cudaFree(d));
}

// ---- memory nodes
static void c_memnodes(void)
{
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = dev;
    ap.bytesize = N * sizeof(int);
    cudaGraphNode_t an, ms, kn, cn, fn;
    OK(cudaGraphAddMemAllocNode(&an, g, NULL, 0, &ap));
    int *d = (int *)ap.dptr;
    EXPECT_EQ("the alloc node has an address", 1, d != NULL);
    cudaMemsetParams mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = d;
    mp.elementSize = 4;
    mp.width = N;
    mp.height = 1;
    OK(cudaGraphAddMemsetNode(&ms, g, &an, 1, &mp));
    int n = N;
    void *a[] = {&d, &n};
    cudaKernelNodeParams p = kparams((void *)twice_plus_i, a);
    OK(cudaGraphAddKernelNode(&kn, g, &ms, 1, &p));
    int h[N];
    OK(cudaGraphAddMemcpyNode1D(&cn, g, &kn, 1, h, d, sizeof h, cudaMemcpyDeviceToHost));
    OK(cudaGraphAddMemFreeNode(&fn, g, &cn, 1, d));
    cudaGraphExec_t x;
    OK(cudaGraphInstantiate(&x, g, 0));
    for (int r = 0; r < 3; r++) {
        memset(h, 0, sizeof h);
        OK(cudaGraphLaunch(x, 0));
        OK(cudaDeviceSynchronize());
        EXPECT_EQ("replay: h[N-1] = N-1", N - 1, h[N - 1]);
    }
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphDestroy(g));
}

// ---- child graphs, host and empty nodes, clones
static void CUDART_CB record_host(void *user)
{
    int *log = (int *)user;
    log[++log[0]] = 7;   // appends one entry per run
}

static void c_child(void)
{
    int *d, h = 0;
    OK(cudaMalloc(&d, N * sizeof(int)));
    OK(cudaMemset(d, 0, N * sizeof(int)));
    int n = N, one = 1, two = 2;
    void *aa[] = {&d, &n, &one}, *am[] = {&d, &n, &two};
    cudaKernelNodeParams pa = kparams((void *)add_k, aa), pm = kparams((void *)mul_k, am);
    // child: x += 1; parent: child -> x *= 2 -> host node, an empty node joining two roots
    cudaGraph_t child, g;
    cudaGraphNode_t ck, cn, mk, hn, en, root2;
    OK(cudaGraphCreate(&child, 0));
    OK(cudaGraphAddKernelNode(&ck, child, NULL, 0, &pa));
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    OK(cudaGraphDestroy(child));   // the node holds its own copy
    OK(cudaGraphAddEmptyNode(&root2, g, NULL, 0));
    cudaGraphNode_t both[2] = {cn, root2};
    OK(cudaGraphAddEmptyNode(&en, g, both, 2));
    OK(cudaGraphAddKernelNode(&mk, g, &en, 1, &pm));
    int log[8] = {0};
    cudaHostNodeParams hp = {record_host, log};
    OK(cudaGraphAddHostNode(&hn, g, &mk, 1, &hp));
    enum cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(cn, &t));
    EXPECT_EQ("child node type", cudaGraphNodeTypeGraph, t);
    cudaGraph_t inner;
    OK(cudaGraphChildGraphNodeGetGraph(cn, &inner));
    size_t ni = 0;
    OK(cudaGraphGetNodes(inner, NULL, &ni));
    EXPECT_EQ("the child's copy has its one node", 1, ni);
    cudaGraph_t cl;
    cudaGraphNode_t found;
    OK(cudaGraphClone(&cl, g));
    OK(cudaGraphNodeFindInClone(&found, mk, cl));
    OK(cudaGraphNodeGetType(found, &t));
    EXPECT_EQ("the clone's copy of the multiply is a kernel node", cudaGraphNodeTypeKernel, t);
    OK(cudaGraphDestroyNode(found));   // the clone loses its multiply: (x + 1) only
    cudaGraphExec_t x, xc;
    OK(cudaGraphInstantiate(&x, g, 0));
    OK(cudaGraphInstantiate(&xc, cl, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaGraphLaunch(x, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("two replays of (x + 1) * 2 from 0", 6, h);
    EXPECT_EQ("the host node ran once per replay", 2, log[0]);
    OK(cudaGraphLaunch(xc, 0));
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT_EQ("the clone without its multiply: 6 + 1", 7, h);
    EXPECT_EQ("the clone's host node ran too", 3, log[0]);
    size_t nodes = 8;
    cudaGraphNode_t list[8];
    OK(cudaGraphGetNodes(cl, list, &nodes));
    EXPECT_EQ("the clone has 4 nodes left", 4, nodes);
    EXPECT_EQ("entries past the count are NULL", 1, list[4] == NULL && list[7] == NULL);
    EXPECT_RT("destroying a child node's own graph", cudaErrorInvalidValue, cudaGraphDestroy(inner));
    cudaGetLastError();
    OK(cudaGraphExecDestroy(x));
    OK(cudaGraphExecDestroy(xc));
    OK(cudaGraphDestroy(g));
    OK(cudaGraphDestroy(cl));
    OK(cudaFree(d));
}

// ---- kernel node parameters read back
static void c_params(void)
{
    int *d;
    OK(cudaMalloc(&d, 16));
    int n = 77, k = 5;
    void *a[] = {&d, &n, &k};
    cudaKernelNodeParams p = kparams((void *)add_k, a), q;
    cudaGraph_t g;
    cudaGraphNode_t kn;
    OK(cudaGraphCreate(&g, 0));
    OK(cudaGraphAddKernelNode(&kn, g, NULL, 0, &p));
    n = 0, k = 0;   // the node kept its own copy
    OK(cudaGraphKernelNodeGetParams(kn, &q));
    EXPECT_EQ("func is the host stub", 1, q.func == (void *)add_k);
    EXPECT_EQ("gridDim.x", (N + 63) / 64, q.gridDim.x);
    EXPECT_EQ("blockDim.x", 64, q.blockDim.x);
    EXPECT_EQ("argument 1 (n) as given", 77, *(int *)q.kernelParams[1]);
    EXPECT_EQ("argument 2 (k) as given", 5, *(int *)q.kernelParams[2]);
    EXPECT_EQ("argument 0 (the pointer) as given", 1, *(int **)q.kernelParams[0] == d);
    enum cudaGraphNodeType t;
    OK(cudaGraphNodeGetType(kn, &t));
    EXPECT_EQ("node type kernel", cudaGraphNodeTypeKernel, t);
    OK(cudaGraphDestroy(g));
    OK(cudaFree(d));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *c = argc > 1 ? argv[1] : "";
    rt_cur = c;
    if (!strcmp(c, "equal"))
        c_equal();
    else if (!strcmp(c, "deps"))
        c_deps();
    else if (!strcmp(c, "fork"))
        c_fork();
    else if (!strcmp(c, "update"))
        c_update();
    else if (!strcmp(c, "errors"))
        c_errors();
    else if (!strcmp(c, "memnodes"))
        c_memnodes();
    else if (!strcmp(c, "params"))
        c_params();
    else if (!strcmp(c, "child"))
        c_child();
    else {
        fprintf(stderr, "rt_graph: unknown case '%s' (equal deps fork update errors memnodes params child)\n", c);
        return 2;
    }
    printf("%s: %d failure(s)\n", c, rt_fails);
    return rt_fails ? 1 : 0;
}
