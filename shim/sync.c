/* sync.c — the sync-point engine: what happens before a launch whose kernel matches a policy rule.
 *
 * At init the policy (ACCELSHIM_POLICY) is loaded; an invalid policy stops the program here, at
 * its first CUDA call, with "file:line:col: message" and exit status 2. The matcher (asked once
 * per distinct kernel by intercept/kernels.c) turns the policy's rules into a per-kernel plan,
 * checking each rule's argument indices against the kernel's parameter list. Before a matched
 * launch, ash_launch_prepare resolves each rule's buffer from the launch's own arguments and runs
 * the collective on the launch's stream: gradients -> all-reduce, parameters -> broadcast from
 * rank 0 once per distinct (rule, buffer). With world size 1 nothing is communicated.
 * Reliability: every collective gets a sequence number; with check_collectives (policy, or
 * ACCELSHIM_CHECK_COLLECTIVES=1) ranks first exchange a fingerprint (rule, count, dtype, wire,
 * op, seq, kernel) and a mismatch ends every rank with a report and exit status 3. A watchdog
 * (timeout_s > 0) ends a rank whose collective has not completed in time: report, communicator
 * aborted, exit status 4 (see sync_watch.c).
 * Threading: prepare may run on any thread; one mutex serialises collectives (ranks must issue
 * them in the same order anyway). Invariant: the real launch always follows, on the same stream.
 */
#include "ash_sync.h"

#include "ash_alloc.h"
#include "ash_crash.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "ash_world.h"
#include "ash_policy.h"
#include "ash_fuse.h"
#include "ash_report.h"
#include "ash_record.h"
#include "ash_sync_watch.h"
#include "ash_unfired.h"
#include "ash_digest.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SYNC_MAX_RULES 16

typedef struct sync_plan {
    size_t n;
    const ash_policy_rule_t *rule[SYNC_MAX_RULES];
} sync_plan_t;

typedef struct bcast_seen {
    const ash_policy_rule_t *rule;
    CUdeviceptr base;
    size_t bytes;
    struct bcast_seen *next;
} bcast_seen_t;

static struct {
    ash_policy_t *policy;
    ash_coll_driver_t driver;
    int have_driver;
    ash_coll_dtype_t wire_override; /* ASH_COLL_SAME: none */
    unsigned timeout_s;
    pthread_mutex_t lock;           /* serialises collectives and the tables below */
    ash_coll_t *coll;
    const char *backend;            /* name of the opened backend, for the exit report */
    int coll_failed;
    volatile int fatal;             /* set before a fatal exit: do not finalize (peers may hang) */
    bcast_seen_t *seen;
    unsigned long long allreduces, broadcasts, bytes;
    int check;                      /* fingerprint each collective first */
    int no_mpi;                     /* ACCELSHIM_RENDEZVOUS=nccl: the ranks are no MPI world */
    const char *comm_id;            /* NCCL_COMM_ID, or torchrun's (ash_world_nccl_rendezvous) */
    unsigned long long seq;         /* collectives issued by this rank (all ranks agree) */
    unsigned long long fp_calls;    /* fingerprint exchanges, and their total time */
    double fp_seconds;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wire_override = ASH_COLL_SAME};

static _Noreturn void sync_fatal_code(const char *what, int code)
{
    S.fatal = 1;
    ash_unfired_fatal(); /* unfired: the exit verdict keeps out of a fatal exit */
    /* The design's named exception: a policy error or a broken collective ends the job. */
    char line[1024];
    int n = snprintf(line, sizeof line, "accelshim: %s\n", what);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    exit(code);
}

static _Noreturn void sync_fatal(const char *what) { sync_fatal_code(what, 2); }

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

void ash_sync_set_driver(const ash_coll_driver_t *drv)
{
    S.driver = *drv;
    S.have_driver = 1;
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

/* Options whose garbage is fatal (exit 2, one line): they change what is computed or whether
 * the job is watched. Read before the policy so they are checked even without one. */
static void sync_read_env(long *timeout, int *check)
{
    char msg[512];
    const char *b = ash_opt_str(ASH_OPT_BACKEND);
    if (b && strcmp(b, "auto") && strcmp(b, "nccl") && strcmp(b, "mpi")) {
        snprintf(msg, sizeof msg, "ACCELSHIM_BACKEND=%.200s: expected auto, nccl or mpi", b);
        sync_fatal(msg);
    }
    const char *rv = ash_opt_str(ASH_OPT_RENDEZVOUS);
    if (rv && strcmp(rv, "mpi") && strcmp(rv, "nccl")) {
        snprintf(msg, sizeof msg, "ACCELSHIM_RENDEZVOUS=%.200s: expected mpi or nccl", rv);
        sync_fatal(msg);
    }
    const char *id = ash_opt_str(ASH_OPT_NCCL_COMM_ID);
    if (ash_world_nccl_rendezvous(&id)) /* torchrun's ranks: world.c chose where they meet */
        rv = "nccl";
    S.comm_id = id;
    S.no_mpi = rv && !strcmp(rv, "nccl");
    if (S.no_mpi && !(id && *id))
        sync_fatal("ACCELSHIM_RENDEZVOUS=nccl: NCCL_COMM_ID (IP:PORT where the ranks meet) is not set");
    *timeout = -1;
    ash_status_t st = ash_opt_int(ASH_OPT_TIMEOUT_S, 0, 86400 * 7, timeout);
    if (st == ASH_ERR_CONFIG) {
        snprintf(msg, sizeof msg, "ACCELSHIM_TIMEOUT_S=%.200s: expected whole seconds in "
                 "0..604800 (0 = no watchdog)", ash_opt_str(ASH_OPT_TIMEOUT_S));
        sync_fatal(msg);
    }
    long c = -1;
    st = ash_opt_int(ASH_OPT_CHECK_COLLECTIVES, 0, 1, &c);
    if (st == ASH_ERR_CONFIG) {
        snprintf(msg, sizeof msg, "ACCELSHIM_CHECK_COLLECTIVES=%.200s: expected 0 or 1",
                 ash_opt_str(ASH_OPT_CHECK_COLLECTIVES));
        sync_fatal(msg);
    }
    *check = (int)c;
}

ash_status_t ash_sync_init(void)
{
    const char *path = ash_opt_str(ASH_OPT_POLICY);
    const char *wire = ash_opt_str(ASH_OPT_WIRE_OVERRIDE);
    if (wire && *wire) {
        if (!strcmp(wire, "bf16"))
            S.wire_override = ASH_COLL_BF16;
        else if (!strcmp(wire, "f16") || !strcmp(wire, "fp16"))
            S.wire_override = ASH_COLL_F16;
        else if (strcmp(wire, "no") && strcmp(wire, "same")) {
            char msg[256];
            snprintf(msg, sizeof msg, "ACCELSHIM_WIRE_OVERRIDE=%s: expected bf16, f16 or no", wire);
            sync_fatal(msg);
        }
    }
    long t;
    int check;
    sync_read_env(&t, &check);
    if (!path || !*path)
        return ASH_OK;
    char err[1024];
    if (ash_policy_load(path, &S.policy, err, sizeof err) != ASH_POLICY_OK)
        sync_fatal(err);
    S.timeout_s = ash_policy_timeout_s(S.policy);
    S.check = check >= 0 ? check : ash_policy_check_collectives(S.policy);
    ash_shim_on_exit(sync_report);
    if (t >= 0)
        S.timeout_s = (unsigned)t;
    ash_info("sync", "policy %s: %zu gradient rule(s), %zu parameter rule(s)", path,
             ash_policy_rule_count(S.policy, ASH_POLICY_RULE_GRADIENT),
             ash_policy_rule_count(S.policy, ASH_POLICY_RULE_PARAMETER));
    return ASH_OK;
}

/* A rule's argument must be a pointer (8 bytes) and its count argument an integer (4 or 8). */
static void check_rule_against_kernel(const ash_policy_rule_t *r, const ash_kernel_info_t *k)
{
    char msg[768];
    const char *list = r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    if (k->nparams < 0)
        return; /* the driver cannot say; the launch's own arguments are trusted as written */
    unsigned need = r->buffer.arg;
    if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT_ARG && r->buffer.count_arg > need)
        need = r->buffer.count_arg;
    if ((int)need >= k->nparams) {
        snprintf(msg, sizeof msg,
                 "%s:%u:%u: %s[%u] (at: \"%s\") names argument %u, but kernel %s has %d parameter(s)",
                 ash_policy_source(S.policy), r->line, r->col, list, r->index, r->at, need,
                 k->demangled, k->nparams);
        sync_fatal(msg);
    }
    if (k->param_sizes[r->buffer.arg] != 8) {
        snprintf(msg, sizeof msg,
                 "%s:%u:%u: %s[%u] (at: \"%s\"): argument %u of kernel %s is %u bytes, not a pointer",
                 ash_policy_source(S.policy), r->line, r->col, list, r->index, r->at,
                 r->buffer.arg, k->demangled, k->param_sizes[r->buffer.arg]);
        sync_fatal(msg);
    }
    if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT_ARG) {
        uint32_t sz = k->param_sizes[r->buffer.count_arg];
        if (sz != 4 && sz != 8) {
            snprintf(msg, sizeof msg,
                     "%s:%u:%u: %s[%u] (at: \"%s\"): count argument %u of kernel %s is %u bytes, "
                     "not an integer",
                     ash_policy_source(S.policy), r->line, r->col, list, r->index, r->at,
                     r->buffer.count_arg, k->demangled, sz);
            sync_fatal(msg);
        }
    }
}

static const void *sync_match(const ash_kernel_info_t *k)
{
    const ash_policy_rule_t *found[SYNC_MAX_RULES];
    ash_unfired_seen(k->name, k->demangled); /* unfired: names for "nearest kernel seen" */
    size_t n = ash_policy_match(S.policy, k->name, k->demangled, found, SYNC_MAX_RULES);
    if (n == 0)
        return NULL;
    if (n > SYNC_MAX_RULES) {
        ash_warn("sync", "kernel %s matches %zu rules; only the first %d are applied", k->name, n,
                 SYNC_MAX_RULES);
        n = SYNC_MAX_RULES;
    }
    sync_plan_t *plan = calloc(1, sizeof *plan);
    if (!plan) {
        ash_error("sync", "out of memory planning kernel %s: its rules are NOT applied", k->name);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        check_rule_against_kernel(found[i], k);
        plan->rule[i] = found[i];
        ash_info("sync", "kernel %s: sync point for %s[%u] (at: \"%s\")", k->demangled,
                 found[i]->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters",
                 found[i]->index, found[i]->at);
    }
    plan->n = n;
    return plan; /* lives as long as the process, like the kernel cache entry that holds it */
}

ash_kernel_match_fn ash_sync_matcher(void) { return S.policy ? sync_match : NULL; }

const ash_policy_t *ash_sync_policy(void) { return S.policy; } /* ash_sync.h */

/* The value of argument I of a launch, from kernelParams or from the packed `extra` buffer. */
static int arg_bytes(const ash_kernel_info_t *k, void **params, void **extra, unsigned i,
                     size_t size, void *out)
{
    if (params) {
        memcpy(out, params[i], size);
        return 0;
    }
    if (extra && k->nparams > 0 && (int)i < k->nparams) {
        void *buf = NULL;
        size_t buflen = 0;
        for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = e[1];
            else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                buflen = *(size_t *)e[1];
        }
        if (buf && k->param_offsets[i] + size <= buflen) {
            memcpy(out, (char *)buf + k->param_offsets[i], size);
            return 0;
        }
    }
    return -1;
}

ash_sync_resolve_t ash_sync_resolve(const ash_kernel_info_t *k, const ash_policy_rule_t *r,
                                    void **params, void **extra, CUdeviceptr *ptr, size_t *count,
                                    long long *bad_count)
{
    size_t esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    if (arg_bytes(k, params, extra, r->buffer.arg, sizeof *ptr, ptr) != 0)
        return ASH_SYNC_NO_ARGS;
    if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT) {
        *count = r->buffer.count;
    } else if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT_ARG) {
        unsigned sz = k->nparams > 0 ? k->param_sizes[r->buffer.count_arg] : 4;
        int64_t v = 0;
        if (sz == 8) {
            if (arg_bytes(k, params, extra, r->buffer.count_arg, 8, &v) != 0)
                return ASH_SYNC_NO_ARGS;
        } else {
            int32_t v32;
            if (arg_bytes(k, params, extra, r->buffer.count_arg, 4, &v32) != 0)
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
    }
    return ASH_SYNC_RESOLVED;
}

/* atexit, registered when the communicator opens (so it runs before the exit report and before
 * any library destructor): release the communicator, finalising MPI if we initialised it. */
static void sync_fini(void)
{
    ash_sync_watch_stop();
    if (S.coll && !S.fatal) {
        ash_digest_compare(S.coll); /* digest: do the ranks end with the same parameters? */
        ash_report_before_close(S.coll); /* timing events, fusion buffers, the job's figures */
        ash_coll_close(S.coll);
        S.coll = NULL;
    }
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
        .driver = &S.driver,
        .timeout_s = (double)S.timeout_s,
        .log = sync_coll_log,
        /* ranks of the launcher's own engine (per-machine form) are no MPI world */
        .no_mpi = S.no_mpi,
        .nccl_comm_id = S.comm_id,
    };
    ash_coll_status_t st = ash_coll_open(ash_opt_str(ASH_OPT_BACKEND), &cfg, &S.coll);
    if (st != ASH_COLL_OK) {
        S.coll_failed = 1;
    } else {
        S.backend = ash_coll_backend_name(S.coll);
        ash_info("sync", "collectives backend: %s", S.backend);
        ash_crash_reinstall(); /* on top of MPI's handlers, chaining to them */
        /* the watchdog thread bounds every wait from here on, so the collectives may use MPI's
         * blocking algorithms (no polling); without it (timeout 0) they block as well */
        if (S.timeout_s > 0 &&
            ash_sync_watch_start(S.coll, &S.driver, S.timeout_s, !strcmp(S.backend, "nccl")) != ASH_OK)
            ash_warn("sync", "watchdog not started: collectives keep their own %u s wait bound", S.timeout_s);
        else
            ash_coll_set_timeout(S.coll, 0);
        if (atexit(sync_fini) != 0)
            ash_warn("sync", "atexit failed: MPI will not be finalised at exit");
    }
    return st;
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
        char msg[512];
        snprintf(msg, sizeof msg, "check_collectives: fingerprint exchange for %s failed: %s",
                 what, ash_coll_status_text(st));
        sync_fatal(msg);
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
        char msg[512];
        snprintf(msg, sizeof msg, "check_collectives: %d rank(s) disagree with rank 0 at %s "
                 "(seq %llu); stopping the job (exit 3)", bad, what, seq);
        sync_fatal_code(msg, 3);
    }
}

ash_status_t ash_launch_prepare(const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    const sync_plan_t *plan = k->rules;
    const ash_world_t *w = ash_world();
    ash_crash_thread(); /* a thread that reaches a sync point gets its own alternate stack */
    ash_unfired_fire(plan->rule, plan->n); /* unfired: these rules fired */
    if (w->size <= 1) /* one rank: nothing to communicate; recording / nan_check still look */
        return ash_record_solo(S.have_driver ? &S.driver : NULL, S.policy, k, s, params, extra, plan->rule, plan->n);
    if (!S.have_driver)
        return ASH_ERR_UNSUPPORTED; /* the real driver lacks what collectives need (logged) */
    char msg[768];
    pthread_mutex_lock(&S.lock);
    ash_coll_status_t cst = open_coll();
    if (cst != ASH_COLL_OK) {
        snprintf(msg, sizeof msg, "cannot open collectives (%s): ranks cannot be kept in sync",
                 ash_coll_status_text(cst));
        sync_fatal(msg);
    }
    for (size_t i = 0; i < plan->n; i++) {
        const ash_policy_rule_t *r = plan->rule[i];
        ash_report_hit(r, k); /* exit report and trace (shim/report.c) */
        CUdeviceptr ptr = 0;
        size_t count = 0, esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        long long bad_count = 0;
        switch (ash_sync_resolve(k, r, params, extra, &ptr, &count, &bad_count)) {
        case ASH_SYNC_RESOLVED:
            break;
        case ASH_SYNC_NO_ARGS:
            goto no_args;
        case ASH_SYNC_NEGATIVE_COUNT:
            snprintf(msg, sizeof msg, "%s: rule at \"%s\": count argument %u is negative (%lld)",
                     k->demangled, r->at, r->buffer.count_arg, bad_count);
            sync_fatal(msg);
        case ASH_SYNC_NOT_ALLOCATED:
            snprintf(msg, sizeof msg,
                     "%s:%u:%u: rule at \"%s\" (region: allocation): pointer 0x%llx, argument "
                     "%u of %s, lies in no live allocation",
                     ash_policy_source(S.policy), r->line, r->col, r->at,
                     (unsigned long long)ptr, r->buffer.arg, k->demangled);
            sync_fatal(msg);
        }
        int grad = r->kind == ASH_POLICY_RULE_GRADIENT;
        if (!grad) {
            bcast_seen_t *b;
            for (b = S.seen; b; b = b->next)
                if (b->rule == r && b->base == ptr && b->bytes == count * esize)
                    break;
            if (b)
                continue;
        }
        char what[384];
        snprintf(what, sizeof what, "%s[%u] (at: \"%s\") before %s",
                 grad ? "gradients" : "parameters", r->index, r->at, k->demangled);
        unsigned long long seq = S.seq++;
        if (S.check)
            sync_check_fingerprint(r, k, count, esize, seq, what);
        if (count == 0)
            continue;
        ash_record_before(&S.driver, S.policy, k, r, ptr, count, s); /* this rank's values; nan_check */
        ash_sync_watch_begin(what, seq);
        if (grad) {
            int issued = 0;
            cst = ash_fuse_allreduce(S.coll, r, k, ptr, count, dtype_of(r->dtype), wire_of(r),
                                     r->reduce == ASH_POLICY_REDUCE_SUM ? ASH_COLL_SUM : ASH_COLL_MEAN, s,
                                     &issued);
            S.allreduces += (unsigned)issued;
        } else {
            cst = ash_report_broadcast(S.coll, r, k, ptr, count * esize, 0, s);
            bcast_seen_t *b;
            if ((b = malloc(sizeof *b))) {
                *b = (bcast_seen_t){r, ptr, count * esize, S.seen};
                S.seen = b;
            }
            S.broadcasts++;
            ash_digest_note(&S.driver, ptr, count * esize, s); /* digest: compared at exit */
        }
        S.bytes += count * esize;
        if (cst == ASH_COLL_ETIMEDOUT)
            ash_sync_watch_timeout(what, seq);
        ash_sync_watch_end(cst == ASH_COLL_OK ? s : NULL);
        if (cst != ASH_COLL_OK) {
            snprintf(msg, sizeof msg, "collective for rule at \"%s\" before %s failed: %s", r->at,
                     k->demangled, ash_coll_status_text(cst));
            sync_fatal(msg);
        }
        ash_record_after(&S.driver, r, ptr, count, s); /* the reduced values every rank holds */
    }
    pthread_mutex_unlock(&S.lock);
    return ASH_OK;
no_args:
    snprintf(msg, sizeof msg, "%s: cannot read the launch's arguments (no kernelParams, and no "
             "parameter layout for `extra`)", k->demangled);
    sync_fatal(msg);
}
