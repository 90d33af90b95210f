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

# The tiny run every llm.c test uses (docs/llmc.md): TP_STEPS training batches of 4 x 64 tokens,
# one validation batch, no text generation (-g 1: llm.c's generation starts from GPT-2's
# end-of-text id 50256, outside the tiny vocabulary), llm.c's CPU trainer's learning rate.
TP_STEPS=${TP_LLMC_STEPS:-3}
TP_LLMC_ARGS=(-t 64 -l 0.0001 -v 100000 -m 1 -s 100000 -g 1)
# tp_llmc_env: hostcuda's settings for llm.c. HOSTCUDA_SMS: llm.c sizes some grids by SMs x
# threads per SM; a few SMs keep them small here. HOSTCUDA_POISON=0: train_gpt2_fp32.cu reads
# memory it never wrote (softmax_forward_kernel5 writes only t2 <= t of each attention row, and
# the att x v GEMM reads whole rows, multiplying the rest by v), which hostcuda's default poison
# (NaN) turns into a NaN loss; a GPU's fresh allocations are zeros in practice, so it trains there.
tp_llmc_env() {
    export HOSTCUDA_SMS=${HOSTCUDA_SMS:-4} HOSTCUDA_POISON=0
}

# tp_tiny DIR [ARG...]: the tiny model, data and 2-way split in DIR (ARGs: more llmc-tiny options)
tp_tiny() {
    local dir=$1
    shift
    "$TP_TINY" --train-batches "$TP_STEPS" --val-batches 1 --world 2 "$@" "$dir" >"$dir.log" 2>&1 ||
        t_fail "llmc-tiny $dir: $(tail -n 3 "$dir.log")"
}

# tp_losses LOG: the per-step training losses a trainer printed, one a line, in step order:
# train_gpt2.c "step N: train loss X (took ...)", train_gpt2_fp32.cu "step N/M: train loss X (...)",
# train_gpt2.cu "step N/M | loss X (...)" (each with the launcher's "[rank R] " prefix or not)
tp_losses() {
    sed -n -E 's/^(\[rank [0-9]+\] )?step +[0-9]+(\/[0-9]+)?(: train loss| \| loss) +([-+0-9.eEnaif]+).*/\4/p' "$1"
}

# tp_compare_losses A B TOL_PER_STEP N: the first N losses of files A and B (one a line) agree
# within s * TOL_PER_STEP at step s (1-based); prints each pair; status 0 / 1
tp_compare_losses() {
    paste "$1" "$2" | head -n "$4" | awk -v tol="$3" -v n="$4" '
        { s = NR; d = $1 - $2; if (d < 0) d = -d
          if ($1 != $1 + 0 || $2 != $2 + 0) bad = 1
          ok = (d <= s * tol) && !bad
          printf "# step %d: %s vs %s, |diff| %.3g, tolerance %.3g: %s\n", s, $1, $2, d, s * tol, ok ? "ok" : "EXCEEDS"
          if (!ok) fail = 1 }
        END { if (NR < n) { printf "# only %d of %d steps\n", NR, n; exit 1 } exit fail }'
}

# tp_case STATUS DESCRIPTION [FILE...]: a TAP case; when it failed, each FILE's last lines as evidence
tp_case() {
    local st=$1 desc=$2 f
    shift 2
    t_case "$st" "$desc"
    [ "$st" -eq 0 ] && return 0
    for f in "$@"; do [ -f "$f" ] && { echo "# --- $f"; t_show "$f"; }; done
    return 0
}
