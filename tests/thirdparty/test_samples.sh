#!/usr/bin/env bash
# tests/thirdparty/test_samples.sh — five unmodified cuda-samples, built by the project's recipe
# (nvcc defaults, -cudart shared), pass their own checks on hostcuda (exit 0 and their "Result =
# PASS" / "Test PASSED" line): the Driver API ones (vectorAddDrv, matrixMulDrv: kernels from the
# fatbin they load), simpleDrvRuntime (its own cuCtxCreate, then the runtime inside it) and the
# runtime ones (vectorAdd, matrixMul: kernels registered through nvcc's host stubs). Under the shim
# at world 1 (LD_PRELOAD, no policy) each one's stdout is identical to its run without it, but
# for the timing lines (matrixMul's Performance= ... msec, matrixMulDrv's Processing time:). matrixMul runs 300 timed
# iterations, so it gets 32 x 32 matrices (-wA=32 -hA=32 -wB=32 -hB=32, its own options).
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$T_SHIM" "$TP_SAMPLES/vectorAdd/vectorAdd" "$TP_SAMPLES/matrixMul/matrixMul" \
    "$TP_SAMPLES/matrixMulDrv/matrixMulDrv" "$TP_SAMPLES/simpleDrvRuntime/simpleDrvRuntime"
tp_need_cpu_cuda
t_tmp

# the samples' timing lines (matrixMul's "Performance= ... msec", matrixMulDrv's "Processing time: ... (ms)")
tp_strip_times() { grep -Ev '^Performance= .* msec|^Processing time: .* \(ms\)$' "$1"; }
run_sample() {   # run_sample NAME OUT [ARGS...]: in its directory (it finds its fatbin there)
    local name=$1 out=$2; shift 2
    (cd "$TP_SAMPLES/$name" && LD_LIBRARY_PATH=$TP_CPU_LIBS timeout 600 "./$name" "$@") >"$out" 2>"$out.err"
}
for s in vectorAddDrv matrixMulDrv simpleDrvRuntime vectorAdd "matrixMul -wA=32 -hA=32 -wB=32 -hB=32"; do
    read -ra w <<<"$s"; name=${w[0]}
    run_sample "$name" "$T_TMP/$name.out" "${w[@]:1}"; rc=$?
    tp_case "$([ $rc -eq 0 ] && grep -Eq '(Result = PASS|^Test PASSED)$' "$T_TMP/$name.out"; echo $?)" \
        "$name passes its own check on hostcuda (rc $rc)" "$T_TMP/$name.out" "$T_TMP/$name.out.err"
    LD_PRELOAD=$T_SHIM ACCELSHIM_LOG=debug run_sample "$name" "$T_TMP/$name.shim" "${w[@]:1}"; rc=$?
    same=$(cmp -s <(tp_strip_times "$T_TMP/$name.out") <(tp_strip_times "$T_TMP/$name.shim"); echo $?)
    st=$([ $rc -eq 0 ] && [ "$same" -eq 0 ] && grep -q "accelshim .* initialised" "$T_TMP/$name.shim.err"; echo $?)
    t_case "$st" "$name under the shim at world 1: same output (rc $rc)"
    if [ "$st" -ne 0 ]; then
        diff <(tp_strip_times "$T_TMP/$name.out") <(tp_strip_times "$T_TMP/$name.shim") | sed 's/^/# /' | head -20
        t_show "$T_TMP/$name.shim.err"
    fi
done
t_done
