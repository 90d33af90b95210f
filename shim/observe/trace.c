/* trace.c — the timeline: Chrome trace event JSON, streamed (see ash_trace.h).
 *
 * Format: the JSON Array Format of the Trace Event Format (Google, "Trace Event Format",
 * https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU, linked from
 * catapult/docs/trace-event-format.md): "[" then one event object per line, each followed by
 * ",". That document allows the closing "]" to be missing so that a trace written by a program
 * that ends abruptly still loads; we write it at exit (after a last metadata event, so the
 * array is strict JSON), and accelerate-run's merger also accepts a file cut short.
 * Invariant: memory is bounded (one 64 KiB buffer); the file is created new (O_EXCL|O_NOFOLLOW).
 * Threading: one mutex around the buffer; timestamps are CLOCK_MONOTONIC shifted by a fixed
 * offset to the epoch (ranks on one host share the clock). Callers: the sync engine's events
 * (ash_trace_observer), intercept/ (launches, copies), report.c (clock, JSON escaping).
 * Must not: allocate beyond its one 64 KiB buffer; open an existing file (created
 * O_EXCL|O_NOFOLLOW); issue work or call the engine (it is told of events).
 */
#include "ash_trace.h"
#include "ash_world.h"

#include "ash_file.h"
#include "ash_log.h"
#include "ash_options.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TRACE_BUF 65536
#define TRACE_EVENT_MAX 2048

int ash_trace_launches_on;

static struct {
    pthread_mutex_t lock;
    int fd;             /* -1: not tracing */
    int rank;
    int64_t epoch_offset_ns; /* realtime - monotonic, at init */
    size_t len;
    char buf[TRACE_BUF];
} T = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static __thread long trace_tid;

uint64_t ash_trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


static void trace_write_all(const char *p, size_t n)
{
    while (n > 0 && T.fd >= 0) {
        ssize_t w = write(T.fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ash_warn("trace", "writing the trace failed (%s); tracing stops", strerror(errno));
            close(T.fd);
            T.fd = -1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void trace_flush_locked(void)
{
    trace_write_all(T.buf, T.len);
    T.len = 0;
}

static void trace_append(const char *ev, size_t n)
{
    pthread_mutex_lock(&T.lock);
    if (T.fd >= 0) {
        if (T.len + n > sizeof T.buf)
            trace_flush_locked();
        if (n > sizeof T.buf)
            trace_write_all(ev, n);
        else {
            memcpy(T.buf + T.len, ev, n);
            T.len += n;
        }
    }
    pthread_mutex_unlock(&T.lock);
}

/* "ts" in microseconds since the epoch, with nanosecond digits. */
static int trace_ts(char *out, size_t cap, uint64_t mono_ns)
{
    uint64_t t = mono_ns + (uint64_t)T.epoch_offset_ns;
    return snprintf(out, cap, "%llu.%03llu", (unsigned long long)(t / 1000),
                    (unsigned long long)(t % 1000));
}

/* This thread's id; on its first event a thread_name record names its track: "main" for the
 * program's main thread, "thread TID" for another. Never called with T.lock held. */
static long trace_thread(void)
{
    if (trace_tid == 0) {
        trace_tid = (long)syscall(SYS_gettid);
        char ev[160], name[32];
        if (trace_tid == (long)getpid())
            snprintf(name, sizeof name, "main");
        else
            snprintf(name, sizeof name, "thread %ld", trace_tid);
        int n = snprintf(ev, sizeof ev, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                         "\"tid\":%ld,\"args\":{\"name\":\"%s\"}},\n", T.rank, trace_tid, name);
        if (n > 0 && (size_t)n < sizeof ev)
            trace_append(ev, (size_t)n);
    }
    return trace_tid;
}



void ash_trace_init(int rank)
{
    const char *tmpl = ash_opt_str(ASH_OPT_TRACE); /* debug.trace merged in (sync.c) */
    long lo = 0;
    (void)ash_opt_int(ASH_OPT_TRACE_LAUNCHES, &lo);
    if (!tmpl) {
        if (lo == 1)
            ash_warn("trace", "ACCELSHIM_TRACE_LAUNCHES=1 without a trace file (ACCELSHIM_TRACE or "
                     "debug.trace): nothing is traced");
        return;
    }
    char path[4096];
    if (ash_path_for_rank(tmpl, rank < 0 ? 0 : rank, path, sizeof path) != 0) {
        ash_warn("trace", "trace path too long; no trace");
        return;
    }
    int fd = ash_open_output(path);
    if (fd < 0) {
        ash_warn("trace", "cannot create the trace %s: %s%s; no trace", path, strerror(errno),
                 errno == EEXIST ? " (accelshim never overwrites a file or follows a symlink: "
                                   "remove it or pick another name)" : "");
        return;
    }
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t mono = ash_trace_now_ns();
    T.epoch_offset_ns = (int64_t)((uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec) -
                        (int64_t)mono;
    T.rank = rank < 0 ? 0 : rank;
    char head[512];
    int n = snprintf(head, sizeof head,
                     "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                     "\"args\":{\"name\":\"rank %d\"}},\n"
                     "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                     "\"args\":{\"sort_index\":%d}},\n",
                     T.rank, T.rank, T.rank, T.rank);
    pthread_mutex_lock(&T.lock);
    T.fd = fd;
    T.len = 0;
    trace_write_all(head, (size_t)n); /* on disk at once: even a crash leaves a loadable file */
    pthread_mutex_unlock(&T.lock);
    ash_trace_launches_on = lo == 1;
    ash_info("trace", "tracing to %s%s", path, ash_trace_launches_on ? " (with launches and copies)" : "");
}

int ash_trace_enabled(void) { return T.fd >= 0; }

void ash_trace_complete(const char *cat, const char *name, uint64_t t0_ns, uint64_t t1_ns,
                        const char *args_json)
{
    if (T.fd < 0)
        return;
    char ev[TRACE_EVENT_MAX], esc[600], ts[32];
    uint64_t d = t1_ns > t0_ns ? t1_ns - t0_ns : 0;
    trace_ts(ts, sizeof ts, t0_ns);
    int n = snprintf(ev, sizeof ev,
                     "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%s,\"dur\":%llu.%03llu,"
                     "\"pid\":%d,\"tid\":%ld,\"args\":{%s}},\n",
                     ash_json_escape(name, esc, sizeof esc), cat, ts,
                     (unsigned long long)(d / 1000), (unsigned long long)(d % 1000), T.rank,
                     trace_thread(), args_json ? args_json : "");
    if (n > 0 && (size_t)n < sizeof ev)
        trace_append(ev, (size_t)n);
}

void ash_trace_instant(const char *cat, const char *name, const char *args_json)
{
    if (T.fd < 0)
        return;
    char ev[TRACE_EVENT_MAX], esc[600], ts[32];
    trace_ts(ts, sizeof ts, ash_trace_now_ns());
    int n = snprintf(ev, sizeof ev,
                     "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%s,"
                     "\"pid\":%d,\"tid\":%ld,\"args\":{%s}},\n",
                     ash_json_escape(name, esc, sizeof esc), cat, ts, T.rank, trace_thread(),
                     args_json ? args_json : "");
    if (n > 0 && (size_t)n < sizeof ev)
        trace_append(ev, (size_t)n);
}

void ash_trace_launch(const char *kernel, uint64_t t0_ns, int result)
{
    if (!ash_trace_launches_on)
        return; /* closed at exit */
    char args[64];
    snprintf(args, sizeof args, "\"result\":%d", result);
    ash_trace_complete("launch", kernel ? kernel : "?", t0_ns, ash_trace_now_ns(), args);
}

void ash_trace_copy(const char *api, size_t bytes, uint64_t t0_ns, int result)
{
    if (!ash_trace_launches_on)
        return;
    char args[96];
    snprintf(args, sizeof args, "\"bytes\":%zu,\"result\":%d", bytes, result);
    ash_trace_complete("memcpy", api, t0_ns, ash_trace_now_ns(), args);
}

void ash_trace_flush(void)
{
    if (T.fd < 0)
        return;
    pthread_mutex_lock(&T.lock);
    trace_flush_locked();
    pthread_mutex_unlock(&T.lock);
}

void ash_trace_close(void)
{
    pthread_mutex_lock(&T.lock);
    if (T.fd >= 0) {
        /* the last record: metadata, no trailing comma (each thread was named at its first event) */
        char tail[256];
        int n = snprintf(tail, sizeof tail,
                         "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                         "\"args\":{\"labels\":\"accelshim rank %d\"}}\n]\n",
                         T.rank, T.rank);
        trace_flush_locked();
        trace_write_all(tail, (size_t)n);
        if (T.fd >= 0)
            close(T.fd);
        T.fd = -1;
    }
    ash_trace_launches_on = 0;
    pthread_mutex_unlock(&T.lock);
}

/* ---- the observer: the engine's sync points and collectives on the timeline ---- */

static const char *trace_list(const ash_policy_rule_t *r)
{
    return r->kind == ASH_POLICY_RULE_GRADIENT ? "gradients" : "parameters";
}

static const char *trace_kernel(const ash_sync_event_t *e)
{
    return e->kernel && e->kernel->demangled ? e->kernel->demangled : "?";
}

static void trace_obs_init(void) { ash_trace_init(ash_world()->rank); }

static int trace_wants_launches(void) { return ash_trace_launches_on; }

static void trace_sync_point(const ash_sync_event_t *e)
{
    if (!ash_trace_enabled())
        return;
    char args[700], esc[512], name[600];
    snprintf(args, sizeof args, "\"rule\":\"%s[%u]\",\"at\":\"%s\"", trace_list(e->rule),
             e->rule->index, ash_json_escape(e->rule->at, esc, sizeof esc));
    snprintf(name, sizeof name, "sync %s", trace_kernel(e));
    ash_trace_instant("sync", name, args);
}

static void trace_fused_skip(const ash_sync_event_t *e)
{
    if (!ash_trace_enabled())
        return;
    char name[600];
    snprintf(name, sizeof name, "fused: %s already reduced", trace_kernel(e));
    ash_trace_instant("sync", name, NULL);
}

static void trace_before_collective(const ash_sync_event_t *e)
{
    if (!ash_trace_enabled() || e->kind != ASH_EV_ALLREDUCE || e->wire == e->dtype)
        return;
    char name[64];
    snprintf(name, sizeof name, "cast %s->%s", ash_coll_dtype_name(e->dtype), ash_coll_dtype_name(e->wire));
    ash_trace_instant("cast", name, NULL);
}

static void trace_after_collective(const ash_sync_event_t *e)
{
    if (!ash_trace_enabled())
        return;
    char args[900], esc[512], name[64];
    const ash_policy_rule_t *r = e->rule;
    if (e->kind == ASH_EV_BROADCAST) {
        snprintf(args, sizeof args,
                 "\"rule\":\"%s[%u]\",\"kernel\":\"%s\",\"bytes\":%zu,\"root\":%d,"
                 "\"backend\":\"%s\",\"status\":\"%s\"",
                 trace_list(r), r->index, ash_json_escape(trace_kernel(e), esc, sizeof esc), e->count,
                 e->root, e->backend ? e->backend : "none", ash_coll_status_name(e->status));
        ash_trace_complete("collective", "broadcast", e->t0_ns, e->t1_ns, args);
        ash_trace_flush();
        return;
    }
    size_t payload = e->count * ash_coll_dtype_size(e->dtype), wb = e->count * ash_coll_dtype_size(e->wire);
    snprintf(args, sizeof args,
             "\"rule\":\"%s[%u]\",\"kernel\":\"%s\",\"count\":%zu,\"dtype\":\"%s\","
             "\"wire\":\"%s\",\"bytes\":%zu,\"wire_bytes\":%zu,\"fused_buffers\":%u,"
             "\"backend\":\"%s\",\"status\":\"%s\"",
             trace_list(r), r->index, ash_json_escape(trace_kernel(e), esc, sizeof esc), e->count,
             ash_coll_dtype_name(e->dtype), ash_coll_dtype_name(e->wire), payload, wb, e->fused_buffers,
             e->backend ? e->backend : "none", ash_coll_status_name(e->status));
    if (e->fused_buffers > 1)
        snprintf(name, sizeof name, "allreduce (fused %u)", e->fused_buffers);
    else
        snprintf(name, sizeof name, "allreduce");
    ash_trace_complete("collective", name, e->t0_ns, e->t1_ns, args);
    if (e->wire != e->dtype) {
        snprintf(name, sizeof name, "cast %s->%s", ash_coll_dtype_name(e->wire), ash_coll_dtype_name(e->dtype));
        ash_trace_instant("cast", name, NULL);
    }
    ash_trace_flush(); /* after each collective: a crash loses at most the launches since */
}

const ash_observer_t ash_trace_observer = {
    .name = "trace",
    .init = trace_obs_init,
    .sync_point = trace_sync_point,
    .before_collective = trace_before_collective,
    .after_collective = trace_after_collective,
    .fused_skip = trace_fused_skip,
    .wants_launches = trace_wants_launches,
    .launch = ash_trace_launch,
    .copy = ash_trace_copy,
    .exit = ash_trace_close,
};
