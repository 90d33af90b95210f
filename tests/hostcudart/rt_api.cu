/* rt_api.cu — an ordinary runtime-API program (nvcc -cudart shared) that checks hostcudart's
 * semantics, one case per argument: launch (two fatbins, <<<>>> and cudaLaunchKernel), symbol
 * (__cudaRegisterVar + cudaMemcpyToSymbol/FromSymbol/GetSymbolAddress), errors (non-sticky
 * errors and the cudaGetLastError reset), sticky (run with fault_inject.so: HCRT_TEST_FAULT),
 * fault (a kernel's illegal address, where the driver runs kernels from their PTX),
 * ctx (a context the program made with cuCtxCreate, then runtime calls inside it), graph
 * (stream capture, instantiate, replay; a stream callback), threads (per-thread device, launches
 * and last error), unimpl,
 * props (properties and occupancy), memory (host/managed/advice/streams/events/reset),
 * ptsz (the per-thread default stream; built a second time with --default-stream per-thread).
 * Each check prints `ok CASE: what` or `FAIL CASE: what: expected X, got Y`; exit 1 on any FAIL. */
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>

#include "rt_kernels_a.cu"
#include "rt_expect.h"

#ifdef __CUDACC__
__device__ int rt_gv[4];
__constant__ float rt_cv[2];
#endif
void rt_add_launch(int *p, int v, int n, cudaStream_t s);
extern "C" unsigned long long hostcuda_call_count(const char *exported_symbol) __attribute__((weak));


/* the index of the first element of d[0..n) that is not first + i, or -1 */
static int check_seq(int *d, int n, int first)
{
    int *h = (int *)malloc(n * sizeof(int));
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (h[i] != first + i)
            bad = i;
    free(h);
    return bad;
}

static void t_launch(void)
{
    int *d = NULL, n = 100;
    EXPECT_RT("cudaMalloc", cudaSuccess, cudaMalloc(&d, n * sizeof(int)));
    rt_fill<<<2, 64>>>(d, 7, n);
    EXPECT_RT("<<<>>> launch from the first fatbin", cudaSuccess, cudaGetLastError());
    rt_add_launch(d, 1000, n, 0);
    EXPECT_RT("<<<>>> launch from the second fatbin", cudaSuccess, cudaGetLastError());
    EXPECT_EQ("first wrong element after fill+add (-1: none)", -1, check_seq(d, n, 1007));
    int v = 5;
    void *args[] = {&d, &v, &n};
    EXPECT_RT("cudaLaunchKernel", cudaSuccess, cudaLaunchKernel((const void *)rt_fill, dim3(1), dim3(32), args, 0, 0));
    EXPECT_RT("cudaDeviceSynchronize", cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ("first wrong element after cudaLaunchKernel (-1: none)", -1, check_seq(d, n, 5));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(2);
    cfg.blockDim = dim3(16);
    EXPECT_RT("cudaLaunchKernelEx", cudaSuccess, cudaLaunchKernelEx(&cfg, rt_fill, d, 40, n));
    EXPECT_RT("cudaDeviceSynchronize", cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ("first wrong element after cudaLaunchKernelEx (-1: none)", -1, check_seq(d, n, 40));
    cfg.blockDim = dim3(2048);
    EXPECT_RT("cudaLaunchKernelEx with 2048 threads a block", cudaErrorInvalidConfiguration,
              cudaLaunchKernelEx(&cfg, rt_fill, d, 40, n));
    cudaGetLastError();
    EXPECT_RT("cudaLaunchKernel of a host function that is no kernel", cudaErrorInvalidDeviceFunction,
              cudaLaunchKernel((const void *)check_seq, dim3(1), dim3(1), args, 0, 0));
    cudaFuncAttributes fa;
    EXPECT_RT("cudaFuncGetAttributes", cudaSuccess, cudaFuncGetAttributes(&fa, (const void *)rt_fill));
    EXPECT_EQ("maxThreadsPerBlock", 1024, fa.maxThreadsPerBlock);
    EXPECT_RT("cudaFuncSetAttribute max dynamic smem", cudaSuccess,
              cudaFuncSetAttribute((const void *)rt_fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    EXPECT_RT("cudaFree", cudaSuccess, cudaFree(d));
}

static void t_symbol(void)
{
    int in[4] = {11, 22, 33, 44}, out[4] = {0, 0, 0, 0};
    EXPECT_RT("cudaMemcpyToSymbol", cudaSuccess, cudaMemcpyToSymbol(rt_gv, in, sizeof in));
    EXPECT_RT("cudaMemcpyFromSymbol", cudaSuccess, cudaMemcpyFromSymbol(out, rt_gv, sizeof out));
    EXPECT_EQ("round trip element 3", 44, out[3]);
    int two[2] = {7, 8};
    EXPECT_RT("cudaMemcpyToSymbol at offset 8", cudaSuccess, cudaMemcpyToSymbol(rt_gv, two, 8, 8));
    int *addr = NULL;
    EXPECT_RT("cudaGetSymbolAddress", cudaSuccess, cudaGetSymbolAddress((void **)&addr, rt_gv));
    EXPECT_RT("cudaMemcpy from the symbol's address", cudaSuccess, cudaMemcpy(out, addr, 16, cudaMemcpyDeviceToHost));
    EXPECT_EQ("element 1 / element 2", 22 * 1000 + 7, out[1] * 1000 + out[2]);
    size_t sz = 0;
    EXPECT_RT("cudaGetSymbolSize", cudaSuccess, cudaGetSymbolSize(&sz, rt_gv));
    EXPECT_EQ("size of rt_gv", 16, sz);
    EXPECT_RT("__constant__ symbol", cudaSuccess, cudaGetSymbolSize(&sz, rt_cv));
    EXPECT_EQ("size of rt_cv", 8, sz);
    EXPECT_RT("copy past the symbol's end", cudaErrorInvalidValue, cudaMemcpyToSymbol(rt_gv, in, 16, 4));
    static int not_a_symbol;
    EXPECT_RT("an unregistered host address", cudaErrorInvalidSymbol, cudaGetSymbolSize(&sz, &not_a_symbol));
    EXPECT_RT("to-symbol with a device-to-host kind", cudaErrorInvalidMemcpyDirection,
              cudaMemcpyToSymbol(rt_gv, in, 4, 0, cudaMemcpyDeviceToHost));
    cudaGetLastError();
}

static void t_errors(void)
{
    EXPECT_RT("no error yet", cudaSuccess, cudaGetLastError());
    int *d;
    cudaMalloc(&d, 64);
    rt_fill<<<1, 2048>>>(d, 0, 16); /* more threads per block than the device has */
    EXPECT_RT("peek after a bad launch", cudaErrorInvalidConfiguration, cudaPeekAtLastError());
    EXPECT_RT("peek does not reset", cudaErrorInvalidConfiguration, cudaPeekAtLastError());
    EXPECT_RT("get returns it", cudaErrorInvalidConfiguration, cudaGetLastError());
    EXPECT_RT("get reset it", cudaSuccess, cudaGetLastError());
    EXPECT_RT("not sticky: the next call works", cudaSuccess, cudaMemset(d, 0, 64));
    EXPECT_RT("bad memcpy kind", cudaErrorInvalidMemcpyDirection, cudaMemcpy(d, d, 4, (cudaMemcpyKind)77));
    EXPECT_RT("bad device", cudaErrorInvalidDevice, cudaSetDevice(4096));
    EXPECT_RT("last error is the latest", cudaErrorInvalidDevice, cudaGetLastError());
    EXPECT_RT("a null pointer to cudaMalloc", cudaErrorInvalidValue, cudaMalloc(NULL, 4));
    cudaGetLastError();
    EXPECT_EQ("cudaGetErrorName(cudaSuccess)", 0, strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess"));
    EXPECT_EQ("cudaGetErrorName(cudaErrorInvalidValue)", 0, strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue"));
    EXPECT_EQ("cudaGetErrorName(cudaErrorNotSupported)", 0, strcmp(cudaGetErrorName(cudaErrorNotSupported), "cudaErrorNotSupported"));
    EXPECT_EQ("cudaGetErrorName of no error code", 0, strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code"));
    EXPECT_EQ("cudaGetErrorString of no error code", 0, strcmp(cudaGetErrorString((cudaError_t)12345), "unrecognized error code"));
    EXPECT_EQ("cudaGetErrorString(cudaSuccess)", 0, strcmp(cudaGetErrorString(cudaSuccess), "no error"));
    EXPECT_EQ("cudaGetErrorString(cudaErrorInvalidConfiguration)", 0,
              strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument"));
    cudaFree(d);
}

/* run with fault_inject.so and HCRT_TEST_FAULT=<CUresult>: cuCtxSynchronize rt_fails with it */
static void t_sticky(void)
{
    int expect = atoi(getenv("HCRT_TEST_FAULT") ? getenv("HCRT_TEST_FAULT") : "0");
    int sticky = expect == 700 || expect == 719;
    int *d;
    EXPECT_RT("before the fault", cudaSuccess, cudaMalloc(&d, 64));
    EXPECT_RT("the failing synchronize", (cudaError_t)expect, cudaDeviceSynchronize());
    EXPECT_RT("cudaGetLastError returns it", (cudaError_t)expect, cudaGetLastError());
    EXPECT_RT(sticky ? "sticky: cudaGetLastError returns it again" : "not sticky: reset",
              sticky ? (cudaError_t)expect : cudaSuccess, cudaGetLastError());
    EXPECT_RT(sticky ? "sticky: the next call rt_fails with it" : "not sticky: the next call works",
              sticky ? (cudaError_t)expect : cudaSuccess, cudaMemset(d, 0, 64));
    /* another thread that has made no call yet: a sticky error is its error too */
    cudaError_t other = cudaErrorUnknown;
    std::thread([&other] { other = cudaPeekAtLastError(); }).join();
    EXPECT_RT(sticky ? "sticky: another thread sees it" : "not sticky: another thread has no error",
              sticky ? (cudaError_t)expect : cudaSuccess, other);
}

/* a kernel that faults (an illegal address) when the driver runs it from its PTX: sticky */
static void t_fault(void)
{
    int *d;
    EXPECT_RT("before the fault", cudaSuccess, cudaMalloc(&d, 64));
    rt_poke<<<1, 1>>>((int *)(uintptr_t)0x10, 1);
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT_RT("the faulting kernel: cudaDeviceSynchronize", cudaErrorIllegalAddress, e);
    EXPECT_RT("cudaGetLastError returns it", cudaErrorIllegalAddress, cudaGetLastError());
    EXPECT_RT("and again (sticky)", cudaErrorIllegalAddress, cudaGetLastError());
    EXPECT_RT("the next call rt_fails with it", cudaErrorIllegalAddress, cudaMalloc(&d, 64));
    EXPECT_RT("cudaDeviceReset does not clear it", cudaErrorIllegalAddress, cudaDeviceReset());
}

static void t_ctx(void)
{
    int n = 0;
    EXPECT_RT("cudaGetDeviceCount", cudaSuccess, cudaGetDeviceCount(&n));
    int want = n >= 2 ? 1 : 0; /* another device than the runtime's default where there is one */
    CUdevice dev1;
    CUcontext mine = NULL, now = NULL;
    EXPECT_EQ("cuInit", CUDA_SUCCESS, cuInit(0));
    EXPECT_EQ("cuDeviceGet", CUDA_SUCCESS, cuDeviceGet(&dev1, want));
    EXPECT_EQ("cuCtxCreate", CUDA_SUCCESS, cuCtxCreate(&mine, NULL, 0, dev1));
    int rdev = -1;
    EXPECT_RT("cudaGetDevice", cudaSuccess, cudaGetDevice(&rdev));
    EXPECT_EQ("the runtime's device is the context's", want, rdev);
    int *d = NULL;
    EXPECT_RT("cudaMalloc inside it", cudaSuccess, cudaMalloc(&d, 256));
    int ord = -1;
    cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)d);
    EXPECT_EQ("the allocation is on the context's device", want, ord);
    CUcontext owner = NULL;
    cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)d);
    EXPECT_EQ("the allocation belongs to the program's context", 1, owner == mine);
    rt_fill<<<1, 64>>>(d, 3, 64);
    EXPECT_RT("a launch inside it", cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ("first wrong element (-1: none)", -1, check_seq(d, 64, 3));
    cuCtxGetCurrent(&now);
    EXPECT_EQ("the program's context is still current", 1, now == mine);
    cudaFree(d);
    EXPECT_EQ("cuCtxDestroy", CUDA_SUCCESS, cuCtxDestroy(mine));
    cuCtxGetCurrent(&now);
    EXPECT_EQ("no context after destroy", 1, now == NULL);
    EXPECT_RT("the runtime falls back to the primary context", cudaSuccess, cudaMalloc(&d, 64));
    cuCtxGetCurrent(&now);
    CUcontext prim = NULL;
    CUdevice dev0;
    cuDeviceGet(&dev0, 0);
    cuDevicePrimaryCtxRetain(&prim, dev0);
    EXPECT_EQ("the current context is device 0's primary", 1, now == prim && now != NULL && now != mine);
    cuDevicePrimaryCtxRelease(dev0);
    rt_fill<<<1, 32>>>(d, 9, 16);
    EXPECT_RT("a launch there", cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ("first wrong element (-1: none)", -1, check_seq(d, 16, 9));
}

static void CUDART_CB on_done(cudaStream_t s, cudaError_t status, void *user)
{
    (void)s;
    *(int *)user = status == cudaSuccess ? 1 : -1;
}

/* stream capture -> a graph -> replays; a stream callback */
static void t_graph(void)
{
    cudaStream_t s;
    int *d = NULL, n = 64;
    EXPECT_RT("cudaStreamCreateWithFlags", cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    EXPECT_RT("cudaMalloc", cudaSuccess, cudaMalloc(&d, n * sizeof(int)));
    EXPECT_RT("cudaMemsetAsync on s", cudaSuccess, cudaMemsetAsync(d, 0, n * sizeof(int), s));
    EXPECT_RT("cudaStreamSynchronize", cudaSuccess, cudaStreamSynchronize(s));
    EXPECT_RT("cudaStreamBeginCapture", cudaSuccess, cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    EXPECT_RT("cudaStreamIsCapturing", cudaSuccess, cudaStreamIsCapturing(s, &cs));
    EXPECT_EQ("capturing", cudaStreamCaptureStatusActive, cs);
    rt_fill<<<1, 64, 0, s>>>(d, 5, n);
    rt_add_launch(d, 100, n, s);
    cudaGraph_t g = NULL;
    EXPECT_RT("cudaStreamEndCapture", cudaSuccess, cudaStreamEndCapture(s, &g));
    cudaStreamIsCapturing(s, &cs);
    EXPECT_EQ("no longer capturing", cudaStreamCaptureStatusNone, cs);
    EXPECT_EQ("nothing ran while capturing (first element still 0)", 0, check_seq(d, n, 105) == 0 ? 0 : 1);
    cudaGraphExec_t ge = NULL;
    EXPECT_RT("cudaGraphInstantiate", cudaSuccess, cudaGraphInstantiate(&ge, g, 0));
    EXPECT_RT("cudaGraphLaunch", cudaSuccess, cudaGraphLaunch(ge, s));
    EXPECT_RT("cudaStreamSynchronize", cudaSuccess, cudaStreamSynchronize(s));
    EXPECT_EQ("first wrong element after the graph (-1: none)", -1, check_seq(d, n, 105));
    /* on s itself: s is non-blocking, a legacy-stream memset would race with the replay */
    cudaMemsetAsync(d, 0, n * sizeof(int), s);
    EXPECT_RT("cudaGraphLaunch again", cudaSuccess, cudaGraphLaunch(ge, s));
    cudaStreamSynchronize(s);
    EXPECT_EQ("first wrong element after the replay (-1: none)", -1, check_seq(d, n, 105));
    int done = 0;
    EXPECT_RT("cudaStreamAddCallback", cudaSuccess, cudaStreamAddCallback(s, on_done, &done, 0));
    cudaStreamSynchronize(s);
    EXPECT_EQ("the callback ran with cudaSuccess", 1, done);
    EXPECT_RT("cudaGraphExecDestroy", cudaSuccess, cudaGraphExecDestroy(ge));
    EXPECT_RT("cudaGraphDestroy", cudaSuccess, cudaGraphDestroy(g));
    EXPECT_RT("cudaStreamDestroy", cudaSuccess, cudaStreamDestroy(s));
    cudaFree(d);
}

/* per-thread runtime state: each thread its own device, launches and last error */
static void t_threads(void)
{
    int ndev = 0;
    cudaGetDeviceCount(&ndev);
    const int nt = 4;
    int bad[nt], dev_seen[nt];
    cudaError_t last[nt];
    std::thread th[nt];
    for (int i = 0; i < nt; i++)
        th[i] = std::thread([&, i] {
            int *d = NULL, n = 256;
            bad[i] = -2;
            if (cudaSetDevice(i % ndev) != cudaSuccess || cudaMalloc(&d, n * sizeof(int)) != cudaSuccess)
                return;
            if (i == 1)
                rt_fill<<<1, 4096>>>(d, 0, n); /* a bad launch in thread 1 only */
            for (int rep = 0; rep < 20; rep++)
                rt_fill<<<2, 64>>>(d, 1000 * i + rep, n);
            cudaDeviceSynchronize();
            bad[i] = check_seq(d, n, 1000 * i + 19);
            cudaGetDevice(&dev_seen[i]);
            last[i] = cudaGetLastError();
            cudaFree(d);
        });
    for (int i = 0; i < nt; i++)
        th[i].join();
    for (int i = 0; i < nt; i++) {
        char what[96];
        snprintf(what, sizeof what, "thread %d: first wrong element (-1: none)", i);
        EXPECT_EQ(what, -1, bad[i]);
        snprintf(what, sizeof what, "thread %d: its own device", i);
        EXPECT_EQ(what, i % ndev, dev_seen[i]);
        snprintf(what, sizeof what, "thread %d: its own last error", i);
        EXPECT_RT(what, i == 1 ? cudaErrorInvalidConfiguration : cudaSuccess, last[i]);
    }
    EXPECT_RT("the main thread has no error", cudaSuccess, cudaGetLastError());
}

static void t_unimpl(void)
{
    cudaGraphNode_t n;
    EXPECT_RT("cudaGraphAddEventRecordNode", cudaErrorNotSupported, cudaGraphAddEventRecordNode(&n, NULL, NULL, 0, NULL));
    EXPECT_RT("cudaGraphAddEventRecordNode again", cudaErrorNotSupported,
              cudaGraphAddEventRecordNode(&n, NULL, NULL, 0, NULL));
    EXPECT_RT("recorded as the last error", cudaErrorNotSupported, cudaGetLastError());
    cudaMipmappedArray_t a;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    EXPECT_EQ("cudaCreateChannelDesc", 32, desc.x);
    EXPECT_RT("cudaMallocMipmappedArray", cudaErrorNotSupported,
              cudaMallocMipmappedArray(&a, &desc, make_cudaExtent(4, 4, 0), 2, 0));
}

static void t_props(void)
{
    cudaDeviceProp p;
    EXPECT_RT("cudaGetDeviceProperties", cudaSuccess, cudaGetDeviceProperties(&p, 0));
    int sms = -1, tpm = -1;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&tpm, cudaDevAttrMaxThreadsPerMultiProcessor, 0);
    EXPECT_EQ("multiProcessorCount = the attribute", sms, p.multiProcessorCount);
    EXPECT_EQ("maxThreadsPerMultiProcessor", 2048, p.maxThreadsPerMultiProcessor);
    EXPECT_EQ("= the attribute", tpm, p.maxThreadsPerMultiProcessor);
    EXPECT_EQ("compute capability", 90, p.major * 10 + p.minor);
    EXPECT_EQ("warpSize", 32, p.warpSize);
    EXPECT_EQ("name is set", 1, p.name[0] != 0);
    printf("sms %d\n", p.multiProcessorCount);
    EXPECT_RT("properties of a device that is not there", cudaErrorInvalidDevice, cudaGetDeviceProperties(&p, 4096));
    /* the occupancy model hostcuda states (tests/hostcuda/hc_occupancy.c), written out again here:
     * per SM 2048 threads, 32 blocks, 65536 registers allocated per warp in units of 256,
     * 233472 B shared memory with 1024 B reserved per block */
    cudaFuncAttributes fa;
    EXPECT_RT("cudaFuncGetAttributes", cudaSuccess, cudaFuncGetAttributes(&fa, (const void *)rt_fill));
    int regs = fa.numRegs > 0 ? fa.numRegs : 32;
    printf("rt_fill: %d registers, %zu B static shared memory\n", fa.numRegs, fa.sharedSizeBytes);
    struct occ { static int blocks(int regs, size_t smem, int threads, size_t dyn) {
        int warps = (threads + 31) / 32, per_warp = (regs * 32 + 255) / 256 * 256, n = 32;
        int by_threads = 2048 / (warps * 32), by_regs = 65536 / per_warp / warps;
        int by_smem = (int)(233472 / (smem + dyn + 1024));
        n = by_threads < n ? by_threads : n;
        n = by_regs < n ? by_regs : n;
        return by_smem < n ? by_smem : n;
    } };
    int nb = -1;
    const int sizes[] = {32, 64, 96, 128, 256, 512, 1024};
    for (int s : sizes) {
        char what[96];
        snprintf(what, sizeof what, "blocks of %d per SM = the model's", s);
        nb = -1;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, rt_fill, s, 0);
        EXPECT_EQ(what, occ::blocks(regs, fa.sharedSizeBytes, s, 0), nb);
    }
    EXPECT_RT("occupancy with more dynamic smem than the kernel may have", cudaSuccess,
              cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, rt_fill, 256, 60000));
    EXPECT_EQ("... is 0 blocks", 0, nb);
    cudaFuncSetAttribute((const void *)rt_fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, rt_fill, 256, 40000);
    EXPECT_EQ("blocks of 256 with 40000 B dynamic smem = the model's", occ::blocks(regs, fa.sharedSizeBytes, 256, 40000), nb);
    /* the best block size: the most resident threads, ties to the larger, from the limit down by warps */
    int want_block[2] = {0, 0}, want_n[2] = {0, 0};
    const int limits[2] = {1024, 200};
    for (int l = 0; l < 2; l++)
        for (int b = (limits[l] + 31) / 32 * 32, best = 0; b > 0; b -= 32) {
            int bs = b > limits[l] ? limits[l] : b, n = occ::blocks(regs, fa.sharedSizeBytes, bs, 0);
            if (n * bs > best)
                best = n * bs, want_block[l] = bs, want_n[l] = n;
        }
    if (regs == 32) { /* hostcuda's default: the numbers by hand */
        EXPECT_EQ("32 registers: blocks of 256 (threads bound 2048/256)", 8, occ::blocks(32, 0, 256, 0));
        EXPECT_EQ("32 registers: blocks of 64 (block bound)", 32, occ::blocks(32, 0, 64, 0));
        EXPECT_EQ("32 registers: 40000 B dynamic (smem bound 233472/41024)", 5, occ::blocks(32, 0, 256, 40000));
        EXPECT_EQ("32 registers: best block", 1024, want_block[0]);
        EXPECT_EQ("32 registers: best block <= 200 (16 x 128 = 2048 threads)", 128, want_block[1]);
    }
    int grid = 0, block = 0;
    EXPECT_RT("cudaOccupancyMaxPotentialBlockSize", cudaSuccess, cudaOccupancyMaxPotentialBlockSize(&grid, &block, rt_fill));
    EXPECT_EQ("best block", want_block[0], block);
    EXPECT_EQ("min grid = blocks x SMs", want_n[0] * sms, grid);
    cudaFunction_t f;
    EXPECT_RT("cudaGetFuncBySymbol", cudaSuccess, cudaGetFuncBySymbol(&f, (const void *)rt_fill));
    grid = block = 0;
    EXPECT_EQ("cuOccupancyMaxPotentialBlockSize", CUDA_SUCCESS,
              cuOccupancyMaxPotentialBlockSize(&grid, &block, (CUfunction)f, NULL, 0, 0));
    EXPECT_EQ("driver: best block", want_block[0], block);
    EXPECT_EQ("driver: min grid", want_n[0] * sms, grid);
    EXPECT_EQ("cuOccupancyMaxPotentialBlockSize with a block limit", CUDA_SUCCESS,
              cuOccupancyMaxPotentialBlockSize(&grid, &block, (CUfunction)f, NULL, 0, 200));
    EXPECT_EQ("driver: best block <= 200", want_block[1], block);
    EXPECT_EQ("driver: min grid", want_n[1] * sms, grid);
    size_t bytes = 0;
    EXPECT_EQ("driver: 0 blocks is invalid", CUDA_ERROR_INVALID_VALUE,
              cuOccupancyAvailableDynamicSMemPerBlock(&bytes, (CUfunction)f, 0, 256));
    EXPECT_EQ("driver: an unknown flag is invalid", CUDA_ERROR_INVALID_VALUE,
              cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&nb, (CUfunction)f, 256, 0, 0x80));
    EXPECT_EQ("driver: no output is invalid", CUDA_ERROR_INVALID_VALUE,
              cuOccupancyMaxPotentialBlockSize(NULL, &block, (CUfunction)f, NULL, 0, 0));
    EXPECT_EQ("driver: not a function", CUDA_ERROR_INVALID_HANDLE,
              cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (CUfunction)&bytes, 256, 0));
    EXPECT_RT("runtime: a host function that is no kernel", cudaErrorInvalidDeviceFunction,
              cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, check_seq, 256, 0));
    cudaGetLastError();
    size_t avail = 0;
    EXPECT_RT("cudaOccupancyAvailableDynamicSMemPerBlock", cudaSuccess,
              cudaOccupancyAvailableDynamicSMemPerBlock(&avail, rt_fill, 4, 256));
    EXPECT_EQ("dynamic smem for 4 blocks (233472/4 - 1024 - static; 0 if 4 do not fit)",
              occ::blocks(regs, fa.sharedSizeBytes, 256, 0) >= 4 ? 233472 / 4 - 1024 - (long long)fa.sharedSizeBytes : 0, avail);
}

static void t_memory(void)
{
    int drv = 0, rtv = 0;
    EXPECT_RT("cudaDriverGetVersion", cudaSuccess, cudaDriverGetVersion(&drv));
    EXPECT_RT("cudaRuntimeGetVersion", cudaSuccess, cudaRuntimeGetVersion(&rtv));
    EXPECT_EQ("runtime version", CUDART_VERSION, rtv);
    EXPECT_RT("cudaProfilerStart", cudaSuccess, cudaProfilerStart());
    EXPECT_RT("cudaProfilerStop", cudaSuccess, cudaProfilerStop());
    size_t fr = 0, tot = 0;
    EXPECT_RT("cudaMemGetInfo", cudaSuccess, cudaMemGetInfo(&fr, &tot));
    EXPECT_EQ("free <= total", 1, fr <= tot && tot > 0);
    int *h = NULL, *hm = NULL, *dm = NULL, *m = NULL, *d = NULL;
    EXPECT_RT("cudaMallocHost", cudaSuccess, cudaMallocHost((void **)&h, 4096));
    EXPECT_RT("cudaHostAlloc mapped", cudaSuccess, cudaHostAlloc((void **)&hm, 4096, cudaHostAllocMapped));
    EXPECT_RT("cudaHostGetDevicePointer", cudaSuccess, cudaHostGetDevicePointer((void **)&dm, hm, 0));
    EXPECT_RT("cudaMallocManaged", cudaSuccess, cudaMallocManaged((void **)&m, 4096, cudaMemAttachGlobal));
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    EXPECT_RT("cudaMemAdvise on managed memory", cudaSuccess, cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, loc));
    EXPECT_RT("cudaMemPrefetchAsync", cudaSuccess, cudaMemPrefetchAsync(m, 4096, loc, 0, 0));
    EXPECT_RT("cudaMalloc", cudaSuccess, cudaMalloc(&d, 4096));
    EXPECT_RT("cudaMemAdvise on device memory", cudaErrorInvalidValue, cudaMemAdvise(d, 4096, cudaMemAdviseSetReadMostly, loc));
    loc.id = 4096;
    EXPECT_RT("cudaMemAdvise to a device that is not there", cudaErrorInvalidDevice,
              cudaMemAdvise(m, 4096, cudaMemAdviseSetPreferredLocation, loc));
    cudaGetLastError();
    cudaStream_t s;
    cudaEvent_t e0, e1;
    EXPECT_RT("cudaStreamCreateWithFlags", cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    EXPECT_RT("cudaEventCreate", cudaSuccess, cudaEventCreate(&e0));
    EXPECT_RT("cudaEventCreate", cudaSuccess, cudaEventCreate(&e1));
    for (int i = 0; i < 1024; i++)
        h[i] = i * 3;
    EXPECT_RT("cudaEventRecord", cudaSuccess, cudaEventRecord(e0, s));
    EXPECT_RT("cudaMemcpyAsync H2D", cudaSuccess, cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s));
    rt_fill<<<4, 64, 0, s>>>(m, 1, 512);
    EXPECT_RT("cudaEventRecord", cudaSuccess, cudaEventRecord(e1, s));
    EXPECT_RT("cudaStreamWaitEvent (legacy waits for s)", cudaSuccess, cudaStreamWaitEvent(0, e1, 0));
    EXPECT_RT("cudaMemcpyAsync D2H on the legacy stream", cudaSuccess, cudaMemcpyAsync(hm, d, 4096, cudaMemcpyDeviceToHost, 0));
    EXPECT_RT("cudaEventSynchronize", cudaSuccess, cudaEventSynchronize(e1));
    EXPECT_RT("cudaStreamSynchronize(0)", cudaSuccess, cudaStreamSynchronize(0));
    float ms = -1;
    EXPECT_RT("cudaEventElapsedTime", cudaSuccess, cudaEventElapsedTime(&ms, e0, e1));
    EXPECT_EQ("elapsed >= 0", 1, ms >= 0);
    EXPECT_EQ("the copy went through device memory", 3 * 1000, hm[1000]);
    int pageable[4] = {0, 0, 0, 0}, *d2 = NULL;
    EXPECT_RT("cudaMemcpy host to host (pageable)", cudaSuccess, cudaMemcpy(pageable, h + 4, 16, cudaMemcpyHostToHost));
    EXPECT_EQ("host to host", 3 * 7, pageable[3]);
    EXPECT_RT("cudaMalloc", cudaSuccess, cudaMalloc(&d2, 4096));
    EXPECT_RT("cudaMemcpy cudaMemcpyDefault device to device", cudaSuccess, cudaMemcpy(d2, d, 4096, cudaMemcpyDefault));
    EXPECT_RT("cudaMemcpy device to pageable host", cudaSuccess, cudaMemcpy(pageable, d2 + 100, 16, cudaMemcpyDeviceToHost));
    EXPECT_EQ("device to device to host", 3 * 103, pageable[3]);
    cudaFree(d2);
    EXPECT_EQ("the kernel wrote managed memory", 1 + 511, m[511]);
    EXPECT_RT("cudaStreamQuery", cudaSuccess, cudaStreamQuery(s));
    EXPECT_RT("cudaMemsetAsync", cudaSuccess, cudaMemsetAsync(d, 0, 4096, s));
    EXPECT_RT("cudaStreamSynchronize", cudaSuccess, cudaStreamSynchronize(s));
    EXPECT_RT("cudaStreamDestroy", cudaSuccess, cudaStreamDestroy(s));
    EXPECT_RT("cudaEventDestroy", cudaSuccess, cudaEventDestroy(e0));
    EXPECT_RT("cudaEventDestroy", cudaSuccess, cudaEventDestroy(e1));
    cudaPointerAttributes pa;
    EXPECT_RT("cudaPointerGetAttributes (device)", cudaSuccess, cudaPointerGetAttributes(&pa, d));
    EXPECT_EQ("device memory", cudaMemoryTypeDevice, pa.type);
    EXPECT_RT("cudaPointerGetAttributes (managed)", cudaSuccess, cudaPointerGetAttributes(&pa, m));
    EXPECT_EQ("managed memory", cudaMemoryTypeManaged, pa.type);
    EXPECT_RT("cudaPointerGetAttributes (pinned host)", cudaSuccess, cudaPointerGetAttributes(&pa, h));
    EXPECT_EQ("host memory", cudaMemoryTypeHost, pa.type);
    EXPECT_RT("cudaPointerGetAttributes (pageable)", cudaSuccess, cudaPointerGetAttributes(&pa, pageable));
    EXPECT_EQ("unregistered memory", cudaMemoryTypeUnregistered, pa.type);
    int *da = NULL;
    cudaStream_t s2;
    cudaStreamCreate(&s2);
    EXPECT_RT("cudaMallocAsync", cudaSuccess, cudaMallocAsync((void **)&da, 256, s2));
    EXPECT_RT("cudaMemsetAsync on it", cudaSuccess, cudaMemsetAsync(da, 0, 256, s2));
    EXPECT_RT("cudaMemcpyAsync from it", cudaSuccess, cudaMemcpyAsync(pageable, da, 16, cudaMemcpyDeviceToHost, s2));
    EXPECT_RT("cudaFreeAsync", cudaSuccess, cudaFreeAsync(da, s2));
    EXPECT_RT("cudaStreamSynchronize", cudaSuccess, cudaStreamSynchronize(s2));
    EXPECT_EQ("the stream-ordered allocation was cleared", 0, pageable[0] | pageable[3]);
    cudaStreamDestroy(s2);
    char bus[32] = "";
    int back = -1, can = -1;
    EXPECT_RT("cudaDeviceGetPCIBusId", cudaSuccess, cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    EXPECT_RT("cudaDeviceGetByPCIBusId", cudaSuccess, cudaDeviceGetByPCIBusId(&back, bus));
    EXPECT_EQ("the bus id names device 0", 0, back);
    EXPECT_RT("cudaDeviceCanAccessPeer", cudaSuccess, cudaDeviceCanAccessPeer(&can, 0, 0));
    EXPECT_RT("cudaFreeHost", cudaSuccess, cudaFreeHost(h));
    EXPECT_RT("cudaFreeHost (mapped)", cudaSuccess, cudaFreeHost(hm));
    EXPECT_RT("cudaFree (managed)", cudaSuccess, cudaFree(m));
    EXPECT_RT("cudaFree(NULL)", cudaSuccess, cudaFree(NULL));
    EXPECT_RT("cudaDeviceReset", cudaSuccess, cudaDeviceReset());
    EXPECT_RT("cudaMalloc after reset", cudaSuccess, cudaMalloc(&d, 256));
    rt_fill<<<1, 64>>>(d, 4, 64);
    EXPECT_RT("a launch after reset (the fatbin is loaded again)", cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ("first wrong element (-1: none)", -1, check_seq(d, 64, 4));
}

/* built with --default-stream per-thread: stream 0 is this thread's default stream */
static void t_ptsz(void)
{
    int *d;
    cudaMalloc(&d, 256);
    rt_fill<<<1, 64>>>(d, 2, 64);
    EXPECT_RT("launch on the per-thread stream", cudaSuccess, cudaStreamSynchronize(0));
    EXPECT_EQ("first wrong element (-1: none)", -1, check_seq(d, 64, 2));
    void *fn = NULL, *want = dlsym(RTLD_DEFAULT, "cuStreamQuery_ptsz"), *legacy = dlsym(RTLD_DEFAULT, "cuStreamQuery");
    cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSymbolNotFound;
    EXPECT_RT("cudaGetDriverEntryPointByVersion(cuStreamQuery)", cudaSuccess,
              cudaGetDriverEntryPointByVersion("cuStreamQuery", &fn, 13000, cudaEnableDefault, &st));
    EXPECT_EQ("found", cudaDriverEntryPointSuccess, st);
#ifdef RT_API_PTSZ
    EXPECT_EQ("the default flag gives the per-thread variant", 1, fn != NULL && fn == want);
#else
    EXPECT_EQ("the default flag gives the legacy variant", 1, fn != NULL && fn == legacy);
#endif
    EXPECT_RT("cudaGetDriverEntryPointByVersion of no symbol", cudaSuccess,
              cudaGetDriverEntryPointByVersion("cuNoSuchCall", &fn, 13000, cudaEnableDefault, &st));
    EXPECT_EQ("... gives NULL and says why", 1, fn == NULL && st == cudaDriverEntryPointSymbolNotFound);
    (void)want, (void)legacy;
    if (hostcuda_call_count != NULL) {
#ifdef RT_API_PTSZ
        EXPECT_EQ("driver per-thread copies (cuMemcpy_ptds) were used", 1, hostcuda_call_count("cuMemcpy_ptds") > 0);
        EXPECT_EQ("driver per-thread syncs (cuStreamSynchronize_ptsz) were used", 1,
                  hostcuda_call_count("cuStreamSynchronize_ptsz") > 0);
#else
        EXPECT_EQ("no per-thread copy in the legacy build", 0, hostcuda_call_count("cuMemcpy_ptds"));
        EXPECT_EQ("legacy copies were used", 1, hostcuda_call_count("cuMemcpy") > 0);
#endif
    }
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*fn)(void); } cases[] = {
        {"launch", t_launch}, {"symbol", t_symbol}, {"errors", t_errors}, {"sticky", t_sticky}, {"fault", t_fault}, {"ctx", t_ctx}, {"graph", t_graph}, {"threads", t_threads},
        {"unimpl", t_unimpl}, {"props", t_props}, {"memory", t_memory}, {"ptsz", t_ptsz},
    };
    if (argc != 2) {
        fprintf(stderr, "usage: rt_api CASE (launch|symbol|errors|sticky|fault|ctx|graph|threads|unimpl|props|memory|ptsz)\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            rt_cur = cases[i].name;
            cases[i].fn();
            return rt_fails ? 1 : 0;
        }
    fprintf(stderr, "rt_api: unknown case '%s'\n", argv[1]);
    return 2;
}
