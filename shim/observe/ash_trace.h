/* ash_trace.h — private to the shim: the timeline, as Chrome trace event JSON (Perfetto,
 * chrome://tracing), one file per rank, pid = rank.
 *
 * Enabled by ACCELSHIM_TRACE=PATH (or the policy's debug.trace; the environment wins); "{rank}"
 * in PATH is the rank. Records sync points (instant), collectives (complete events, host time
 * of the call), casts (instant, at both ends of a collective with a wire cast) and, with
 * ACCELSHIM_TRACE_LAUNCHES=1, every kernel launch and memcpy (complete events, host time of the
 * enqueue). Streamed through a fixed 64 KiB buffer (bounded memory), flushed at every
 * collective and at exit, where the closing ']' is written. Threading: any thread; one mutex.
 * Callers: the sync engine through ash_trace_observer (sync points, collectives), intercept/
 * (launches, copies).
 */
#ifndef ASH_TRACE_H
#define ASH_TRACE_H

#include "ash_observer.h"

#include <stddef.h>
#include <stdint.h>

extern const ash_observer_t ash_trace_observer;

/* Nonzero when launches and copies are traced (ACCELSHIM_TRACE_LAUNCHES=1 with a trace file);
 * set once at init, cleared when the trace closes. */
extern int ash_trace_launches_on;

/* Open the trace file if a path is configured (ACCELSHIM_TRACE or debug.trace). Once, at init. */
void ash_trace_init(int rank);
int ash_trace_enabled(void);
uint64_t ash_trace_now_ns(void); /* CLOCK_MONOTONIC */

/* Complete event ("ph":"X") from t0_ns to t1_ns; args_json is the inside of an object
 * ("\"bytes\":4" ...) or NULL. name is escaped; cat is a literal. */
void ash_trace_complete(const char *cat, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                        const char *args_json);
/* Instant event ("ph":"i", thread scope). */
void ash_trace_instant(const char *cat, const char *name, const char *args_json);
/* Launch / copy records: the observer's launch-seen ops (intercept/ -> ash_observe_launch). */
void ash_trace_launch(const char *kernel, uint64_t t0_ns, int result);
void ash_trace_copy(const char *api, size_t bytes, uint64_t t0_ns, int result);
/* Write what is buffered (the file stays open). */
void ash_trace_flush(void);
/* Close the JSON array and the file (exit report time). Idempotent. */
void ash_trace_close(void);

#endif /* ASH_TRACE_H */
