/* ash_ptx.h — the PTX reader: parses the PTX text nvcc emits and pre-decodes it for execution.
 *
 * ash_ptx_parse() reads a whole module once: module-scope variables (with their initialisers and
 * the symbol addresses inside them), `.entry`/`.func` definitions with their parameters,
 * registers (ranges `%r<N>` and inline-asm scopes), labels and instructions. Every instruction is
 * decoded to an opcode, its types and modifiers and resolved operands (register slots, immediates
 * as bits, symbol indices, branch targets as instruction indices). Errors are one line
 * `NAME:LINE:COL: message 'token'` in the caller's buffer.
 * Pure C11 and libc: no dependency on hostcuda, so the shim can link it too.
 * Threading: parsing is reentrant; a parsed module is immutable and may be shared by threads.
 */
#ifndef ASH_PTX_H
#define ASH_PTX_H

#include <stddef.h>
#include <stdint.h>

/* types; the order matters (ash_ptx_type_size, the executor's switches) */
enum ash_ptx_type {
    ASH_PTX_T_NONE = 0,
    ASH_PTX_T_B8, ASH_PTX_T_B16, ASH_PTX_T_B32, ASH_PTX_T_B64,
    ASH_PTX_T_U8, ASH_PTX_T_U16, ASH_PTX_T_U32, ASH_PTX_T_U64,
    ASH_PTX_T_S8, ASH_PTX_T_S16, ASH_PTX_T_S32, ASH_PTX_T_S64,
    ASH_PTX_T_F16, ASH_PTX_T_F16X2, ASH_PTX_T_BF16, ASH_PTX_T_BF16X2,
    ASH_PTX_T_F32, ASH_PTX_T_F64, ASH_PTX_T_PRED, ASH_PTX_T_B128,
    ASH_PTX_T_TF32,   /* mma/wmma operands, cvt's destination: an f32 in a .b32 (10 mantissa bits used) */
};
int ash_ptx_type_size(int type);   /* bytes; a predicate counts 1 */

enum ash_ptx_space {
    ASH_PTX_S_NONE = 0, ASH_PTX_S_GENERIC, ASH_PTX_S_GLOBAL, ASH_PTX_S_SHARED, ASH_PTX_S_LOCAL,
    ASH_PTX_S_CONST, ASH_PTX_S_PARAM,
};

/* base opcodes; X(name, ptx spelling) */
#define ASH_PTX_OPCODES(X)                                                                      \
    X(MOV, "mov") X(LD, "ld") X(LDU, "ldu") X(ST, "st") X(CVTA, "cvta") X(CVT, "cvt")           \
    X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(MAD, "mad") X(FMA, "fma") X(DIV, "div")         \
    X(REM, "rem") X(ABS, "abs") X(NEG, "neg") X(MIN, "min") X(MAX, "max") X(AND, "and")         \
    X(OR, "or") X(XOR, "xor") X(NOT, "not") X(CNOT, "cnot") X(SHL, "shl") X(SHR, "shr")         \
    X(SETP, "setp") X(SET, "set") X(SELP, "selp") X(SLCT, "slct") X(BRA, "bra") X(RET, "ret")   \
    X(EXIT, "exit") X(BAR, "bar") X(BARRIER, "barrier") X(MEMBAR, "membar") X(FENCE, "fence")   \
    X(ATOM, "atom") X(RED, "red") X(SHFL, "shfl") X(VOTE, "vote") X(ACTIVEMASK, "activemask")   \
    X(MATCH, "match") X(POPC, "popc") X(CLZ, "clz") X(BREV, "brev") X(BFE, "bfe") X(BFI, "bfi") \
    X(PRMT, "prmt") X(SHF, "shf") X(LOP3, "lop3") X(RCP, "rcp") X(SQRT, "sqrt")                 \
    X(RSQRT, "rsqrt") X(EX2, "ex2") X(LG2, "lg2") X(SIN, "sin") X(COS, "cos") X(TANH, "tanh")   \
    X(COPYSIGN, "copysign") X(TESTP, "testp") X(MUL24, "mul24") X(MAD24, "mad24")               \
    X(SAD, "sad") X(CALL, "call") X(TRAP, "trap") X(NANOSLEEP, "nanosleep")                     \
    X(PREFETCH, "prefetch") X(PREFETCHU, "prefetchu") X(DISCARD, "discard")                     \
    X(FNS, "fns") X(BMSK, "bmsk") X(SZEXT, "szext") X(DP4A, "dp4a") X(DP2A, "dp2a")             \
    X(ISSPACEP, "isspacep") X(CREDUX, "redux") X(APPLYPRIORITY, "applypriority")                \
    X(CREATEPOLICY, "createpolicy") X(PMEVENT, "pmevent") X(BRKPT, "brkpt")                    \
    X(ADDC, "addc") X(SUBC, "subc") X(MADC, "madc") X(BFIND, "bfind")                         \
    X(CPASYNC, "cp.async") X(CPASYNC_COMMIT, "cp.async.commit_group")                           \
    X(CPASYNC_WAIT, "cp.async.wait_group") X(CPASYNC_WAITALL, "cp.async.wait_all")              \
    X(CPASYNC_MBAR, "cp.async.mbarrier.arrive") X(MBAR_INIT, "mbarrier.init")                   \
    X(MBAR_INVAL, "mbarrier.inval") X(MBAR_ARRIVE, "mbarrier.arrive")                           \
    X(MBAR_ARRIVE_DROP, "mbarrier.arrive_drop") X(MBAR_EXPECT_TX, "mbarrier.expect_tx")         \
    X(MBAR_COMPLETE_TX, "mbarrier.complete_tx") X(MBAR_TEST_WAIT, "mbarrier.test_wait")         \
    X(MBAR_TRY_WAIT, "mbarrier.try_wait") X(MBAR_PENDING, "mbarrier.pending_count")             \
    X(CPBULK, "cp.async.bulk") X(CPBULK_COMMIT, "cp.async.bulk.commit_group")                   \
    X(CPBULK_WAIT, "cp.async.bulk.wait_group") X(CPBULK_PREFETCH, "cp.async.bulk.prefetch")     \
    X(BRX, "brx.idx")                                                                          \
    X(TEX, "tex") X(TLD4, "tld4") X(TXQ, "txq") X(SULD, "suld") X(SUST, "sust") X(SUQ, "suq")  \
    X(WMMA, "wmma") X(MMA, "mma") X(LDMATRIX, "ldmatrix") X(STMATRIX, "stmatrix")

enum ash_ptx_opcode {
    ASH_PTX_OP_NONE = 0,
#define ASH__X(n, s) ASH_PTX_OP_##n,
    ASH_PTX_OPCODES(ASH__X)
#undef ASH__X
    ASH_PTX_OP_COUNT
};
const char *ash_ptx_opcode_name(int op);
/* an opcode spelled with dots ("cp.async.wait_group") matches the longest such prefix of the
 * instruction word; the words after it are modifiers. cp.async and mbarrier instructions keep
 * their own modifiers in sub as these bits: */
enum {
    ASH_PTX_MB_NOINC = 1u << 0,       /* cp.async.mbarrier.arrive.noinc */
    ASH_PTX_MB_NOCOMPLETE = 1u << 1,  /* mbarrier.arrive{_drop}.noComplete */
    ASH_PTX_MB_PARITY = 1u << 2,      /* mbarrier.{test,try}_wait.parity */
    ASH_PTX_MB_EXPECT_TX = 1u << 3,   /* mbarrier.arrive{_drop}.expect_tx */
    ASH_PTX_MB_CLUSTER = 1u << 4,     /* .cluster scope or .shared::cluster (a launch's cluster is its CTA) */
    ASH_PTX_MB_CG = 1u << 5,          /* cp.async.cg (16 bytes only) */
    ASH_PTX_MB_COMPLETE_TX = 1u << 6, /* cp.async.bulk...mbarrier::complete_tx::bytes (into shared memory) */
    ASH_PTX_MB_BULK_GROUP = 1u << 7,  /* cp.async.bulk...bulk_group (shared to global) */
};
/* cp.async.bulk's in->space is its source's (the last space word); its destination is shared
 * memory with MB_COMPLETE_TX, global memory with MB_BULK_GROUP */

/* comparison operators of setp/set (and testp's classes reuse cmp) */
enum ash_ptx_cmp {
    ASH_PTX_C_NONE = 0, ASH_PTX_C_EQ, ASH_PTX_C_NE, ASH_PTX_C_LT, ASH_PTX_C_LE, ASH_PTX_C_GT,
    ASH_PTX_C_GE, ASH_PTX_C_LO, ASH_PTX_C_LS, ASH_PTX_C_HI, ASH_PTX_C_HS, ASH_PTX_C_EQU,
    ASH_PTX_C_NEU, ASH_PTX_C_LTU, ASH_PTX_C_LEU, ASH_PTX_C_GTU, ASH_PTX_C_GEU, ASH_PTX_C_NUM,
    ASH_PTX_C_NAN,
};
/* atom/red operations, shfl modes, vote modes, boolean ops: one enum, meaning by opcode */
enum ash_ptx_sub {
    ASH_PTX_A_NONE = 0, ASH_PTX_A_ADD, ASH_PTX_A_MIN, ASH_PTX_A_MAX, ASH_PTX_A_INC, ASH_PTX_A_DEC,
    ASH_PTX_A_CAS, ASH_PTX_A_EXCH, ASH_PTX_A_AND, ASH_PTX_A_OR, ASH_PTX_A_XOR,
    ASH_PTX_SH_UP, ASH_PTX_SH_DOWN, ASH_PTX_SH_BFLY, ASH_PTX_SH_IDX,
    ASH_PTX_V_ALL, ASH_PTX_V_ANY, ASH_PTX_V_UNI, ASH_PTX_V_BALLOT,
    ASH_PTX_B_ARRIVE, ASH_PTX_B_RED_POPC, ASH_PTX_B_RED_AND, ASH_PTX_B_RED_OR, ASH_PTX_B_WARP,
    ASH_PTX_SHF_L, ASH_PTX_SHF_R, ASH_PTX_M_ANY, ASH_PTX_M_ALL,
    ASH_PTX_P_F4E, ASH_PTX_P_B4E, ASH_PTX_P_RC8, ASH_PTX_P_ECL, ASH_PTX_P_ECR, ASH_PTX_P_RC16,
    ASH_PTX_T_FINITE, ASH_PTX_T_INFINITE, ASH_PTX_T_NUMBER, ASH_PTX_T_NOTANUMBER,
    ASH_PTX_T_NORMAL, ASH_PTX_T_SUBNORMAL,
};
/* textures and surfaces: ash_ptx_insn.geom is the geometry; sub is tex's .level / .grad, tld4's
 * component, txq / suq's query, suld / sust's out-of-bounds mode (values apart from ash_ptx_sub) */
enum ash_ptx_geom { ASH_PTX_G_NONE = 0, ASH_PTX_G_1D, ASH_PTX_G_2D, ASH_PTX_G_3D, ASH_PTX_G_A1D, ASH_PTX_G_A2D };
enum ash_ptx_texsub {
    ASH_PTX_TX_LEVEL = 100, ASH_PTX_TX_GRAD,
    ASH_PTX_TX_R, ASH_PTX_TX_G, ASH_PTX_TX_B, ASH_PTX_TX_A,
    ASH_PTX_TQ_WIDTH, ASH_PTX_TQ_HEIGHT, ASH_PTX_TQ_DEPTH, ASH_PTX_TQ_ARRAY_SIZE, ASH_PTX_TQ_NORMALIZED,
    ASH_PTX_TQ_FILTER, ASH_PTX_TQ_ADDR0, ASH_PTX_TQ_ADDR1, ASH_PTX_TQ_ADDR2, ASH_PTX_TQ_MIPLEVELS,
    ASH_PTX_SU_TRAP, ASH_PTX_SU_CLAMP, ASH_PTX_SU_ZERO,
};
enum ash_ptx_rnd {
    ASH_PTX_R_NONE = 0, ASH_PTX_R_RN, ASH_PTX_R_RZ, ASH_PTX_R_RM, ASH_PTX_R_RP, ASH_PTX_R_RNI,
    ASH_PTX_R_RZI, ASH_PTX_R_RMI, ASH_PTX_R_RPI, ASH_PTX_R_RNA, ASH_PTX_R_RS,
};
/* instruction flags */
enum {
    ASH_PTX_F_FTZ = 1u << 0, ASH_PTX_F_SAT = 1u << 1, ASH_PTX_F_APPROX = 1u << 2,
    ASH_PTX_F_FULL = 1u << 3, ASH_PTX_F_HI = 1u << 4, ASH_PTX_F_LO = 1u << 5,
    ASH_PTX_F_WIDE = 1u << 6, ASH_PTX_F_UNI = 1u << 7, ASH_PTX_F_NC = 1u << 8,
    ASH_PTX_F_VOLATILE = 1u << 9, ASH_PTX_F_CC = 1u << 10, ASH_PTX_F_WRAP = 1u << 11,
    ASH_PTX_F_CLAMP = 1u << 12, ASH_PTX_F_ALIGNED = 1u << 13, ASH_PTX_F_SHIFTAMT = 1u << 14,
    ASH_PTX_F_RELU = 1u << 15, ASH_PTX_F_NOFTZ = 1u << 16, ASH_PTX_F_TO = 1u << 17,
    ASH_PTX_F_SYNC = 1u << 18, ASH_PTX_F_BOOL_NEG = 1u << 19, ASH_PTX_F_SATFINITE = 1u << 20,
    ASH_PTX_F_XORSIGN = 1u << 21, ASH_PTX_F_NAN = 1u << 22, ASH_PTX_F_PACK = 1u << 23,
};

/* linkage of module-scope names: internal ones are seen only by their own unit */
enum ash_ptx_linkage { ASH_PTX_L_INTERNAL = 0, ASH_PTX_L_VISIBLE, ASH_PTX_L_WEAK };

enum ash_ptx_opnd_kind {
    ASH_PTX_K_NONE = 0, ASH_PTX_K_REG, ASH_PTX_K_IMM, ASH_PTX_K_SYM, ASH_PTX_K_MEM,
    ASH_PTX_K_VEC, ASH_PTX_K_SREG, ASH_PTX_K_LABEL, ASH_PTX_K_FUNC, ASH_PTX_K_SINK,
};
/* special registers (ASH_PTX_K_SREG's sreg); .x/.y/.z are +0/+1/+2 */
enum ash_ptx_sreg {
    ASH_PTX_SR_TID = 0, ASH_PTX_SR_NTID = 3, ASH_PTX_SR_CTAID = 6, ASH_PTX_SR_NCTAID = 9,
    ASH_PTX_SR_LANEID = 12, ASH_PTX_SR_WARPID, ASH_PTX_SR_NWARPID, ASH_PTX_SR_SMID, ASH_PTX_SR_NSMID,
    ASH_PTX_SR_CLOCK, ASH_PTX_SR_CLOCK64, ASH_PTX_SR_GLOBALTIMER, ASH_PTX_SR_LANEMASK_EQ,
    ASH_PTX_SR_LANEMASK_LE, ASH_PTX_SR_LANEMASK_LT, ASH_PTX_SR_LANEMASK_GE, ASH_PTX_SR_LANEMASK_GT,
    ASH_PTX_SR_GRIDID, ASH_PTX_SR_DYNSMEM, ASH_PTX_SR_TOTALSMEM, ASH_PTX_SR_WARPSZ,
    ASH_PTX_SR_ENVREG,                     /* %envreg0..31: ASH_PTX_SR_ENVREG + N */
    ASH_PTX_SR_COUNT = ASH_PTX_SR_ENVREG + 32,
};

typedef struct ash_ptx_opnd {
    uint8_t kind;
    uint8_t n;        /* VEC: element count; MEM: 32 when the base register is 32-bit, else 0 */
    uint8_t neg;      /* `!%p` source predicate */
    uint8_t sreg;
    int32_t reg;      /* REG; MEM base register or -1 */
    int32_t sym;      /* SYM / MEM base symbol (index into ash_ptx_module.vars) or -1; FUNC index */
    int64_t imm;      /* IMM bits; MEM byte offset; LABEL instruction index */
    int32_t vec[4];   /* VEC: registers, -1 for `_`, -2 for an immediate (in vimm) */
    int64_t vimm[4];
} ash_ptx_opnd;

#define ASH_PTX_MAX_OPNDS 6
typedef struct ash_ptx_insn {
    uint16_t op;
    uint8_t type, type2;     /* type: the instruction's (dst for cvt); type2: cvt's source */
    uint8_t space;           /* ld/st/atom/cvta/isspacep/prefetch */
    uint8_t cmp;             /* setp/set comparison */
    uint8_t sub;             /* ash_ptx_sub */
    uint8_t bop;             /* setp/set boolean combine (ASH_PTX_A_AND/OR/XOR) */
    uint8_t rnd;
    uint8_t vec;             /* 1, 2, 4 for ld/st .v2/.v4 */
    uint8_t nops;
    uint8_t guard_neg;
    int32_t guard;           /* predicate register, -1 if none */
    uint32_t flags;
    int32_t line;            /* PTX line (1-based) */
    int32_t func;            /* function (index into ash_ptx_module.funcs) it belongs to */
    /* wmma/mma/ldmatrix/stmatrix: shape (ash_ptx_mma_shape), what (ASH_PTX_MMA_* bits), and the B
     * and C types of `.dtype.atype.btype.ctype` (type: D or the fragment's, type2: A) */
    uint8_t shape, mma, type3, type4;
    ash_ptx_opnd o[ASH_PTX_MAX_OPNDS];
    int32_t call_args;       /* CALL: index in func->callvars of the first argument var */
    uint8_t call_nret, call_nargs;
    uint8_t geom;            /* tex / tld4 / txq / suld / sust / suq: ash_ptx_geom */
} ash_ptx_insn;

/* tensor-core instructions' shapes and fragment / layout bits (ash_ptx_insn.shape, .mma) */
enum ash_ptx_mma_shape {
    ASH_PTX_MMA_NOSHAPE = 0, ASH_PTX_MMA_M16N16K16, ASH_PTX_MMA_M32N8K16, ASH_PTX_MMA_M8N32K16,
    ASH_PTX_MMA_M16N16K8, ASH_PTX_MMA_M8N8K4, ASH_PTX_MMA_M16N8K4, ASH_PTX_MMA_M16N8K8, ASH_PTX_MMA_M16N8K16,
    ASH_PTX_MMA_M16N8K32, ASH_PTX_MMA_M8N8K16, ASH_PTX_MMA_M8N8, ASH_PTX_MMA_NSHAPES,
};
enum {
    ASH_PTX_MMA_FRAG = 7,          /* wmma: which fragment (load a/b/c, store d) or the mma itself */
    ASH_PTX_MMA_A = 1, ASH_PTX_MMA_B = 2, ASH_PTX_MMA_C = 3, ASH_PTX_MMA_D = 4, ASH_PTX_MMA_OP = 5,
    ASH_PTX_MMA_ACOL = 1u << 3,    /* the first .row/.col said col (wmma.load/store: the layout) */
    ASH_PTX_MMA_BCOL = 1u << 4,    /* the second said col */
    ASH_PTX_MMA_TRANS = 1u << 5,   /* ldmatrix/stmatrix .trans */
    ASH_PTX_MMA_NLAY = 3u << 6,    /* how many .row/.col words (0..2) */
    ASH_PTX_MMA_NLAY1 = 1u << 6,
};

typedef struct ash_ptx_reloc {
    size_t offset;           /* in the variable's bytes */
    int size;                /* 4 or 8 */
    int sym;                 /* variable whose address goes there, or -1 for a function's */
    int64_t addend;
    int generic;             /* generic(sym) */
    int func;                /* sym -1: the function (a vtable's entry), else -1 */
} ash_ptx_reloc;

typedef struct ash_ptx_var {
    char *name;
    int space;               /* ASH_PTX_S_GLOBAL / CONST / SHARED / LOCAL / PARAM */
    int type;                /* element type */
    size_t size, align;
    int is_extern;           /* `.extern .shared x[]`: the dynamic shared memory */
    int func;                /* -1 at module scope, else the function that declares it */
    int is_entry_param;      /* a kernel's parameter: offset is in the launch's parameter block */
    int is_func_param;       /* a .func parameter or return value (offset in the callee frame) */
    size_t offset;           /* SHARED: CTA offset (module-wide layout); LOCAL/PARAM: frame offset */
    unsigned char *init;     /* size bytes or NULL (zero) */
    ash_ptx_reloc *relocs;
    int nrelocs;
    int unit;                /* the PTX text it came from (ash_ptx_parse_units), 0 for one text */
    int linkage;             /* ASH_PTX_L_* of a module-scope declaration */
} ash_ptx_var;

typedef struct ash_ptx_param {
    size_t offset, size, align;
    int var;                 /* its ash_ptx_var */
    int is_ptr;              /* an 8-byte integer parameter (.u64/.s64/.b64, `.ptr` or not): may hold an
                              * address (how a kernel uses it is the facts module's business) */
} ash_ptx_param;

typedef struct ash_ptx_func {
    char *name;
    int is_entry, is_extern, defined;
    int line;
    ash_ptx_param *params;
    int nparams;
    int *rets;               /* return value vars */
    int nrets;
    size_t argsize;          /* entry: end of the last parameter */
    int nregs;               /* register slots */
    uint8_t *reg_type;       /* per slot */
    char **reg_name;         /* per slot, for messages */
    int first, count;        /* its instructions: module insns [first, first + count) */
    size_t frame_size;       /* local bytes per thread (.local vars, .param vars of call sites) */
    size_t shared_size;      /* static shared bytes the kernel needs (module + its own) */
    int uses_dyn_shared;
    int reqntid[3], maxntid[3];
    int has_calls;
    int unit, linkage;       /* as for variables */
} ash_ptx_func;

typedef struct ash_ptx_module {
    char *name;              /* for messages */
    int version_major, version_minor, target_sm, address_size;
    ash_ptx_var *vars;
    int nvars;
    ash_ptx_func *funcs;
    int nfuncs;
    ash_ptx_insn *insns;
    int ninsns;
    int *callvars;           /* CALL instructions' argument / return variable lists */
    int ncallvars;
    int32_t *vregs;          /* registers of vector operands longer than 4 (wmma/mma fragments): such an
                              * operand's vec[] holds its first 4, its imm the index of all n here */
    int nvregs;
    size_t module_shared;    /* module-scope static shared bytes (and those of .func bodies) */
    int32_t *targets;        /* brx.idx target lists (.branchtargets): instruction indices; a brx
                              * insn's o[1] (LABEL) has imm = first entry, vimm[0] = count */
    int ntargets;
    char **lines;            /* source lines (for messages), nlines entries */
    int nlines;
    int nunits;              /* PTX texts parsed into it (their lines follow one another) */
} ash_ptx_module;

/* 0 on success; -1 with a message `name:line:col: what 'token'` in err. */
int ash_ptx_parse(const char *text, const char *name, ash_ptx_module *m, char *err, size_t errlen);
/* Several PTX texts linked into one module, as a device link does for code built with
 * nvcc -rdc=true: each unit's internal names are its own; a declaration (`.extern`) of a function
 * or a .global/.const variable takes the `.visible` (else the first `.weak`/`.common`) definition
 * of that name in another unit. Errors, besides a unit's parse errors: an extern variable no unit
 * defines (one unit alone too: ash_ptx_parse leaves an extern variable unresolved), and two
 * `.visible` definitions of one name. Messages name the unit ("NAME unit K:LINE:COL", the unit's
 * own line); the instructions' line numbers count through the units in order (unit k's line 1
 * follows unit k-1's last line: ash_ptx_line_text takes them). */
int ash_ptx_parse_units(const char *const *texts, int n, const char *name, ash_ptx_module *m, char *err,
                        size_t errlen);
void ash_ptx_free(ash_ptx_module *m);
int ash_ptx_find_func(const ash_ptx_module *m, const char *name);
int ash_ptx_find_var(const ash_ptx_module *m, const char *name);
/* the PTX text of an instruction's line, trimmed (for messages); "" if unknown */
const char *ash_ptx_line_text(const ash_ptx_module *m, int line);

#endif /* ASH_PTX_H */
