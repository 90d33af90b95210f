/* ash_options.h — private to the shim: the ONE table of every environment variable accelshim reads.
 *
 * Each option is declared once in ASH_OPTION_LIST: name, type, range or allowed values, default,
 * the policy key that may also set it, and its documentation; nothing else in accelshim calls
 * getenv. One parser validates every variable the same way, once: a value that does not parse or
 * is out of range stops the program at its first CUDA call (ash_opt_init) with ONE line naming
 * the variable, the value and what is allowed, exit status 2 (no "ignored" fallback for a value
 * the user set). Precedence: default < policy file (ash_opt_set_policy, merged in one place, the
 * sync engine's init, right after the policy loads) < environment (an empty variable is unset).
 * The environment is read once, with secure_getenv (set-uid programs: defaults only), at the first
 * getter call (lazy init, never in a constructor), copied into static buffers (no allocation)
 * and never re-read. Threading: after ash_opt_init returns, every getter is a plain read of
 * immutable data, safe from any thread. libaccelshim-io.so links its own copy of this table and
 * reads through its getters only (the shim reports the errors).
 */
#ifndef ASH_OPTIONS_H
#define ASH_OPTIONS_H

#include "ash_status.h"

#include <stddef.h>

typedef enum {
    ASH_OPT_T_STR,      /* any text shorter than ASH_OPT_VALUE_MAX (paths, templates) */
    ASH_OPT_T_INT,      /* a decimal integer in [lo, hi] */
    ASH_OPT_T_BOOL,     /* 0 or 1 */
    ASH_OPT_T_ENUM,     /* one of values ("a|b|c", case-insensitive; stored as spelled here) */
    ASH_OPT_T_LIST,     /* a comma list of integers in [lo, hi], at most hi2 items (device ordinals) */
    ASH_OPT_T_HOSTPORT  /* HOST:PORT, PORT in 1..65535 */
} ash_opt_type_t;

#define ASH_OPT_VALUE_MAX 4096
#define ASH_OPT_RANK_MAX ((1L << 24) - 1)

/* X(id, env_name, type, lo, hi, values, default, policy_key, doc) */
#define ASH_OPTION_LIST(X)                                                                         \
    X(ASH_OPT_LOG, "ACCELSHIM_LOG", ASH_OPT_T_ENUM, 0, 0, "error|warn|info|debug", "warn", NULL,   \
      "log level")                                                                                 \
    X(ASH_OPT_RANK, "ACCELSHIM_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL, NULL,        \
      "this process's rank (overrides the launcher's)")                                            \
    X(ASH_OPT_LOCAL_RANK, "ACCELSHIM_LOCAL_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL,  \
      NULL, "rank on this node; picks the device")                                                 \
    X(ASH_OPT_WORLD_SIZE, "ACCELSHIM_WORLD_SIZE", ASH_OPT_T_INT, 1, ASH_OPT_RANK_MAX + 1, NULL,    \
      NULL, NULL, "number of ranks")                                                               \
    X(ASH_OPT_DEVICES, "ACCELSHIM_DEVICES", ASH_OPT_T_LIST, 0, 1L << 20, NULL, NULL, NULL,         \
      "comma list of physical device ordinals; device = list[local_rank % len]; default all")      \
    X(ASH_OPT_DRIVER_PATH, "ACCELSHIM_DRIVER_PATH", ASH_OPT_T_STR, 0, 0, NULL, "libcuda.so.1",     \
      NULL, "the real driver to dlopen")                                                           \
    X(ASH_OPT_POLICY, "ACCELSHIM_POLICY", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL, "YAML policy file") \
    X(ASH_OPT_POLICY_ORIGIN, "ACCELSHIM_POLICY_ORIGIN", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,     \
      "where ACCELSHIM_POLICY came from, for the log (accelerate-run: --policy | ./accelshim.yaml)") \
    X(ASH_OPT_SYNC, "ACCELSHIM_SYNC", ASH_OPT_T_ENUM, 0, 0, "required|optional", NULL, NULL,        \
      "optional lets >1 rank run with no gradient rule fired (the policy's sync: optional)")        \
    X(ASH_OPT_SYNC_WATCH_STEPS, "ACCELSHIM_SYNC_WATCH_STEPS", ASH_OPT_T_INT, 0, 1000000, NULL, "2",  \
      NULL, "with sync required: stop (exit 7) once the step repeated this often and no gradient "  \
      "rule fired (0: no step watch)")                                                              \
    X(ASH_OPT_SYNC_WATCH_LAUNCHES, "ACCELSHIM_SYNC_WATCH_LAUNCHES", ASH_OPT_T_INT, 0, 2000000000,  \
      NULL, "100000", NULL, "... or once this many launches went by with no gradient rule fired "  \
      "(0: no bound)")                                                                             \
    X(ASH_OPT_BACKEND, "ACCELSHIM_BACKEND", ASH_OPT_T_ENUM, 0, 0, "auto|nccl|mpi", "auto", NULL,   \
      "collectives backend")                                                                       \
    X(ASH_OPT_RENDEZVOUS, "ACCELSHIM_RENDEZVOUS", ASH_OPT_T_ENUM, 0, 0, "mpi|nccl", "mpi", NULL,   \
      "how ranks meet: mpi (the engine's MPI world) | nccl (NCCL_COMM_ID; no MPI)")                \
    X(ASH_OPT_NCCL_COMM_ID, "NCCL_COMM_ID", ASH_OPT_T_HOSTPORT, 0, 0, NULL, NULL, NULL,            \
      "IP:PORT where NCCL's bootstrap meets (read by NCCL; needed by ACCELSHIM_RENDEZVOUS=nccl)")   \
    X(ASH_OPT_JOB_ID, "ACCELSHIM_JOB_ID", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,                   \
      "the job's identity: ranks meeting through NCCL_COMM_ID refuse a rank of another job")       \
    X(ASH_OPT_WIRE_OVERRIDE, "ACCELSHIM_WIRE_OVERRIDE", ASH_OPT_T_ENUM, 0, 0, "bf16|f16|fp16|no|same", \
      NULL, NULL, "wire dtype for every f32 gradient rule (accelerate-run --mixed-precision)")      \
    X(ASH_OPT_TIMEOUT_S, "ACCELSHIM_TIMEOUT_S", ASH_OPT_T_INT, 0, 86400 * 7, NULL, NULL,           \
      "debug.timeout_s", "seconds a collective may wait before the job is aborted (0: no watchdog)") \
    X(ASH_OPT_MATMUL, "ACCELSHIM_MATMUL", ASH_OPT_T_ENUM, 0, 0, "default|tf32|bf16|f16", NULL,     \
      "precision.matmul", "fp32 cuBLAS GEMMs' compute type (--mixed-precision)")                   \
    X(ASH_OPT_CHECK_COLLECTIVES, "ACCELSHIM_CHECK_COLLECTIVES", ASH_OPT_T_BOOL, 0, 1, NULL, NULL,  \
      "debug.check_collectives",                                                                   \
      "1: fingerprint every collective first (rule, count, dtype, seq) (accelerate-run --debug)")  \
    X(ASH_OPT_CRASH_HANDLER, "ACCELSHIM_CRASH_HANDLER", ASH_OPT_T_BOOL, 0, 1, NULL, "1", NULL,     \
      "1: print a backtrace on SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT; 0: leave signals alone")      \
    X(ASH_OPT_RECORD, "ACCELSHIM_RECORD", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,                   \
      "JSON Lines file ({rank} = the rank; a directory or a path ending in / = DIR/rank-R.jsonl) " \
      "recording each sync point's buffers (accelerate-run --record DIR)")                          \
    X(ASH_OPT_RECORD_EVERY, "ACCELSHIM_RECORD_EVERY", ASH_OPT_T_INT, 1, 1000000000L, NULL, "1",    \
      NULL, "record every Nth sync point of each rule (seq % N == 0)")                             \
    X(ASH_OPT_NAN_CHECK, "ACCELSHIM_NAN_CHECK", ASH_OPT_T_BOOL, 0, 1, NULL, NULL, "debug.nan_check", \
      "1: stop the job when a synced buffer holds NaN/Inf (before the collective) (--nan-check)")  \
    X(ASH_OPT_REPORT, "ACCELSHIM_REPORT", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,                   \
      "write the exit report as JSON to this file ({rank} = the rank; never follows a symlink)")   \
    X(ASH_OPT_TRACE, "ACCELSHIM_TRACE", ASH_OPT_T_STR, 0, 0, NULL, NULL, "debug.trace",            \
      "Chrome trace event JSON file ({rank} = the rank) (--trace DIR)")                            \
    X(ASH_OPT_TRACE_LAUNCHES, "ACCELSHIM_TRACE_LAUNCHES", ASH_OPT_T_BOOL, 0, 1, NULL, NULL, NULL,  \
      "1: the trace also records every kernel launch and memcpy (--trace-launches)")               \
    X(ASH_OPT_EXPLAIN, "ACCELSHIM_EXPLAIN", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,                 \
      "write the program's kernel facts, launches and their reading to this file at exit "         \
      "(accelerate-run explain; docs/explain.md)")                                                 \
    X(ASH_OPT_ROUTING_TABLE, "ACCELSHIM_ROUTING_TABLE", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,     \
      "append one TSV line per cuGetProcAddress[_v2] request to this file (docs/hostcuda.md)")      \
    X(ASH_OPT_ROUTE_BY_NAME, "ACCELSHIM_ROUTE_BY_NAME", ASH_OPT_T_BOOL, 0, 1, NULL, "1", NULL,      \
      "1: a resolver pointer that is no exported symbol is routed by (name, version, flags); 0: off") \
    X(ASH_OPT_FUSE_COPY, "ACCELSHIM_FUSE_COPY", ASH_OPT_T_BOOL, 0, 1, NULL, NULL, NULL,            \
      "1: fused reductions always stage through the fusion buffer, even over contiguous buffers")  \
    X(ASH_OPT_OVERLAP, "ACCELSHIM_OVERLAP", ASH_OPT_T_ENUM, 0, 0, "on|off", "on", NULL,              \
      "on: gradient rules with ready points (ready:, overlap: auto) start their regions' "       \
      "all-reduces during the backward pass; off: every region at its sync point (an A/B switch)") \
    X(ASH_OPT_DEBUG_WORLD1_COLLECTIVES, "ACCELSHIM_DEBUG_WORLD1_COLLECTIVES", ASH_OPT_T_BOOL, 0, 1, \
      NULL, NULL, NULL,                                                                            \
      "1: at world size 1 run every sync point's collective anyway, through the backend (NCCL "    \
      "with one rank, scratch and cast kernels), to exercise that path on one GPU; 0: off")         \
    X(ASH_OPT_OMPI_RANK, "OMPI_COMM_WORLD_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL,   \
      NULL, "Open MPI: rank")                                                                      \
    X(ASH_OPT_OMPI_LOCAL_RANK, "OMPI_COMM_WORLD_LOCAL_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX,   \
      NULL, NULL, NULL, "Open MPI: local rank")                                                    \
    X(ASH_OPT_OMPI_SIZE, "OMPI_COMM_WORLD_SIZE", ASH_OPT_T_INT, 1, ASH_OPT_RANK_MAX + 1, NULL,     \
      NULL, NULL, "Open MPI: world size")                                                          \
    X(ASH_OPT_OMPI_JOB_DIR, "OMPI_MCA_orte_jobfam_session_dir", ASH_OPT_T_STR, 0, 0, NULL, NULL,   \
      NULL, "Open MPI: the job's session folder (one MPI world per rank: world_mpi.c)")           \
    X(ASH_OPT_OMPI_HNP_URI, "OMPI_MCA_orte_hnp_uri", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,        \
      "Open MPI: mpirun's address, the same for one job (one MPI world per rank: world_mpi.c)")    \
    X(ASH_OPT_PMIX_RANK, "PMIX_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL, NULL,        \
      "PMIx: rank")                                                                                \
    X(ASH_OPT_SLURM_PROCID, "SLURM_PROCID", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL, NULL,  \
      "Slurm: rank")                                                                               \
    X(ASH_OPT_SLURM_LOCALID, "SLURM_LOCALID", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL,      \
      NULL, "Slurm: local rank")                                                                   \
    X(ASH_OPT_SLURM_NTASKS, "SLURM_NTASKS", ASH_OPT_T_INT, 1, ASH_OPT_RANK_MAX + 1, NULL, NULL,    \
      NULL, "Slurm: world size")                                                                   \
    X(ASH_OPT_TR_RANK, "RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL, NULL,               \
      "torchrun: rank")                                                                            \
    X(ASH_OPT_TR_LOCAL_RANK, "LOCAL_RANK", ASH_OPT_T_INT, 0, ASH_OPT_RANK_MAX, NULL, NULL, NULL,   \
      "torchrun: local rank")                                                                      \
    X(ASH_OPT_TR_WORLD_SIZE, "WORLD_SIZE", ASH_OPT_T_INT, 1, ASH_OPT_RANK_MAX + 1, NULL, NULL,     \
      NULL, "torchrun: world size")                                                                \
    X(ASH_OPT_TR_LOCAL_WORLD_SIZE, "LOCAL_WORLD_SIZE", ASH_OPT_T_INT, 1, ASH_OPT_RANK_MAX + 1,     \
      NULL, NULL, NULL, "torchrun: ranks on this node")                                            \
    X(ASH_OPT_TR_MASTER_ADDR, "MASTER_ADDR", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,                \
      "torchrun: the rendezvous host")                                                             \
    X(ASH_OPT_TR_MASTER_PORT, "MASTER_PORT", ASH_OPT_T_INT, 1, 65535, NULL, NULL, NULL,            \
      "torchrun: its store's port (not ours)")                                                     \
    X(ASH_OPT_PROGRESS_DIR, "ACCELSHIM_PROGRESS_DIR", ASH_OPT_T_STR, 0, 0, NULL, NULL, NULL,       \
      "directory of the ranks' progress records: the watchdog names the ranks that did not arrive") \
    X(ASH_OPT_PORT, "ACCELSHIM_PORT", ASH_OPT_T_INT, 1, 65535, NULL, NULL, NULL,                   \
      "torchrun-started ranks meet at MASTER_ADDR:ACCELSHIM_PORT (default MASTER_PORT + 1)")

#define ASH__OPT_ENUM(id, env, type, lo, hi, values, def, pkey, doc) id,
typedef enum { ASH_OPTION_LIST(ASH__OPT_ENUM) ASH_OPT_COUNT_ } ash_opt_id_t;
#undef ASH__OPT_ENUM

#define ASH_OPT_LIST_MAX 64 /* items in an ASH_OPT_T_LIST value */

typedef enum { ASH_OPT_SRC_DEFAULT = 0, ASH_OPT_SRC_POLICY, ASH_OPT_SRC_ENV } ash_opt_source_t;

/* Read and validate the environment once (idempotent, thread-safe); the first invalid variable
 * stops the program (ash_fatal, exit 2, one line); log, at info, every option that is set. */
void ash_opt_init(void);

/* The effective value (enums in the table's spelling), or NULL when unset and without default.
 * An invalid value reads as unset (ash_opt_init stops the program before anyone acts on it). */
const char *ash_opt_str(ash_opt_id_t id);
/* INT and BOOL options: ASH_OK and *out, or ASH_ERR_NOT_SET (range checked by the parser). */
ash_status_t ash_opt_int(ash_opt_id_t id, long *out);
/* ENUM options: the index of the value in the table's list, or -1 when unset. */
int ash_opt_enum(ash_opt_id_t id);
/* LIST options: the items (at most cap), or 0 when unset. */
int ash_opt_list(ash_opt_id_t id, long *out, int cap);
/* The policy layer: set a value unless the environment set it. Only options with a policy key;
 * only during init (before other threads read options). ASH_ERR_CONFIG: the value is invalid. */
ash_status_t ash_opt_set_policy(ash_opt_id_t id, const char *value);

const char *ash_opt_name(ash_opt_id_t id);
const char *ash_opt_doc(ash_opt_id_t id);
ash_opt_source_t ash_opt_source(ash_opt_id_t id);
/* Check text against option id's type: ASH_OK, or ASH_ERR_CONFIG with "expected ..." in why. */
ash_status_t ash_opt_check(ash_opt_id_t id, const char *text, char *why, size_t cap);

/* Parse a decimal integer string in [lo, hi] (whole string, no sign games): ASH_OK or ASH_ERR_CONFIG. */
ash_status_t ash_opt_parse_long(const char *text, long lo, long hi, long *out);

#endif /* ASH_OPTIONS_H */
