/* sync.c — PLACEHOLDER for the sync-point engine (issue 4 replaces this file).
 *
 * The engine will match kernel names against the policy (ash_sync_matcher) and, before a matched
 * launch, all-reduce / broadcast the rule's buffer (ash_launch_prepare). Until then there is no
 * matcher, so every kernel's rules are NULL and ash_launch_prepare is never reached; it does
 * nothing if it is. Not a feature: only the hook point the intercept layer calls.
 */
#include "ash_sync.h"

ash_kernel_match_fn ash_sync_matcher(void) { return NULL; }

ash_status_t ash_launch_prepare(const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    (void)k;
    (void)s;
    (void)params;
    (void)extra;
    return ASH_OK; /* no action */
}
