/* hc_exec_call.c — the PTX interpreter's calls: device functions (direct and indirect, with
 * their frames in each lane's local memory) and the builtins a kernel calls but does not define:
 * vprintf (buffered with the launch, capped by CU_LIMIT_PRINTF_FIFO_SIZE), __assertfail, and
 * malloc/free on the context's heap (hc_limit.c, through the launch's callbacks).
 * Invariant: a frame is [header][callee's saved registers][callee's frame] above the caller's;
 * an indirect call's target is a function address (HC_WIN_FUNC + 16 x index) of this module.
 * Threading: called on a launch's worker for one warp; shared state only through the xlaunch
 * (its mutex for output and faults).
 * Must not: write outside the lane's local memory. */
#include "hc_exec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- device printf and assert */
static int read_cstr(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, uint64_t a, char *buf, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        const char *p = hc_exec_addr(C, W, lane, in, ASH_PTX_S_GENERIC, a + i, 1, HC_ACC_LD);
        if (!p)
            return -1;
        buf[i] = *p;
        if (!*p)
            return 0;
    }
    buf[n - 1] = 0;
    return 0;
}

static void out_append(xlaunch *X, const char *s, size_t n)
{
    pthread_mutex_lock(&X->mu);
    if (X->L->printf_fifo && X->plen + n > X->L->printf_fifo) {   /* the FIFO is full: this record is lost */
        X->printf_dropped += n;
        n = 0;
    }
    if (X->plen + n + 1 > X->pcap) {
        size_t nc = X->pcap ? X->pcap * 2 : 4096;
        while (nc < X->plen + n + 1)
            nc *= 2;
        char *nb = realloc(X->pbuf, nc);
        if (nb) {
            X->pbuf = nb;
            X->pcap = nc;
        }
    }
    if (X->plen + n + 1 <= X->pcap) {
        memcpy(X->pbuf + X->plen, s, n);
        X->plen += n;
    }
    pthread_mutex_unlock(&X->mu);
}

/* vprintf(fmt, args): args is a packed buffer, each argument at its natural alignment */
static int dev_printf(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, uint64_t fmt_a, uint64_t args_a)
{
    char fmt[1024], out[4096];
    if (read_cstr(C, W, lane, in, fmt_a, fmt, sizeof fmt))
        return -1;
    size_t o = 0, off = 0;
    for (const char *p = fmt; *p && o < sizeof out - 1;) {
        if (*p != '%') {
            out[o++] = *p++;
            continue;
        }
        if (p[1] == '%') {
            out[o++] = '%';
            p += 2;
            continue;
        }
        char spec[64];
        size_t k = 0;
        spec[k++] = *p++;
        int lcount = 0;
        while (*p && strchr("-+ #0123456789.*hlLqjzt", *p) && k < sizeof spec - 2) {
            if (*p == 'l' || *p == 'L' || *p == 'q' || *p == 'j' || *p == 'z' || *p == 't')
                lcount++;
            spec[k++] = *p++;
        }
        if (!*p)
            break;
        char conv = *p++;
        spec[k++] = conv;
        spec[k] = 0;
        int is_float = strchr("fFeEgGaA", conv) != NULL;
        int wide = is_float || conv == 'p' || conv == 's' || lcount > 0;
        size_t sz = wide ? 8 : 4;
        off = (off + sz - 1) / sz * sz;
        const unsigned char *ap = hc_exec_addr(C, W, lane, in, ASH_PTX_S_GENERIC, args_a + off, (unsigned)sz,
                                               HC_ACC_LD);
        if (!ap)
            return -1;
        off += sz;
        uint64_t v = 0;
        memcpy(&v, ap, sz);
        int wrote;
        size_t room = sizeof out - o;
        if (is_float) {
            double d;
            memcpy(&d, &v, 8);
            wrote = snprintf(out + o, room, spec, d);
        } else if (conv == 's') {
            char s[512];
            if (read_cstr(C, W, lane, in, v, s, sizeof s))
                return -1;
            wrote = snprintf(out + o, room, spec, s);
        } else if (conv == 'p') {
            wrote = snprintf(out + o, room, "%#llx", (unsigned long long)v);
        } else if (lcount) {
            char s2[64];
            snprintf(s2, sizeof s2, "%.*sll%c", (int)(k - 1 - (size_t)lcount), spec, conv);
            wrote = snprintf(out + o, room, s2, (long long)v);
        } else if (conv == 'c') {
            wrote = snprintf(out + o, room, spec, (int)(uint32_t)v);
        } else {
            wrote = snprintf(out + o, room, spec, (int)(uint32_t)v);
        }
        if (wrote > 0)
            o += (size_t)wrote < room ? (size_t)wrote : room - 1;
    }
    out_append(C->X, out, o);
    return 0;
}

/* __assertfail(message, file, line, function, charSize) */
static void dev_assert(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, const uint64_t *args)
{
    char msg[512], file[512], fn[512];
    if (read_cstr(C, W, lane, in, args[0], msg, sizeof msg) || read_cstr(C, W, lane, in, args[1], file, sizeof file) ||
        read_cstr(C, W, lane, in, args[3], fn, sizeof fn))
        return;
    unsigned t[3];
    hc_thread_xyz(C->X, (unsigned)(W->id * 32 + lane), t);
    char gpu[1800];
    snprintf(gpu, sizeof gpu, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
             (unsigned)args[2], fn, C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0], t[1], t[2], msg);
    out_append(C->X, gpu, strlen(gpu));   /* printed where a GPU prints it: with the device's output */
    hc_xfail(C->X, CUDA_ERROR_ASSERT, "device assertion failed in %s (PTX line %d) block (%u,%u,%u) thread (%u,%u,%u)",
          C->X->f->name, in->line, C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0], t[1], t[2]);
}

static unsigned char *lane_local(hc_cta *C, hc_warp *W, int l)
{
    return (unsigned char *)C->local + (size_t)(W->id * 32 + l) * C->X->local_size;
}

/* device malloc(size) / free(p) for lane l: the launch's heap (CU_LIMIT_MALLOC_HEAP_SIZE); malloc
 * answers NULL when the heap is exhausted, as on a GPU; free of what malloc did not return (or
 * returned and was freed) is a fault */
static int device_heap(hc_cta *C, hc_warp *W, int l, const ash_ptx_insn *in, int is_malloc, uint64_t a)
{
    xlaunch *X = C->X;
    const hc_exec_launch *L = X->L;
    if (is_malloc) {
        uint64_t p = L->heap ? L->heap_alloc(L->heap, a) : 0;
        if (in->call_nret) {
            const ash_ptx_var *rv = &X->m->vars[X->m->callvars[in->call_args]];
            unsigned char *dst = lane_local(C, W, l) + W->lbase[l] + rv->offset;
            memcpy(dst, &p, rv->size < 8 ? rv->size : 8);
        }
        return 0;
    }
    if (!a || (L->heap && L->heap_free(L->heap, a) == 0))
        return 0;
    unsigned t[3];
    hc_thread_xyz(X, (unsigned)(W->id * 32 + l), t);
    hc_xfail(X, CUDA_ERROR_LAUNCH_FAILED,
          "free of 0x%llx in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): not a block device malloc "
          "returned, or one already freed",
          (unsigned long long)a, X->f->name, in->line, ash_ptx_line_text(X->m, in->line), C->ctaid[0], C->ctaid[1],
          C->ctaid[2], t[0], t[1], t[2]);
    return -1;
}

/* call of a builtin: arguments are the caller's .param variables (in its local frame) */
static int call_builtin(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    xlaunch *X = C->X;
    const ash_ptx_module *m = X->m;
    const ash_ptx_func *callee = &m->funcs[in->o[0].sym];
    int is_printf = !strcmp(callee->name, "vprintf");
    int is_malloc = !strcmp(callee->name, "malloc"), is_free = !strcmp(callee->name, "free");
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        uint64_t args[8] = {0};
        for (int k = 0; k < in->call_nargs && k < 8; k++) {
            const ash_ptx_var *v = &m->vars[m->callvars[in->call_args + in->call_nret + k]];
            const unsigned char *p =
                (const unsigned char *)C->local + (size_t)(W->id * 32 + l) * X->local_size + W->lbase[l] + v->offset;
            memcpy(&args[k], p, v->size > 8 ? 8 : v->size);
        }
        if (is_malloc || is_free) {
            if (device_heap(C, W, l, in, is_malloc, args[0]))
                return -1;
        } else if (is_printf) {
            if (dev_printf(C, W, l, in, args[0], args[1]))
                return -1;
            if (in->call_nret) {
                const ash_ptx_var *rv = &m->vars[m->callvars[in->call_args]];
                unsigned char *p =
                    (unsigned char *)C->local + (size_t)(W->id * 32 + l) * X->local_size + W->lbase[l] + rv->offset;
                int32_t zero = 0;
                memcpy(p, &zero, rv->size < 4 ? rv->size : 4);
            }
        } else {
            dev_assert(C, W, l, in, args);
            return -1;
        }
    }
    return 0;
}

/* A call frame in the lane's local memory, above the caller's frame:
 *   [header: return pc, caller's frame base, call pc][callee's saved registers][callee's frame]
 * The callee's registers are saved so that recursion finds its own values after a return. */
typedef struct frame_hdr {
    uint32_t ret_pc, old_lbase, call_pc, pad;
} frame_hdr;

static size_t al16(size_t v)
{
    return (v + 15) & ~(size_t)15;
}

/* an indirect call: the lanes of E whose target is the first lane's go now (*E narrowed to
 * them, *fi their function); the others stay at the call (they run it on a later step) */
static int indirect_target(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t *E, int *fi)
{
    xlaunch *X = C->X;
    const ash_ptx_module *m = X->m;
    const uint64_t *r = W->R + (size_t)in->o[0].reg * 32;
    int l0 = __builtin_ctz(*E);
    uint64_t a = r[l0];
    uint64_t g = (a - HC_WIN_FUNC) / 16;
    if ((a & HC_WIN_MASK) != HC_WIN_FUNC || (a & 15) || g >= (uint64_t)m->nfuncs || !m->funcs[g].defined ||
        m->funcs[g].is_entry || hc_is_builtin(&m->funcs[g]) || X->regbase[g] < 0) {
        unsigned t[3];
        hc_thread_xyz(X, (unsigned)(W->id * 32 + l0), t);
        hc_xfail(X, CUDA_ERROR_ILLEGAL_ADDRESS,
              "indirect call in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): 0x%llx is not the address of a "
              "device function of this module",
              X->f->name, in->line, ash_ptx_line_text(m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0], t[1],
              t[2], (unsigned long long)a);
        return -1;
    }
    uint32_t now = 0;
    for (int l = 0; l < 32; l++)
        if (*E >> l & 1 && r[l] == a)
            now |= 1u << l;
    if (now != *E) {   /* the rest wait at the call */
        hc_exec_deuniform(W);
        for (int l = 0; l < 32; l++)
            if ((*E & ~now) >> l & 1)
                W->pc[l] = pc;
    }
    *E = now;
    *fi = (int)g;
    return 0;
}

int hc_exec_call(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E)
{
    xlaunch *X = C->X;
    const ash_ptx_module *m = X->m;
    int fi = in->o[0].sym;
    uint32_t wait = 0;
    if (in->o[0].kind == ASH_PTX_K_REG) {
        if (!E)
            return HC_STEP_NEXT;
        uint32_t E0 = E;
        if (indirect_target(C, W, in, pc, &E, &fi) < 0)
            return -1;
        wait = E0 & ~E;
    }
    const ash_ptx_func *callee = &m->funcs[fi], *caller = &m->funcs[in->func];
    if (hc_is_builtin(callee)) {
        if (E && call_builtin(C, W, in, E) < 0)
            return -1;
        return HC_STEP_NEXT;
    }
    if (!E)
        return HC_STEP_NEXT;
    size_t save = al16(sizeof(frame_hdr) + (size_t)callee->nregs * 8);
    const uint64_t *Rc = W->Rall + (size_t)X->regbase[fi] * 32;
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        size_t nb = al16(W->lbase[l] + caller->frame_size), nl = nb + save;
        if (nl + callee->frame_size > X->local_size || W->depth[l] == UINT16_MAX) {
            unsigned t[3];
            hc_thread_xyz(X, (unsigned)(W->id * 32 + l), t);
            hc_xfail(X, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                  "stack overflow in %s (PTX line %d: %s) block (%u,%u,%u) thread (%u,%u,%u): call depth %u, %zu bytes "
                  "of local memory per thread",
                  X->f->name, in->line, ash_ptx_line_text(m, in->line), C->ctaid[0], C->ctaid[1], C->ctaid[2], t[0],
                  t[1], t[2], (unsigned)W->depth[l] + 1, X->local_size);
            return -1;
        }
        unsigned char *base = lane_local(C, W, l);
        frame_hdr h = {pc + 1, W->lbase[l], pc, 0};
        memcpy(base + nb, &h, sizeof h);
        for (int r = 0; r < callee->nregs; r++)
            memcpy(base + nb + sizeof h + (size_t)r * 8, &Rc[(size_t)r * 32 + l], 8);
        /* arguments: the caller's .param variables into the callee's parameters */
        for (int k = 0; k < in->call_nargs && k < callee->nparams; k++) {
            const ash_ptx_var *av = &m->vars[m->callvars[in->call_args + in->call_nret + k]];
            const ash_ptx_var *pv = &m->vars[callee->params[k].var];
            size_t n = av->size < pv->size ? av->size : pv->size;
            memcpy(base + nl + pv->offset, base + W->lbase[l] + av->offset, n);
        }
        W->lbase[l] = (uint32_t)nl;
        W->depth[l]++;
    }
    uint32_t target = (uint32_t)callee->first;
    if (E == M && W->uniform) {
        W->upc = target;
    } else {
        hc_exec_deuniform(W);
        for (int l = 0; l < 32; l++)
            if (M >> l & 1)
                W->pc[l] = (E >> l & 1) ? target : (wait >> l & 1) ? pc : pc + 1;
    }
    return HC_STEP_DONE;
}

int hc_exec_return(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E)
{
    xlaunch *X = C->X;
    const ash_ptx_module *m = X->m;
    const ash_ptx_func *callee = &m->funcs[in->func];
    size_t save = al16(sizeof(frame_hdr) + (size_t)callee->nregs * 8);
    uint64_t *Rc = W->Rall + (size_t)X->regbase[in->func] * 32;
    uint32_t first = UINT32_MAX;
    int same = 1;
    hc_exec_deuniform(W);
    for (int l = 0; l < 32; l++) {
        if (!(E >> l & 1))
            continue;
        unsigned char *base = lane_local(C, W, l);
        size_t nl = W->lbase[l], nb = nl - save;
        frame_hdr h;
        memcpy(&h, base + nb, sizeof h);
        const ash_ptx_insn *call = &X->code[h.call_pc];
        for (int k = 0; k < call->call_nret && k < callee->nrets; k++) {
            const ash_ptx_var *rv = &m->vars[m->callvars[call->call_args + k]];
            const ash_ptx_var *cv = &m->vars[callee->rets[k]];
            size_t n = rv->size < cv->size ? rv->size : cv->size;
            memcpy(base + h.old_lbase + rv->offset, base + nl + cv->offset, n);
        }
        for (int r = 0; r < callee->nregs; r++)
            memcpy(&Rc[(size_t)r * 32 + l], base + nb + sizeof h + (size_t)r * 8, 8);
        W->lbase[l] = h.old_lbase;
        W->depth[l]--;
        W->pc[l] = h.ret_pc;
        if (first == UINT32_MAX)
            first = h.ret_pc;
        else if (h.ret_pc != first)
            same = 0;
    }
    (void)same;
    return 0;
}
