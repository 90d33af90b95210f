/* test_fuse_unit.c — the fused-reduction state machine (shim/sync/fuse.c) on its own, with the
 * collectives replaced by a recorder: which collectives run (pointer, count,
 * fused buffers) and which launches are skipped, for launch patterns a trainer may produce.
 * Properties: (1) step 0 is learned per launch, then ONE collective per step over the span and
 * the other launches are skipped; (2) every launch's buffer is reduced exactly once per step, in
 * every pattern change (a step that misses a buffer, an unknown buffer mid-step, a repeat), and
 * each change warns exactly once, after which reduction is per launch; (3) buffers that do not
 * tile one span use the fusion buffer (copies in and out through the real-driver table); (4) a
 * step over fuse_cap_bytes is not fused. The test plays the engine: for each launch it asks
 * ash_fuse_begin what to reduce, "issues" it (records pointer, count, buffers) unless told to
 * skip, and calls ash_fuse_finish. Prints TAP; exit 1 on any failure.
 */
#include "ash_fuse.h"
#include "ash_driver.h"
#include "ash_log.h"
#include "ash_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- stubs for what fuse.c calls ---- */
_Atomic int ash_log_level_now = ASH_LOG_WARN;
static int warnings;
void ash_log_write(ash_log_level_t level, const char *subsys, const char *fmt, ...)
{
    (void)subsys, (void)fmt;
    if (level == ASH_LOG_WARN)
        warnings++;
}
static const char *force_copy;
ash_status_t ash_opt_int(ash_opt_id_t id, long *out)
{
    (void)id;
    if (!force_copy)
        return ASH_ERR_NOT_SET;
    *out = atol(force_copy);
    return ASH_OK;
}
const char *ash_opt_str(ash_opt_id_t id) { (void)id; return force_copy; }
static size_t nrules = 1;
size_t ash_policy_rule_count(const ash_policy_t *p, ash_policy_rule_kind_t kind)
{
    (void)p;
    return kind == ASH_POLICY_RULE_GRADIENT ? nrules : 0;
}

typedef struct { CUdeviceptr ptr; size_t count; unsigned fused; } coll_t;
static coll_t colls[256];
static int ncoll, nskip, ncopies;
static CUresult CUDAAPI fake_alloc(CUdeviceptr *p, size_t n) { (void)n; *p = 0x900000; return CUDA_SUCCESS; }
static CUresult CUDAAPI fake_copy(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)d, (void)s, (void)n, (void)st;
    ncopies++;
    return CUDA_SUCCESS;
}
ash_coll_driver_t ash_drv = {.cuMemAlloc_v2 = fake_alloc, .cuMemcpyDtoDAsync_v2 = fake_copy};
const ash_coll_driver_t *ash_driver(void) { return &ash_drv; }
void ash_cu_breadcrumb(const char *file, int line, const char *call, CUresult r)
{
    (void)file, (void)line, (void)call, (void)r;
}

/* ---- the checks ---- */
static int failures, ncase;
static void tap(int ok, const char *what)
{
    printf("%s %d - %s\n", ok ? "ok" : "not ok", ++ncase, what);
    failures += !ok;
}

static ash_policy_rule_t rule = {.kind = ASH_POLICY_RULE_GRADIENT, .at = "upd", .dtype = ASH_POLICY_DTYPE_F32,
                                 .fuse = true, .fuse_cap_bytes = 1 << 20};
/* buffers A..D: 100, 10, 50, 5 floats, contiguous from 0x1000 */
static const CUdeviceptr A = 0x1000, B = 0x1000 + 400, C = 0x1000 + 440, D = 0x1000 + 640;
static const size_t NA = 100, NB = 10, NC = 50, ND = 5;

static void reset(void)
{
    memset(colls, 0, sizeof colls);
    ncoll = nskip = warnings = ncopies = 0;
    ash_fuse_init(NULL);
}
/* one launch, as the engine runs it: the step's plan, the collective it asks for, the copy back */
static void launch(CUdeviceptr p, size_t n)
{
    ash_fuse_step_t st;
    if (ash_fuse_begin(&rule, p, n, NULL, &st) != ASH_COLL_OK) {
        printf("# ash_fuse_begin failed\n");
        return;
    }
    if (st.skip) {
        nskip++;
        return;
    }
    colls[ncoll++] = (coll_t){st.ptr, st.count, st.buffers};
    if (ash_fuse_finish(&rule, &st, NULL) != ASH_COLL_OK)
        printf("# ash_fuse_finish failed\n");
}
static void step(int skip_b)
{
    launch(A, NA);
    if (!skip_b)
        launch(B, NB);
    launch(C, NC);
    launch(D, ND);
}
/* reductions of buffer p since colls[from]: a fused collective counts for each of A..D */
static int reduced(int from, CUdeviceptr p)
{
    int n = 0, learned = p == A || p == B || p == C || p == D;
    for (int i = from; i < ncoll; i++)
        n += (colls[i].fused > 1 && learned) || (colls[i].fused <= 1 && colls[i].ptr == p);
    return n;
}

int main(void)
{
    printf("1..7\n");
    reset();
    step(0);
    int learned = ncoll;
    step(0);
    step(0);
    tap(learned == 4 && ncoll == 6 && colls[4].fused == 4 && colls[4].ptr == A &&
            colls[4].count == NA + NB + NC + ND && nskip == 6 && warnings == 0 && ncopies == 0 &&
            !strcmp(ash_fuse_state_name(&rule), "fused"),
        "contiguous: step 0 per launch, then one in-place collective per step over the span, 3 skips");


    reset();
    step(0); step(0);
    int mark = ncoll;
    step(1); /* b missing: the fused collective covered it anyway, harmless */
    int after_missing = ncoll;
    step(0); /* A repeats with B never seen: fall back, per launch from here */
    tap(warnings == 1 && ncoll - after_missing == 4 && reduced(after_missing, B) == 1 &&
            reduced(mark, C) == 2 && !strcmp(ash_fuse_state_name(&rule), "per-launch"),
        "a step without one buffer's launch: one warning, then every launch reduced on its own");

    reset();
    step(0); step(0);
    mark = ncoll;
    launch(A, NA);
    launch(0x5000, 7); /* unknown buffer mid-step */
    launch(B, NB); launch(C, NC); launch(D, ND);
    int a = reduced(mark, A), b = reduced(mark, B), x = reduced(mark, 0x5000);
    step(0);
    tap(warnings == 1 && a == 1 && b == 2 && x == 1 && ncoll - mark == 5 + 4,
        "an unknown buffer mid-step: reduced itself; after the fallback nothing is skipped (a "
        "buffer the fused collective covered is reduced again, never left out)");

    reset();
    step(0); step(0);
    mark = ncoll;
    launch(A, NA); launch(B, NB); launch(B, NB); launch(C, NC); launch(D, ND);
    tap(warnings == 1 && reduced(mark, A) == 1 && reduced(mark, B) == 2 && reduced(mark, C) == 2 &&
            reduced(mark, D) == 2,
        "a buffer twice in a step (maybe a new step without its first launch): from the repeat on, "
        "every launch is reduced");

    reset();
    launch(A, NA); launch(C, NC); launch(A, NA); launch(C, NC); launch(A, NA); launch(C, NC);
    tap(warnings == 0 && ncoll == 4 && colls[2].fused == 2 && ncopies == 8 &&
            colls[2].ptr == 0x900000 && colls[2].count == NA + NC,
        "non-contiguous buffers: one collective on the fusion buffer, copies in and out");

    reset();
    rule.fuse_cap_bytes = 100;
    step(0); step(0);
    tap(warnings == 1 && ncoll == 8 && !strcmp(ash_fuse_state_name(&rule), "per-launch"),
        "a step over fuse_cap_bytes is not fused (one warning, per launch)");
    rule.fuse_cap_bytes = 1 << 20;

    reset();
    force_copy = "1";
    ash_fuse_init(NULL);
    step(0); step(0);
    tap(ncoll == 5 && colls[4].ptr == 0x900000 && ncopies == 8,
        "ACCELSHIM_FUSE_COPY=1: contiguous buffers also go through the fusion buffer");
    force_copy = NULL;
    reset();
    return failures ? 1 : 0;
}
