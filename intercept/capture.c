/* capture.c — the stream-capture guard of the sync points (see ash_capture.h for why).
 *
 * Asks the REAL driver's cuStreamIsCapturing (never a hook) about the launch's stream, once per
 * matched launch. ACTIVE or INVALIDATED (a capture in progress, already broken) -> the message to
 * stop with. An error from the query (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: the legacy stream while
 * another stream captures globally — the launch itself then fails, loudly) -> no stop here.
 * Threading: the resolution under pthread_once; the message in a thread-local buffer.
 * Also the message of the same stop for a kernel put into a hand-built graph (hooks_graph.c).
 * Must not: call a hook or change the launch (it asks the real driver and hands back a message);
 * stop the program itself (the sync engine or the graph hook stops with that message); decide policy.
 */
#include "ash_capture.h"

#include "ash_hook.h"
#include "ash_log.h"

#include <pthread.h>
#include <stdio.h>

static PFN_cuStreamIsCapturing_v10000 ash_capture_is_capturing; /* written once, in the once */
static pthread_once_t ash_capture_once = PTHREAD_ONCE_INIT;

static void ash_capture_resolve(void)
{
    ash_capture_is_capturing = (PFN_cuStreamIsCapturing_v10000)ash_hook_driver_proc("cuStreamIsCapturing", 10000);
    if (ash_capture_is_capturing == NULL)
        ash_warn("capture", "the driver has no cuStreamIsCapturing: a sync point inside CUDA graph capture "
                 "cannot be detected");
}

const char *ash_capture_check(const ash_kernel_info_t *k, CUstream s, const ash_policy_rule_t *rule,
                              const char *policy_source)
{
    static __thread char msg[1024];
    pthread_once(&ash_capture_once, ash_capture_resolve);
    if (ash_capture_is_capturing == NULL)
        return NULL;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (ash_capture_is_capturing(s, &st) != CUDA_SUCCESS || st == CU_STREAM_CAPTURE_STATUS_NONE)
        return NULL;
    snprintf(msg, sizeof msg,
             "%s:%u:%u: rule at \"%s\" matched %s, launched on a stream that is %s CUDA graph capture: "
             "the graph would replay the kernel without the rule's collective and the ranks would "
             "silently diverge; stopping the job (exit %d). Launch the matched kernels outside graph "
             "capture (e.g. no CUDA graphs for the training step)",
             policy_source ? policy_source : "(policy)", rule ? rule->line : 0, rule ? rule->col : 0,
             rule ? rule->at : "?", k->demangled,
             st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "in" : "in an invalidated", ASH_EXIT_CAPTURE);
    return msg;
}

const char *ash_capture_graph_message(const ash_kernel_info_t *k, const ash_policy_rule_t *rule,
                                      const char *policy_source, const char *call)
{
    static __thread char msg[1024];
    snprintf(msg, sizeof msg,
             "%s:%u:%u: rule at \"%s\" matched %s, put into a hand-built CUDA graph by %s: the graph "
             "would run the kernel without the rule's collective and the ranks would silently diverge; "
             "stopping the job (exit %d). Sync outside CUDA graphs: launch the matched kernels directly "
             "(cuLaunchKernel, <<<...>>>) and keep only kernels that match no rule in graphs",
             policy_source ? policy_source : "(policy)", rule ? rule->line : 0, rule ? rule->col : 0,
             rule ? rule->at : "?", k->demangled, call, ASH_EXIT_CAPTURE);
    return msg;
}
