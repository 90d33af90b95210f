/* hostnccl.c — a test double of libnccl.so.2 on hostcuda memory, over MPI (test-only).
 *
 * Implements exactly the NCCL calls the collectives' nccl backend uses, with nccl.h signatures:
 * ncclGetVersion, ncclGetUniqueId, ncclCommInitRank, ncclAllReduce, ncclBroadcast,
 * ncclCommDestroy, ncclCommAbort, ncclGetErrorString (+ ncclGetLastError). Operations are
 * stream-ordered like real NCCL: each is enqueued with cuLaunchHostFunc on the given stream and
 * runs in the callback on hostcuda's stream worker, reading/writing device memory through
 * hostcuda_host_view(). Reduction is deterministic and identical on every rank: all ranks'
 * inputs are allgathered and combined in rank order, one f32 add + one rounding per step for
 * 16-bit types; operations of one communicator run in issue order across streams, as in NCCL;
 * ncclAvg on floats pre-multiplies each input by 1/nranks rounded to the type, as
 * NCCL's PreMulSum does. Needs MPI initialised with MPI_THREAD_MULTIPLE (callbacks call MPI).
 * Env: HOSTNCCL_VERSION (default 22809) to exercise the caller's pre-2.10 path (no ncclAvg).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <mpi.h>
#include <nccl.h>

#include "../../collectives/ash_coll_cast.h"

#if defined(__has_include)
#if __has_include("hostcuda.h")
#include "hostcuda.h"
#define HOSTNCCL_HAVE_HOSTCUDA_H 1
#endif
#endif
#ifndef HOSTNCCL_HAVE_HOSTCUDA_H
void *hostcuda_host_view(CUdeviceptr p);
#endif

#define HOSTNCCL_API __attribute__((visibility("default")))

struct ncclComm {
    int rank, nranks;
    MPI_Comm mpi;          /* dup of MPI_COMM_WORLD; MPI_COMM_NULL for one rank */
    ncclResult_t async_error;
    /* operations run in issue order even when issued on different streams (as NCCL serialises
     * the work of one communicator): a ticket per op, run when its number comes up */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned long long issued, done;
};

static __thread char hostnccl_last_error[256];

static ncclResult_t hostnccl_fail(ncclResult_t r, const char *fmt, const char *arg)
{
    snprintf(hostnccl_last_error, sizeof hostnccl_last_error, fmt, arg);
    fprintf(stderr, "hostnccl: %s\n", hostnccl_last_error);
    return r;
}

HOSTNCCL_API ncclResult_t ncclGetVersion(int *version)
{
    const char *v = getenv("HOSTNCCL_VERSION");
    if (!version)
        return ncclInvalidArgument;
    *version = v && *v ? atoi(v) : 22809;
    return ncclSuccess;
}

HOSTNCCL_API const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (hostnccl)";
    case ncclSystemError: return "unhandled system error (hostnccl)";
    case ncclInternalError: return "internal error (hostnccl)";
    case ncclInvalidArgument: return "invalid argument (hostnccl)";
    case ncclInvalidUsage: return "invalid usage (hostnccl)";
    default: return "unknown result code (hostnccl)";
    }
}

HOSTNCCL_API const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return hostnccl_last_error;
}

HOSTNCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "hostnccl:%ld:%ld", (long)getpid(),
             (long)random());
    return ncclSuccess;
}

HOSTNCCL_API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
    struct ncclComm *c;
    int inited = 0, size = 0, me = -1, level = 0, same = 0;
    unsigned long long h = 1469598103934665603ull, h0;

    if (!out || nranks < 1 || rank < 0 || rank >= nranks)
        return hostnccl_fail(ncclInvalidArgument, "ncclCommInitRank: bad arguments%s", "");
    c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->rank = rank;
    c->nranks = nranks;
    c->mpi = MPI_COMM_NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (nranks > 1) {
        MPI_Initialized(&inited);
        if (!inited) {
            free(c);
            return hostnccl_fail(ncclInvalidUsage, "MPI is not initialised%s", "");
        }
        MPI_Query_thread(&level);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (level != MPI_THREAD_MULTIPLE || size != nranks || me != rank) {
            free(c);
            return hostnccl_fail(ncclInvalidUsage, "needs MPI_THREAD_MULTIPLE and the world "
                                 "to match nranks/rank%s", "");
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi);
        /* every rank must have received rank 0's id (the caller's broadcast) */
        for (size_t i = 0; i < sizeof id.internal; i++)
            h = (h ^ (unsigned char)id.internal[i]) * 1099511628211ull;
        h0 = h;
        MPI_Bcast(&h0, 1, MPI_UNSIGNED_LONG_LONG, 0, c->mpi);
        same = h0 == h;
        MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, c->mpi);
        if (!same) {
            MPI_Comm_free(&c->mpi);
            free(c);
            return hostnccl_fail(ncclInvalidUsage, "ranks passed different unique ids%s", "");
        }
    }
    *out = c;
    return ncclSuccess;
}

static ncclResult_t hostnccl_free(ncclComm_t c)
{
    if (!c)
        return ncclInvalidArgument;
    if (c->mpi != MPI_COMM_NULL)
        MPI_Comm_free(&c->mpi);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    return ncclSuccess;
}

HOSTNCCL_API ncclResult_t ncclCommDestroy(ncclComm_t c) { return hostnccl_free(c); }
HOSTNCCL_API ncclResult_t ncclCommAbort(ncclComm_t c) { return hostnccl_free(c); }

/* ---- stream-ordered operations ------------------------------------------------------------ */

typedef struct hostnccl_op {
    int is_bcast;
    void *send, *recv;     /* host views of the device buffers */
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int root;
    unsigned long long ticket;
    struct ncclComm *comm;
} hostnccl_op;

static size_t hostnccl_type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclFloat32: case ncclInt32: case ncclUint32: return 4;
    default: return 0;
    }
}

static float hostnccl_load(ncclDataType_t t, const void *p, size_t i)
{
    if (t == ncclFloat32)
        return ((const float *)p)[i];
    if (t == ncclBfloat16)
        return ash_coll_bf16_to_f32(((const uint16_t *)p)[i]);
    return ash_coll_f16_to_f32(((const uint16_t *)p)[i]);
}

static void hostnccl_store(ncclDataType_t t, void *p, size_t i, float v)
{
    if (t == ncclFloat32)
        ((float *)p)[i] = v;
    else if (t == ncclBfloat16)
        ((uint16_t *)p)[i] = ash_coll_f32_to_bf16_rn(v);
    else
        ((uint16_t *)p)[i] = ash_coll_f32_to_f16_rn(v);
}

/* round a float to the type (identity for f32) */
static float hostnccl_round(ncclDataType_t t, float v)
{
    if (t == ncclBfloat16)
        return ash_coll_bf16_to_f32(ash_coll_f32_to_bf16_rn(v));
    if (t == ncclFloat16)
        return ash_coll_f16_to_f32(ash_coll_f32_to_f16_rn(v));
    return v;
}

static void hostnccl_run_op(hostnccl_op *o);

static void hostnccl_run(void *arg)
{
    hostnccl_op *o = arg;
    struct ncclComm *c = o->comm;

    pthread_mutex_lock(&c->mu);
    while (c->done != o->ticket)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    hostnccl_run_op(o);   /* frees o */
    pthread_mutex_lock(&c->mu);
    c->done++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void hostnccl_run_op(hostnccl_op *o)
{
    struct ncclComm *c = o->comm;
    size_t es = hostnccl_type_size(o->type), bytes = o->count * es;

    if (o->is_bcast) {
        if (c->rank == o->root && o->send != o->recv)
            memmove(o->recv, o->send, bytes);
        if (c->mpi != MPI_COMM_NULL)
            MPI_Bcast(o->recv, (int)bytes, MPI_BYTE, o->root, c->mpi);
    } else {
        char *all = malloc(bytes * (size_t)c->nranks);
        float scale = hostnccl_round(o->type, 1.0f / (float)c->nranks);
        if (!all) {
            c->async_error = ncclSystemError;
            free(o);
            return;
        }
        if (c->mpi != MPI_COMM_NULL)
            MPI_Allgather(o->send, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, c->mpi);
        else
            memcpy(all, o->send, bytes);
        for (size_t i = 0; i < o->count; i++) {
            float acc = 0.0f;
            for (int r = 0; r < c->nranks; r++) {
                float x = hostnccl_load(o->type, all + (size_t)r * bytes, i);
                if (o->op == ncclAvg)
                    x = hostnccl_round(o->type, x * scale);
                acc = r == 0 ? x : hostnccl_round(o->type, acc + x);
            }
            hostnccl_store(o->type, o->recv, i, acc);
        }
        free(all);
    }
    free(o);
}

static ncclResult_t hostnccl_enqueue(hostnccl_op *o, const void *send, void *recv,
                                     cudaStream_t stream)
{
    CUresult r;

    o->send = hostcuda_host_view((CUdeviceptr)(uintptr_t)send);
    o->recv = hostcuda_host_view((CUdeviceptr)(uintptr_t)recv);
    if (!o->comm || !o->recv || (!o->send && (!o->is_bcast || o->comm->rank == o->root)) ||
        hostnccl_type_size(o->type) == 0 || o->count * hostnccl_type_size(o->type) > INT32_MAX) {
        free(o);
        return hostnccl_fail(ncclInvalidArgument, "bad buffer, type or size%s "
                             "(buffers must be hostcuda device memory)", "");
    }
    if (o->comm->async_error != ncclSuccess) {
        ncclResult_t e = o->comm->async_error;
        free(o);
        return e;
    }
    struct ncclComm *c = o->comm;
    pthread_mutex_lock(&c->mu);
    o->ticket = c->issued++;
    pthread_mutex_unlock(&c->mu);
    r = cuLaunchHostFunc((CUstream)stream, hostnccl_run, o);
    if (r != CUDA_SUCCESS) {
        /* retire the unused ticket in turn, so later operations are not left waiting */
        pthread_mutex_lock(&c->mu);
        while (c->done != o->ticket)
            pthread_cond_wait(&c->cv, &c->mu);
        c->done++;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        free(o);
        return hostnccl_fail(ncclUnhandledCudaError, "cuLaunchHostFunc failed%s", "");
    }
    return ncclSuccess;
}

HOSTNCCL_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream)
{
    hostnccl_op *o;

    if ((op != ncclSum && op != ncclAvg) ||
        (datatype != ncclFloat32 && datatype != ncclFloat16 && datatype != ncclBfloat16))
        return hostnccl_fail(ncclInvalidArgument, "ncclAllReduce: op/type not implemented "
                             "by the test double%s", "");
    if (count == 0)
        return ncclSuccess;
    o = calloc(1, sizeof *o);
    if (!o)
        return ncclSystemError;
    *o = (hostnccl_op){.count = count, .type = datatype, .op = op, .comm = comm};
    return hostnccl_enqueue(o, sendbuff, recvbuff, stream);
}

HOSTNCCL_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                        ncclDataType_t datatype, int root, ncclComm_t comm,
                                        cudaStream_t stream)
{
    hostnccl_op *o;

    if (!comm || root < 0 || root >= comm->nranks)
        return hostnccl_fail(ncclInvalidArgument, "ncclBroadcast: bad root%s", "");
    if (count == 0)
        return ncclSuccess;
    o = calloc(1, sizeof *o);
    if (!o)
        return ncclSystemError;
    *o = (hostnccl_op){.is_bcast = 1, .count = count, .type = datatype, .root = root,
                       .comm = comm};
    return hostnccl_enqueue(o, sendbuff, recvbuff, stream);
}
