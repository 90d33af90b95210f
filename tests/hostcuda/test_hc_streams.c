/* test_hc_streams.c — proves hostcuda's stream and event semantics match a GPU's: work on one
 * stream runs in order and asynchronously (a program that skips a synchronise reads stale data),
 * an event makes another stream wait, the legacy default stream synchronises with blocking
 * streams but not with non-blocking ones, per-thread default streams are per thread, events time
 * work, and bad handles/flags get the driver's error codes.
 */
#include "test_hc_util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int flag_a, seen;

static void hf_sleep_set(void *arg)   /* sleep, then flag_a = (intptr_t)arg */
{
    hc_t_sleep_ms(150);
    atomic_store(&flag_a, (int)(intptr_t)arg);
}

static void hf_observe(void *arg)   /* seen = flag_a */
{
    (void)arg;
    atomic_store(&seen, atomic_load(&flag_a));
}

static atomic_int released;

static void hf_wait_release_set(void *arg)   /* wait (up to 20 s) until released, then flag_a = arg */
{
    for (int i = 0; i < 20000 && !atomic_load(&released); i++)
        hc_t_sleep_ms(1);
    atomic_store(&flag_a, (int)(intptr_t)arg);
}

static void hf_observe_release(void *arg)   /* seen = flag_a, then release hf_wait_release_set */
{
    (void)arg;
    atomic_store(&seen, atomic_load(&flag_a));
    atomic_store(&released, 1);
}

static void reset(void)
{
    atomic_store(&flag_a, 0);
    atomic_store(&seen, -1);
    atomic_store(&released, 0);
}

static void test_in_order_and_query(void **state)
{
    (void)state;
    reset();
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    CU_OK(cuStreamQuery(s));
    CU_OK(cuLaunchHostFunc(s, hf_sleep_set, (void *)1));
    CU_OK(cuLaunchHostFunc(s, hf_observe, NULL));
    CU_EXPECT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);   /* asynchronous: still sleeping */
    assert_int_equal(atomic_load(&seen), -1);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuStreamQuery(s));
    assert_int_equal(atomic_load(&seen), 1);   /* second op ran after the first */
    CU_OK(cuStreamDestroy(s));
}

static void test_event_wait(void **state)
{
    (void)state;
    CUstream s1, s2;
    CUevent ev;
    CU_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU_OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    /* control: without a wait, s2 runs while s1 is still busy — s1's function waits for s2's to
     * release it, so the order is forced, not a matter of timing under load */
    reset();
    CU_OK(cuLaunchHostFunc(s1, hf_wait_release_set, (void *)1));
    CU_OK(cuLaunchHostFunc(s2, hf_observe_release, NULL));
    CU_OK(cuStreamSynchronize(s2));
    assert_int_equal(atomic_load(&seen), 0);
    CU_OK(cuStreamSynchronize(s1));
    /* with cuStreamWaitEvent, s2 waits for s1's recorded position */
    reset();
    CU_OK(cuLaunchHostFunc(s1, hf_sleep_set, (void *)2));
    CU_OK(cuEventRecord(ev, s1));
    CU_EXPECT(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
    CU_OK(cuStreamWaitEvent(s2, ev, 0));
    CU_OK(cuLaunchHostFunc(s2, hf_observe, NULL));
    CU_OK(cuStreamSynchronize(s2));
    assert_int_equal(atomic_load(&seen), 2);
    CU_OK(cuEventQuery(ev));
    CU_EXPECT(cuStreamWaitEvent(s2, ev, 7), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuStreamWaitEvent(s2, (CUevent)0x99, 0), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuEventDestroy(ev));
    CU_OK(cuStreamDestroy(s1));
    CU_OK(cuStreamDestroy(s2));
}

static void test_legacy_stream(void **state)
{
    (void)state;
    CUstream blocking, nonblocking;
    CU_OK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
    CU_OK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    unsigned int fl = 99;
    CU_OK(cuStreamGetFlags(nonblocking, &fl));
    assert_int_equal(fl, CU_STREAM_NON_BLOCKING);
    /* legacy-stream work waits for prior work on a blocking stream */
    reset();
    CU_OK(cuLaunchHostFunc(blocking, hf_sleep_set, (void *)3));
    CU_OK(cuLaunchHostFunc(NULL, hf_observe, NULL));
    CU_OK(cuStreamSynchronize(CU_STREAM_LEGACY));
    assert_int_equal(atomic_load(&seen), 3);
    /* ... but not for a non-blocking stream */
    reset();
    CU_OK(cuLaunchHostFunc(nonblocking, hf_wait_release_set, (void *)4)); /* released by the observer */
    CU_OK(cuLaunchHostFunc(CU_STREAM_LEGACY, hf_observe_release, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(atomic_load(&seen), 0);
    CU_OK(cuStreamSynchronize(nonblocking));
    /* synchronising the legacy stream covers blocking streams, not non-blocking ones */
    reset();
    CU_OK(cuLaunchHostFunc(blocking, hf_sleep_set, (void *)33));
    CU_EXPECT(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(atomic_load(&flag_a), 33);
    CU_OK(cuLaunchHostFunc(nonblocking, hf_sleep_set, (void *)34));
    CU_OK(cuStreamQuery(NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(atomic_load(&flag_a), 33);
    CU_OK(cuStreamSynchronize(nonblocking));
    /* blocking-stream work waits for prior legacy-stream work */
    reset();
    CU_OK(cuLaunchHostFunc(NULL, hf_sleep_set, (void *)5));
    CU_OK(cuLaunchHostFunc(blocking, hf_observe, NULL));
    CU_OK(cuStreamSynchronize(blocking));
    assert_int_equal(atomic_load(&seen), 5);
    /* a non-blocking stream does not wait for it */
    reset();
    CU_OK(cuLaunchHostFunc(NULL, hf_wait_release_set, (void *)6)); /* released by the observer */
    CU_OK(cuLaunchHostFunc(nonblocking, hf_observe_release, NULL));
    CU_OK(cuStreamSynchronize(nonblocking));
    assert_int_equal(atomic_load(&seen), 0);
    CU_OK(cuCtxSynchronize());   /* waits for every stream of the context */
    assert_int_equal(atomic_load(&flag_a), 6);
    CU_OK(cuStreamDestroy(blocking));
    CU_OK(cuStreamDestroy(nonblocking));
}

static CUdeviceptr slow_target;

static void hf_slow_device_write(void *arg)   /* a "kernel": writes device memory late */
{
    hc_t_sleep_ms(150);
    *(int *)hostcuda_host_view(slow_target) = (int)(intptr_t)arg;
}

static void test_stale_without_sync(void **state)
{
    (void)state;
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuMemAlloc(&slow_target, 4));
    CU_OK(cuMemsetD32(slow_target, 0, 1));
    CU_OK(cuCtxSynchronize());
    int *pinned;
    CU_OK(cuMemAllocHost((void **)&pinned, 4));
    *pinned = -1;
    CU_OK(cuLaunchHostFunc(s, hf_slow_device_write, (void *)42));
    CU_OK(cuMemcpyDtoHAsync(pinned, slow_target, 4, s));
    /* forgot to synchronise: the pinned buffer has not been written yet */
    assert_int_equal(*(volatile int *)pinned, -1);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*(volatile int *)pinned, 42);
    /* into pageable memory, cuMemcpyDtoHAsync returns only once the copy is done (documented) */
    int pageable = -1;
    CU_OK(cuLaunchHostFunc(s, hf_slow_device_write, (void *)43));
    CU_OK(cuMemcpyDtoHAsync(&pageable, slow_target, 4, s));
    assert_int_equal(pageable, 43);
    /* a legacy-stream synchronous copy does not wait for a non-blocking stream (it reads another
     * buffer, so the test itself has no data race) */
    CUdeviceptr other;
    CU_OK(cuMemAlloc(&other, 4));
    CU_OK(cuMemsetD32(other, 8, 1));
    CU_OK(cuLaunchHostFunc(s, hf_slow_device_write, (void *)44));
    CU_OK(cuMemcpyDtoH(&pageable, other, 4));
    assert_int_equal(pageable, 8);
    CU_EXPECT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemFree(other));
    CU_OK(cuMemcpyDtoH(&pageable, slow_target, 4));
    assert_int_equal(pageable, 44);
    /* pageable -> device copies are staged: the source may change right after the call */
    int src = 5;
    CU_OK(cuMemcpyHtoDAsync(slow_target, &src, 4, s));
    src = 6;
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemcpyDtoH(&pageable, slow_target, 4));
    assert_int_equal(pageable, 5);
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFree(slow_target));
    CU_OK(cuStreamDestroy(s));
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* NVIDIA's "API synchronization behavior": which synchronous copies make the host wait */
static void test_sync_copy_behaviour(void **state)
{
    (void)state;
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, 64));
    CU_OK(cuCtxSynchronize());
    int pageable[4] = {1, 2, 3, 4}, *pinned;
    CU_OK(cuMemAllocHost((void **)&pinned, 16));
    /* pageable -> device: "a stream sync is performed before the copy is initiated", then the
     * source is staged and the call returns (the copy itself may land later) */
    CU_OK(cuLaunchHostFunc(NULL, hf_sleep_set, (void *)1));
    double t0 = now_ms();
    CU_OK(cuMemcpyHtoD(d, pageable, 16));
    double dt = now_ms() - t0;
    if (dt < 100)
        fail_msg("pageable cuMemcpyHtoD returned after %.1f ms, before earlier stream work finished", dt);
    pageable[0] = 99;   /* safe: the source was staged */
    CU_OK(cuCtxSynchronize());
    int back[4];
    CU_OK(cuMemcpyDtoH(back, d, 16));
    assert_int_equal(back[0], 1);
    /* pinned -> device and device -> host: return once the copy is done */
    CU_OK(cuLaunchHostFunc(NULL, hf_sleep_set, (void *)2));
    t0 = now_ms();
    CU_OK(cuMemcpyHtoD(d, pinned, 16));
    dt = now_ms() - t0;
    CU_OK(cuStreamQuery(NULL));
    if (dt < 100)
        fail_msg("pinned cuMemcpyHtoD returned after %.1f ms, before earlier stream work finished", dt);
    CU_OK(cuLaunchHostFunc(NULL, hf_sleep_set, (void *)3));
    t0 = now_ms();
    CU_OK(cuMemcpyDtoH(back, d, 16));
    dt = now_ms() - t0;
    if (dt < 100)
        fail_msg("cuMemcpyDtoH returned after %.1f ms, before its copy could run", dt);
    /* device -> device and memset to device memory: no host synchronisation */
    CU_OK(cuLaunchHostFunc(NULL, hf_sleep_set, (void *)4));
    t0 = now_ms();
    CU_OK(cuMemcpyDtoD(d + 16, d, 16));
    CU_OK(cuMemsetD32(d + 32, 5, 4));
    dt = now_ms() - t0;
    CU_EXPECT(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    if (dt > 100)
        fail_msg("cuMemcpyDtoD/cuMemsetD32 waited %.1f ms", dt);
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemFreeHost(pinned));
    CU_OK(cuMemFree(d));
}

typedef struct {
    CUcontext ctx;
    unsigned long long id;
    CUresult rc;
} ptds_arg;

static void *ptds_thread(void *p)
{
    ptds_arg *a = p;
    a->rc = cuCtxSetCurrent(a->ctx);
    if (!a->rc)
        a->rc = cuStreamGetId(CU_STREAM_PER_THREAD, &a->id);
    return NULL;
}

static void test_per_thread_stream(void **state)
{
    unsigned long long legacy = 0, mine = 0, mine2 = 0;
    CU_OK(cuStreamGetId(CU_STREAM_LEGACY, &legacy));
    CU_OK(cuStreamGetId(CU_STREAM_PER_THREAD, &mine));
    CU_OK(cuStreamGetId(CU_STREAM_PER_THREAD, &mine2));
    assert_true(legacy != mine);
    assert_int_equal(mine, mine2);
    ptds_arg a = {*state, 0, CUDA_ERROR_UNKNOWN};
    pthread_t t;
    pthread_create(&t, NULL, ptds_thread, &a);
    pthread_join(t, NULL);
    CU_OK(a.rc);
    assert_true(a.id != mine && a.id != legacy);
    /* the _ptsz variants treat NULL as the per-thread stream; work there is asynchronous */
    CUresult (*host_ptsz)(CUstream, CUhostFn, void *);
    CUresult (*query_ptsz)(CUstream);
    CU_OK(cuGetProcAddress("cuLaunchHostFunc", (void **)&host_ptsz, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    CU_OK(cuGetProcAddress("cuStreamQuery", (void **)&query_ptsz, 13000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    hostcuda_reset_call_counts();
    reset();
    CU_OK(host_ptsz(NULL, hf_sleep_set, (void *)7));
    assert_int_equal(hostcuda_call_count("cuLaunchHostFunc_ptsz"), 1);
    assert_int_equal(hostcuda_call_count("cuLaunchHostFunc"), 0);
    CU_EXPECT(query_ptsz(NULL), CUDA_ERROR_NOT_READY);
    CU_EXPECT(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
    /* the per-thread stream is a blocking stream: the legacy stream waits for it */
    CU_OK(cuLaunchHostFunc(NULL, hf_observe, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(atomic_load(&seen), 7);
}

static void test_events(void **state)
{
    (void)state;
    CUevent a, b, nt;
    CU_OK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    CU_OK(cuEventCreate(&b, CU_EVENT_BLOCKING_SYNC));
    CU_OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
    CU_EXPECT(cuEventCreate(&a, 0x100), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuEventCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    float ms = -1;
    CU_OK(cuEventQuery(a));   /* never recorded: complete */
    CU_EXPECT(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_INVALID_HANDLE);
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    CU_OK(cuEventRecord(a, s));
    CU_OK(cuLaunchHostFunc(s, hf_sleep_set, (void *)1));
    CU_OK(cuEventRecordWithFlags(b, s, 0));
    CU_OK(cuEventRecord(nt, s));
    CU_EXPECT(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_NOT_READY);
    CU_OK(cuEventSynchronize(b));
    CU_OK(cuEventElapsedTime(&ms, a, b));
    if (ms < 140.0f || ms > 5000.0f)
        fail_msg("elapsed %.3f ms around a 150 ms host function", (double)ms);
    CU_EXPECT(cuEventElapsedTime(&ms, a, nt), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuEventElapsedTime(NULL, a, b), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuEventRecord(a, (CUstream)0x1234), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuEventRecordWithFlags(a, s, 0x80), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuEventDestroy(a));
    CU_EXPECT(cuEventDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuEventQuery(a), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuEventSynchronize(a), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuEventDestroy(b));
    CU_OK(cuEventDestroy(nt));
    CU_OK(cuStreamDestroy(s));
}

static void cb_record(CUstream h, CUresult status, void *user)
{
    *(CUstream *)user = h;
    atomic_store(&seen, (int)status);
}

static void test_stream_handles(void **state)
{
    CUcontext ctx = *state, got;
    CUstream s, s2;
    CU_OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
    int prio = 0, least, greatest;
    CU_OK(cuStreamGetPriority(s, &prio));
    assert_int_equal(prio, -3);
    CU_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
    assert_true(greatest <= prio && prio <= least);
    CU_OK(cuStreamCreateWithPriority(&s2, 0, -100));   /* clamped */
    CU_OK(cuStreamGetPriority(s2, &prio));
    assert_int_equal(prio, greatest);
    CU_OK(cuStreamGetCtx(s, &got));
    assert_ptr_equal(got, ctx);
    CU_OK(cuStreamGetCtx(NULL, &got));
    assert_ptr_equal(got, ctx);
    CUstream who = NULL;
    atomic_store(&seen, -1);
    CU_OK(cuStreamAddCallback(s, cb_record, &who, 0));
    CU_OK(cuStreamSynchronize(s));
    assert_ptr_equal(who, s);
    assert_int_equal(atomic_load(&seen), CUDA_SUCCESS);
    CU_EXPECT(cuStreamAddCallback(s, cb_record, &who, 1), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuStreamCreate(&s2, 0x8), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuStreamCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    CU_EXPECT(cuStreamGetFlags(s, NULL), CUDA_ERROR_INVALID_VALUE);
    /* destroying a busy stream returns at once; its work still completes */
    reset();
    CU_OK(cuLaunchHostFunc(s, hf_sleep_set, (void *)9));
    CU_OK(cuStreamDestroy(s));
    CU_EXPECT(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuStreamGetCtx(s, &got), CUDA_ERROR_INVALID_HANDLE);
    for (int i = 0; i < 100 && atomic_load(&flag_a) != 9; i++)
        hc_t_sleep_ms(10);
    assert_int_equal(atomic_load(&flag_a), 9);
    CU_OK(cuStreamDestroy(s2));
    /* no context: the NULL stream has nothing to resolve to */
    CU_OK(cuCtxPopCurrent(&got));
    CU_EXPECT(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
    CU_EXPECT(cuStreamCreate(&s2, 0), CUDA_ERROR_INVALID_CONTEXT);
    CU_OK(cuCtxPushCurrent(got));
}

/* contexts clean up their streams: destroying a context with queued work waits for it */
static void test_context_teardown(void **state)
{
    CUcontext mine, cur = *state;
    CU_OK(cuCtxCreate(&mine, NULL, 0, 1));
    CUstream s;
    CU_OK(cuStreamCreate(&s, 0));
    reset();
    CU_OK(cuLaunchHostFunc(s, hf_sleep_set, (void *)11));
    CUevent ev;
    CU_OK(cuEventCreate(&ev, 0));
    CU_OK(cuCtxDestroy(mine));
    assert_int_equal(atomic_load(&flag_a), 11);
    CU_EXPECT(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
    CU_EXPECT(cuEventQuery(ev), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuCtxSetCurrent(cur));
}

int main(int argc, char **argv)
{
    (void)argc;
    hc_t_init(argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_and_query),
        cmocka_unit_test(test_event_wait),
        cmocka_unit_test(test_legacy_stream),
        cmocka_unit_test(test_stale_without_sync),
        cmocka_unit_test(test_sync_copy_behaviour),
        cmocka_unit_test(test_per_thread_stream),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_stream_handles),
        cmocka_unit_test(test_context_teardown),
    };
    return cmocka_run_group_tests_name("hostcuda streams", tests, hc_t_setup_primary, hc_t_teardown_primary);
}
