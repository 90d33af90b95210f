#!/usr/bin/env bash
# tests/thirdparty/test_llmc_bf16_shim.sh — llm.c's train_gpt2.cu (bf16, -DNO_MULTI_GPU
# -DNO_USE_MPI), unmodified, data-parallel under accelshim on hostcuda with
# examples/llmc-bf16.yaml: `accelerate-run test --cpu -n 2 --batch 2` prints OK at the bf16
# tolerance (rtol 1e-2, from the policy's dtype). The reason that example syncs before
# global_norm_squared_kernel, shown: averaging the gradients at adamw_kernel3 instead (after each
# rank computed its own norm) makes the ranks clip with local norms, and `test` reports DIFFERS.
# The tiny model's gradient norm is ~7 (train_gpt2.c's gradients, step 1), above llm.c's clip
# threshold 1.0, so the clip scale differs between local and global norms; the 1-rank log's norm
# is checked to be above 1.0 so the demonstration cannot pass for want of clipping.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2cu" "$T_SHIM" "$T_LAUNCHER"
tp_need_cpu_cuda
tp_llmc_env
# Known failure (TODO): every bf16 kernel now loads, but in the first validation pass one block of
# fused_classifier_kernel5 never finishes under hostcuda's interpreter (on a GPU it takes
# microseconds): the launch fails with CUDA_ERROR_LAUNCH_TIMEOUT. A case failing with that line is
# an expected failure; the kernel timeout is short here so that it costs a minute, not the test's
# whole budget.
export HOSTCUDA_KERNEL_TIMEOUT_S=${HOSTCUDA_KERNEL_TIMEOUT_S:-45}
KNOWN="ran past HOSTCUDA_KERNEL_TIMEOUT_S"
WHY="a block of fused_classifier_kernel5 never finishes under hostcuda's PTX interpreter (kernel timeout)"
t_tmp
d=$T_TMP/tiny
tp_tiny "$d"
mkdir -p "$T_TMP/launcher"   # the launcher's own temporary files (and Open MPI's), kept apart
prog=("$TP_LLMC/train_gpt2cu" -e gpt2_124M_bf16.bin -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin "${TP_LLMC_ARGS[@]}")

run_test() {   # run_test POLICY LOG
    (cd "$d" && TMPDIR=$T_TMP/launcher timeout 850 "$T_LAUNCHER" test --cpu -n 2 --batch 2 --batch-arg '-b {batch}' --keep \
        --policy "$1" -- "${prog[@]}" -i 'split{world_size}/shard{rank}.bin') >"$2" 2>&1
}
run_test "$T_TOP/examples/llmc-bf16.yaml" "$T_TMP/test.log"; rc=$?
tp_case_known "$([ $rc -eq 0 ] && grep -q '^test: OK' "$T_TMP/test.log"; echo $?)" \
    "accelerate-run test --cpu -n 2 --batch 2 --policy examples/llmc-bf16.yaml: OK (rc $rc)" "$KNOWN" "$WHY" "$T_TMP/test.log"

cat >"$T_TMP/adamw.yaml" <<'YAML'
version: 1
gradients:               # too late on purpose: each rank has already computed its own norm
  - at: "*adamw_kernel3*"
    buffer: { arg: 2, region: allocation }
    dtype: bf16
YAML
run_test "$T_TMP/adamw.yaml" "$T_TMP/adamw.log"; rc=$?
tp_case_known "$([ $rc -ne 0 ] && grep -q 'DIFFERS.*gradients\[0\].*seq' "$T_TMP/adamw.log"; echo $?)" \
    "syncing at adamw_kernel3 clips with local norms: DIFFERS, the rule and seq named (rc $rc)" "$KNOWN" "$WHY" "$T_TMP/adamw.log"
kept=$(sed -n 's/^test: logs and records kept in //p' "$T_TMP/adamw.log" | head -n 1)
norm=$(sed -n -E 's/.*step +1\/[0-9]+ \| loss [^|]*\| norm +([0-9.]+).*/\1/p' "$kept/one.log" 2>/dev/null | head -n 1)
tp_case_known "$(awk -v n="${norm:-0}" 'BEGIN { exit !(n > 1.0) }'; echo $?)" \
    "the 1-rank run's gradient norm at step 1 is above the clip threshold 1.0 (norm ${norm:-not found})" \
    "$KNOWN" "$WHY" "$T_TMP/adamw.log"
t_done
