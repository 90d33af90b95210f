/* ash_sync_watch.h — private to the shim: the collective watchdog used by the sync engine.
 *
 * A collective (or fingerprint exchange) that has not completed timeout_s seconds after it began
 * ends this rank: one report line (rank, rule, sequence number, elapsed time), the communicator
 * aborted (ncclCommAbort on nccl), exit status 4 (ash_fatal_now: no atexit handler may block). Host-side
 * waits are watched between begin and end; on an asynchronous backend (nccl) end() also records
 * an event after the collective on the app's stream, and the watchdog thread polls it, so a peer
 * that never arrives is reported by the ranks waiting for it even when they are blocked in the
 * application's own cuStreamSynchronize. Threading: begin/end/timeout on the launching thread
 * (the engine serialises them); one watchdog thread; stop joins it (the exit sequence, after the
 * communicator closed: every blocking step at exit is bounded by it). Caller: sync.c.
 */
#ifndef ASH_SYNC_WATCH_H
#define ASH_SYNC_WATCH_H

#include "ash_coll.h"
#include "ash_status.h"

/* Start the watchdog thread; a later call attaches c (aborted when the watchdog fires) and async.
 * c may be NULL: the rendezvous that opens the communicator is watched as a host wait. async:
 * also watch completion on the stream. ASH_OK when the thread runs (so it bounds every wait),
 * else ASH_ERR_INTERNAL (logged). */
ash_status_t ash_sync_watch_start(ash_coll_t *c, unsigned timeout_s, int async);
/* A collective described by `what` (copied) with sequence number seq starts on this thread. */
void ash_sync_watch_begin(const char *what, unsigned long long seq);
/* It returned; stream != NULL on success: watch its completion there (async backends only).
 * Every such collective is watched: with 1024 still queued on the streams, end() waits (bounded
 * by the watchdog) for the oldest to complete before it returns. */
void ash_sync_watch_end(CUstream stream);
/* The exit sequence: from here on the communicator is not aborted on a timeout (it is being
 * closed), and a host wait that times out is reported as a blocking exchange at exit, `what`
 * (copied), e.g. "the job summary at exit". End it with ash_sync_watch_end(NULL); begin may
 * follow for the next exchange. */
void ash_sync_watch_exit_begin(const char *what);
/* The collectives themselves timed out (ETIMEDOUT): report and exit like the watchdog. */
_Noreturn void ash_sync_watch_timeout(const char *what, unsigned long long seq);
/* Stop and join the thread (exit sequence, before the communicator closes); idempotent. */
void ash_sync_watch_stop(void);

#endif /* ASH_SYNC_WATCH_H */
