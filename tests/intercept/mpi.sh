# shellcheck shell=bash
# mpi.sh — sourced by the intercept tests that run a program as N ranks under the shim with
# mpirun on hostcuda (after lib.sh). itest_ranks NP BACKEND POLICY PREFIX PROG ARGS...: rank r runs
# `PROG ARGS... --shard r` with the shim preloaded, stdout to PREFIX.r, stderr to PREFIX.r.err;
# returns mpirun's status (ITEST_LIBPATH, when set, goes before hostcuda on the ranks' library
# path: hostcudart for runtime programs). An empty POLICY is a control run of independent ranks
# (sync optional: else the shim ends a multi-rank job that synchronised nothing with exit 7).
# Skips (77) when mpirun is missing.
command -v mpirun >/dev/null || skip "mpirun not installed"
export SHIM ITEST_PTX
ITEST_KLIBS=$B/libitest_kernels.so:$ROOT/build/collectives/libash_cast_kernels_host.so
ITEST_KLIBS=$ITEST_KLIBS:$ROOT/build/shim/libash_inspect_kernels_host.so
need "$ROOT/build/collectives/libash_cast_kernels_host.so" "$ROOT/build/shim/libash_inspect_kernels_host.so"
itest_ranks() {
    local np=$1 backend=$2 policy=$3 prefix=$4; shift 4
    local root=() libpath=${ITEST_LIBPATH:+$ITEST_LIBPATH:}$HOSTCUDA_DIR sync=required
    [ -z "$policy" ] && sync=optional
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    [ "$backend" = nccl ] && libpath=$ROOT/build/tests/hostnccl:$libpath
    # shellcheck disable=SC2016  # expanded by each rank's shell, on purpose
    timeout -k 5 120 mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$ITEST_KLIBS" -x ITEST_PTX \
        -x ACCELSHIM_POLICY="$policy" -x ACCELSHIM_SYNC="$sync" -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_LOG=warn -x SHIM \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$SHIM "$0" "$@" --shard "$r" \
                 >"'"$prefix"'.$r" 2>"'"$prefix"'.$r.err"' "$@"
}
