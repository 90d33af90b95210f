/* ash_coll_int.h — private to collectives/: the communicator struct, backend tables, helpers.
 *
 * What: state shared by coll.c (registry, open/close, MPI bootstrap, logging, waits) and the
 * backends coll_mpi.c / coll_nccl.c. Invariant: every CUDA call goes through c->drv (the real
 * driver); every MPI collective runs on c->comm (a private dup) and completes through
 * ash_coll__mpi_wait (timeout). Threading: see ash_coll.h (one thread per ash_coll_t at a time).
 */
#ifndef ASH_COLL_INT_H
#define ASH_COLL_INT_H

#include <stdint.h>

#include "ash_coll_mpi.h"
#include "ash_coll.h"

typedef struct ash_coll_meet ash_coll_meet_t;

struct ash_coll {
    const ash_coll_ops_t *ops;
    const ash_coll_driver_t *drv; /* the caller's real-driver table (not a copy) */
    int rank, world, local_rank;
    double timeout_s;
    void (*log)(int level, const char *msg);
    const char *nccl_library;
    size_t staging_bytes;   /* mpi backend: bytes of pinned staging (all-reduce: two slots of <= half) */
    MPI_Comm comm;          /* private dup of the caller's communicator; ASH_COLL_NO_COMM if world 1 */
    int mpi_acquired;       /* ash_coll__mpi_acquire succeeded (release owed) */
    int no_mpi;             /* world > 1 without MPI: NCCL bootstrap (config no_mpi) */
    int have_comm_id;       /* no_mpi: the caller saw NCCL_COMM_ID set */
    int broken;             /* a collective failed mid-way: later calls answer ESTATE */
    ash_coll_meet_t *meet;  /* no_mpi: the exit meeting (coll_meet.c); NULL when there is none */
    char job_id[65];        /* no_mpi: this job's identity ("" none), checked at the rendezvous */
    uint64_t job_hash;      /* FNV-1a of the whole job id (0x0 never: an unset id hashes too) */
    char why[384];          /* why the last backend init failed (for the fallback warning) */
    void *impl;             /* backend state */
};

extern const ash_coll_ops_t ash_coll_mpi_ops;
extern const ash_coll_ops_t ash_coll_nccl_ops;

/* no_mpi mode: every rank's `bytes` at host `send` into host `all` (world * bytes), rank order,
 * through ncclAllGather on the legacy stream (the caller's context must be current). */
ash_coll_status_t ash_coll__nccl_allgather_host(ash_coll_t *c, const void *send, size_t bytes, void *all);

/* coll_meet.c: the exit meeting of no_mpi ranks, a TCP star at rank 0 (no CUDA, no NCCL).
 * The card travels from rank 0 to all by one broadcast at open: port 0 means no meeting. */
#define ASH_COLL_MEET_MAGIC 0x41534d31u /* "ASM1" */
typedef struct ash_coll_meet_card {
    uint32_t magic, port;   /* rank 0's listening port (host order) */
    uint32_t index, pad;    /* which of NCCL_COMM_ID's host addresses it is bound to */
    uint64_t token;         /* said back by each rank at exit (getrandom): strangers are refused */
} ash_coll_meet_card_t;
/* rank 0: listen on an ephemeral port of NCCL_COMM_ID's host; card->port 0 when it cannot */
void ash_coll__meet_listen(ash_coll_t *c, const char *comm_id, ash_coll_meet_card_t *card);
/* every rank, with rank 0's card: keep where to meet (a bad card: no meeting, rank 0's closed) */
void ash_coll__meet_join(ash_coll_t *c, const char *comm_id, const ash_coll_meet_card_t *card);
/* ash_coll_arrive without MPI: OK, or ETIMEDOUT with absent[] filled; no meeting: OK. When
 * every rank came, the connections stay open for the exchanges below. */
ash_coll_status_t ash_coll__meet_arrive(ash_coll_t *c, double timeout_s, unsigned char *absent);
/* After the meeting: every rank's `count` words into `all` (world * count, rank order) over the
 * meeting's connections, bounded like the meeting; `what` names the exchange (every rank must be
 * in the same one). ESTATE when the ranks did not meet over TCP; EPEER / ETIMEDOUT when a rank
 * left, was in another exchange or was late (the star is closed: later exchanges ESTATE). */
ash_coll_status_t ash_coll__meet_allgather(ash_coll_t *c, const char *what,
                                           const unsigned long long *words, size_t count,
                                           unsigned long long *all);
void ash_coll__meet_close(ash_coll_t *c);

/* explicit "unsupported" slots for backends that lack an operation */
ash_coll_status_t ash_coll__unsupported_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                                  ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                                  ash_coll_redop_t op, CUstream stream);
ash_coll_status_t ash_coll__unsupported_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes,
                                                  int root, CUstream stream);
ash_coll_status_t ash_coll__unsupported_barrier(ash_coll_t *c);
/* abort for backends with nothing to abort (mpi: the caller exits; MPI has no safe local abort) */
void ash_coll__abort_nothing(ash_coll_t *c);
/* host barrier on c->comm (both backends); world 1: no-op */
ash_coll_status_t ash_coll__barrier_mpi(ash_coll_t *c);

void ash_coll__log(const ash_coll_t *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* coll_deadline.c: a blocking call (the NCCL rendezvous) bounded by c->timeout_s: past it, one
 * line and _exit(4). start returns NULL when nothing is guarded; stop(NULL) is a no-op. */
typedef struct ash_coll_deadline ash_coll_deadline_t;
ash_coll_deadline_t *ash_coll__deadline_start(const ash_coll_t *c, const char *what);
void ash_coll__deadline_stop(ash_coll_deadline_t *d);

/* MPI: init if needed (world > 1), dup the caller's communicator into c->comm; and back. */
ash_coll_status_t ash_coll__mpi_acquire(ash_coll_t *c, const ash_coll_config_t *cfg);
void ash_coll__mpi_release(ash_coll_t *c);
/* Wait for a nonblocking collective, bounded by c->timeout_s; marks c broken on failure. */
ash_coll_status_t ash_coll__mpi_wait(ash_coll_t *c, MPI_Request *req, const char *what);
ash_coll_status_t ash_coll__mpi_fail(ash_coll_t *c, int rc, const char *call);
ash_coll_status_t ash_coll__cu_fail(const ash_coll_t *c, CUresult r, const char *call);

/* Validate an allreduce request (shared by the backends). */
ash_coll_status_t ash_coll__check_allreduce(const ash_coll_t *c, CUdeviceptr buf, size_t count,
                                            ash_coll_dtype_t dtype, ash_coll_dtype_t *wire,
                                            ash_coll_redop_t op);

/* A driver call: on failure log "call failed: NAME" and return ASH_COLL_ECUDA. */
#define ASH_COLL_CU(c, call)                                                                  \
    do {                                                                                      \
        CUresult ash_coll__r = (call);                                                        \
        if (ash_coll__r != CUDA_SUCCESS)                                                      \
            return ash_coll__cu_fail((c), ash_coll__r, #call);                                \
    } while (0)

/* Propagate a failure, leaving a debug breadcrumb (reads like a backtrace at debug level). */
#define ASH_COLL_CHECK(c, expr)                                                               \
    do {                                                                                      \
        ash_coll_status_t ash_coll__st = (expr);                                              \
        if (ash_coll__st != ASH_COLL_OK) {                                                    \
            ash_coll__log((c), ASH_COLL_LOG_DEBUG, "%s:%d: %s <- %s", __FILE__, __LINE__,     \
                          ash_coll_status_name(ash_coll__st), #expr);                         \
            return ash_coll__st;                                                              \
        }                                                                                     \
    } while (0)

#endif /* ASH_COLL_INT_H */
