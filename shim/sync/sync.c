/* sync.c — the sync-point engine: what happens before a launch whose kernel matches a policy rule.
 *
 * At init the policy (ACCELSHIM_POLICY) is loaded; an invalid policy stops the program here, at
 * its first CUDA call, with "file:line:col: message" and exit status 2. The matcher (asked once
 * per distinct kernel by intercept/kernels.c) turns the policy's rules into a per-kernel plan,
 * checking each rule's argument indices against the kernel's parameter list. Before a matched
 * launch, ash_launch_prepare runs the one pipeline of a sync point, for each rule: resolve (the
 * buffer, from the launch's own arguments) -> check (fingerprint; NaN/Inf) -> collective, issued
 * here and only here, on the launch's stream (gradients -> all-reduce, per launch or fused by
 * fuse.c; parameters -> broadcast from rank 0 once per distinct (rule, buffer)) -> done. With
 * world size 1 nothing is communicated. The record, the exit report and the trace watch through
 * the observer interface (ash_observer.h) and issue nothing.
 * Reliability: every collective gets a sequence number; with check_collectives (policy, or
 * ACCELSHIM_CHECK_COLLECTIVES=1) ranks first exchange a fingerprint (rule, count, dtype, wire,
 * op, seq, kernel) and a mismatch ends every rank with a report and exit status 3. A watchdog
 * (timeout_s > 0) ends a rank whose collective has not completed in time: report, communicator
 * aborted, exit status 4 (see sync_watch.c). At exit the ranks meet before any exchange that
 * would wait for a peer, and every exit step is bounded by timeout_s too (sync_fini).
 * Threading: prepare may run on any thread; one mutex serialises collectives (ranks must issue
 * them in the same order anyway). Invariant: the real launch always follows, on the same stream.
 * Must not: issue a collective anywhere but here (overlap's worker has it issued through
 * ash_sync_issue_allreduce, on its own stream; every other one goes on the launch's stream); skip
 * or reorder the real launch; reach an observer except through the ash_observe_* dispatchers;
 * communicate with world size 1.
 */
#include "ash_sync.h"

#include "ash_alloc.h"
#include "ash_capture.h"
#include "ash_crash.h"
#include "ash_driver.h"
#include "ash_fatal.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "ash_world.h"
#include "ash_policy.h"
#include "ash_fuse.h"
#include "ash_inspect.h"
#include "ash_observer.h"
#include "ash_sync_watch.h"
#include "ash_unfired.h"
#include "ash_digest.h"
#include "ash_overlap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYNC_MAX_RULES 16

typedef struct sync_plan {
    size_t n;                          /* sync rules: the launch is their sync point */
    const ash_policy_rule_t *rule[SYNC_MAX_RULES];
    size_t nready;                     /* ready points the launch fires (overlap.c) */
    ash_policy_ready_match_t *ready;
} sync_plan_t;

typedef struct bcast_seen {
    const ash_policy_rule_t *rule;
    CUdeviceptr base;
    size_t bytes;
    struct bcast_seen *next;
} bcast_seen_t;

static struct {
    ash_policy_t *policy;
    ash_coll_dtype_t wire_override; /* ASH_COLL_SAME: none */
    unsigned timeout_s;
    pthread_mutex_t lock;           /* serialises collectives and the tables below */
    ash_coll_t *coll;
    const char *backend;            /* name of the opened backend, for the exit report */
    int coll_failed;
    bcast_seen_t *seen;
    unsigned long long allreduces, broadcasts, bytes;
    int check;                      /* fingerprint each collective first */
    int no_mpi;                     /* ACCELSHIM_RENDEZVOUS=nccl: the ranks are no MPI world */
    const char *comm_id;            /* NCCL_COMM_ID, or torchrun's (ash_world_nccl_rendezvous) */
    unsigned long long seq;         /* collectives issued by this rank (all ranks agree) */
    unsigned long long *rule_seq[2]; /* sync points of each rule so far (gradients, parameters) */
    int nan_check;                  /* scan each buffer for NaN/Inf before its collective */
    int world1;                     /* ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1: at world 1 every sync
                                     * point runs its collective anyway (one rank through the
                                     * backend), so one GPU exercises the collective path */
    unsigned long long fp_calls;    /* fingerprint exchanges, and their total time */
    double fp_seconds;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wire_override = ASH_COLL_SAME};

static ash_coll_dtype_t dtype_of(ash_policy_dtype_t d)
{
    switch (d) {
    case ASH_POLICY_DTYPE_F16: return ASH_COLL_F16;
    case ASH_POLICY_DTYPE_BF16: return ASH_COLL_BF16;
    default: return ASH_COLL_F32;
    }
}

static ash_coll_dtype_t wire_of(const ash_policy_rule_t *r)
{
    if (r->dtype == ASH_POLICY_DTYPE_F32 && S.wire_override != ASH_COLL_SAME)
        return S.wire_override;
    switch (r->wire) {
    case ASH_POLICY_WIRE_F32: return ASH_COLL_F32;
    case ASH_POLICY_WIRE_F16: return ASH_COLL_F16;
    case ASH_POLICY_WIRE_BF16: return ASH_COLL_BF16;
    default: return ASH_COLL_SAME;
    }
}

static void sync_coll_log(int level, const char *msg)
{
    static const ash_log_level_t map[] = {ASH_LOG_ERROR, ASH_LOG_WARN, ASH_LOG_INFO, ASH_LOG_DEBUG};
    ash_log_level_t l = level >= 0 && level <= 3 ? map[level] : ASH_LOG_WARN;
    ASH_LOG(l, "coll", "%s", msg);
}

static void sync_report(void)
{
    if (S.allreduces || S.broadcasts)
        ash_info("report", "sync: %llu all-reduce(s), %llu broadcast(s), %llu bytes, backend %s",
                 S.allreduces, S.broadcasts, S.bytes, S.backend ? S.backend : "none");
    if (S.fp_calls)
        ash_info("report", "check_collectives: %llu fingerprint exchange(s), %.1f us each on "
                 "average", S.fp_calls, S.fp_seconds * 1e6 / (double)S.fp_calls);
}

/* The policy's values for options the environment may override, merged in ONE place: the
 * options table (the environment wins; the parser checks the policy's values like any other). */
static void sync_merge_policy(const ash_policy_t *p)
{
    char v[32];
    snprintf(v, sizeof v, "%u", ash_policy_timeout_s(p));
    ash_status_t st = ash_opt_set_policy(ASH_OPT_TIMEOUT_S, v);
    st |= ash_opt_set_policy(ASH_OPT_CHECK_COLLECTIVES, ash_policy_check_collectives(p) ? "1" : "0");
    st |= ash_opt_set_policy(ASH_OPT_NAN_CHECK, ash_policy_nan_check(p) ? "1" : "0");
    st |= ash_opt_set_policy(ASH_OPT_MATMUL, ash_policy_matmul_name(ash_policy_matmul(p)));
    if (ash_policy_trace(p))
        st |= ash_opt_set_policy(ASH_OPT_TRACE, ash_policy_trace(p));
    if (st != ASH_OK) /* the policy parser validated these already */
        ash_fatal(ASH_EXIT_CONFIG, "%s: a debug/precision value the options table refuses",
                  ash_policy_source(p));
}

ash_status_t ash_sync_init(void)
{
    /* every option was validated by ash_opt_init: here only what combines two of them */
    static const ash_coll_dtype_t wires[] = {ASH_COLL_BF16, ASH_COLL_F16, ASH_COLL_F16,
                                             ASH_COLL_SAME, ASH_COLL_SAME}; /* bf16|f16|fp16|no|same */
    int w = ash_opt_enum(ASH_OPT_WIRE_OVERRIDE);
    if (w >= 0)
        S.wire_override = wires[w];
    long v = 0;
    S.world1 = ash_opt_int(ASH_OPT_DEBUG_WORLD1_COLLECTIVES, &v) == ASH_OK && v == 1;
    S.no_mpi = ash_opt_enum(ASH_OPT_RENDEZVOUS) == 1; /* mpi|nccl */
    S.comm_id = ash_opt_str(ASH_OPT_NCCL_COMM_ID);
    if (ash_world_nccl_rendezvous(&S.comm_id)) /* torchrun's ranks: world.c chose where they meet */
        S.no_mpi = 1;
    if (S.no_mpi && !S.comm_id)
        ash_fatal(ASH_EXIT_CONFIG, "ACCELSHIM_RENDEZVOUS=nccl: NCCL_COMM_ID (IP:PORT where the ranks meet) is not set");
    const char *path = ash_opt_str(ASH_OPT_POLICY);
    if (!path)
        return ASH_OK;
    char err[1024];
    if (ash_policy_load(path, &S.policy, err, sizeof err) != ASH_POLICY_OK)
        ash_fatal(ASH_EXIT_CONFIG, "%s", err);
    sync_merge_policy(S.policy);
    S.timeout_s = ash_opt_int(ASH_OPT_TIMEOUT_S, &v) == ASH_OK ? (unsigned)v : 0;
    S.check = ash_opt_int(ASH_OPT_CHECK_COLLECTIVES, &v) == ASH_OK && v == 1;
    S.nan_check = ash_opt_int(ASH_OPT_NAN_CHECK, &v) == ASH_OK && v == 1;
    for (int kind = 0; kind < 2; kind++) {
        size_t n = ash_policy_rule_count(S.policy, (ash_policy_rule_kind_t)kind);
        if (n && !(S.rule_seq[kind] = calloc(n, sizeof *S.rule_seq[kind])))
            ash_fatal(ASH_EXIT_CONFIG, "out of memory loading the policy");
    }
    ash_fuse_init(S.policy);
    ash_overlap_init(S.policy);
    if (ash_world()->size <= 1 && !S.world1)
        ash_overlap_disable("one rank");
    else if (S.nan_check || ash_opt_str(ASH_OPT_RECORD))
        ash_overlap_disable("nan_check / the record read each buffer before its collective");
    if (S.nan_check)
        ash_info("sync", "nan_check: every synced buffer is scanned for NaN/Inf before its "
                 "collective");
    ash_shim_on_exit(sync_report);
    ash_info("sync", "policy %s: %zu gradient rule(s), %zu parameter rule(s)", path,
             ash_policy_rule_count(S.policy, ASH_POLICY_RULE_GRADIENT),
             ash_policy_rule_count(S.policy, ASH_POLICY_RULE_PARAMETER));
    return ASH_OK;
}

/* The declared type of parameter I in a demangled C++ signature ("f(float*, int)": 0 -> "float*"),
 * into OUT; 0 when the name carries no signature (an extern "C" kernel) or has no such parameter.
 * Commas inside <> or () (templates, function pointers) do not split. */
static int declared_type(const char *demangled, unsigned i, char *out, size_t cap)
{
    const char *p = demangled ? strchr(demangled, '(') : NULL;
    if (!p || cap == 0)
        return 0;
    unsigned at = 0;
    int depth = 0;
    const char *start = ++p;
    for (; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if ((*p == ',' || *p == ')') && depth == 0) {
            if (at++ == i) {
                while (*start == ' ')
                    start++;
                size_t n = (size_t)(p - start) < cap - 1 ? (size_t)(p - start) : cap - 1;
                memcpy(out, start, n);
                out[n] = 0;
                return n > 0;
            }
            if (*p == ')')
                return 0;
            start = p + 1;
        }
    }
    return 0;
}

/* What a declared type is: 'p' pointer (or reference), 'f' floating point, 'i' anything else */
static char declared_kind(const char *t)
{
    if (strchr(t, '*') || strchr(t, '&'))
        return 'p';
    static const char *const floats[] = {"float", "double", "__half", "half", "__nv_bfloat16",
                                         "nv_bfloat16", "__nv_half", "bfloat16"};
    char word[64];
    size_t n = strcspn(t, " ");
    if (n >= sizeof word)
        return 'i';
    memcpy(word, t, n);
    word[n] = 0;
    if (!strcmp(word, "const") || !strcmp(word, "volatile")) /* "const float" */
        return declared_kind(t + n + (t[n] == ' '));
    for (size_t j = 0; j < sizeof floats / sizeof *floats; j++)
        if (!strcmp(word, floats[j]))
            return 'f';
    return 'i';
}

/* A rule's argument must be a pointer (8 bytes) and its count argument an integer (4 or 8); RP:
 * the same for a ready point's buffer (named in the messages), NULL for the rule's own. */
static void check_rule_against_kernel(const ash_policy_rule_t *r, const ash_kernel_info_t *k,
                                      const ash_policy_ready_t *rp)
{
    const char *list = r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    const ash_policy_buffer_t *b = rp ? &rp->buffer : &r->buffer;
    char who[160];
    unsigned line = rp ? rp->line : r->line, col = rp ? rp->col : r->col;
    if (rp)
        snprintf(who, sizeof who, "%s[%u].ready[%u] (after: \"%s\")", list, r->index, rp->index, rp->after);
    else
        snprintf(who, sizeof who, "%s[%u] (at: \"%s\")", list, r->index, r->at);
    if (k->nparams < 0)
        return; /* the driver cannot say; the launch's own arguments are trusted as written */
    unsigned need = b->arg;
    if (b->kind == ASH_POLICY_BUFFER_COUNT_ARG && b->count_arg > need)
        need = b->count_arg;
    if ((int)need >= k->nparams) {
        ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s names argument %u, but kernel %s has %d parameter(s)",
                  ash_policy_source(S.policy), line, col, who, need, k->demangled, k->nparams);
    }
    if (k->param_sizes[b->arg] != 8) {
        ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s: argument %u of kernel %s is %u bytes, not a pointer",
                  ash_policy_source(S.policy), line, col, who, b->arg, k->demangled,
                  k->param_sizes[b->arg]);
    }
    char type[128];
    if (declared_type(k->demangled, b->arg, type, sizeof type) && declared_kind(type) != 'p')
        ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s: argument %u of kernel %s is %s, not a pointer",
                  ash_policy_source(S.policy), line, col, who, b->arg, k->demangled, type);
    if (b->kind == ASH_POLICY_BUFFER_COUNT_ARG) {
        uint32_t sz = k->param_sizes[b->count_arg];
        if (sz != 4 && sz != 8) {
            ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s: count argument %u of kernel %s is %u bytes, "
                      "not an integer",
                      ash_policy_source(S.policy), line, col, who, b->count_arg, k->demangled, sz);
        }
        char kind = declared_type(k->demangled, b->count_arg, type, sizeof type) ? declared_kind(type) : 'i';
        if (kind != 'i')
            ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s: count argument %u of kernel %s is %s, %s, not an "
                      "integer", ash_policy_source(S.policy), line, col, who, b->count_arg,
                      k->demangled, type, kind == 'p' ? "a pointer" : "a floating-point value");
    }
}

static const void *sync_match(const ash_kernel_info_t *k)
{
    const ash_policy_rule_t *found[SYNC_MAX_RULES];
    ash_unfired_seen(k, k->name, k->demangled); /* unfired: "nearest kernel seen", the step watch */
    size_t n = ash_policy_match(S.policy, k->name, k->demangled, found, SYNC_MAX_RULES);
    size_t nready = ash_policy_match_ready(S.policy, k->name, k->demangled, NULL, 0);
    if (n == 0 && nready == 0 && !ash_overlap_observes_all())
        return NULL;
    if (n > SYNC_MAX_RULES) {
        ash_warn("sync", "kernel %s matches %zu rules; only the first %d are applied", k->name, n,
                 SYNC_MAX_RULES);
        n = SYNC_MAX_RULES;
    }
    sync_plan_t *plan = calloc(1, sizeof *plan);
    if (plan && nready && !(plan->ready = calloc(nready, sizeof *plan->ready))) {
        free(plan);
        plan = NULL;
    }
    if (!plan) {
        ash_error("sync", "out of memory planning kernel %s: its rules are NOT applied", k->name);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        check_rule_against_kernel(found[i], k, NULL);
        plan->rule[i] = found[i];
        ash_info("sync", "kernel %s: sync point for %s[%u] (at: \"%s\")", k->demangled,
                 found[i]->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters",
                 found[i]->index, found[i]->at);
    }
    plan->n = n;
    plan->nready = ash_policy_match_ready(S.policy, k->name, k->demangled, plan->ready, nready);
    for (size_t i = 0; i < plan->nready; i++) {
        const ash_policy_ready_t *rp = plan->ready[i].ready;
        if (rp->has_buffer) /* its buffer form against the kernel, as a rule's */
            check_rule_against_kernel(plan->ready[i].rule, k, rp);
        ash_info("sync", "kernel %s: ready point gradients[%u].ready[%u] (after: \"%s\")",
                 k->demangled, plan->ready[i].rule->index, rp->index, rp->after);
    }
    return plan; /* lives as long as the process, like the kernel cache entry that holds it */
}

ash_kernel_match_fn ash_sync_matcher(void) { return S.policy ? sync_match : NULL; }

const ash_policy_t *ash_sync_policy(void) { return S.policy; } /* ash_sync.h */

/* Where argument I of a launch lies: kernelParams[I], or its place in the packed `extra` buffer
 * (SIZE bytes must fit there); NULL when it cannot be read. The one reader of a launch's
 * arguments (the resolver below, the overlap's pointer scan). */
const void *ash_sync_arg(const ash_kernel_info_t *k, void **params, void **extra, unsigned i, size_t size)
{
    if (params)
        return params[i];
    if (!extra || k->nparams <= 0 || (int)i >= k->nparams)
        return NULL;
    const char *buf = NULL;
    size_t buflen = 0;
    for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
        if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = e[1];
        else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            buflen = *(size_t *)e[1];
    }
    return buf && k->param_offsets[i] + size <= buflen ? buf + k->param_offsets[i] : NULL;
}

static int arg_bytes(const ash_kernel_info_t *k, void **params, void **extra, unsigned i,
                     size_t size, void *out)
{
    const void *p = ash_sync_arg(k, params, extra, i, size);
    if (!p)
        return -1;
    memcpy(out, p, size);
    return 0;
}

ash_sync_resolve_t ash_sync_resolve_buffer(const ash_kernel_info_t *k, const ash_policy_buffer_t *b,
                                           ash_policy_dtype_t dtype, void **params, void **extra,
                                           CUdeviceptr *ptr, size_t *count, long long *bad_count)
{
    size_t esize = dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    if (arg_bytes(k, params, extra, b->arg, sizeof *ptr, ptr) != 0)
        return ASH_SYNC_NO_ARGS;
    if (b->kind == ASH_POLICY_BUFFER_COUNT) {
        *count = b->count;
    } else if (b->kind == ASH_POLICY_BUFFER_COUNT_ARG) {
        unsigned sz = k->nparams > 0 ? k->param_sizes[b->count_arg] : 4;
        int64_t v = 0;
        if (sz == 8) {
            if (arg_bytes(k, params, extra, b->count_arg, 8, &v) != 0)
                return ASH_SYNC_NO_ARGS;
        } else {
            int32_t v32;
            if (arg_bytes(k, params, extra, b->count_arg, 4, &v32) != 0)
                return ASH_SYNC_NO_ARGS;
            v = v32;
        }
        if (v < 0) {
            if (bad_count)
                *bad_count = (long long)v;
            return ASH_SYNC_NEGATIVE_COUNT;
        }
        *count = (size_t)v;
    } else {
        ash_alloc_entry_t e;
        if (ash_alloc_find(*ptr, &e) != ASH_ALLOC_OK)
            return ASH_SYNC_NOT_ALLOCATED;
        *ptr = e.base;
        *count = e.size / esize;
        return ASH_SYNC_RESOLVED;
    }
    /* a count of the policy's or the launch's: the buffer must lie in one live allocation */
    ash_alloc_entry_t e;
    if (*count == 0)
        return ASH_SYNC_RESOLVED;
    if (ash_alloc_find(*ptr, &e) != ASH_ALLOC_OK)
        return ASH_SYNC_OUTSIDE;
    if (*count > (e.base + e.size - *ptr) / esize)
        return ASH_SYNC_PAST_ALLOCATION;
    return ASH_SYNC_RESOLVED;
}

void ash_sync_refuse_bounds(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                            ash_sync_resolve_t why, CUdeviceptr ptr, size_t count)
{
    const ash_policy_buffer_t *b = &r->buffer;
    const char *list = r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    const char *type = r->dtype == ASH_POLICY_DTYPE_F32 ? "f32" : r->dtype == ASH_POLICY_DTYPE_BF16 ? "bf16" : "f16";
    size_t esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    char source[160], where[256];
    if (b->kind == ASH_POLICY_BUFFER_COUNT)
        snprintf(source, sizeof source, "count: %llu in the policy", (unsigned long long)b->count);
    else
        snprintf(source, sizeof source, "count argument %u of the launch; if argument %u is not "
                 "the element count (a float or a pointer read as one?), fix count_arg", b->count_arg,
                 b->count_arg);
    ash_alloc_entry_t e;
    if (why == ASH_SYNC_PAST_ALLOCATION && ash_alloc_find(ptr, &e) == ASH_ALLOC_OK)
        snprintf(where, sizeof where, "runs past the allocation its pointer 0x%llx (argument %u) "
                 "lies in: %llu bytes from that allocation's start, which holds %llu bytes (%llu %s), "
                 "and %llu bytes are needed", (unsigned long long)ptr, b->arg,
                 (unsigned long long)(ptr - e.base), (unsigned long long)e.size,
                 (unsigned long long)(e.size / esize), type,
                 (unsigned long long)(ptr - e.base) + (unsigned long long)count * esize);
    else
        snprintf(where, sizeof where, "has its pointer 0x%llx (argument %u) in no live allocation "
                 "of the program's", (unsigned long long)ptr, b->arg);
    ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: %s[%u] (at: \"%s\"): the buffer of %llu %s (%s) at %s %s; "
              "stopping the job before the collective writes where the buffer does not reach (exit 2)",
              ash_policy_source(S.policy), r->line, r->col, list, r->index, r->at,
              (unsigned long long)count, type, source, k->demangled, where);
}

ash_sync_resolve_t ash_sync_resolve(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                    void **params, void **extra, CUdeviceptr *ptr, size_t *count,
                                    long long *bad_count)
{
    return ash_sync_resolve_buffer(k, &r->buffer, r->dtype, params, extra, ptr, count, bad_count);
}

/* The job's figures for the observer that takes part (the report): one host allgather of its
 * words, before the communicator goes (no MPI world: over the exit meeting's TCP, without CUDA);
 * bounded by the watchdog (sync_fini). */
static void sync_gather_job(void)
{
    const ash_observer_t *o = ash_observe_job_owner();
    int n = ash_world()->size;
    unsigned long long mine[ASH_COLL_FP_WORDS] = {0};
    if (!o || n <= 1 || !o->job_words(mine))
        return;
    unsigned long long *all = calloc((size_t)n, sizeof mine);
    if (!all)
        return;
    ash_coll_status_t st = ash_coll_exit_gather(S.coll, "the job summary", mine, all);
    if (st != ASH_COLL_OK)
        ash_warn("report", "gathering the ranks' figures failed (%s): no job summary",
                 ash_coll_status_text(st));
    else
        o->job(all, n); /* it keeps all */
    if (st != ASH_COLL_OK)
        free(all);
}

/* The exit's meeting: every rank has reached its end, or (after timeout_s) this rank names the
 * ranks that did not and ends with exit 4 — before any exchange that would wait for them. */
static void sync_meet_at_exit(void)
{
    int n = ash_world()->size;
    unsigned char *absent = calloc((size_t)n, 1);
    if (!absent)
        return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ash_coll_status_t st = ash_coll_arrive(S.coll, (double)S.timeout_s, absent);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (st == ASH_COLL_ETIMEDOUT) {
        char list[256] = "";
        size_t len = 0;
        int missing = 0;
        for (int r = 0; r < n; r++) {
            if (!absent[r])
                continue;
            if (missing++ < 16 && len < sizeof list)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", missing > 1 ? ", " : "", r);
        }
        if (missing > 16 && len < sizeof list)
            snprintf(list + len, sizeof list - len, " and %d more", missing - 16);
        if (waited + 0.5 < (double)S.timeout_s) /* named before the deadline: it is gone */
            ash_error("exit", "rank(s) %s did not reach the end of the job: gone after %.1f s (its "
                      "connection closed or was refused; debug.timeout_s %u, rank %d of %d waited): "
                      "it ended, failed or was stopped before the meeting; exiting with status %d",
                      missing ? list : "?", waited, S.timeout_s, ash_world()->rank, n, ASH_EXIT_TIMEOUT);
        else
            ash_error("exit", "rank(s) %s did not reach the end of the job within %u s (debug.timeout_s; "
                      "rank %d of %d waited): still training (more steps than this rank?), stalled, or "
                      "stuck in a collective; exiting with status %d", missing ? list : "?", S.timeout_s,
                      ash_world()->rank, n, ASH_EXIT_TIMEOUT);
        ash_fatal_now_reported(ASH_EXIT_TIMEOUT); /* in the exit sequence: _exit */
    }
    if (st != ASH_COLL_OK)
        ash_warn("exit", "the ranks' meeting at exit failed (%s)", ash_coll_status_text(st));
    free(absent);
}

/* The exit sequence's close step (added when the communicator opens): meet the other ranks,
 * gather the job's figures, release the communicator (finalising MPI if we initialised it). The
 * watchdog keeps running until the communicator is closed, so each blocking step here ends
 * within timeout_s (exit 4) whatever a peer does. */
static void sync_fini(void)
{
    if (S.coll && !ash_fatal_code()) { /* fatal: peers may be inside a collective */
        ash_overlap_fini(); /* the worker's collectives first: every rank issues them */
        ash_fuse_fini();
        ash_observe_close();
        sync_meet_at_exit(); /* every exchange at exit comes after the ranks met, under a deadline */
        ash_sync_watch_exit_begin("the parameter digest exchange");
        ash_digest_compare(S.coll); /* digest: do the ranks end with the same parameters? */
        ash_sync_watch_end(NULL);
        ash_sync_watch_exit_begin("the job summary exchange");
        sync_gather_job();
        ash_sync_watch_end(NULL);
        ash_sync_watch_exit_begin("closing the communicator");
        ash_coll_close(S.coll);
        ash_sync_watch_end(NULL);
        S.coll = NULL;
    }
    ash_sync_watch_stop();
}

static ash_coll_status_t open_coll(void)
{
    if (S.coll)
        return ASH_COLL_OK;
    if (S.coll_failed)
        return ASH_COLL_ESTATE;
    const ash_world_t *w = ash_world();
    ash_coll_config_t cfg = {
        .rank = w->rank,
        .world_size = w->size,
        .local_rank = w->local_rank,
        .driver = ash_driver(),
        .timeout_s = (double)S.timeout_s,
        .log = sync_coll_log,
        /* ranks of the launcher's own engine (per-machine form) are no MPI world */
        .no_mpi = S.no_mpi,
        .nccl_comm_id = S.comm_id,
        .job_id = ash_opt_str(ASH_OPT_JOB_ID),
    };
    ash_crash_mark(); /* crash reports: tell MPI's signal handlers from the program's */
    ash_world_mpi_mark(); /* one MPI world per rank: a later CUDA program runs alone (world_mpi.c) */
    /* the rendezvous is a collective too (MPI_Init_thread's fence, MPI_Comm_dup,
     * ncclCommInitRank): watched like one, and this rank's progress record says it got there, so
     * a peer that never comes is named (by this rank's watchdog and by the launcher) */
    if (S.timeout_s > 0)
        (void)ash_sync_watch_start(NULL, S.timeout_s, 0);
    ash_sync_watch_begin("the rendezvous (opening the collectives at the first sync point)", S.seq);
    ash_coll_status_t st = ash_coll_open(ash_opt_str(ASH_OPT_BACKEND), &cfg, &S.coll);
    ash_sync_watch_end(NULL);
    if (st != ASH_COLL_OK) {
        S.coll_failed = 1;
    } else {
        S.backend = ash_coll_backend_name(S.coll);
        ash_info("sync", "collectives backend: %s", S.backend);
        ash_crash_reinstall(); /* on top of MPI's handlers (chaining), never the program's */
        /* the watchdog thread bounds every wait from here on, so the collectives may use MPI's
         * blocking algorithms (no polling); without it (timeout 0) they block as well */
        if (S.timeout_s > 0 &&
            ash_sync_watch_start(S.coll, S.timeout_s, !strcmp(S.backend, "nccl")) != ASH_OK)
            ash_warn("sync", "watchdog not started: collectives keep their own %u s wait bound", S.timeout_s);
        else
            ash_coll_set_timeout(S.coll, 0);
        if (!ash_coll_any_thread(S.coll))
            ash_overlap_disable("MPI provides no thread support beyond the initialising thread");
        ash_shim_at_exit(ASH_EXIT_STEP_CLOSE, sync_fini);
        ash_shim_exit_early(); /* the sequence runs before handlers registered since init */
    }
    return st;
}

/* A collective that failed. A broken transport (a peer rank ended, its connection closed, the
 * communicator is unusable after it) is a collective that did not complete: exit 4, as the
 * watchdog's; what the backend refuses (an argument, a dtype) is the configuration's: exit 2. */
static ash_exit_t sync_coll_exit(ash_coll_status_t st)
{
    return st == ASH_COLL_ENCCL || st == ASH_COLL_EMPI || st == ASH_COLL_EPEER ||
           st == ASH_COLL_ESTATE ? ASH_EXIT_TIMEOUT : ASH_EXIT_CONFIG;
}
static const char *sync_coll_why(ash_coll_status_t st)
{
    return sync_coll_exit(st) == ASH_EXIT_TIMEOUT
               ? " (a peer rank ended or its connection broke); exiting with status 4" : "";
}

/* The fingerprint of one collective: 6 words every rank must agree on. */
enum { FP_RULE, FP_COUNT, FP_TYPE, FP_SEQ, FP_KERNEL, FP_OP };

static unsigned long long fnv1a(const char *t)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (; t && *t; t++)
        h = (h ^ (unsigned char)*t) * 0x100000001b3ull;
    return h;
}

static double sync_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "reduces 676 f32 (wire bf16, mean) at gradients[0] seq 7" from a fingerprint */
static void fp_describe(const unsigned long long *f, char *out, size_t len)
{
    unsigned kind = (unsigned)(f[FP_RULE] >> 32), index = (unsigned)f[FP_RULE];
    int dtype = (int)(f[FP_TYPE] & 0xff) - 1, wire = (int)((f[FP_TYPE] >> 8) & 0xff) - 1;
    int op = (int)((f[FP_TYPE] >> 16) & 0xff);
    if (f[FP_OP] == 1)
        snprintf(out, len, "reduces %llu %s (wire %s, %s) at gradients[%u] seq %llu",
                 f[FP_COUNT], ash_coll_dtype_name((ash_coll_dtype_t)dtype),
                 ash_coll_dtype_name((ash_coll_dtype_t)wire), op ? "mean" : "sum", index,
                 f[FP_SEQ]);
    else
        snprintf(out, len, "broadcasts %llu bytes at %s[%u] seq %llu", f[FP_COUNT],
                 kind ? "parameters" : "gradients", index, f[FP_SEQ]);
}

/* Exchange this collective's fingerprint; on any difference, every rank prints which ranks
 * differ from rank 0 in what, and the job ends with status 3 (before the mismatched collective
 * could hang or corrupt). */
static void sync_check_fingerprint(const ash_policy_rule_t *r, const ash_kernel_info_t *k,
                                   size_t count, size_t esize, unsigned long long seq,
                                   const char *what)
{
    int grad = r->kind == ASH_POLICY_RULE_GRADIENT;
    unsigned long long fp[ASH_COLL_FP_WORDS] = {0};
    fp[FP_RULE] = (unsigned long long)(grad ? 0 : 1) << 32 | r->index;
    fp[FP_COUNT] = grad ? count : count * esize;
    if (grad)
        fp[FP_TYPE] = (unsigned long long)(dtype_of(r->dtype) + 1) |
                      (unsigned long long)(wire_of(r) + 1) << 8 |
                      (unsigned long long)(r->reduce == ASH_POLICY_REDUCE_SUM ? 0 : 1) << 16;
    fp[FP_SEQ] = seq;
    fp[FP_KERNEL] = fnv1a(k->name);
    fp[FP_OP] = grad ? 1 : 2;
    int n = ash_world()->size;
    unsigned long long stack[ASH_COLL_FP_WORDS * 16], *all = stack;
    if (n > 16 && !(all = malloc(sizeof *all * ASH_COLL_FP_WORDS * (size_t)n)))
        return; /* cannot check; the collective itself still runs */
    ash_sync_watch_begin(what, seq);
    double t0 = sync_now();
    ash_coll_status_t st = ash_coll_fingerprint(S.coll, fp, all);
    S.fp_seconds += sync_now() - t0;
    S.fp_calls++;
    if (st == ASH_COLL_ETIMEDOUT)
        ash_sync_watch_timeout(what, seq);
    ash_sync_watch_end(NULL);
    if (st != ASH_COLL_OK) {
        ash_fatal(sync_coll_exit(st), "check_collectives: fingerprint exchange for %s failed: %s%s",
                 what, ash_coll_status_text(st), sync_coll_why(st));
    }
    int bad = 0;
    char mine[192], ref[192];
    fp_describe(all, ref, sizeof ref);
    for (int q = 1; q < n; q++) {
        const unsigned long long *f = all + (size_t)q * ASH_COLL_FP_WORDS;
        if (!memcmp(f, all, sizeof fp))
            continue;
        fp_describe(f, mine, sizeof mine);
        int other_kernel = f[FP_KERNEL] != all[FP_KERNEL] && f[FP_OP] == all[FP_OP];
        ash_error("check", "collective fingerprint mismatch: rank %d %s%s; rank 0 %s", q, mine,
                  other_kernel ? " before a different kernel" : "", ref);
        bad++;
    }
    if (all != stack)
        free(all);
    if (bad) {
        ash_fatal(ASH_EXIT_MISMATCH, "check_collectives: %d rank(s) disagree with rank 0 at %s "
                 "(seq %llu); stopping the job (exit %d)", bad, what, seq, ASH_EXIT_MISMATCH);
    }
}

static uint64_t sync_now_ns(void) /* CLOCK_MONOTONIC, the trace's clock */
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the collective: issued here, and only here, with the observers told before and after ---- */

/* Around each collective: the observers told before it is issued and after it returned (its
 * status in e), with its start and end times. Use: begin; end(e, the collective's call). */
static void sync_coll_begin(ash_sync_event_t *e)
{
    ash_observe_before_collective(e);
    e->t0_ns = sync_now_ns();
}

static void sync_coll_end(ash_sync_event_t *e, ash_coll_status_t status)
{
    e->status = status;
    e->t1_ns = sync_now_ns();
    ash_observe_after_collective(e);
}

static ash_coll_status_t sync_allreduce(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                        CUstream s, CUdeviceptr buf, size_t count, unsigned buffers)
{
    ash_coll_dtype_t dtype = dtype_of(r->dtype), wire = wire_of(r);
    ash_sync_event_t e = {
        .kernel = k, .rule = r, .stream = s, .ptr = buf, .count = count, .kind = ASH_EV_ALLREDUCE,
        .dtype = dtype, .wire = wire == ASH_COLL_SAME ? dtype : wire, .fused_buffers = buffers,
        .backend = S.backend,
    };
    sync_coll_begin(&e);
    sync_coll_end(&e, ash_coll_allreduce(S.coll, buf, count, dtype, wire,
                                         r->reduce == ASH_POLICY_REDUCE_SUM ? ASH_COLL_SUM : ASH_COLL_MEAN, s));
    S.allreduces++;
    return e.status;
}

static ash_coll_status_t sync_broadcast(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                        CUstream s, CUdeviceptr buf, size_t bytes)
{
    ash_sync_event_t e = {.kernel = k, .rule = r, .stream = s, .ptr = buf, .count = bytes,
                          .kind = ASH_EV_BROADCAST, .root = 0, .backend = S.backend};
    sync_coll_begin(&e);
    sync_coll_end(&e, ash_coll_broadcast(S.coll, buf, bytes, 0, s));
    S.broadcasts++;
    return e.status;
}

/* A gradient rule's reduction: per launch, fused (one collective for the step) or skipped. */
static ash_coll_status_t sync_reduce(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                     CUstream s, CUdeviceptr ptr, size_t count)
{
    ash_fuse_step_t step;
    ash_coll_status_t st = ash_fuse_begin(r, ptr, count, s, &step);
    if (st != ASH_COLL_OK)
        return st;
    if (step.skip) {
        ash_sync_event_t e = {.kernel = k, .rule = r, .stream = s, .ptr = ptr, .count = count};
        ash_observe_fused_skip(&e);
        return ASH_COLL_OK;
    }
    st = sync_allreduce(k, r, s, step.ptr, step.count, step.buffers);
    return st == ASH_COLL_OK ? ash_fuse_finish(r, &step, s) : st;
}

/* One all-reduce of gradient rule r over COUNT elements at PTR on stream s, with everything a
 * collective gets: its sequence number, the fingerprint (check_collectives), the watchdog, the
 * observers, the counters; a failure ends the job. Issued by the program's thread (sync points)
 * or by the overlap worker (overlap.c), never by both at once (ash_overlap_quiesce). */
void ash_sync_issue_allreduce(const ash_kernel_info_t *k, const ash_policy_rule_t *r, CUstream s,
                              CUdeviceptr ptr, size_t count, unsigned buffers, const char *what)
{
    size_t esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    unsigned long long seq = S.seq++;
    if (S.check)
        sync_check_fingerprint(r, k, count, esize, seq, what);
    ash_sync_watch_begin(what, seq);
    ash_coll_status_t st = sync_allreduce(k, r, s, ptr, count, buffers);
    S.bytes += count * esize;
    if (st == ASH_COLL_ETIMEDOUT)
        ash_sync_watch_timeout(what, seq);
    ash_sync_watch_end(st == ASH_COLL_OK ? s : NULL);
    if (st != ASH_COLL_OK)
        ash_fatal(sync_coll_exit(st), "collective for %s failed: %s%s", what,
                  ash_coll_status_text(st), sync_coll_why(st));
}

/* The rule's next sync-point number (0, 1, ...): every rule counts its own. */
static unsigned long long sync_rule_seq(const ash_policy_rule_t *r)
{
    return r->kind <= 1 && S.rule_seq[r->kind] ? S.rule_seq[r->kind][r->index]++ : 0;
}

/* nan_check: count NaN/Inf in the buffer this rank computed; any -> the observers hear it (the
 * record writes its stop line) and the job stops (_exit: ash_fatal.h). */
static void sync_check_finite(const ash_sync_event_t *be)
{
    unsigned long long nan = 0, inf = 0;
    const ash_policy_rule_t *r = be->rule;
    if (ash_inspect_nonfinite(be->ptr, be->count, r->dtype, be->stream, &nan, &inf) != ASH_OK) {
        ASH_WARN_CAPPED("nan_check", "scan failed (logged above): sync point not checked");
        return;
    }
    if (nan == 0 && inf == 0)
        return;
    ash_sync_event_t e = *be;
    e.nan = nan;
    e.inf = inf;
    ash_observe_nan_found(&e);
    ash_fatal_now(ASH_EXIT_NAN,
                  "nan_check: rank %d: %s[%u] (at: \"%s\") sync point seq %llu, before %s: %llu NaN "
                  "and %llu Inf among %zu %s elements this rank computed (before the collective); "
                  "stopping the job (exit %d)",
                  ash_world()->rank, r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters",
                  r->index, r->at, be->seq, be->kernel ? be->kernel->demangled : "?", nan, inf, be->count,
                  ash_policy_dtype_name(r->dtype), ASH_EXIT_NAN);
}

/* A parameter rule syncs once per distinct buffer: 1 when (r, ptr, bytes) was seen already. */
static int sync_param_known(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t bytes)
{
    for (bcast_seen_t *b = S.seen; b; b = b->next)
        if (b->rule == r && b->base == ptr && b->bytes == bytes)
            return 1;
    return 0;
}

/* The same, and (r, ptr, bytes) noted when it was not (the broadcast about to happen). */
static int sync_param_seen(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t bytes)
{
    if (sync_param_known(r, ptr, bytes))
        return 1;
    bcast_seen_t *b = malloc(sizeof *b);
    if (b) {
        *b = (bcast_seen_t){r, ptr, bytes, S.seen};
        S.seen = b;
    }
    return 0;
}

/* One rank: nothing to communicate; the observers (record) and nan_check still see each buffer,
 * before and "after" (unchanged), so 1-rank and N-rank records align. An unresolvable buffer is
 * skipped with a warning: with one rank nothing depends on it. */
static ash_status_t sync_solo(const ash_kernel_info_t *k, const sync_plan_t *plan, CUstream s,
                              void **params, void **extra)
{
    int watch = ash_observe_wants_buffers();
    for (size_t i = 0; i < plan->n; i++) { /* the bounds, as with N ranks: a rehearsal finds them */
        CUdeviceptr ptr;
        size_t count;
        ash_sync_resolve_t why = ash_sync_resolve(k, plan->rule[i], params, extra, &ptr, &count, NULL);
        if (why == ASH_SYNC_OUTSIDE || why == ASH_SYNC_PAST_ALLOCATION)
            ash_sync_refuse_bounds(k, plan->rule[i], why, ptr, count);
    }
    if ((!watch && !S.nan_check) || !ash_driver())
        return ASH_OK;
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < plan->n; i++) {
        const ash_policy_rule_t *r = plan->rule[i];
        ash_sync_event_t e = {.kernel = k, .rule = r, .stream = s};
        size_t esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        if (ash_sync_resolve(k, r, params, extra, &e.ptr, &e.count, NULL) != ASH_SYNC_RESOLVED) {
            ASH_WARN_CAPPED("record", "%s: rule at \"%s\": buffer cannot be resolved from the "
                            "launch's arguments: not recorded", k->demangled, r->at);
            continue;
        }
        if (e.count == 0 ||
            (r->kind == ASH_POLICY_RULE_PARAMETER && sync_param_seen(r, e.ptr, e.count * esize)))
            continue;
        e.seq = sync_rule_seq(r);
        ash_observe_before_buffer(&e);
        if (S.nan_check)
            sync_check_finite(&e);
        ash_observe_after_buffer(&e);
    }
    pthread_mutex_unlock(&S.lock);
    return ASH_OK;
}

/* The sync point, for every rule the kernel matched: resolve -> check (fingerprint, NaN) ->
 * collective (fused or not; a parameter rule's broadcast once per buffer) -> done. */
ash_status_t ash_launch_prepare(const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    const sync_plan_t *plan = k->rules;
    const ash_world_t *w = ash_world();
    if (ash_overlap_observes_all()) { /* learned ready points: every launch is looked at */
        pthread_mutex_lock(&S.lock);
        ash_overlap_before_launch(k, s, params, extra, plan->rule, plan->n);
        pthread_mutex_unlock(&S.lock);
    }
    if (plan->nready) { /* a ready point about to fire twice in a step (overlap.c) */
        pthread_mutex_lock(&S.lock);
        ash_overlap_before_ready(k, s, params, extra, plan->ready, plan->nready);
        pthread_mutex_unlock(&S.lock);
    }
    ash_unfired_fire(plan->rule, plan->n); /* unfired: these rules fired */
    if (plan->n == 0)
        return ASH_OK; /* ready points only: after the launch (ash_launch_done) */
    ash_crash_thread(); /* a thread that reaches a sync point gets its own alternate stack */
    const char *cap; /* a sync point inside CUDA graph capture (capture.c); one rank: as N would */
    for (size_t i = 0; w->size <= 1 && i < plan->n; i++)
        if (plan->rule[i]->kind == ASH_POLICY_RULE_GRADIENT &&
            (cap = ash_capture_check(k, s, plan->rule[i], ash_policy_source(S.policy))) != NULL)
            ash_fatal(ASH_EXIT_CAPTURE, "%s", cap);
    /* one rank: nothing to communicate (unless the debug switch); recording / nan_check still look */
    if (w->size <= 1 && !S.world1)
        return sync_solo(k, plan, s, params, extra);
    if (!ash_driver())
        return ASH_ERR_UNSUPPORTED; /* the real driver lacks what collectives need (logged) */
    pthread_mutex_lock(&S.lock);
    ash_coll_status_t cst = open_coll();
    if (cst != ASH_COLL_OK)
        ash_fatal(ASH_EXIT_CONFIG, "cannot open collectives (%s): ranks cannot be kept in sync",
                  ash_coll_status_text(cst));
    ash_overlap_quiesce(s); /* the worker's collectives first, and s after them */
    for (size_t i = 0; i < plan->n; i++) {
        const ash_policy_rule_t *r = plan->rule[i];
        ash_sync_event_t e = {.kernel = k, .rule = r, .stream = s};
        ash_observe_sync_point(&e);
        /* resolve */
        size_t esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        long long bad_count = 0;
        ash_sync_resolve_t why = ash_sync_resolve(k, r, params, extra, &e.ptr, &e.count, &bad_count);
        switch (why) {
        case ASH_SYNC_RESOLVED:
            break;
        case ASH_SYNC_NO_ARGS:
            ash_fatal(ASH_EXIT_CONFIG, "%s: cannot read the launch's arguments (no kernelParams, "
                      "and no parameter layout for `extra`)", k->demangled);
        case ASH_SYNC_NEGATIVE_COUNT:
            ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: rule at \"%s\": count argument %u of %s is negative "
                      "(%lld)", ash_policy_source(S.policy), r->line, r->col, r->at,
                      r->buffer.count_arg, k->demangled, bad_count);
        case ASH_SYNC_OUTSIDE:
        case ASH_SYNC_PAST_ALLOCATION:
            ash_sync_refuse_bounds(k, r, why, e.ptr, e.count);
        case ASH_SYNC_NOT_ALLOCATED:
            ash_fatal(ASH_EXIT_CONFIG, "%s:%u:%u: rule at \"%s\" (region: allocation): pointer "
                      "0x%llx, argument %u of %s, lies in no live allocation",
                      ash_policy_source(S.policy), r->line, r->col, r->at,
                      (unsigned long long)e.ptr, r->buffer.arg, k->demangled);
        }
        int grad = r->kind == ASH_POLICY_RULE_GRADIENT;
        if (!grad && sync_param_seen(r, e.ptr, e.count * esize))
            continue; /* broadcast once per buffer */
        if ((cap = ash_capture_check(k, s, r, ash_policy_source(S.policy))) != NULL) /* capture.c */
            ash_fatal(ASH_EXIT_CAPTURE, "%s", cap);
        /* check */
        char what[384];
        snprintf(what, sizeof what, "%s[%u] (at: \"%s\") before %s",
                 grad ? "gradients" : "parameters", r->index, r->at, k->demangled);
        unsigned long long seq = S.seq++;
        if (S.check)
            sync_check_fingerprint(r, k, e.count, esize, seq, what);
        if (e.count == 0)
            continue;
        e.seq = sync_rule_seq(r);
        ash_observe_before_buffer(&e); /* this rank's values */
        if (S.nan_check)
            sync_check_finite(&e);
        /* collective */
        if (grad && ash_overlap_on(r)) { /* only what no ready point covered this step */
            const ash_span_t *pc;
            size_t np = ash_overlap_sync(r, e.ptr, e.count * esize, &pc);
            for (size_t p = 0; p < np; p++)
                ash_sync_issue_allreduce(k, r, s, pc[p].lo, (size_t)(pc[p].hi - pc[p].lo) / esize, 1, what);
            ash_observe_after_buffer(&e);
            continue;
        }
        ash_sync_watch_begin(what, seq);
        cst = grad ? sync_reduce(k, r, s, e.ptr, e.count) : sync_broadcast(k, r, s, e.ptr, e.count * esize);
        if (!grad && cst == ASH_COLL_OK)
            ash_digest_note(ash_driver(), e.ptr, e.count * esize, s); /* digest: compared at exit */
        S.bytes += e.count * esize;
        if (cst == ASH_COLL_ETIMEDOUT)
            ash_sync_watch_timeout(what, seq);
        ash_sync_watch_end(cst == ASH_COLL_OK ? s : NULL);
        if (cst != ASH_COLL_OK)
            ash_fatal(sync_coll_exit(cst), "collective for rule at \"%s\" before %s failed: %s%s",
                      r->at, k->demangled, ash_coll_status_text(cst), sync_coll_why(cst));
        /* done */
        ash_observe_after_buffer(&e); /* the reduced values every rank holds */
    }
    pthread_mutex_unlock(&S.lock);
    return ASH_OK;
}

/* A kernel with a plan put into a hand-built CUDA graph (intercept/hooks_graph.c), with the
 * node's arguments: the first rule the graph would skip, as the capture guard decides for a
 * captured launch — a gradient rule; at N ranks (or the world-1 debug switch), a parameters rule
 * whose buffer (resolved from the node's arguments) was not broadcast yet. NULL: only ready
 * points (the sync point reduces what they did not start), or every parameters buffer done. */
const ash_policy_rule_t *ash_sync_graph_rule(const ash_kernel_info_t *k, void **params, void **extra)
{
    const sync_plan_t *plan = k->rules;
    if (plan == NULL)
        return NULL;
    for (size_t i = 0; i < plan->n; i++) {
        const ash_policy_rule_t *r = plan->rule[i];
        if (r->kind == ASH_POLICY_RULE_GRADIENT)
            return r;
        if (ash_world()->size <= 1 && !S.world1)
            continue; /* one rank broadcasts nothing: as the capture guard */
        CUdeviceptr ptr = 0;
        size_t count = 0, esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        pthread_mutex_lock(&S.lock);
        int done = ash_sync_resolve(k, r, params, extra, &ptr, &count, NULL) == ASH_SYNC_RESOLVED &&
                   sync_param_known(r, ptr, count * esize);
        pthread_mutex_unlock(&S.lock);
        if (!done)
            return r;
    }
    return NULL;
}

/* After the real launch of a kernel with a plan (it returned CUDA_SUCCESS): its ready points,
 * and every launch while a learned rule watches (overlap.c). */
void ash_launch_done(const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    const sync_plan_t *plan = k->rules;
    if (!plan || (!plan->nready && !ash_overlap_observes_all()))
        return;
    pthread_mutex_lock(&S.lock);
    ash_overlap_after_launch(k, s, params, extra, plan->ready, plan->nready, plan->rule, plan->n);
    pthread_mutex_unlock(&S.lock);
}

/* cuBLAS (shim/precision/cublas.c): a GEMM writing from OUT on stream s (see ash_sync.h). */
int ash_sync_watches_writes(void) { return ash_overlap_observes_all(); }

void ash_sync_library_write(const ash_kernel_info_t *site, CUstream s, CUdeviceptr out, int seen, int before)
{
    if (!ash_overlap_observes_all())
        return;
    pthread_mutex_lock(&S.lock);
    ash_overlap_library_write(site, s, out, seen, before);
    pthread_mutex_unlock(&S.lock);
}

/* The program releases or resets its primary context: the overlap's work (its stream lives in
 * that context) is finished first. */
void ash_sync_context_ending(void)
{
    if (!ash_overlap_active())
        return;
    pthread_mutex_lock(&S.lock);
    ash_overlap_drain();
    pthread_mutex_unlock(&S.lock);
}
