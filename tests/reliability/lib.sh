# shellcheck shell=bash
# shellcheck disable=SC2034  # RL_* are used by the tests that source this file
# lib.sh — sourced by the reliability tests, on the shared library tests/lib.sh (paths, skips,
# mpirun, {rank} templating): two ways to run the bundled trainer as N ranks: rl_launch
# (scripts/accelerate-run --cpu, the user's path) and rl_mpirun (plain mpirun with the shim and
# the io library preloaded).
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
RL_TOP=$T_TOP
RL_BUILD=$T_BUILD
RL_MLP=$T_MLP
RL_SHIM=$T_SHIM
RL_IO=$T_IO
RL_LAUNCHER=$T_LAUNCHER
RL_POL=$T_TOP/tests/equivalence/policies
RL_KLIBS=$T_BUILD/tests/trainers/libmlp_kernels_host.so:$T_BUILD/collectives/libash_cast_kernels_host.so

skip() { t_skip "$@"; }
fail() { t_fail "$@"; }
need() { t_need "$@"; }
need_mpirun() { t_need_mpirun; }

t_tmp
RL_TMP=$T_TMP

# rl_launch SECONDS LAUNCHER_ARGS... -- PROGRAM ARGS : accelerate-run --cpu under a time limit;
# output in $RL_TMP/out, exit status in RL_RC, wall time (s) in RL_SECS
rl_launch() {
    local limit=$1; shift
    local t0; t0=$(date +%s)
    timeout -k 5 "$limit" "$RL_LAUNCHER" --cpu "$@" >"$RL_TMP/out" 2>&1
    RL_RC=$?
    RL_SECS=$(( $(date +%s) - t0 ))
}

# rl_mpirun NP SECONDS ENV=VAL... -- MLP_ARGS : mpirun, shim + io library preloaded, rank r runs
# mlp --shard-rank r --shard-count NP MLP_ARGS ({rank} in MLP_ARGS = r); output in $RL_TMP/out
rl_mpirun() {
    local np=$1 limit=$2; shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done; shift
    local t0; t0=$(date +%s)
    T_MPIRUN_TIMEOUT=$limit t_mpirun "$np" \
        -x LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" -x HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" \
        -x T_PRELOAD="$RL_SHIM:$RL_IO" "${envs[@]}" \
        bash -c "$(t_rank_cmd)" "$RL_MLP" "$@" >"$RL_TMP/out" 2>&1
    RL_RC=$?
    RL_SECS=$(( $(date +%s) - t0 ))
}

# rl_backends: RL_BACKENDS=(mpi [nccl]) — nccl only where hostnccl is built (a note otherwise)
rl_backends() {
    RL_BACKENDS=(mpi)
    if [ -e "$RL_BUILD/tests/hostnccl/libnccl.so.2" ]; then RL_BACKENDS+=(nccl)
    else echo "note: hostnccl not built; nccl cases skipped"; fi
}

# rl_steps_script: writes $RL_TMP/steps.sh — `sh steps.sh RANK PROGRAM ARGS...` runs PROGRAM ARGS
# --steps $STEPS0 on rank 0 and --steps $STEPS1 on the others (ranks with uneven step counts)
rl_steps_script() {
    cat >"$RL_TMP/steps.sh" <<'SH'
r=$1; shift
if [ "$r" = 0 ]; then s=$STEPS0; else s=$STEPS1; fi
exec "$@" --steps "$s"
SH
}

rl_show() { sed 's/^/  | /' "$RL_TMP/out" | tail -n "${1:-40}"; }

# rl_params_only_policy FILE: a policy with only a parameters rule (a broadcast at the first
# forward kernel) and sync: optional — ranks that train apart but start alike, for the digest
rl_params_only_policy() {
    cat >"$1" <<'P'
version: 1
sync: optional
parameters:
  - at: "linear_forward*"
    buffer: { arg: 1, region: allocation }
    dtype: f32
    broadcast: once
P
}

# rl_digest_mismatch_named LABEL: the last launch's output has the digest's error on both ranks
# (rank 0 names rank 1 as the first differing rank; rank 1 says its own parameters differ)
rl_digest_mismatch_named() {
    grep -q 'rank 0\] ERROR digest: ranks ended with different parameters: rank 1 differs from rank 0' "$RL_TMP/out" \
        || { rl_show; fail "$1: rank 0 did not name rank 1 as the first differing rank"; }
    grep -q 'rank 1\] ERROR digest: ranks ended with different parameters: this rank' "$RL_TMP/out" \
        || { rl_show; fail "$1: rank 1 did not say its own parameters differ"; }
}
