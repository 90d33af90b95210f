# shellcheck shell=bash
# shellcheck disable=SC2034  # TP_* paths are read by the tests that source this file
# tests/thirdparty/lib.sh — sourced by the tests of the third-party corpus (llm.c, cuda-samples):
# where the corpus is (ACCELSHIM_THIRDPARTY, default ../shared/thirdparty from the repository
# root) and what it was built into (build/thirdparty, tests/thirdparty/module.mk); the verdict
# when it is absent (one skip line; a failure when CI=true, where the corpus must be present);
# and whether the CPU path can run CUDA programs here (the CUDA runtime for hostcuda, and
# hostcuda running kernels from their PTX).
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

TP_SRC=${ACCELSHIM_THIRDPARTY:-../shared/thirdparty}
case $TP_SRC in /*) ;; *) TP_SRC=$T_TOP/$TP_SRC ;; esac
TP_BUILD=$T_BUILD/thirdparty
TP_LLMC=$TP_BUILD/llm.c
TP_SAMPLES=$TP_BUILD/cuda-samples
TP_TINY=$T_BUILD/bin/llmc-tiny
TP_HOSTCUDART_DIR=$T_BUILD/tests/hostcudart
TP_HOSTCUBLAS_DIR=$T_BUILD/tests/hostcublas
# the library path of a CUDA program run on the CPU: runtime, cuBLAS, driver, all host doubles
TP_CPU_LIBS=$TP_HOSTCUDART_DIR:$TP_HOSTCUBLAS_DIR:$T_HOSTCUDA_DIR

# tp_need_corpus: the corpus is there (else one skip line, or a failure under CI=true)
tp_need_corpus() {
    if [ ! -f "$TP_SRC/llm.c/train_gpt2.c" ] || [ ! -d "$TP_SRC/cuda-samples/Samples" ]; then
        [ "${CI:-}" = true ] && t_fail "CI: the third-party corpus is missing at $TP_SRC (ACCELSHIM_THIRDPARTY; scripts/fetch-thirdparty.sh)"
        t_skip "the third-party corpus is not at $TP_SRC (set ACCELSHIM_THIRDPARTY or run scripts/fetch-thirdparty.sh)"
    fi
}

# tp_need_cpu_cuda: a CUDA program can run here (else one skip line, naming what is missing):
# the CUDA runtime for hostcuda is built, and hostcuda runs a kernel it has only as PTX (the
# vectorAddDrv sample: it loads a fatbin nvcc made, no host implementation exists)
tp_need_cpu_cuda() {
    [ -e "$TP_HOSTCUDART_DIR/libcudart.so.13" ] ||
        t_skip "the CUDA runtime for hostcuda is not built ($TP_HOSTCUDART_DIR/libcudart.so.13)"
    t_need "$TP_SAMPLES/vectorAddDrv/vectorAddDrv"
    local log
    log=$(cd "$TP_SAMPLES/vectorAddDrv" && LD_LIBRARY_PATH=$TP_CPU_LIBS timeout 60 ./vectorAddDrv 2>&1)
    if grep -q "has no host implementation" <<<"$log"; then
        t_skip "hostcuda does not run kernels from their PTX yet (vectorAddDrv: $(grep -m1 'no host implementation' <<<"$log"))"
    fi
}
