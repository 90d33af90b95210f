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
 * Threading: called with the sync engine's lock held. Callers: the sync engine (sync.c; the
 * exit report asks ash_fuse_state_name).
 */
#ifndef ASH_FUSE_H
#define ASH_FUSE_H

#include "ash_coll.h"
#include "ash_policy.h"
#include "ash_sync.h"

void ash_fuse_init(const ash_policy_t *p);

/* What the engine issues for one launch of a gradient rule. */
typedef struct {
    int skip;            /* 1: the step's fused collective already reduced this buffer */
    CUdeviceptr ptr;     /* what to reduce: the launch's buffer, the fused span or the fusion buffer */
    size_t count;        /* elements */
    unsigned buffers;    /* launches' buffers the collective covers (1: this launch's own) */
    int copy_back;       /* through the fusion buffer: ash_fuse_finish copies the result out */
} ash_fuse_step_t;

/* Decide the reduction before launch (ptr, count) of gradient rule r: per launch, fused (copying
 * the buffers into the fusion buffer on s when they are not contiguous) or skipped; rules
 * without fuse are per launch. A failed copy answers ASH_COLL_ECUDA. */
ash_coll_status_t ash_fuse_begin(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t count,
                                 CUstream s, ash_fuse_step_t *out);
/* After the engine's collective of *st succeeded: copy the fusion buffer back (if used). */
ash_coll_status_t ash_fuse_finish(const ash_policy_rule_t *r, const ash_fuse_step_t *st, CUstream s);
/* "learning", "fused", "per-launch" (fell back or could not fuse) */
const char *ash_fuse_state_name(const ash_policy_rule_t *r);
/* Close time: nothing is freed (the context's teardown frees the fusion buffers). */
void ash_fuse_fini(void);

#endif /* ASH_FUSE_H */
