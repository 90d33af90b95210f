/* test_hc_async — hostcuda's PTX interpreter on asynchronous copies, mbarriers, brx.idx and a
 * device function's static shared array (tests/hostcuda/async_kernels.cu, PTX for compute_80).
 * Property: a double-buffered cuda::pipeline GEMM and a two-stage 16-byte cp.async reduction give
 * the host's results exactly (small integers in float); a read of a cp.async destination before
 * its wait sees the old contents (the copy is deferred to the wait, as a racy program may see on
 * a GPU) and src-size zero-fills the rest; a cuda::barrier-tracked block copy, an mbarrier
 * producer/consumer ring across warps (test_wait and try_wait) and a walk through arrive /
 * noComplete / arrive_drop / expect_tx / complete_tx / pending_count give the PTX ISA's values;
 * brx.idx sends each lane to its table entry; a __device__ function's static __shared__ array
 * works from two kernels without overlapping a kernel's own; bulk copies (cp.async.bulk, no tensor
 * map) into shared memory on an mbarrier's transaction count and back to global memory in a bulk
 * group move the bytes, each visible only after its wait.
 * Usage: test_hc_async PTXFILE [CASE]   (no CASE: every non-fault case; TEST_HC_ASYNC_CONTROL=1
 *        changes one expected value, which must fail). Fault cases: deadlock_test, deadlock_try
 *        (print the launch's result; test_hc_async.sh checks it and the hostcuda: line).
 * Exit 0 pass, 1 fail. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_hc_check.h"

static void case_gemm(void)
{
    enum { M = 48, N = 32, K = 64, T = 16 };
    static float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 5 - 2);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 3) % 7 - 3);
    CUdeviceptr da = dalloc(sizeof a), db = dalloc(sizeof b), dc = dalloc(sizeof c);
    CK(cuMemcpyHtoD(da, a, sizeof a));
    CK(cuMemcpyHtoD(db, b, sizeof b));
    int n = N, k = K;
    void *args[] = {&da, &db, &dc, &n, &k};
    CK(cuLaunchKernel(fn("as_gemm"), N / T, M / T, 1, T, T, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int q = 0; q < K; q++)
                want += a[i * K + q] * b[q * N + j];
            if (i == 5 && j == 7 && getenv("TEST_HC_ASYNC_CONTROL"))
                want += 1;   /* the negative control: this expectation is wrong on purpose */
            char what[64];
            snprintf(what, sizeof what, "as_gemm C[%d][%d]", i, j);
            EXPECT_EQ(what, c[i * N + j], want);
        }
    cuMemFree(da);
    cuMemFree(db);
    cuMemFree(dc);
}

static void case_reduce(void)
{
    enum { B = 3, CH = 5, NI = B * CH * 128 * 4 };
    static int x[NI];
    int out[B];
    for (int i = 0; i < NI; i++)
        x[i] = (i * 31) % 17 - 8;
    CUdeviceptr dx = dalloc(sizeof x), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    int ch = CH;
    void *args[] = {&dx, &dout, &ch};
    CK(cuLaunchKernel(fn("as_reduce"), B, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int b = 0; b < B; b++) {
        int want = 0;
        for (int i = b * CH * 512; i < (b + 1) * CH * 512; i++)
            want += x[i];
        char what[64];
        snprintf(what, sizeof what, "as_reduce block %d", b);
        EXPECT_EQ(what, out[b], want);
    }
    cuMemFree(dx);
    cuMemFree(dout);
}

static void case_stale(void)
{
    int in[320], out[256];
    for (int i = 0; i < 320; i++)
        in[i] = 100 + i;
    CUdeviceptr din = dalloc(sizeof in), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(din, in, sizeof in));
    void *args[] = {&din, &dout};
    CK(cuLaunchKernel(fn("as_stale"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int t = 0; t < 64; t++) {
        char what[80];
        snprintf(what, sizeof what, "as_stale thread %d: destination read before the wait", t);
        EXPECT_EQ(what, out[4 * t], -1);
        snprintf(what, sizeof what, "as_stale thread %d: after the wait", t);
        EXPECT_EQ(what, out[4 * t + 1], in[t]);
        snprintf(what, sizeof what, "as_stale thread %d: zero-fill copy, copied part", t);
        EXPECT_EQ(what, out[4 * t + 2], in[64 + 4 * t + 1]);
        snprintf(what, sizeof what, "as_stale thread %d: zero-fill copy, filled part", t);
        EXPECT_EQ(what, out[4 * t + 3], 0);
    }
    cuMemFree(din);
    cuMemFree(dout);
}

static void case_barrier_copy(void)
{
    float in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (float)(i * 3 + 1);
    CUdeviceptr din = dalloc(sizeof in), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(din, in, sizeof in));
    void *args[] = {&din, &dout};
    CK(cuLaunchKernel(fn("as_barrier_copy"), 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int t = 0; t < 256; t++) {
        char what[64];
        snprintf(what, sizeof what, "as_barrier_copy thread %d", t);
        EXPECT_EQ(what, out[t], in[255 - t]);
    }
    cuMemFree(din);
    cuMemFree(dout);
}

static void case_mbar_pc(int use_try)
{
    enum { R = 9 };
    int out[65];
    CUdeviceptr d = dalloc(sizeof out);
    int rounds = R;
    void *args[] = {&d, &rounds, &use_try};
    CK(cuLaunchKernel(fn("as_mbar_pc"), 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int c = 0; c < 64; c++) {
        int want = 0;
        for (int r = 0; r < R; r++)
            want += r * 1000 + c;
        char what[64];
        snprintf(what, sizeof what, "as_mbar_pc (%s) consumer %d sum", use_try ? "try_wait" : "test_wait", c);
        EXPECT_EQ(what, out[c], want);
    }
    EXPECT_EQ(use_try ? "as_mbar_pc (try_wait) saw an unfilled slot" : "as_mbar_pc (test_wait) saw an unfilled slot",
              out[64], 0);
    cuMemFree(d);
}

static void case_mbar_ops(void)
{
    static const unsigned want[8] = {2, 1, 0, 1, 0, 1, 0, 1};
    static const char *const step[8] = {
        "pending after arrive.noComplete of 3", "pending after arrive_drop", "phase 0 with tx bytes outstanding",
        "phase 0 after complete_tx", "phase 1 just begun", "test_wait of phase 0's state",
        "phase 1 with tx bytes outstanding", "phase 1 after complete_tx"};
    unsigned out[8];
    CUdeviceptr d = dalloc(sizeof out);
    CK(cuMemsetD32(d, 0xdead, 8));
    void *args[] = {&d};
    CK(cuLaunchKernel(fn("as_mbar_ops"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int i = 0; i < 8; i++) {
        char what[96];
        snprintf(what, sizeof what, "as_mbar_ops %s", step[i]);
        EXPECT_EQ(what, out[i], want[i]);
    }
    cuMemFree(d);
}

static void case_switch(void)
{
    enum { T = 64 };
    unsigned in[T];
    int out[T];
    for (int t = 0; t < T; t++)
        in[t] = (unsigned)((t * 5) % 8);   /* 0..7: 6 and 7 take the default */
    CUdeviceptr din = dalloc(sizeof in), dout = dalloc(sizeof out);
    CK(cuMemcpyHtoD(din, in, sizeof in));
    void *args[] = {&din, &dout};
    CK(cuLaunchKernel(fn("as_switch"), 1, 1, 1, T, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int t = 0; t < T; t++) {
        unsigned v = in[t];
        int r = v == 0 ? 11 : v == 1 ? 23 : v == 2 ? 37 : v == 3 ? (int)v * 41 : v == 4 ? 59 : v == 5 ? (int)v + 1000 : -1;
        char what[64];
        snprintf(what, sizeof what, "as_switch thread %d (index %u)", t, v);
        EXPECT_EQ(what, out[t], r + t);
    }
    cuMemFree(din);
    cuMemFree(dout);
}

static void case_func_shared(void)
{
    enum { T = 128 };
    int out[2 * T];
    CUdeviceptr d = dalloc(sizeof out);
    void *args[] = {&d};
    CK(cuLaunchKernel(fn("as_fs1"), 1, 1, 1, T, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof(int) * T));
    for (int t = 0; t < T; t++) {
        char what[64];
        snprintf(what, sizeof what, "as_fs1 thread %d", t);
        EXPECT_EQ(what, out[t], ((t + 1) % T) * 3);
    }
    CK(cuLaunchKernel(fn("as_fs2"), 1, 1, 1, T, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, d, sizeof out));
    for (int t = 0; t < T; t++) {
        char what[64];
        snprintf(what, sizeof what, "as_fs2 thread %d", t);
        EXPECT_EQ(what, out[t], (t + 1) % T + 500);
        snprintf(what, sizeof what, "as_fs2 thread %d: the kernel's own array", t);
        EXPECT_EQ(what, out[T + t], 7000 + t);
    }
    cuMemFree(d);
}

static void case_bulk(void)
{
    enum { N = 96 };
    int in[N * 4], out[N * 4], flags[3];
    for (int i = 0; i < N * 4; i++)
        in[i] = i * 5 - 17;
    CUdeviceptr din = dalloc(sizeof in), dout = dalloc(sizeof out), dfl = dalloc(sizeof flags);
    CK(cuMemcpyHtoD(din, in, sizeof in));
    CK(cuMemsetD32(dout, 0x77777777, N * 4));
    int n = N;
    void *args[] = {&din, &dout, &dfl, &n};
    CK(cuLaunchKernel(fn("as_bulk"), 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, sizeof out));
    CK(cuMemcpyDtoH(flags, dfl, sizeof flags));
    for (int i = 0; i < N * 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "as_bulk out[%d]", i);
        EXPECT_EQ(what, out[i], in[i] + (i % 4 == 0 ? 1000 : 0));
    }
    EXPECT_EQ("as_bulk shared destination read before the mbarrier wait", flags[0], -7);
    EXPECT_EQ("as_bulk global destination read before the bulk group's wait", flags[1], 0x77777777);
    EXPECT_EQ("as_bulk global destination after the wait", flags[2], in[0] + 1000);
    cuMemFree(din);
    cuMemFree(dout);
    cuMemFree(dfl);
}

static void case_deadlock(int use_try)
{
    void *args[] = {&use_try};
    const char *en = "?";
    CUresult rc = cuLaunchKernel(fn("as_mbar_deadlock"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
    if (rc == CUDA_SUCCESS)
        rc = cuCtxSynchronize();
    cuGetErrorName(rc, &en);
    printf("launch: %s\n", en);
}

int main(int argc, char **argv)
{
    start(argc, "test_hc_async PTXFILE [CASE]");
    CK(cuModuleLoad(&mod, argv[1]));
    if (argc > 2) {
        if (!strcmp(argv[2], "deadlock_test") || !strcmp(argv[2], "deadlock_try")) {
            case_deadlock(!strcmp(argv[2], "deadlock_try"));
            return 0;
        }
        fprintf(stderr, "test_hc_async: unknown case %s\n", argv[2]);
        return 2;
    }
    case_gemm();
    case_reduce();
    case_stale();
    case_barrier_copy();
    case_mbar_pc(0);
    case_mbar_pc(1);
    case_mbar_ops();
    case_switch();
    case_func_shared();
    case_bulk();
    printf("%s: %d failures\n", fails ? "FAIL" : "PASS", fails);
    return fails ? 1 : 0;
}
