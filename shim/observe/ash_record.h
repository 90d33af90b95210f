/* ash_record.h — private to the shim: the recorder (record.c), an observer of the sync engine.
 *
 * Recording (ACCELSHIM_RECORD=path, {rank} = the rank): one JSON Lines file per rank, one line
 * per buffer per recorded sync point, written with one write(2) each. "pre" lines are what THIS
 * rank computed (before the collective); "post" lines are the buffer right after the collective
 * (all ranks hold the same); with one rank, where nothing is communicated, "post" equals "pre"
 * and is written all the same, so 1-rank and N-rank records align. A sync point: every match of a
 * gradient rule; a parameter rule's first match per buffer (its broadcast). At exit, "exit" lines
 * for every buffer the parameter rules resolved, then an "end" line (the exit sequence's final-values step). Format: tools/accelshim-compare.c.
 * NaN/Inf (debug.nan_check, ACCELSHIM_NAN_CHECK=1) is the engine's check (ash_inspect.h); when
 * it stops the job, the record's last line says so ("stop"). Buffers are read through the
 * real-driver table on the launch's stream. Threading: events come with the engine's lock held;
 * one mutex of its own serialises them with the exit lines.
 */
#ifndef ASH_RECORD_H
#define ASH_RECORD_H

#include "ash_observer.h"

extern const ash_observer_t ash_record_observer;

#endif /* ASH_RECORD_H */
