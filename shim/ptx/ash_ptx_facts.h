/* ash_ptx_facts.h — what each kernel of a parsed PTX module does with its parameters.
 *
 * ash_ptx_facts_compute() reads a module from ash_ptx_parse() and says, for every function
 * (`.entry` and `.func`) and each of its parameters: its size; whether its value is used as a
 * pointer (it reaches the address of an ld/st/atom/red as the base, not as a scaled index); and,
 * for a pointer, whether the function reads, writes or atomically updates memory through it, with
 * the element types of those accesses (`ld.global.v4.f32` counts as f32).
 *
 * How: a flow-insensitive taint propagation to a fixpoint. Each register and each local/param
 * variable carries the set of parameters its value may derive from as a base address. A value
 * loaded from a parameter (`ld.param`) starts a set; mov, cvta, cvt, add, sub (its first
 * operand), and, or, selp and the addend of mad carry it on; mul, shl and the multiplicands of mad
 * do not (they scale an index). Stores to and loads from local or `.param` variables carry it
 * through spills and call arguments; a call applies the callee's facts to the caller's
 * parameters behind each argument (callee facts are iterated to a fixpoint, recursion included).
 * Atomics (atom, red) count as writes, not reads: an accumulation into a buffer is not a use of
 * its old value by the program. A pointer value loaded from memory (a table of pointers) is not
 * followed, nor are values returned by a `.func`; a store through such an address (to global or
 * generic memory) sets the function's untracked_write.
 * Pure C11 and libc, like the reader. Threading: a computed result is immutable.
 */
#ifndef ASH_PTX_FACTS_H
#define ASH_PTX_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "ash_ptx.h"

typedef struct ash_ptx_pfact {
    size_t size;            /* bytes in the parameter block */
    int is_ptr;             /* its value reaches an address as a base (and it is 8 bytes) */
    int read, written, atomic;   /* through it; atomic implies written */
    uint32_t elem_types;    /* bit (1u << ash_ptx_type) per element type accessed through it */
} ash_ptx_pfact;

typedef struct ash_ptx_ffacts {
    int func;               /* index into ash_ptx_module.funcs */
    int nparams;
    ash_ptx_pfact *params;
    int untracked_write;    /* it (or a callee) stores or atomically updates global or generic
                             * memory through an address that derives from no parameter (a
                             * pointer loaded from memory, a variable's address): where is unknown */
} ash_ptx_ffacts;

typedef struct ash_ptx_facts {
    int nfuncs;             /* = module's nfuncs; funcs[i] is the module's function i */
    ash_ptx_ffacts *funcs;
} ash_ptx_facts;

/* 0 on success; -1 (out of memory, with a message in err) */
int ash_ptx_facts_compute(const ash_ptx_module *m, ash_ptx_facts *out, char *err, size_t errlen);
void ash_ptx_facts_free(ash_ptx_facts *f);
/* "f32,bf16" for a mask of element types into buf; "-" when none */
const char *ash_ptx_facts_types(uint32_t mask, char *buf, size_t len);
const char *ash_ptx_type_name(int type);

#endif /* ASH_PTX_FACTS_H */
