# shellcheck shell=bash
# shellcheck disable=SC2034  # EQ_* are read by the tests (and scripts/gpu-check.sh) that source this
# lib.sh — the equivalence suite's runners, on the shared library tests/lib.sh (skips, TAP,
# mpirun, templating, the comparison): the bundled trainer as N ranks under accelshim (mpirun,
# hostcuda) and as one rank with an N-times larger batch. Sourced, not run. The eq_* names are
# also used by tests/record, tests/report, tests/mixed and scripts/gpu-check.sh.

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
EQ_TOP=$T_TOP
EQ_BUILD=$T_BUILD
EQ_MLP=$T_MLP
EQ_CMP=$T_EQUIV
EQ_SHIM=$T_SHIM
export EQ_POL=$T_TOP/tests/equivalence/policies
EQ_KLIBS=$T_KLIBS
EQ_STEPS=${EQ_STEPS:-25}
EQ_BATCH=${EQ_BATCH:-4}

eq_preconditions() {
    t_need "$EQ_MLP" "$EQ_CMP" "$EQ_SHIM" "$T_HOSTCUDA_DIR/libcuda.so.1" \
           "$EQ_BUILD/collectives/libash_cast_kernels_host.so"
    t_need_mpirun
    t_tmp
    EQ_TMP=$T_TMP
}

tap_case() { t_case "$@"; }    # the suite's name for t_case
eq_mpirun() { t_mpirun "$@"; }

# eq_ref OUT MLP_ARGS... : one process, no shim, hostcuda
eq_ref() {
    local out=$1; shift
    LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS \
        "$EQ_MLP" "$@" --save "$out" >"$out.log" 2>&1
}

# eq_ranks N BACKEND POLICY(or "") OUTPREFIX MLP_ARGS... : N ranks under the shim (EQ_SYNC=optional:
# ranks that synchronise nothing on purpose, see docs/reliability.md); rank r
# writes OUTPREFIX.r (parameters) and OUTPREFIX.r.log
eq_ranks() {
    local np=$1 backend=$2 policy=$3 prefix=$4; shift 4
    local libpath=$T_HOSTCUDA_DIR
    [ "$backend" = nccl ] && libpath=$T_HOSTNCCL_DIR:$libpath
    t_mpirun "$np" -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
        -x ACCELSHIM_POLICY="$policy" -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_SYNC="${EQ_SYNC:-}" \
        -x ACCELSHIM_LOG="${ACCELSHIM_LOG:-warn}" -x T_PRELOAD="$EQ_SHIM" -x T_RANK_LOG="$prefix.{rank}.log" \
        bash -c "$(t_rank_cmd)" "$EQ_MLP" "$@" --save "$prefix.{rank}"
}

# eq_show FILE: a failed case's evidence, as TAP comments
eq_show() { t_show "$@"; }

# eq_policy SRC WIRE OUT: a copy of policy SRC with every `wire:` set to WIRE
eq_policy() { sed "s/wire: same/wire: $2/" "$1" >"$3"; }
