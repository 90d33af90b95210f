/* coll_nccl.c — the "nccl" backend: libnccl.so.2 dlopen'ed on first use, unique id broadcast
 * over the private MPI communicator, ncclAllReduce / ncclBroadcast on the APP's stream (no host
 * synchronisation). Downcast wire: the shim's own cast kernels (cast_kernels.cu, PTX embedded in
 * this library, loaded lazily per context with the real cuModuleLoadData) into a device scratch
 * buffer (real cuMemAlloc, grown and reused), a 16-bit reduction, the cast back (+ scale).
 * Mean: ncclAvg when NCCL >= 2.10, else sum + scale kernel (fp16 scales before the sum).
 * Without MPI (no_mpi) every rank makes the id from NCCL_COMM_ID, and one ncclBroadcast after the
 * rendezvous hands out the exit meeting's port (coll_meet.c).
 * Invariant: init succeeds on every rank or fails on every rank (agreement over MPI at each
 * step), so "auto" never leaves ranks on different backends. Scratch reuse on another stream
 * waits (cuStreamWaitEvent) for its last use. The library stays loaded after fini (NCCL may
 * keep threads). Threading: one caller at a time per communicator. Callers: coll.c.
 * Must not: wait on the host in an all-reduce or broadcast (they stay on the app's stream), except
 * to free a scratch it outgrew or, with a driver table without events, to reuse one on another
 * stream; link libnccl (dlopen'ed on first use); succeed on some ranks and fail on others; reuse
 * the scratch on another stream before its last use completed; unload libnccl after fini.
 */
#include <dlfcn.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "ash_coll_int.h"

/* embedded by ptx_blob.S (hidden) */
extern const char ash_coll_cast_ptx[];

#define ASH_COLL_KERNELS(X)                                                                  \
    X(F32_TO_BF16, "ash_coll_k_f32_to_bf16")                                                 \
    X(BF16_TO_F32, "ash_coll_k_bf16_to_f32")                                                 \
    X(F32_TO_F16, "ash_coll_k_f32_to_f16")                                                   \
    X(F16_TO_F32, "ash_coll_k_f16_to_f32")                                                   \
    X(SCALE_F32, "ash_coll_k_scale_f32")                                                     \
    X(SCALE_BF16, "ash_coll_k_scale_bf16")                                                   \
    X(SCALE_F16, "ash_coll_k_scale_f16")

enum {
#define ASH_COLL__K_ENUM(sym, name) ASH_COLL_K_##sym,
    ASH_COLL_KERNELS(ASH_COLL__K_ENUM)
#undef ASH_COLL__K_ENUM
    ASH_COLL_K_COUNT
};

static const char *const ash_coll__kernel_names[ASH_COLL_K_COUNT] = {
#define ASH_COLL__K_NAME(sym, name) name,
    ASH_COLL_KERNELS(ASH_COLL__K_NAME)
#undef ASH_COLL__K_NAME
};

#define ASH_COLL_NCCL_MAX_CTX 8

/* per CUDA context: the loaded module, its kernels, the scratch buffer and its last use */
typedef struct ash_coll_nccl_ctx {
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn[ASH_COLL_K_COUNT];
    CUdeviceptr scratch;
    size_t scratch_bytes;
    CUevent used;          /* recorded after the last op that touched scratch */
    CUstream used_on;
    int used_pending;
} ash_coll_nccl_ctx_t;

typedef struct ash_coll_nccl {
    void *dl;
    ncclResult_t (*GetVersion)(int *);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                              ncclComm_t, cudaStream_t);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
    ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*CommAbort)(ncclComm_t);
    const char *(*GetErrorString)(ncclResult_t);
    ncclComm_t comm;
    int version;
    int has_avg;           /* ncclAvg exists from NCCL 2.10 */
    ash_coll_nccl_ctx_t ctx[ASH_COLL_NCCL_MAX_CTX];
} ash_coll_nccl_t;

/* ---- loading ----------------------------------------------------------------------------- */

/* dlopen + dlsym. A missing file is reported quietly (debug); any other error is shown. */
static ash_coll_status_t ash_coll__nccl_load(ash_coll_t *c, ash_coll_nccl_t *n)
{
    const char *err;

    dlerror();
    n->dl = dlopen(c->nccl_library, RTLD_NOW | RTLD_LOCAL);
    if (!n->dl) {
        err = dlerror();
        if (err && strstr(err, "No such file or directory")) {
            snprintf(c->why, sizeof c->why, "%s not found", c->nccl_library);
            ash_coll__log(c, ASH_COLL_LOG_DEBUG, "collectives: %s", err);
        } else {
            snprintf(c->why, sizeof c->why, "cannot load %s: %s", c->nccl_library,
                     err ? err : "unknown dlopen error");
        }
        return ASH_COLL_EUNAVAILABLE;
    }
#define ASH_COLL__SYM(field, sym)                                                            \
    do {                                                                                     \
        *(void **)&n->field = ash_coll__dlsym(n->dl, sym);                                   \
        if (!n->field) {                                                                     \
            snprintf(c->why, sizeof c->why, "%s lacks %s", c->nccl_library, sym);            \
            return ASH_COLL_EUNAVAILABLE;                                                    \
        }                                                                                    \
    } while (0)
    ASH_COLL__SYM(GetVersion, "ncclGetVersion");
    ASH_COLL__SYM(GetUniqueId, "ncclGetUniqueId");
    ASH_COLL__SYM(CommInitRank, "ncclCommInitRank");
    ASH_COLL__SYM(AllReduce, "ncclAllReduce");
    ASH_COLL__SYM(Broadcast, "ncclBroadcast");
    ASH_COLL__SYM(AllGather, "ncclAllGather");
    ASH_COLL__SYM(CommDestroy, "ncclCommDestroy");
    ASH_COLL__SYM(CommAbort, "ncclCommAbort");
    ASH_COLL__SYM(GetErrorString, "ncclGetErrorString");
#undef ASH_COLL__SYM
    return ASH_COLL_OK;
}

/* Every rank learns whether every rank succeeded (MIN over ok flags). World 1: itself. */
static ash_coll_status_t ash_coll__agree(ash_coll_t *c, int ok, int *all_ok)
{
    MPI_Request req;
    int rc;

    *all_ok = ok;
    if (c->comm == ASH_COLL_NO_COMM)
        return ASH_COLL_OK;
    rc = ASH_MPI(Iallreduce)(&ok, all_ok, 1, MPI_INT, MPI_MIN, c->comm, &req);
    if (rc != MPI_SUCCESS)
        return ash_coll__mpi_fail(c, rc, "MPI_Iallreduce(agree)");
    return ash_coll__mpi_wait(c, &req, "MPI_Iallreduce(agree)");
}

static const char *ash_coll__nccl_err(const ash_coll_nccl_t *n, ncclResult_t r)
{
    return n->GetErrorString ? n->GetErrorString(r) : "NCCL error";
}

/* No MPI: the exit meeting's card (coll_meet.c) from rank 0 to every rank, by one ncclBroadcast
 * on the legacy stream while the program's CUDA context is alive (at exit it may not be).
 * Bounded like the rendezvous (a rank that never joins: exit 4). Any failure: no meeting. */
static void ash_coll__nccl_meet_card(ash_coll_t *c, ash_coll_nccl_t *n, const char *comm_id)
{
    ash_coll_meet_card_t card;
    CUdeviceptr d = 0;
    ncclResult_t r = ncclSuccess;
    int ok = 0;

    if (c->rank == 0)
        ash_coll__meet_listen(c, comm_id, &card);
    else
        memset(&card, 0, sizeof card);
    ash_coll_deadline_t *dl = ash_coll__deadline_start(c, "the exit meeting's port, ncclBroadcast");
    if (c->drv->cuMemAlloc_v2(&d, sizeof card) == CUDA_SUCCESS &&
        c->drv->cuMemcpyHtoDAsync_v2(d, &card, sizeof card, NULL) == CUDA_SUCCESS &&
        (r = n->Broadcast((const void *)(uintptr_t)d, (void *)(uintptr_t)d, sizeof card, ncclUint8, 0,
                          n->comm, NULL)) == ncclSuccess &&
        c->drv->cuMemcpyDtoHAsync_v2(&card, d, sizeof card, NULL) == CUDA_SUCCESS &&
        c->drv->cuStreamSynchronize(NULL) == CUDA_SUCCESS)
        ok = 1;
    ash_coll__deadline_stop(dl);
    if (d)
        c->drv->cuMemFree_v2(d);
    if (!ok) {
        ash_coll__log(c, ASH_COLL_LOG_WARN, "collectives: no meeting at exit for rank %d: the "
                      "broadcast of its port failed (%s)", c->rank,
                      r != ncclSuccess ? ash_coll__nccl_err(n, r) : "CUDA error");
        memset(&card, 0, sizeof card);
    }
    ash_coll__meet_join(c, comm_id, &card);
}

/* No MPI: the ranks that met at NCCL_COMM_ID swap their job's identity (ACCELSHIM_JOB_ID)
 * before anything else travels, by one ncclAllGather of a card per rank on the legacy stream,
 * bounded like the rendezvous. NCCL's bootstrap pairs whoever comes to the address: two jobs on
 * one port, or a stranger started with this job's address and a rank, would otherwise train with
 * this job's ranks. Every rank that sees another id names the first such rank and both jobs in
 * one line; the job stops (ASH_COLL_EJOB: the shim exits 2). */
#define ASH_COLL_JOB_MAGIC 0x41534a31u /* "ASJ1" */
typedef struct ash_coll_job_card {
    uint32_t magic, world;
    uint64_t hash;         /* of the whole id */
    char id[48];           /* the id for show, cut */
} ash_coll_job_card_t;

static ash_coll_status_t ash_coll__nccl_job_check(ash_coll_t *c, ash_coll_nccl_t *n, const char *comm_id)
{
    size_t one = sizeof(ash_coll_job_card_t), all = one * (size_t)c->world;
    ash_coll_job_card_t me = {ASH_COLL_JOB_MAGIC, (uint32_t)c->world, c->job_hash, {0}};
    ash_coll_job_card_t *cards = calloc((size_t)c->world, one);
    CUdeviceptr d = 0;
    ncclResult_t r = ncclSuccess;
    int ok = 0, other = -1, others = 0;

    if (!cards)
        return ASH_COLL_ENOMEM;
    memcpy(me.id, c->job_id, sizeof me.id - 1); /* cut for show; the hash is of the whole id */
    ash_coll_deadline_t *dl = ash_coll__deadline_start(c, "the job check after the rendezvous, ncclAllGather");
    if (c->drv->cuMemAlloc_v2(&d, all) == CUDA_SUCCESS &&
        c->drv->cuMemcpyHtoDAsync_v2(d + (size_t)c->rank * one, &me, one, NULL) == CUDA_SUCCESS &&
        (r = n->AllGather((const void *)(uintptr_t)(d + (size_t)c->rank * one), (void *)(uintptr_t)d,
                          one, ncclUint8, n->comm, NULL)) == ncclSuccess &&
        c->drv->cuMemcpyDtoHAsync_v2(cards, d, all, NULL) == CUDA_SUCCESS &&
        c->drv->cuStreamSynchronize(NULL) == CUDA_SUCCESS)
        ok = 1;
    ash_coll__deadline_stop(dl);
    if (d)
        c->drv->cuMemFree_v2(d);
    if (!ok) {
        snprintf(c->why, sizeof c->why, "the ranks' job check after the rendezvous failed (%s)",
                 r != ncclSuccess ? ash_coll__nccl_err(n, r) : "CUDA error");
        free(cards);
        return r != ncclSuccess ? ASH_COLL_ENCCL : ASH_COLL_ECUDA;
    }
    for (int i = 0; i < c->world; i++) {
        if (cards[i].magic == ASH_COLL_JOB_MAGIC && cards[i].world == me.world && cards[i].hash == me.hash)
            continue;
        if (other < 0)
            other = i;
        others++;
    }
    if (other >= 0) {
        ash_coll_job_card_t *o = &cards[other];
        char theirs[128];
        o->id[sizeof o->id - 1] = 0;
        if (o->magic != ASH_COLL_JOB_MAGIC)
            snprintf(theirs, sizeof theirs, "(unknown: it sent no job card; its rendezvous "
                     "broke, or it runs no accelshim)");
        else
            snprintf(theirs, sizeof theirs, "\"%s\" of %u ranks", o->id[0] ? o->id : "(none)", o->world);
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: rendezvous at NCCL_COMM_ID %.100s: rank %d "
                      "belongs to job %s, not to this job \"%s\" of %d ranks%s: two jobs met at one "
                      "address (a port shared by two launchers?) or a stranger took that rank's "
                      "place; refusing it before any data travels (exit 2)", comm_id ? comm_id : "?",
                      other, theirs, me.id[0] ? me.id : "(none)", c->world,
                      others > 1 ? " (and more ranks of other jobs)" : "");
        free(cards);
        return ASH_COLL_EJOB;
    }
    free(cards);
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__nccl_init(ash_coll_t *c, const ash_coll_config_t *cfg)
{
    ash_coll_nccl_t *n = calloc(1, sizeof *n);
    struct { int ok; ncclResult_t r; ncclUniqueId id; } boot;
    ash_coll_status_t st, loaded;
    ncclResult_t r;
    int all_ok = 0, rc;
    MPI_Request req;

    if (!n)
        return ASH_COLL_ENOMEM;
    c->why[0] = 0;
    /* 1. every rank loads the library, then all agree before anyone calls into NCCL */
    loaded = ash_coll__nccl_load(c, n);
    st = ash_coll__agree(c, loaded == ASH_COLL_OK, &all_ok);
    if (st != ASH_COLL_OK)
        goto fail;
    if (!all_ok) {
        if (loaded == ASH_COLL_OK)
            snprintf(c->why, sizeof c->why, "%s could not be loaded on another rank",
                     c->nccl_library);
        st = ASH_COLL_EUNAVAILABLE;
        goto fail;
    }
    /* 2. rank 0 makes the unique id; broadcast over MPI with its outcome. Without MPI every rank
     * makes it: NCCL_COMM_ID (the rendezvous address) makes them all the same */
    memset(&boot, 0, sizeof boot);
    if (c->no_mpi && !c->have_comm_id) {
        snprintf(c->why, sizeof c->why, "NCCL_COMM_ID (the ranks' meeting address, IP:PORT) is not set");
        st = ASH_COLL_EUNAVAILABLE;
        goto fail;
    }
    if (c->rank == 0 || c->no_mpi) {
        boot.r = n->GetUniqueId(&boot.id);
        boot.ok = boot.r == ncclSuccess;
    }
    if (c->comm != ASH_COLL_NO_COMM) {
        rc = ASH_MPI(Ibcast)(&boot, (int)sizeof boot, MPI_BYTE, 0, c->comm, &req);
        if (rc != MPI_SUCCESS) {
            st = ash_coll__mpi_fail(c, rc, "MPI_Ibcast(ncclUniqueId)");
            goto fail;
        }
        if ((st = ash_coll__mpi_wait(c, &req, "MPI_Ibcast(ncclUniqueId)")) != ASH_COLL_OK)
            goto fail;
    }
    if (!boot.ok) {
        snprintf(c->why, sizeof c->why, "ncclGetUniqueId failed on rank 0: %s",
                 ash_coll__nccl_err(n, boot.r));
        st = ASH_COLL_ENCCL;
        goto fail;
    }
    /* 3. the communicator; if any rank failed, every rank drops its own */
    ash_coll_deadline_t *dl = ash_coll__deadline_start(c, c->no_mpi ? "NCCL_COMM_ID" : "ncclCommInitRank");
    r = n->CommInitRank(&n->comm, c->world, boot.id, c->rank); /* bounded by timeout_s (dl) */
    ash_coll__deadline_stop(dl);
    if (r != ncclSuccess) {
        snprintf(c->why, sizeof c->why, "ncclCommInitRank failed: %s", ash_coll__nccl_err(n, r));
        n->comm = NULL;
        if (c->no_mpi && c->rank != 0) {
            /* no MPI to agree through: a rank that could not reach rank 0's listener at
             * NCCL_COMM_ID met nobody. That is the rendezvous not completing, as when the
             * deadline runs out (status 4), not a configuration error. */
            ash_coll__log(c, ASH_COLL_LOG_ERROR,
                          "collectives: rendezvous (NCCL_COMM_ID %s): rank 0 did not answer (%s; "
                          "rank %d of %d waited): its machine was not started, ended before it, or "
                          "listens at another address; exiting with status %d", cfg->nccl_comm_id ? cfg->nccl_comm_id : "?",
                          ash_coll__nccl_err(n, r), c->rank, c->world, 4);
            _exit(4);
        }
    }
    st = ash_coll__agree(c, r == ncclSuccess, &all_ok);
    if (st != ASH_COLL_OK || !all_ok) {
        if (n->comm)
            n->CommAbort(n->comm);
        if (r == ncclSuccess)
            snprintf(c->why, sizeof c->why, "ncclCommInitRank failed on another rank");
        st = st != ASH_COLL_OK ? st : ASH_COLL_ENCCL;
        goto fail;
    }
    if (c->no_mpi && (st = ash_coll__nccl_job_check(c, n, cfg->nccl_comm_id)) != ASH_COLL_OK) {
        n->CommAbort(n->comm); /* another job's rank: nothing more goes to it */
        goto fail;
    }
    if (n->GetVersion(&n->version) != ncclSuccess)
        n->version = 0;
    /* codes: 2.9+ major*10000+minor*100+patch; older major*1000+minor*100+patch */
    n->has_avg = n->version >= 21000;
    if (c->no_mpi)
        ash_coll__nccl_meet_card(c, n, cfg->nccl_comm_id);
    ash_coll__log(c, ASH_COLL_LOG_INFO, "collectives: NCCL %d (%s) ready, mean via %s",
                  n->version, c->nccl_library, n->has_avg ? "ncclAvg" : "sum + scale kernel");
    c->impl = n;
    return ASH_COLL_OK;
fail:
    /* the library stays loaded (a failed NCCL may have started threads) */
    free(n);
    return st;
}

/* ---- kernels and scratch ----------------------------------------------------------------- */

static ash_coll_status_t ash_coll__nccl_ctx(ash_coll_t *c, ash_coll_nccl_t *n,
                                            ash_coll_nccl_ctx_t **out)
{
    CUcontext cur = NULL;
    ash_coll_nccl_ctx_t *e = NULL;

    ASH_COLL_CU(c, c->drv->cuCtxGetCurrent(&cur));
    if (!cur) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: no current CUDA context");
        return ASH_COLL_ECUDA;
    }
    for (int i = 0; i < ASH_COLL_NCCL_MAX_CTX; i++) {
        if (n->ctx[i].ctx == cur) {
            *out = &n->ctx[i];
            return ASH_COLL_OK;
        }
        if (!e && !n->ctx[i].ctx)
            e = &n->ctx[i];
    }
    if (!e) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: more than %d CUDA contexts",
                      ASH_COLL_NCCL_MAX_CTX);
        return ASH_COLL_EUNSUPPORTED;
    }
    ASH_COLL_CU(c, c->drv->cuModuleLoadData(&e->mod, ash_coll_cast_ptx));
    for (int k = 0; k < ASH_COLL_K_COUNT; k++)
        ASH_COLL_CU(c, c->drv->cuModuleGetFunction(&e->fn[k], e->mod, ash_coll__kernel_names[k]));
    e->ctx = cur;
    *out = e;
    return ASH_COLL_OK;
}

/* Scratch of >= bytes, safe to use on `stream` (its last use, maybe elsewhere, is ordered). */
static ash_coll_status_t ash_coll__scratch(ash_coll_t *c, ash_coll_nccl_ctx_t *e, size_t bytes,
                                           CUstream stream)
{
    int events = c->drv->cuEventCreate && c->drv->cuEventRecord && c->drv->cuEventSynchronize &&
                 c->drv->cuStreamWaitEvent;

    if (e->used_pending && (e->scratch_bytes < bytes || e->used_on != stream)) {
        if (e->scratch_bytes < bytes) /* about to free it: wait on the host */
            ASH_COLL_CU(c, events ? c->drv->cuEventSynchronize(e->used)
                                  : c->drv->cuStreamSynchronize(e->used_on));
        else if (events)
            ASH_COLL_CU(c, c->drv->cuStreamWaitEvent(stream, e->used, 0));
        else
            ASH_COLL_CU(c, c->drv->cuStreamSynchronize(e->used_on));
        e->used_pending = 0;
    }
    if (e->scratch_bytes < bytes) {
        size_t want = e->scratch_bytes * 2 > bytes ? e->scratch_bytes * 2 : bytes;
        if (e->scratch) {
            c->drv->cuMemFree_v2(e->scratch);
            e->scratch = 0;
            e->scratch_bytes = 0;
        }
        ASH_COLL_CU(c, c->drv->cuMemAlloc_v2(&e->scratch, want));
        e->scratch_bytes = want;
    }
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__scratch_used(ash_coll_t *c, ash_coll_nccl_ctx_t *e,
                                                CUstream stream)
{
    e->used_on = stream;
    e->used_pending = 1;
    if (!(c->drv->cuEventCreate && c->drv->cuEventRecord))
        return ASH_COLL_OK;
    if (!e->used)
        ASH_COLL_CU(c, c->drv->cuEventCreate(&e->used, CU_EVENT_DISABLE_TIMING));
    ASH_COLL_CU(c, c->drv->cuEventRecord(e->used, stream));
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__launch(ash_coll_t *c, ash_coll_nccl_ctx_t *e, int k,
                                          CUstream stream, void **args, long long count)
{
    long long blocks = (count + 255) / 256;
    unsigned grid = (unsigned)(blocks > 4096 ? 4096 : blocks < 1 ? 1 : blocks);

    ASH_COLL_CU(c, c->drv->cuLaunchKernel(e->fn[k], grid, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__cast(ash_coll_t *c, ash_coll_nccl_ctx_t *e, int k,
                                        CUdeviceptr src, CUdeviceptr dst, long long count,
                                        float scale, CUstream stream)
{
    void *args[] = {&src, &dst, &count, &scale};
    return ash_coll__launch(c, e, k, stream, args, count);
}

static ash_coll_status_t ash_coll__scale(ash_coll_t *c, ash_coll_nccl_ctx_t *e,
                                         ash_coll_dtype_t t, CUdeviceptr p, long long count,
                                         float scale, CUstream stream)
{
    void *args[] = {&p, &count, &scale};
    int k = t == ASH_COLL_F32 ? ASH_COLL_K_SCALE_F32
          : t == ASH_COLL_BF16 ? ASH_COLL_K_SCALE_BF16 : ASH_COLL_K_SCALE_F16;
    return ash_coll__launch(c, e, k, stream, args, count);
}

/* ---- ops --------------------------------------------------------------------------------- */

static ncclDataType_t ash_coll__nccl_type(ash_coll_dtype_t d)
{
    return d == ASH_COLL_F32 ? ncclFloat32 : d == ASH_COLL_BF16 ? ncclBfloat16 : ncclFloat16;
}

static ash_coll_status_t ash_coll__nccl_call(ash_coll_t *c, ash_coll_nccl_t *n, ncclResult_t r,
                                             const char *call)
{
    if (r == ncclSuccess)
        return ASH_COLL_OK;
    ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: %s failed on rank %d: %s", call, c->rank,
                  ash_coll__nccl_err(n, r));
    c->broken = 1;
    return ASH_COLL_ENCCL;
}

static ash_coll_status_t ash_coll__nccl_reduce(ash_coll_t *c, ash_coll_nccl_t *n, CUdeviceptr p,
                                               size_t count, ash_coll_dtype_t t, ncclRedOp_t op,
                                               CUstream stream)
{
    void *v = (void *)(uintptr_t)p;
    return ash_coll__nccl_call(c, n, n->AllReduce(v, v, count, ash_coll__nccl_type(t), op,
                                                  n->comm, (cudaStream_t)stream),
                               "ncclAllReduce");
}

static ash_coll_status_t ash_coll__nccl_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                                  ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                                  ash_coll_redop_t op, CUstream stream)
{
    ash_coll_nccl_t *n = c->impl;
    ash_coll_nccl_ctx_t *e = NULL;
    float inv = 1.0f / (float)c->world;
    int mean = op == ASH_COLL_MEAN;
    long long cnt = (long long)count;
    CUdeviceptr s;

    ASH_COLL_CHECK(c, ash_coll__check_allreduce(c, buf, count, dtype, &wire, op));
    if (count == 0)
        return ASH_COLL_OK;
    if (wire == dtype) {
        if (!mean)
            return ash_coll__nccl_reduce(c, n, buf, count, dtype, ncclSum, stream);
        if (n->has_avg)
            return ash_coll__nccl_reduce(c, n, buf, count, dtype, ncclAvg, stream);
        ASH_COLL_CHECK(c, ash_coll__nccl_ctx(c, n, &e));
        if (dtype == ASH_COLL_F16)   /* fp16: divide before the sum (overflow) */
            ASH_COLL_CHECK(c, ash_coll__scale(c, e, dtype, buf, cnt, inv, stream));
        ASH_COLL_CHECK(c, ash_coll__nccl_reduce(c, n, buf, count, dtype, ncclSum, stream));
        if (dtype != ASH_COLL_F16)
            ASH_COLL_CHECK(c, ash_coll__scale(c, e, dtype, buf, cnt, inv, stream));
        return ASH_COLL_OK;
    }
    ASH_COLL_CHECK(c, ash_coll__nccl_ctx(c, n, &e));
    if (dtype == ASH_COLL_F32) {   /* f32 data, 16-bit wire */
        ASH_COLL_CHECK(c, ash_coll__scratch(c, e, count * 2, stream));
        s = e->scratch;
        ASH_COLL_CHECK(c, ash_coll__cast(c, e, wire == ASH_COLL_BF16 ? ASH_COLL_K_F32_TO_BF16
                                                                     : ASH_COLL_K_F32_TO_F16,
                                         buf, s, cnt, mean && wire == ASH_COLL_F16 ? inv : 1.0f,
                                         stream));
        ASH_COLL_CHECK(c, ash_coll__nccl_reduce(c, n, s, count, wire, ncclSum, stream));
        ASH_COLL_CHECK(c, ash_coll__cast(c, e, wire == ASH_COLL_BF16 ? ASH_COLL_K_BF16_TO_F32
                                                                     : ASH_COLL_K_F16_TO_F32,
                                         s, buf, cnt, mean && wire == ASH_COLL_BF16 ? inv : 1.0f,
                                         stream));
    } else {                       /* 16-bit data, f32 wire */
        ASH_COLL_CHECK(c, ash_coll__scratch(c, e, count * 4, stream));
        s = e->scratch;
        ASH_COLL_CHECK(c, ash_coll__cast(c, e, dtype == ASH_COLL_BF16 ? ASH_COLL_K_BF16_TO_F32
                                                                      : ASH_COLL_K_F16_TO_F32,
                                         buf, s, cnt, 1.0f, stream));
        ASH_COLL_CHECK(c, ash_coll__nccl_reduce(c, n, s, count, ASH_COLL_F32,
                                                mean && n->has_avg ? ncclAvg : ncclSum, stream));
        ASH_COLL_CHECK(c, ash_coll__cast(c, e, dtype == ASH_COLL_BF16 ? ASH_COLL_K_F32_TO_BF16
                                                                      : ASH_COLL_K_F32_TO_F16,
                                         s, buf, cnt, mean && !n->has_avg ? inv : 1.0f, stream));
    }
    return ash_coll__scratch_used(c, e, stream);
}

static ash_coll_status_t ash_coll__nccl_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes,
                                                  int root, CUstream stream)
{
    ash_coll_nccl_t *n = c->impl;
    void *v = (void *)(uintptr_t)buf;

    if (bytes == 0)
        return ASH_COLL_OK;
    return ash_coll__nccl_call(c, n, n->Broadcast(v, v, bytes, ncclUint8, root, n->comm,
                                                  (cudaStream_t)stream),
                               "ncclBroadcast");
}

static void ash_coll__nccl_fini(ash_coll_t *c)
{
    ash_coll_nccl_t *n = c->impl;

    if (!n)
        return;
    /* errors ignored below: at exit the app may already have destroyed its contexts */
    for (int i = 0; i < ASH_COLL_NCCL_MAX_CTX; i++) {
        ash_coll_nccl_ctx_t *e = &n->ctx[i];
        if (!e->ctx)
            continue;
        if (e->used_pending)
            (e->used && c->drv->cuEventSynchronize) ? c->drv->cuEventSynchronize(e->used)
                                                   : c->drv->cuStreamSynchronize(e->used_on);
        if (e->used && c->drv->cuEventDestroy_v2)
            c->drv->cuEventDestroy_v2(e->used);
        if (e->scratch)
            c->drv->cuMemFree_v2(e->scratch);
        if (e->mod)
            c->drv->cuModuleUnload(e->mod);
    }
    if (n->comm)
        (c->broken ? n->CommAbort : n->CommDestroy)(n->comm);
    free(n);
    c->impl = NULL;
}

/* ncclCommAbort once; fini then skips the communicator. Runs on the watchdog thread while the
 * stuck operation may still be queued: the process exits right after. */
static void ash_coll__nccl_abort(ash_coll_t *c)
{
    ash_coll_nccl_t *n = c->impl;
    ncclComm_t comm;

    if (!n || !(comm = __atomic_exchange_n(&n->comm, NULL, __ATOMIC_ACQ_REL)))
        return;
    n->CommAbort(comm);
}

/* ---- without MPI: host-side exchange and barrier through NCCL ---------------------------- */

ash_coll_status_t ash_coll__nccl_allgather_host(ash_coll_t *c, const void *send, size_t bytes, void *all)
{
    ash_coll_nccl_t *n = c->impl;
    ash_coll_nccl_ctx_t *e = NULL;
    CUdeviceptr d;
    size_t total = bytes * (size_t)c->world;
    ash_coll_status_t st = ASH_COLL_OK;
    ncclResult_t r;

    if (!n)
        return ASH_COLL_ESTATE;
    /* the context's scratch (no allocation per call: this runs before every collective with
     * check_collectives); the legacy stream, waited for on the host before returning */
    ASH_COLL_CHECK(c, ash_coll__nccl_ctx(c, n, &e));
    ASH_COLL_CHECK(c, ash_coll__scratch(c, e, total, NULL));
    d = e->scratch;
    if (c->drv->cuMemcpyHtoDAsync_v2(d + (size_t)c->rank * bytes, send, bytes, NULL) != CUDA_SUCCESS) {
        st = ASH_COLL_ECUDA;
    } else if ((r = n->AllGather((const void *)(uintptr_t)(d + (size_t)c->rank * bytes), (void *)(uintptr_t)d,
                                 bytes, ncclUint8, n->comm, NULL)) != ncclSuccess) {
        ash_coll__log(c, ASH_COLL_LOG_ERROR, "collectives: ncclAllGather failed: %s", ash_coll__nccl_err(n, r));
        st = ASH_COLL_ENCCL;
    } else if (c->drv->cuMemcpyDtoHAsync_v2(all, d, total, NULL) != CUDA_SUCCESS ||
               c->drv->cuStreamSynchronize(NULL) != CUDA_SUCCESS) {
        st = ASH_COLL_ECUDA;
    }
    if (st != ASH_COLL_OK)
        c->broken = 1;
    return st;
}

static ash_coll_status_t ash_coll__nccl_barrier(ash_coll_t *c)
{
    if (!c->no_mpi)
        return ash_coll__barrier_mpi(c);
    unsigned char me = 1, *all = malloc((size_t)c->world);
    if (!all)
        return ASH_COLL_ENOMEM;
    ash_coll_status_t st = ash_coll__nccl_allgather_host(c, &me, 1, all);
    free(all);
    return st;
}

const ash_coll_ops_t ash_coll_nccl_ops = {
    .name = "nccl",
    .init = ash_coll__nccl_init,
    .allreduce = ash_coll__nccl_allreduce,
    .broadcast = ash_coll__nccl_broadcast,
    .barrier = ash_coll__nccl_barrier,
    .fini = ash_coll__nccl_fini,
    .abort = ash_coll__nccl_abort,
};
