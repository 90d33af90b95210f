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
#define ITRAIN_PROG "vmm_train"
#include "itrain.h"

#define GRAN ((size_t)2 << 20)

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
    itrain_t t;
    itrain_open(&t);

    CUdeviceptr w, g, va = 0;
    CUmemGenericAllocationHandle h[2];
    if (vmm) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = t.dev;
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
        CK(cuMemAlloc(&w, ITRAIN_N * sizeof(float)));
        CK(cuMemAlloc(&g, ITRAIN_N * sizeof(float)));
    }
    itrain_init_params(w);
    CK(cuMemsetD32(g, 0, ITRAIN_N));

    int n = ITRAIN_N;
    float lr = 0.125f;
    for (int step = 0; step < steps; step++) {
        void *ga[] = {&g, &w, &n, &shard, &step};
        CK(itrain_launch(&t, t.grad, ga));
        if (vmm && step == unmap_at) {
            CK(cuStreamSynchronize(t.s));
            CK(cuMemUnmap(g, GRAN));
            CK(cuMemRelease(h[1]));
            fprintf(stderr, "vmm_train: step %d: gradient mapping unmapped and released\n", step);
        }
        void *ua[] = {&w, &g, &n, &lr};
        CK(itrain_launch(&t, t.sgd, ua));
    }
    itrain_print_params(&t, w);
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
