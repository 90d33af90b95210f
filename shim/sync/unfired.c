/* unfired.c — rules that never fired are named at exit, with the nearest kernel names seen, and
 * a multi-rank job that synchronised nothing fails instead of exiting 0.
 *
 * Invariant: the verdict only adds a failure to a process that is ending normally (exit() or a
 * return from main): a fatal path of the shim (ash_unfired_fatal) keeps its own status. It is
 * the exit sequence's verdict step (ASH_EXIT_STEP_VERDICT, registered at init), the last one, so
 * it runs after the record, the communicator's close and the report; on a failure it flushes
 * stdio and _exits.
 * The step watch (ash_unfired.h) stops such a job early, at its second step: the tokens are the
 * launches and host reads, a step is a block of them that holds a host read and repeats.
 * Threading: seen/fire/launch/copy may run on any thread (a mutex for the name list and the
 * watch, atomics for the bits and the watch's flag). Callers: lifecycle.c (init), sync.c
 * (matcher: seen; prepare: fire; fatal: fatal), intercept's launch and copy hooks (launch, copy).
 * See ash_unfired.h.
 * Must not: change the status of a fatal exit (ash_unfired_fatal keeps it); fail a process that is
 * not ending normally; skip flushing stdio before its _exit; fail a single-rank job, or an
 * unsynchronised one where sync is optional (policy, ACCELSHIM_SYNC or accelerate-run
 * --sync-optional).
 */
#include "ash_unfired.h"

#include "ash_shim.h"

#include "ash_alloc.h"
#include "ash_digest.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_sync.h"
#include "ash_world.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNF_MAX_NAMES 512    /* distinct kernel names kept for suggestions */
#define UNF_MAX_RULES 1024   /* rules per list whose firing is tracked (more: counted as fired) */
#define UNF_NAME_CMP 127     /* bytes of a name the edit distance looks at */
#define UNF_SUGGEST 3        /* nearest names printed per rule */
#define UNF_PMAX 8192        /* longest step (launches + host reads) the step watch recognises */
#define UNF_MARK UNF_MAX_NAMES /* the watch's token for a host read of device memory */

static struct {
    pthread_mutex_t lock;
    char *name[UNF_MAX_NAMES], *dem[UNF_MAX_NAMES];
    const void *key[UNF_MAX_NAMES]; /* the kernel (its ash_kernel_info_t) each name came from */
    int n;
    _Atomic unsigned long long fired[2][UNF_MAX_RULES / 64];
    atomic_int any[2];
    atomic_int fatal;
    int optional;
    /* the step watch (under lock): the last UNF_PMAX tokens (kernel ids, UNF_MARK), and for each
     * period p the number of consecutive tokens equal to the token p before them */
    long steps, bound;    /* ACCELSHIM_SYNC_WATCH_STEPS, ACCELSHIM_SYNC_WATCH_LAUNCHES */
    long long ntok, nlaunch, last_mark;
    long long pending; /* a block of this length repeated; a step once the next token continues it */
    int last_tok;
    short ring[UNF_PMAX];
    unsigned run[UNF_PMAX + 1];
} U = {.lock = PTHREAD_MUTEX_INITIALIZER, .last_mark = -1, .last_tok = -1};

_Atomic int ash_unfired_watch_on; /* ash_unfired.h: set at init, read by the launch and copy hooks */

void ash_unfired_fatal(void) { atomic_store(&U.fatal, 1); }

void ash_unfired_seen(const void *kernel, const char *name, const char *demangled)
{
    pthread_mutex_lock(&U.lock);
    if (U.n < UNF_MAX_NAMES && name) {
        U.name[U.n] = strdup(name);
        U.dem[U.n] = demangled && strcmp(demangled, name) ? strdup(demangled) : NULL;
        U.key[U.n] = kernel;
        if (U.name[U.n])
            U.n++;
    }
    pthread_mutex_unlock(&U.lock);
}

void ash_unfired_fire(const ash_policy_rule_t *const *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ash_policy_rule_t *r = rules[i];
        int k = r->kind == ASH_POLICY_RULE_GRADIENT ? 0 : 1;
        atomic_store_explicit(&U.any[k], 1, memory_order_relaxed);
        if (r->index < UNF_MAX_RULES)
            atomic_fetch_or_explicit(&U.fired[k][r->index / 64], 1ull << (r->index % 64),
                                     memory_order_relaxed);
    }
}

static int unf_fired(int k, unsigned index)
{
    if (index >= UNF_MAX_RULES)
        return 1;
    return (int)(atomic_load(&U.fired[k][index / 64]) >> (index % 64) & 1);
}

/* Levenshtein distance between A and B, each compared up to UNF_NAME_CMP bytes. */
static int ash_unfired_distance(const char *a, const char *b)
{
    size_t la = strnlen(a, UNF_NAME_CMP), lb = strnlen(b, UNF_NAME_CMP);
    int row[UNF_NAME_CMP + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* The demangled name without "void " and its parameter list; and its last "::" component. */
static void unf_base(const char *dem, char *base, size_t len, const char **last)
{
    if (!strncmp(dem, "void ", 5))
        dem += 5;
    size_t n = strcspn(dem, "(");
    if (n >= len)
        n = len - 1;
    memcpy(base, dem, n);
    base[n] = '\0';
    const char *c = strstr(base, "::"), *l = base;
    for (; c; c = strstr(c + 2, "::"))
        l = c + 2;
    *last = l;
}

/* Distance of the glob (without '*' and '?') to kernel i: the least over its name forms. */
static int unf_kernel_distance(const char *pat, int i, char *shown, size_t len)
{
    char base[UNF_NAME_CMP + 1];
    const char *last = NULL;
    int d = ash_unfired_distance(pat, U.name[i]);
    snprintf(shown, len, "%s", U.name[i]);
    if (U.dem[i]) {
        unf_base(U.dem[i], base, sizeof base, &last);
        snprintf(shown, len, "%s (%s)", base, U.name[i]);
        int e = ash_unfired_distance(pat, U.dem[i]);
        if (e < d)
            d = e;
        if ((e = ash_unfired_distance(pat, base)) < d)
            d = e;
        if ((e = ash_unfired_distance(pat, last)) < d)
            d = e;
    }
    return d;
}

/* One warning block: the rule, its glob, where it is written, the nearest names seen. */
static void unf_warn_rule(const ash_policy_t *p, const ash_policy_rule_t *r)
{
    const char *list = r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
    char pat[UNF_NAME_CMP + 1];
    size_t m = 0;
    for (const char *s = r->at; *s && m < UNF_NAME_CMP; s++)
        if (*s != '*' && *s != '?')
            pat[m++] = *s;
    pat[m] = '\0';
    ash_warn("unfired", "%s[%u] (at: \"%s\", %s:%u:%u) never fired: no launched kernel matched it "
             "(its buffer was never %s)", list, r->index, r->at, ash_policy_source(p), r->line,
             r->col, r->kind == ASH_POLICY_RULE_GRADIENT ? "all-reduced" : "broadcast");
    if (U.n == 0) {
        ash_warn("unfired", "  no kernel was launched through the shim at all");
        return;
    }
    int best[UNF_SUGGEST], dist[UNF_SUGGEST], nb = 0;
    for (int i = 0; i < U.n; i++) {
        char shown[8];
        int d = unf_kernel_distance(pat, i, shown, sizeof shown);
        int at = nb < UNF_SUGGEST ? nb++ : UNF_SUGGEST;
        while (at > 0 && dist[at - 1] > d) {
            if (at < UNF_SUGGEST)
                best[at] = best[at - 1], dist[at] = dist[at - 1];
            at--;
        }
        if (at < UNF_SUGGEST)
            best[at] = i, dist[at] = d;
    }
    for (int j = 0; j < nb; j++) {
        char shown[2 * UNF_NAME_CMP + 8];
        unf_kernel_distance(pat, best[j], shown, sizeof shown);
        ash_warn("unfired", "  nearest kernel seen: %s (edit distance %d)", shown, dist[j]);
    }
}

static void unf_say(const char *text)
{
    char line[768];
    int n = snprintf(line, sizeof line, "accelshim: rank %d: %s\n", ash_world()->rank, text);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A job of more than one rank with sync required in which no gradient rule has fired (yet). */
static int unf_unsynced(void)
{
    return ash_world()->size > 1 && !U.optional && !atomic_load(&U.any[0]);
}

int ash_unfired_will_fail(void) { return unf_unsynced(); }

/* Every unfired gradient rule with its nearest kernels, on this rank's output. */
static void unf_warn_gradients(const ash_policy_t *p)
{
    for (size_t i = 0; p && i < ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT); i++) {
        const ash_policy_rule_t *r = ash_policy_rule(p, ASH_POLICY_RULE_GRADIENT, i);
        if (!unf_fired(0, r->index))
            unf_warn_rule(p, r);
    }
}

/* One token of the step watch (under the lock): a kernel id or UNF_MARK. Returns the step's
 * length in tokens once a block that holds a host read has occurred U.steps times in a row AND
 * the token after it starts the block once more, -1 once U.bound launches went by, 0 otherwise.
 * The one token of confirmation tells a step from a prefix of it: a program that evaluates one
 * batch before its first step (llm.c: the forward pass and its loss read) shows that block twice,
 * then goes on with the backward pass, not with the block. */
static long long unf_token(int tok)
{
    if (tok == UNF_MARK && U.last_tok == UNF_MARK)
        return 0; /* back-to-back reads are one */
    U.last_tok = tok;
    long long i = U.ntok++, found = 0, maxp = i < UNF_PMAX ? i : UNF_PMAX;
    long long pend = U.pending;
    int confirmed = pend > 0 && pend <= maxp && U.ring[(i - pend) % UNF_PMAX] == tok;
    U.pending = 0;
    for (long long q = 1; q <= maxp; q++) {
        int same = U.ring[(i - q) % UNF_PMAX] == tok;
        U.run[q] = same ? U.run[q] + 1 : 0;
        unsigned long long need = (unsigned long long)(U.steps - 1) * (unsigned long long)q;
        if (same && !found && U.steps > 0 && U.run[q] >= need &&
            (tok == UNF_MARK || U.last_mark > i - q))
            found = q; /* the last q tokens occurred U.steps times in a row, a host read among them */
    }
    U.ring[i % UNF_PMAX] = (short)tok;
    if (tok == UNF_MARK)
        U.last_mark = i;
    else if (U.bound > 0 && ++U.nlaunch >= U.bound && !found && !confirmed)
        return -1;
    if (confirmed)
        return pend;
    U.pending = found;
    return 0;
}

/* The watch decided: every rank names the unfired rules and stops, exit 7. */
static _Noreturn void unf_stop(long long step, long long launches)
{
    const ash_policy_t *p = ash_sync_policy();
    char when[160];
    if (step > 0)
        snprintf(when, sizeof when, "by the time the program's launch sequence repeated (a step "
                 "of %lld launches and host reads, seen %ld times; launch %lld)", step, U.steps,
                 launches);
    else
        snprintf(when, sizeof when, "in the first %lld kernel launches (ACCELSHIM_SYNC_WATCH_LAUNCHES)",
                 launches);
    unf_warn_gradients(p);
    pthread_mutex_unlock(&U.lock);
    ash_unfired_fatal();
    ash_fatal(ASH_EXIT_UNSYNCED, "rank %d: no gradient rule of %s fired %s: the %d ranks are "
              "training apart; stopped (exit %d; fix the rule's `at:` from the nearest kernels "
              "above, or `sync: optional` / accelerate-run --sync-optional if that is meant)",
              ash_world()->rank, ash_policy_source(p), when, ash_world()->size, ASH_EXIT_UNSYNCED);
}

/* One token, with U.lock held (unf_stop releases it on its way out). */
static void unf_watch_locked(int tok)
{
    long long step = 0;
    if (!unf_unsynced()) /* a gradient rule fired: nothing more to watch */
        atomic_store_explicit(&ash_unfired_watch_on, 0, memory_order_relaxed);
    else if ((step = unf_token(tok)) != 0)
        unf_stop(step, U.nlaunch);
}

static void unf_watch(int tok)
{
    if (!atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&U.lock);
    unf_watch_locked(tok);
    pthread_mutex_unlock(&U.lock);
}

void ash_unfired_launch(const void *kernel)
{
    if (!atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&U.lock); /* one lock: the kernel's id (its place in the name list), then its token */
    int id = -1;
    for (int i = U.n - 1; i >= 0 && id < 0; i--)
        if (U.key[i] == kernel)
            id = i;
    if (id >= 0 && atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        unf_watch_locked(id);
    pthread_mutex_unlock(&U.lock);
}

/* 1 when ptr lies in a device allocation of the table (not registered host memory) */
static int unf_on_device(uint64_t ptr)
{
    ash_alloc_entry_t e;
    return ash_alloc_find(ptr, &e) == ASH_ALLOC_OK && e.kind != ASH_ALLOC_KIND_HOST_REGISTERED;
}

void ash_unfired_copy(const char *api, uint64_t dst, uint64_t src)
{
    if (strstr(api, "HtoD") || strstr(api, "DtoD") || strstr(api, "Peer"))
        return;
    /* cuMemcpy[Async]: a runtime's cudaMemcpy of any direction; only device -> host is a read
     * (counting its H2D input copies made an evaluation pass look like a repeated step) */
    if (!strstr(api, "DtoH") && (!unf_on_device(src) || unf_on_device(dst)))
        return;
    unf_watch(UNF_MARK);
}

static void unf_exit(void)
{
    if (atomic_load(&U.fatal) || ash_fatal_code()) /* a fatal exit has said why already */
        return;
    const ash_world_t *w = ash_world();
    const ash_policy_t *p = ash_sync_policy();
    if (p && w->rank != 0 && unf_unsynced())
        unf_warn_gradients(p); /* the job fails: every rank's output says why */
    if (p && w->rank == 0)
        for (int k = 0; k < 2; k++) {
            ash_policy_rule_kind_t kind = k ? ASH_POLICY_RULE_PARAMETER : ASH_POLICY_RULE_GRADIENT;
            for (size_t i = 0; i < ash_policy_rule_count(p, kind); i++) {
                const ash_policy_rule_t *r = ash_policy_rule(p, kind, i);
                if (!unf_fired(k, r->index))
                    unf_warn_rule(p, r);
            }
        }
    int code = 0;
    char msg[512];
    if (w->size > 1 && !U.optional && !atomic_load(&U.any[0])) {
        if (p)
            snprintf(msg, sizeof msg, "no gradient rule of %s fired in this %d-rank job: the ranks "
                     "trained apart (exit %d; `sync: optional` in the policy, ACCELSHIM_SYNC="
                     "optional or accelerate-run --sync-optional if that is meant)",
                     ash_policy_source(p), w->size, ASH_EXIT_UNSYNCED);
        else
            snprintf(msg, sizeof msg, "no policy (ACCELSHIM_POLICY not set) in this %d-rank job: "
                     "nothing was synchronised (exit %d; ACCELSHIM_SYNC=optional or "
                     "accelerate-run --sync-optional if that is meant)", w->size, ASH_EXIT_UNSYNCED);
        unf_say(msg);
        code = ASH_EXIT_UNSYNCED;
    }
    if (!code && ash_digest_failed())
        code = ASH_EXIT_PARAMS_DIFFER; /* digest.c has said which rank */
    if (code) {
        fflush(NULL); /* the program's buffered output first; _exit skips stdio's own flush */
        _exit(code);
    }
}

void ash_unfired_init(void)
{
    const ash_policy_t *p = ash_sync_policy();
    const ash_world_t *w = ash_world();
    const char *sync = ash_opt_str(ASH_OPT_SYNC); /* required|optional: the table validated it */
    U.optional = sync ? !strcmp(sync, "optional") : ash_policy_sync_optional(p);
    const char *origin = ash_opt_str(ASH_OPT_POLICY_ORIGIN);
    if (!origin)
        origin = "ACCELSHIM_POLICY";
    if (!p) {
        if (w->size > 1 && !U.optional)
            ash_warn("sync", "policy: none (ACCELSHIM_POLICY not set): %d ranks, nothing is "
                     "synchronised; the job will fail at exit (exit %d) unless sync is optional",
                     w->size, ASH_EXIT_UNSYNCED);
        else
            ash_info("sync", "policy: none (ACCELSHIM_POLICY not set)");
    } else {
        size_t g = ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT);
        size_t q = ash_policy_rule_count(p, ASH_POLICY_RULE_PARAMETER);
        if (g + q == 0)
            ash_warn("sync", "policy: %s (from %s) has no gradient or parameter rule: nothing is "
                     "synchronised", ash_policy_source(p), origin);
        else
            ash_info("sync", "policy: %s (from %s): %zu gradient rule(s), %zu parameter rule(s)%s",
                     ash_policy_source(p), origin, g, q, U.optional ? ", sync optional" : "");
    }
    long v;
    U.steps = ash_opt_int(ASH_OPT_SYNC_WATCH_STEPS, &v) == ASH_OK ? v : 2;
    U.bound = ash_opt_int(ASH_OPT_SYNC_WATCH_LAUNCHES, &v) == ASH_OK ? v : 100000;
    if (p && w->size > 1 && !U.optional && (U.steps > 0 || U.bound > 0) &&
        ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT) > 0)
        atomic_store(&ash_unfired_watch_on, 1);
    if (ash_shim_at_exit(ASH_EXIT_STEP_VERDICT, unf_exit) != ASH_OK)
        ash_warn("sync", "no exit step left: rules that never fired will not be reported");
}
