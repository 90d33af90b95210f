/* ash_coll.h — accelshim collectives: one ops table, a static registry of backends (mpi, nccl).
 *
 * Folder collectives/ owns: ops table; `mpi` and `nccl` backends; downcast kernels
 *
 * What: all-reduce / broadcast / barrier of device buffers across the ranks of a job, with an
 * optional downcast on the wire (fp32 -> bf16/fp16). Backends: "nccl" (libnccl.so.2, dlopen'ed,
 * unique id broadcast over MPI, or, without an MPI world (config no_mpi), computed by every rank
 * from NCCL_COMM_ID; ops on the caller's stream, no host sync) and "mpi" (host-staged
 * through pinned buffers, all-reduce pipelined over two slots, private MPI communicator). "auto"
 * = nccl if it loads and initialises on every rank, else mpi with one warning saying why.
 * Invariant: depends on nothing of accelshim's; CUDA is reached only through the driver table the
 * caller fills with the REAL driver's entry points (never the shim's hooks). All ranks end with
 * bit-identical results. Threading: one ash_coll_t is used by one thread at a time (the caller
 * serialises); MPI is initialised with MPI_THREAD_MULTIPLE requested. Callers: shim/sync/sync, tests.
 */
#ifndef ASH_COLL_H
#define ASH_COLL_H

#include <stddef.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Linked statically into the shim: symbols stay hidden (the shim's version script exports none). */
#define ASH_COLL_API

/* Results: one X-macro generates the enum and ash_coll_status_name(). */
#define ASH_COLL_STATUS_MAP(X)                                                                  \
    X(ASH_COLL_OK, "ok")                                                                       \
    X(ASH_COLL_EINVAL, "invalid argument")                                                      \
    X(ASH_COLL_EUNSUPPORTED, "unsupported by this backend or dtype/wire combination")          \
    X(ASH_COLL_ENOMEM, "out of memory")                                                         \
    X(ASH_COLL_ECUDA, "CUDA driver call failed")                                                \
    X(ASH_COLL_EMPI, "MPI call failed")                                                         \
    X(ASH_COLL_ENCCL, "NCCL call failed")                                                       \
    X(ASH_COLL_EUNAVAILABLE, "backend not available (library missing or failed to initialise)") \
    X(ASH_COLL_ETIMEDOUT, "collective timed out")                                               \
    X(ASH_COLL_ESTATE, "communicator unusable after an earlier failure")                        \
    X(ASH_COLL_EPEER, "a peer rank left the exchange or answered out of turn")                  \
    X(ASH_COLL_EJOB, "a rank of another job met this one (refused)")

typedef enum ash_coll_status {
#define ASH_COLL__ENUM(sym, text) sym,
    ASH_COLL_STATUS_MAP(ASH_COLL__ENUM)
#undef ASH_COLL__ENUM
    ASH_COLL_STATUS_COUNT
} ash_coll_status_t;

ASH_COLL_API const char *ash_coll_status_name(ash_coll_status_t st);   /* "ASH_COLL_EINVAL" */
ASH_COLL_API const char *ash_coll_status_text(ash_coll_status_t st);   /* "invalid argument" */

/* Element types. ASH_COLL_SAME is valid only as a wire dtype: "send as stored". */
typedef enum ash_coll_dtype {
    ASH_COLL_SAME = -1,
    ASH_COLL_F32 = 0,
    ASH_COLL_F16 = 1,
    ASH_COLL_BF16 = 2,
} ash_coll_dtype_t;

typedef enum ash_coll_redop {
    ASH_COLL_SUM = 0,
    ASH_COLL_MEAN = 1,   /* sum / world size; fp16 wire divides before the sum, others after */
} ash_coll_redop_t;

ASH_COLL_API const char *ash_coll_dtype_name(ash_coll_dtype_t d);    /* "f32", "same", ... */
ASH_COLL_API size_t ash_coll_dtype_size(ash_coll_dtype_t d);         /* 4, 2, 2; 0 if invalid */

/* Log levels passed to the caller's log callback (the caller owns formatting and output). */
enum { ASH_COLL_LOG_ERROR = 0, ASH_COLL_LOG_WARN = 1, ASH_COLL_LOG_INFO = 2, ASH_COLL_LOG_DEBUG = 3 };

/* The REAL CUDA driver's entry points. One list: field = exported symbol name, its cudaTypedefs.h
 * type, required (1) or optional (0). Without the optional event calls every host-staged op ends
 * with a stream synchronise and scratch reuse across streams waits on the host. */
#define ASH_COLL_DRIVER_ENTRIES(X)                                                               \
    X(cuCtxGetCurrent, PFN_cuCtxGetCurrent_v4000, 1)                                           \
    X(cuMemAlloc_v2, PFN_cuMemAlloc_v3020, 1)                                                  \
    X(cuMemFree_v2, PFN_cuMemFree_v3020, 1)                                                    \
    X(cuMemAllocHost_v2, PFN_cuMemAllocHost_v3020, 1)                                          \
    X(cuMemFreeHost, PFN_cuMemFreeHost_v2000, 1)                                               \
    X(cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v3020, 1)                                    \
    X(cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v3020, 1)                                    \
    X(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000, 1)                                   \
    X(cuModuleLoadData, PFN_cuModuleLoadData_v2000, 1)                                         \
    X(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000, 1)                                   \
    X(cuModuleUnload, PFN_cuModuleUnload_v2000, 1)                                             \
    X(cuLaunchKernel, PFN_cuLaunchKernel_v4000, 1)                                             \
    X(cuEventCreate, PFN_cuEventCreate_v2000, 0)                                               \
    X(cuEventRecord, PFN_cuEventRecord_v2000, 0)                                               \
    X(cuEventSynchronize, PFN_cuEventSynchronize_v2000, 0)                                     \
    X(cuEventDestroy_v2, PFN_cuEventDestroy_v4000, 0)                                          \
    X(cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020, 0)                                       \
    X(cuEventQuery, PFN_cuEventQuery_v2000, 0)                                                 \
    X(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, 0)                                           \
    X(cuEventElapsedTime_v2, PFN_cuEventElapsedTime_v12080, 0)                                 \
    X(cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v3020, 0)                                    \
    X(cuGetErrorName, PFN_cuGetErrorName_v6000, 0)                                             \
    X(cuStreamCreate, PFN_cuStreamCreate_v2000, 0)

typedef struct ash_coll_driver {
#define ASH_COLL__DRIVER_FIELD(name, type, required) type name;
    ASH_COLL_DRIVER_ENTRIES(ASH_COLL__DRIVER_FIELD)
#undef ASH_COLL__DRIVER_FIELD
} ash_coll_driver_t;

/* Fill `d` by symbol name through the caller's resolver (e.g. dlsym on the real libcuda.so.1
 * handle); returns the name of the first REQUIRED symbol left NULL, or NULL when complete. */
ASH_COLL_API const char *ash_coll_driver_fill(ash_coll_driver_t *d,
                                              void *(*resolve)(void *ctx, const char *name),
                                              void *ctx);
/* Name of the first required field that is NULL, or NULL when complete. */
ASH_COLL_API const char *ash_coll_driver_missing(const ash_coll_driver_t *d);

typedef struct ash_coll_config {
    int rank;                            /* 0 .. world_size-1 */
    int world_size;                      /* >= 1; 1 = no MPI, no NCCL communication */
    int local_rank;                      /* rank on this node (informational; device is the caller's) */
    const ash_coll_driver_t *driver;     /* required; must outlive the communicator (the shim
                                          * passes its one real-driver table) */
    const void *mpi_comm;                /* pointer to an MPI_Comm to dup; NULL = MPI_COMM_WORLD */
    double timeout_s;                    /* > 0: an MPI wait longer than this fails ETIMEDOUT */
    void (*log)(int level, const char *msg);   /* may be NULL (silent); msg has no newline */
    const char *nccl_library;            /* NULL = "libnccl.so.2" (tests point it elsewhere) */
    size_t staging_bytes;                /* mpi: pinned staging at most (all-reduce: two pipeline
                                          * slots of min(half, 4 MiB)); 0 = 64 MiB (min 64) */
    int no_mpi;                          /* 1: the ranks are not one MPI world (each is its own
                                          * singleton): they meet through NCCL's own bootstrap at
                                          * NCCL_COMM_ID (every rank computes the same id); backend
                                          * nccl only, no fallback; fingerprints and barriers go
                                          * through NCCL too (the exchanges at exit over TCP:
                                          * ash_coll_exit_gather). Ignored for world 1. */
    const char *nccl_comm_id;            /* no_mpi: the NCCL_COMM_ID value the caller read (NCCL
                                          * reads it itself; required, so that no rank makes a
                                          * random id of its own and waits forever) */
    const char *job_id;                  /* no_mpi: this job's identity (ACCELSHIM_JOB_ID; NULL or
                                          * "": none). The ranks swap it right after the
                                          * rendezvous; a rank whose id differs is refused before
                                          * any data (ASH_COLL_EJOB, one line naming both jobs) */
} ash_coll_config_t;

typedef struct ash_coll ash_coll_t;

/* One backend. Every slot is non-NULL (unsupported ones point at an explicit function that
 * returns ASH_COLL_EUNSUPPORTED). init fills c's backend state; fini releases it. */
typedef struct ash_coll_ops {
    const char *name;
    ash_coll_status_t (*init)(ash_coll_t *c, const ash_coll_config_t *cfg);
    ash_coll_status_t (*allreduce)(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                   ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                   ash_coll_redop_t op, CUstream stream);
    ash_coll_status_t (*broadcast)(ash_coll_t *c, CUdeviceptr buf, size_t bytes, int root,
                                   CUstream stream);
    ash_coll_status_t (*barrier)(ash_coll_t *c);
    void (*fini)(ash_coll_t *c);
    /* stop without waiting for peers (may run on another thread while an op is stuck) */
    void (*abort)(ash_coll_t *c);
} ash_coll_ops_t;

/* The registry: NULL-terminated, in auto-selection order of preference. */
ASH_COLL_API const ash_coll_ops_t *const *ash_coll_backends(void);
ASH_COLL_API const ash_coll_ops_t *ash_coll_backend(const char *name);   /* NULL if unknown */

/* Open a communicator. backend: "auto", "nccl" or "mpi" (NULL = "auto"). Collective: every
 * rank calls it with the same backend. "nccl" that cannot load/initialise falls back to "mpi"
 * with one warning (as "auto" does). Initialises MPI (world_size > 1) unless the program did. */
ASH_COLL_API ash_coll_status_t ash_coll_open(const char *backend, const ash_coll_config_t *cfg,
                                             ash_coll_t **out);
/* Release everything; finalises MPI only if ash_coll_open initialised it and this is the last
 * open communicator. Collective. NULL is a no-op. */
ASH_COLL_API void ash_coll_close(ash_coll_t *c);

ASH_COLL_API const ash_coll_ops_t *ash_coll_ops(const ash_coll_t *c);
ASH_COLL_API const char *ash_coll_backend_name(const ash_coll_t *c);   /* "nccl" | "mpi" */
/* 1 when the ranks are no MPI world (config no_mpi, world > 1): host-side exchanges
 * (ash_coll_fingerprint) then need a current CUDA context; those at exit (ash_coll_exit_gather)
 * do not. */
ASH_COLL_API int ash_coll_no_mpi(const ash_coll_t *c);
/* 1 when c's operations may be called from any thread (one at a time): no MPI under it, or MPI
 * providing MPI_THREAD_SERIALIZED or more (the overlap worker issues collectives). */
ASH_COLL_API int ash_coll_any_thread(const ash_coll_t *c);

/* In-place all-reduce of `count` elements of `dtype` at device address `buf`, ordered on
 * `stream`: work the app queued on `stream` before is seen, and work it queues after sees the
 * result. Wire: ASH_COLL_SAME, or F32 (16-bit buffers upcast), or BF16/F16 (f32 buffers only).
 * Supported: f32 x {same,f32,bf16,f16}; bf16 x {same,bf16,f32}; f16 x {same,f16,f32}. */
ASH_COLL_API ash_coll_status_t ash_coll_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                                  ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                                  ash_coll_redop_t op, CUstream stream);
/* Root's `bytes` at `buf` replace every other rank's, ordered on `stream` as above. */
ASH_COLL_API ash_coll_status_t ash_coll_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes,
                                                  int root, CUstream stream);
/* Bound every later MPI wait of C by TIMEOUT_S seconds (> 0: nonblocking call + polling wait);
 * 0 = no deadline of ours, use MPI's blocking collectives (faster: the tuned algorithms, no
 * polling) — for a caller whose own watchdog bounds the wait, as the sync engine's does. */
ASH_COLL_API void ash_coll_set_timeout(ash_coll_t *c, double timeout_s);

/* Host-side barrier across ranks (does not synchronise any stream). */
ASH_COLL_API ash_coll_status_t ash_coll_barrier(ash_coll_t *c);

/* Debug: exchange a fingerprint of the NEXT collective (host-side MPI_Allgather of the 6-tuple
 * on the private communicator, bounded by timeout_s like every MPI wait; no MPI world: an
 * ncclAllGather, which needs a current CUDA context). `all` receives world_size *
 * ASH_COLL_FP_WORDS words, rank r's tuple at all[r * ASH_COLL_FP_WORDS]. The caller compares; the
 * collectives attach no meaning to the words. World 1: all = fp. */
#define ASH_COLL_FP_WORDS 6
ASH_COLL_API ash_coll_status_t ash_coll_fingerprint(ash_coll_t *c,
                                                    const unsigned long long fp[ASH_COLL_FP_WORDS],
                                                    unsigned long long *all);
/* Exit: tell every other rank that this one has reached the end of its job, and wait until every
 * rank has said so, up to timeout_s seconds (<= 0: no limit). Point-to-point messages on the
 * private communicator, with a tag of their own, so they never match a collective a late peer is
 * still inside. ASH_COLL_OK; ASH_COLL_ETIMEDOUT with absent[r] = 1 for each rank r not heard
 * from (absent: world_size bytes, all written). World 1: ASH_COLL_OK at once. The wait polls
 * with 1 ms naps: a rank waiting for a late peer spends no core on it. No MPI world (no_mpi): the
 * same answers over TCP without CUDA (a star at rank 0, whose port every rank learnt at open;
 * coll_meet.c), rank 0's verdict shared by every waiting rank; ASH_COLL_OK when rank 0 could not
 * set a meeting up (said at open). One meeting per communicator. */
ASH_COLL_API ash_coll_status_t ash_coll_arrive(ash_coll_t *c, double timeout_s,
                                               unsigned char *absent);
/* Exit, after ash_coll_arrive: the same exchange of ASH_COLL_FP_WORDS words per rank (the
 * parameter digest, the job summary), named by `what` ("the parameter digest"). MPI: as
 * ash_coll_fingerprint. No MPI world: over the exit meeting's TCP connections, without CUDA
 * (the program may have destroyed its context): each rank sends its words and `what`'s hash,
 * rank 0 gathers them and sends every rank the whole array, every wait bounded like the meeting
 * (rank 0: timeout_s; the others: timeout_s + 5 s; <= 0: none). A rank gone or in another
 * exchange (`what` differs) fails it on every rank at once (EPEER; rank 0 names the rank), and
 * later exchanges answer ESTATE, as they do where the ranks did not meet over TCP. */
ASH_COLL_API ash_coll_status_t ash_coll_exit_gather(ash_coll_t *c, const char *what,
                                                    const unsigned long long fp[ASH_COLL_FP_WORDS],
                                                    unsigned long long *all);
/* Abort the communicator without waiting for peers (ncclCommAbort on nccl; mpi: nothing to
 * release safely, the caller exits). Later calls answer ESTATE. Safe from another thread while
 * a collective is stuck (the watchdog); the communicator is not freed (ash_coll_close still is
 * owed, or the process exits). */
ASH_COLL_API void ash_coll_abort(ash_coll_t *c);

#ifdef __cplusplus
}
#endif
#endif /* ASH_COLL_H */
