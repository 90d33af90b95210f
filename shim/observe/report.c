/* report.c — the exit report: per-rule sync counts, collectives, bytes on the wire, time in
 * collectives vs wall time, casts, peak device memory; one job line on rank 0 (see ash_report.h).
 *
 * What "time in collectives" means: for each collective, the stream time between two CUDA
 * events recorded (real driver) on the launch's stream just before and just after it — the
 * time the application's stream spent in communication, waiting for peers included, which is
 * what a stream-ordered backend (nccl returns before the data moved) costs the step. When the
 * driver lacks events, or the event ring is full, the host time of the call stands in (for the
 * host-staged mpi backend the two agree: the stream idles while the host exchanges).
 * Invariant: no blocking CUDA call (events are polled with cuEventQuery at the next collective;
 * the ones still pending at close are left alone, as the application may have destroyed its
 * context, and count with their host time). Output files are created new (O_EXCL|O_NOFOLLOW).
 * Threading: see ash_report.h.
 * Must not: make a blocking CUDA call (events polled with cuEventQuery); issue a collective (the
 * engine gathers the job words it hands over); open an existing output file (created
 * O_EXCL|O_NOFOLLOW).
 */
#include "ash_report.h"
#include "ash_sync.h"

#include "ash_alloc.h"
#include "ash_driver.h"
#include "ash_file.h"
#include "ash_fuse.h"
#include "ash_log.h"
#include "ash_options.h"
#include "ash_world.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_EV_RING 256

typedef struct {
    unsigned long long hits, allreduces, broadcasts, fused, skipped, payload, wire, casts;
} rule_stats_t;

typedef struct {
    CUevent a, b;
    uint64_t host_ns;
} ev_slot_t;

static struct {
    const ash_policy_t *policy;
    rule_stats_t *rules[2];
    size_t nrules[2];
    uint64_t t_start, wall_frozen;
    unsigned long long allreduces, broadcasts, fused, payload, wire, casts, cast_elems;
    uint64_t host_ns, host_timed_ns, dev_ns;
    unsigned long long timed, untimed;
    ev_slot_t ring[REPORT_EV_RING];
    unsigned head, tail; /* slots [tail, head) wait to be harvested */
    int events_broken;
    ev_slot_t *pending;  /* the "before" event of the collective under way */
    const char *backend;
    /* the job, gathered at close (rank 0 prints it) */
    int gathered, world;
    const unsigned long long *all; /* world * ASH_COLL_FP_WORDS */
} R;

enum { W_WALL, W_COMM, W_COLL, W_WIRE, W_PEAK, W_RANK }; /* the gathered words */

static void report_init(void)
{
    R.t_start = ash_observe_now_ns();
    R.policy = ash_sync_policy();
    for (int k = 0; k < 2; k++) {
        R.nrules[k] = ash_policy_rule_count(R.policy, (ash_policy_rule_kind_t)k);
        if (R.nrules[k] && !(R.rules[k] = calloc(R.nrules[k], sizeof *R.rules[k])))
            R.nrules[k] = 0;
    }
}

static rule_stats_t *stats_of(const ash_policy_rule_t *r)
{
    if (!r || (unsigned)r->kind > 1 || r->index >= R.nrules[r->kind])
        return NULL;
    return &R.rules[r->kind][r->index];
}

static void report_sync_point(const ash_sync_event_t *e)
{
    rule_stats_t *st = stats_of(e->rule);
    if (st)
        st->hits++;
}

static void report_fused_skip(const ash_sync_event_t *e)
{
    rule_stats_t *st = stats_of(e->rule);
    if (st)
        st->skipped++;
}

/* ---- timing events ---- */

static int ev_usable(void)
{
    return ash_driver() && !R.events_broken && ASH_CU_HAS(cuEventCreate) && ASH_CU_HAS(cuEventRecord) &&
           ASH_CU_HAS(cuEventQuery) && ASH_CU_HAS(cuEventElapsedTime_v2);
}

/* Harvest completed slots in order, without blocking. */
static void ev_poll(void)
{
    while (R.tail != R.head) {
        ev_slot_t *e = &R.ring[R.tail % REPORT_EV_RING];
        CUresult q = ASH_CU(cuEventQuery(e->b));
        if (q == CUDA_ERROR_NOT_READY)
            break;
        float ms = 0;
        if (q == CUDA_SUCCESS && ASH_CU(cuEventElapsedTime_v2(&ms, e->a, e->b)) == CUDA_SUCCESS &&
            ms >= 0) {
            R.dev_ns += (uint64_t)((double)ms * 1e6);
            R.host_timed_ns += e->host_ns;
            R.timed++;
        } else {
            ash_debug("report", "collective timing events: query %d; timed on the host", (int)q);
            R.untimed++;
        }
        R.tail++;
    }
}

/* Record the "before" event for a collective on s; returns the slot or NULL (untimed). */
static ev_slot_t *ev_begin(CUstream s)
{
    if (!ev_usable())
        return NULL;
    ev_poll();
    if (R.head - R.tail >= REPORT_EV_RING)
        return NULL;
    ev_slot_t *e = &R.ring[R.head % REPORT_EV_RING];
    if (!e->a && (ASH_CU(cuEventCreate(&e->a, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
                  ASH_CU(cuEventCreate(&e->b, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)) {
        ash_warn("report", "cuEventCreate failed: collectives are timed on the host only");
        R.events_broken = 1;
        return NULL;
    }
    CUresult rc = ASH_CU(cuEventRecord(e->a, s));
    if (rc != CUDA_SUCCESS) {
        ash_debug("report", "cuEventRecord failed (%d): this collective is timed on the host", (int)rc);
        return NULL;
    }
    return e;
}

static void ev_end(ev_slot_t *e, CUstream s, uint64_t host_ns)
{
    if (!e)
        return;
    e->host_ns = host_ns;
    if (ASH_CU(cuEventRecord(e->b, s)) == CUDA_SUCCESS)
        R.head++;
}

/* ---- the collectives the engine issues: timed and counted ---- */

static void count_coll(const ash_policy_rule_t *r, uint64_t t0, uint64_t t1, ev_slot_t *e,
                       CUstream s, size_t payload, size_t wire_bytes)
{
    uint64_t host = t1 - t0;
    R.host_ns += host;
    if (e)
        ev_end(e, s, host);
    else
        R.untimed++;
    R.payload += payload;
    R.wire += wire_bytes;
    rule_stats_t *st = stats_of(r);
    if (st) {
        st->payload += payload;
        st->wire += wire_bytes;
    }
}

static void report_before_collective(const ash_sync_event_t *e)
{
    if (!R.backend)
        R.backend = e->backend;
    R.pending = ev_begin(e->stream); /* the "before" event on the stream, or NULL: untimed */
}

static void report_after_collective(const ash_sync_event_t *e)
{
    ev_slot_t *slot = R.pending;
    R.pending = NULL;
    rule_stats_t *rs = stats_of(e->rule);
    if (e->kind == ASH_EV_BROADCAST) {
        count_coll(e->rule, e->t0_ns, e->t1_ns, slot, e->stream, e->count, e->count);
        R.broadcasts++;
        if (rs)
            rs->broadcasts++;
        return;
    }
    size_t payload = e->count * ash_coll_dtype_size(e->dtype), wb = e->count * ash_coll_dtype_size(e->wire);
    count_coll(e->rule, e->t0_ns, e->t1_ns, slot, e->stream, payload, wb);
    R.allreduces++;
    if (rs)
        rs->allreduces++;
    if (e->fused_buffers > 1) {
        R.fused++;
        if (rs)
            rs->fused++;
    }
    if (e->wire != e->dtype) {
        R.casts++;
        R.cast_elems += 2 * e->count;
        if (rs)
            rs->casts++;
    }
}

/* ---- close and exit ---- */

static uint64_t comm_ns(void) { return R.host_ns - R.host_timed_ns + R.dev_ns; }

static uint64_t wall_ns(void)
{
    return R.wall_frozen ? R.wall_frozen : ash_observe_now_ns() - R.t_start;
}

static uint64_t peak_bytes(void)
{
    uint64_t best = 0;
    for (int d = 0; d < ASH_ALLOC_MAX_DEVICES; d++) {
        uint64_t cur = 0, peak = 0, count = 0;
        if (ash_alloc_stats(d, &cur, &peak, &count) == ASH_ALLOC_OK && peak > best)
            best = peak;
    }
    return best;
}

static void report_close(void)
{
    /* Events still pending are not touched: the application may have destroyed its context
     * (and with it the events) before exit. Their collectives count with their host time. */
    for (; R.tail != R.head; R.tail++)
        R.untimed++;
    R.wall_frozen = ash_observe_now_ns() - R.t_start;
}

static int report_job_words(unsigned long long fp[ASH_COLL_FP_WORDS])
{
    fp[W_WALL] = R.wall_frozen;
    fp[W_COMM] = comm_ns();
    fp[W_COLL] = R.allreduces + R.broadcasts;
    fp[W_WIRE] = R.wire;
    fp[W_PEAK] = peak_bytes();
    fp[W_RANK] = (unsigned long long)ash_world()->rank;
    return 1;
}

static void report_job(const unsigned long long *all, int world)
{
    R.all = all;
    R.world = world;
    R.gathered = 1;
}

static void job_summary(int *slowest, double *slow_s, double *mean_share)
{
    *slowest = 0;
    *slow_s = 0;
    double sum = 0;
    for (int i = 0; i < R.world; i++) {
        const unsigned long long *x = &R.all[i * ASH_COLL_FP_WORDS];
        double wall = (double)x[W_WALL] * 1e-9;
        if (wall > *slow_s) {
            *slow_s = wall;
            *slowest = (int)x[W_RANK];
        }
        sum += x[W_WALL] ? (double)x[W_COMM] / (double)x[W_WALL] : 0;
    }
    *mean_share = R.world ? sum / R.world : 0;
}

static void report_lines(void)
{
    const ash_world_t *w = ash_world();
    double wall = (double)wall_ns() * 1e-9, comm = (double)comm_ns() * 1e-9;
    unsigned long long hits = 0;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < R.nrules[k]; i++)
            hits += R.rules[k][i].hits;
    ash_info("report", "rank %d: wall %.3f s; %llu sync point(s), %llu collective(s) (%llu fused), "
             "%llu bytes on the wire; time in collectives %.3f s = %.1f%% of wall (%s); %llu cast(s); "
             "peak device memory %llu bytes",
             w->rank, wall, hits, R.allreduces + R.broadcasts, R.fused, R.wire, comm,
             wall > 0 ? 100.0 * comm / wall : 0.0,
             R.timed && !R.untimed ? "stream events" : R.timed ? "stream events, some host time"
                                                            : "host time",
             R.casts, (unsigned long long)peak_bytes());
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < R.nrules[k]; i++) {
            const ash_policy_rule_t *r = ash_policy_rule(R.policy, (ash_policy_rule_kind_t)k, i);
            const rule_stats_t *s = &R.rules[k][i];
            ash_info("report", "  %s[%zu] \"%s\": %llu hit(s), %llu collective(s)%s, %llu bytes on "
                     "the wire", k ? "parameters" : "gradients", i, r ? r->at : "?", s->hits,
                     s->allreduces + s->broadcasts, s->fused ? " (fused steps counted)" : "", s->wire);
        }
    if (R.gathered && w->rank == 0) {
        int slowest;
        double slow_s, share;
        job_summary(&slowest, &slow_s, &share);
        ash_info("report", "job: %d rank(s); slowest rank %d (wall %.3f s); mean time in "
                 "communication %.1f%% of wall time", R.world, slowest, slow_s, 100.0 * share);
    }
}

static void report_json(const char *tmpl)
{
    const ash_world_t *w = ash_world();
    char path[4096], esc[1024];
    if (ash_path_for_rank(tmpl, w->rank < 0 ? 0 : w->rank, path, sizeof path) != 0) {
        ash_warn("report", "ACCELSHIM_REPORT path too long; no JSON report");
        return;
    }
    int fd = ash_open_output(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        ash_warn("report", "cannot write the JSON report %s: %s%s", path, strerror(errno),
                 errno == EEXIST ? " (accelshim never overwrites a file or follows a symlink: "
                                   "remove it or pick another name)" : "");
        if (fd >= 0)
            close(fd);
        return;
    }
    double wall = (double)wall_ns() * 1e-9, comm = (double)comm_ns() * 1e-9;
    fprintf(f, "{\n  \"accelshim_report\": 1,\n  \"rank\": %d,\n  \"world_size\": %d,\n"
               "  \"backend\": \"%s\",\n  \"wall_s\": %.6f,\n",
            w->rank, w->size, R.backend ? R.backend : "none", wall);
    fprintf(f, "  \"rules\": [");
    int first = 1;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < R.nrules[k]; i++) {
            const ash_policy_rule_t *r = ash_policy_rule(R.policy, (ash_policy_rule_kind_t)k, i);
            const rule_stats_t *s = &R.rules[k][i];
            fprintf(f, "%s\n    {\"list\": \"%s\", \"index\": %zu, \"at\": \"%s\", \"hits\": %llu, "
                       "\"allreduces\": %llu, \"broadcasts\": %llu, \"fused_allreduces\": %llu, "
                       "\"fused_skipped_launches\": %llu, \"bytes\": %llu, \"wire_bytes\": %llu, "
                       "\"casts\": %llu, \"fuse\": %s%s%s}",
                    first ? "" : ",", k ? "parameters" : "gradients", i,
                    ash_json_escape(r ? r->at : "?", esc, sizeof esc), s->hits, s->allreduces,
                    s->broadcasts, s->fused, s->skipped, s->payload, s->wire, s->casts,
                    r && r->fuse ? "\"" : "", r && r->fuse ? ash_fuse_state_name(r) : "null",
                    r && r->fuse ? "\"" : "");
            first = 0;
        }
    fprintf(f, "%s],\n", first ? "" : "\n  ");
    fprintf(f, "  \"collectives\": {\"allreduces\": %llu, \"broadcasts\": %llu, \"fused\": %llu, "
               "\"bytes\": %llu, \"wire_bytes\": %llu, \"host_s\": %.6f, \"device_s\": %.6f, "
               "\"timed_by_events\": %llu, \"timed_on_host\": %llu, \"comm_s\": %.6f, "
               "\"comm_share\": %.6f},\n",
            R.allreduces, R.broadcasts, R.fused, R.payload, R.wire, (double)R.host_ns * 1e-9,
            (double)R.dev_ns * 1e-9, R.timed, R.untimed, comm, wall > 0 ? comm / wall : 0.0);
    fprintf(f, "  \"casts\": {\"collectives_with_cast\": %llu, \"elements_cast\": %llu},\n",
            R.casts, R.cast_elems);
    fprintf(f, "  \"memory\": [");
    first = 1;
    for (int d = 0; d < ASH_ALLOC_MAX_DEVICES; d++) {
        uint64_t cur = 0, peak = 0, count = 0;
        if (ash_alloc_stats(d, &cur, &peak, &count) != ASH_ALLOC_OK || peak == 0)
            continue;
        fprintf(f, "%s{\"device\": %d, \"peak_bytes\": %llu, \"bytes_at_exit\": %llu, "
                   "\"allocations_at_exit\": %llu}",
                first ? "" : ", ", d, (unsigned long long)peak, (unsigned long long)cur,
                (unsigned long long)count);
        first = 0;
    }
    fprintf(f, "],\n  \"peak_device_bytes\": %llu", (unsigned long long)peak_bytes());
    if (R.gathered && w->rank == 0) {
        int slowest;
        double slow_s, share;
        job_summary(&slowest, &slow_s, &share);
        fprintf(f, ",\n  \"job\": {\"world_size\": %d, \"slowest_rank\": %d, \"slowest_wall_s\": "
                   "%.6f, \"mean_comm_share\": %.6f, \"ranks\": [",
                R.world, slowest, slow_s, share);
        for (int i = 0; i < R.world; i++) {
            const unsigned long long *x = &R.all[i * ASH_COLL_FP_WORDS];
            fprintf(f, "%s{\"rank\": %llu, \"wall_s\": %.6f, \"comm_s\": %.6f, \"collectives\": "
                       "%llu, \"wire_bytes\": %llu, \"peak_device_bytes\": %llu}",
                    i ? ", " : "", x[W_RANK], (double)x[W_WALL] * 1e-9,
                    (double)x[W_COMM] * 1e-9, x[W_COLL], x[W_WIRE], x[W_PEAK]);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n}\n");
    /* complete or absent: a report that did not all reach the disk (full) is removed; the file is
     * this run's own (created with O_EXCL), so removing it takes nothing from anyone */
    int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        (void)unlink(path);
        ash_warn("report", "writing the JSON report %s failed: %s (removed: a report is complete "
                 "or absent)", path, strerror(e));
    }
}

static void report_exit(void)
{
    if (ash_log_enabled(ASH_LOG_INFO) && (R.allreduces || R.broadcasts || R.nrules[0] || R.nrules[1]))
        report_lines();
    const char *tmpl = ash_opt_str(ASH_OPT_REPORT);
    if (tmpl)
        report_json(tmpl);
}

const ash_observer_t ash_report_observer = {
    .name = "report",
    .init = report_init,
    .sync_point = report_sync_point,
    .before_collective = report_before_collective,
    .after_collective = report_after_collective,
    .fused_skip = report_fused_skip,
    .close = report_close,
    .job_words = report_job_words,
    .job = report_job,
    .exit = report_exit,
};
