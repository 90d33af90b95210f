/* events.c — the engine's side of the observer interface (see ash_observer.h): each event goes
 * to every registered observer that has the op, in registry order.
 *
 * Invariant: the only way the engine (and intercept/, for the launches it sees) reaches an
 * observer. Threading: as the events (the engine's lock for sync-point events; launches and
 * copies from any thread; init once; exit ops from the exit sequence).
 * Must not: reach an observer any other way than its registered ops, in registry order; issue work;
 * decide anything about a sync point.
 */
#include "ash_observer.h"

#include "ash_shim.h"

#include <time.h>

int ash_observe_launches_on;

#define ASH__EACH(op, ...)                                                                 \
    do {                                                                                   \
        for (const ash_observer_t *const *o = ash_observers; *o; o++)                      \
            if ((*o)->op)                                                                  \
                (*o)->op(__VA_ARGS__);                                                     \
    } while (0)

static void ash_observe_final_values(void)
{
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->final_values)
            (*o)->final_values();
}

static void ash_observe_exit(void)
{
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->exit)
            (*o)->exit();
}

void ash_observe_init(void)
{
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->init)
            (*o)->init();
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->wants_launches && (*o)->wants_launches())
            ash_observe_launches_on = 1;
    ash_shim_at_exit(ASH_EXIT_STEP_FINAL_VALUES, ash_observe_final_values);
    ash_shim_at_exit(ASH_EXIT_STEP_REPORT, ash_observe_exit);
}

int ash_observe_wants_buffers(void)
{
    int want = 0;
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->wants_buffers && (*o)->wants_buffers())
            want = 1; /* ask every one: asking may initialise it */
    return want;
}

void ash_observe_sync_point(const ash_sync_event_t *e) { ASH__EACH(sync_point, e); }
void ash_observe_before_buffer(const ash_sync_event_t *e) { ASH__EACH(before_buffer, e); }
void ash_observe_nan_found(const ash_sync_event_t *e) { ASH__EACH(nan_found, e); }
void ash_observe_before_collective(const ash_sync_event_t *e) { ASH__EACH(before_collective, e); }
void ash_observe_after_collective(const ash_sync_event_t *e) { ASH__EACH(after_collective, e); }
void ash_observe_fused_skip(const ash_sync_event_t *e) { ASH__EACH(fused_skip, e); }
void ash_observe_after_buffer(const ash_sync_event_t *e) { ASH__EACH(after_buffer, e); }

uint64_t ash_observe_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ash_observe_launch(const char *kernel, uint64_t t0_ns, int result) { ASH__EACH(launch, kernel, t0_ns, result); }
void ash_observe_copy(const char *api, size_t bytes, uint64_t t0_ns, int result) { ASH__EACH(copy, api, bytes, t0_ns, result); }

void ash_observe_close(void)
{
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->close)
            (*o)->close();
}

const ash_observer_t *ash_observe_job_owner(void)
{
    for (const ash_observer_t *const *o = ash_observers; *o; o++)
        if ((*o)->job_words && (*o)->job)
            return *o;
    return NULL;
}
