/* explain_int.h — private to shim/explain/: what explain.c records and reading.c reads.
 * Threading: reading.c runs at exit, with explain.c's lock held.
 */
#ifndef ASH_EXPLAIN_INT_H
#define ASH_EXPLAIN_INT_H

#include "ash_ptx.h"
#include "ash_ptx_facts.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    char *api;             /* the load call */
    char *what;            /* "PTX text", "fatbin: PTX sm_80 (zstd)", "ELF cubin: SASS only", ... */
    int has_ptx, parsed;   /* parsed: m and fx are valid */
    ash_ptx_module m;
    ash_ptx_facts fx;
    char *error;           /* why the PTX did not parse, or NULL */
} exp_image_t;

typedef struct {
    char *name, *demangled;
    int image, func;       /* its facts: images[image].fx.funcs[func]; image -1 = none found */
    int nparams;           /* from the PTX, else the driver's, else -1 */
    uint32_t *offs, *sizes;
} exp_kernel_t;

typedef struct {
    uint64_t base, size;
} exp_buf_t;

typedef struct {
    uint64_t value;        /* the argument's bytes (up to 8), little-endian */
    int buf;               /* the allocation a pointer argument points into, or -1 */
    uint64_t off;          /* its offset in that allocation */
} exp_arg_t;

#define EXP_MEMSET (-2)    /* exp_launch_t.kernel of a memset: one argument, value = bytes */
typedef struct {
    int kernel;            /* index into kernels, or EXP_MEMSET */
    int nargs;
    size_t first;          /* its arguments: args[first, first + nargs) */
} exp_launch_t;

typedef struct {
    exp_image_t *images;
    int nimages;
    exp_kernel_t *kernels;
    int nkernels;
    exp_buf_t *bufs;
    int nbufs;
    exp_launch_t *launches;
    size_t nlaunches, dropped;   /* dropped: launches past the cap, not recorded */
    exp_arg_t *args;
    size_t nargs;
} exp_state_t;


/* reading.c: the whole explanation of what was recorded, written to f */
void exp_write(const exp_state_t *s, FILE *f);

/* facts of a launch's parameter i (NULL when the kernel has no PTX facts) */
static inline const ash_ptx_pfact *exp_pfact(const exp_state_t *s, const exp_kernel_t *k, int i)
{
    if (k->image < 0 || i < 0)
        return NULL;
    const ash_ptx_ffacts *ff = &s->images[k->image].fx.funcs[k->func];
    return i < ff->nparams ? &ff->params[i] : NULL;
}

#endif /* ASH_EXPLAIN_INT_H */
