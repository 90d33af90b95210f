/* fuse.c — fused reduction for `fuse: true` gradient rules (see ash_fuse.h for the protocol).
 *
 * State per rule: LEARN (step 0: per-launch, recording (pointer, count) in launch order) ->
 * FUSED (at each step's first launch: one collective over all buffers; later launches of the
 * step are skipped once each) -> OFF (per-launch for good, after one warning). A fallback in the
 * middle of a step skips nothing more: a launch whose buffer the step's fused collective already
 * covered is reduced again (averaging identical values again) rather than risk leaving a buffer
 * of a NEW step unreduced when the unexpected launch was in fact a step boundary. The fusion buffer (non-contiguous
 * buffers, or ACCELSHIM_FUSE_COPY=1) comes from the REAL cuMemAlloc_v2 (invisible to the
 * allocation table and the policy) and the copies in and out are cuMemcpyDtoDAsync_v2 on the
 * launch's stream, so ordering is the application's own. This module decides and stages; the
 * engine issues the collective. Threading: every function runs with the sync engine's lock held
 * (or at init/close).
 * Must not: issue a collective (it decides and stages; sync.c issues); allocate through our hooks
 * (the fusion buffer comes from the real cuMemAlloc_v2); copy on another stream than the launch's;
 * run without the sync engine's lock (except at init and close).
 */
#include "ash_fuse.h"

#include "ash_driver.h"
#include "ash_log.h"
#include "ash_options.h"

#include <stdlib.h>
#include <string.h>

#define FUSE_MAX_BUFFERS 4096

typedef enum { F_LEARN, F_FUSED, F_OFF } fuse_state_t;

typedef struct {
    CUdeviceptr ptr;
    size_t count;
} fbuf_t;

typedef struct {
    fuse_state_t state;
    fbuf_t *buf;           /* learned, in launch order */
    size_t n;
    unsigned char *done;   /* this step: the launch of buf[i] came */
    int contiguous;        /* buffers tile [span, span + total * esize) exactly */
    CUdeviceptr span, fusion;
    size_t total, esize;
} fuse_rule_t;

static struct {
    fuse_rule_t *rules;    /* one per gradient rule */
    size_t n;
    int force_copy;
} F;

void ash_fuse_init(const ash_policy_t *p)
{
    F.n = ash_policy_rule_count(p, ASH_POLICY_RULE_GRADIENT);
    if (F.n && !(F.rules = calloc(F.n, sizeof *F.rules)))
        F.n = 0;
    long v = 0;
    F.force_copy = ash_opt_int(ASH_OPT_FUSE_COPY, &v) == ASH_OK && v == 1;
}

static fuse_rule_t *fuse_of(const ash_policy_rule_t *r)
{
    return r->kind == ASH_POLICY_RULE_GRADIENT && r->index < F.n ? &F.rules[r->index] : NULL;
}

const char *ash_fuse_state_name(const ash_policy_rule_t *r)
{
    const fuse_rule_t *f = fuse_of(r);
    if (!f)
        return "per-launch";
    return f->state == F_LEARN ? "learning" : f->state == F_FUSED ? "fused" : "per-launch";
}

static long find(const fuse_rule_t *f, CUdeviceptr ptr, size_t count)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->buf[i].ptr == ptr && f->buf[i].count == count)
            return (long)i;
    return -1;
}

static int cmp_ptr(const void *a, const void *b)
{
    const fbuf_t *x = a, *y = b;
    return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* Stop fusing rule r: one warning, per-launch from now on. A step under way keeps its
 * already-reduced buffers skippable (in_step stays set). */
static void fall_back(fuse_rule_t *f, const ash_policy_rule_t *r, const char *why)
{
    ash_warn("fuse", "gradients[%u] (at: \"%s\"): %s; fusion is off for this rule, each launch "
             "is reduced on its own from now on", r->index, r->at, why);
    f->state = F_OFF;
}

/* End of the learning step: decide how the fused collective will run. 0 = fuse. */
static int finish_learning(fuse_rule_t *f, const ash_policy_rule_t *r)
{
    const ash_coll_driver_t *d = ash_driver();
    f->esize = r->dtype == ASH_POLICY_DTYPE_F32 ? 4 : 2;
    f->total = 0;
    for (size_t i = 0; i < f->n; i++)
        f->total += f->buf[i].count;
    if (f->n < 2) {
        ash_info("fuse", "gradients[%u] (at: \"%s\"): one launch per step, nothing to fuse",
                 r->index, r->at);
        f->state = F_OFF;
        return -1;
    }
    if (f->total * f->esize > r->fuse_cap_bytes) {
        ash_warn("fuse", "gradients[%u] (at: \"%s\"): a step's %zu buffers hold %zu bytes, over "
                 "fuse_cap_bytes %llu; reducing each launch on its own", r->index, r->at, f->n,
                 f->total * f->esize, (unsigned long long)r->fuse_cap_bytes);
        f->state = F_OFF;
        return -1;
    }
    fbuf_t *sorted = malloc(f->n * sizeof *sorted);
    f->done = calloc(f->n, 1);
    if (!sorted || !f->done) {
        free(sorted);
        fall_back(f, r, "out of memory");
        return -1;
    }
    memcpy(sorted, f->buf, f->n * sizeof *sorted);
    qsort(sorted, f->n, sizeof *sorted, cmp_ptr);
    f->contiguous = 1;
    for (size_t i = 1; i < f->n; i++) {
        if (sorted[i].ptr < sorted[i - 1].ptr + sorted[i - 1].count * f->esize) {
            free(sorted);
            fall_back(f, r, "two of a step's buffers overlap");
            return -1;
        }
        if (sorted[i].ptr != sorted[i - 1].ptr + sorted[i - 1].count * f->esize)
            f->contiguous = 0;
    }
    f->span = sorted[0].ptr;
    free(sorted);
    if (!f->contiguous || F.force_copy) {
        f->contiguous = 0;
        if (!d || !ASH_CU_HAS(cuMemcpyDtoDAsync_v2) ||
            ASH_CU(cuMemAlloc_v2(&f->fusion, f->total * f->esize)) != CUDA_SUCCESS) {
            f->fusion = 0;
            fall_back(f, r, "no fusion buffer (the driver lacks cuMemcpyDtoDAsync_v2, or the "
                            "allocation failed)");
            return -1;
        }
    }
    ash_info("fuse", "gradients[%u] (at: \"%s\"): fusing %zu launches per step into one "
             "all-reduce of %zu elements (%s)", r->index, r->at, f->n, f->total,
             f->contiguous ? "in place: the buffers are contiguous" : "through a fusion buffer");
    f->state = F_FUSED;
    memset(f->done, 1, f->n); /* the previous "step" is complete */
    return 0;
}

/* The step's first launch: one collective over every learned buffer, in place over the span
 * or through the fusion buffer (copied in here, on the launch's stream). */
static ash_coll_status_t fused_step(fuse_rule_t *f, CUstream s, ash_fuse_step_t *out)
{
    *out = (ash_fuse_step_t){.ptr = f->span, .count = f->total, .buffers = (unsigned)f->n};
    if (f->contiguous)
        return ASH_COLL_OK;
    size_t off = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t b = f->buf[i].count * f->esize;
        if (ASH_CU(cuMemcpyDtoDAsync_v2(f->fusion + off, f->buf[i].ptr, b, s)) != CUDA_SUCCESS)
            return ASH_COLL_ECUDA;
        off += b;
    }
    out->ptr = f->fusion;
    out->copy_back = 1;
    return ASH_COLL_OK;
}

ash_coll_status_t ash_fuse_finish(const ash_policy_rule_t *r, const ash_fuse_step_t *st, CUstream s)
{
    fuse_rule_t *f = fuse_of(r);
    if (!st->copy_back || !f)
        return ASH_COLL_OK;
    size_t off = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t b = f->buf[i].count * f->esize;
        if (ASH_CU(cuMemcpyDtoDAsync_v2(f->buf[i].ptr, f->fusion + off, b, s)) != CUDA_SUCCESS)
            return ASH_COLL_ECUDA;
        off += b;
    }
    return ASH_COLL_OK;
}

ash_coll_status_t ash_fuse_begin(const ash_policy_rule_t *r, CUdeviceptr ptr, size_t count,
                                 CUstream s, ash_fuse_step_t *out)
{
    fuse_rule_t *f = r->fuse ? fuse_of(r) : NULL;
    *out = (ash_fuse_step_t){.ptr = ptr, .count = count, .buffers = 1}; /* per launch */
    if (!f)
        return ASH_COLL_OK;
    long i = find(f, ptr, count);
    switch (f->state) {
    case F_LEARN:
        if (i == 0) {
            if (finish_learning(f, r) != 0)
                break;
            goto fused; /* the first launch of step 1 */
        }
        if (i > 0) {
            fall_back(f, r, "a buffer came twice before the first one repeated (no step pattern)");
            break;
        }
        if (f->n == FUSE_MAX_BUFFERS) {
            fall_back(f, r, "more than 4096 launches in a step");
            break;
        }
        fbuf_t *nb = realloc(f->buf, (f->n + 1) * sizeof *nb);
        if (!nb) {
            fall_back(f, r, "out of memory");
            break;
        }
        f->buf = nb;
        f->buf[f->n++] = (fbuf_t){ptr, count};
        break;
    case F_FUSED:
    fused:
        if (i == 0) {
            if (memchr(f->done, 0, f->n)) {
                fall_back(f, r, "a step ended without the launches of all learned buffers");
                break;
            }
            memset(f->done, 0, f->n);
            f->done[0] = 1;
            return fused_step(f, s, out);
        }
        if (i < 0 || f->done[i]) {
            fall_back(f, r, i < 0 ? "a launch on a buffer the first step did not have (pointer or "
                                    "count changed)"
                                  : "a buffer came twice in one step");
            break;
        }
        f->done[i] = 1;
        out->skip = 1;
        return ASH_COLL_OK;
    case F_OFF:
        break;
    }
    return ASH_COLL_OK;
}

void ash_fuse_fini(void)
{
    /* The fusion buffers are not freed here: at exit the application may already have
     * destroyed the context that owns them (its teardown frees them). Nothing to do. */
}
