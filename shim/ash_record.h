/* ash_record.h — private to the shim: what the sync engine tells the recorder and the NaN/Inf
 * sentinel about each sync point (shim/record.c), and the sentinel's scan (shim/inspect.c).
 *
 * Recording (ACCELSHIM_RECORD=path, {rank} = the rank): one JSON Lines file per rank, one line
 * per buffer per recorded sync point, written with one write(2) each. "pre" lines are what THIS
 * rank computed (before the collective); "post" lines are the buffer right after the collective
 * (all ranks hold the same); with one rank, where nothing is communicated, "post" equals "pre"
 * and is written all the same, so 1-rank and N-rank records align. A sync point: every match of a
 * gradient rule; a parameter rule's first match per buffer (its broadcast). At exit, "exit" lines
 * for every buffer the parameter rules resolved, then an "end" line (the exit sequence's final-values step). Format: tools/accelshim-compare.c.
 * Sentinel (debug.nan_check, ACCELSHIM_NAN_CHECK=1): before the collective, the shim's own kernel
 * counts NaN/Inf in the buffer on the launch's stream; any -> report, exit status 5.
 * Threading: every entry point may be called from any thread; one mutex serialises them.
 */
#ifndef ASH_RECORD_H
#define ASH_RECORD_H

#include "ash_coll.h"
#include "ash_policy.h"
#include "ash_status.h"
#include "ash_sync.h"

#include <cuda.h>
#include <stddef.h>

/* Before the collective of rule r at a sync point of kernel k: ptr/count as the engine resolved
 * them, on the launch's stream s (read through the real-driver table, ash_driver.h). Records
 * a "pre" line and runs the sentinel; returns at once when neither is on. May end the process
 * (sentinel) after writing its report. */
void ash_record_before(const ash_policy_t *pol,
                       const ash_kernel_info_t *k, const ash_policy_rule_t *r, CUdeviceptr ptr,
                       size_t count, CUstream s);

/* Right after that rule's collective completed without error (ordered on s): a "post" line. */
void ash_record_after(const ash_policy_rule_t *r, CUdeviceptr ptr,
                      size_t count, CUstream s);

/* World size 1 (the engine communicates nothing): resolve each of the n rules' buffers from the
 * launch's own arguments, as the engine would, and record / check them ("pre" and "post").
 * Returns ASH_OK (the real launch follows); a buffer that cannot be resolved is skipped with a
 * warning (with one rank nothing depends on it). */
ash_status_t ash_record_solo(const ash_policy_t *pol,
                             const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                             const ash_policy_rule_t *const *rules, size_t n);

/* ---- shim/inspect.c: the scan kernels, loaded through the real driver ---- */

/* Count NaN and Inf among `count` elements of `dtype` at device address p, on stream s (queued
 * after the app's work there; waits for the answer on the host). Lazily loads the embedded PTX
 * in the current context. ASH_ERR_DRIVER / ASH_ERR_NOMEM on failure (logged). Caller serialises. */
ash_status_t ash_inspect_nonfinite(CUdeviceptr p, size_t count,
                                   ash_policy_dtype_t dtype, CUstream s, unsigned long long *nan,
                                   unsigned long long *inf);

#endif /* ASH_RECORD_H */
