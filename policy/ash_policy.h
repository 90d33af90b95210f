/* ash_policy.h — public API of the policy module: a version-1 YAML policy (DESIGN.md §4) parsed
 * with libyaml into one validated, immutable ash_policy_t; kernel-name and output-path matching.
 *
 * Folder policy/ owns: YAML policy (libyaml) -> one validated struct; `accelshim-policy check`
 *
 * Invariant: an ash_policy_t handed out by ash_policy_load/parse is complete and valid (every
 * default filled in, every glob checked); nothing changes it until ash_policy_free, so the
 * pointers that accessors and ash_policy_match return stay valid until then.
 * Threading: parse/load/free are not shared-state operations; every const accessor and the
 * match functions may be called from any number of threads on one policy at once.
 * Callers: shim/ (at init and before each launch), build/bin/accelshim-policy, tests/policy/.
 * Depends on libyaml and libc only (no CUDA, nothing else of accelshim). Link with -lyaml.
 *
 * Policy file, version 1 (required keys marked *, defaults after '='):
 *   version*: 1                     integer; any other value: "unsupported version N"
 *   gradients:   [rule...] = []     all-reduced before each matching launch
 *     - at*: GLOB                   fnmatch(3) glob, non-empty, brackets balanced
 *       buffer*: {arg*: 0..31, and exactly one of  count_arg: 0..31 (!= arg)
 *                                                 | count: 1..2^63-1 (elements)
 *                                                 | region: allocation}
 *       dtype*: f32 | f16 | bf16    element type in memory (required: a wrong guess corrupts)
 *       reduce: mean | sum = mean
 *       wire: same | f32 | f16 | bf16 = same
 *             f16/bf16 need dtype f32 (downcast); wire equal to dtype is normalised to `same`;
 *             f32 on an f16/bf16 buffer upcasts (reduce in f32, round back); f16 on bf16
 *             (or bf16 on f16) is an error.
 *       fuse: true | false = false  (added in 1.x; opt-in) one collective per step for all of
 *             the rule's buffers: the first step's launches are learned, then the first matching
 *             launch of each later step reduces them all at once and the rest of the step's
 *             launches are not synced again. ASSUMES every buffer of the rule is final before
 *             the rule's first launch in a step (e.g. all backward kernels run before the first
 *             per-tensor update); any change of pattern falls back to per-launch reduction with
 *             one warning.
 *       fuse_cap_bytes: 1..2^62 = 67108864   needs fuse: true; the fusion buffer's size limit
 *             (a step whose buffers need more falls back to per-launch reduction)
 *       ready: [READY...] = []    (added in 1.x) overlap: launches after which a region of the
 *             rule's buffer is final for the step; its all-reduce starts right after such a
 *             launch, on the shim's communication stream/thread, and the sync point waits only
 *             for what is in flight and reduces the rest (docs/overlap.md). Each READY:
 *         - after*: GLOB          the ready launch's kernel (a glob, like at)
 *           nth: 1..2^31 = every  only the N-th launch matching `after` since the rule's last
 *                                 sync point (not given: every matching launch)
 *           and exactly one of
 *           buffer: {...}         the final region, from the READY launch's own arguments (the
 *                                 forms of the rule's buffer)
 *           offset: 0..2^63-1 + count: 1..2^63-1   elements from the start of the rule's
 *                                 buffer (as resolved at its previous sync point)
 *       overlap: none | auto = none   (added in 1.x) auto: learned ready points (the shim
 *             watches which launches take pointers into the buffer during the first steps);
 *             excludes `ready`; needs reduce: mean (a region written after its early
 *             all-reduce is reduced again, which only a mean allows)
 *       bucket_cap_bytes: 1..2^62 = 26214400   needs fuse: true and ready or overlap: auto; ready
 *             regions are gathered into buckets of at most this size (one collective each)
 *   parameters:  [rule...] = []     broadcast from rank 0 before the matching launch
 *     - at*, buffer*, dtype*        as above (reduce/wire are gradient-only keys)
 *       broadcast: once = once      once per distinct buffer (pointer, count)
 *   outputs:
 *     main_process_only: [GLOB...] = []   output paths only rank 0 writes
 *   debug:
 *     check_collectives: true|false = false
 *     timeout_s: 0..2147483647 = 600      0 = never time out
 *     trace: "PATH"                        (added in 1.x; not set = no trace) Chrome trace event
 *             JSON of sync points, casts and collectives; {rank} is replaced by the rank
 *     nan_check: true|false = false     stop the job when a synced buffer holds NaN/Inf
 *                                       (before the collective: the rank and step it appeared)
 *   precision:                      fp32 GEMMs in cuBLAS / cuBLASLt (shim/precision/cublas.c)
 *     matmul: default | tf32 | bf16 | f16 = default
 *             default: untouched; otherwise every fp32 GEMM runs with the FAST compute type
 *             (CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16BF / _FAST_16F: inputs rounded, fp32 sums)
 *     matmul_exclude: [GLOB...] = []   caller function names (symbols on the call stack) whose
 *             GEMMs stay in full fp32, e.g. ["*loss*", "lm_head_forward"]
 *   sync: required | optional = required   (added in 1.x) required: a job of more than one
 *             rank in which no gradient rule fired ends with exit status 7 (the ranks trained
 *             apart); optional: the ranks may run unsynchronised (independent ranks, on purpose)
 * An empty value (`gradients:` with nothing after it) means "not given" for the optional
 * sections and lists. Integers are plain decimal scalars; quoted scalars are strings.
 * Anchors, aliases, tags and multiple documents are rejected. Unknown keys are errors.
 *
 * Errors: the first error found, as one line "NAME:LINE:COL: message" (1-based, LINE:COL of the
 * offending key or value), or "NAME: message" when there is no position (unreadable file).
 * The missing/unsupported 'version' is reported before anything else, so a newer file is
 * always told it is newer.
 */
#ifndef ASH_POLICY_H
#define ASH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ASH_POLICY_VERSION 1
#define ASH_POLICY_MAX_ARG 31                /* kernel argument indices are 0..31 */
#define ASH_POLICY_DEFAULT_TIMEOUT_S 600
#define ASH_POLICY_DEFAULT_FUSE_CAP_BYTES (64ull << 20) /* gradients[].fuse_cap_bytes */
#define ASH_POLICY_MAX_FUSE_CAP_BYTES (1ull << 62)
#define ASH_POLICY_DEFAULT_BUCKET_CAP_BYTES (25ull << 20) /* gradients[].bucket_cap_bytes (DDP's 25 MB) */
#define ASH_POLICY_MAX_READY 4096 /* ready points of one rule */
#define ASH_POLICY_MAX_FILE_BYTES (1u << 20) /* larger policy files are rejected */

/* X(enum, value, text): the module's results; ash_policy_result_name() gives the text. */
#define ASH_POLICY_RESULTS(X)                                   \
    X(ASH_POLICY_OK, 0, "ok")                                   \
    X(ASH_POLICY_EINVAL, 1, "invalid argument")                 \
    X(ASH_POLICY_ENOMEM, 2, "out of memory")                    \
    X(ASH_POLICY_EIO, 3, "policy file cannot be read")          \
    X(ASH_POLICY_EPOLICY, 4, "invalid policy")
#define ASH_POLICY__RESULT_ENUM(e, v, s) e = v,
typedef enum { ASH_POLICY_RESULTS(ASH_POLICY__RESULT_ENUM) } ash_policy_result_t;
#undef ASH_POLICY__RESULT_ENUM

typedef enum {
    ASH_POLICY_DTYPE_F32,
    ASH_POLICY_DTYPE_F16,
    ASH_POLICY_DTYPE_BF16
} ash_policy_dtype_t;
typedef enum {
    ASH_POLICY_WIRE_SAME, /* send in the buffer's own dtype */
    ASH_POLICY_WIRE_F32,  /* 16-bit buffers only (upcast); f32 on f32 is normalised to SAME */
    ASH_POLICY_WIRE_F16,  /* f32 buffer only; divide by world size before the sum */
    ASH_POLICY_WIRE_BF16  /* f32 buffer only */
} ash_policy_wire_t;
typedef enum { ASH_POLICY_REDUCE_MEAN, ASH_POLICY_REDUCE_SUM } ash_policy_reduce_t;
typedef enum {
    ASH_POLICY_MATMUL_DEFAULT, /* fp32 GEMMs untouched */
    ASH_POLICY_MATMUL_TF32,    /* CUBLAS_COMPUTE_32F_FAST_TF32 */
    ASH_POLICY_MATMUL_BF16,    /* CUBLAS_COMPUTE_32F_FAST_16BF */
    ASH_POLICY_MATMUL_F16      /* CUBLAS_COMPUTE_32F_FAST_16F */
} ash_policy_matmul_t;
typedef enum { ASH_POLICY_BROADCAST_ONCE } ash_policy_broadcast_t;
typedef enum { ASH_POLICY_RULE_GRADIENT, ASH_POLICY_RULE_PARAMETER } ash_policy_rule_kind_t;

typedef enum {
    ASH_POLICY_BUFFER_COUNT_ARG, /* pointer = args[arg], element count = args[count_arg] */
    ASH_POLICY_BUFFER_COUNT,     /* pointer = args[arg], element count = count */
    ASH_POLICY_BUFFER_REGION     /* the whole allocation containing args[arg] */
} ash_policy_buffer_kind_t;

typedef struct {
    ash_policy_buffer_kind_t kind;
    unsigned arg;       /* 0..ASH_POLICY_MAX_ARG */
    unsigned count_arg; /* kind == COUNT_ARG only (else 0); never equal to arg */
    uint64_t count;     /* kind == COUNT only (else 0); >= 1 */
} ash_policy_buffer_t;

typedef enum { ASH_POLICY_OVERLAP_NONE, ASH_POLICY_OVERLAP_READY, ASH_POLICY_OVERLAP_AUTO } ash_policy_overlap_t;

/* One ready point of a gradient rule (ready: [...]). */
typedef struct {
    const char *after;          /* glob of the ready launch's kernel */
    unsigned nth;               /* 0: every matching launch; N: the N-th since the sync point */
    bool has_buffer;            /* region from the ready launch's arguments (else offset/count) */
    ash_policy_buffer_t buffer; /* has_buffer only */
    uint64_t offset, count;     /* !has_buffer: elements from the rule's buffer start */
    unsigned index;             /* position in the rule's ready list */
    unsigned line, col;         /* where the entry starts, for messages */
} ash_policy_ready_t;

typedef struct {
    ash_policy_rule_kind_t kind;
    unsigned index;       /* position in its list: gradients[index] / parameters[index] */
    const char *at;       /* the glob, as written (non-empty) */
    ash_policy_buffer_t buffer;
    ash_policy_dtype_t dtype;
    ash_policy_reduce_t reduce;       /* gradients; MEAN for parameters */
    ash_policy_wire_t wire;           /* gradients; SAME for parameters */
    ash_policy_broadcast_t broadcast; /* parameters; ONCE for gradients (unused) */
    unsigned line, col;   /* where the rule starts in its file (1-based), for messages */
    bool fuse;                /* gradients: one fused collective per step (false for parameters) */
    uint64_t fuse_cap_bytes;  /* gradients: fusion buffer limit (default for parameters too) */
    ash_policy_overlap_t overlap;    /* gradients: NONE, READY (ready list given) or AUTO */
    const ash_policy_ready_t *ready; /* overlap READY: the ready points, nready of them */
    size_t nready;
    uint64_t bucket_cap_bytes;       /* bucket size for ready regions (with fuse) */
} ash_policy_rule_t;

typedef struct ash_policy ash_policy_t; /* opaque, immutable once returned */

const char *ash_policy_result_name(ash_policy_result_t r);

/* Parse LEN bytes of TEXT (need not be NUL-terminated); NAME is used in messages. On success
 * *OUT is a new policy. On failure *OUT is NULL and ERR (if ERRLEN > 0) holds one line
 * "NAME:LINE:COL: message", always NUL-terminated (truncated to ERRLEN). Returns
 * ASH_POLICY_EPOLICY for an invalid policy, ASH_POLICY_ENOMEM, or ASH_POLICY_EINVAL. */
ash_policy_result_t ash_policy_parse(const char *text, size_t len, const char *name,
                                     ash_policy_t **out, char *err, size_t errlen);
/* Read and parse the file PATH (named PATH in messages). ASH_POLICY_EIO (with
 * "PATH: cannot read policy: <strerror>") when it cannot be opened or read, or is too large. */
ash_policy_result_t ash_policy_load(const char *path, ash_policy_t **out, char *err, size_t errlen);
void ash_policy_free(ash_policy_t *p); /* NULL is fine */

/* Accessors. Rules are in file order within their list; INDEX out of range gives NULL. */
const char *ash_policy_source(const ash_policy_t *p); /* NAME given at parse/load */
size_t ash_policy_rule_count(const ash_policy_t *p, ash_policy_rule_kind_t kind);
const ash_policy_rule_t *ash_policy_rule(const ash_policy_t *p, ash_policy_rule_kind_t kind,
                                         size_t index);
size_t ash_policy_output_count(const ash_policy_t *p);
const char *ash_policy_output(const ash_policy_t *p, size_t index); /* main_process_only[i] */
bool ash_policy_check_collectives(const ash_policy_t *p);
unsigned ash_policy_timeout_s(const ash_policy_t *p);
/* debug.trace: the trace path template as written ("{rank}" not replaced), or NULL when unset. */
const char *ash_policy_trace(const ash_policy_t *p);
bool ash_policy_nan_check(const ash_policy_t *p); /* debug.nan_check (false for a NULL policy) */
bool ash_policy_sync_optional(const ash_policy_t *p); /* sync: optional (false for NULL) */
/* precision: matmul (DEFAULT for a NULL policy) and the matmul_exclude caller globs. */
ash_policy_matmul_t ash_policy_matmul(const ash_policy_t *p);
size_t ash_policy_matmul_exclude_count(const ash_policy_t *p);
const char *ash_policy_matmul_exclude(const ash_policy_t *p, size_t index);

/* Rules whose `at` glob matches a kernel name: fnmatch(at, name, 0) == 0 for the MANGLED name,
 * the DEMANGLED name, or the demangled name's base (without its parameter list "(...)" and a
 * leading "void "), so `at: "adamw_kernel2"` matches "adamw_kernel2(float*, ...)" too.
 * Either name may be NULL. Order: parameter rules first (a broadcast makes state identical
 * before anything else reads it), then gradient rules, each in file order. Writes at most CAP
 * pointers to OUT (OUT may be NULL when CAP is 0) and returns the total number of matches. */
size_t ash_policy_match(const ash_policy_t *p, const char *mangled, const char *demangled,
                        const ash_policy_rule_t **out, size_t cap);

/* The demangled name of a kernel, the one the shim matches with (and the CLI's `match`): NAME
 * through __cxa_demangle of libstdc++.so.6, opened on the first C++ name ("_Z...") and looked up
 * with SYM (the shim passes its real dlsym, the CLI dlsym; NULL: no demangler). Returns a malloc'ed string, or NULL when
 * NAME is not C++, does not demangle, or no demangler is there (*MISSING set to 1 when given).
 * Not thread-safe on its first call: the shim calls it under its kernel-cache lock. */
typedef void *(*ash_policy_sym_fn)(void *lib, const char *name);
char *ash_policy_demangle(const char *name, ash_policy_sym_fn sym, int *missing);

/* fnmatch(PATTERN, NAME, 0) == 0: '*' and '?' also match '/'. */
bool ash_policy_glob_match(const char *pattern, const char *name);
/* The ready points whose `after` glob matches a kernel (names as for ash_policy_match), in rule
 * then list order: up to CAP written to OUT; returns how many match in all. */
typedef struct {
    const ash_policy_rule_t *rule;
    const ash_policy_ready_t *ready;
} ash_policy_ready_match_t;
size_t ash_policy_match_ready(const ash_policy_t *p, const char *mangled, const char *demangled,
                              ash_policy_ready_match_t *out, size_t cap);
/* true when some gradient rule has overlap: auto (its launches are all observed while learning) */
bool ash_policy_has_auto_overlap(const ash_policy_t *p);
/* True if PATH is an output only rank 0 writes: some main_process_only glob matches PATH with
 * leading "./" removed, or (for a glob without '/') PATH's last component. */
bool ash_policy_output_main_only(const ash_policy_t *p, const char *path);

/* Print the normalised form: canonical YAML, version 1, every default spelled out, strings
 * double-quoted. Parsing the output gives an equal policy. Returns 0, or -1 on a write error. */
int ash_policy_print(const ash_policy_t *p, FILE *f);
/* Same content (rules, outputs, debug); source names and positions are ignored. */
bool ash_policy_equal(const ash_policy_t *a, const ash_policy_t *b);

const char *ash_policy_dtype_name(ash_policy_dtype_t d);   /* "f32" "f16" "bf16" */
size_t ash_policy_dtype_size(ash_policy_dtype_t d);        /* 4, 2, 2 */
const char *ash_policy_wire_name(ash_policy_wire_t w);     /* "same" "f32" "f16" "bf16" */
const char *ash_policy_reduce_name(ash_policy_reduce_t r); /* "mean" "sum" */
const char *ash_policy_matmul_name(ash_policy_matmul_t m); /* "default" "tf32" "bf16" "f16" */
/* TEXT ("default", "tf32", "bf16", "f16") -> *OUT; false (OUT untouched) for anything else. */
bool ash_policy_matmul_parse(const char *text, ash_policy_matmul_t *out);

#ifdef __cplusplus
}
#endif
#endif /* ASH_POLICY_H */
