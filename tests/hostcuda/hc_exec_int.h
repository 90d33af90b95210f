/* hc_exec_int.h — private to the PTX interpreter (hc_exec.c, hc_exec_call.c): one launch's
 * state, shared by the scheduler and the calls / device builtins, and the helpers both use.
 * Threading: an xlaunch is shared by the launch's workers; its mutable fields are atomics or
 * under mu (the first fault, the device printf buffer). */
#ifndef HC_EXEC_INT_H
#define HC_EXEC_INT_H

#include "hc_exec_ops.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct xlaunch {
    const hc_exec_launch *L;
    const ash_ptx_module *m;
    const ash_ptx_func *f;
    const ash_ptx_insn *code;
    unsigned nthreads, nwarps, ncta;
    size_t shared_bytes, dyn_base, frame;
    size_t local_size;           /* per thread: the kernel's frame, then the call stack */
    int *regbase;                /* per function: its first slot in a warp's register file, -1: not reached */
    size_t nregs;                /* slots per lane */
    atomic_uint next_cta;
    atomic_int abort;
    pthread_mutex_t mu;
    CUresult err;
    char msg[2048];
    uint64_t deadline;
    char *pbuf;                  /* device printf output, written at the end of the launch */
    size_t plen, pcap;
    atomic_ullong warp_instr, lane_instr;
    int grid_ws;                 /* the kernel reads the grid workspace (%envreg1:2) */
    atomic_uint next_worker;     /* cooperative launch: worker k runs CTAs k, k + nt, ... */
    unsigned nworkers;
    size_t printf_dropped;       /* device printf bytes past CU_LIMIT_PRINTF_FIFO_SIZE */
} xlaunch;

/* a fault: the first one is the launch's result and its hostcuda: line; the others stop */
void hc_xfail(xlaunch *X, CUresult err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* thread index t of the CTA as (x, y, z) */
void hc_thread_xyz(const xlaunch *X, unsigned t, unsigned out[3]);
/* vprintf, __assertfail, malloc, free: run by hc_exec_call.c, not interpreted */
int hc_is_builtin(const ash_ptx_func *f);

#endif /* HC_EXEC_INT_H */
