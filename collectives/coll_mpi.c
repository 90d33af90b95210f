/* coll_mpi.c — the "mpi" backend: host-staged all-reduce / broadcast over a private MPI comm.
 *
 * All-reduce, pipelined over two pinned slots of at most ASH_COLL_PIPE_BYTES (and half of cfg
 * staging_bytes) each: chunk k is copied DtoH into slot k%2 on the app's stream and an event
 * recorded after it; the host waits for that event (so the app's earlier work is included), casts
 * on the CPU if the wire differs, all-reduces, casts back, and queues the HtoD of chunk k and the
 * DtoH of chunk k+2 into the same slot — the stream's order makes that DtoH wait for the HtoD
 * that reads the slot. So chunk k+1 is copied in, and chunk k out, while the host reduces (on a
 * GPU the copy engines work beside MPI). Without events (a minimal driver table) one chunk at a
 * time, stream-synchronised. Broadcast: one chunk at a time. The last HtoD is NOT waited for: the
 * app's next launch on that stream is ordered after it; an event recorded after it guards the
 * pinned buffer, and the next operation synchronises on that event before touching it.
 * Bit-identity: MPI requires every process of MPI_Allreduce to receive identical results (MPI-1.1
 * §4.9.5 onward, user-defined ops included), and our 16-bit ops are exactly commutative (f32 add
 * of two values, one rounding), so every rank ends with the same bits. Threading: one caller at
 * a time per communicator. Callers: coll.c through ash_coll_mpi_ops.
 * Must not: wait for the last HtoD (the app's next launch on the stream is ordered after it); touch
 * a pinned slot before the event that guards it completed; call CUDA except through the caller's
 * driver table; use MPI_COMM_WORLD (it works on the private communicator).
 */
#include <stdint.h>
#include <stdlib.h>

#include "ash_coll_cast.h"
#include "ash_coll_int.h"

#define ASH_COLL_PIPE_BYTES ((size_t)4 << 20) /* one pipeline slot; two are in flight */

typedef struct ash_coll_mpi {
    void *host;             /* pinned staging buffer (real cuMemAllocHost), grown and reused */
    size_t host_bytes;
    CUevent copied[2];      /* all-reduce pipeline: recorded after the DtoH into slot 0 / 1 */
    CUevent done;           /* recorded after the last HtoD that read `host` */
    int pending;            /* `done` recorded and not yet waited for */
    int have_ops;
    MPI_Op op_bf16, op_f16; /* user ops on MPI_UINT16_T: add in f32, round to nearest even */
} ash_coll_mpi_t;

/* ---- user-defined reductions (commutative: a+b and b+a are the same f32, one rounding) ---- */

static void ash_coll__sum_bf16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint16_t *a = in;
    uint16_t *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        b[i] = ash_coll_f32_to_bf16_rn(ash_coll_bf16_to_f32(a[i]) + ash_coll_bf16_to_f32(b[i]));
}

static void ash_coll__sum_f16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const uint16_t *a = in;
    uint16_t *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        b[i] = ash_coll_f32_to_f16_rn(ash_coll_f16_to_f32(a[i]) + ash_coll_f16_to_f32(b[i]));
}

/* ---- host casts, in place in the staging buffer ------------------------------------------ */

/* f32 -> 16 bit, forward: element i (bytes 2i..2i+1) never overlaps an unread f32 (4j, j > i). */
static void ash_coll__down(void *buf, size_t n, ash_coll_dtype_t to, float scale)
{
    const float *f = buf;
    uint16_t *h = buf;
    if (to == ASH_COLL_BF16)
        for (size_t i = 0; i < n; i++)
            h[i] = ash_coll_f32_to_bf16_rn(f[i] * scale);
    else
        for (size_t i = 0; i < n; i++)
            h[i] = ash_coll_f32_to_f16_rn(f[i] * scale);
}

/* 16 bit -> f32, backward: writing f32 i clobbers 16-bit 2i, 2i+1 (> i, already read) or i. */
static void ash_coll__up(void *buf, size_t n, ash_coll_dtype_t from, float scale)
{
    const uint16_t *h = buf;
    float *f = buf;
    if (scale == 1.0f) {   /* no arithmetic: NaN payloads pass through as in the GPU kernels */
        if (from == ASH_COLL_BF16)
            for (size_t i = n; i-- > 0;)
                f[i] = ash_coll_bf16_to_f32(h[i]);
        else
            for (size_t i = n; i-- > 0;)
                f[i] = ash_coll_f16_to_f32(h[i]);
        return;
    }
    if (from == ASH_COLL_BF16)
        for (size_t i = n; i-- > 0;)
            f[i] = ash_coll_bf16_to_f32(h[i]) * scale;
    else
        for (size_t i = n; i-- > 0;)
            f[i] = ash_coll_f16_to_f32(h[i]) * scale;
}

/* 16 bit in place: x = rn(x * scale) */
static void ash_coll__scale16(void *buf, size_t n, ash_coll_dtype_t t, float scale)
{
    uint16_t *h = buf;
    if (t == ASH_COLL_BF16)
        for (size_t i = 0; i < n; i++)
            h[i] = ash_coll_f32_to_bf16_rn(ash_coll_bf16_to_f32(h[i]) * scale);
    else
        for (size_t i = 0; i < n; i++)
            h[i] = ash_coll_f32_to_f16_rn(ash_coll_f16_to_f32(h[i]) * scale);
}

/* ---- staging ----------------------------------------------------------------------------- */

static ash_coll_status_t ash_coll__stage_idle(ash_coll_t *c, ash_coll_mpi_t *m)
{
    if (m->pending) {
        m->pending = 0;
        ASH_COLL_CU(c, c->drv->cuEventSynchronize(m->done));
    }
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__stage_reserve(ash_coll_t *c, ash_coll_mpi_t *m, size_t bytes)
{
    size_t want;

    ASH_COLL_CHECK(c, ash_coll__stage_idle(c, m));
    if (m->host_bytes >= bytes)
        return ASH_COLL_OK;
    want = m->host_bytes * 2 > bytes ? m->host_bytes * 2 : bytes;
    if (want > c->staging_bytes && bytes <= c->staging_bytes)
        want = c->staging_bytes;
    if (m->host) {
        c->drv->cuMemFreeHost(m->host);
        m->host = NULL;
        m->host_bytes = 0;
    }
    ASH_COLL_CU(c, c->drv->cuMemAllocHost_v2(&m->host, want));
    m->host_bytes = want;
    return ASH_COLL_OK;
}

/* After the last HtoD on `stream`: guard the staging buffer with an event, or wait outright. */
static ash_coll_status_t ash_coll__stage_done(ash_coll_t *c, ash_coll_mpi_t *m, CUstream stream)
{
    if (c->drv->cuEventCreate && c->drv->cuEventRecord && c->drv->cuEventSynchronize) {
        if (!m->done)
            ASH_COLL_CU(c, c->drv->cuEventCreate(&m->done, CU_EVENT_DISABLE_TIMING));
        ASH_COLL_CU(c, c->drv->cuEventRecord(m->done, stream));
        m->pending = 1;
        return ASH_COLL_OK;
    }
    ASH_COLL_CU(c, c->drv->cuStreamSynchronize(stream));
    return ASH_COLL_OK;
}

/* ---- the host-side reduction of one staged chunk ----------------------------------------- */

static ash_coll_status_t ash_coll__iallreduce(ash_coll_t *c, void *buf, size_t n, MPI_Datatype dt,
                                              MPI_Op op)
{
    MPI_Request req;
    int rc;

    if (c->comm == ASH_COLL_NO_COMM)
        return ASH_COLL_OK;   /* world 1: the sum of one contribution is itself */
    if (c->timeout_s <= 0) {   /* no deadline of ours: MPI's blocking (tuned) algorithm */
        rc = ASH_MPI(Allreduce)(MPI_IN_PLACE, buf, (int)n, dt, op, c->comm);
        return rc == MPI_SUCCESS ? ASH_COLL_OK : ash_coll__mpi_fail(c, rc, "MPI_Allreduce");
    }
    rc = ASH_MPI(Iallreduce)(MPI_IN_PLACE, buf, (int)n, dt, op, c->comm, &req);
    if (rc != MPI_SUCCESS)
        return ash_coll__mpi_fail(c, rc, "MPI_Iallreduce");
    return ash_coll__mpi_wait(c, &req, "MPI_Iallreduce");
}

static ash_coll_status_t ash_coll__reduce_host(ash_coll_t *c, ash_coll_mpi_t *m, void *b, size_t n,
                                               ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                               ash_coll_redop_t op)
{
    float inv = 1.0f / (float)c->world;
    int mean = op == ASH_COLL_MEAN;
    MPI_Op op16 = wire == ASH_COLL_BF16 ? m->op_bf16 : m->op_f16;

    if (dtype == ASH_COLL_F32 && wire == ASH_COLL_F32) {
        ASH_COLL_CHECK(c, ash_coll__iallreduce(c, b, n, MPI_FLOAT, MPI_SUM));
        if (mean)
            for (size_t i = 0; i < n; i++)
                ((float *)b)[i] *= inv;
    } else if (dtype == ASH_COLL_F32) {
        /* fp16 wire divides before the sum (no overflow), bf16 after */
        ash_coll__down(b, n, wire, mean && wire == ASH_COLL_F16 ? inv : 1.0f);
        ASH_COLL_CHECK(c, ash_coll__iallreduce(c, b, n, MPI_UINT16_T, op16));
        ash_coll__up(b, n, wire, mean && wire == ASH_COLL_BF16 ? inv : 1.0f);
    } else if (wire == dtype) {
        if (mean && dtype == ASH_COLL_F16)
            ash_coll__scale16(b, n, dtype, inv);
        ASH_COLL_CHECK(c, ash_coll__iallreduce(c, b, n, MPI_UINT16_T,
                                               dtype == ASH_COLL_BF16 ? m->op_bf16 : m->op_f16));
        if (mean && dtype == ASH_COLL_BF16)
            ash_coll__scale16(b, n, dtype, inv);
    } else {   /* 16-bit data, f32 wire: upcast, reduce in f32, downcast (scale in f32) */
        ash_coll__up(b, n, dtype, 1.0f);
        ASH_COLL_CHECK(c, ash_coll__iallreduce(c, b, n, MPI_FLOAT, MPI_SUM));
        ash_coll__down(b, n, dtype, mean ? inv : 1.0f);
    }
    return ASH_COLL_OK;
}

/* ---- ops --------------------------------------------------------------------------------- */

static ash_coll_status_t ash_coll__mpi_init(ash_coll_t *c, const ash_coll_config_t *cfg)
{
    ash_coll_mpi_t *m = calloc(1, sizeof *m);
    (void)cfg;
    if (!m)
        return ASH_COLL_ENOMEM;
    if (c->comm != ASH_COLL_NO_COMM) {
        if (ASH_MPI(Op_create)(ash_coll__sum_bf16, 1, &m->op_bf16) != MPI_SUCCESS ||
            ASH_MPI(Op_create)(ash_coll__sum_f16, 1, &m->op_f16) != MPI_SUCCESS) {
            free(m);
            return ASH_COLL_EMPI;
        }
        m->have_ops = 1;
    }
    c->impl = m;
    return ASH_COLL_OK;
}

/* The events of the pipeline; 0 when this driver table cannot record them (no pipelining). */
static int ash_coll__pipe_events(ash_coll_t *c, ash_coll_mpi_t *m)
{
    if (!c->drv->cuEventCreate || !c->drv->cuEventRecord || !c->drv->cuEventSynchronize)
        return 0;
    for (int i = 0; i < 2; i++)
        if (!m->copied[i] && c->drv->cuEventCreate(&m->copied[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
            return 0;
    return 1;
}

/* The pipeline proper (see the file comment): ceil(count / chunk) chunks of `chunk` elements
 * through two slots of `slot` bytes at m->host. */
static ash_coll_status_t ash_coll__pipeline(ash_coll_t *c, ash_coll_mpi_t *m, CUdeviceptr buf,
                                            size_t count, ash_coll_dtype_t dtype,
                                            ash_coll_dtype_t wire, ash_coll_redop_t op,
                                            CUstream stream, size_t chunk, size_t slot)
{
    size_t es = ash_coll_dtype_size(dtype), nchunks = (count + chunk - 1) / chunk;

    for (size_t k = 0; k < nchunks + 2; k++) {
        /* chunk k - 2 is reduced (slot k % 2) ... */
        if (k >= 2) {
            size_t r = k - 2, off = r * chunk, n = count - off < chunk ? count - off : chunk;
            char *h = (char *)m->host + (r % 2) * slot;
            ASH_COLL_CU(c, c->drv->cuEventSynchronize(m->copied[r % 2]));
            ASH_COLL_CHECK(c, ash_coll__reduce_host(c, m, h, n, dtype, wire, op));
            ASH_COLL_CU(c, c->drv->cuMemcpyHtoDAsync_v2(buf + off * es, h, n * es, stream));
        }
        /* ... then chunk k is copied into the same slot, after the HtoD that reads it */
        if (k < nchunks) {
            size_t off = k * chunk, n = count - off < chunk ? count - off : chunk;
            char *h = (char *)m->host + (k % 2) * slot;
            ASH_COLL_CU(c, c->drv->cuMemcpyDtoHAsync_v2(h, buf + off * es, n * es, stream));
            ASH_COLL_CU(c, c->drv->cuEventRecord(m->copied[k % 2], stream));
        }
    }
    return ASH_COLL_OK;
}

static ash_coll_status_t ash_coll__mpi_allreduce(ash_coll_t *c, CUdeviceptr buf, size_t count,
                                                 ash_coll_dtype_t dtype, ash_coll_dtype_t wire,
                                                 ash_coll_redop_t op, CUstream stream)
{
    ash_coll_mpi_t *m = c->impl;
    size_t es, unit, chunk, nchunks, slot;

    ASH_COLL_CHECK(c, ash_coll__check_allreduce(c, buf, count, dtype, &wire, op));
    if (count == 0)
        return ASH_COLL_OK;
    es = ash_coll_dtype_size(dtype);
    unit = es > ash_coll_dtype_size(wire) ? es : ash_coll_dtype_size(wire);
    chunk = (c->staging_bytes / 2 < ASH_COLL_PIPE_BYTES ? c->staging_bytes / 2 : ASH_COLL_PIPE_BYTES) / unit;
    if (chunk == 0)
        chunk = 1;
    nchunks = (count + chunk - 1) / chunk;
    if (nchunks == 1 || !ash_coll__pipe_events(c, m)) {   /* one chunk at a time */
        chunk = c->staging_bytes / unit;
        if (chunk > count)
            chunk = count;
        ASH_COLL_CHECK(c, ash_coll__stage_reserve(c, m, chunk * unit));
        for (size_t off = 0, n; off < count; off += n) {
            CUdeviceptr d = buf + off * es;
            n = count - off < chunk ? count - off : chunk;
            /* same stream: this DtoH also runs after the previous chunk's HtoD read the buffer */
            ASH_COLL_CU(c, c->drv->cuMemcpyDtoHAsync_v2(m->host, d, n * es, stream));
            ASH_COLL_CU(c, c->drv->cuStreamSynchronize(stream));
            ASH_COLL_CHECK(c, ash_coll__reduce_host(c, m, m->host, n, dtype, wire, op));
            ASH_COLL_CU(c, c->drv->cuMemcpyHtoDAsync_v2(d, m->host, n * es, stream));
        }
        return ash_coll__stage_done(c, m, stream);
    }
    slot = chunk * unit;
    ASH_COLL_CHECK(c, ash_coll__stage_reserve(c, m, 2 * slot));
    ash_coll_status_t st = ash_coll__pipeline(c, m, buf, count, dtype, wire, op, stream, chunk, slot);
    if (st != ASH_COLL_OK) {
        /* copies may still be queued into the slots: guard them like a finished operation's,
         * so that nothing frees or reuses the staging buffer under them */
        (void)ash_coll__stage_done(c, m, stream);
        return st;
    }
    return ash_coll__stage_done(c, m, stream);
}

static ash_coll_status_t ash_coll__mpi_broadcast(ash_coll_t *c, CUdeviceptr buf, size_t bytes,
                                                 int root, CUstream stream)
{
    ash_coll_mpi_t *m = c->impl;
    size_t chunk = bytes < c->staging_bytes ? bytes : c->staging_bytes, n;
    MPI_Request req;
    int rc;

    if (bytes == 0 || c->comm == ASH_COLL_NO_COMM)
        return ASH_COLL_OK;   /* world 1: root's bytes are already everyone's */
    ASH_COLL_CHECK(c, ash_coll__stage_reserve(c, m, chunk));
    for (size_t off = 0; off < bytes; off += n) {
        n = bytes - off < chunk ? bytes - off : chunk;
        if (c->rank == root)
            ASH_COLL_CU(c, c->drv->cuMemcpyDtoHAsync_v2(m->host, buf + off, n, stream));
        ASH_COLL_CU(c, c->drv->cuStreamSynchronize(stream));
        if (c->timeout_s <= 0) {
            rc = ASH_MPI(Bcast)(m->host, (int)n, MPI_BYTE, root, c->comm);
            if (rc != MPI_SUCCESS)
                return ash_coll__mpi_fail(c, rc, "MPI_Bcast");
        } else {
            rc = ASH_MPI(Ibcast)(m->host, (int)n, MPI_BYTE, root, c->comm, &req);
            if (rc != MPI_SUCCESS)
                return ash_coll__mpi_fail(c, rc, "MPI_Ibcast");
            ASH_COLL_CHECK(c, ash_coll__mpi_wait(c, &req, "MPI_Ibcast"));
        }
        if (c->rank != root)
            ASH_COLL_CU(c, c->drv->cuMemcpyHtoDAsync_v2(buf + off, m->host, n, stream));
    }
    return c->rank != root ? ash_coll__stage_done(c, m, stream) : ASH_COLL_OK;
}

ash_coll_status_t ash_coll__barrier_mpi(ash_coll_t *c)
{
    MPI_Request req;
    int rc;

    if (c->comm == ASH_COLL_NO_COMM)
        return ASH_COLL_OK;
    rc = ASH_MPI(Ibarrier)(c->comm, &req);
    if (rc != MPI_SUCCESS)
        return ash_coll__mpi_fail(c, rc, "MPI_Ibarrier");
    return ash_coll__mpi_wait(c, &req, "MPI_Ibarrier");
}

static void ash_coll__mpi_fini(ash_coll_t *c)
{
    ash_coll_mpi_t *m = c->impl;

    if (!m)
        return;
    if (m->pending)
        c->drv->cuEventSynchronize(m->done);   /* errors ignored: the context may be gone */
    if (c->drv->cuEventDestroy_v2) {
        if (m->done)
            c->drv->cuEventDestroy_v2(m->done);
        for (int i = 0; i < 2; i++)
            if (m->copied[i])
                c->drv->cuEventDestroy_v2(m->copied[i]);
    }
    if (m->host)
        c->drv->cuMemFreeHost(m->host);
    if (m->have_ops) {
        ASH_MPI(Op_free)(&m->op_bf16);
        ASH_MPI(Op_free)(&m->op_f16);
    }
    free(m);
    c->impl = NULL;
}

const ash_coll_ops_t ash_coll_mpi_ops = {
    .name = "mpi",
    .init = ash_coll__mpi_init,
    .allreduce = ash_coll__mpi_allreduce,
    .broadcast = ash_coll__mpi_broadcast,
    .barrier = ash_coll__barrier_mpi,
    .fini = ash_coll__mpi_fini,
    .abort = ash_coll__abort_nothing,
};
