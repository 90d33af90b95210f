/* inspect.c — the NaN/Inf sentinel's scan: the shim's own kernels (shim/sync/inspect_kernels.cu, PTX
 * embedded by shim/sync/inspect_ptx.S) run next to the data, on the launch's stream.
 *
 * Per CUDA context (up to INSPECT_MAX_CTX): the module, its two functions, a device scratch for
 * the per-thread partial counts and a pinned host buffer for the folded ones, created on first
 * use through the REAL driver (never the hooks: the shim's own work stays invisible to the policy
 * and the allocation table). One scan = count kernel + fold kernel + one 4 KiB copy + a stream
 * synchronise (the answer is needed on the host before the collective).
 * Threading: not thread-safe; sync.c calls it with the engine's lock held. Callers:
 * shim/sync/sync.c (the check step of a sync point, debug.nan_check), bench/nan_check.sh (through
 * the shim).
 * Must not: use our hooks (the real driver only: its kernels, scratch and copies stay invisible to
 * the policy and the allocation table); run on another stream than the launch's; be called by two
 * threads at once.
 */
#include "ash_inspect.h"

#include "ash_driver.h"
#include "ash_log.h"

#include <stdint.h>
#include <string.h>

extern const char ash_inspect_ptx[]; /* shim/sync/inspect_ptx.S */

#define INSPECT_MAX_CTX 8
#define INSPECT_BLOCK 256u     /* threads per block, pass 1 */
#define INSPECT_MAX_GRID 256u  /* blocks, pass 1: at most 65536 partial pairs (1 MiB scratch) */
#define INSPECT_FOLD 256u      /* threads of pass 2: pairs copied to the host */

typedef struct {
    CUcontext ctx;
    CUmodule mod;
    CUfunction count32, count16, fold;
    CUdeviceptr scratch;          /* partial pairs, then the folded pairs */
    unsigned long long *host;     /* pinned: INSPECT_FOLD pairs */
    int broken;                   /* loading failed once: do not retry every sync point */
} inspect_ctx_t;

static inspect_ctx_t I[INSPECT_MAX_CTX];

static ash_status_t inspect_load(inspect_ctx_t *e)
{
    ASH_CU_CHECK("nan_check", cuModuleLoadData(&e->mod, ash_inspect_ptx));
    ASH_CU_CHECK("nan_check", cuModuleGetFunction(&e->count32, e->mod, "ash_inspect_k_count32"));
    ASH_CU_CHECK("nan_check", cuModuleGetFunction(&e->count16, e->mod, "ash_inspect_k_count16"));
    ASH_CU_CHECK("nan_check", cuModuleGetFunction(&e->fold, e->mod, "ash_inspect_k_fold"));
    size_t pairs = (size_t)INSPECT_BLOCK * INSPECT_MAX_GRID + INSPECT_FOLD;
    ASH_CU_CHECK("nan_check", cuMemAlloc_v2(&e->scratch, pairs * 2 * sizeof(unsigned long long)));
    void *h = NULL;
    ASH_CU_CHECK("nan_check", cuMemAllocHost_v2(&h, INSPECT_FOLD * 2 * sizeof(unsigned long long)));
    e->host = h;
    return ASH_OK;
}

static ash_status_t inspect_ctx(inspect_ctx_t **out)
{
    CUcontext cur = NULL;
    inspect_ctx_t *free_slot = NULL;
    ASH_CU_CHECK("nan_check", cuCtxGetCurrent(&cur));
    if (!cur) {
        ash_error("nan_check", "no current CUDA context at a sync point: cannot scan");
        return ASH_ERR_DRIVER;
    }
    for (int i = 0; i < INSPECT_MAX_CTX; i++) {
        if (I[i].ctx == cur) {
            if (I[i].broken)
                return ASH_ERR_DRIVER;
            *out = &I[i];
            return ASH_OK;
        }
        if (!free_slot && !I[i].ctx)
            free_slot = &I[i];
    }
    if (!free_slot) {
        ash_error("nan_check", "more than %d CUDA contexts: cannot scan", INSPECT_MAX_CTX);
        return ASH_ERR_UNSUPPORTED;
    }
    free_slot->ctx = cur;
    ash_status_t st = inspect_load(free_slot);
    if (st != ASH_OK) {
        free_slot->broken = 1;
        return st;
    }
    *out = free_slot;
    return ASH_OK;
}

ash_status_t ash_inspect_nonfinite(CUdeviceptr p, size_t count,
                                   ash_policy_dtype_t dtype, CUstream s, unsigned long long *nan,
                                   unsigned long long *inf)
{
    if (!ash_driver() || !nan || !inf)
        return ASH_ERR_INVALID;
    *nan = *inf = 0;
    if (count == 0)
        return ASH_OK;
    inspect_ctx_t *e = NULL;
    ash_status_t st = inspect_ctx(&e);
    if (st != ASH_OK)
        return st;

    long long n = (long long)count;
    unsigned expmask, mantmask;
    CUfunction f;
    switch (dtype) {
    case ASH_POLICY_DTYPE_F16: f = e->count16, expmask = 0x7c00u, mantmask = 0x03ffu; break;
    case ASH_POLICY_DTYPE_BF16: f = e->count16, expmask = 0x7f80u, mantmask = 0x007fu; break;
    default: f = e->count32, expmask = 0x7f800000u, mantmask = 0x007fffffu; break;
    }
    unsigned long long blocks = ((unsigned long long)count + INSPECT_BLOCK - 1) / INSPECT_BLOCK;
    unsigned grid = blocks > INSPECT_MAX_GRID ? INSPECT_MAX_GRID : (unsigned)blocks;
    long long nparts = (long long)grid * INSPECT_BLOCK;
    CUdeviceptr partial = e->scratch;
    CUdeviceptr folded = e->scratch + (CUdeviceptr)nparts * 2 * sizeof(unsigned long long);
    void *a1[] = {&p, &n, &expmask, &mantmask, &partial};
    ASH_CU_CHECK("nan_check", cuLaunchKernel(f, grid, 1, 1, INSPECT_BLOCK, 1, 1, 0, s, a1, NULL));
    void *a2[] = {&partial, &nparts, &folded};
    ASH_CU_CHECK("nan_check", cuLaunchKernel(e->fold, 1, 1, 1, INSPECT_FOLD, 1, 1, 0, s, a2, NULL));
    ASH_CU_CHECK("nan_check", cuMemcpyDtoHAsync_v2(e->host, folded,
                                         INSPECT_FOLD * 2 * sizeof(unsigned long long), s));
    ASH_CU_CHECK("nan_check", cuStreamSynchronize(s));
    unsigned long long tn = 0, ti = 0;
    for (unsigned t = 0; t < INSPECT_FOLD; t++) {
        tn += e->host[2 * t];
        ti += e->host[2 * t + 1];
    }
    *nan = tn;
    *inf = ti;
    return ASH_OK;
}
