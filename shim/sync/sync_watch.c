/* sync_watch.c — the collective watchdog (see ash_sync_watch.h).
 *
 * State: one host-side "in flight" record (what, seq, start) set between begin and end, and a
 * ring of events recorded after asynchronous collectives, each with its own what/seq/start. The
 * watchdog thread wakes every 100 ms, pops completed events (cuEventQuery) and fires when the
 * host record or the oldest pending event is older than timeout_s. Invariant: every collective
 * that end() is given a stream for is in the ring until it completes: end() first pops what has
 * completed, and when WATCH_RING collectives are still pending it waits for the oldest (which
 * the thread watches, so the wait is bounded) — never a collective left unwatched. Fire runs
 * once (atomic flag); a second firer waits for the first one's _exit. Threading: W.lock guards
 * all state; no collective runs under it and end() never sleeps holding it. Callers: sync.c.
 * Must not: run a collective under W.lock or sleep holding it; leave a collective it was given a
 * stream for unwatched; fire twice (a second firer waits for the first one's _exit).
 */
#include "ash_sync_watch.h"

#include "ash_driver.h"
#include "ash_fatal.h"
#include "ash_arrive.h"
#include "ash_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* collectives a rank may queue ahead of its stream's completion before end() waits (CUDA's own
 * launch queue holds about as many) */
#define WATCH_RING 1024
#define WATCH_WHAT 256

typedef struct {
    CUevent ev;                 /* created once, reused */
    CUcontext ctx;
    char what[WATCH_WHAT];
    unsigned long long seq;
    double start;
} watch_slot_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t thread;
    int started, stop, async;
    ash_coll_t *coll;
    unsigned timeout_s;
    int busy;                   /* host-side collective in flight */
    int at_exit;                /* the exit sequence's exchanges: fire says so */
    char what[WATCH_WHAT];
    unsigned long long seq;
    double start;
    watch_slot_t ring[WATCH_RING];
    unsigned head, tail;        /* pending = [head, tail) */
    CUcontext thread_ctx;       /* context current on the watchdog thread */
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static _Atomic int watch_fired;

static double watch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static _Noreturn void watch_fire(const char *what, unsigned long long seq, double elapsed,
                                 const char *where)
{
    if (atomic_exchange(&watch_fired, 1))
        for (;;)
            pause(); /* the first firer is exiting */
    if (!where) /* the exit sequence's exchange (ash_sync_watch_exit_begin) */
        ash_error("watchdog", "at exit: %s has not completed after %.1f s (timeout %u s): a peer "
                  "rank has not reached the end of the job or is stuck in it; exiting with status %d",
                  what, elapsed, W.timeout_s, ASH_EXIT_TIMEOUT);
    else
        ash_error("watchdog", "%s, sequence number %llu, has not completed after %.1f s (timeout "
                  "%u s, %s): a peer rank is missing, stuck, or issued a different collective; "
                  "aborting the communicator and exiting with status %d", what, seq, elapsed,
                  W.timeout_s, where, ASH_EXIT_TIMEOUT);
    if (where)
        ash_arrive_report(seq); /* arrive: name the ranks that did not arrive */
    ash_coll_abort(W.coll);
    ash_fatal_now_reported(ASH_EXIT_TIMEOUT); /* off the sync thread: _exit (ash_fatal.h) */
}

/* Pop completed events; fire if the oldest pending one is overdue. Called with W.lock held, on
 * the watchdog thread (it makes each event's context current there). */
static void watch_poll_events(double now)
{
    while (W.head != W.tail) {
        watch_slot_t *sl = &W.ring[W.head % WATCH_RING];
        if (sl->ctx != W.thread_ctx) {
            if (ASH_CU(cuCtxSetCurrent(sl->ctx)) != CUDA_SUCCESS)
                return;
            W.thread_ctx = sl->ctx;
        }
        CUresult q = ASH_CU(cuEventQuery(sl->ev));
        if (q != CUDA_ERROR_NOT_READY) { /* done, or an error the app will see itself */
            W.head++;
            continue;
        }
        if (now - sl->start > (double)W.timeout_s)
            watch_fire(sl->what, sl->seq, now - sl->start, "queued on the stream");
        return;
    }
}

static void *watch_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.lock);
    while (!W.stop) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&W.cv, &W.lock, &t);
        if (W.stop)
            break;
        double now = watch_now();
        if (W.busy && now - W.start > (double)W.timeout_s)
            watch_fire(W.what, W.seq, now - W.start, W.at_exit ? NULL : "waiting on the host");
        if (W.async)
            watch_poll_events(now);
    }
    pthread_mutex_unlock(&W.lock);
    return NULL;
}

ash_status_t ash_sync_watch_start(ash_coll_t *c, unsigned timeout_s,
                                  int async)
{
    pthread_mutex_lock(&W.lock);
    if (timeout_s > 0 && !W.stop) { /* a second call attaches the communicator once it is open */
        W.coll = c;
        W.timeout_s = timeout_s;
        W.async = async && ASH_CU_HAS(cuEventCreate) && ASH_CU_HAS(cuEventRecord) &&
                  ASH_CU_HAS(cuEventQuery) && ASH_CU_HAS(cuCtxSetCurrent);
        if (!W.started) {
            if (pthread_create(&W.thread, NULL, watch_main, NULL) == 0)
                W.started = 1;
            else
                ash_warn("watchdog", "cannot start the watchdog thread: collectives are not watched");
        }
        if (W.started && c)
            ash_info("watchdog", "collectives time out after %u s%s", timeout_s,
                     W.async ? " (host waits and stream completion)" : " (host waits)");
    }
    int started = W.started;
    pthread_mutex_unlock(&W.lock);
    return started ? ASH_OK : ASH_ERR_INTERNAL;
}

void ash_sync_watch_begin(const char *what, unsigned long long seq)
{
    ash_arrive_mark(what, seq); /* arrive: this rank's progress, for its peers' watchdogs */
    if (!W.started)
        return;
    pthread_mutex_lock(&W.lock);
    snprintf(W.what, sizeof W.what, "%s", what);
    W.seq = seq;
    W.start = watch_now();
    W.busy = 1;
    pthread_mutex_unlock(&W.lock);
}

/* On the launching thread (context ctx current): pop the completed events of ctx from the head.
 * Called with W.lock held. */
static void watch_reap(CUcontext ctx)
{
    while (W.head != W.tail) {
        watch_slot_t *sl = &W.ring[W.head % WATCH_RING];
        if (sl->ctx != ctx || ASH_CU(cuEventQuery(sl->ev)) == CUDA_ERROR_NOT_READY)
            return; /* another context's: the watchdog thread pops it */
        W.head++;
    }
}

void ash_sync_watch_end(CUstream stream)
{
    if (!W.started)
        return;
    pthread_mutex_lock(&W.lock);
    W.busy = 0;
    if (stream && W.async) {
        CUcontext ctx = NULL;
        if (ASH_CU(cuCtxGetCurrent(&ctx)) != CUDA_SUCCESS || !ctx)
            goto out;
        watch_reap(ctx);
        while (W.tail - W.head >= WATCH_RING) {
            /* WATCH_RING collectives still queued: wait for the oldest to complete. The thread
             * watches it, so this ends (or the job does, with the watchdog's report). */
            pthread_mutex_unlock(&W.lock);
            nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
            pthread_mutex_lock(&W.lock);
            watch_reap(ctx);
        }
        watch_slot_t *sl = &W.ring[W.tail % WATCH_RING];
        if (sl->ev && sl->ctx != ctx) { /* the slot's event belongs to another context */
            if (ASH_CU_HAS(cuEventDestroy_v2))
                ASH_CU(cuEventDestroy_v2(sl->ev));
            sl->ev = NULL;
        }
        if (!sl->ev && ASH_CU(cuEventCreate(&sl->ev, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS) {
            sl->ev = NULL;
            goto out;
        }
        sl->ctx = ctx;
        if (ASH_CU(cuEventRecord(sl->ev, stream)) != CUDA_SUCCESS)
            goto out;
        memcpy(sl->what, W.what, sizeof sl->what);
        sl->seq = W.seq;
        sl->start = W.start;
        W.tail++;
    }
out:
    pthread_mutex_unlock(&W.lock);
}

void ash_sync_watch_exit_begin(const char *what)
{
    if (!W.started)
        return;
    pthread_mutex_lock(&W.lock);
    W.at_exit = 1;
    W.coll = NULL; /* the communicator is being closed: nothing to abort, the process just ends */
    W.async = 0;   /* the program may have destroyed its contexts: no more event queries; what is
                    * still queued is waited for by the close, itself watched as a host wait */
    W.head = W.tail;
    pthread_mutex_unlock(&W.lock);
    ash_sync_watch_begin(what, 0);
}

_Noreturn void ash_sync_watch_timeout(const char *what, unsigned long long seq)
{
    double elapsed = W.busy ? watch_now() - W.start : (double)W.timeout_s;
    watch_fire(what, seq, elapsed, "waiting on the host");
}

void ash_sync_watch_stop(void)
{
    pthread_mutex_lock(&W.lock);
    int join = W.started && !W.stop;
    W.stop = 1;
    pthread_cond_broadcast(&W.cv);
    pthread_mutex_unlock(&W.lock);
    if (join)
        pthread_join(W.thread, NULL);
}
