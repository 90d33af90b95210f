# shellcheck shell=bash
# lib.sh — shared by tests/record: run the bundled trainer under accelshim with recording /
# nan_check on (1 process, or N ranks with mpirun on hostcuda, mpi backend) and compare records.
# Sourced, not run. Builds on tests/equivalence/lib.sh (and so on the shared tests/lib.sh).

# shellcheck source=tests/equivalence/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../equivalence/lib.sh"
RC_CMP=$EQ_BUILD/bin/accelshim-compare
RC_POLICY=$EQ_TOP/examples/mlp.yaml

rc_preconditions() {
    t_need "$RC_CMP" "$EQ_BUILD/shim/libash_inspect_kernels_host.so"
    eq_preconditions
}

# rc_one LOG ENV=VALUE... -- MLP_ARGS... : one process under the shim (world size 1)
rc_one() {
    local log=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
        ACCELSHIM_POLICY="$RC_POLICY" "${envs[@]}" LD_PRELOAD="$EQ_SHIM" \
        timeout -k 5 120 "$EQ_MLP" "$@" >"$log" 2>&1
}

# rc_ranks NP LOGPREFIX ENV=VALUE... -- MLP_ARGS... : NP ranks (mpi backend); rank r's output
# in LOGPREFIX.r.log; sharded by rank.
rc_ranks() {
    local np=$1 prefix=$2; shift 2
    local xs=()
    while [ "$1" != -- ]; do xs+=(-x "$1"); shift; done
    shift
    t_mpirun "$np" -x LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
        -x ACCELSHIM_POLICY="$RC_POLICY" -x ACCELSHIM_BACKEND=mpi -x T_PRELOAD="$EQ_SHIM" \
        -x T_RANK_LOG="$prefix.{rank}.log" "${xs[@]}" bash -c "$(t_rank_cmd)" "$EQ_MLP" "$@"
}

# rc_cmp OUT A B [options]: run accelshim-compare, stdout+stderr in OUT, return its status
rc_cmp() {
    local out=$1; shift
    "$RC_CMP" "$@" >"$out" 2>&1
}
