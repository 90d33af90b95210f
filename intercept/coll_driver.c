/* coll_driver.c — where intercept/ fills the shim's one real-driver table (shim/core/ash_driver.h).
 *
 * The table (typed function pointers, ASH_COLL_DRIVER_ENTRIES) is filled by name through the
 * real driver's own export table (exact names, real dlsym) — never our hooks, so the shim's own
 * copies and kernels are invisible to the policy and the allocation table — and published with
 * ash_driver_set for everyone who calls the real driver on the shim's behalf (the sync engine,
 * the collectives, timing, fusion, recording, the NaN scan, the watchdog). Runs once, in init.
 * Must not: fill the table from our hooks or through the public dlsym (real exports only, so the
 * shim's own work stays invisible); write the table after init; call the collectives' operations
 * (it only fills their driver table).
 */
#include "ash_hook.h"
#include "ash_log.h"
#include "ash_driver.h"

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
    ash_driver_set(&d);
}
