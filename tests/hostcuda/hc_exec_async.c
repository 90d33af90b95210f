/* hc_exec_async.c — the interpreter's asynchronous copies (cp.async, cp.async.bulk), mbarriers and brx.idx.
 *
 * cp.async: a copy is checked (bounds, alignment) when it is issued and queued on its thread; it is
 * performed only when its thread waits for its group (cp.async.wait_group / wait_all), or when a
 * thread waits on an mbarrier that a cp.async.mbarrier.arrive of the issuing thread tracks them
 * with. Never at issue: a program that reads the destination before the wait sees the old bytes,
 * as it can on a GPU. The source is read when the copy is performed. Copies no one waits for are
 * dropped at the CTA's end. cp.async.bulk (no tensor map) the same way: into shared memory it is
 * performed, and completes its bytes on the mbarrier's tx-count, when a thread waits on that
 * mbarrier; out to global memory when its thread waits for its bulk group.
 * mbarrier: the 64-bit object in shared memory, laid out here as (opaque to programs, PTX ISA):
 *   bits  0..19 pending arrivals of the current phase, 20..39 expected arrivals per phase,
 *   40..61 tx-count (two's complement), 62 initialised, 63 the current phase's parity.
 * A phase completes when its pending arrivals and tx-count are both 0: the parity flips and the
 * pending count is reloaded. The state an arrive returns is the word just after that arrive,
 * before a completion (so its bit 63 names the phase the arrive belongs to, and its pending count
 * is what mbarrier.pending_count reads). test_wait / try_wait of a state completes when the
 * current parity differs from the state's; .parity waits for the phase of parity p: it completes
 * when the current parity is not p. A failed wait ends the warp's turn (the others run); when
 * every runnable warp of a CTA did only failed waits for HC_ASYNC_STALL rounds and a second
 * while no mbarrier changed, no thread of the CTA can complete them (mbarriers are per CTA): the launch ends with
 * a report naming the waiting warps and the barrier.
 * Threading: a CTA runs on one host thread, so its queues and its shared memory need no locks.
 * Must not: touch memory outside the CTA's shared buffer and the launch's checked allocations.
 */
#include "hc_exec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* a stall is a deadlock after this many rounds and this much time (a spin that gives up after a
 * while, or waits on another CTA's global flag, is not cut short) */
#define HC_ASYNC_STALL (1u << 15)
#define HC_ASYNC_STALL_NS 1000000000ull

#define MB_PEND(w) ((uint32_t)((w) & 0xfffff))
#define MB_EXP(w) ((uint32_t)((w) >> 20 & 0xfffff))
#define MB_TX(w) ((int32_t)((uint32_t)((w) >> 40 & 0x3fffff) << 10) >> 10)
#define MB_VALID (1ull << 62)
#define MB_PHASE (1ull << 63)
#define MB_MAX 0xfffff   /* counts: 1 .. 2^20 - 1; tx-count: -(2^20 - 1) .. 2^20 - 1 */

static uint64_t mb_make(uint32_t pend, uint32_t exp, int32_t tx, uint64_t phase)
{
    return (uint64_t)(pend & 0xfffff) | (uint64_t)(exp & 0xfffff) << 20 |
           (uint64_t)((uint32_t)tx & 0x3fffff) << 40 | MB_VALID | phase;
}

typedef struct acopy {
    uint32_t group;            /* the thread's group number, UINT32_MAX while not committed */
    uint32_t seq;              /* the thread's issue number */
    uint32_t size, srcsize;
    unsigned char *dst;        /* checked at issue: in the CTA's shared buffer or an allocation */
    const unsigned char *src;  /* checked at issue; NULL when srcsize is 0 */
} acopy;

typedef struct athread {
    acopy *q;                  /* issue order: committed groups first, then the open one */
    uint32_t n, cap;
    uint32_t groups;           /* groups committed */
    uint32_t seq;              /* copies issued */
} athread;

typedef struct aarrive {       /* cp.async.mbarrier.arrive not yet performed */
    uint32_t thread, seq, mbar;
} aarrive;

typedef struct abulk {         /* cp.async.bulk into shared memory: the copy, then complete_tx on mbar */
    uint32_t mbar, size;
    unsigned char *dst;
    const unsigned char *src;
} abulk;

typedef struct hc_async {
    athread *t;                /* per thread of the CTA: cp.async */
    athread *tb;               /* per thread: cp.async.bulk to global memory (bulk groups) */
    unsigned nthreads, nwarps;
    aarrive *a;
    size_t na, capa;
    abulk *b;
    size_t nb, capb;
    uint8_t *failed;           /* per warp: a wait of this round failed */
    uint32_t *wait_mbar, *wait_pc;   /* per warp: the last failed wait */
    unsigned long long changes, seen;
    unsigned stall;
    uint64_t stall_t0;         /* when the stall began (ns) */
} hc_async;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- state */
static hc_async *state(hc_cta *C)
{
    if (C->async)
        return C->async;
    xlaunch *X = C->X;
    hc_async *A = calloc(1, sizeof *A);
    if (A) {
        A->nthreads = X->nthreads;
        A->nwarps = X->nwarps;
        A->t = calloc(X->nthreads, sizeof *A->t);
        A->tb = calloc(X->nthreads, sizeof *A->tb);
        A->failed = calloc(X->nwarps, 1);
        A->wait_mbar = calloc(X->nwarps, sizeof *A->wait_mbar);
        A->wait_pc = calloc(X->nwarps, sizeof *A->wait_pc);
        if (!A->t || !A->tb || !A->failed || !A->wait_mbar || !A->wait_pc) {
            free(A->t);
            free(A->tb);
            free(A->failed);
            free(A->wait_mbar);
            free(A->wait_pc);
            free(A);
            A = NULL;
        }
    }
    if (!A)
        hc_xfail(X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for the asynchronous copies of %s", X->f->name);
    C->async = A;
    return A;
}

void hc_async_reset(hc_cta *C)
{
    hc_async *A = C->async;
    if (!A)
        return;
    for (unsigned i = 0; i < A->nthreads; i++) {
        A->t[i].n = A->tb[i].n = 0;
        A->t[i].groups = A->t[i].seq = A->tb[i].groups = A->tb[i].seq = 0;
    }
    A->na = A->nb = 0;
    memset(A->failed, 0, A->nwarps);
    A->changes = A->seen = 0;
    A->stall = 0;
}

void hc_async_free(hc_cta *C)
{
    hc_async *A = C->async;
    if (!A)
        return;
    for (unsigned i = 0; i < A->nthreads; i++) {
        free(A->t[i].q);
        free(A->tb[i].q);
    }
    free(A->t);
    free(A->tb);
    free(A->a);
    free(A->b);
    free(A->failed);
    free(A->wait_mbar);
    free(A->wait_pc);
    free(A);
    C->async = NULL;
}

static void lane_fail(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, const char *fmt, uint64_t a, uint64_t b)
{
    xlaunch *X = C->X;
    unsigned t[3];
    char what[256];
    hc_thread_xyz(X, (unsigned)(W->id * 32 + l), t);
    snprintf(what, sizeof what, fmt, (unsigned long long)a, (unsigned long long)b);
    hc_xfail(X, CUDA_ERROR_LAUNCH_FAILED, "error in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): %s", X->f->name,
             in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0], t[1], t[2],
             what);
}

/* ---------------------------------------------------------------- copies */
static void perform(hc_cta *C, const acopy *c)
{
    if (c->srcsize)
        memmove(c->dst, c->src, c->srcsize);
    memset(c->dst + c->srcsize, 0, (size_t)(c->size - c->srcsize));
    C->async->changes++;
}

/* queue a copy on T; 0, or -1 out of memory */
static int enqueue(hc_cta *C, athread *T, unsigned char *dst, const unsigned char *src, uint32_t size,
                   uint32_t srcsize)
{
    if (T->n == T->cap) {
        uint32_t nc = T->cap ? T->cap * 2 : 8;
        acopy *q = realloc(T->q, nc * sizeof *q);
        if (!q) {
            hc_xfail(C->X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for the asynchronous copies of %s",
                     C->X->f->name);
            return -1;
        }
        T->q = q;
        T->cap = nc;
    }
    T->q[T->n++] = (acopy){UINT32_MAX, T->seq++, size, srcsize, dst, src};
    return 0;
}

/* commit T's open copies as its next group */
static void commit(athread *T)
{
    for (uint32_t i = 0; i < T->n; i++)
        if (T->q[i].group == UINT32_MAX)
            T->q[i].group = T->groups;
    T->groups++;
}

/* perform thread t's first k queued copies */
static void perform_prefix(hc_cta *C, athread *T, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++)
        perform(C, &T->q[i]);
    memmove(T->q, T->q + k, (size_t)(T->n - k) * sizeof *T->q);
    T->n -= k;
}

/* the copies of t's groups older than its `keep` most recent ones */
static void wait_groups(hc_cta *C, athread *T, uint32_t keep)
{
    uint32_t limit = T->groups > keep ? T->groups - keep : 0, k = 0;
    while (k < T->n && T->q[k].group != UINT32_MAX && T->q[k].group < limit)
        k++;
    perform_prefix(C, T, k);
}

/* the copies t issued before its issue number seq */
static void wait_seq(hc_cta *C, athread *T, uint32_t seq)
{
    uint32_t k = 0;
    while (k < T->n && T->q[k].seq < seq)
        k++;
    perform_prefix(C, T, k);
}

static int cp_async(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    hc_async *A = state(C);
    if (!A)
        return -1;
    uint64_t tmp[32];
    unsigned size = (unsigned)in->o[2].imm;
    const uint64_t *Ss = NULL, *Ign = NULL;
    for (int k = 3; k < in->nops; k++) {
        const ash_ptx_opnd *o = &in->o[k];
        int rt = o->kind == ASH_PTX_K_REG ? C->X->m->funcs[in->func].reg_type[o->reg] : 0;
        if (rt == ASH_PTX_T_PRED)
            Ign = hc_exec_src(C, W, in, k, tmp);
        else if (k == 3 && (o->kind == ASH_PTX_K_IMM || ash_ptx_type_size(rt) == 4))
            Ss = hc_exec_src(C, W, in, k, tmp);
        /* a 64-bit register: the cache policy (a hint) */
    }
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        uint64_t d = hc_exec_mem_addr(C, W, in, 0, l), s = hc_exec_mem_addr(C, W, in, 1, l);
        uint64_t ss = Ign && (Ign[l] & 1) ? 0 : Ss ? (uint32_t)Ss[l] : size;
        if (ss > size) {
            lane_fail(C, W, l, in, "cp.async: src-size %llu is larger than cp-size %llu", ss, size);
            return -1;
        }
        const unsigned char *dp = hc_exec_addr(C, W, l, in, ASH_PTX_S_SHARED, d, size, HC_ACC_ST);
        if (!dp)
            return -1;
        const unsigned char *sp = NULL;
        if (ss) {
            if (s & (size - 1)) {   /* the source is aligned to cp-size too: reported as such */
                hc_exec_addr(C, W, l, in, ASH_PTX_S_GLOBAL, s, size, HC_ACC_LD);
                return -1;
            }
            sp = hc_exec_addr(C, W, l, in, ASH_PTX_S_GLOBAL, s, ss == size ? size : 1, HC_ACC_LD);
            if (!sp)
                return -1;
            if (ss > 1 && ss != size) {
                const unsigned char *e = hc_exec_addr(C, W, l, in, ASH_PTX_S_GLOBAL, s + ss - 1, 1, HC_ACC_LD);
                if (!e)
                    return -1;
                if (e != sp + ss - 1) {
                    lane_fail(C, W, l, in, "cp.async: the %llu source bytes at 0x%llx span two allocations", ss, s);
                    return -1;
                }
            }
        }
        if (enqueue(C, &A->t[W->id * 32 + l], (unsigned char *)dp, sp, size, (uint32_t)ss) < 0)
            return -1;
    }
    return HC_STEP_NEXT;
}

/* ---------------------------------------------------------------- mbarriers */
/* the shared offset of lane l's mbarrier operand k, or -1 after a fault */
static int64_t mbar_at(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, int k, int l)
{
    uint64_t a = hc_exec_mem_addr(C, W, in, k, l);
    if (in->space != ASH_PTX_S_SHARED && in->op != ASH_PTX_OP_CPBULK) {   /* a bulk copy's mbarrier is .shared */   /* a generic address: must be in the shared window */
        if ((a & HC_WIN_MASK) != HC_WIN_SHARED) {
            lane_fail(C, W, l, in, "mbarrier object at 0x%llx is not in shared memory%.0llu", a, 0);
            return -1;
        }
        a -= HC_WIN_SHARED;
    }
    if (!hc_exec_addr(C, W, l, in, ASH_PTX_S_SHARED, a, 8, HC_ACC_ATOM))
        return -1;
    return (int64_t)a;
}

static uint64_t mb_get(const hc_cta *C, int64_t off)
{
    uint64_t w;
    memcpy(&w, C->shared + off, 8);
    return w;
}

static void mb_put(hc_cta *C, int64_t off, uint64_t w)
{
    memcpy(C->shared + off, &w, 8);
    C->async->changes++;
}

/* a phase whose arrivals and transactions are all in completes */
static uint64_t mb_settle(uint64_t w)
{
    if (MB_PEND(w) == 0 && MB_TX(w) == 0)
        w = mb_make(MB_EXP(w), MB_EXP(w), 0, (w & MB_PHASE) ^ MB_PHASE);
    return w;
}

static int mb_valid(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int64_t off, uint64_t w)
{
    if (w & MB_VALID)
        return 1;
    lane_fail(C, W, l, in, "mbarrier at shared offset 0x%llx is used before mbarrier.init (or after inval)%.0llu",
              (uint64_t)off, 0);
    return 0;
}

/* arrive `count` times (and drop them from the expected count) on the word at off; the state, or
 * 0 after a fault */
static uint64_t mb_arrive(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int64_t off, uint32_t count, int drop,
                          int nocomplete, int64_t tx)
{
    uint64_t w = mb_get(C, off);
    if (!mb_valid(C, W, l, in, off, w))
        return 0;
    uint32_t pend = MB_PEND(w), exp = MB_EXP(w);
    int64_t ntx = (int64_t)MB_TX(w) + tx;
    if (count > pend || (drop && count > exp)) {
        lane_fail(C, W, l, in, "mbarrier arrive of %llu with only %llu arrivals pending in the phase", count, pend);
        return 0;
    }
    if (ntx > MB_MAX || ntx < -MB_MAX) {
        lane_fail(C, W, l, in, "mbarrier tx-count %lld out of range (at shared offset 0x%llx)", (uint64_t)ntx,
                  (uint64_t)off);
        return 0;
    }
    w = mb_make(pend - count, drop ? exp - count : exp, (int32_t)ntx, w & MB_PHASE);
    if (nocomplete && MB_PEND(w) == 0 && MB_TX(w) == 0) {
        lane_fail(C, W, l, in, "mbarrier arrive .noComplete would complete the phase (at shared offset 0x%llx)%.0llu",
                  (uint64_t)off, 0);
        return 0;
    }
    mb_put(C, off, mb_settle(w));
    return w;
}

/* the cp.async.mbarrier.arrive records on off: their copies, then their arrivals */
static int mb_flush(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int64_t off)
{
    hc_async *A = C->async;
    size_t k = 0;
    for (size_t i = 0; i < A->na; i++) {
        aarrive r = A->a[i];
        if (r.mbar != (uint32_t)off) {
            A->a[k++] = r;
            continue;
        }
        wait_seq(C, &A->t[r.thread], r.seq);
        if (!mb_arrive(C, W, l, in, off, 1, 0, 0, 0))
            return -1;
    }
    A->na = k;
    k = 0;
    for (size_t i = 0; i < A->nb; i++) {
        abulk r = A->b[i];
        if (r.mbar != (uint32_t)off) {
            A->b[k++] = r;
            continue;
        }
        memmove(r.dst, r.src, r.size);
        uint64_t w = mb_get(C, off);
        if (!mb_valid(C, W, l, in, off, w))
            return -1;
        int64_t tx = (int64_t)MB_TX(w) - (int64_t)r.size;
        if (tx < -MB_MAX) {
            lane_fail(C, W, l, in, "mbarrier tx-count %lld out of range (at shared offset 0x%llx)", (uint64_t)tx,
                      (uint64_t)off);
            return -1;
        }
        mb_put(C, off, mb_settle(mb_make(MB_PEND(w), MB_EXP(w), (int32_t)tx, w & MB_PHASE)));
    }
    A->nb = k;
    return 0;
}

/* [a, a + size) in `space` for lane l: 16-byte aligned, size a positive multiple of 16, inside one
 * allocation (or the shared window); its host address, or NULL after a fault */
static unsigned char *span(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int space, uint64_t a, uint64_t size,
                           int acc)
{
    if (!size || size % 16) {
        lane_fail(C, W, l, in, "cp.async.bulk size %llu is not a positive multiple of 16%.0llu", size, 0);
        return NULL;
    }
    unsigned char *p = hc_exec_addr(C, W, l, in, space, a, 16, acc);   /* the alignment, the first bytes */
    if (!p)
        return NULL;
    unsigned char *e = hc_exec_addr(C, W, l, in, space, a + size - 16, 16, acc);
    if (!e)
        return NULL;
    if (e != p + size - 16) {
        lane_fail(C, W, l, in, "cp.async.bulk: the %llu bytes at 0x%llx span two allocations", size, a);
        return NULL;
    }
    return p;
}

static int cp_bulk(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    hc_async *A = state(C);
    if (!A)
        return -1;
    uint64_t tmp[32];
    const uint64_t *S = hc_exec_src(C, W, in, 2, tmp);
    int to_shared = (in->sub & ASH_PTX_MB_COMPLETE_TX) != 0;
    int src_space = in->space == ASH_PTX_S_SHARED ? ASH_PTX_S_SHARED : ASH_PTX_S_GLOBAL;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        uint64_t size = (uint32_t)S[l];
        unsigned char *d = span(C, W, l, in, to_shared ? ASH_PTX_S_SHARED : ASH_PTX_S_GLOBAL,
                                hc_exec_mem_addr(C, W, in, 0, l), size, HC_ACC_ST);
        if (!d)
            return -1;
        const unsigned char *s = span(C, W, l, in, src_space, hc_exec_mem_addr(C, W, in, 1, l), size, HC_ACC_LD);
        if (!s)
            return -1;
        if (!to_shared) {
            if (enqueue(C, &A->tb[W->id * 32 + l], d, s, (uint32_t)size, (uint32_t)size) < 0)
                return -1;
            continue;
        }
        int64_t off = mbar_at(C, W, in, 3, l);
        if (off < 0)
            return -1;
        if (A->nb == A->capb) {
            size_t nc = A->capb ? A->capb * 2 : 16;
            abulk *b = realloc(A->b, nc * sizeof *b);
            if (!b) {
                hc_xfail(C->X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for the asynchronous copies of %s",
                         C->X->f->name);
                return -1;
            }
            A->b = b;
            A->capb = nc;
        }
        A->b[A->nb++] = (abulk){(uint32_t)off, (uint32_t)size, d, s};
    }
    return HC_STEP_NEXT;
}

static void set_next(hc_warp *W, uint32_t M, uint32_t pc)
{
    if (W->uniform) {
        W->upc = pc + 1;
        return;
    }
    for (int l = 0; l < 32; l++)
        if (M >> l & 1)
            W->pc[l] = pc + 1;
}

static int mbarrier(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E)
{
    hc_async *A = state(C);
    if (!A)
        return -1;
    uint64_t ta[32];
    int op = in->op;
    if (op == ASH_PTX_OP_MBAR_PENDING) {   /* count, state */
        uint64_t *D = hc_exec_dst(W, in, 0);
        const uint64_t *S = hc_exec_src(C, W, in, 1, ta);
        for (int l = 0; l < 32; l++)
            if (E >> l & 1)
                D[l] = MB_PEND(S[l]);
        return HC_STEP_NEXT;
    }
    int ai = in->o[0].kind == ASH_PTX_K_MEM ? 0 : 1;   /* arrive without a state operand (.shared::cluster) */
    const uint64_t *V = in->nops > ai + 1 ? hc_exec_src(C, W, in, ai + 1, ta) : NULL;
    uint64_t *D = ai ? hc_exec_dst(W, in, 0) : NULL;
    int failed = 0;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        int64_t off = mbar_at(C, W, in, ai, l);
        if (off < 0)
            return -1;
        uint64_t w = mb_get(C, off);
        switch (op) {
        case ASH_PTX_OP_MBAR_INIT: {
            uint64_t n = V ? (uint32_t)V[l] : 0;
            if (n < 1 || n > MB_MAX) {
                lane_fail(C, W, l, in, "mbarrier.init count %llu outside 1 .. %llu", n, MB_MAX);
                return -1;
            }
            mb_put(C, off, mb_make((uint32_t)n, (uint32_t)n, 0, 0));
            /* a new object: arrivals of copies tracked on the old one at this address are dropped */
            size_t k = 0;
            for (size_t i = 0; i < A->na; i++)
                if (A->a[i].mbar != (uint32_t)off)
                    A->a[k++] = A->a[i];
            A->na = k;
            break;
        }
        case ASH_PTX_OP_MBAR_INVAL:
            mb_put(C, off, 0);
            break;
        case ASH_PTX_OP_MBAR_EXPECT_TX:
        case ASH_PTX_OP_MBAR_COMPLETE_TX: {
            if (!mb_valid(C, W, l, in, off, w))
                return -1;
            int64_t tx = (int64_t)MB_TX(w) + (op == ASH_PTX_OP_MBAR_EXPECT_TX ? 1 : -1) * (int64_t)(uint32_t)V[l];
            if (tx > MB_MAX || tx < -MB_MAX) {
                lane_fail(C, W, l, in, "mbarrier tx-count %lld out of range (at shared offset 0x%llx)", (uint64_t)tx,
                          (uint64_t)off);
                return -1;
            }
            mb_put(C, off, mb_settle(mb_make(MB_PEND(w), MB_EXP(w), (int32_t)tx, w & MB_PHASE)));
            break;
        }
        case ASH_PTX_OP_MBAR_ARRIVE:
        case ASH_PTX_OP_MBAR_ARRIVE_DROP: {
            int etx = (in->sub & ASH_PTX_MB_EXPECT_TX) != 0;
            uint32_t count = V && !etx ? (uint32_t)V[l] : 1;
            if (count < 1 || count > MB_MAX) {
                lane_fail(C, W, l, in, "mbarrier arrive count %llu outside 1 .. %llu", count, MB_MAX);
                return -1;
            }
            uint64_t s = mb_arrive(C, W, l, in, off, count, op == ASH_PTX_OP_MBAR_ARRIVE_DROP,
                                   (in->sub & ASH_PTX_MB_NOCOMPLETE) != 0, etx && V ? (int64_t)(uint32_t)V[l] : 0);
            if (!s)
                return -1;
            if (D)
                D[l] = s;
            break;
        }
        case ASH_PTX_OP_CPASYNC_MBAR: {
            if (!mb_valid(C, W, l, in, off, w))
                return -1;
            if (!(in->sub & ASH_PTX_MB_NOINC)) {   /* the pending count goes up now, the arrival comes later */
                if (MB_PEND(w) >= MB_MAX) {
                    lane_fail(C, W, l, in, "mbarrier pending count overflows (at shared offset 0x%llx)%.0llu",
                              (uint64_t)off, 0);
                    return -1;
                }
                mb_put(C, off, mb_make(MB_PEND(w) + 1, MB_EXP(w), MB_TX(w), w & MB_PHASE));
            }
            if (A->na == A->capa) {
                size_t nc = A->capa ? A->capa * 2 : 64;
                aarrive *a = realloc(A->a, nc * sizeof *a);
                if (!a) {
                    hc_xfail(C->X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for the asynchronous copies of %s",
                             C->X->f->name);
                    return -1;
                }
                A->a = a;
                A->capa = nc;
            }
            unsigned t = (unsigned)(W->id * 32 + l);
            A->a[A->na++] = (aarrive){t, A->t[t].seq, (uint32_t)off};
            break;
        }
        default: {   /* test_wait, try_wait */
            if (mb_flush(C, W, l, in, off) < 0)
                return -1;
            w = mb_get(C, off);
            if (!mb_valid(C, W, l, in, off, w))
                return -1;
            uint64_t cur = w >> 63, want = in->sub & ASH_PTX_MB_PARITY ? V[l] & 1 : V[l] >> 63;
            int done = cur != want;
            if (D)
                D[l] = (uint64_t)done;
            if (!done) {
                failed = 1;
                A->wait_mbar[W->id] = (uint32_t)off;
                A->wait_pc[W->id] = pc;
            }
            break;
        }
        }
    }
    if (failed) {   /* let the other warps run: they are who can arrive */
        A->failed[W->id] = 1;
        set_next(W, M, pc);
        return HC_STEP_YIELD;
    }
    return HC_STEP_NEXT;
}

int hc_async_round(hc_cta *C)
{
    hc_async *A = C->async;
    int spinning = 1, any = 0;
    for (unsigned w = 0; w < C->nwarps; w++) {
        hc_warp *W = &C->w[w];
        if (W->live & ~W->blocked) {
            any = 1;
            if (!A->failed[w])
                spinning = 0;
        }
        A->failed[w] = 0;
    }
    if (!any || !spinning || A->changes != A->seen) {
        A->stall = 0;
        A->seen = A->changes;
        return 0;
    }
    if (++A->stall == 1)
        A->stall_t0 = now_ns();
    if (A->stall < HC_ASYNC_STALL || (A->stall & 1023) || now_ns() - A->stall_t0 < HC_ASYNC_STALL_NS)
        return 0;
    xlaunch *X = C->X;
    char who[1024] = "";
    size_t o = 0;
    uint32_t mb = 0;
    for (unsigned w = 0; w < C->nwarps && o < sizeof who - 200; w++) {
        hc_warp *W = &C->w[w];
        uint32_t run = W->live & ~W->blocked;
        if (!run)
            continue;
        const ash_ptx_insn *in = &X->code[A->wait_pc[w]];
        mb = A->wait_mbar[w];
        o += (size_t)snprintf(who + o, sizeof who - o, "%swarp %u (%u threads) at PTX line %d (%s) on the mbarrier at "
                              "shared offset 0x%x", o ? "; " : "", w, hc_popc32(run), in->line,
                              ash_ptx_line_text(X->m, in->line), A->wait_mbar[w]);
    }
    uint64_t wd = mb_get(C, mb);
    hc_xfail(X, CUDA_ERROR_LAUNCH_FAILED,
             "mbarrier deadlock in %s block (%u,%u,%u): every running warp only waits on an mbarrier, and none changed "
             "in %u rounds (%.1f s): %s; that mbarrier is in phase parity %u with %u of %u arrivals pending and tx-count %d",
             X->f->name, C->ctaid[0], C->ctaid[1], C->ctaid[2], A->stall, (double)(now_ns() - A->stall_t0) / 1e9, who, (unsigned)(wd >> 63),
             MB_PEND(wd), MB_EXP(wd), MB_TX(wd));
    return -1;
}

/* ---------------------------------------------------------------- brx.idx */
static int brx(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E)
{
    uint64_t ta[32];
    const uint64_t *I = hc_exec_src(C, W, in, 0, ta);
    const int32_t *tg = C->X->m->targets + in->o[1].imm;
    uint64_t n = (uint64_t)in->o[1].vimm[0];
    hc_exec_deuniform(W);
    for (int l = 0; l < 32; l++) {
        if (!(M >> l & 1))
            continue;
        if (!(E >> l & 1)) {
            W->pc[l] = pc + 1;
            continue;
        }
        uint64_t i = (uint32_t)I[l];
        if (i >= n) {
            lane_fail(C, W, l, in, "brx.idx index %llu outside its list of %llu targets", i, n);
            return -1;
        }
        W->pc[l] = (uint32_t)tg[i];
    }
    return HC_STEP_DONE;
}

/* ---------------------------------------------------------------- the instructions */
int hc_exec_async(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E)
{
    switch (in->op) {
    case ASH_PTX_OP_CPASYNC:
        return cp_async(C, W, in, E);
    case ASH_PTX_OP_CPASYNC_COMMIT:
    case ASH_PTX_OP_CPASYNC_WAIT:
    case ASH_PTX_OP_CPASYNC_WAITALL: {
        if (!E)
            return HC_STEP_NEXT;
        hc_async *A = state(C);
        if (!A)
            return -1;
        uint32_t keep = in->op == ASH_PTX_OP_CPASYNC_WAIT ? (uint32_t)in->o[0].imm : 0;
        for (int l = 0; l < 32; l++) {
            if (!(E >> l & 1))
                continue;
            athread *T = &A->t[W->id * 32 + l];
            if (in->op != ASH_PTX_OP_CPASYNC_WAIT)   /* commit (wait_all commits, then waits for all) */
                commit(T);
            if (in->op != ASH_PTX_OP_CPASYNC_COMMIT)
                wait_groups(C, T, keep);
        }
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CPBULK:
        return cp_bulk(C, W, in, E);
    case ASH_PTX_OP_CPBULK_COMMIT:
    case ASH_PTX_OP_CPBULK_WAIT: {   /* wait_group.read: the sources are read when the copies are made */
        if (!E)
            return HC_STEP_NEXT;
        hc_async *A = state(C);
        if (!A)
            return -1;
        for (int l = 0; l < 32; l++)
            if (E >> l & 1) {
                athread *T = &A->tb[W->id * 32 + l];
                if (in->op == ASH_PTX_OP_CPBULK_COMMIT)
                    commit(T);
                else
                    wait_groups(C, T, (uint32_t)in->o[0].imm);
            }
        return HC_STEP_NEXT;
    }
    case ASH_PTX_OP_CPBULK_PREFETCH:
        return HC_STEP_NEXT;
    case ASH_PTX_OP_BRX:
        return brx(C, W, in, pc, M, E);
    default:
        return mbarrier(C, W, in, pc, M, E);
    }
}

int hc_async_supported(const ash_ptx_module *m, const ash_ptx_insn *in, const char **why)
{
    (void)m;
    *why = NULL;
    switch (in->op) {
    case ASH_PTX_OP_CPASYNC: {
        int64_t sz = in->o[2].kind == ASH_PTX_K_IMM ? in->o[2].imm : 0;
        if (in->nops < 3 || in->o[0].kind != ASH_PTX_K_MEM || in->o[1].kind != ASH_PTX_K_MEM ||
            (sz != 4 && sz != 8 && sz != 16) || ((in->sub & ASH_PTX_MB_CG) && sz != 16)) {
            *why = "cp.async needs [dst], [src], cp-size 4, 8 or 16 (16 with .cg)";
            return 0;
        }
        return 1;   /* .shared{::cta}.global is the only form ptxas takes */
    }
    case ASH_PTX_OP_CPASYNC_WAIT:
    case ASH_PTX_OP_CPBULK_WAIT:
        if (in->nops != 1 || in->o[0].kind != ASH_PTX_K_IMM) {
            *why = "wait_group needs an immediate group count";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_CPBULK: {
        int tx = (in->sub & ASH_PTX_MB_COMPLETE_TX) != 0, bg = (in->sub & ASH_PTX_MB_BULK_GROUP) != 0;
        if (tx == bg || in->nops < 3 + tx || in->o[0].kind != ASH_PTX_K_MEM || in->o[1].kind != ASH_PTX_K_MEM ||
            (tx && in->o[3].kind != ASH_PTX_K_MEM) || in->o[2].kind == ASH_PTX_K_MEM ||
            (bg && in->space != ASH_PTX_S_SHARED)) {
            *why = "cp.async.bulk form not supported (global or shared::cta to shared with an mbarrier, shared "
                   "to global with a bulk group)";
            return 0;
        }
        return 1;
    }
    case ASH_PTX_OP_CPBULK_COMMIT: case ASH_PTX_OP_CPBULK_PREFETCH:
        return 1;
    case ASH_PTX_OP_BRX:
        if (in->nops != 2 || in->o[1].kind != ASH_PTX_K_LABEL || in->o[0].kind == ASH_PTX_K_MEM) {
            *why = "brx.idx needs an index and a .branchtargets list";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_CPASYNC_COMMIT: case ASH_PTX_OP_CPASYNC_WAITALL: case ASH_PTX_OP_MBAR_INVAL:
        return 1;
    case ASH_PTX_OP_CPASYNC_MBAR:
        if (in->nops != 1 || in->o[0].kind != ASH_PTX_K_MEM) {
            *why = "cp.async.mbarrier.arrive needs [mbarrier]";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_MBAR_PENDING:
        if (in->nops != 2) {
            *why = "mbarrier.pending_count needs count, state";
            return 0;
        }
        return 1;
    default: {   /* the others: [addr] first, or a destination then [addr] */
        int ai = in->nops > 0 && in->o[0].kind == ASH_PTX_K_MEM ? 0 : 1;
        int need = in->op == ASH_PTX_OP_MBAR_INIT || in->op == ASH_PTX_OP_MBAR_EXPECT_TX ||
                   in->op == ASH_PTX_OP_MBAR_COMPLETE_TX || in->op == ASH_PTX_OP_MBAR_TEST_WAIT ||
                   in->op == ASH_PTX_OP_MBAR_TRY_WAIT || (in->sub & ASH_PTX_MB_EXPECT_TX);
        if (ai >= in->nops || in->o[ai].kind != ASH_PTX_K_MEM || (need && in->nops < ai + 2) ||
            ((in->op == ASH_PTX_OP_MBAR_TEST_WAIT || in->op == ASH_PTX_OP_MBAR_TRY_WAIT) && ai != 1)) {
            *why = "mbarrier operands not understood";
            return 0;
        }
        if (in->space != ASH_PTX_S_SHARED && in->space != ASH_PTX_S_NONE && in->space != ASH_PTX_S_GENERIC) {
            *why = "mbarrier object outside shared memory";
            return 0;
        }
        return 1;
    }
    }
}
