/* coll.c — collectives front door: backend registry, open/close with auto selection, MPI
 * bootstrap (init once, private dup, finalise only what we initialised), bounded waits, names.
 *
 * Invariant: MPI is touched (and libmpi.so.40 opened, mpi_dl.c) only when world_size > 1 and
 * the ranks are one MPI world; MPI_Init_thread is called only if the
 * program has not initialised MPI itself, and MPI_Finalize only by the last ash_coll_close of a
 * process that initialised it. Backend choice is collective: "auto"/"nccl" either succeed on
 * every rank or every rank falls back to "mpi" (the nccl backend agrees over MPI first).
 * Threading: open/close from one thread; the process-wide MPI bookkeeping is mutex-guarded.
 * Callers: the shim (shim/sync/sync), tests/collectives.
 * Must not: touch MPI unless world_size > 1 and the ranks are one MPI world; call MPI_Init_thread
 * when the program initialised MPI, or MPI_Finalize for an MPI it did not initialise; leave ranks
 * on different backends; call our hooks (only the driver table the caller filled); know kernels or
 * policy rules.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ash_coll_int.h"

/* ---- names ------------------------------------------------------------------------------ */

const char *ash_coll_status_name(ash_coll_status_t st)
{
    switch (st) {
#define ASH_COLL__NAME(sym, text) case sym: return #sym;
        ASH_COLL_STATUS_MAP(ASH_COLL__NAME)
#undef ASH_COLL__NAME
    default: return "ASH_COLL_E?";
    }
}

const char *ash_coll_status_text(ash_coll_status_t st)
{
    switch (st) {
#define ASH_COLL__TEXT(sym, text) case sym: return text;
        ASH_COLL_STATUS_MAP(ASH_COLL__TEXT)
#undef ASH_COLL__TEXT
    default: return "unknown status";
    }
}

const char *ash_coll_dtype_name(ash_coll_dtype_t d)
{
    switch (d) {
    case ASH_COLL_SAME: return "same";
    case ASH_COLL_F32: return "f32";
    case ASH_COLL_F16: return "f16";
    case ASH_COLL_BF16: return "bf16";
    }
    return "?";
}

size_t ash_coll_dtype_size(ash_coll_dtype_t d)
{
    switch (d) {
    case ASH_COLL_F32: return 4;
    case ASH_COLL_F16:
    case ASH_COLL_BF16: return 2;
    case ASH_COLL_SAME: break;
    }
    return 0;
}

/* ---- registry --------------------------------------------------------------------------- */

static const ash_coll_ops_t *const ash_coll__registry[] = {
    &ash_coll_nccl_ops,   /* preferred by "auto" */
    &ash_coll_mpi_ops,    /* the fallback: correct everywhere */
    NULL,
};

const ash_coll_ops_t *const *ash_coll_backends(void) { return ash_coll__registry; }

const ash_coll_ops_t *ash_coll_backend(const char *name)
{
    for (size_t i = 0; name && ash_coll__registry[i]; i++)
        if (strcmp(ash_coll__registry[i]->name, name) == 0)
            return ash_coll__registry[i];
    return NULL;
}

ash_coll_status_t ash_coll__unsupported_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                                  ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                                  ash_coll_redop_t op, CUstream stream)
{
    (void)buf, (void)count, (void)dtype, (void)wire, (void)op, (void)stream;
    ash_coll__log(c, ASH_COLL_LOG_DEBUG, "%s: allreduce unsupported", c->ops->name);
    return ASH_COLL_EUNSUPPORTED;
}

ash_coll_status_t ash_coll__unsupported_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes,
                                                  int root, CUstream stream)
{
    (void)buf, (void)bytes, (void)root, (void)stream;
    ash_coll__log(c, ASH_COLL_LOG_DEBUG, "%s: broadcast unsupported", c->ops->name);
    return ASH_COLL_EUNSUPPORTED;
}

ash_coll_status_t ash_coll__unsupported_barrier(ash_coll_t *c)
{
    ash_coll__log(c, ASH_COLL_LOG_DEBUG, "%s: barrier unsupported", c->ops->name);
    return ASH_COLL_EUNSUPPORTED;
}

void ash_coll__abort_nothing(ash_coll_t *c)
{
    ash_coll__log(c, ASH_COLL_LOG_DEBUG, "%s: nothing to abort locally", c->ops->name);
}

/* ---- logging and error boundaries ------------------------------------------------------- */

void ash_coll__log(const ash_coll_t *c, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!c || !c->log)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->log(level, msg);
}

ash_coll_status_t ash_coll__cu_fail(const ash_coll_t *c, CUresult r, const char *call)
{
    const char *name = NULL;

    if (c->drv->cuGetErrorName == NULL || c->drv->cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: %s failed: %s (%d)", call,
                  name ? name : "CUDA error", (int)r);
    return ASH_COLL_ECUDA;
}

ash_coll_status_t ash_coll__mpi_fail(ash_coll_t *c, int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;

    ASH_MPI(Error_string)(rc, text, &len);
    ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: %s failed on rank %d: %s", call, c->rank,
                  text);
    c->broken = 1;
    return ASH_COLL_EMPI;
}

static double ash_coll__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ash_coll_set_timeout(ash_coll_t *c, double timeout_s)
{
    if (c != NULL)
        c->timeout_s = timeout_s > 0 ? timeout_s : 0;
}

ash_coll_status_t ash_coll__mpi_wait(ash_coll_t *c, MPI_Request *req, const char *what)
{
    double deadline;
    unsigned spins = 0;
    int done = 0, rc;

    if (c->timeout_s <= 0) {
        rc = ASH_MPI(Wait)(req, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS ? ASH_COLL_OK : ash_coll__mpi_fail(c, rc, what);
    }
    deadline = ash_coll__now() + c->timeout_s;
    for (;;) {
        rc = ASH_MPI(Test)(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return ash_coll__mpi_fail(c, rc, what);
        if (done)
            return ASH_COLL_OK;
        /* MPI_Test drives Open MPI's progress engine: a large message moves only while we call
         * it, so never sleep between tests (a 50 us nap made a 64 MiB all-reduce 2.5x slower
         * than MPI_Wait). Yield instead, to be kind to oversubscribed cores. */
        if (++spins > 64)
            sched_yield();
        if ((spins & 255) == 0 && ash_coll__now() > deadline)
            break;
    }
    c->broken = 1;
    ash_coll__log(c, ASH_COLL_LOG_ERROR,
                  "collectives: %s did not complete within %.0f s on rank %d of %d "
                  "(a peer is missing, stuck, or called a different collective)",
                  what, c->timeout_s, c->rank, c->world);
    return ASH_COLL_ETIMEDOUT;
}

/* ---- MPI bootstrap ---------------------------------------------------------------------- */

static pthread_mutex_t ash_coll__mpi_mutex = PTHREAD_MUTEX_INITIALIZER;
static int ash_coll__mpi_users;     /* open communicators holding an MPI dup */
static int ash_coll__mpi_owned;     /* we called MPI_Init_thread, so we finalise */
static int ash_coll__mpi_level = -1; /* the thread level MPI provides (-1: MPI not initialised) */

static ash_coll_status_t ash_coll__mpi_init_locked(ash_coll_t *c)
{
    int inited = 0, finalized = 0, provided = MPI_THREAD_SINGLE, rc;

    ASH_MPI(Finalized)(&finalized);
    if (finalized) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: MPI was already finalised");
        return ASH_COLL_EMPI;
    }
    ASH_MPI(Initialized)(&inited);
    if (!inited) {
        rc = ASH_MPI(Init_thread)(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            return ash_coll__mpi_fail(c, rc, "MPI_Init_thread");
        ash_coll__mpi_owned = 1;
        ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: MPI initialised (thread level %d)",
                      provided);
    } else {
        ASH_MPI(Query_thread)(&provided);
    }
    ash_coll__mpi_level = provided;
    if (provided < MPI_THREAD_SERIALIZED)
        ash_coll__log(c, ASH_COLL_LOG_WARN,
                      "collectives: MPI provides thread level %d (< SERIALIZED); collectives "
                      "must then be called from the thread that initialised MPI", provided);
    else if (provided < MPI_THREAD_MULTIPLE)
        ash_coll__log(c, ASH_COLL_LOG_INFO,
                      "collectives: MPI provides MPI_THREAD_SERIALIZED, not MULTIPLE; "
                      "calls stay serialised per communicator");
    return ASH_COLL_OK;
}

ash_coll_status_t ash_coll__mpi_acquire(ash_coll_t *c, const ash_coll_config_t *cfg)
{
    MPI_Comm base;
    int size = 0, rank = -1, rc, stranger = 0;
    ash_coll_status_t st;
    char why[512];

    c->comm = ASH_COLL_NO_COMM;
    if (c->world == 1)
        return ASH_COLL_OK;
    /* the first use of MPI in this process: open Open MPI (mpi_dl.c) */
    if (ash_coll__mpi_load(why, sizeof why) != 0) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: %s", why);
        return ASH_COLL_EUNAVAILABLE;
    }
    base = cfg->mpi_comm ? *(const MPI_Comm *)cfg->mpi_comm : MPI_COMM_WORLD;
    pthread_mutex_lock(&ash_coll__mpi_mutex);
    st = ash_coll__mpi_init_locked(c);
    if (st == ASH_COLL_OK) {
        ASH_MPI(Comm_size)(base, &size);
        ASH_MPI(Comm_rank)(base, &rank);
        if (size != c->world || rank != c->rank) {
            ash_coll__log(c, ASH_COLL_LOG_ERROR,
                          "collectives: world mismatch: configured rank %d of %d, but the MPI "
                          "communicator says rank %d of %d (launcher environment?)",
                          c->rank, c->world, rank, size);
            st = ASH_COLL_EINVAL;
            stranger = 1; /* MPI_Finalize would wait for ranks of a world this one is not in */
        } else if ((rc = ASH_MPI(Comm_dup)(base, &c->comm)) != MPI_SUCCESS) {
            st = ash_coll__mpi_fail(c, rc, "MPI_Comm_dup");
            c->comm = ASH_COLL_NO_COMM;
        } else {
            ASH_MPI(Comm_set_errhandler)(c->comm, MPI_ERRORS_RETURN);
            ASH_MPI(Comm_set_name)(c->comm, "accelshim");
            ash_coll__mpi_users++;
            c->mpi_acquired = 1;
        }
    }
    /* never initialised for nothing: if the first user failed, undo our own init */
    if (st != ASH_COLL_OK && ash_coll__mpi_users == 0 && ash_coll__mpi_owned && !stranger) {
        ASH_MPI(Finalize)();
        ash_coll__mpi_owned = 0;
    }
    pthread_mutex_unlock(&ash_coll__mpi_mutex);
    return st;
}

void ash_coll__mpi_release(ash_coll_t *c)
{
    if (!c->mpi_acquired)
        return;
    pthread_mutex_lock(&ash_coll__mpi_mutex);
    if (c->comm != ASH_COLL_NO_COMM && !c->broken)
        ASH_MPI(Comm_free)(&c->comm);   /* collective; skipped if a peer may be gone */
    c->comm = ASH_COLL_NO_COMM;
    c->mpi_acquired = 0;
    if (--ash_coll__mpi_users == 0 && ash_coll__mpi_owned) {
        ASH_MPI(Finalize)();
        ash_coll__mpi_owned = 0;
        ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: MPI finalised");
    }
    pthread_mutex_unlock(&ash_coll__mpi_mutex);
}

/* ---- validation shared by the backends -------------------------------------------------- */

ash_coll_status_t ash_coll__check_allreduce(const ash_coll_t *c, CUdeviceptr buf, size_t count,
                                            ash_coll_dtype_t dtype, ash_coll_dtype_t *wire,
                                            ash_coll_redop_t op)
{
    ash_coll_dtype_t w = *wire == ASH_COLL_SAME ? dtype : *wire;

    if (ash_coll_dtype_size(dtype) == 0 || (op != ASH_COLL_SUM && op != ASH_COLL_MEAN) ||
        (*wire != ASH_COLL_SAME && ash_coll_dtype_size(*wire) == 0) || (count && !buf)) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR,
                      "collectives: allreduce: invalid arguments (buf 0x%llx, count %zu, "
                      "dtype %d, wire %d, op %d)", (unsigned long long)buf, count, (int)dtype,
                      (int)*wire, (int)op);
        return ASH_COLL_EINVAL;
    }
    /* 16-bit buffers may go up to f32 on the wire; f32 may go down to either 16-bit type */
    if (w != dtype && dtype != ASH_COLL_F32 && w != ASH_COLL_F32) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: allreduce: %s data on a %s wire is "
                      "not supported (use same or f32)", ash_coll_dtype_name(dtype),
                      ash_coll_dtype_name(w));
        return ASH_COLL_EUNSUPPORTED;
    }
    *wire = w;
    return ASH_COLL_OK;
}

/* ---- open / close / calls --------------------------------------------------------------- */

const char *ash_coll_driver_missing(const ash_coll_driver_t *d)
{
#define ASH_COLL__MISSING(name, type, required)                                               \
    if ((required) && !d->name)                                                               \
        return #name;
    ASH_COLL_DRIVER_ENTRIES(ASH_COLL__MISSING)
#undef ASH_COLL__MISSING
    return NULL;
}

const char *ash_coll_driver_fill(ash_coll_driver_t *d,
                                 void *(*resolve)(void *ctx, const char *name), void *ctx)
{
#define ASH_COLL__FILL(name, type, required) *(void **)&d->name = resolve(ctx, #name);
    ASH_COLL_DRIVER_ENTRIES(ASH_COLL__FILL)
#undef ASH_COLL__FILL
    return ash_coll_driver_missing(d);
}

ash_coll_status_t ash_coll_open(const char *backend, const ash_coll_config_t *cfg,
                                ash_coll_t **out)
{
    ash_coll_t *c;
    ash_coll_status_t st;
    int want_nccl;

    if (!out)
        return ASH_COLL_EINVAL;
    *out = NULL;
    if (!backend)
        backend = "auto";
    if (!cfg || !cfg->driver || ash_coll_driver_missing(cfg->driver) ||
        cfg->world_size < 1 || cfg->rank < 0 || cfg->rank >= cfg->world_size ||
        cfg->local_rank < 0 || (strcmp(backend, "auto") != 0 && !ash_coll_backend(backend))) {
        if (cfg && cfg->log) {
            char msg[256];
            snprintf(msg, sizeof msg, "collectives: ash_coll_open: invalid configuration "
                     "(backend \"%s\", rank %d of %d, local rank %d, driver table %s%s)",
                     backend, cfg->rank, cfg->world_size, cfg->local_rank,
                     !cfg->driver ? "missing" : ash_coll_driver_missing(cfg->driver) ? "lacks "
                                                                                       : "ok",
                     cfg->driver && ash_coll_driver_missing(cfg->driver)
                         ? ash_coll_driver_missing(cfg->driver) : "");
            cfg->log(ASH_COLL_LOG_ERROR, msg);
        }
        return ASH_COLL_EINVAL;
    }
    c = calloc(1, sizeof *c);
    if (!c)
        return ASH_COLL_ENOMEM;
    c->drv = cfg->driver; /* the caller's one table; it outlives the communicator */
    c->rank = cfg->rank;
    c->world = cfg->world_size;
    c->local_rank = cfg->local_rank;
    c->timeout_s = cfg->timeout_s;
    c->log = cfg->log;
    c->nccl_library = cfg->nccl_library ? cfg->nccl_library : "libnccl.so.2";
    c->staging_bytes = cfg->staging_bytes == 0 ? (size_t)64 << 20
                     : cfg->staging_bytes < 64 ? 64 : cfg->staging_bytes;
    c->comm = ASH_COLL_NO_COMM;
    c->no_mpi = cfg->no_mpi && cfg->world_size > 1;
    c->have_comm_id = cfg->nccl_comm_id && *cfg->nccl_comm_id;
    snprintf(c->job_id, sizeof c->job_id, "%s", cfg->job_id ? cfg->job_id : "");
    c->job_hash = 0xcbf29ce484222325ull; /* FNV-1a of the whole id (longer ones are cut for show) */
    for (const char *p = cfg->job_id; p && *p; p++)
        c->job_hash = (c->job_hash ^ (unsigned char)*p) * 0x100000001b3ull;

    if (c->no_mpi) {
        if (!strcmp(backend, "mpi")) {
            ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: backend mpi asked for, but the ranks "
                          "are not one MPI world (they meet through NCCL_COMM_ID): start them with "
                          "mpirun or srun for the mpi backend");
            free(c);
            return ASH_COLL_EINVAL;
        }
        c->ops = &ash_coll_nccl_ops;
        st = c->ops->init(c, cfg);
        if (st == ASH_COLL_OK)
            goto out;
        if (st == ASH_COLL_EJOB) /* said already, naming both jobs */
            goto fail;
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: NCCL backend unavailable (%s), and without "
                      "an MPI world there is no fallback", c->why[0] ? c->why : ash_coll_status_text(st));
        c->impl = NULL;
        goto fail;
    }
    st = ash_coll__mpi_acquire(c, cfg);
    if (st != ASH_COLL_OK) {
        free(c);
        return st;
    }
    want_nccl = strcmp(backend, "mpi") != 0;
    if (want_nccl) {
        c->ops = &ash_coll_nccl_ops;
        st = c->ops->init(c, cfg);
        if (st == ASH_COLL_OK)
            goto out;
        c->impl = NULL;
        if (st != ASH_COLL_EUNAVAILABLE && st != ASH_COLL_ENCCL && st != ASH_COLL_ECUDA)
            goto fail;
        ash_coll__log(c, ASH_COLL_LOG_WARN,
                      "collectives: NCCL backend unavailable (%s); using the mpi backend "
                      "(host-staged, slower)", c->why[0] ? c->why : ash_coll_status_text(st));
    }
    c->ops = &ash_coll_mpi_ops;
    st = c->ops->init(c, cfg);
    if (st != ASH_COLL_OK)
        goto fail;
out:
    ash_coll__log(c, ASH_COLL_LOG_INFO, "collectives: %s backend, rank %d of %d",
                  c->ops->name, c->rank, c->world);
    *out = c;
    return ASH_COLL_OK;
fail:
    ash_coll__mpi_release(c);
    free(c);
    return st;
}

void ash_coll_close(ash_coll_t *c)
{
    if (!c)
        return;
    if (c->ops)
        c->ops->fini(c);
    ash_coll__meet_close(c);
    ash_coll__mpi_release(c);
    free(c);
}

const ash_coll_ops_t *ash_coll_ops(const ash_coll_t *c) { return c ? c->ops : NULL; }

const char *ash_coll_backend_name(const ash_coll_t *c)
{
    return c && c->ops ? c->ops->name : "none";
}

int ash_coll_no_mpi(const ash_coll_t *c) { return c && c->no_mpi; }

int ash_coll_any_thread(const ash_coll_t *c)
{
    return c && (c->no_mpi || ash_coll__mpi_level < 0 || ash_coll__mpi_level >= MPI_THREAD_SERIALIZED);
}

ash_coll_status_t ash_coll_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                     ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                     ash_coll_redop_t op, CUstream stream)
{
    if (!c)
        return ASH_COLL_EINVAL;
    if (c->broken)
        return ASH_COLL_ESTATE;
    return c->ops->allreduce(c, buf, count, dtype, wire, op, stream);
}

ash_coll_status_t ash_coll_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes, int root,
                                     CUstream stream)
{
    if (!c || root < 0 || root >= c->world || (bytes && !buf))
        return ASH_COLL_EINVAL;
    if (c->broken)
        return ASH_COLL_ESTATE;
    return c->ops->broadcast(c, buf, bytes, root, stream);
}

ash_coll_status_t ash_coll_fingerprint(ash_coll_t *c,
                                       const unsigned long long fp[ASH_COLL_FP_WORDS],
                                       unsigned long long *all)
{
    MPI_Request req;
    int rc;

    if (!c || !fp || !all)
        return ASH_COLL_EINVAL;
    if (c->broken)
        return ASH_COLL_ESTATE;
    if (c->no_mpi)
        return ash_coll__nccl_allgather_host(c, fp, ASH_COLL_FP_WORDS * sizeof *fp, all);
    if (c->comm == ASH_COLL_NO_COMM) {
        memcpy(all, fp, ASH_COLL_FP_WORDS * sizeof *fp);
        return ASH_COLL_OK;
    }
    rc = ASH_MPI(Iallgather)(fp, ASH_COLL_FP_WORDS, MPI_UNSIGNED_LONG_LONG, all, ASH_COLL_FP_WORDS,
                        MPI_UNSIGNED_LONG_LONG, c->comm, &req);
    if (rc != MPI_SUCCESS)
        return ash_coll__mpi_fail(c, rc, "MPI_Iallgather(fingerprint)");
    return ash_coll__mpi_wait(c, &req, "MPI_Iallgather(fingerprint)");
}

ash_coll_status_t ash_coll_exit_gather(ash_coll_t *c, const char *what,
                                       const unsigned long long fp[ASH_COLL_FP_WORDS],
                                       unsigned long long *all)
{
    if (!c || !what || !fp || !all)
        return ASH_COLL_EINVAL;
    if (c->broken)
        return ASH_COLL_ESTATE;
    if (c->no_mpi) /* over the exit meeting's TCP: CUDA may be gone (coll_meet.c) */
        return ash_coll__meet_allgather(c, what, fp, ASH_COLL_FP_WORDS, all);
    return ash_coll_fingerprint(c, fp, all);
}

#define ASH_COLL_ARRIVE_TAG 0x4173 /* "As": the exit meeting's messages, apart from all else */

ash_coll_status_t ash_coll_arrive(ash_coll_t *c, double timeout_s, unsigned char *absent)
{
    if (!c || !absent)
        return ASH_COLL_EINVAL;
    memset(absent, 0, (size_t)c->world);
    if (c->broken)
        return ASH_COLL_ESTATE;
    if (c->no_mpi)
        return ash_coll__meet_arrive(c, timeout_s, absent); /* TCP, no CUDA (coll_meet.c) */
    if (c->comm == ASH_COLL_NO_COMM)
        return ASH_COLL_OK;
    static const int mine = 1;
    int n = c->world, rc = MPI_SUCCESS, left = 0;
    /* [0, n): receives from each peer; [n, 2n): sends to each; done[i]: request i completed */
    MPI_Request *req = malloc(sizeof *req * 2 * (size_t)n);
    int *got = calloc((size_t)n, sizeof *got);
    unsigned char *done = calloc(2 * (size_t)n, 1);
    ash_coll_status_t st = ASH_COLL_OK;
    if (!req || !got || !done) {
        st = ASH_COLL_ENOMEM;
        goto out;
    }
    done[c->rank] = done[n + c->rank] = 1; /* nothing to or from itself */
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if (r != c->rank)
            rc = ASH_MPI(Irecv)(&got[r], 1, MPI_INT, r, ASH_COLL_ARRIVE_TAG, c->comm, &req[r]);
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if (r != c->rank)
            rc = ASH_MPI(Isend)(&mine, 1, MPI_INT, r, ASH_COLL_ARRIVE_TAG, c->comm, &req[n + r]);
    if (rc != MPI_SUCCESS) {
        st = ash_coll__mpi_fail(c, rc, "MPI_Isend/MPI_Irecv (the ranks' meeting at exit)");
        return st; /* posted requests keep their buffers (not freed): the caller ends the process */
    }
    double deadline = ash_coll__now() + timeout_s;
    for (;;) {
        left = 0;
        for (int i = 0; i < 2 * n && rc == MPI_SUCCESS; i++)
            if (!done[i]) {
                int flag = 0;
                rc = ASH_MPI(Test)(&req[i], &flag, MPI_STATUS_IGNORE);
                done[i] = (unsigned char)flag;
                left += !flag;
            }
        if (rc != MPI_SUCCESS || left == 0 || (timeout_s > 0 && ash_coll__now() >= deadline))
            break;
        nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
    }
    if (rc != MPI_SUCCESS) {
        st = ash_coll__mpi_fail(c, rc, "MPI_Test (the ranks' meeting at exit)");
    } else if (left) {
        c->broken = 1; /* a peer may never come: nothing more is said to it (no Comm_free) */
        for (int r = 0; r < n; r++)
            absent[r] = !done[r];
        free(done);
        return ASH_COLL_ETIMEDOUT; /* pending receives keep req and got: the caller ends the process */
    }
out:
    free(req);
    free(got);
    free(done);
    return st;
}

void ash_coll_abort(ash_coll_t *c)
{
    if (!c)
        return;
    c->broken = 1;
    if (c->ops && c->ops->abort)
        c->ops->abort(c);
}

ash_coll_status_t ash_coll_barrier(ash_coll_t *c)
{
    if (!c)
        return ASH_COLL_EINVAL;
    if (c->broken)
        return ASH_COLL_ESTATE;
    return c->ops->barrier(c);
}
