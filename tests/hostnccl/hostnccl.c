/* hostnccl.c — a test double of libnccl.so.2 on hostcuda memory, over MPI (test-only).
 *
 * Implements exactly the NCCL calls the collectives' nccl backend uses, with nccl.h signatures:
 * ncclGetVersion, ncclGetUniqueId, ncclCommInitRank, ncclAllReduce, ncclBroadcast,
 * ncclCommDestroy, ncclCommAbort, ncclCommGetAsyncError, ncclGetErrorString (+ ncclGetLastError). Operations are
 * stream-ordered like real NCCL: each is enqueued with cuLaunchHostFunc on the given stream and
 * runs in the callback on hostcuda's stream worker, reading/writing device memory through
 * hostcuda_host_view(). Reduction is deterministic and identical on every rank: all ranks'
 * inputs are allgathered and combined in rank order, one f32 add + one rounding per step for
 * 16-bit types; operations of one communicator run in issue order across streams, as in NCCL;
 * ncclAvg on floats pre-multiplies each input by 1/nranks rounded to the type, as
 * NCCL's PreMulSum does. Needs MPI initialised with MPI_THREAD_MULTIPLE (callbacks call MPI),
 * except with NCCL_COMM_ID=IP:PORT, as with real NCCL: then ncclGetUniqueId gives every rank the
 * same id, and ncclCommInitRank meets the others over TCP, rank 0 listening at that address (the
 * others retry for up to 60 s); data then goes through rank 0 (a star), no MPI at all (Open MPI
 * is opened only on the MPI path, through collectives/mpi_dl.c, so that case never maps it).
 * Also ncclAllGather (bytes). As strict as NCCL about pairing: the k-th collective of every
 * rank must be the same call, count and type (a header is swapped first; a mismatch fails the
 * call on every rank with ncclInvalidUsage and moves no data). Env: HOSTNCCL_VERSION (default 22809) to exercise the caller's
 * pre-2.10 path (no ncclAvg).
 * Must not: use a GPU or the real NCCL; reduce in an order that depends on arrival (rank order,
 * identical on every rank); run an operation outside its stream's order or a communicator's issue
 * order; open Open MPI on the NCCL_COMM_ID path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include "ash_coll_mpi.h"   /* MPI through collectives/mpi_dl.c: dlopen at first use */
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
    MPI_Comm mpi;          /* dup of MPI_COMM_WORLD; ASH_COLL_NO_COMM for one rank or TCP */
    int *fd;               /* TCP mode: rank 0 holds fd[r] for r >= 1; others fd[0]; else NULL */
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

#define HOSTNCCL_TCP "hostnccl-tcp:"

HOSTNCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    const char *addr = getenv("NCCL_COMM_ID");
    if (!id)
        return ncclInvalidArgument;
    memset(id, 0, sizeof *id);
    if (addr && *addr) {   /* as NCCL: the id names the address; every rank computes the same */
        snprintf(id->internal, sizeof id->internal, HOSTNCCL_TCP "%s", addr);
        return ncclSuccess;
    }
    snprintf(id->internal, sizeof id->internal, "hostnccl:%ld:%ld", (long)getpid(),
             (long)random());
    return ncclSuccess;
}

/* ---- TCP mode (NCCL_COMM_ID) ---------------------------------------------------------------- */

static ncclResult_t hostnccl_free(ncclComm_t c);

static int hostnccl_io(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;   /* a peer gone (EOF) or an error */
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int hostnccl_addr(const char *s, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 && atoi(colon + 1) > 0 ? 0 : -1;
}

/* Rank 0 listens at the address and takes nranks-1 peers (each says its rank); the others connect
 * (retrying for up to 60 s: rank 0 may start later). */
static ncclResult_t hostnccl_tcp_init(struct ncclComm *c, const char *addr)
{
    struct sockaddr_in sa;
    int one = 1, n = c->nranks;
    if (hostnccl_addr(addr, &sa) != 0)
        return hostnccl_fail(ncclInvalidArgument, "NCCL_COMM_ID \"%s\" is not IPv4:PORT", addr);
    c->fd = malloc((size_t)n * sizeof *c->fd);
    if (!c->fd)
        return ncclSystemError;
    for (int i = 0; i < n; i++)
        c->fd[i] = -1;
    if (c->rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, n) != 0) {
            if (ls >= 0)
                close(ls);
            return hostnccl_fail(ncclSystemError, "cannot listen at NCCL_COMM_ID %s", addr);
        }
        for (int k = 1; k < n; k++) {
            struct pollfd pf = {ls, POLLIN, 0};
            int32_t r = -1;
            int s = poll(&pf, 1, 60000) == 1 ? accept4(ls, NULL, NULL, SOCK_CLOEXEC) : -1;
            if (s < 0 || hostnccl_io(s, &r, sizeof r, 0) != 0 || r < 1 || r >= n || c->fd[r] >= 0) {
                if (s >= 0)
                    close(s);
                close(ls);
                return hostnccl_fail(ncclSystemError, "rendezvous at %s: a peer did not come in 60 s "
                                     "or said a bad rank", addr);
            }
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            c->fd[r] = s;
        }
        close(ls);
        return ncclSuccess;
    }
    const char *cs = getenv("HOSTNCCL_CONNECT_S"); /* tests: how long a peer tries (default 60) */
    time_t until = time(NULL) + (cs && atoi(cs) > 0 ? atoi(cs) : 60);
    for (;;) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
            int32_t r = c->rank;
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (hostnccl_io(s, &r, sizeof r, 1) != 0) {
                close(s);
                return hostnccl_fail(ncclSystemError, "rendezvous at %s: send failed", addr);
            }
            c->fd[0] = s;
            return ncclSuccess;
        }
        if (s >= 0)
            close(s);
        if (time(NULL) >= until)
            return hostnccl_fail(ncclSystemError, "rendezvous at %s: rank 0 not reachable in 60 s", addr);
        usleep(100 * 1000);
    }
}

/* Every rank's `bytes` from `send`, in rank order, into `all` (nranks * bytes): MPI, TCP (through
 * rank 0) or, for one rank, a copy. 0 or -1 (a peer gone). */
static int hostnccl_allgather(struct ncclComm *c, const void *send, size_t bytes, char *all)
{
    if (c->mpi != ASH_COLL_NO_COMM)   /* in place when send is this rank's slot (MPI forbids aliasing) */
        return ASH_MPI(Allgather)(send == all + (size_t)c->rank * bytes ? MPI_IN_PLACE : send, (int)bytes, MPI_BYTE,
                             all, (int)bytes, MPI_BYTE, c->mpi) == MPI_SUCCESS ? 0 : -1;
    if (send != all + (size_t)c->rank * bytes)
        memmove(all + (size_t)c->rank * bytes, send, bytes);
    if (!c->fd)
        return 0;
    if (c->rank != 0)
        return hostnccl_io(c->fd[0], all + (size_t)c->rank * bytes, bytes, 1) != 0 ||
               hostnccl_io(c->fd[0], all, bytes * (size_t)c->nranks, 0) != 0 ? -1 : 0;
    for (int r = 1; r < c->nranks; r++)
        if (hostnccl_io(c->fd[r], all + (size_t)r * bytes, bytes, 0) != 0)
            return -1;
    for (int r = 1; r < c->nranks; r++)
        if (hostnccl_io(c->fd[r], all, bytes * (size_t)c->nranks, 1) != 0)
            return -1;
    return 0;
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
    c->mpi = ASH_COLL_NO_COMM;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (nranks > 1 && !strncmp(id.internal, HOSTNCCL_TCP, strlen(HOSTNCCL_TCP))) {
        ncclResult_t r = hostnccl_tcp_init(c, id.internal + strlen(HOSTNCCL_TCP));
        if (r != ncclSuccess) {
            hostnccl_free(c);
            return r;
        }
    } else if (nranks > 1) {
        char why[200];   /* fits hostnccl_last_error with the prefix */
        if (ash_coll__mpi_load(why, sizeof why) != 0) {
            free(c);
            return hostnccl_fail(ncclSystemError, "ncclCommInitRank: %s", why);
        }
        ASH_MPI(Initialized)(&inited);
        if (!inited) {
            free(c);
            return hostnccl_fail(ncclInvalidUsage, "MPI is not initialised%s", "");
        }
        ASH_MPI(Query_thread)(&level);
        ASH_MPI(Comm_size)(MPI_COMM_WORLD, &size);
        ASH_MPI(Comm_rank)(MPI_COMM_WORLD, &me);
        if (level != MPI_THREAD_MULTIPLE || size != nranks || me != rank) {
            free(c);
            return hostnccl_fail(ncclInvalidUsage, "needs MPI_THREAD_MULTIPLE and the world "
                                 "to match nranks/rank%s", "");
        }
        ASH_MPI(Comm_dup)(MPI_COMM_WORLD, &c->mpi);
        /* every rank must have received rank 0's id (the caller's broadcast) */
        for (size_t i = 0; i < sizeof id.internal; i++)
            h = (h ^ (unsigned char)id.internal[i]) * 1099511628211ull;
        h0 = h;
        ASH_MPI(Bcast)(&h0, 1, MPI_UNSIGNED_LONG_LONG, 0, c->mpi);
        same = h0 == h;
        ASH_MPI(Allreduce)(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, c->mpi);
        if (!same) {
            ASH_MPI(Comm_free)(&c->mpi);
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
    if (c->mpi != ASH_COLL_NO_COMM)
        ASH_MPI(Comm_free)(&c->mpi);
    for (int i = 0; c->fd && i < c->nranks; i++)
        if (c->fd[i] >= 0) {
            shutdown(c->fd[i], SHUT_RDWR);   /* peers blocked on us see EOF at once */
            close(c->fd[i]);
        }
    free(c->fd);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    return ncclSuccess;
}

HOSTNCCL_API ncclResult_t ncclCommDestroy(ncclComm_t c) { return hostnccl_free(c); }
HOSTNCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *async)
{
    if (!c || !async)
        return ncclInvalidArgument;
    *async = c->async_error;
    return ncclSuccess;
}
HOSTNCCL_API ncclResult_t ncclCommAbort(ncclComm_t c) { return hostnccl_free(c); }

/* ---- stream-ordered operations ------------------------------------------------------------ */

typedef struct hostnccl_op {
    int is_bcast, is_gather;
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

static const char *hostnccl_kind(unsigned long long k)
{
    return k == 1 ? "ncclBroadcast" : k == 2 ? "ncclAllGather" : "ncclAllReduce";
}

/* As NCCL requires, the k-th collective of every rank is the same call: kind, count, type, op,
 * root. The ranks swap a header first (fixed size, so a mismatch cannot shift the stream), and
 * every rank sees every header: on a mismatch all of them fail the call (ncclInvalidUsage, one
 * line naming the first rank that differs from rank 0) and move no data. 0 when all agree. */
static int hostnccl_same_call(struct ncclComm *c, const hostnccl_op *o)
{
    unsigned long long mine[4] = {(unsigned long long)(o->is_bcast ? 1 : o->is_gather ? 2 : 0),
                                  (unsigned long long)o->count, (unsigned long long)o->type,
                                  (unsigned long long)o->op | (unsigned long long)o->root << 8};
    unsigned long long *all = malloc(sizeof mine * (size_t)c->nranks);
    if (!all || hostnccl_allgather(c, mine, sizeof mine, (char *)all) != 0) {
        free(all);
        c->async_error = ncclSystemError;
        return -1;
    }
    for (int r = 1; r < c->nranks; r++) {
        const unsigned long long *a = all, *b = all + 4 * r;
        if (memcmp(a, b, sizeof mine) == 0)
            continue;
        fprintf(stderr, "hostnccl: rank %d: collective %llu does not match across ranks: rank 0 "
                "issued %s of %llu x type %llu (op/root %llu), rank %d %s of %llu x type %llu "
                "(op/root %llu); NCCL requires the same call, count and type on every rank\n",
                c->rank, o->ticket, hostnccl_kind(a[0]), a[1], a[2], a[3], r, hostnccl_kind(b[0]),
                b[1], b[2], b[3]);
        c->async_error = ncclInvalidUsage;
        free(all);
        return -1;
    }
    free(all);
    return 0;
}

static void hostnccl_run_op(hostnccl_op *o)
{
    struct ncclComm *c = o->comm;
    size_t es = hostnccl_type_size(o->type), bytes = o->count * es;

    if (c->nranks > 1 && (c->async_error != ncclSuccess || hostnccl_same_call(c, o) != 0)) {
        free(o);   /* a failed communicator moves no more data (every rank saw the mismatch) */
        return;
    }
    if (o->is_gather) {
        if (hostnccl_allgather(c, o->send, bytes, o->recv) != 0)
            c->async_error = ncclSystemError;
    } else if (o->is_bcast) {
        if (c->rank == o->root && o->send != o->recv)
            memmove(o->recv, o->send, bytes);
        if (c->mpi != ASH_COLL_NO_COMM) {
            ASH_MPI(Bcast)(o->recv, (int)bytes, MPI_BYTE, o->root, c->mpi);
        } else if (c->fd) {   /* TCP: everyone's copy through rank 0, then the root's */
            char *all = malloc(bytes * (size_t)c->nranks);
            if (!all || hostnccl_allgather(c, o->recv, bytes, all) != 0)
                c->async_error = ncclSystemError;
            else
                memcpy(o->recv, all + (size_t)o->root * bytes, bytes);
            free(all);
        }
    } else {
        char *all = malloc(bytes * (size_t)c->nranks);
        float scale = hostnccl_round(o->type, 1.0f / (float)c->nranks);
        if (!all) {
            c->async_error = ncclSystemError;
            free(o);
            return;
        }
        if (hostnccl_allgather(c, o->send, bytes, all) != 0) {
            c->async_error = ncclSystemError;
            free(all);
            free(o);
            return;
        }
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

HOSTNCCL_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                        ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    hostnccl_op *o;

    if (sendcount == 0)
        return ncclSuccess;
    o = calloc(1, sizeof *o);
    if (!o)
        return ncclSystemError;
    *o = (hostnccl_op){.is_gather = 1, .count = sendcount, .type = datatype, .comm = comm};
    return hostnccl_enqueue(o, sendbuff, recvbuff, stream);
}
