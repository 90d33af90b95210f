/* coll_driver.c — the REAL driver entry points the collectives use, handed to the sync engine.
 *
 * The collectives module knows no hooks and no symbol lookup: it receives a table of typed
 * function pointers (ash_coll_driver_t) that it fills by name through our resolver. Here the
 * resolver is the real driver's own export table (exact names, real dlsym) — never our hooks,
 * so the shim's own copies and cast kernels are invisible to the policy and the allocation
 * table. Runs once, inside init.
 */
#include "ash_hook.h"
#include "ash_log.h"
#include "ash_report.h"
#include "ash_sync.h"

static void *ash_coll_resolve(void *ctx, const char *name)
{
    (void)ctx;
    return ash_hook_driver_export(name);
}

void ash_hook_give_sync_driver(void)
{
    ash_coll_driver_t d;
    const char *missing = ash_coll_driver_fill(&d, ash_coll_resolve, NULL);
    if (missing != NULL) {
        ash_warn("intercept", "the driver lacks %s: multi-rank sync points are unavailable", missing);
        return;
    }
    ash_sync_set_driver(&d);
    ash_report_set_driver(&d); /* timing events and fusion buffers (shim/report.c, fuse.c) */
}
