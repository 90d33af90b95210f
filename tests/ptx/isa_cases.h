/* isa_cases.h — the instruction forms test_ptx_isa.c checks: one row per kernel of
 * isa_kernels.cu (its PTX instruction, operand and result types, C reference of the PTX ISA's
 * definition, comparison and bound), defined in isa_cases.c with the references. Read-only data.
 */
#ifndef ISA_CASES_H
#define ISA_CASES_H

#include <stdint.h>

typedef enum { U16, U32, U64, F16, BF16, H2, BH2, F32, F64 } ty;
enum { C_EXACT, C_ULP, C_REL, C_ABS };
enum { F_ANY = 1, F_ZSIGN = 2 };   /* ref flags: result unspecified; either zero sign accepted */

typedef int (*ref_fn)(const uint64_t *x, uint64_t *r);
typedef struct {
    const char *kernel, *insn;
    ty out;
    int nin;
    ty in[4];
    ref_fn ref;
    int cmp;
    double tol;     /* C_ULP: ulps; C_REL: relative; C_ABS: absolute (plus 2 ulps) */
    int domain;     /* input generator for f32 operands: 0 all, 1 [-pi, pi], 2 positive */
} isa_case;

extern const isa_case isa_cases[];
extern const int isa_ncases;
/* the reference's known answers from the ISA text and IEEE 754: the number that differ */
int isa_ref_self_check(void);
/* add.rn.f32's reference, for the negative control */
int isa_ref_add_rn32(const uint64_t *x, uint64_t *r);

#endif /* ISA_CASES_H */
