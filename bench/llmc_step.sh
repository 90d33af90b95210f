#!/usr/bin/env bash
# llmc_step.sh — seconds per training step of llm.c on the tiny GPT-2 (build/bin/llmc-tiny: L 2,
# C 128, NH 4, V 256; B 4, T 64), side by side in one run on the same files and machine:
# llm.c's CPU trainer train_gpt2.c (gcc -O3 -fopenmp, OMP_NUM_THREADS = the cores) vs its
# train_gpt2_fp32.cu, unmodified, on hostcuda (the CUDA runtime, cuBLAS and the driver on the
# host, kernels from their PTX; TF32 off, HOSTCUDA_SMS 4, HOSTCUDA_POISON 0: tests/thirdparty/lib.sh). Each trainer times its own steps
# (train_gpt2.c "took X ms", train_gpt2_fp32.cu "X ms" after a device synchronize), so start-up
# is not counted; the figure is the median over steps 2..STEPS. Ratio hostcuda / CPU (target:
# within 10x). Prints; never fails on a figure. Skips (one line) without the corpus, the CUDA
# runtime for hostcuda, or PTX execution. Env: STEPS (6).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/thirdparty/lib.sh
. "$BENCH_TOP/tests/thirdparty/lib.sh"
tp_need_corpus
bench_skip_unless_built "$TP_TINY" "$TP_LLMC/train_gpt2" "$TP_LLMC/train_gpt2fp32cu"
tp_need_cpu_cuda
tp_llmc_env
STEPS=${STEPS:-6}
CORES=$(nproc)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
d=$TMP/tiny
"$TP_TINY" --train-batches "$STEPS" --val-batches 1 "$d" >/dev/null 2>&1 || { echo "llmc-tiny failed"; exit 1; }

# median_ms LOG SED_EXPR: the median of the per-step milliseconds, steps 2.. (step 1 warms caches)
median_ms() {
    local v
    mapfile -t v < <(sed -n -E "$2" "$1" | tail -n +2)
    [ ${#v[@]} -gt 0 ] && bench_median "${v[@]}" || echo nan
}
(cd "$d" && OMP_NUM_THREADS=$CORES "$TP_LLMC/train_gpt2") >"$TMP/cpu.log" 2>&1
cpu=$(median_ms "$TMP/cpu.log" 's/^step [0-9]+: train loss [^ ]+ \(took ([0-9.]+) ms\).*/\1/p')
(cd "$d" && NVIDIA_TF32_OVERRIDE=0 LD_LIBRARY_PATH=$TP_CPU_LIBS "$TP_LLMC/train_gpt2fp32cu" \
    -i dev/data/tinyshakespeare/tiny_shakespeare_train.bin -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
    -b 4 "${TP_LLMC_ARGS[@]}") >"$TMP/cu.log" 2>&1
cu=$(median_ms "$TMP/cu.log" 's/^step +[0-9]+\/[0-9]+: train loss [^ ]+ \(([0-9.]+) ms.*/\1/p')

echo "llm.c, tiny GPT-2 (L 2, C 128, NH 4, V 256), B 4, T 64; median of steps 2..$STEPS; $CORES cores"
printf "%-52s %12s\n" trainer "s/step"
printf "%-52s %12s\n" "train_gpt2.c (CPU, gcc -O3 -fopenmp, $CORES threads)" \
    "$(awk -v m="$cpu" 'BEGIN { if (m == m + 0) printf "%.4f", m / 1000; else print "nan" }')"
printf "%-52s %12s\n" "train_gpt2_fp32.cu on hostcuda (PTX interpreted)" \
    "$(awk -v m="$cu" 'BEGIN { if (m == m + 0) printf "%.4f", m / 1000; else print "nan" }')"
ratio=$(awk -v a="$cu" -v b="$cpu" 'BEGIN { if (a == a + 0 && b == b + 0 && b > 0) printf "%.2f", a / b; else print "nan" }')
echo "hostcuda / CPU: ${ratio}x (target: within 10x)"
[ "$cu" = nan ] && { echo "train_gpt2_fp32.cu printed no step times; its last lines:"; tail -n 5 "$TMP/cu.log"; }
bench_raw cpu_s_per_step "$(awk -v m="$cpu" 'BEGIN { if (m == m + 0) printf "%.6f", m / 1000; else print "nan" }')"
bench_raw hostcuda_s_per_step "$(awk -v m="$cu" 'BEGIN { if (m == m + 0) printf "%.6f", m / 1000; else print "nan" }')"
bench_raw steps "$STEPS"
bench_raw cores "$CORES"
bench_ratio hostcuda_over_cpu "$ratio"
bench_note "train_gpt2_fp32.cu on hostcuda vs llm.c's own CPU trainer, same tiny model and data, same run"
exit 0
