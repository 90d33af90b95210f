/* ash_overlap.h — private to the shim: overlap of gradient all-reduces with the backward pass
 * (gradient rules with `ready:` or `overlap: auto`; docs/overlap.md).
 *
 * After a ready launch, the region it finalised is handed to ONE communication worker thread,
 * ordered after the launch by an event: the worker makes its own stream wait for the event and
 * has the engine issue the all-reduce there (sync.c: ash_sync_issue_allreduce), so the program's
 * thread never blocks on it (the mpi backend's host staging blocks the worker only). At the
 * rule's sync point the engine asks for what no ready point covered this step and reduces only
 * that, after the worker's work and the program's stream is ordered after the worker's stream.
 * A region is reduced at most once per step; a region whose ready launch did not come is
 * reduced at the sync point as without overlap.
 * Invariant: collectives are issued by one thread at a time — the worker, or the program's
 * thread after ash_overlap_quiesce (which every issuer on the program's side calls first) — in
 * the program's launch order on every rank.
 * Learned ready points (overlap: auto): the launches between two sync points that take pointers
 * into the rule's buffer are recorded for one step and checked on the next; from then on the
 * last launch that can write each region (pointer forward, up to the next pointer any launch
 * passes) is its ready point, verified on every launch. A deviation ends overlap for the rule
 * with one warning; a region written again after its early all-reduce is reduced again at the
 * sync point.
 * Threading: every function but the worker runs with the sync engine's lock held.
 */
#ifndef ASH_OVERLAP_H
#define ASH_OVERLAP_H

#include "ash_policy.h"
#include "ash_sync.h"

#include <cuda.h>
#include <stddef.h>

typedef struct {
    CUdeviceptr lo, hi; /* bytes [lo, hi) */
} ash_span_t;

/* At engine init: the options (ACCELSHIM_OVERLAP) and the policy's overlap rules. */
void ash_overlap_init(const ash_policy_t *p);
/* Overlap is off for good (one line, the reason): world 1, observers that read buffers before
 * their collective (record, nan_check), an MPI without thread support. */
void ash_overlap_disable(const char *why);
/* 1 when rule r overlaps (policy and options say so, not disabled): its sync points go through
 * ash_overlap_sync — also after its learned ready points fell back, so that regions sent early in
 * that step are not reduced again. */
int ash_overlap_on(const ash_policy_rule_t *r);
/* 1 when the matcher must see every kernel (a rule with overlap: auto, overlap on). */
int ash_overlap_observes_all(void);

/* After the real launch of a kernel with ready points (explicit matches in `ready`, n of them)
 * or, while learning/verifying auto rules, any kernel (the launch is the sync point of the rules
 * in sync_rules: not a step's launch for them): hand finalised regions to the worker. */
void ash_overlap_after_launch(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                              const ash_policy_ready_match_t *ready, size_t n,
                              const ash_policy_rule_t *const *sync_rules, size_t nsync);
/* Before the real launch of a kernel with explicit ready points (the program's thread): a ready
 * point whose region was already reduced early this step fires twice (it is not the region's
 * last writer): the launch is ordered after that reduction, the region is reduced again at the
 * sync point, the ready point is off from then on (one warning); with reduce: sum, exit 2. */
void ash_overlap_before_ready(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                              const ash_policy_ready_match_t *ready, size_t n);
/* Before the real launch of any kernel while an auto rule verifies (the program's thread): a
 * launch that would write a region already handed to the worker is ordered after it. */
void ash_overlap_before_launch(const ash_kernel_info_t *k, CUstream s, void **params, void **extra,
                               const ash_policy_rule_t *const *sync_rules, size_t nsync);

/* A library call (cuBLAS GEMM: site names it) that writes from OUT on stream s, before it is
 * issued (before = 1) and after (0); seen = 0: its outputs cannot be seen (a learned rule then
 * falls back). Only while ash_overlap_observes_all. */
void ash_overlap_library_write(const ash_kernel_info_t *site, CUstream s, CUdeviceptr out, int seen,
                               int before);

/* Before the program's thread issues any collective on stream s: flush the open buckets, wait
 * for the worker, order s after the worker's stream. Cheap when nothing is in flight. */
void ash_overlap_quiesce(CUstream s);
/* Rule r's sync point over [ptr, ptr + bytes): the parts no ready point covered this step, in
 * address order (*pieces stays valid until the next call); call after ash_overlap_quiesce. */
size_t ash_overlap_sync(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t bytes,
                        const ash_span_t **pieces);
/* 1 once the communication thread runs. */
int ash_overlap_active(void);
/* Finish everything handed to the worker (open buckets included) and its stream's work. */
void ash_overlap_drain(void);
/* Exit: wait for the worker and stop it (before the communicator closes); the report line. */
void ash_overlap_fini(void);

#endif /* ASH_OVERLAP_H */
