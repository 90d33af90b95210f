# shellcheck shell=bash
# lib.sh — shared by the equivalence tests: run the bundled trainer as N ranks under accelshim
# (mpirun, hostcuda) and as one rank with an N-times larger batch, and compare parameters.
# Sourced, not run. Prints TAP (one "ok"/"not ok" line per case) through tap_case.

EQ_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EQ_BUILD=$EQ_TOP/build
EQ_MLP=$EQ_BUILD/tests/trainers/mlp
EQ_CMP=$EQ_BUILD/tests/equivalence/fcompare
EQ_SHIM=$EQ_BUILD/libaccelshim.so
export EQ_POL=$EQ_TOP/tests/equivalence/policies
EQ_KLIBS=$EQ_BUILD/tests/trainers/libmlp_kernels_host.so:$EQ_BUILD/collectives/libash_cast_kernels_host.so
EQ_KLIBS=$EQ_KLIBS:$EQ_BUILD/shim/libash_inspect_kernels_host.so   # nan_check's scan (shim/record.mk)
EQ_STEPS=${EQ_STEPS:-25}
EQ_BATCH=${EQ_BATCH:-4}

eq_preconditions() {
    local f
    for f in "$EQ_MLP" "$EQ_CMP" "$EQ_SHIM" "$EQ_BUILD/tests/hostcuda/libcuda.so.1" \
             "$EQ_BUILD/collectives/libash_cast_kernels_host.so"; do
        [ -e "$f" ] || { echo "1..0 # SKIP $f not built"; exit 77; }
    done
    command -v mpirun >/dev/null || { echo "1..0 # SKIP mpirun not installed"; exit 77; }
    EQ_TMP=$(mktemp -d)
    trap 'rm -rf "$EQ_TMP"' EXIT
}

EQ_N=0
tap_case() {   # tap_case STATUS DESCRIPTION  (STATUS 0 = ok); details already printed as # lines
    EQ_N=$((EQ_N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $EQ_N - $2"; else echo "not ok $EQ_N - $2"; fi
}

# mpirun flags: as root Open MPI needs to be told; oversubscribe the 2-core machine.
eq_mpirun() {
    local np=$1; shift
    local root=()
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    timeout -k 5 120 mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}

# eq_ref OUT MLP_ARGS... : one process, no shim, hostcuda
eq_ref() {
    local out=$1; shift
    LD_LIBRARY_PATH=$EQ_BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS \
        "$EQ_MLP" "$@" --save "$out" >"$out.log" 2>&1
}

# eq_ranks N BACKEND POLICY(or "") OUTPREFIX MLP_ARGS... : N ranks under the shim; rank r
# writes OUTPREFIX.r (parameters) and OUTPREFIX.r.log
eq_ranks() {
    local np=$1 backend=$2 policy=$3 prefix=$4; shift 4
    local libpath=$EQ_BUILD/tests/hostcuda
    [ "$backend" = nccl ] && libpath=$EQ_BUILD/tests/hostnccl:$libpath
    # each rank: its shard and its output file, from Open MPI's rank variable
    # shellcheck disable=SC2016  # expanded by the rank shell, on purpose
    eq_mpirun "$np" -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
        -x ACCELSHIM_POLICY="$policy" -x ACCELSHIM_BACKEND="$backend" \
        -x ACCELSHIM_LOG="${ACCELSHIM_LOG:-warn}" -x EQ_SHIM="$EQ_SHIM" \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$EQ_SHIM exec "$0" "$@" \
                 --shard-rank "$r" --shard-count "$OMPI_COMM_WORLD_SIZE" --save "'"$prefix"'.$r" \
                 >"'"$prefix"'.$r.log" 2>&1' "$EQ_MLP" "$@"
}

# eq_show FILE: a failed case's evidence, as TAP comments
eq_show() { sed 's/^/# /' "$@" | tail -n 20; }

# eq_policy SRC WIRE OUT: a copy of policy SRC with every `wire:` set to WIRE
eq_policy() { sed "s/wire: same/wire: $2/" "$1" >"$3"; }
