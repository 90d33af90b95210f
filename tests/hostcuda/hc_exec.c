/* hc_exec.c — hostcuda's SIMT executor: runs a kernel's decoded PTX (shim/ptx) on host threads.
 *
 * Model: a CTA is warps of 32 lanes; each lane has its PC; a warp step takes the lowest PC among
 * its runnable lanes and executes that instruction for every lane there (the active mask), so
 * divergent paths reconverge where they meet. Warps of a CTA run round-robin on one host thread
 * (a quantum each, so spin-waits on shared memory progress); CTAs are taken by a pool of host
 * threads and run to their end. A cooperative launch (L->coop) needs every CTA resident at once
 * (cooperative groups' grid.sync spins on a counter in the grid workspace, %envreg1:%envreg2):
 * worker k of nt holds CTAs k, k + nt, ... together and gives each a round (a quantum per warp,
 * then its barriers) in turn, so every CTA reaches the grid barrier whatever the thread count;
 * the driver refuses a grid larger than the device holds, which bounds that memory. A grid sync
 * in an ordinary launch traps on the null workspace, reported as such (never a hang).
 * Device malloc/free use the context's heap through L->heap_alloc/heap_free (thread-safe).
 * Registers are [slot][lane] 64-bit cells; a reader truncates to its type's width.
 * Memory: global addresses are the program's device addresses, each access checked against the
 * launch's allocation table; shared, local and param spaces are per-CTA / per-thread buffers that
 * generic addresses reach through windows above the canonical host range (cvta adds the base).
 * Faults stop the launch: the first is reported as one hostcuda: line and the launch's result.
 * Threading: one launch at a time per call; the workers share only the launch record (atomics).
 * Must not: write outside the device arenas, the CTA's shared buffer or the threads' local
 * memory; hang (deadlocks and timeouts end the launch); take hc_mu (the caller snapshots memory).
 */
#include "hc_exec.h"
#include "hc_exec_int.h"
#include "hc_exec_mma.h"

#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUANTUM 512
#define HC_CALL_STACK 16384   /* bytes of call stack per thread when the kernel calls device functions */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- load-time check */
int hc_is_builtin(const ash_ptx_func *f)
{
    return !strcmp(f->name, "vprintf") || !strcmp(f->name, "__assertfail") ||
           (f->is_extern && (!strcmp(f->name, "malloc") || !strcmp(f->name, "free")));
}
static int insn_supported(const ash_ptx_module *m, const ash_ptx_insn *in, const char **why)
{
    *why = NULL;
    if (hc_mma_is(in))
        return hc_mma_check(m, in, why);
    switch (in->op) {
    case ASH_PTX_OP_NONE:
        *why = "instruction not supported";
        return 0;
    case ASH_PTX_OP_CALL: {
        if (in->o[0].kind == ASH_PTX_K_REG)
            return 1;   /* indirect: every function whose address is taken is checked with the kernel */
        const ash_ptx_func *f = &m->funcs[in->o[0].sym];
        if (hc_is_builtin(f) || (!f->is_extern && !f->is_entry))
            return 1;
        *why = f->is_entry ? "call of a kernel (dynamic parallelism) not supported"
                           : "call of an external device function not supported";
        return 0;
    }
    case ASH_PTX_OP_CPASYNC ... ASH_PTX_OP_BRX:
        return hc_async_supported(m, in, why);
    case ASH_PTX_OP_BRA:
        if (in->o[0].kind != ASH_PTX_K_LABEL) {
            *why = "indirect branch not supported";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_CVT:
        if (in->flags & (ASH_PTX_F_PACK | ASH_PTX_F_SATFINITE | ASH_PTX_F_RELU) || in->rnd == ASH_PTX_R_RNA ||
            in->rnd == ASH_PTX_R_RS) {
            *why = "cvt variant not supported";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_ATOM:
    case ASH_PTX_OP_RED:
        if (in->vec > 1 || in->type == ASH_PTX_T_B128) {
            *why = "vector or 128-bit atomic not supported";
            return 0;
        }
        return 1;
    case ASH_PTX_OP_TEX: case ASH_PTX_OP_TLD4: case ASH_PTX_OP_TXQ:
    case ASH_PTX_OP_SULD: case ASH_PTX_OP_SUST: case ASH_PTX_OP_SUQ:
        return hc_exec_tex_supported(in, why);
    case ASH_PTX_OP_FNS: case ASH_PTX_OP_CREATEPOLICY:
    case ASH_PTX_OP_PMEVENT: case ASH_PTX_OP_BRKPT:
        *why = "instruction not supported";
        return 0;
    case ASH_PTX_OP_DIV: case ASH_PTX_OP_REM: case ASH_PTX_OP_RCP: case ASH_PTX_OP_SQRT: case ASH_PTX_OP_RSQRT:
    case ASH_PTX_OP_LG2: case ASH_PTX_OP_SIN: case ASH_PTX_OP_COS: case ASH_PTX_OP_COPYSIGN:
        if (in->type == ASH_PTX_T_F16 || in->type == ASH_PTX_T_F16X2 || in->type == ASH_PTX_T_BF16 ||
            in->type == ASH_PTX_T_BF16X2) {
            if (in->op == ASH_PTX_OP_RCP || in->op == ASH_PTX_OP_SQRT || in->op == ASH_PTX_OP_RSQRT)
                return 1;
            *why = "instruction not supported on half types";
            return 0;
        }
        if (in->type == ASH_PTX_T_F64 && (in->op == ASH_PTX_OP_SIN || in->op == ASH_PTX_OP_COS)) {
            *why = "instruction not supported";
            return 0;
        }
        return 1;
    default:
        if (in->type == ASH_PTX_T_B128) {
            *why = "128-bit type not supported";
            return 0;
        }
        /* .relu and .xorsign exist for f16/bf16 (x2) arithmetic only here */
        if ((in->flags & (ASH_PTX_F_RELU | ASH_PTX_F_XORSIGN)) && in->type != ASH_PTX_T_F16 &&
            in->type != ASH_PTX_T_F16X2 && in->type != ASH_PTX_T_BF16 && in->type != ASH_PTX_T_BF16X2) {
            *why = "modifier not supported";
            return 0;
        }
        return 1;
    }
}

uint64_t hc_exec_func_addr(int fi)
{
    return HC_WIN_FUNC + (uint64_t)fi * 16;
}

static void reach(const ash_ptx_module *m, int g, char *mark, int *order, int *n)
{
    if (g >= 0 && g < m->nfuncs && !mark[g] && !hc_is_builtin(&m->funcs[g]) && !m->funcs[g].is_entry) {
        mark[g] = 1;
        order[(*n)++] = g;
    }
}

/* the functions kernel `fi` can reach (itself first); mark[f] = 1; returns how many. An indirect
 * call can reach every function whose address the module takes (vtables, `mov` of a name). */
static int reachable(const ash_ptx_module *m, int fi, char *mark, int *order)
{
    int n = 0, indirect = 0;
    order[n++] = fi;
    mark[fi] = 1;
    for (int k = 0; k < n; k++) {
        const ash_ptx_func *f = &m->funcs[order[k]];
        for (int i = f->first; i < f->first + f->count; i++) {
            const ash_ptx_insn *in = &m->insns[i];
            if (in->op == ASH_PTX_OP_CALL && in->o[0].kind == ASH_PTX_K_FUNC)
                reach(m, in->o[0].sym, mark, order, &n);
            else if (in->op == ASH_PTX_OP_CALL)
                indirect = 1;
            else
                for (int o = 0; o < in->nops; o++)
                    if (in->o[o].kind == ASH_PTX_K_FUNC)
                        reach(m, in->o[o].sym, mark, order, &n);
        }
        if (indirect == 1) {
            indirect = 2;
            for (int v = 0; v < m->nvars; v++)
                for (int r = 0; r < m->vars[v].nrelocs; r++)
                    reach(m, m->vars[v].relocs[r].func, mark, order, &n);
            for (int i = 0; i < m->ninsns; i++)
                for (int o = 0; o < m->insns[i].nops; o++)
                    if (m->insns[i].op != ASH_PTX_OP_CALL && m->insns[i].o[o].kind == ASH_PTX_K_FUNC)
                        reach(m, m->insns[i].o[o].sym, mark, order, &n);
        }
    }
    return n;
}

int hc_exec_check(const ash_ptx_module *m, int fi, char *msg, size_t n)
{
    char *mark = calloc((size_t)m->nfuncs + 1, 1);
    int *order = calloc((size_t)m->nfuncs + 1, sizeof *order);
    if (!mark || !order) {
        free(mark);
        free(order);
        snprintf(msg, n, "kernel %s: out of memory", m->funcs[fi].name);
        return -1;
    }
    int nr = reachable(m, fi, mark, order), bad = 0;
    for (int k = 0; k < nr && !bad; k++) {
        const ash_ptx_func *f = &m->funcs[order[k]];
        if (!f->defined) {
            snprintf(msg, n, "kernel %s: calls %s, which this module declares but does not define", m->funcs[fi].name,
                     f->name);
            bad = 1;
            break;
        }
        for (int i = f->first; i < f->first + f->count; i++) {
            const ash_ptx_insn *in = &m->insns[i];
            const char *why;
            if (!insn_supported(m, in, &why)) {
                snprintf(msg, n, "kernel %s: PTX line %d: %s: %s", m->funcs[fi].name, in->line, why,
                         ash_ptx_line_text(m, in->line));
                bad = 1;
                break;
            }
        }
    }
    free(mark);
    free(order);
    if (bad)
        return -1;
    for (int i = 0; i < m->nvars; i++)
        if (m->vars[i].func == fi && m->vars[i].space == ASH_PTX_S_SHARED && m->vars[i].is_extern &&
            m->vars[i].init) {
            snprintf(msg, n, "kernel %s: initialised shared variable %s", m->funcs[fi].name, m->vars[i].name);
            return -1;
        }
    return 0;
}

unsigned hc_exec_uses(const ash_ptx_module *m, int fi)
{
    char *mark = calloc((size_t)m->nfuncs + 1, 1);
    int *order = calloc((size_t)m->nfuncs + 1, sizeof *order);
    unsigned uses = 0;
    if (!mark || !order) {
        free(mark);
        free(order);
        return HC_EXEC_USES_HEAP | HC_EXEC_USES_PRINTF;   /* cannot tell: prepare for both */
    }
    int nr = reachable(m, fi, mark, order);
    for (int k = 0; k < nr; k++) {
        const ash_ptx_func *f = &m->funcs[order[k]];
        for (int i = f->first; i < f->first + f->count; i++) {
            const ash_ptx_insn *in = &m->insns[i];
            if (in->op != ASH_PTX_OP_CALL || in->o[0].kind != ASH_PTX_K_FUNC || !m->funcs[in->o[0].sym].is_extern)
                continue;
            const char *n = m->funcs[in->o[0].sym].name;
            if (!strcmp(n, "malloc") || !strcmp(n, "free"))
                uses |= HC_EXEC_USES_HEAP;
            else if (!strcmp(n, "vprintf"))
                uses |= HC_EXEC_USES_PRINTF;
        }
    }
    free(mark);
    free(order);
    return uses;
}

/* 1 if what fi reaches reads %envreg1 or %envreg2: cooperative groups' grid workspace */
static int reads_grid_workspace(const ash_ptx_module *m, const int *order, int nr)
{
    for (int k = 0; k < nr; k++) {
        const ash_ptx_func *f = &m->funcs[order[k]];
        for (int i = f->first; i < f->first + f->count; i++)
            for (int o = 0; o < m->insns[i].nops; o++)
                if (m->insns[i].o[o].kind == ASH_PTX_K_SREG &&
                    (m->insns[i].o[o].sreg == ASH_PTX_SR_ENVREG + 1 || m->insns[i].o[o].sreg == ASH_PTX_SR_ENVREG + 2))
                    return 1;
    }
    return 0;
}

size_t hc_exec_static_shared(const ash_ptx_module *m, int fi)
{
    return m->funcs[fi].shared_size;
}

/* ---------------------------------------------------------------- launch state */

/* a fault: first one wins; the others stop */
void hc_xfail(xlaunch *X, CUresult err, const char *fmt, ...)
{
    pthread_mutex_lock(&X->mu);
    if (X->err == CUDA_SUCCESS) {
        X->err = err;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(X->msg, sizeof X->msg, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&X->mu);
    atomic_store(&X->abort, 1);
}

void hc_thread_xyz(const xlaunch *X, unsigned t, unsigned out[3])
{
    unsigned bx = X->L->block[0], by = X->L->block[1];
    out[0] = t % bx;
    out[1] = (t / bx) % by;
    out[2] = t / (bx * by);
}

static const char *acc_name(int acc)
{
    return acc == HC_ACC_ST ? "st" : acc == HC_ACC_ATOM ? "atom" : "ld";
}

static void fault_addr(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, int acc, uint64_t a, unsigned size,
                       const char *what)
{
    xlaunch *X = C->X;
    unsigned t[3];
    hc_thread_xyz(X, (unsigned)(W->id * 32 + lane), t);
    char near[256] = "no allocation";
    const hc_exec_range *R = X->L->ranges;
    int n = X->L->nranges, best = -1;
    uint64_t bestd = ~0ull;
    for (int i = 0; i < n; i++) {
        uint64_t d = a < R[i].lo ? R[i].lo - a : a >= R[i].lo + R[i].size ? a - (R[i].lo + R[i].size) : 0;
        if (d < bestd) {
            bestd = d;
            best = i;
        }
    }
    if (best >= 0) {
        const hc_exec_range *r = &R[best];
        if (a < r->lo)
            snprintf(near, sizeof near, "nearest allocation 0x%llx+%zu, %llu bytes before it",
                     (unsigned long long)r->lo, r->size, (unsigned long long)(r->lo - a));
        else if (a >= r->lo + r->size)
            snprintf(near, sizeof near, "nearest allocation 0x%llx+%zu, %llu bytes after it",
                     (unsigned long long)r->lo, r->size, (unsigned long long)(a - (r->lo + r->size)));
        else
            snprintf(near, sizeof near, "nearest allocation 0x%llx+%zu, %llu bytes inside it",
                     (unsigned long long)r->lo, r->size, (unsigned long long)(a - r->lo));
    }
    hc_xfail(X, CUDA_ERROR_ILLEGAL_ADDRESS,
          "illegal address in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): %s %u bytes at 0x%llx; %s%s%s",
          X->f->name, in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0],
          t[1], t[2], acc_name(acc), size, (unsigned long long)a, near, what ? " " : "", what ? what : "");
}

static void fault_space(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, int acc, uint64_t a, unsigned size,
                        const char *space, size_t limit)
{
    xlaunch *X = C->X;
    unsigned t[3];
    hc_thread_xyz(X, (unsigned)(W->id * 32 + lane), t);
    hc_xfail(X, CUDA_ERROR_ILLEGAL_ADDRESS,
          "illegal address in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): %s %u bytes at %s address "
          "0x%llx; the %s window is %zu bytes%s",
          X->f->name, in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0],
          t[1], t[2], acc_name(acc), size, space, (unsigned long long)a, space, limit,
          size > 1 && (a & (size - 1)) ? " (misaligned)" : "");
}

/* host address of [a, a + size) in `space` for lane, or NULL after a fault */
void *hc_exec_addr(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, int space, uint64_t a, unsigned size,
                   int acc)
{
    xlaunch *X = C->X;
    if (space == ASH_PTX_S_GENERIC || space == ASH_PTX_S_NONE) {
        uint64_t w = a & HC_WIN_MASK;
        if (w == HC_WIN_SHARED) {
            space = ASH_PTX_S_SHARED;
            a -= HC_WIN_SHARED;
        } else if (w == HC_WIN_LOCAL) {
            space = ASH_PTX_S_LOCAL;
            a -= HC_WIN_LOCAL;
        } else if (w == HC_WIN_PARAM) {
            space = ASH_PTX_S_PARAM;
            a -= HC_WIN_PARAM;
        } else {
            space = ASH_PTX_S_GLOBAL;
        }
    }
    if (size > 1 && (a & (size - 1))) {
        if (space == ASH_PTX_S_GLOBAL || space == ASH_PTX_S_CONST)
            fault_addr(C, W, lane, in, acc, a, size, "(misaligned)");
        else
            fault_space(C, W, lane, in, acc, a, size,
                        space == ASH_PTX_S_SHARED ? "shared" : space == ASH_PTX_S_LOCAL ? "local" : "param",
                        space == ASH_PTX_S_SHARED ? X->shared_bytes
                        : space == ASH_PTX_S_LOCAL ? X->local_size : X->L->params_size);
        return NULL;
    }
    switch (space) {
    case ASH_PTX_S_SHARED:
        if (a + size > X->shared_bytes || a + size < a) {
            fault_space(C, W, lane, in, acc, a, size, "shared", X->shared_bytes);
            return NULL;
        }
        return C->shared + a;
    case ASH_PTX_S_LOCAL:
        if (a + size > X->local_size || a + size < a) {
            fault_space(C, W, lane, in, acc, a, size, "local", X->local_size);
            return NULL;
        }
        return C->local + (size_t)(W->id * 32 + lane) * X->local_size + a;
    case ASH_PTX_S_PARAM:
        if (a + size > X->L->params_size || a + size < a) {
            fault_space(C, W, lane, in, acc, a, size, "param", X->L->params_size);
            return NULL;
        }
        if (acc != HC_ACC_LD) {
            fault_space(C, W, lane, in, acc, a, size, "param (read-only)", X->L->params_size);
            return NULL;
        }
        return (void *)(X->L->params + a);
    default: {
        const hc_exec_range *R = X->L->ranges;
        int n = X->L->nranges;
        if (W->cache >= 0 && W->cache < n) {
            const hc_exec_range *r = &R[W->cache];
            if (a >= r->lo && a - r->lo + size <= r->size)
                return r->rw + (a - r->lo);
        }
        int lo = 0, hi = n - 1, f = -1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            if (R[mid].lo <= a) {
                f = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (f >= 0 && a - R[f].lo + size <= R[f].size) {
            W->cache = f;
            return R[f].rw + (a - R[f].lo);
        }
        if (X->L->resolve) {
            void *p = X->L->resolve(a, size);
            if (p)
                return p;
        }
        fault_addr(C, W, lane, in, acc, a, size, NULL);
        return NULL;
    }
    }
}

/* ---------------------------------------------------------------- facts for the instructions */
size_t hc_exec_frame(const hc_cta *C)
{
    return C->X->frame;
}

size_t hc_exec_dyn_base(const hc_cta *C)
{
    return C->X->dyn_base;
}

const uint64_t *hc_exec_var_addr(const hc_cta *C)
{
    return C->X->L->var_addr;
}

const hc_exec_launch *hc_exec_launch_of(const hc_cta *C)
{
    return C->X->L;
}

void hc_exec_trap(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, int lane)
{
    unsigned t[3];
    hc_thread_xyz(C->X, (unsigned)(W->id * 32 + lane), t);
    if (C->X->grid_ws && !C->X->L->coop) {   /* cooperative groups traps on a null grid workspace */
        hc_xfail(C->X, CUDA_ERROR_ILLEGAL_INSTRUCTION,
              "trap in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): the kernel reads the grid "
              "workspace (%%envreg1:%%envreg2), which only a cooperative launch has: a grid-wide sync "
              "(cooperative_groups::this_grid().sync()) needs cuLaunchCooperativeKernel / "
              "cudaLaunchCooperativeKernel",
              C->X->f->name, in->line, ash_ptx_line_text(C->X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2],
              t[0], t[1], t[2]);
        return;
    }
    hc_xfail(C->X, CUDA_ERROR_ILLEGAL_INSTRUCTION, "trap in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u)",
          C->X->f->name, in->line, ash_ptx_line_text(C->X->m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0],
          t[1], t[2]);
}

/* ---------------------------------------------------------------- scheduling */
static void deuniform(hc_warp *W)
{
    if (W->uniform) {
        for (int l = 0; l < 32; l++)
            if ((W->live & ~W->blocked & ~W->wsync) >> l & 1)
                W->pc[l] = W->upc;
        W->uniform = 0;
    }
}

void hc_exec_deuniform(hc_warp *W)
{
    deuniform(W);
}

/* run warp W up to `budget` steps; returns steps taken */
static int warp_run(hc_cta *C, hc_warp *W, int budget)
{
    xlaunch *X = C->X;
    const ash_ptx_insn *code = X->code;
    int steps = 0;
    while (steps < budget) {
        uint32_t run = W->live & ~W->blocked & ~W->wsync;
        uint32_t pc, M;
        if (!run) {
            /* lanes waiting at a warp-synchronous instruction whose partners exited or wait at a
             * CTA barrier: let them go with whoever is there */
            if (!W->wsync || (W->live & ~W->blocked & ~W->wsync))
                break;
            deuniform(W);
            pc = UINT32_MAX;
            for (int l = 0; l < 32; l++)
                if (W->wsync >> l & 1 && W->pc[l] < pc)
                    pc = W->pc[l];
            M = 0;
            for (int l = 0; l < 32; l++)
                if (W->wsync >> l & 1 && W->pc[l] == pc)
                    M |= 1u << l;
            W->wsync &= ~M;
            W->force = 1;
        } else if (W->uniform) {
            pc = W->upc;
            M = run;
        } else {
            pc = UINT32_MAX;
            for (int l = 0; l < 32; l++)
                if (run >> l & 1 && W->pc[l] < pc)
                    pc = W->pc[l];
            M = 0;
            for (int l = 0; l < 32; l++)
                if (run >> l & 1 && W->pc[l] == pc)
                    M |= 1u << l;
            if (W->wsync) {   /* lanes parked at this pc join */
                uint32_t j = 0;
                for (int l = 0; l < 32; l++)
                    if (W->wsync >> l & 1 && W->pc[l] == pc)
                        j |= 1u << l;
                W->wsync &= ~j;
                M |= j;
            }
            if (M == run && !W->wsync && !W->blocked) {
                W->uniform = 1;
                W->upc = pc;
            }
        }
        const ash_ptx_insn *in = &code[pc];
        W->R = W->Rall + (size_t)X->regbase[in->func] * 32;
        uint32_t E = M;
        if (in->guard >= 0) {
            const uint64_t *g = W->R + (size_t)in->guard * 32;
            uint32_t gm = 0;
            for (int l = 0; l < 32; l++)
                gm |= (uint32_t)(g[l] & 1) << l;
            E = M & (in->guard_neg ? ~gm : gm);
        }
        steps++;
        C->warp_instr++;
        C->lane_instr += (unsigned)hc_popc32(E);
        int r = hc_exec_insn(C, W, in, pc, M, E);
        W->force = 0;
        if (r < 0) {
            if (!atomic_load(&X->abort))   /* an operand form the executor does not implement */
                hc_xfail(X, CUDA_ERROR_NOT_SUPPORTED, "kernel %s: PTX line %d: not supported at run time: %s",
                      X->f->name, in->line, ash_ptx_line_text(X->m, in->line));
            return -1;
        }
        if (r == HC_STEP_NEXT) {
            if (W->uniform) {
                W->upc = pc + 1;
            } else {
                for (int l = 0; l < 32; l++)
                    if (M >> l & 1)
                        W->pc[l] = pc + 1;
            }
        } else if (r == HC_STEP_YIELD) {
            break;
        }
    }
    return steps;
}

/* The barrier ids whose waits are complete: release their lanes. As the PTX ISA defines it, a
 * warp has arrived when all its non-exited threads have; a barrier without a thread count waits
 * for every warp that has live threads (exited threads no longer count), one with a count for
 * count / 32 warps (exited threads do not lower it, so a count that can no longer be reached is
 * a deadlock). */
static int barriers_release(hc_cta *C)
{
    int released = 0;
    for (int id = 0; id < HC_NBAR; id++) {
        if (!C->bar_count[id])
            continue;
        unsigned arrived = 0, pending = 0;
        for (unsigned w = 0; w < C->nwarps; w++) {
            uint32_t live = C->w[w].live;
            if (live && (C->bar_arr[id][w] & live) == live)
                arrived++;
            else if (live)
                pending++;
        }
        if (C->bar_expect[id] ? arrived * 32 < C->bar_expect[id] : pending > 0)
            continue;
        for (unsigned w = 0; w < C->nwarps; w++) {
            hc_warp *W = &C->w[w];
            for (int l = 0; l < 32; l++)
                if (W->blocked >> l & 1 && W->bar_id[l] == id) {
                    W->blocked &= ~(1u << l);
                    const ash_ptx_insn *in = &C->X->code[W->pc[l] - 1];
                    if (in->sub == ASH_PTX_B_RED_POPC || in->sub == ASH_PTX_B_RED_AND ||
                        in->sub == ASH_PTX_B_RED_OR) {
                        uint64_t v = in->sub == ASH_PTX_B_RED_POPC ? C->bar_red[id]
                                   : in->sub == ASH_PTX_B_RED_AND ? (C->bar_red_and[id] ? 1 : 0)
                                                                   : (C->bar_red[id] ? 1 : 0);
                        W->Rall[((size_t)C->X->regbase[in->func] + (size_t)in->o[0].reg) * 32 + l] = v;
                    }
                }
        }
        C->bar_count[id] = 0;
        C->bar_expect[id] = 0;
        C->bar_red[id] = 0;
        C->bar_red_and[id] = 1;
        memset(C->bar_arr[id], 0, sizeof C->bar_arr[id]);
        released = 1;
    }
    return released;
}

static void deadlock(hc_cta *C)
{
    char waiting[512] = "", missing[1024] = "";
    size_t wo = 0, mo = 0;
    int bid = -1;
    for (int id = 0; id < HC_NBAR; id++)
        if (C->bar_count[id]) {
            bid = id;
            break;
        }
    for (unsigned w = 0; w < C->nwarps; w++) {
        hc_warp *W = &C->w[w];
        if (!W->live)
            continue;
        if (W->blocked && wo < sizeof waiting - 16)
            wo += (size_t)snprintf(waiting + wo, sizeof waiting - wo, "%s%u", wo ? " " : "", w);
        uint32_t other = W->live & ~W->blocked;
        if (other && mo < sizeof missing - 128) {
            int l = __builtin_ctz(other);
            uint32_t pc = W->uniform ? W->upc : W->pc[l];
            mo += (size_t)snprintf(missing + mo, sizeof missing - mo, "%s%u (%d threads at PTX line %d)",
                                   mo ? ", " : "", w, hc_popc32(other), C->X->code[pc].line);
        }
    }
    xlaunch *X = C->X;
    char bars[512] = "";
    size_t bo = 0;
    for (int id = bid; id >= 0 && id < HC_NBAR && bo < sizeof bars - 64; id++)
        if (C->bar_count[id])
            bo += (size_t)snprintf(bars + bo, sizeof bars - bo, "%sbarrier %d has %u of %u threads", bo ? ", " : "",
                                   id, C->bar_count[id], C->bar_expect[id] ? C->bar_expect[id] : C->live_threads);
    hc_xfail(X, CUDA_ERROR_LAUNCH_FAILED,
          "barrier deadlock in %s block (%u,%u,%u): %s; waiting warps: %s; missing warps: %s", X->f->name,
          C->ctaid[0], C->ctaid[1], C->ctaid[2], bars[0] ? bars : "no barrier has arrivals",
          waiting[0] ? waiting : "none", missing[0] ? missing : "none (they wait at another barrier)");
}

/* a CTA's warps at the kernel's first instruction, its barriers empty */
static void cta_start(hc_cta *C)
{
    xlaunch *X = C->X;
    const ash_ptx_func *f = X->f;
    memset(C->bar_count, 0, sizeof C->bar_count);
    memset(C->bar_arr, 0, sizeof C->bar_arr);
    memset(C->bar_expect, 0, sizeof C->bar_expect);
    memset(C->bar_red, 0, sizeof C->bar_red);
    for (int i = 0; i < HC_NBAR; i++)
        C->bar_red_and[i] = 1;
    C->live_threads = X->nthreads;
    C->rounds = 0;
    hc_async_reset(C);
    for (unsigned w = 0; w < X->nwarps; w++) {
        hc_warp *W = &C->w[w];
        unsigned left = X->nthreads - w * 32;
        W->live = left >= 32 ? ~0u : (1u << left) - 1;
        W->blocked = W->wsync = 0;
        W->uniform = 1;
        W->upc = (uint32_t)f->first;
        W->id = (int)w;
        W->cache = -1;
        W->force = 0;
        memset(W->lbase, 0, sizeof W->lbase);
        memset(W->depth, 0, sizeof W->depth);
        memset(W->cc, 0, sizeof W->cc);
    }
}

/* one round of a CTA: a quantum for each live warp, then its barriers; 1: the CTA has exited,
 * 0: it has more to run, -1: the launch stops (a fault, a deadlock, the timeout) */
static int cta_round(hc_cta *C)
{
    xlaunch *X = C->X;
    int progress = 0, alive = 0;
    for (unsigned w = 0; w < X->nwarps; w++) {
        hc_warp *W = &C->w[w];
        if (!W->live)
            continue;
        alive = 1;
        int s = warp_run(C, W, QUANTUM);
        if (s < 0)
            return -1;
        if (s > 0)
            progress = 1;
    }
    if (atomic_load_explicit(&X->abort, memory_order_relaxed))
        return -1;
    if (barriers_release(C))
        progress = 1;
    if (!alive)
        return 1;
    if (!progress) {
        deadlock(C);
        return -1;
    }
    if (C->async && hc_async_round(C) < 0)
        return -1;
    if (X->deadline && (++C->rounds & 63) == 0 && now_ns() > X->deadline) {
        hc_xfail(X, CUDA_ERROR_LAUNCH_TIMEOUT, "kernel %s ran past HOSTCUDA_KERNEL_TIMEOUT_S (%g s) in block (%u,%u,%u)",
              X->f->name, X->L->timeout_s, C->ctaid[0], C->ctaid[1], C->ctaid[2]);
        return -1;
    }
    return 0;
}

static int cta_run(hc_cta *C)
{
    cta_start(C);
    int r;
    while ((r = cta_round(C)) == 0)
        ;
    return r < 0 ? -1 : 0;
}

/* a CTA's buffers (warps, shared, local, registers); 0, or -1 out of host memory */
static int cta_alloc(xlaunch *X, hc_cta *C)
{
    memset(C, 0, sizeof *C);
    C->X = X;
    C->nwarps = X->nwarps;
    C->shared_bytes = X->shared_bytes;
    C->ranges = X->L->ranges;
    size_t nregs = X->nregs ? X->nregs : 1;
    C->w = calloc(X->nwarps, sizeof *C->w);
    C->shared = calloc(1, X->shared_bytes + 16);
    C->local = calloc(1, X->local_size * X->nwarps * 32 + 16);
    C->regs = calloc(nregs * 32 * X->nwarps + 32, sizeof(uint64_t));
    if (!C->w || !C->shared || !C->local || !C->regs)
        return -1;
    for (unsigned w = 0; w < X->nwarps; w++)
        C->w[w].R = C->w[w].Rall = C->regs + nregs * 32 * w;
    return 0;
}

static void cta_free(xlaunch *X, hc_cta *C)
{
    atomic_fetch_add(&X->warp_instr, C->warp_instr);
    atomic_fetch_add(&X->lane_instr, C->lane_instr);
    hc_async_free(C);
    free(C->w);
    free(C->shared);
    free(C->local);
    free(C->regs);
}

static void cta_place(const xlaunch *X, hc_cta *C, unsigned b)
{
    unsigned gx = X->L->grid[0], gy = X->L->grid[1];
    C->ctaid[0] = b % gx;
    C->ctaid[1] = (b / gx) % gy;
    C->ctaid[2] = b / (gx * gy);
}

/* an ordinary launch: each worker takes the next CTA and runs it to its end */
static void *worker(void *arg)
{
    xlaunch *X = arg;
    hc_cta C;
    if (cta_alloc(X, &C) < 0) {
        hc_xfail(X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for a CTA of %s", X->f->name);
        goto out;
    }
    for (;;) {
        if (atomic_load_explicit(&X->abort, memory_order_relaxed))
            break;
        unsigned b = atomic_fetch_add(&X->next_cta, 1);
        if (b >= X->ncta)
            break;
        cta_place(X, &C, b);
        if (b)   /* shared memory starts undefined on a GPU; static initialisers do not exist */
            memset(C.shared, 0, X->shared_bytes);
        if (cta_run(&C) < 0)
            break;
    }
out:
    cta_free(X, &C);
    return NULL;
}

/* a cooperative launch: worker k holds CTAs k, k + nt, k + 2 nt, ... all at once and gives each a
 * round in turn, so every CTA of the grid is resident and a grid-wide barrier (CTAs spinning on a
 * global counter) is reached by all of them; the workers run side by side */
static void *coop_worker(void *arg)
{
    xlaunch *X = arg;
    unsigned k = atomic_fetch_add(&X->next_worker, 1), nt = X->nworkers;
    unsigned n = k < X->ncta ? (X->ncta - k + nt - 1) / nt : 0, left = n;
    hc_cta *C = calloc(n ? n : 1, sizeof *C);
    char *done = calloc(n ? n : 1, 1);
    if (!C || !done) {
        hc_xfail(X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for the CTAs of cooperative %s", X->f->name);
        free(C);
        free(done);
        return NULL;
    }
    unsigned made = 0;
    for (; made < n; made++) {
        if (cta_alloc(X, &C[made]) < 0) {
            hc_xfail(X, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory for %u resident CTAs of cooperative %s", X->ncta,
                  X->f->name);
            made++;
            goto out;
        }
        cta_place(X, &C[made], k + made * nt);
        cta_start(&C[made]);
    }
    while (left && !atomic_load_explicit(&X->abort, memory_order_relaxed))
        for (unsigned i = 0; i < n && left; i++) {
            if (done[i])
                continue;
            int r = cta_round(&C[i]);
            if (r < 0)
                goto out;
            if (r > 0) {
                done[i] = 1;
                left--;
            }
        }
out:
    for (unsigned i = 0; i < made; i++)
        cta_free(X, &C[i]);
    free(C);
    free(done);
    return NULL;
}

CUresult hc_exec_run(const hc_exec_launch *L)
{
    xlaunch X;
    memset(&X, 0, sizeof X);
    X.L = L;
    X.m = L->m;
    X.f = &L->m->funcs[L->func];
    X.code = L->m->insns;
    X.nthreads = L->block[0] * L->block[1] * L->block[2];
    X.nwarps = (X.nthreads + 31) / 32;
    X.ncta = L->grid[0] * L->grid[1] * L->grid[2];
    X.dyn_base = (X.f->shared_size + 15) / 16 * 16;
    X.shared_bytes = X.dyn_base + L->shmem;
    X.frame = (X.f->frame_size + 15) / 16 * 16;
    /* registers: the kernel's slots, then those of every function it can call */
    const ash_ptx_module *m = L->m;
    X.regbase = calloc((size_t)m->nfuncs + 1, sizeof *X.regbase);
    char *mark = calloc((size_t)m->nfuncs + 1, 1);
    int *order = calloc((size_t)m->nfuncs + 1, sizeof *order);
    if (!X.regbase || !mark || !order) {
        free(X.regbase);
        free(mark);
        free(order);
        fprintf(stderr, "hostcuda: out of host memory for a launch of %s\n", X.f->name);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int nr = reachable(m, L->func, mark, order);
    for (int i = 0; i < m->nfuncs; i++)
        X.regbase[i] = -1;   /* not reached */
    for (int k = 0; k < nr; k++) {
        X.regbase[order[k]] = (int)X.nregs;
        X.nregs += (size_t)m->funcs[order[k]].nregs;
    }
    /* a call frame here also holds the callee's saved registers: 4x the stack limit, >= 16 KiB */
    size_t call_stack = L->stack_size * 4 > HC_CALL_STACK ? L->stack_size * 4 : HC_CALL_STACK;
    X.local_size = X.frame + (nr > 1 ? call_stack : 0);
    X.grid_ws = reads_grid_workspace(m, order, nr);
    free(mark);
    free(order);
    pthread_mutex_init(&X.mu, NULL);
    uint64_t t0 = now_ns();
    if (L->timeout_s > 0)
        X.deadline = t0 + (uint64_t)(L->timeout_s * 1e9);
    unsigned nt = L->threads > 0 ? (unsigned)L->threads : 1;
    if (nt > X.ncta)
        nt = X.ncta;
    void *(*run)(void *) = L->coop ? coop_worker : worker;
    X.nworkers = nt;
    if (nt <= 1) {
        X.nworkers = 1;
        run(&X);
    } else {
        pthread_t *th = calloc(nt, sizeof *th);
        unsigned started = 0;
        for (unsigned i = 0; th && i < nt; i++)
            if (pthread_create(&th[i], NULL, run, &X) == 0)
                started++;
            else
                break;
        if (L->coop && started < nt) {   /* each worker's share of the CTAs was fixed by nt */
            atomic_store(&X.abort, 1);
            if (X.err == CUDA_SUCCESS) {
                X.err = CUDA_ERROR_OUT_OF_MEMORY;
                snprintf(X.msg, sizeof X.msg, "cooperative %s: could start only %u of %u host threads", X.f->name,
                         started, nt);
            }
        } else if (!started) {
            X.nworkers = 1;
            run(&X);
        }
        for (unsigned i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        free(th);
    }
    uint64_t t1 = now_ns();
    if (X.plen && L->out) {
        *L->out = X.pbuf;
        *L->outlen = X.plen;
    } else {
        if (X.plen) {
            fwrite(X.pbuf, 1, X.plen, stdout);
            fflush(stdout);
        }
        free(X.pbuf);
    }
    if (L->stats) {
        atomic_fetch_add(&L->stats->launches, 1);
        atomic_fetch_add(&L->stats->warp_instr, atomic_load(&X.warp_instr));
        atomic_fetch_add(&L->stats->lane_instr, atomic_load(&X.lane_instr));
        atomic_fetch_add(&L->stats->nanos, t1 - t0);
    }
    if (X.printf_dropped)
        fprintf(stderr, "hostcuda: %s: %zu bytes of device printf output past the printf FIFO (CU_LIMIT_PRINTF_FIFO_SIZE "
                        "%zu bytes) were dropped, as a GPU drops them\n", X.f->name, X.printf_dropped, L->printf_fifo);
    if (X.err != CUDA_SUCCESS)
        fprintf(stderr, "hostcuda: %s\n", X.msg);
    pthread_mutex_destroy(&X.mu);
    free(X.regbase);
    return X.err;
}
