/* ash_capture.h — private to the shim: the stream-capture guard of the sync points (capture.c).
 *
 * A launch that matches a policy rule must run the rule's collective before the kernel, every
 * time the kernel runs. Captured into a CUDA graph, the kernel would replay at each cuGraphLaunch
 * while the collective (run by the host, once, at capture) would not: ranks would diverge with
 * no error. So a launch on a capturing stream stops the job (ASH_EXIT_CAPTURE) when one of its
 * rules would communicate: a gradient rule, or a parameters rule whose buffer was not broadcast
 * yet (once it was, replaying the kernel skips nothing). Because the stop comes at capture, no
 * graph the job goes on to launch holds a launch that needed a collective.
 * Threading: any thread; the real cuStreamIsCapturing is resolved once.
 * Caller: shim/sync/sync.c ash_launch_prepare, per rule, just before its collective (one rank: for
 * gradient rules, so a one-rank rehearsal stops where N ranks would).
 * A graph built by hand (cuGraphAddKernelNode...) replays its kernels the same way, without the
 * launch hooks: intercept/hooks_graph.c stops at the call that puts such a kernel into a graph,
 * with ash_capture_graph_message (same rules: shim/sync/sync.c ash_sync_graph_rule).
 */
#ifndef ASH_CAPTURE_H
#define ASH_CAPTURE_H

#include "ash_fatal.h" /* ASH_EXIT_CAPTURE */
#include "ash_policy.h"
#include "ash_sync.h"

#include <cuda.h>


/* NULL when stream s (as the engine sees it: CU_STREAM_PER_THREAD for a _ptsz launch) is not
 * capturing, or the driver cannot say (no cuStreamIsCapturing: warned once); else the message
 * to stop with, naming the rule (policy file:line:col, its `at`) and the kernel (thread-local
 * buffer, valid until this thread's next call). */
const char *ash_capture_check(const ash_kernel_info_t *k, CUstream s, const ash_policy_rule_t *rule,
                              const char *policy_source);

/* The message to stop with when kernel k, which matched RULE (a sync point: ash_sync_graph_rule),
 * is put into a hand-built CUDA graph by the driver call CALL (its exported name); same form as
 * the capture message. Thread-local buffer, valid until this thread's next call. */
const char *ash_capture_graph_message(const ash_kernel_info_t *k, const ash_policy_rule_t *rule,
                                      const char *policy_source, const char *call);

#endif /* ASH_CAPTURE_H */
