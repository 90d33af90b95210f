/* ash_sync.h — private to the shim: the sync engine's entry points as seen from intercept/.
 *
 * Folder shim/sync/ owns: the sync engine: one pipeline per sync point (resolve -> check:
 * fingerprint, NaN/Inf -> collective, issued here -> done), fused reduction, overlap, watchdog,
 * NaN/Inf scan kernels, the end-of-job checks (unfired rules, parameter digest), the observer
 * interface (`ash_observer.h`)
 *
 * What intercept/kernels.c tells the engine about a kernel (ash_kernel_info_t: immutable once
 * published), the matcher it asks once per distinct kernel (ash_sync_matcher), and the single
 * hook point before a launch whose kernel matched a rule (ash_launch_prepare), plus the engine's
 * init (policy load).
 * Threading: the matcher runs under the kernel cache's insert lock; prepare runs on the
 * launching thread, concurrently from any thread (the engine serialises collectives).
 */
#ifndef ASH_SYNC_H
#define ASH_SYNC_H

#include "ash_status.h"
#include "ash_coll.h"
#include "ash_policy.h"

#include <cuda.h>
#include <stdint.h>

typedef struct ash_kernel_info {
    const void *handle;        /* the CUfunction or CUkernel handle the application launches */
    const char *name;          /* mangled name as the driver knows it; "?" when unknown */
    const char *demangled;     /* demangled name; == name when not C++ or no demangler */
    int is_kernel;             /* 1: handle is a CUkernel (cuLibraryGetKernel), 0: CUfunction */
    int nparams;               /* number of parameters; -1 when the driver cannot say */
    const uint32_t *param_offsets; /* nparams entries (NULL when nparams <= 0) */
    const uint32_t *param_sizes;   /* nparams entries, bytes */
    const void *rules;         /* the engine's matched rules (opaque); NULL: the launch fast path */
} ash_kernel_info_t;

/* Returns the rules matching k (opaque to intercept; must outlive the process) or NULL. */
typedef const void *(*ash_kernel_match_fn)(const ash_kernel_info_t *k);

/* The engine's matcher, asked once at init; NULL = no policy, every kernel takes the fast path. */
ash_kernel_match_fn ash_sync_matcher(void);

/* Called before the real launch ONLY when k->rules != NULL, on the application's stream, with the
 * launch's kernelParams / extra. ASH_OK = go on with the real launch. A failure is logged by the
 * caller and the launch proceeds (the engine decides what is fatal). */
ash_status_t ash_launch_prepare(const ash_kernel_info_t *k, CUstream s, void **params, void **extra);

/* Called after the real launch succeeded, when k->rules != NULL (same thread and arguments as
 * prepare): the launch's ready points start their regions' all-reduces (overlap). */
void ash_launch_done(const ash_kernel_info_t *k, CUstream s, void **params, void **extra);

/* A kernel with rules (k->rules != NULL) put into a hand-built CUDA graph, with the node's
 * kernelParams / extra (intercept/hooks_graph.c): the rule whose collective the graph would skip
 * (the job must stop: ash_capture_graph_message), or NULL (the node may go in). */
const ash_policy_rule_t *ash_sync_graph_rule(const ash_kernel_info_t *k, void **params, void **extra);

/* Library calls that write device memory (cuBLAS GEMMs: shim/precision/cublas.c) while learned ready
 * points watch (watches_writes() == 1): SITE names the call (handle = a unique address), OUT is
 * where its output starts (seen = 0: not visible, e.g. a batched GEMM), reported before the call
 * is issued (before = 1) and after it returned (0). */
int ash_sync_watches_writes(void);
void ash_sync_library_write(const ash_kernel_info_t *site, CUstream s, CUdeviceptr out, int seen, int before);

/* Before the program releases or resets a primary context (intercept/hooks_device.c). */
void ash_sync_context_ending(void);

/* Load the policy (ACCELSHIM_POLICY) and read the engine's options; called once from
 * ash_shim_init. An invalid policy ends the program here: "file:line:col: message", exit 2. */
ash_status_t ash_sync_init(void);

/* Where rule R's buffer is for this launch: its pointer (argument R->buffer.arg, or the base of
 * the allocation containing it for region: allocation) and element count (argument, constant,
 * or the allocation's size). From kernelParams or the packed `extra` buffer. The one resolver:
 * the engine uses it at every sync point, with one rank too. */
typedef enum {
    ASH_SYNC_RESOLVED,       /* *ptr and *count are set */
    ASH_SYNC_NO_ARGS,        /* the launch's arguments cannot be read (no layout for `extra`) */
    ASH_SYNC_NEGATIVE_COUNT, /* the count argument is negative (*bad_count, when not NULL) */
    ASH_SYNC_NOT_ALLOCATED,  /* region: allocation, and *ptr lies in no live allocation */
    /* count forms (*ptr and *count set): [ptr, ptr + count * size) must lie in one live
     * allocation (a VMM mapping is one); count 0 needs none */
    ASH_SYNC_OUTSIDE,        /* *ptr lies in no live allocation */
    ASH_SYNC_PAST_ALLOCATION /* *ptr lies in one, but count elements run past its end */
} ash_sync_resolve_t;
ash_sync_resolve_t ash_sync_resolve(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                    void **params, void **extra, CUdeviceptr *ptr, size_t *count,
                                    long long *bad_count);
/* The same for any buffer form (a ready point's, read from its own launch) and element type. */
ash_sync_resolve_t ash_sync_resolve_buffer(const ash_kernel_info_t *k, const ash_policy_buffer_t *b,
                                           ash_policy_dtype_t dtype, void **params, void **extra,
                                           CUdeviceptr *ptr, size_t *count, long long *bad_count);
/* A rule's buffer that failed the bounds check (OUTSIDE, PAST_ALLOCATION) stops the job: one line
 * naming the rule (file:line:col), the kernel, the count and its source, the allocation's size;
 * exit 2. Does not return. */
void ash_sync_refuse_bounds(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                            ash_sync_resolve_t why, CUdeviceptr ptr, size_t count)
    __attribute__((noreturn));
/* Where argument I of a launch lies (kernelParams, or the packed `extra` buffer, where SIZE bytes
 * must fit); NULL when it cannot be read. */
const void *ash_sync_arg(const ash_kernel_info_t *k, void **params, void **extra, unsigned i, size_t size);

/* The engine's one all-reduce issuer for gradient rule r (sequence number, fingerprint,
 * watchdog, observers; a failure ends the job). Called at sync points and by the overlap worker,
 * one thread at a time. */
void ash_sync_issue_allreduce(const ash_kernel_info_t *k, const ash_policy_rule_t *r, CUstream s,
                              CUdeviceptr ptr, size_t count, unsigned buffers, const char *what);

/* The policy loaded at init (NULL without one); immutable for the life of the process. */
const ash_policy_t *ash_sync_policy(void);

#endif /* ASH_SYNC_H */
