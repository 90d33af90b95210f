# shellcheck shell=bash
# shellcheck disable=SC2034  # RL_* are used by the tests that source this file
# lib.sh — sourced by the reliability tests: repo paths, skip/fail helpers, and two ways to run
# the bundled trainer as N ranks: rl_launch (scripts/accelerate-run --cpu, the user's path) and
# rl_mpirun (plain mpirun with the shim and the io library preloaded).
RL_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RL_BUILD=$RL_TOP/build
RL_MLP=$RL_BUILD/tests/trainers/mlp
RL_SHIM=$RL_BUILD/libaccelshim.so
RL_IO=$RL_BUILD/libaccelshim-io.so
RL_LAUNCHER=$RL_TOP/scripts/accelerate-run
RL_POL=$RL_TOP/tests/equivalence/policies
RL_KLIBS=$RL_BUILD/tests/trainers/libmlp_kernels_host.so:$RL_BUILD/collectives/libash_cast_kernels_host.so

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need() { local f; for f in "$@"; do [ -e "$f" ] || skip "$f is not built"; done; }
need_mpirun() { command -v mpirun >/dev/null || skip "mpirun not installed"; }

RL_TMP=$(mktemp -d)
trap 'rm -rf "$RL_TMP"' EXIT

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
    local envs=() root=()
    while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done; shift
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    local t0; t0=$(date +%s)
    # shellcheck disable=SC2016  # expanded by the rank shell, on purpose
    timeout -k 5 "$limit" mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        -x LD_LIBRARY_PATH="$RL_BUILD/tests/hostcuda" -x HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" \
        -x RL_PRELOAD="$RL_SHIM:$RL_IO" "${envs[@]}" \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; a=(); for x in "$@"; do a+=("${x//\{rank\}/$r}"); done
                 LD_PRELOAD=$RL_PRELOAD exec "$0" "${a[@]}" --shard-rank "$r" \
                 --shard-count "$OMPI_COMM_WORLD_SIZE"' "$RL_MLP" "$@" >"$RL_TMP/out" 2>&1
    RL_RC=$?
    RL_SECS=$(( $(date +%s) - t0 ))
}

rl_show() { sed 's/^/  | /' "$RL_TMP/out" | tail -n "${1:-40}"; }
