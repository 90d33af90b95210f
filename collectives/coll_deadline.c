/* coll_deadline.c — a deadline for a blocking call the collectives cannot poll: the NCCL
 * rendezvous (ncclCommInitRank waits for every rank; real NCCL has no limit of its own). A guard
 * thread waits for ash_coll__deadline_stop; if timeout_s passes first, it says that the ranks did
 * not all arrive (which rank is missing is unknown to a waiting rank: NCCL does not tell) and
 * ends the process with status 4, the watchdog's status for a collective that timed out.
 * Invariant: with timeout_s <= 0, or if the thread cannot start, nothing is guarded (the call
 * blocks as before). Threading: start and stop from the opening thread; the guard owns nothing
 * else. Callers: coll_nccl.c (the communicator's init).
 * Must not: guard anything with timeout_s <= 0 or when its thread could not start; own anything but
 * the guard thread; name a missing rank (a waiting rank cannot know it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ash_coll_int.h"

#define ASH_COLL_DEADLINE_EXIT 4 /* the shim's watchdog status (ASH_SYNC_EXIT_TIMEOUT) */

struct ash_coll_deadline {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int done;
    const ash_coll_t *c;
    const char *what;
};

static void *ash_coll__deadline_main(void *arg)
{
    ash_coll_deadline_t *d = arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)d->c->timeout_s;
    pthread_mutex_lock(&d->lock);
    int r = 0;
    while (!d->done && r != ETIMEDOUT)
        r = pthread_cond_timedwait(&d->cv, &d->lock, &until);
    int done = d->done;
    pthread_mutex_unlock(&d->lock);
    if (!done) {
        ash_coll__log(d->c, ASH_COLL_LOG_ERROR,
                      "collectives: rendezvous (%s): the ranks did not all arrive within %.0f s "
                      "(debug.timeout_s; rank %d of %d waited): a peer was not started, ended "
                      "before it, or uses another address or world size; exiting with status %d",
                      d->what, d->c->timeout_s, d->c->rank, d->c->world, ASH_COLL_DEADLINE_EXIT);
        _exit(ASH_COLL_DEADLINE_EXIT);
    }
    return NULL;
}

ash_coll_deadline_t *ash_coll__deadline_start(const ash_coll_t *c, const char *what)
{
    if (c->timeout_s <= 0)
        return NULL;
    ash_coll_deadline_t *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->c = c;
    d->what = what;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->thread, NULL, ash_coll__deadline_main, d) != 0) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: no deadline for the rendezvous (%s): "
                      "thread not started", what);
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
    }
    return d;
}

void ash_coll__deadline_stop(ash_coll_deadline_t *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
