/* hc_exec.h — private to hostcuda: the SIMT executor that runs a kernel from its decoded PTX.
 *
 * hc_exec_check() tells, at module load, whether a kernel (and what it calls) uses only what the
 * executor implements; hc_exec_run() runs one launch: CTAs of 32-lane warps, a PC per lane
 * (lowest first), CTAs spread over HOSTCUDA_THREADS host threads. Global memory is reached
 * through the allocation table given with the launch, every access checked.
 * Threading: hc_exec_run is called on a stream worker without hc_mu; it starts its own threads.
 */
#ifndef HC_EXEC_H
#define HC_EXEC_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "../../shim/ptx/ash_ptx.h"

struct hc_tex_view;   /* hc_tex.h */

/* one allocation the kernel may touch: device addresses [lo, lo + size) live at rw */
typedef struct hc_exec_range {
    uintptr_t lo;
    size_t size;       /* bytes asked for */
    size_t span;       /* bytes reserved (the allocation's block) */
    char *rw;
} hc_exec_range;

/* per-kernel counters for HOSTCUDA_EXEC_STATS */
typedef struct hc_exec_stats {
    _Atomic unsigned long long launches, warp_instr, lane_instr, nanos;
} hc_exec_stats;

typedef struct hc_exec_launch {
    const ash_ptx_module *m;
    int func;
    unsigned grid[3], block[3];
    unsigned shmem;               /* dynamic shared bytes */
    const unsigned char *params;  /* the parameter block, device addresses as the program gave them */
    size_t params_size;
    const uint64_t *var_addr;     /* per module variable: its device address (global, const) */
    const hc_exec_range *ranges;  /* sorted by lo */
    int nranges;
    int threads;                  /* host threads */
    double timeout_s;             /* 0: none */
    hc_exec_stats *stats;
    /* an address outside `ranges` (e.g. virtual-memory mappings): its host address if [a, a + n)
     * is mapped and accessible, else NULL; may be NULL */
    void *(*resolve)(uint64_t a, size_t n);
    uint32_t envreg[32];          /* %envreg0..31 (a cooperative launch: 1:2 = its grid barrier's address) */
    char **out;                   /* non-NULL: device printf output handed back (malloc'ed), else stdout */
    size_t *outlen;
    /* a cooperative launch: its CTAs all resident at once, interleaved on the `threads` workers
     * (envreg 1:2 then hold its grid workspace) */
    int coop;
    size_t stack_size;            /* CU_LIMIT_STACK_SIZE: bytes per thread for calls (0: the default) */
    size_t printf_fifo;           /* CU_LIMIT_PRINTF_FIFO_SIZE: device printf bytes kept (0: no cap) */
    /* device malloc/free (NULL when the kernel calls neither): thread-safe, shared by launches */
    void *heap;
    uint64_t (*heap_alloc)(void *heap, uint64_t size);   /* device address, 0 when exhausted */
    int (*heap_free)(void *heap, uint64_t a);            /* 0, or -1: a is not a live malloc block */
    /* texture (surf 0) and surface (surf 1) objects: 0 and the view copied, -1 not a live one; may
     * be NULL (every handle is then bad) */
    int (*tex_lookup)(uint64_t h, int surf, struct hc_tex_view *out);
} hc_exec_launch;

/* 0 if kernel `func` can run; else -1 and one line (without the "hostcuda: " prefix) in msg */
int hc_exec_check(const ash_ptx_module *m, int func, char *msg, size_t n);
/* run a launch; on failure one hostcuda: line has been written to stderr */
CUresult hc_exec_run(const hc_exec_launch *L);
/* what kernel `func` (or a function it calls) calls: HC_EXEC_USES_HEAP (malloc or free),
 * HC_EXEC_USES_PRINTF (vprintf) */
enum { HC_EXEC_USES_HEAP = 1, HC_EXEC_USES_PRINTF = 2 };
unsigned hc_exec_uses(const ash_ptx_module *m, int func);
/* the generic address of function `func` (what an initialiser or `mov` of its name gives) */
uint64_t hc_exec_func_addr(int func);
/* bytes of static shared memory kernel `func` uses */
size_t hc_exec_static_shared(const ash_ptx_module *m, int func);

#endif /* HC_EXEC_H */
