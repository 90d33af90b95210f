/* ash_observer.h — private to the shim: the one interface between the sync engine and the
 * modules that watch it (the exit report, the trace, the record).
 *
 * The engine owns the sync point (resolve -> check -> collective -> done) and issues every
 * collective itself; it tells the observers what happened through the events below, and an
 * observer never issues work of its own on the engine's behalf (it may read a buffer it was
 * shown, through the real-driver table). An observer is one file with one ash_observer_t (ops
 * filled with designated initialisers; a NULL op = not interested) and one line in the registry
 * (shim/observe/observers.c); events reach the observers in registry order. The engine calls the
 * ash_observe_* dispatchers (shim/sync/events.c) and nothing else of an observer; intercept/ reports
 * the launches it sees the same way (ash_observe_launch, ash_observe_copy).
 * Threading: every event but init and the exit steps comes with the engine's lock held, on the
 * launching thread (one at a time); init during shim init; the exit ops from the exit sequence.
 */
#ifndef ASH_OBSERVER_H
#define ASH_OBSERVER_H

#include "ash_coll.h"
#include "ash_policy.h"
#include "ash_sync.h"

#include <cuda.h>
#include <stdint.h>

typedef enum { ASH_EV_ALLREDUCE, ASH_EV_BROADCAST } ash_ev_kind_t;

/* What an event is about; only the fields its op documents are meaningful. */
typedef struct ash_sync_event {
    const ash_kernel_info_t *kernel; /* the launch that reached the sync point */
    const ash_policy_rule_t *rule;
    CUstream stream;                 /* the launch's stream: everything is ordered on it */
    CUdeviceptr ptr;                 /* buffer: the rule's; collective: what is reduced (a fused
                                      * span or the fusion buffer) or broadcast */
    size_t count;                    /* elements (allreduce, buffers); bytes for a broadcast */
    unsigned long long seq;          /* buffers: the rule's sync-point number (0, 1, ...) */
    ash_ev_kind_t kind;              /* collectives */
    ash_coll_dtype_t dtype, wire;    /* allreduce: element type and wire type (never SAME) */
    unsigned fused_buffers;          /* allreduce: launches' buffers it covers (1: one launch) */
    int root;                        /* broadcast */
    const char *backend;             /* collectives: the backend's name */
    ash_coll_status_t status;        /* after_collective */
    uint64_t t0_ns, t1_ns;           /* after_collective: host time of the call (trace clock) */
    unsigned long long nan, inf;     /* nan_found */
} ash_sync_event_t;

typedef struct ash_observer {
    const char *name;
    /* shim init, after the policy loaded and the options merged */
    void (*init)(void);
    /* a launch matched rule e->rule (kernel, rule, stream); N ranks only */
    void (*sync_point)(const ash_sync_event_t *e);
    /* 1 when this observer wants buffer events with one rank (asked once per sync point) */
    int (*wants_buffers)(void);
    /* the rule's buffer, resolved, before its collective: what THIS rank computed */
    void (*before_buffer)(const ash_sync_event_t *e);
    /* the check found NaN/Inf in that buffer (e->nan, e->inf); the job stops right after */
    void (*nan_found)(const ash_sync_event_t *e);
    /* a collective is about to be issued on e->stream, and it returned (e->status, times) */
    void (*before_collective)(const ash_sync_event_t *e);
    void (*after_collective)(const ash_sync_event_t *e);
    /* a fused rule's launch whose buffer the step's fused collective already reduced */
    void (*fused_skip)(const ash_sync_event_t *e);
    /* the buffer after the collective (with one rank: unchanged): what every rank holds */
    void (*after_buffer)(const ash_sync_event_t *e);
    /* launch seen: intercept's slow path reports every kernel launch and memcpy, only while
     * ash_observe_launches_on (an observer's wants_launches said 1 at init); any thread */
    int (*wants_launches)(void);
    void (*launch)(const char *kernel, uint64_t t0_ns, int result);
    void (*copy)(const char *api, size_t bytes, uint64_t t0_ns, int result);
    /* the engine closes its communicator (exit); no CUDA call may block here */
    void (*close)(void);
    /* the job's figures: fill words (1: take part); after the engine gathered every rank's
     * words (one small host collective it issues), job() gets them in rank order */
    int (*job_words)(unsigned long long words[ASH_COLL_FP_WORDS]);
    void (*job)(const unsigned long long *all, int world);
    /* exit sequence: final_values before the communicator closes, exit after it */
    void (*final_values)(void);
    void (*exit)(void);
} ash_observer_t;

/* The registry (shim/observe/observers.c), NULL-terminated. */
extern const ash_observer_t *const ash_observers[];

/* ---- the engine's side (shim/sync/events.c) ---- */
void ash_observe_init(void); /* every observer's init; registers the exit ops with the lifecycle */
int ash_observe_wants_buffers(void);
void ash_observe_sync_point(const ash_sync_event_t *e);
void ash_observe_before_buffer(const ash_sync_event_t *e);
void ash_observe_nan_found(const ash_sync_event_t *e);
void ash_observe_before_collective(const ash_sync_event_t *e);
void ash_observe_after_collective(const ash_sync_event_t *e);
void ash_observe_fused_skip(const ash_sync_event_t *e);
void ash_observe_after_buffer(const ash_sync_event_t *e);
void ash_observe_close(void);
/* the observer that takes part in the job's figures, or NULL */
const ash_observer_t *ash_observe_job_owner(void);

/* ---- intercept's side: launch seen ---- */
/* Nonzero when some observer wants every launch and copy; read (relaxed) by intercept/'s slow
 * paths and the generated memcpy hooks behind one predictable branch. Set once at init. */
extern int ash_observe_launches_on;
uint64_t ash_observe_now_ns(void); /* CLOCK_MONOTONIC: the clock of every event's times */
void ash_observe_launch(const char *kernel, uint64_t t0_ns, int result);
void ash_observe_copy(const char *api, size_t bytes, uint64_t t0_ns, int result);

#endif /* ASH_OBSERVER_H */
