/* ash_report.h — private to the shim: what the sync engine did, for the exit report.
 *
 * Counts per rule (sync points hit, collectives, bytes, fused steps, skipped launches), times
 * every collective (host time of the call, plus CUDA events recorded on the stream around it
 * through the REAL driver, harvested without blocking and at close), counts wire casts, and at
 * exit prints one info line per rank (rank 0 adds one line for the job) and, with
 * ACCELSHIM_REPORT=PATH ({rank} = the rank), writes the same as JSON. The job line needs the
 * other ranks' figures: the engine gathers them at close, before the communicator goes (one host
 * allgather of 6 words, bounded by timeout_s like every MPI wait).
 * An observer of the sync engine (ash_observer.h): it counts and times what the engine tells it,
 * and never issues work; the job's figures travel in the engine's one gather at close.
 * Threading: events come with the engine's lock held (one thread at a time); init, close and
 * exit run once.
 */
#ifndef ASH_REPORT_H
#define ASH_REPORT_H

#include "ash_observer.h"

extern const ash_observer_t ash_report_observer;

#endif /* ASH_REPORT_H */
