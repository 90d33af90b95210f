/* unfired.c — rules that never fired are named at exit, with the nearest kernel names seen, and
 * a multi-rank job that synchronised nothing fails instead of exiting 0.
 *
 * Invariant: the verdict only adds a failure to a process that is ending normally (exit() or a
 * return from main): a fatal path of the shim (ash_unfired_fatal) keeps its own status. It is
 * the exit sequence's verdict step (ASH_EXIT_STEP_VERDICT, registered at init), the last one, so
 * it runs after the record, the communicator's close and the report; on a failure it flushes
 * stdio and _exits.
 * The step watch (ash_unfired.h) stops such a job early, at its second step: the tokens are the
 * launches and host reads, a step is a block of them that holds a host read, repeats, and changes
 * persistent state (some allocation read in the block before it is written in it, then written:
 * the parameters), as far as the kernels' facts (stepfacts.c) tell; a block whose every launch has
 * facts and that changes no persistent state (an evaluation batch, an accumulation micro-step)
 * is not a step; where facts are missing and no persistent write shows, a repeated block is one.
 * Threading: seen/fire/launch/copy may run on any thread (a mutex for the name list and the
 * watch, atomics for the bits and the watch's flag). Callers: lifecycle.c (init), sync.c
 * (matcher: seen; prepare: fire; fatal: fatal), intercept's launch, copy, memset and image load
 * hooks (launch, copy, memset, image).
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
#include "ash_stepfacts.h"
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
#define UNF_ACC 16           /* allocations one token's record holds (more: no evidence for it) */
#define UNF_SEEN 4096        /* distinct allocations one block's verdict follows (a power of 2) */

/* What one token did to device memory: the allocations (bases) it read (ASH_SF_READ) and wrote
 * (ASH_SF_WRITE); the memsets and copies into device memory since the token before come first.
 * unknown: a launch without facts, or more allocations than kept (no evidence). */
typedef struct {
    uint64_t base[UNF_ACC];
    unsigned char flag[UNF_ACC];
    unsigned char n, unknown;
} unf_acc_t;

#define UNF_NOFACTS ((const ash_stepfacts_kernel_t *)1) /* looked up: the kernel has none */

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
    long long pending_s; /* where the repetition of that block began (its first token) */
    long long ns_q, ns_s; /* the last block judged not a step: its length and where it began */
    int last_tok;
    short ring[UNF_PMAX];
    unsigned run[UNF_PMAX + 1];
    /* the watch's evidence (allocated when the watch turns on): each ring token's record, the
     * writes waiting for the next token, each kernel's facts (by name-list index) */
    unf_acc_t *acc, pend;
    const ash_stepfacts_kernel_t *facts[UNF_MAX_NAMES];
    struct { uint64_t base; unsigned char first, state; } *seen; /* the verdict's table */
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

/* Record access FLAG of the allocation holding PTR in rec (device allocations only). */
static void unf_acc_add(unf_acc_t *rec, uint64_t ptr, unsigned flag)
{
    ash_alloc_entry_t e;
    if (ptr == 0 || ash_alloc_find(ptr, &e) != ASH_ALLOC_OK || e.kind == ASH_ALLOC_KIND_HOST_REGISTERED)
        return;
    for (int j = 0; j < rec->n; j++)
        if (rec->base[j] == e.base) {
            rec->flag[j] |= (unsigned char)flag;
            return;
        }
    if (rec->n == UNF_ACC) {
        rec->unknown = 1;
        return;
    }
    rec->base[rec->n] = e.base;
    rec->flag[rec->n++] = (unsigned char)flag;
}

/* Does the block of length q whose repetition began at token s, as of token last, change
 * persistent state? Looks at its latest whole period in the ring, aligned on s (the program's
 * loop starts where the repetition did). 1: some allocation is read (by a launch or a device copy,
 * not written by that token) before any write to it in the block, and written later in it; or no
 * evidence either way (a launch without facts, a record that overflowed, a period out of the ring,
 * too many allocations): a step, as before facts. 0: every token has its facts and none of that. */
static int unf_is_step(long long q, long long s, long long last)
{
    if (!U.acc || !U.seen)
        return 1;
    long long w = s + ((last + 1 - s) / q - 1) * q;
    if (w < s || last - w + 1 >= UNF_PMAX || U.ntok - w > UNF_PMAX)
        return 1;
    memset(U.seen, 0, UNF_SEEN * sizeof *U.seen);
    int unknown = 0, n = 0;
    for (long long t = w; t < w + q; t++) {
        const unf_acc_t *r = &U.acc[t % UNF_PMAX];
        unknown |= r->unknown;
        for (int j = 0; j < r->n; j++) {
            size_t h = (size_t)((r->base[j] * 0x9E3779B97F4A7C15ull) >> 52) & (UNF_SEEN - 1);
            while (U.seen[h].state && U.seen[h].base != r->base[j])
                h = (h + 1) & (UNF_SEEN - 1);
            if (!U.seen[h].state) {
                if (++n > UNF_SEEN / 2)
                    return 1;
                U.seen[h].base = r->base[j];
                U.seen[h].state = 1;
                U.seen[h].first = r->flag[j]; /* READ alone: the block reads what came before it */
            } else if ((r->flag[j] & ASH_SF_WRITE) && U.seen[h].first == ASH_SF_READ) {
                return 1; /* read before it is written, then written: persistent state changes */
            }
        }
    }
    return unknown;
}

/* One token of the step watch (under the lock): a kernel id or UNF_MARK, with its record (NULL:
 * none). Returns the step's length in tokens once a block that holds a host read has occurred
 * U.steps times in a row AND the token after it starts the block once more AND it changes
 * persistent state (unf_is_step), -1 once U.bound launches went by, 0 otherwise.
 * The one token of confirmation tells a step from a prefix of it: a program that evaluates one
 * batch before its first step (llm.c: the forward pass and its loss read) shows that block twice,
 * then goes on with the backward pass, not with the block. A block judged not a step (and its
 * multiples in the same repetition) is not judged again until the repetition breaks. */
static long long unf_token(int tok, const unf_acc_t *rec)
{
    if (tok == UNF_MARK && U.last_tok == UNF_MARK)
        return 0; /* back-to-back reads are one */
    U.last_tok = tok;
    long long i = U.ntok++, found = 0, fs = 0, maxp = i < UNF_PMAX ? i : UNF_PMAX;
    long long pend = U.pending;
    int confirmed = pend > 0 && pend <= maxp && U.ring[(i - pend) % UNF_PMAX] == tok;
    U.pending = 0;
    if (confirmed && !unf_is_step(pend, U.pending_s, i - 1)) {
        ash_debug("sync", "step watch: a block of %lld launches and host reads repeated without changing "
                  "persistent state (not a training step); watching on", pend);
        U.ns_q = pend;
        U.ns_s = U.pending_s;
        confirmed = 0;
    }
    if (U.acc) {
        unf_acc_t *slot = &U.acc[i % UNF_PMAX];
        *slot = rec ? *rec : (unf_acc_t){0};
    }
    for (long long q = 1; q <= maxp; q++) {
        int same = U.ring[(i - q) % UNF_PMAX] == tok;
        U.run[q] = same ? U.run[q] + 1 : 0;
        unsigned long long need = (unsigned long long)(U.steps - 1) * (unsigned long long)q;
        if (same && !found && U.steps > 0 && U.run[q] >= need &&
            (tok == UNF_MARK || U.last_mark > i - q)) {
            /* the last q tokens occurred U.steps times in a row, a host read among them */
            long long s = i - (long long)U.run[q] - q + 1;
            if (!(U.ns_q > 0 && q % U.ns_q == 0 && s == U.ns_s))
                found = q, fs = s;
        }
    }
    U.ring[i % UNF_PMAX] = (short)tok;
    if (tok == UNF_MARK)
        U.last_mark = i;
    else if (U.bound > 0 && ++U.nlaunch >= U.bound && !found && !confirmed)
        return -1;
    if (confirmed)
        return pend;
    U.pending = found;
    U.pending_s = fs;
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
static void unf_watch_locked(int tok, const unf_acc_t *rec)
{
    long long step = 0;
    if (!unf_unsynced()) /* a gradient rule fired: nothing more to watch */
        atomic_store_explicit(&ash_unfired_watch_on, 0, memory_order_relaxed);
    else if ((step = unf_token(tok, rec)) != 0)
        unf_stop(step, U.nlaunch);
}

/* The record of a launch of kernel id with these arguments (lock held): the pending writes,
 * then each pointer argument's allocation with what the kernel's facts say it does there. */
static void unf_launch_record(int id, const ash_kernel_info_t *k, void **params, void **extra, unf_acc_t *rec)
{
    *rec = U.pend;
    U.pend = (unf_acc_t){0};
    if (!U.facts[id]) {
        const ash_stepfacts_kernel_t *f = ash_stepfacts_find(k->name);
        U.facts[id] = f ? f : UNF_NOFACTS;
    }
    const ash_stepfacts_kernel_t *f = U.facts[id];
    if (f == UNF_NOFACTS || k->nparams != f->nparams) { /* no facts, or not the kernel they are of */
        rec->unknown = 1;
        return;
    }
    for (int i = 0; i < f->nparams; i++) {
        uint64_t v = 0;
        if (f->sizes[i] != 8)
            continue;
        const void *a = ash_sync_arg(k, params, extra, (unsigned)i, 8);
        if (!a) {
            rec->unknown = 1;
            return;
        }
        memcpy(&v, a, sizeof v);
        if (f->acc[i]) {
            unf_acc_add(rec, v, f->acc[i]);
        } else {
            /* a pointer into an allocation the facts see no access through (stored, or passed
             * where the facts do not follow it): no evidence for this launch */
            ash_alloc_entry_t e;
            if (v && ash_alloc_find(v, &e) == ASH_ALLOC_OK)
                rec->unknown = 1;
        }
    }
}

void ash_unfired_launch(const ash_kernel_info_t *k, void **params, void **extra)
{
    if (!atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&U.lock); /* one lock: the kernel's id (its place in the name list), then its token */
    int id = -1;
    for (int i = U.n - 1; i >= 0 && id < 0; i--)
        if (U.key[i] == (const void *)k)
            id = i;
    if (id >= 0 && atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed)) {
        unf_acc_t rec;
        unf_launch_record(id, k, params, extra, &rec);
        unf_watch_locked(id, &rec);
    }
    pthread_mutex_unlock(&U.lock);
}

void ash_unfired_image(const char *api, const void *image, const char *path)
{
    if (atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        ash_stepfacts_image(api, image, path);
}

void ash_unfired_memset(uint64_t dst)
{
    if (!atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&U.lock);
    unf_acc_add(&U.pend, dst, ASH_SF_WRITE);
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
    if (!atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed))
        return;
    int htod = strstr(api, "HtoD") != NULL, dtod = strstr(api, "DtoD") != NULL, peer = strstr(api, "Peer") != NULL;
    int generic = !htod && !dtod && !peer && !strstr(api, "DtoH");
    int src_dev = !htod && !peer && (!generic || unf_on_device(src)); /* Peer: arg 1 is a context */
    int dst_dev = !strstr(api, "DtoH") && (!generic || unf_on_device(dst));
    pthread_mutex_lock(&U.lock);
    if (dst_dev) { /* a write into device memory: evidence for the next token */
        if (src_dev)
            unf_acc_add(&U.pend, src, ASH_SF_READ);
        unf_acc_add(&U.pend, dst, ASH_SF_WRITE);
    } else if (src_dev && atomic_load_explicit(&ash_unfired_watch_on, memory_order_relaxed)) {
        /* device -> host: the host read, a token (counting a runtime's H2D input copies made an
         * evaluation pass look like a repeated step) */
        unf_watch_locked(UNF_MARK, NULL);
    }
    pthread_mutex_unlock(&U.lock);
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
        ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT) > 0) {
        /* the evidence (without memory: none, and a repeated block is a step as before) */
        U.acc = calloc(UNF_PMAX, sizeof *U.acc);
        U.seen = calloc(UNF_SEEN, sizeof *U.seen);
        atomic_store(&ash_unfired_watch_on, 1);
    }
    if (ash_shim_at_exit(ASH_EXIT_STEP_VERDICT, unf_exit) != ASH_OK)
        ash_warn("sync", "no exit step left: rules that never fired will not be reported");
}
