/* hc_exec_mma.h — private to hc_exec*.c: the tensor-core instructions (wmma.load / store / mma,
 * mma.sync, ldmatrix, stmatrix) and cvt to .tf32, implemented in hc_exec_mma.c.
 * hc_mma_check() is the load-time check of one such instruction, hc_exec_mma() runs it for a warp
 * (same contract as hc_exec_insn: HC_STEP_NEXT / HC_STEP_DONE while the warp gathers, -1 fault).
 */
#ifndef HC_EXEC_MMA_H
#define HC_EXEC_MMA_H

#include "hc_exec_ops.h"

/* in is wmma/mma/ldmatrix/stmatrix or a cvt to .tf32 */
static inline int hc_mma_is(const ash_ptx_insn *in)
{
    return in->op == ASH_PTX_OP_WMMA || in->op == ASH_PTX_OP_MMA || in->op == ASH_PTX_OP_LDMATRIX ||
           in->op == ASH_PTX_OP_STMATRIX || (in->op == ASH_PTX_OP_CVT && in->type == ASH_PTX_T_TF32);
}
/* 1 if the executor implements in (hc_mma_is(in)), else 0 and *why says what it lacks */
int hc_mma_check(const ash_ptx_module *m, const ash_ptx_insn *in, const char **why);
int hc_exec_mma(hc_cta *C, hc_warp *W, const ash_ptx_insn *in, uint32_t M, uint32_t E);

#endif /* HC_EXEC_MMA_H */
