/* ash_fuse.h — private to the shim: fused reduction for gradient rules with `fuse: true`.
 *
 * A trainer that updates tensor by tensor launches the rule's kernel several times a step, each
 * on another slice of the gradients. Step 0 is learned (each launch reduced on its own, its
 * (pointer, count) recorded); the step boundary is the first buffer's launch coming back. From
 * then on the first launch of a step reduces ALL the learned buffers in one collective (in
 * place when they tile one contiguous span, else through one fusion buffer allocated with the
 * REAL driver, at most fuse_cap_bytes) and the step's other launches are not synced again.
 * Assumption (policy docs): every buffer of the rule is final before its first launch in a
 * step. Any other pattern (an unknown buffer, a repeat, a step that misses a buffer) ends
 * fusion for that rule with one warning: per-launch reduction from then on.
 * Threading: called with the sync engine's lock held. Callers: shim/sync.c, shim/report.c.
 */
#ifndef ASH_FUSE_H
#define ASH_FUSE_H

#include "ash_coll.h"
#include "ash_policy.h"
#include "ash_sync.h"

void ash_fuse_init(const ash_policy_t *p);
/* The gradient rule r's reduction before launch k of (ptr, count): fused, skipped (already
 * reduced this step) or per-launch; rules without fuse go straight to the per-launch path.
 * *issued: 1 when a collective went on the wire, 0 when the launch was skipped. */
ash_coll_status_t ash_fuse_allreduce(ash_coll_t *c, const ash_policy_rule_t *r,
                                     const ash_kernel_info_t *k, CUdeviceptr ptr, size_t count,
                                     ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                     ash_coll_redop_t op, CUstream s, int *issued);
/* "learning", "fused", "per-launch" (fell back or could not fuse) */
const char *ash_fuse_state_name(const ash_policy_rule_t *r);
/* Close time: nothing is freed (the context's teardown frees the fusion buffers). */
void ash_fuse_fini(void);

#endif /* ASH_FUSE_H */
