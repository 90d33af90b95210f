# shellcheck shell=bash
# lib.sh — shared by tests/record: run the bundled trainer under accelshim with recording /
# nan_check on (1 process, or N ranks with mpirun on hostcuda, mpi backend) and compare records.
# Sourced, not run. Builds on tests/equivalence/lib.sh (paths, mpirun flags, TAP helpers).

# shellcheck source=tests/equivalence/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../equivalence/lib.sh"
RC_CMP=$EQ_BUILD/bin/accelshim-compare
RC_POLICY=$EQ_TOP/examples/mlp.yaml

rc_preconditions() {
    [ -x "$RC_CMP" ] || { echo "1..0 # SKIP $RC_CMP not built"; exit 77; }
    [ -e "$EQ_BUILD/shim/libash_inspect_kernels_host.so" ] \
        || { echo "1..0 # SKIP $EQ_BUILD/shim/libash_inspect_kernels_host.so not built"; exit 77; }
    eq_preconditions
}

# rc_one LOG ENV=VALUE... -- MLP_ARGS... : one process under the shim (world size 1)
rc_one() {
    local log=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env LD_LIBRARY_PATH="$EQ_BUILD/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
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
    # shellcheck disable=SC2016  # expanded by the rank shell, on purpose
    eq_mpirun "$np" -x LD_LIBRARY_PATH="$EQ_BUILD/tests/hostcuda" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
        -x ACCELSHIM_POLICY="$RC_POLICY" -x ACCELSHIM_BACKEND=mpi -x EQ_SHIM="$EQ_SHIM" "${xs[@]}" \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$EQ_SHIM exec "$0" "$@" \
                 --shard-rank "$r" --shard-count "$OMPI_COMM_WORLD_SIZE" >"'"$prefix"'.$r.log" 2>&1' \
        "$EQ_MLP" "$@"
}

# rc_cmp OUT A B [options]: run accelshim-compare, stdout+stderr in OUT, return its status
rc_cmp() {
    local out=$1; shift
    "$RC_CMP" "$@" >"$out" 2>&1
}
