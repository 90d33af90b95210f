#!/usr/bin/env bash
# tests/thirdparty/test_llmc_record.sh — the regression flow on llm.c's train_gpt2_fp32.cu,
# unmodified, 2 ranks under accelshim on hostcuda (examples/llmc-fp32.yaml): two runs with
# --record compare `same` with accelshim-compare (bitwise); a run with another learning rate
# (-l 0.0002) is reported as differing, first at gradients[0] seq 1 (the first step's gradients
# do not depend on the rate; the second's do). HOSTCUDA_THREADS=1: llm.c's encoder_backward_kernel
# adds with float atomics, whose order (so the last bits) depends on how CTAs are scheduled.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$T_SHIM" "$T_LAUNCHER" "$T_BUILD/bin/accelshim-compare"
tp_need_cpu_cuda
tp_llmc_env
export HOSTCUDA_THREADS=1
t_tmp
d=$T_TMP/tiny
tp_tiny "$d"

run() {   # run NAME LR: 2 ranks, recorded into $T_TMP/NAME
    (cd "$d" && timeout 400 "$T_LAUNCHER" --cpu -n 2 --policy "$T_TOP/examples/llmc-fp32.yaml" --record "$T_TMP/$1" \
        -- "$TP_LLMC/train_gpt2fp32cu" -b 2 -i 'split2/shard{rank}.bin' -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
        "${TP_LLMC_ARGS[@]}" -l "$2") >"$T_TMP/$1.log" 2>&1
}
run a 0.0001; rc=$?
tp_case $rc "run A: 2 ranks, --record (rc $rc)" "$T_TMP/a.log"
run b 0.0001; rc=$?
tp_case $rc "run B: the same again (rc $rc)" "$T_TMP/b.log"
"$T_BUILD/bin/accelshim-compare" "$T_TMP/a" "$T_TMP/b" >"$T_TMP/ab.txt" 2>&1; rc=$?
tp_case "$([ $rc -eq 0 ] && grep -q '^same' "$T_TMP/ab.txt"; echo $?)" "A vs B: same (rc $rc: $(head -c 200 "$T_TMP/ab.txt"))"
run c 0.0002; rc=$?
tp_case $rc "run C: learning rate 0.0002 (rc $rc)" "$T_TMP/c.log"
"$T_BUILD/bin/accelshim-compare" "$T_TMP/a" "$T_TMP/c" >"$T_TMP/ac.txt" 2>&1; rc=$?
tp_case "$([ $rc -eq 1 ] && grep -q '^differs: gradients\[0\] seq 1 ' "$T_TMP/ac.txt"; echo $?)" \
    "A vs C: the first divergence named, gradients[0] seq 1 (rc $rc: $(head -c 200 "$T_TMP/ac.txt"))"
t_done
