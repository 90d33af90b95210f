/* hc_exec_ops.h — private to hc_exec*.c: the warp and CTA records the executor's scheduler
 * (hc_exec.c) and its instruction implementations (hc_exec_ops.c) share.
 * A warp is in "uniform" mode while all its runnable lanes sit at one PC (upc); otherwise pc[]
 * holds each lane's PC. Blocked lanes wait at a CTA barrier; wsync lanes at a warp-synchronous
 * instruction for the rest of their member mask.
 */
#ifndef HC_EXEC_OPS_H
#define HC_EXEC_OPS_H

#include "hc_exec.h"

/* generic-address windows of the shared, local and param spaces: above the canonical host range */
#define HC_WIN_MASK 0xffffe00000000000ull
#define HC_WIN_SHARED 0xffff800000000000ull
#define HC_WIN_LOCAL 0xffffa00000000000ull
#define HC_WIN_PARAM 0xffffc00000000000ull
/* a function's address (a vtable's entry, a function pointer): the window, then its index x 16 */
#define HC_WIN_FUNC 0xffffe00000000000ull

#define HC_NBAR 16
enum { HC_ACC_LD = 0, HC_ACC_ST, HC_ACC_ATOM };
/* hc_exec_insn results */
enum { HC_STEP_NEXT = 0, HC_STEP_DONE = 1, HC_STEP_YIELD = 2 };

typedef struct hc_warp {
    uint64_t *R;            /* [slot][lane] of the function being executed (Rall + its base) */
    uint64_t *Rall;         /* the warp's whole register file: the kernel's, then each callee's */
    uint32_t lbase[32];     /* each lane's current frame in its local memory (0: the kernel's) */
    uint16_t depth[32];     /* each lane's call depth */
    uint8_t cc[32];         /* each lane's carry flag (add.cc / addc ...) */
    uint32_t pc[32];
    uint32_t live, blocked, wsync;
    uint32_t upc;
    int uniform;
    int force;              /* this step runs a warp-synchronous op with the lanes that came */
    int id;
    int cache;              /* last allocation hit */
    uint8_t bar_id[32];
} hc_warp;

struct xlaunch;
typedef struct hc_cta {
    struct xlaunch *X;
    unsigned ctaid[3];
    hc_warp *w;
    unsigned nwarps;
    unsigned char *shared;
    size_t shared_bytes;             /* copies of launch facts for the fast paths */
    const hc_exec_range *ranges;
    char *local;
    uint64_t *regs;
    unsigned bar_count[HC_NBAR], bar_expect[HC_NBAR], bar_red[HC_NBAR], bar_red_and[HC_NBAR];
    uint32_t bar_arr[HC_NBAR][32];   /* per barrier, per warp: the lanes that arrived (sync or arrive) */
    unsigned live_threads;
    unsigned long long warp_instr, lane_instr;
    unsigned rounds;                 /* rounds run (the timeout is checked every 64) */
    struct hc_async *async;          /* cp.async queues and mbarrier waits (hc_exec_async.c), NULL until used */
} hc_cta;

/* bits set in a lane mask (no libgcc call where the CPU target lacks popcnt) */
static inline unsigned hc_popc32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/* execute `in` at pc for the lanes M (E: those whose guard holds); HC_STEP_NEXT: the caller
 * moves M to pc + 1; DONE: the instruction set the PCs; YIELD: also stop this warp's turn; -1 fault */
int hc_exec_insn(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E);
void *hc_exec_addr(hc_cta *C, hc_warp *W, int lane, const ash_ptx_insn *in, int space, uint64_t a, unsigned size,
                   int acc);
int hc_exec_call(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E);
/* ret for lanes E of a .func (depth > 0): back to their callers; -1 after a fault */
int hc_exec_return(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E);
void hc_exec_deuniform(hc_warp *W);
/* launch facts the instructions need */
size_t hc_exec_frame(const hc_cta *C);
size_t hc_exec_dyn_base(const hc_cta *C);
const uint64_t *hc_exec_var_addr(const hc_cta *C);
const hc_exec_launch *hc_exec_launch_of(const hc_cta *C);
void hc_exec_trap(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, int lane);
/* operand access for hc_exec_async.c */
const uint64_t *hc_exec_src(const hc_cta *C, const hc_warp *W, const ash_ptx_insn *in, int k, uint64_t *tmp);
uint64_t *hc_exec_dst(hc_warp *W, const ash_ptx_insn *in, int k);
uint64_t hc_exec_mem_addr(const hc_cta *C, const hc_warp *W, const ash_ptx_insn *in, int k, int lane);
/* hc_exec_async.c: cp.async*, mbarrier.*, brx.idx (ops ASH_PTX_OP_CPASYNC .. ASH_PTX_OP_BRX) */
int hc_exec_async(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t pc, uint32_t M, uint32_t E);
/* load-time check of one of those instructions: 1, or 0 with *why */
int hc_async_supported(const ash_ptx_module *m, const ash_ptx_insn *in, const char **why);
/* a CTA starts (drops what a previous CTA left) / its buffers are freed */
void hc_async_reset(hc_cta *C);
void hc_async_free(hc_cta *C);
/* after a round of the CTA: -1 (reported) when every runnable warp only failed mbarrier waits for
 * too many rounds while no mbarrier changed: a wait no thread of the CTA can complete */
int hc_async_round(hc_cta *C);
/* hc_exec_tex.c: tex, tld4, txq, suld, sust, suq for lanes E; and the load-time check of their forms */
int hc_exec_tex(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t E);
int hc_exec_tex_supported(const ash_ptx_insn *in, const char **why);

#endif /* HC_EXEC_OPS_H */
