#!/usr/bin/env bash
# tests/thirdparty/test_llmc_eval_watch.sh — llm.c's train_gpt2_fp32.cu, unmodified, with its
# default validation (-m 20: 20 evaluation batches, forward pass and loss read each, at step 0
# before the first update) under examples/llmc-fp32.yaml on 2 ranks (accelerate-run --cpu): the
# step watch does not take the evaluation batches for training steps (they write no persistent
# state: the parameters are only read), so the job trains and exits 0 (before: exit 7 in the
# 3rd evaluation batch). 2 training steps, tiny GPT-2 (docs/llmc.md).
# Control: the same with a typo'd rule (adamw_kernl2) stops with exit 7 at the 2nd TRAINING step
# (the launch sequence repeated), after the validation loss was printed.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$T_SHIM" "$T_LAUNCHER"
tp_need_cpu_cuda
tp_llmc_env
t_tmp
d=$T_TMP/tiny
TP_STEPS=2 tp_tiny "$d" --val-batches 10   # 10 global val batches = 20 of batch 2 per rank
mkdir -p "$T_TMP/launcher"
# llm.c's tiny run without -m: its default val_max_steps 20
prog=("$TP_LLMC/train_gpt2fp32cu" -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin -t 64 -l 0.0001
      -v 100000 -s 100000 -g 1 -b 2 -i 'split2/shard{rank}.bin')

(cd "$d" && TMPDIR=$T_TMP/launcher timeout 600 "$T_LAUNCHER" --cpu -n 2 \
    --policy "$T_TOP/examples/llmc-fp32.yaml" -- "${prog[@]}") >"$T_TMP/right.log" 2>&1; rc=$?
nval=$(grep -c '^\[rank 0\] | val_num_batches  *| 20 ' "$T_TMP/right.log")
nstep=$(grep -c '^\[rank 0\] step  *[0-9]*/2: train loss' "$T_TMP/right.log")
tp_case "$([ $rc -eq 0 ] && [ "$nval" -eq 1 ] && [ "$nstep" -eq 2 ] && ! grep -q 'never fired' "$T_TMP/right.log"; echo $?)" \
    "2 ranks, 20 validation batches before step 0, examples/llmc-fp32.yaml: train 2 steps, exit 0 (rc $rc, val_num_batches 20: $nval, steps: $nstep)" "$T_TMP/right.log"

sed 's/adamw_kernel2/adamw_kernl2/' "$T_TOP/examples/llmc-fp32.yaml" >"$T_TMP/typo.yaml"
(cd "$d" && TMPDIR=$T_TMP/launcher timeout 600 "$T_LAUNCHER" --cpu -n 2 \
    --policy "$T_TMP/typo.yaml" -- "${prog[@]}") >"$T_TMP/typo.log" 2>&1; rc=$?
nstep=$(grep -c '^\[rank 0\] step  *[0-9]*/2: train loss' "$T_TMP/typo.log")
tp_case "$([ $rc -eq 7 ] && grep -q '^\[rank 0\] val loss' "$T_TMP/typo.log" && [ "$nstep" -eq 2 ] &&
           grep -q "rank 0: no gradient rule of .* fired by the time the program's launch sequence repeated" "$T_TMP/typo.log"; echo $?)" \
    "control: a typo'd rule stops at the 2nd training step, exit 7 (rc $rc, steps: $nstep)" "$T_TMP/typo.log"
t_done
