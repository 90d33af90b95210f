/* shim.c — lifecycle (lazy init, exit report) and the accelshim_* public API.
 *
 * Invariant: no ELF constructor; ash_shim_init runs once, from intercept/'s lazy init. The exit
 * report is registered with atexit at init and only reads counters (no CUDA calls: the driver
 * may be torn down by then). Threading: init in pthread_once; the API functions are thread-safe.
 */
#include "ash_shim.h"

#include "accelshim.h"
#include "ash_alloc.h"
#include "ash_crash.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_report.h"
#include "ash_sync.h"
#include "ash_unfired.h"
#include "ash_world.h"

#include <pthread.h>
#include <stdlib.h>

#define ASH_SHIM_MAX_REPORTERS 4

static pthread_once_t ash_shim_once = PTHREAD_ONCE_INIT;
static void (*ash_shim_reporters[ASH_SHIM_MAX_REPORTERS])(void);
static int ash_shim_nreporters;

static void ash_shim_exit_report(void)
{
    if (!ash_log_enabled(ASH_LOG_INFO))
        return;
    for (int d = 0; d < ASH_ALLOC_MAX_DEVICES; d++) {
        uint64_t cur = 0, peak = 0, count = 0;
        if (ash_alloc_stats(d, &cur, &peak, &count) != ASH_ALLOC_OK || peak == 0)
            continue;
        ash_info("report", "device %d: peak %llu bytes allocated; at exit %llu bytes in %llu allocations",
                 d, (unsigned long long)peak, (unsigned long long)cur, (unsigned long long)count);
    }
    uint64_t stale = ash_alloc_stale_count();
    if (stale > 0)
        ash_info("report", "%llu stale allocation entries (frees the shim did not see)",
                 (unsigned long long)stale);
    for (int i = 0; i < ash_shim_nreporters; i++)
        ash_shim_reporters[i]();
}

static void ash_shim_do_init(void)
{
    ash_opt_init();
    ash_world_init();
    ash_crash_install(); /* ACCELSHIM_CRASH_HANDLER=0 disables */
    ash_sync_init(); /* loads the policy: an invalid one ends the program here, exit 2 */
    ash_unfired_init(); /* unfired: policy origin line; exit verdict (registered before the rest) */
    ash_report_init(); /* exit report counters, JSON report, trace, fused reduction */
    if (atexit(ash_shim_exit_report) != 0)
        ash_warn("shim", "atexit failed: no exit report");
    ash_info("shim", "accelshim %s initialised", ACCELSHIM_VERSION_STRING);
}

ash_status_t ash_shim_init(void)
{
    pthread_once(&ash_shim_once, ash_shim_do_init);
    return ASH_OK;
}

ash_status_t ash_shim_on_exit(void (*report)(void))
{
    if (report == NULL || ash_shim_nreporters == ASH_SHIM_MAX_REPORTERS)
        return ASH_ERR_INVALID;
    ash_shim_reporters[ash_shim_nreporters++] = report;
    return ASH_OK;
}

/* ---- public API ---- */

ASH_EXPORT const char *accelshim_version(void) { return ACCELSHIM_VERSION_STRING; }

ASH_EXPORT int accelshim_alloc_lookup(uint64_t ptr, uint64_t *base, uint64_t *size, int *device, int *kind)
{
    ash_alloc_entry_t e;
    if (ash_alloc_find(ptr, &e) != ASH_ALLOC_OK)
        return -1;
    if (base)
        *base = e.base;
    if (size)
        *size = e.size;
    if (device)
        *device = e.device;
    if (kind)
        *kind = (int)e.kind;
    return 0;
}

ASH_EXPORT int accelshim_alloc_stats(int device, uint64_t *current, uint64_t *peak, uint64_t *count)
{
    return ash_alloc_stats(device, current, peak, count) == ASH_ALLOC_OK ? 0 : -1;
}

ASH_EXPORT void accelshim_world(int *rank, int *local_rank, int *size, int *device)
{
    ash_shim_init();
    const ash_world_t *w = ash_world();
    if (rank)
        *rank = w->rank;
    if (local_rank)
        *local_rank = w->local_rank;
    if (size)
        *size = w->size;
    if (device)
        *device = ash_world_device_ordinal(0);
}
