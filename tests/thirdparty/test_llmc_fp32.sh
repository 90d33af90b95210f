#!/usr/bin/env bash
# tests/thirdparty/test_llmc_fp32.sh — llm.c's train_gpt2_fp32.cu, unmodified, built by the
# project's recipe (-cudart shared), trains the tiny GPT-2 on hostcuda (the CUDA runtime, cuBLAS
# and the driver on the host; kernels run from their PTX) and its per-step losses match llm.c's
# own CPU trainer train_gpt2.c on the same files (B 4, T 64, lr 1e-4; TF32 off:
# NVIDIA_TF32_OVERRIDE=0) within 5e-4 x the step number. The tolerance (docs/llmc.md): both
# compute the same fp32 function in different orders (and with --use_fast_math's exp); the
# forward's worst-case rounding bound on the logits is ~2800 u (u = 2^-24) relative, <= 2e-4 on
# the loss, which 5e-4 covers at step 1; each AdamW update (lr 1e-4) may add as much again.
# Control: the same check with the CPU losses one step off fails (the loss falls ~0.1 a step).
# Also shown: with hostcuda's default poison the loss is NaN (tests/thirdparty/lib.sh: llm.c
# reads attention scores it never wrote; HOSTCUDA_POISON=0 for the runs above).
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2" "$TP_LLMC/train_gpt2fp32cu"
tp_need_cpu_cuda
tp_llmc_env
t_tmp
d=$T_TMP/tiny
tp_tiny "$d"

(cd "$d" && OMP_NUM_THREADS=2 timeout 600 "$TP_LLMC/train_gpt2") >"$T_TMP/cpu.log" 2>&1
tp_case $? "train_gpt2.c (the CPU reference) runs" "$T_TMP/cpu.log"
tp_losses "$T_TMP/cpu.log" >"$T_TMP/cpu.loss"

(cd "$d" && NVIDIA_TF32_OVERRIDE=0 LD_LIBRARY_PATH=$TP_CPU_LIBS timeout 800 "$TP_LLMC/train_gpt2fp32cu" \
    -i dev/data/tinyshakespeare/tiny_shakespeare_train.bin -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
    -b 4 "${TP_LLMC_ARGS[@]}") >"$T_TMP/cu.log" 2>&1; rc=$?
tp_case $rc "train_gpt2_fp32.cu runs $TP_STEPS steps on hostcuda (rc $rc)" "$T_TMP/cu.log"
tp_losses "$T_TMP/cu.log" >"$T_TMP/cu.loss"

tp_compare_losses "$T_TMP/cu.loss" "$T_TMP/cpu.loss" 5e-4 "$TP_STEPS"
t_case $? "train_gpt2_fp32.cu on hostcuda == train_gpt2.c within 5e-4 x step, $TP_STEPS steps"
tail -n +2 "$T_TMP/cpu.loss" >"$T_TMP/cpu.next"
tp_compare_losses "$T_TMP/cu.loss" "$T_TMP/cpu.next" 5e-4 "$TP_STEPS" >"$T_TMP/control.log"; rc=$?
t_case "$([ $rc -ne 0 ]; echo $?)" "control: against the CPU losses one step later the same check fails"

# hostcuda's poison (fresh allocations NaN, its default) finds the read of never-written memory
(cd "$d" && HOSTCUDA_POISON=1 NVIDIA_TF32_OVERRIDE=0 LD_LIBRARY_PATH=$TP_CPU_LIBS timeout 800 "$TP_LLMC/train_gpt2fp32cu" \
    -i dev/data/tinyshakespeare/tiny_shakespeare_train.bin -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
    -b 4 "${TP_LLMC_ARGS[@]}") >"$T_TMP/poison.log" 2>&1
first=$(tp_losses "$T_TMP/poison.log" | head -n 1)
tp_case "$([[ ${first:-} == *nan* ]]; echo $?)" \
    "with HOSTCUDA_POISON=1 the loss is NaN (${first:-none}): llm.c's att x v reads the unwritten upper triangle" "$T_TMP/poison.log"
t_done
