/* ash_shim.h — private to the shim: lifecycle.
 *
 * Folder shim/ owns: what `libaccelshim.so` is made of besides the CUDA boundary, the policy and
 * the collectives: the lifecycle (`shim/lifecycle.c`: start at the first CUDA call, the one ordered
 * exit sequence) and its parts `core/`, `sync/`, `observe/`, `precision/`, `explain/` (with the
 * PTX reader of `ptx/`), beside them `io/` (a library of its own)
 *
 * ash_shim_init runs once (pthread_once), called by intercept/'s lazy init from whichever door
 * is used first — never from an ELF constructor. It reads the options, discovers the world and
 * registers the exit sequence with atexit. The exit sequence is the ONE place that orders what
 * runs at exit: one atexit handler runs each step's functions, steps in the order below, each
 * step's functions in registration order, once (a fatal error's exit runs it too; each step
 * asks ash_fatal_code() before talking to peers).
 */
#ifndef ASH_SHIM_H
#define ASH_SHIM_H

#include "ash_status.h"

#define ASH_EXPORT __attribute__((visibility("default")))

ash_status_t ash_shim_init(void);

typedef enum {
    ASH_EXIT_STEP_FINAL_VALUES, /* read device buffers a last time (the record's exit lines) */
    ASH_EXIT_STEP_CLOSE,        /* the sync engine: watchdog joined, job figures gathered,
                                 * communicator closed (MPI finalised if the shim initialised it) */
    ASH_EXIT_STEP_SUMMARY,      /* info lines (only at info): allocation peaks, launches, GEMMs, sync counts */
    ASH_EXIT_STEP_REPORT,       /* the exit report (lines, JSON file); the trace closes last */
    ASH_EXIT_STEP_VERDICT,      /* rules that never fired, the parameter digest: may end the job
                                 * with exit 7 or 8 (_exit, after flushing stdio) */
    ASH_EXIT_STEP_COUNT_
} ash_exit_step_t;

/* Add fn to a step of the exit sequence (at most 8 per step; from init or the sync thread). */
ash_status_t ash_shim_at_exit(ash_exit_step_t step, void (*fn)(void));
/* A summary line at exit: ash_shim_at_exit(ASH_EXIT_STEP_SUMMARY, report). */
ash_status_t ash_shim_on_exit(void (*report)(void));
/* The communicator is open: register the sequence with atexit once more, so that it runs before
 * any atexit handler registered since init (and before any library destructor). */
void ash_shim_exit_early(void);

#endif /* ASH_SHIM_H */
