/* coll_driver.c — the REAL driver entry points the collectives use, handed to the sync engine.
 *
 * The collectives module knows no hooks and no symbol lookup: it receives a table of typed
 * function pointers (ash_coll_driver_t). This file fills it, by exact exported name, from the
 * real driver that hook_table.c loaded — never with our own hooks, so the shim's own copies and
 * cast kernels are invisible to the policy and to the allocation table. Runs once, inside init.
 */
#include "ash_hook.h"
#include "ash_log.h"
#include "ash_sync.h"

#include <stddef.h>

/* X(field, required) — the field name is the exported symbol */
#define ASH_COLL_DRIVER_FIELDS(X)                                                          \
    X(cuCtxGetCurrent, 1) X(cuMemAlloc_v2, 1) X(cuMemFree_v2, 1) X(cuMemAllocHost_v2, 1)   \
    X(cuMemFreeHost, 1) X(cuMemcpyDtoHAsync_v2, 1) X(cuMemcpyHtoDAsync_v2, 1)             \
    X(cuStreamSynchronize, 1) X(cuModuleLoadData, 1) X(cuModuleGetFunction, 1)            \
    X(cuModuleUnload, 1) X(cuLaunchKernel, 1) X(cuEventCreate, 0) X(cuEventRecord, 0)      \
    X(cuEventSynchronize, 0) X(cuEventDestroy_v2, 0) X(cuStreamWaitEvent, 0)               \
    X(cuGetErrorName, 0)

void ash_hook_give_sync_driver(void)
{
    ash_coll_driver_t d = {0};
    const char *missing = NULL;
#define ASH__FILL(field, required)                                                         \
    d.field = (__typeof__(d.field))ash_hook_driver_export(#field);                        \
    if (d.field == NULL && (required) && missing == NULL)                                  \
        missing = #field;
    ASH_COLL_DRIVER_FIELDS(ASH__FILL)
#undef ASH__FILL
    if (missing != NULL) {
        ash_warn("intercept", "the driver lacks %s: multi-rank sync points are unavailable", missing);
        return;
    }
    ash_sync_set_driver(&d);
}
