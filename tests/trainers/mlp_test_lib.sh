# shellcheck shell=bash
# shellcheck disable=SC2034  # MLP_* are read by the tests that source this file
# mlp_test_lib.sh — shared setup for the tests of build/tests/trainers/mlp (sourced, not a test).
# Locates the repo root from the test's own path, checks preconditions (exit 77 = skip when the
# CUDA driver to run on is missing; exit 1 when the trainer itself was not built), and provides
# mlp_run (runs the trainer, fails the test loudly on a non-zero exit) and a scratch directory.
# Driver: build/tests/hostcuda/libcuda.so.1 (hostcuda) by default; MLP_TEST_LIBCUDA_DIR names another
# directory holding a libcuda.so.1 (e.g. the real driver's, on a GPU machine).
# Built on the shared library tests/lib.sh (paths, skip/fail, scratch directory).
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
MLP_ROOT=$T_TOP
MLP_BIN=$T_MLP
MLP_KLIB="$T_BUILD/tests/trainers/libmlp_kernels_host.so"
MLP_DRIVER_DIR=${MLP_TEST_LIBCUDA_DIR:-$T_HOSTCUDA_DIR}

mlp_need_driver() {
    [ -e "$MLP_DRIVER_DIR/libcuda.so.1" ] \
        || t_skip "no CUDA driver to run on: $MLP_DRIVER_DIR/libcuda.so.1 is missing (make build/tests/hostcuda/libcuda.so.1)"
    for f in "$MLP_BIN" "$MLP_KLIB"; do
        [ -f "$f" ] || t_fail "$f not built (make all)"
    done
    export LD_LIBRARY_PATH="$MLP_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export HOSTCUDA_KERNEL_LIBS="$MLP_KLIB"
    export HOSTCUDA_STRICT=1   # the trainer must never touch device memory from the host
    t_tmp
    MLP_TMP=$T_TMP
}

# mlp_run OUTFILE ARGS... : run the trainer, stdout to OUTFILE, stderr to OUTFILE.err
mlp_run() {
    local out=$1
    shift
    if ! "$MLP_BIN" "$@" >"$out" 2>"$out.err"; then
        echo "FAIL: mlp $* exited $? — stderr:"
        cat "$out.err"
        exit 1
    fi
}

# mlp_checksum FILE : the `checksum SUM HASH` line of a run's stdout
mlp_checksum() {
    grep '^checksum ' "$1" || { echo "FAIL: no checksum line in $1"; cat "$1"; exit 1; }
}

# mlp_loss FILE STEP : the loss printed for STEP
mlp_loss() {
    awk -v s="$2" '$1 == "step" && $2 == s && $3 == "loss" { print $4; found = 1 }
                   END { if (!found) exit 1 }' "$1" || { echo "FAIL: no loss for step $2 in $1"; exit 1; }
}
