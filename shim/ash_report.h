/* ash_report.h — private to the shim: what the sync engine did, for the exit report.
 *
 * Counts per rule (sync points hit, collectives, bytes, fused steps, skipped launches), times
 * every collective (host time of the call, plus CUDA events recorded on the stream around it
 * through the REAL driver, harvested without blocking and at close), counts wire casts, and at
 * exit prints one info line per rank (rank 0 adds one line for the job) and, with
 * ACCELSHIM_REPORT=PATH ({rank} = the rank), writes the same as JSON. The job line needs the
 * other ranks' figures: they are gathered at close, before the communicator goes (one host
 * allgather of 6 words with ash_coll_fingerprint, bounded by timeout_s like every MPI wait).
 * Threading: the counting functions are called with the sync engine's lock held (one thread
 * at a time); init, close and exit run once. Callers: shim/sync.c, shim/fuse.c, shim/shim.c.
 */
#ifndef ASH_REPORT_H
#define ASH_REPORT_H

#include "ash_coll.h"
#include "ash_policy.h"
#include "ash_sync.h"

/* Once, from ash_shim_init after ash_sync_init: options, trace, fusion state, exit-report step. */
void ash_report_init(void);

/* A launch of kernel k matched rule r (sync engine, once per rule per matched launch). */
void ash_report_hit(const ash_policy_rule_t *r, const ash_kernel_info_t *k);
/* ash_coll_allreduce / ash_coll_broadcast, timed, counted and traced. fused_buffers: how many
 * launches' buffers this one collective covers (1 = an ordinary per-launch reduction). */
ash_coll_status_t ash_report_allreduce(ash_coll_t *c, const ash_policy_rule_t *r,
                                       const ash_kernel_info_t *k, CUdeviceptr buf, size_t count,
                                       ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                       ash_coll_redop_t op, CUstream s, unsigned fused_buffers);
ash_coll_status_t ash_report_broadcast(ash_coll_t *c, const ash_policy_rule_t *r,
                                       const ash_kernel_info_t *k, CUdeviceptr buf, size_t bytes,
                                       int root, CUstream s);
/* A fused rule's launch whose buffer the step's fused collective already reduced. */
void ash_report_fused_skip(const ash_policy_rule_t *r, const ash_kernel_info_t *k);
/* From the sync engine's close (exit sequence), BEFORE ash_coll_close: harvest the timing events,
 * release the fusion buffers, gather the ranks' figures for the job line. Collective. */
void ash_report_before_close(ash_coll_t *c);

#endif /* ASH_REPORT_H */
