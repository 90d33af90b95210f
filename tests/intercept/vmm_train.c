/* vmm_train.c — a tiny single-GPU "trainer" (Driver API, linked with -lcuda) whose gradient
 * buffer comes from cuMemAlloc (--alloc mem) or from virtual memory management (--alloc vmm: one
 * reservation of two 2 MiB granules, two cuMemCreate handles, two cuMemMap calls, cuMemSetAccess;
 * the parameters sit in the first mapping, the gradients at the start of the second). Each step:
 * ash_itest_grad(g, w, n, shard, step), then ash_itest_sgd(w, g, n, lr), on one stream. Prints
 * `params HASH` (FNV-1a 64 of the final parameters' bytes) and a few values (%a).
 * --unmap-before-update S (vmm): at step S the gradient mapping is unmapped and its handle
 * released between the two launches, so the update is handed a pointer that is no longer memory.
 * Used by test_vmm_allocation.sh with the policy vmm_policy.yaml (region: allocation).
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define GRAN ((size_t)2 << 20)

#define CK(call)                                                                           \
    do {                                                                                   \
        CUresult ck__r = (call);                                                           \
        if (ck__r != CUDA_SUCCESS) {                                                       \
            fprintf(stderr, "vmm_train: %s -> CUresult %d (line %d)\n", #call, (int)ck__r, __LINE__); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "vmm_train: cannot open %s\n", path);
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
    int vmm = 0, steps = 5, shard = 0, unmap_at = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
            vmm = !strcmp(argv[++i], "vmm");
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shard") && i + 1 < argc)
            shard = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--unmap-before-update") && i + 1 < argc)
            unmap_at = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: vmm_train [--alloc mem|vmm] [--steps N] [--shard R] [--unmap-before-update S]\n");
            return 2;
        }
    }
    const char *ptx_path = getenv("ITEST_PTX");
    if (ptx_path == NULL) {
        fprintf(stderr, "vmm_train: ITEST_PTX (kernels.ptx) is not set\n");
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

    CUdeviceptr w, g, va = 0;
    CUmemGenericAllocationHandle h[2];
    if (vmm) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        size_t gran = 0;
        CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        if (GRAN % gran != 0) {
            fprintf(stderr, "vmm_train: granularity %zu does not divide 2 MiB\n", gran);
            return 1;
        }
        CK(cuMemAddressReserve(&va, 2 * GRAN, 0, 0, 0));
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location = prop.location;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        for (int i = 0; i < 2; i++) {
            CK(cuMemCreate(&h[i], GRAN, &prop, 0));
            CK(cuMemMap(va + i * GRAN, GRAN, 0, h[i], 0));
        }
        CK(cuMemSetAccess(va, 2 * GRAN, &acc, 1));
        w = va;
        g = va + GRAN;
    } else {
        CK(cuMemAlloc(&w, N * sizeof(float)));
        CK(cuMemAlloc(&g, N * sizeof(float)));
    }
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    CK(cuMemcpyHtoD(w, host, sizeof host));
    CK(cuMemsetD32(g, 0, N));

    int n = N;
    float lr = 0.125f;
    unsigned blocks = (N + 127) / 128;
    for (int step = 0; step < steps; step++) {
        void *ga[] = {&g, &w, &n, &shard, &step};
        CK(cuLaunchKernel(fgrad, blocks, 1, 1, 128, 1, 1, 0, s, ga, NULL));
        if (vmm && step == unmap_at) {
            CK(cuStreamSynchronize(s));
            CK(cuMemUnmap(g, GRAN));
            CK(cuMemRelease(h[1]));
            fprintf(stderr, "vmm_train: step %d: gradient mapping unmapped and released\n", step);
        }
        void *ua[] = {&w, &g, &n, &lr};
        CK(cuLaunchKernel(fsgd, blocks, 1, 1, 128, 1, 1, 0, s, ua, NULL));
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(host, w, sizeof host));
    uint64_t hash = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)host;
    for (size_t i = 0; i < sizeof host; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
    printf("params %016llx w[0]=%a w[1]=%a w[999]=%a\n", (unsigned long long)hash, host[0], host[1], host[N - 1]);
    if (vmm) {
        CK(cuMemUnmap(va, 2 * GRAN));
        CK(cuMemRelease(h[0]));
        CK(cuMemRelease(h[1]));
        CK(cuMemAddressFree(va, 2 * GRAN));
    } else {
        CK(cuMemFree(w));
        CK(cuMemFree(g));
    }
    return 0;
}
