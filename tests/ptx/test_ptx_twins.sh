#!/usr/bin/env bash
# test_ptx_twins.sh — proves every kernel of the project computes the same through hostcuda's PTX
# interpreter as through its host twin (issue 24.5): tests/hostcuda/test_kernels.cu,
# tests/trainers/mlp_kernels.cu and layers_kernels.cu, collectives/cast_kernels.cu,
# shim/sync/inspect_kernels.cu. ptx_twin_run runs each kernel on fixed inputs (several CTAs, edge-case
# floats for the casts) once with HOSTCUDA_EXEC=twin and once with HOSTCUDA_EXEC=ptx; each output
# must be bit-identical, or within the bound its record states (nvcc's fma contraction, CUDA's
# tanhf/powf). The PTX built with -fmad=false must match within the tighter bounds (library
# functions apart, bit-identical), and the PTX built for compute_75 (nvcc's default: bf16
# rounding in integer instructions) within the default bounds. Then the bundled trainer end to
# end: its parameters after 6 steps with the interpreter equal those with the twins within
# rtol 1e-5, atol 1e-7.
# HOSTCUDA_THREADS=1 must give the same bits as the default thread count.
# The interpreter's HOSTCUDA_EXEC_STATS=1 lines must name every kernel (a twin leaves none; with
# none at all, hostcuda has no interpreter and the test skips).
# Negative controls: the comparison fails when hc_saxpy's `a` is moved by 64 ulps, and the trainer
# comparison fails against a run with one step more. Skips (77) without an interpreter.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests/ptx
RUN=$B/ptx_twin_run
HC=$T_HOSTCUDA_DIR
PTX=("$HC/test_kernels.ptx" "$T_BUILD/tests/trainers/mlp_kernels.ptx" "$T_BUILD/tests/trainers/layers_kernels.ptx"
     "$T_BUILD/collectives/cast_kernels.ptx" "$T_BUILD/shim/sync/inspect_kernels.ptx")
NOFMA=("$B/nofma/test_kernels.ptx" "$B/nofma/mlp_kernels.ptx" "$B/nofma/layers_kernels.ptx"
       "$B/nofma/cast_kernels.ptx" "$B/nofma/inspect_kernels.ptx")
CC75=("$B/cc75/test_kernels.ptx" "$B/cc75/mlp_kernels.ptx" "$B/cc75/layers_kernels.ptx"
      "$B/cc75/cast_kernels.ptx" "$B/cc75/inspect_kernels.ptx")
LIBS=$HC/libtest_kernels_host.so:$T_BUILD/tests/trainers/liblayers_kernels_host.so:$T_KLIBS
IFS=: read -ra LIBV <<<"$LIBS"
t_need "$RUN" "$HC/libcuda.so.1" "$T_MLP" "$T_EQUIV" "${PTX[@]}" "${NOFMA[@]}" "${CC75[@]}" "${LIBV[@]}"
t_tmp

# run EXEC OUT PTX... [--perturb]: rc in $rc; the interpreter's per-kernel counts
# (HOSTCUDA_EXEC_STATS=1) land in OUT.log with the harness's output
run() {
    local exec=$1 out=$2; shift 2
    LD_LIBRARY_PATH=$HC HOSTCUDA_EXEC=$exec HOSTCUDA_EXEC_STATS=1 HOSTCUDA_KERNEL_LIBS=$LIBS timeout -k 5 300 \
        "$RUN" run "$out" "$@" >"$out.log" 2>&1
    rc=$?
}
# interpreted LOG: the kernels of the "kernels:" line that have no "hostcuda: exec NAME launches=N"
# line with N > 0 (empty: the interpreter ran every one; a twin would leave no such line)
interpreted() {
    local k missing=""
    # shellcheck disable=SC2013  # the names are words on one line
    for k in $(sed -n 's/^kernels://p' "$1"); do
        grep -Eq "^hostcuda: exec $k launches=[1-9]" "$1" || missing="$missing $k"
    done
    echo "$missing"
}
run twin "$T_TMP/twin" "${PTX[@]}"
[ "$rc" -eq 0 ] || { t_show "$T_TMP/twin.log"; t_fail "the twin run failed"; }
run ptx "$T_TMP/ptx" "${PTX[@]}"
[ "$rc" -eq 77 ] && t_skip "$(grep SKIP "$T_TMP/ptx.log" | head -1)"
[ "$rc" -eq 0 ] || { t_show "$T_TMP/ptx.log"; t_fail "the interpreter run failed (rc $rc)"; }
# without an interpreter hostcuda ignores HOSTCUDA_EXEC=ptx and runs the twins: nothing to compare
grep -q '^hostcuda: exec ' "$T_TMP/ptx.log" ||
    t_skip "hostcuda printed no HOSTCUDA_EXEC_STATS line: no PTX interpreter ran (HOSTCUDA_EXEC=ptx ignored)"
missing=$(interpreted "$T_TMP/ptx.log")
t_case $(( ${#missing} != 0 )) "HOSTCUDA_EXEC=ptx ran every kernel through the interpreter${missing:+ (not:$missing)}"

# compare A B [--nofma] -> the harness's TAP lines, renumbered into this test's plan
compare() {
    local line
    "$RUN" compare "$@" >"$T_TMP/cmp.tap" 2>&1
    while IFS= read -r line; do
        case $line in
            "ok "*) t_case 0 "${line#ok * - }" ;;
            "not ok "*) t_case 1 "${line#not ok * - }" ;;
            "#"*) echo "$line" ;;
        esac
    done <"$T_TMP/cmp.tap"
}
echo "# twin vs interpreter, the project's PTX"
compare "$T_TMP/twin" "$T_TMP/ptx"
run ptx "$T_TMP/nofma" "${NOFMA[@]}"
missing=$(interpreted "$T_TMP/nofma.log")
t_case $(( rc != 0 || ${#missing} != 0 )) "the interpreter runs every kernel built with -fmad=false${missing:+ (not:$missing)}"
if [ "$rc" -eq 0 ]; then
    echo "# twin vs interpreter, PTX built with -fmad=false"
    compare "$T_TMP/twin" "$T_TMP/nofma" --nofma
fi

run ptx "$T_TMP/cc75" "${CC75[@]}"
missing=$(interpreted "$T_TMP/cc75.log")
t_case $(( rc != 0 || ${#missing} != 0 )) \
    "the interpreter runs every kernel built for compute_75 (bf16 rounding in integer instructions)${missing:+ (not:$missing)}"
if [ "$rc" -eq 0 ]; then
    echo "# twin vs interpreter, PTX built for compute_75"
    compare "$T_TMP/twin" "$T_TMP/cc75"
fi

# the CTAs of a launch run on HOSTCUDA_THREADS host threads: one thread must give the same bits
HOSTCUDA_THREADS=1 run ptx "$T_TMP/ptx1" "${PTX[@]}"
"$RUN" compare "$T_TMP/ptx" "$T_TMP/ptx1" --exact >"$T_TMP/threads.tap" 2>&1
ok=$?
t_case $(( rc != 0 || ok != 0 )) "HOSTCUDA_THREADS=1 and the default give bit-identical results for every kernel"
[ "$ok" -eq 0 ] || grep -v '^ok' "$T_TMP/threads.tap" | head -10

run ptx "$T_TMP/perturbed" "${PTX[@]}" --perturb
"$RUN" compare "$T_TMP/twin" "$T_TMP/perturbed" >"$T_TMP/neg.tap" 2>&1
neg=$?
grep -q '^not ok .*hc_saxpy' "$T_TMP/neg.tap"
t_case $(( $? != 0 || neg != 1 )) "negative control: hc_saxpy with a moved by 64 ulps is reported as different"
[ "$neg" -eq 1 ] || t_show "$T_TMP/neg.tap"

# the bundled trainer end to end
mlp() {   # mlp EXEC OUT STEPS
    LD_LIBRARY_PATH=$HC HOSTCUDA_EXEC=$1 HOSTCUDA_KERNEL_LIBS=$T_KLIBS timeout -k 5 300 \
        "$T_MLP" --steps "$3" --batch 4 --save "$2" >"$2.log" 2>&1
}
mlp twin "$T_TMP/mlp.twin" 6 && HOSTCUDA_EXEC_STATS=1 mlp ptx "$T_TMP/mlp.ptx" 6
ok=$?
grep -Eq '^hostcuda: exec .*linear_forward.* launches=[1-9]' "$T_TMP/mlp.ptx.log"
t_case $? "the trainer's kernels ran through the interpreter (HOSTCUDA_EXEC_STATS lines)"
[ "$ok" -eq 0 ] && { "$T_EQUIV" --ref "$T_TMP/mlp.twin" --rtol 1e-5 --atol 1e-7 "$T_TMP/mlp.ptx" >"$T_TMP/mlp.cmp" 2>&1; ok=$?; }
t_case "$ok" "the trainer's parameters after 6 steps: interpreter = twins (rtol 1e-5, atol 1e-7)"
[ "$ok" -eq 0 ] || t_show "$T_TMP/mlp.cmp" "$T_TMP/mlp.ptx.log"
mlp ptx "$T_TMP/mlp.ptx7" 7
"$T_EQUIV" --ref "$T_TMP/mlp.twin" --rtol 1e-5 --atol 1e-7 "$T_TMP/mlp.ptx7" >"$T_TMP/mlp7.cmp" 2>&1
t_case $(( $? != 1 )) "negative control: 7 steps through the interpreter differ from 6 through the twins"
t_done
