/* rt_coop.cu — the runtime's cooperative launch and limits, as an unmodified nvcc -cudart shared
 * program uses them (run by test_hcrt_coop.sh on hostcudart + hostcuda).
 * Property: cudaDevAttrCooperativeLaunch is 1; cudaLaunchCooperativeKernel and cudaLaunchKernelExC
 * with cudaLaunchAttributeCooperative run a kernel whose grid.sync() separates rounds across 32
 * blocks with CUDA's result; a grid one block larger than cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * x SMs is cudaErrorCooperativeLaunchTooLarge, not sticky; cudaDeviceSetLimit/GetLimit round-trip
 * (heap, stack, printf FIFO, persisting L2 up to persistingL2CacheMaxSize, one byte more refused);
 * device new/delete use the heap. Prints `ok WHAT` or `FAIL WHAT: got X, want Y`; exit 1 on a FAIL.
 * RT_COOP_CONTROL=1 launches the grid-sync kernel with <<<>>> (no cooperative launch): its result
 * must then be reported as a failure. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

namespace cg = cooperative_groups;
static int fails;

static void expect(const char *what, long long got, long long want)
{
    if (got == want) {
        printf("ok %s\n", what);
    } else {
        printf("FAIL %s: got %lld, want %lld\n", what, got, want);
        fails++;
    }
}

__global__ void rc_shift(int *buf, int rounds)
{
    cg::grid_group g = cg::this_grid();
    int n = gridDim.x * blockDim.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < rounds; r++) {
        int v = buf[(i + blockDim.x) % n] + 1;
        g.sync();
        buf[i] = v;
        g.sync();
    }
}

__global__ void rc_new(int *out, int n)
{
    int *a = new int[n];
    if (!a) {
        out[0] = -1;
        return;
    }
    for (int k = 0; k < n; k++)
        a[k] = 2 * k + 1;
    int s = 0;
    for (int k = 0; k < n; k++)
        s += a[k];
    delete[] a;
    out[0] = s;
}

/* rc_shift over G x B for `rounds` rounds (how: 0 cooperative, 1 cudaLaunchKernelExC, 2 <<<>>>);
 * returns the elements that differ from CUDA's result, or -1 if the launch failed */
static int shift(unsigned G, unsigned B, int rounds, int how)
{
    unsigned n = G * B;
    int *x = (int *)malloc(n * sizeof(int)), *y = (int *)malloc(n * sizeof(int)), *d;
    for (unsigned i = 0; i < n; i++)
        x[i] = (int)(i * 13u % 997u);
    cudaMalloc(&d, n * sizeof(int));
    cudaMemcpy(d, x, n * sizeof(int), cudaMemcpyHostToDevice);
    void *args[] = {&d, &rounds};
    cudaError_t e;
    if (how == 0) {
        e = cudaLaunchCooperativeKernel((void *)rc_shift, dim3(G), dim3(B), args, 0, 0);
    } else if (how == 1) {
        cudaLaunchAttribute at;
        at.id = cudaLaunchAttributeCooperative;
        at.val.cooperative = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(G);
        cfg.blockDim = dim3(B);
        cfg.attrs = &at;
        cfg.numAttrs = 1;
        e = cudaLaunchKernelExC(&cfg, (void *)rc_shift, args);
    } else {
        rc_shift<<<G, B>>>(d, rounds);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    int bad = -1;
    if (e == cudaSuccess) {
        cudaMemcpy(y, d, n * sizeof(int), cudaMemcpyDeviceToHost);
        bad = 0;
        for (unsigned i = 0; i < n; i++)
            bad += y[i] != x[(i + (unsigned)rounds * B) % n] + rounds;
    } else {
        printf("launch (how %d): %s\n", how, cudaGetErrorName(e));
    }
    cudaFree(d);
    free(x);
    free(y);
    return bad;
}

int main(void)
{
    int coop = 0, sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0);
    expect("cudaDevAttrCooperativeLaunch", coop, 1);
    if (getenv("RT_COOP_CONTROL")) {
        expect("rc_shift with <<<>>>: wrong elements (-1: the launch failed)", shift(32, 64, 4, 2), 0);
        return fails ? 1 : 0;
    }
    expect("cudaLaunchCooperativeKernel: rc_shift 32x64, 4 rounds, wrong elements", shift(32, 64, 4, 0), 0);
    expect("cudaLaunchKernelExC cooperative: rc_shift 32x64, 4 rounds, wrong elements", shift(32, 64, 4, 1), 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rc_shift, 256, 0);
    int *d;
    cudaMalloc(&d, 4);
    int rounds = 1;
    void *args[] = {&d, &rounds};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)rc_shift, dim3((unsigned)(per_sm * sms + 1)), dim3(256), args,
                                                0, 0);
    expect("a cooperative grid one block larger than the device holds (cudaErrorCooperativeLaunchTooLarge)", e,
           cudaErrorCooperativeLaunchTooLarge);
    expect("... is not sticky (cudaGetLastError resets it)", cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
    expect("... next cudaGetLastError", cudaGetLastError(), cudaSuccess);
    cudaFree(d);

    size_t v = 0;
    expect("cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 MiB)", cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20),
           cudaSuccess);
    cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize);
    expect("cudaDeviceGetLimit(cudaLimitMallocHeapSize)", (long long)v, 1 << 20);
    expect("cudaDeviceSetLimit(cudaLimitStackSize, 8192)", cudaDeviceSetLimit(cudaLimitStackSize, 8192), cudaSuccess);
    cudaDeviceGetLimit(&v, cudaLimitStackSize);
    expect("cudaDeviceGetLimit(cudaLimitStackSize)", (long long)v, 8192);
    cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize);
    expect("default cudaLimitPrintfFifoSize", (long long)v, 1 << 20);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    expect("cudaLimitPersistingL2CacheSize = persistingL2CacheMaxSize",
           cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)p.persistingL2CacheMaxSize), cudaSuccess);
    expect("cudaLimitPersistingL2CacheSize one byte more (cudaErrorInvalidValue)",
           cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)p.persistingL2CacheMaxSize + 1),
           cudaErrorInvalidValue);
    cudaGetLastError();
    int *o, s = 0;
    cudaMalloc(&o, 4);
    rc_new<<<1, 1>>>(o, 1000);
    expect("rc_new launch", cudaDeviceSynchronize(), cudaSuccess);
    cudaMemcpy(&s, o, 4, cudaMemcpyDeviceToHost);
    expect("rc_new: sum of 2k+1 for k < 1000 through new[]/delete[]", s, 1000000);
    expect("cudaLimitMallocHeapSize after a launch that used the heap (cudaErrorInvalidValue)",
           cudaDeviceSetLimit(cudaLimitMallocHeapSize, 2 << 20), cudaErrorInvalidValue);
    cudaFree(o);
    return fails ? 1 : 0;
}
