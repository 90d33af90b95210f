/* sync.c — the sync-point engine: what happens before a launch whose kernel matches a policy rule.
 *
 * At init the policy (ACCELSHIM_POLICY) is loaded; an invalid policy stops the program here, at
 * its first CUDA call, with "file:line:col: message" and exit status 2. The matcher (asked once
 * per distinct kernel by intercept/kernels.c) turns the policy's rules into a per-kernel plan,
 * checking each rule's argument indices against the kernel's parameter list. Before a matched
 * launch, ash_launch_prepare resolves each rule's buffer from the launch's own arguments and runs
 * the collective on the launch's stream: gradients -> all-reduce, parameters -> broadcast from
 * rank 0 once per distinct (rule, buffer). With world size 1 nothing is communicated.
 * Threading: prepare may run on any thread; one mutex serialises collectives (ranks must issue
 * them in the same order anyway). Invariant: the real launch always follows, on the same stream.
 */
#include "ash_sync.h"

#include "ash_alloc.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_shim.h"
#include "ash_world.h"
#include "ash_policy.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wire_override = ASH_COLL_SAME};

static _Noreturn void sync_fatal(const char *what)
{
    S.fatal = 1;
    /* The design's named exception: a policy error or a broken collective ends the job. */
    char line[1024];
    int n = snprintf(line, sizeof line, "accelshim: %s\n", what);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    exit(2);
}

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
    if (!path || !*path)
        return ASH_OK;
    char err[1024];
    if (ash_policy_load(path, &S.policy, err, sizeof err) != ASH_POLICY_OK)
        sync_fatal(err);
    S.timeout_s = ash_policy_timeout_s(S.policy);
    if (ash_policy_check_collectives(S.policy))
        ash_warn("sync", "%s: debug.check_collectives is not implemented yet: collectives are not "
                 "fingerprinted", path);
    ash_shim_on_exit(sync_report);
    long t;
    if (ash_opt_int(ASH_OPT_TIMEOUT_S, 0, 86400 * 7, &t) == ASH_OK)
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

/* atexit, registered when the communicator opens (so it runs before the exit report and before
 * any library destructor): release the communicator, finalising MPI if we initialised it. */
static void sync_fini(void)
{
    if (S.coll && !S.fatal) {
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
    };
    ash_coll_status_t st = ash_coll_open(ash_opt_str(ASH_OPT_BACKEND), &cfg, &S.coll);
    if (st != ASH_COLL_OK) {
        S.coll_failed = 1;
    } else {
        S.backend = ash_coll_backend_name(S.coll);
        ash_info("sync", "collectives backend: %s", S.backend);
        if (atexit(sync_fini) != 0)
            ash_warn("sync", "atexit failed: MPI will not be finalised at exit");
    }
    return st;
}

ash_status_t ash_launch_prepare(const ash_kernel_info_t *k, CUstream s, void **params, void **extra)
{
    const sync_plan_t *plan = k->rules;
    const ash_world_t *w = ash_world();
    if (w->size <= 1)
        return ASH_OK; /* one rank: the policy changes nothing */
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
        CUdeviceptr ptr = 0;
        size_t count = 0, esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
        if (arg_bytes(k, params, extra, r->buffer.arg, sizeof ptr, &ptr) != 0)
            goto no_args;
        if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT) {
            count = r->buffer.count;
        } else if (r->buffer.kind == ASH_POLICY_BUFFER_COUNT_ARG) {
            unsigned sz = k->nparams > 0 ? k->param_sizes[r->buffer.count_arg] : 4;
            int64_t v = 0;
            if (sz == 8) {
                if (arg_bytes(k, params, extra, r->buffer.count_arg, 8, &v) != 0)
                    goto no_args;
            } else {
                int32_t v32;
                if (arg_bytes(k, params, extra, r->buffer.count_arg, 4, &v32) != 0)
                    goto no_args;
                v = v32;
            }
            if (v < 0) {
                snprintf(msg, sizeof msg, "%s: rule at \"%s\": count argument %u is negative (%lld)",
                         k->demangled, r->at, r->buffer.count_arg, (long long)v);
                sync_fatal(msg);
            }
            count = (size_t)v;
        } else {
            ash_alloc_entry_t e;
            if (ash_alloc_find(ptr, &e) != ASH_ALLOC_OK) {
                snprintf(msg, sizeof msg,
                         "%s:%u:%u: rule at \"%s\" (region: allocation): pointer 0x%llx, argument "
                         "%u of %s, lies in no live allocation",
                         ash_policy_source(S.policy), r->line, r->col, r->at,
                         (unsigned long long)ptr, r->buffer.arg, k->demangled);
                sync_fatal(msg);
            }
            ptr = e.base;
            count = e.size / esize;
        }
        if (count == 0)
            continue;
        if (r->kind == ASH_POLICY_RULE_GRADIENT) {
            cst = ash_coll_allreduce(S.coll, ptr, count, dtype_of(r->dtype), wire_of(r),
                                     r->reduce == ASH_POLICY_REDUCE_SUM ? ASH_COLL_SUM : ASH_COLL_MEAN, s);
            S.allreduces++;
        } else {
            bcast_seen_t *b;
            for (b = S.seen; b; b = b->next)
                if (b->rule == r && b->base == ptr && b->bytes == count * esize)
                    break;
            if (b)
                continue;
            cst = ash_coll_broadcast(S.coll, ptr, count * esize, 0, s);
            if ((b = malloc(sizeof *b))) {
                *b = (bcast_seen_t){r, ptr, count * esize, S.seen};
                S.seen = b;
            }
            S.broadcasts++;
        }
        S.bytes += count * esize;
        if (cst != ASH_COLL_OK) {
            snprintf(msg, sizeof msg, "collective for rule at \"%s\" before %s failed: %s", r->at,
                     k->demangled, ash_coll_status_text(cst));
            sync_fatal(msg);
        }
    }
    pthread_mutex_unlock(&S.lock);
    return ASH_OK;
no_args:
    snprintf(msg, sizeof msg, "%s: cannot read the launch's arguments (no kernelParams, and no "
             "parameter layout for `extra`)", k->demangled);
    sync_fatal(msg);
}
