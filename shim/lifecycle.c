/* lifecycle.c — lifecycle (lazy init, the ordered exit sequence) and the accelshim_* public API.
 *
 * Invariant: no ELF constructor; ash_shim_init runs once, from intercept/'s lazy init. The exit
 * sequence (ash_shim.h: steps in a fixed order) is the only atexit handler the shim registers;
 * it runs once however many times it is registered. Threading: init in pthread_once; steps are
 * added during init or by the sync thread (under the engine's lock); the API is thread-safe.
 * Must not: run from an ELF constructor or do CUDA work of its own; register an atexit handler
 * other than the exit sequence; run an exit step twice; know CUDA symbol names (that is
 * intercept/).
 */
#include "ash_shim.h"

#include "accelshim.h"
#include "ash_alloc.h"
#include "ash_crash.h"
#include "ash_explain.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_observer.h"
#include "ash_sync.h"
#include "ash_unfired.h"
#include "ash_world.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define ASH_SHIM_MAX_PER_STEP 8

static pthread_once_t ash_shim_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ash_shim_exit_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*ash_shim_steps[ASH_EXIT_STEP_COUNT_][ASH_SHIM_MAX_PER_STEP])(void);
static int ash_shim_nsteps[ASH_EXIT_STEP_COUNT_];
static _Atomic int ash_shim_exited;

static void ash_shim_alloc_summary(void)
{
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
}

/* The one atexit handler: every step in order, once. The summary step prints info lines only:
 * skipped below info (its functions may take locks a fatal path holds, e.g. the kernel cache's). */
static void ash_shim_exit_sequence(void)
{
    if (atomic_exchange(&ash_shim_exited, 1))
        return;
    for (int step = 0; step < ASH_EXIT_STEP_COUNT_; step++) {
        if (step == ASH_EXIT_STEP_SUMMARY && !ash_log_enabled(ASH_LOG_INFO))
            continue;
        for (int i = 0; i < ash_shim_nsteps[step]; i++)
            ash_shim_steps[step][i]();
    }
}

ash_status_t ash_shim_at_exit(ash_exit_step_t step, void (*fn)(void))
{
    if ((unsigned)step >= ASH_EXIT_STEP_COUNT_ || fn == NULL)
        return ASH_ERR_INVALID;
    ash_status_t st = ASH_ERR_NOMEM;
    pthread_mutex_lock(&ash_shim_exit_lock);
    if (ash_shim_nsteps[step] < ASH_SHIM_MAX_PER_STEP) {
        ash_shim_steps[step][ash_shim_nsteps[step]++] = fn;
        st = ASH_OK;
    }
    pthread_mutex_unlock(&ash_shim_exit_lock);
    return st;
}

ash_status_t ash_shim_on_exit(void (*report)(void)) { return ash_shim_at_exit(ASH_EXIT_STEP_SUMMARY, report); }

void ash_shim_exit_early(void)
{
    if (atexit(ash_shim_exit_sequence) != 0)
        ash_warn("shim", "atexit failed: the exit sequence keeps its place from init");
}

static void ash_shim_do_init(void)
{
    ash_opt_init();
    ash_world_init();
    ash_shim_at_exit(ASH_EXIT_STEP_SUMMARY, ash_shim_alloc_summary); /* first summary line */
    ash_crash_install(); /* ACCELSHIM_CRASH_HANDLER=0 disables */
    ash_sync_init(); /* loads the policy: an invalid one ends the program here, exit 2 */
    ash_unfired_init(); /* unfired: the policy's origin line; the verdict step at exit */
    ash_observe_init(); /* the engine's observers: record, exit report, trace */
    ash_explain_init(); /* ACCELSHIM_EXPLAIN: keep images and launches, explain them at exit */
    if (atexit(ash_shim_exit_sequence) != 0)
        ash_warn("shim", "atexit failed: no exit report, no orderly close of the collectives");
    ash_info("shim", "accelshim %s initialised", ACCELSHIM_VERSION_STRING);
}

ash_status_t ash_shim_init(void)
{
    pthread_once(&ash_shim_once, ash_shim_do_init);
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
