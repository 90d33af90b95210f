/* ash_options.h — private to the shim: the ONE table of every environment variable accelshim reads.
 *
 * Each option is declared once (name, default, documentation) in ASH_OPTION_LIST; nothing else
 * in accelshim calls getenv. Precedence: default < policy file (ash_opt_set_policy, init only) <
 * environment (an empty variable counts as unset). The environment is read once, at the first ash_opt_init (lazy init, never in a
 * constructor), copied into static buffers (no allocation), and never re-read. Threading: after
 * ash_opt_init returns, every getter is a plain read of immutable data, safe from any thread.
 */
#ifndef ASH_OPTIONS_H
#define ASH_OPTIONS_H

#include "ash_status.h"

/* X(id, env_name, default_or_NULL, policy_may_set, doc) */
#define ASH_OPTION_LIST(X)                                                                          \
    X(ASH_OPT_LOG, "ACCELSHIM_LOG", "warn", 1, "log level: error|warn|info|debug")                  \
    X(ASH_OPT_RANK, "ACCELSHIM_RANK", NULL, 0, "this process's rank (overrides the launcher's)")    \
    X(ASH_OPT_LOCAL_RANK, "ACCELSHIM_LOCAL_RANK", NULL, 0, "rank on this node; picks the device")   \
    X(ASH_OPT_WORLD_SIZE, "ACCELSHIM_WORLD_SIZE", NULL, 0, "number of ranks")                       \
    X(ASH_OPT_DEVICES, "ACCELSHIM_DEVICES", NULL, 1,                                                \
      "comma list of physical device ordinals; device = list[local_rank % len]; default all")       \
    X(ASH_OPT_DRIVER_PATH, "ACCELSHIM_DRIVER_PATH", "libcuda.so.1", 0, "the real driver to dlopen") \
    X(ASH_OPT_POLICY, "ACCELSHIM_POLICY", NULL, 0, "YAML policy file")                              \
    X(ASH_OPT_POLICY_ORIGIN, "ACCELSHIM_POLICY_ORIGIN", NULL, 0,                                    \
      "where ACCELSHIM_POLICY came from, for the log (accelerate-run: --policy | ./accelshim.yaml)") \
    X(ASH_OPT_SYNC, "ACCELSHIM_SYNC", NULL, 0,                                                      \
      "required|optional: optional lets >1 rank run with no gradient rule fired (sync: optional)")  \
    X(ASH_OPT_BACKEND, "ACCELSHIM_BACKEND", "auto", 0, "collectives: auto|nccl|mpi")                \
    X(ASH_OPT_RENDEZVOUS, "ACCELSHIM_RENDEZVOUS", "mpi", 0,                                          \
      "how ranks meet: mpi (the engine's MPI world) | nccl (NCCL_COMM_ID; no MPI)")                  \
    X(ASH_OPT_NCCL_COMM_ID, "NCCL_COMM_ID", NULL, 0,                                                 \
      "IP:PORT where NCCL's bootstrap meets (read by NCCL; needed by ACCELSHIM_RENDEZVOUS=nccl)")    \
    X(ASH_OPT_WIRE_OVERRIDE, "ACCELSHIM_WIRE_OVERRIDE", NULL, 0,                                    \
      "wire dtype for every f32 gradient rule: bf16|f16|no (accelerate-run --mixed-precision)")     \
    X(ASH_OPT_TIMEOUT_S, "ACCELSHIM_TIMEOUT_S", NULL, 0,                                            \
      "seconds a collective may wait before the job is aborted (overrides debug.timeout_s)")        \
    X(ASH_OPT_MATMUL, "ACCELSHIM_MATMUL", NULL, 0,                                                  \
      "fp32 cuBLAS GEMMs: default|tf32|bf16|f16 (overrides precision.matmul; --mixed-precision)")    \
    X(ASH_OPT_CHECK_COLLECTIVES, "ACCELSHIM_CHECK_COLLECTIVES", NULL, 0,                            \
      "1: fingerprint every collective first (rule, count, dtype, seq); 0: off; overrides "         \
      "debug.check_collectives (accelerate-run --debug sets 1)")                                    \
    X(ASH_OPT_CRASH_HANDLER, "ACCELSHIM_CRASH_HANDLER", "1", 0,                                     \
      "1: print a backtrace on SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT; 0: leave signals alone")      \
    X(ASH_OPT_RECORD, "ACCELSHIM_RECORD", NULL, 0,                                                  \
      "JSON Lines file ({rank} = the rank; a directory or a path ending in / = DIR/rank-R.jsonl) " \
      "recording each sync point's buffers (accelerate-run --record DIR)")                          \
    X(ASH_OPT_RECORD_EVERY, "ACCELSHIM_RECORD_EVERY", "1", 0,                                       \
      "record every Nth sync point of each rule (seq % N == 0)")                                    \
    X(ASH_OPT_NAN_CHECK, "ACCELSHIM_NAN_CHECK", NULL, 0,                                            \
      "1: stop the job when a synced buffer holds NaN/Inf (before the collective); 0: off; "        \
      "overrides debug.nan_check (accelerate-run --nan-check)")                                     \
    X(ASH_OPT_REPORT, "ACCELSHIM_REPORT", NULL, 0,                                                 \
      "write the exit report as JSON to this file ({rank} = the rank; never follows a symlink)")   \
    X(ASH_OPT_TRACE, "ACCELSHIM_TRACE", NULL, 0,                                                   \
      "Chrome trace event JSON file ({rank} = the rank); overrides debug.trace (--trace DIR)")     \
    X(ASH_OPT_TRACE_LAUNCHES, "ACCELSHIM_TRACE_LAUNCHES", NULL, 0,                                 \
      "1: the trace also records every kernel launch and memcpy (--trace-launches); 0: off")       \
    X(ASH_OPT_FUSE_COPY, "ACCELSHIM_FUSE_COPY", NULL, 0,                                           \
      "1: fused reductions always stage through the fusion buffer, even over contiguous buffers")  \
    X(ASH_OPT_OMPI_RANK, "OMPI_COMM_WORLD_RANK", NULL, 0, "Open MPI: rank")                         \
    X(ASH_OPT_OMPI_LOCAL_RANK, "OMPI_COMM_WORLD_LOCAL_RANK", NULL, 0, "Open MPI: local rank")       \
    X(ASH_OPT_OMPI_SIZE, "OMPI_COMM_WORLD_SIZE", NULL, 0, "Open MPI: world size")                   \
    X(ASH_OPT_PMIX_RANK, "PMIX_RANK", NULL, 0, "PMIx: rank")                                        \
    X(ASH_OPT_SLURM_PROCID, "SLURM_PROCID", NULL, 0, "Slurm: rank")                                 \
    X(ASH_OPT_SLURM_LOCALID, "SLURM_LOCALID", NULL, 0, "Slurm: local rank")                         \
    X(ASH_OPT_SLURM_NTASKS, "SLURM_NTASKS", NULL, 0, "Slurm: world size")                           \
    X(ASH_OPT_TR_RANK, "RANK", NULL, 0, "torchrun: rank")                                           \
    X(ASH_OPT_TR_LOCAL_RANK, "LOCAL_RANK", NULL, 0, "torchrun: local rank")                         \
    X(ASH_OPT_TR_WORLD_SIZE, "WORLD_SIZE", NULL, 0, "torchrun: world size")                         \
    X(ASH_OPT_TR_LOCAL_WORLD_SIZE, "LOCAL_WORLD_SIZE", NULL, 0, "torchrun: ranks on this node")     \
    X(ASH_OPT_TR_MASTER_ADDR, "MASTER_ADDR", NULL, 0, "torchrun: the rendezvous host")              \
    X(ASH_OPT_TR_MASTER_PORT, "MASTER_PORT", NULL, 0, "torchrun: its store's port (not ours)")      \
    X(ASH_OPT_PROGRESS_DIR, "ACCELSHIM_PROGRESS_DIR", NULL, 0,                                      \
      "directory of the ranks' progress records: the watchdog names the ranks that did not arrive") \
    X(ASH_OPT_PORT, "ACCELSHIM_PORT", NULL, 0,                                                      \
      "torchrun-started ranks meet at MASTER_ADDR:ACCELSHIM_PORT (default MASTER_PORT + 1)")

#define ASH__OPT_ENUM(id, env, def, pol, doc) id,
typedef enum { ASH_OPTION_LIST(ASH__OPT_ENUM) ASH_OPT_COUNT_ } ash_opt_id_t;
#undef ASH__OPT_ENUM

typedef enum { ASH_OPT_SRC_DEFAULT = 0, ASH_OPT_SRC_POLICY, ASH_OPT_SRC_ENV } ash_opt_source_t;

/* Read the environment once (idempotent, thread-safe) and log, at info, every option that is set. */
void ash_opt_init(void);

/* The effective value, or NULL when unset and without default. */
const char *ash_opt_str(ash_opt_id_t id);
/* Parse the effective value as a decimal integer in [lo, hi]: ASH_OK, ASH_ERR_NOT_SET, or
 * ASH_ERR_CONFIG (present but malformed / out of range; *out untouched; the caller warns). */
ash_status_t ash_opt_int(ash_opt_id_t id, long lo, long hi, long *out);
/* The policy layer: set a value unless the environment set it. Only options marked
 * policy_may_set; only during init (before other threads read options). */
ash_status_t ash_opt_set_policy(ash_opt_id_t id, const char *value);

const char *ash_opt_name(ash_opt_id_t id);
const char *ash_opt_doc(ash_opt_id_t id);
ash_opt_source_t ash_opt_source(ash_opt_id_t id);

/* Parse a decimal integer string in [lo, hi] (whole string, no sign games): ASH_OK or ASH_ERR_CONFIG. */
ash_status_t ash_opt_parse_long(const char *text, long lo, long hi, long *out);

#endif /* ASH_OPTIONS_H */
