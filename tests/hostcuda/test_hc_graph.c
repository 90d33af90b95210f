/* test_hc_graph.c — hostcuda's graphs at the Driver API, where the runtime test (rt_graph.cu)
 * does not reach. Properties: a pitched 2-D memcpy node and a 2-D memset node touch exactly the
 * rows and columns they name (the bytes around them keep their values); cuGraphAddNode builds
 * memcpy, memset, host and empty nodes that run like their cuGraphAdd*Node twins; capture modes
 * across threads: a global capture in one thread makes cuMemAlloc fail in another thread in
 * global mode and lets it through in relaxed mode, and a thread-local capture does not reach the
 * other thread; a stream of the capture destroyed before the end leaves it, and its work must
 * still be joined; the legacy stream cannot join a capture, nor say whether it captures while a
 * blocking stream does (IMPLICIT); an event recorded in a capture cannot be queried or
 * synchronised (CAPTURED_EVENT), and once recorded again outside it joins no more; a captured
 * cuMemAllocAsync/cuMemFreeAsync pair replays with the same address each time; a captured graph
 * updates from another capture of the same shape and refuses one whose node types differ.
 */
#include "test_hc_util.h"

#include <pthread.h>

/* declared by cuda.h only inside the driver (__CUDA_API_VERSION_INTERNAL) */
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, size_t *numDependencies_out);

static void test_memcpy2d_memset2d(void **state)
{
    (void)state;
    enum { W = 8, H = 4, PITCH = 16 };
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, PITCH * H));
    CU_OK(cuMemsetD8(d, 0xee, PITCH * H));
    unsigned char src[6 * 10], out[PITCH * H];
    for (int i = 0; i < (int)sizeof src; i++)
        src[i] = (unsigned char)i;
    CUgraph g;
    CUgraphNode cp, ms;
    CU_OK(cuGraphCreate(&g, 0));
    /* copy a 3 x 2 block from (x 2, y 1) of a 10-wide host array to (x 4, y 2) of the device rows */
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = 10;
    c.srcXInBytes = 2;
    c.srcY = 1;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = PITCH;
    c.dstXInBytes = 4;
    c.dstY = 2;
    c.WidthInBytes = 3;
    c.Height = 2;
    c.Depth = 1;
    CU_OK(cuGraphAddMemcpyNode(&cp, g, NULL, 0, &c, NULL));
    /* then set 2 rows x 1 element (16 bits) at row 0 column 0 */
    CUDA_MEMSET_NODE_PARAMS m = {d, PITCH, 0xabcd, 2, 1, 2};
    CU_OK(cuGraphAddMemsetNode(&ms, g, &cp, 1, &m, NULL));
    CUgraphExec x;
    CU_OK(cuGraphInstantiate(&x, g, 0));
    CU_OK(cuGraphLaunch(x, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    for (int y = 0; y < H; y++)
        for (int xx = 0; xx < PITCH; xx++) {
            int want = 0xee;
            if (y >= 2 && y < 4 && xx >= 4 && xx < 7)
                want = src[(y - 2 + 1) * 10 + (xx - 4 + 2)];
            if (y < 2 && xx == 0)
                want = 0xcd;
            if (y < 2 && xx == 1)
                want = 0xab;
            if (out[y * PITCH + xx] != want)
                fail_msg("row %d byte %d: got 0x%02x, want 0x%02x", y, xx, out[y * PITCH + xx], want);
        }
    /* a span past the allocation (its 256-byte block) is refused; the node is never launched */
    c.Height = 20;
    CUgraphNode bad;
    CU_EXPECT(cuGraphAddMemcpyNode(&bad, g, NULL, 0, &c, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuGraphExecDestroy(x));
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuMemFree(d));
}

static void bump(void *user)
{
    (*(int *)user)++;
}

static void test_add_node_generic(void **state)
{
    (void)state;
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 64));
    int host[16] = {0}, calls = 0;
    CUgraph g;
    CU_OK(cuGraphCreate(&g, 0));
    CUgraphNodeParams p;
    CUgraphNode ms, cp, hn, en;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset.dst = d;
    p.memset.value = 42;
    p.memset.elementSize = 4;
    p.memset.width = 16;
    p.memset.height = 1;
    CU_OK(cuGraphAddNode(&ms, g, NULL, NULL, 0, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.memcpy.copyParams.srcDevice = d;
    p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_HOST;
    p.memcpy.copyParams.dstHost = host;
    p.memcpy.copyParams.WidthInBytes = 64;
    p.memcpy.copyParams.Height = 1;
    p.memcpy.copyParams.Depth = 1;
    CU_OK(cuGraphAddNode(&cp, g, &ms, NULL, 1, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    p.host.fn = bump;
    p.host.userData = &calls;
    CU_OK(cuGraphAddNode(&hn, g, &cp, NULL, 1, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_EMPTY;
    CU_OK(cuGraphAddNode(&en, g, &hn, NULL, 1, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    CUgraphNode ev;
    CU_EXPECT(cuGraphAddNode(&ev, g, NULL, NULL, 0, &p), CUDA_ERROR_NOT_SUPPORTED);
    CUgraphNodeType t;
    CU_OK(cuGraphNodeGetType(cp, &t));
    assert_int_equal(t, CU_GRAPH_NODE_TYPE_MEMCPY);
    CUgraphExec x;
    CU_OK(cuGraphInstantiate(&x, g, 0));
    CU_OK(cuGraphLaunch(x, NULL));
    CU_OK(cuGraphLaunch(x, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(host[15], 42);
    assert_int_equal(calls, 2);
    CUDA_MEMSET_NODE_PARAMS back;
    CU_OK(cuGraphMemsetNodeGetParams(ms, &back));
    assert_int_equal(back.value, 42);
    CU_OK(cuGraphExecDestroy(x));
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuMemFree(d));
}

/* capture modes across threads */
typedef struct {
    CUcontext ctx;
    CUstreamCaptureMode mode;
    CUresult got;
} alloc_try;

static void *try_alloc(void *arg)
{
    alloc_try *t = arg;
    cuCtxSetCurrent(t->ctx);
    CUstreamCaptureMode m = t->mode;
    cuThreadExchangeStreamCaptureMode(&m);
    CUdeviceptr p = 0;
    t->got = cuMemAlloc(&p, 64);
    if (t->got == CUDA_SUCCESS)
        cuMemFree(p);
    return NULL;
}

static CUresult alloc_in_thread(CUstreamCaptureMode mode)
{
    alloc_try t = {NULL, mode, CUDA_ERROR_UNKNOWN};
    cuCtxGetCurrent(&t.ctx);
    pthread_t th;
    pthread_create(&th, NULL, try_alloc, &t);
    pthread_join(th, NULL);
    return t.got;
}

static void test_capture_modes(void **state)
{
    (void)state;
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_EXPECT(alloc_in_thread(CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);   /* relaxed: allowed */
    CUstreamCaptureStatus st;
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CU_EXPECT(alloc_in_thread(CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CU_OK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CU_EXPECT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* a thread-local capture does not reach the other thread */
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CU_EXPECT(alloc_in_thread(CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CU_OK(cuStreamEndCapture(s, &g));
    CU_OK(cuGraphDestroy(g));
    /* a context synchronise during capture invalidates it */
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_EXPECT(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CU_EXPECT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CU_OK(cuCtxSynchronize());   /* control: no capture, no error */
    CU_OK(cuStreamDestroy(s));
}

static void test_capture_streams(void **state)
{
    (void)state;
    CUstream s1, s2;
    CUevent e, back;
    CU_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CU_OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CU_OK(cuEventCreate(&back, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 64));
    CUgraph g;
    /* asking the legacy stream while a blocking stream captures: IMPLICIT; a non-blocking one: none */
    CUstream blocking;
    CU_OK(cuStreamCreate(&blocking, 0));
    CU_OK(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus lst;
    CU_EXPECT(cuStreamIsCapturing(CU_STREAM_LEGACY, &lst), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CU_OK(cuStreamEndCapture(blocking, &g));
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuStreamDestroy(blocking));
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuStreamIsCapturing(CU_STREAM_LEGACY, &lst));
    assert_int_equal(lst, CU_STREAM_CAPTURE_STATUS_NONE);
    CU_OK(cuStreamEndCapture(s1, &g));
    CU_OK(cuGraphDestroy(g));
    /* the legacy stream cannot join */
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(e, s1));
    CU_EXPECT(cuStreamWaitEvent(CU_STREAM_LEGACY, e, 0), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CU_EXPECT(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* a joined stream destroyed after joining back: the capture ends well */
    CUstream s3;
    CU_OK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(e, s1));
    CU_OK(cuStreamWaitEvent(s3, e, 0));
    CU_OK(cuMemsetD32Async(d, 7, 16, s3));
    CU_OK(cuEventRecord(back, s3));
    CU_OK(cuStreamDestroy(s3));
    CU_OK(cuStreamWaitEvent(s1, back, 0));
    CU_OK(cuStreamEndCapture(s1, &g));
    CU_OK(cuGraphDestroy(g));
    /* ... and one destroyed without joining back: UNJOINED */
    CU_OK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(e, s1));
    CU_OK(cuStreamWaitEvent(s3, e, 0));
    CU_OK(cuMemsetD32Async(d, 7, 16, s3));
    CU_OK(cuStreamDestroy(s3));
    CU_EXPECT(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    /* an event recorded again outside the capture no longer joins a stream that waits on it */
    CU_OK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(e, s1));
    CU_EXPECT(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);         /* it stands for no work that runs */
    CU_EXPECT(cuEventSynchronize(e), CUDA_ERROR_CAPTURED_EVENT);
    CU_OK(cuEventRecord(e, s2));
    CU_OK(cuEventSynchronize(e));                                  /* control: recorded outside */
    CU_OK(cuStreamWaitEvent(s3, e, 0));
    CUstreamCaptureStatus st3;
    CU_OK(cuStreamIsCapturing(s3, &st3));
    assert_int_equal(st3, CU_STREAM_CAPTURE_STATUS_NONE);
    CU_OK(cuStreamEndCapture(s1, &g));
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuStreamDestroy(s3));
    /* ending on the joined stream, not the origin: UNMATCHED */
    CU_OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(e, s1));
    CU_OK(cuStreamWaitEvent(s2, e, 0));
    CU_EXPECT(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    CUstreamCaptureStatus st;
    cuuint64_t id1 = 0, id2 = 0;
    CUgraph cg = NULL;
    const CUgraphNode *deps = NULL;
    size_t nd = 9;
    CU_OK(cuStreamGetCaptureInfo_v2(s1, &st, &id1, &cg, &deps, &nd));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    assert_int_equal(nd, 0);   /* event records make no node */
    CU_OK(cuStreamGetCaptureInfo_v2(s2, &st, &id2, NULL, NULL, NULL));
    assert_true(id1 == id2 && id1 != 0);
    CU_EXPECT(cuGraphDestroy(cg), CUDA_ERROR_INVALID_VALUE);   /* the capture's until it ends */
    CU_OK(cuStreamEndCapture(s1, &g));
    assert_ptr_equal(g, cg);
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuMemFree(d));
    CU_OK(cuEventDestroy(e));
    CU_OK(cuEventDestroy(back));
    CU_OK(cuStreamDestroy(s1));
    CU_OK(cuStreamDestroy(s2));
}

static CUgraph capture_alloc_free(CUstream s, int *host, CUdeviceptr *addr, int with_memset)
{
    CUgraph g = NULL;
    CUdeviceptr p;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemAllocAsync(&p, 64, s));
    if (with_memset)
        CU_OK(cuMemsetD32Async(p, 5, 16, s));
    else
        CU_OK(cuMemcpyHtoDAsync(p, host, 64, s));
    CU_OK(cuMemcpyDtoHAsync(host, p, 64, s));
    CU_OK(cuMemFreeAsync(p, s));
    CU_OK(cuStreamEndCapture(s, &g));
    *addr = p;
    return g;
}

static void test_captured_memory_and_update(void **state)
{
    (void)state;
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int *host;
    CU_OK(cuMemAllocHost((void **)&host, 64));
    CUdeviceptr a1, a2;
    CUgraph g = capture_alloc_free(s, host, &a1, 1);
    size_t n = 0;
    CU_OK(cuGraphGetNodes(g, NULL, &n));
    assert_int_equal(n, 4);   /* alloc, memset, copy, free */
    CUgraphExec x;
    CU_OK(cuGraphInstantiate(&x, g, 0));
    for (int r = 0; r < 3; r++) {
        memset(host, 0, 64);
        CU_OK(cuGraphLaunch(x, s));
        CU_OK(cuStreamSynchronize(s));
        assert_int_equal(host[15], 5);
    }
    /* same shape (alloc, memset, copy, free): the update takes it */
    CUgraph g2 = capture_alloc_free(s, host, &a2, 1);
    CUgraphExecUpdateResultInfo info;
    CU_OK(cuGraphExecUpdate(x, g2, &info));
    assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    /* a copy where the memset was: refused, NODE_TYPE_CHANGED */
    CUdeviceptr a3;
    CUgraph g3 = capture_alloc_free(s, host, &a3, 0);
    CU_EXPECT(cuGraphExecUpdate(x, g3, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    assert_non_null(info.errorNode);
    memset(host, 0, 64);
    CU_OK(cuGraphLaunch(x, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(host[15], 5);
    CU_OK(cuGraphExecDestroy(x));
    CU_OK(cuGraphDestroy(g));
    CU_OK(cuGraphDestroy(g2));
    CU_OK(cuGraphDestroy(g3));
    CU_OK(cuMemFreeHost(host));
    CU_OK(cuStreamDestroy(s));
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_t_init(argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy2d_memset2d),
        cmocka_unit_test(test_add_node_generic),
        cmocka_unit_test(test_capture_modes),
        cmocka_unit_test(test_capture_streams),
        cmocka_unit_test(test_captured_memory_and_update),
    };
    return cmocka_run_group_tests_name("hostcuda graphs", tests, hc_t_setup_primary, hc_t_teardown_primary);
}
