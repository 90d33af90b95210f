#!/usr/bin/env bash
# test_suggest_llmc.sh — `accelerate-run suggest --cpu` on the REAL llm.c train_gpt2_fp32.cu
# (built by the project's recipe into build/thirdparty, run on hostcuda on the tiny GPT-2 of
# docs/llmc.md, 3 training steps): the policy it writes is examples/llmc-fp32.yaml's (gradients
# at adamw_kernel2, arg 1, count arg 4, f32; compared by compare_rules.py on the explanation of
# the same run) and `accelerate-run test --cpu -n 2 --batch 2 --rtol 1e-4` with it prints OK,
# with the settings of tests/thirdparty/test_llmc_fp32_shim.sh (lr 1e-3, the split shards).
# llm.c zeroes its optimizer state inside its first update, so the launch sequence starts
# repeating at the update; the step must still be read from the forward pass (the suggestion
# once synchronised the parameters at encoder_forward_kernel3 instead).
# Controls: the same comparison against examples/llmc-bf16.yaml fails; the policy that reading
# suggested (the parameters averaged at encoder_forward_kernel3, arg 2) is reported DIFFERS.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda or PTX execution; under
# CI=true a missing corpus fails. Run time: 69 s (scripts/run-tests.sh, the development machine:
# 2 cores shared with other work).
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/../thirdparty/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$T_SHIM" "$T_LAUNCHER"
tp_need_cpu_cuda
python3 -c 'import yaml' 2>/dev/null || t_skip "python3 has no yaml module (python3-yaml)"
tp_llmc_env
t_tmp
d=$T_TMP/tiny
tp_tiny "$d"
mkdir -p "$T_TMP/launcher"
cmp=$T_TOP/tests/explain/compare_rules.py
prog=("$TP_LLMC/train_gpt2fp32cu" -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin "${TP_LLMC_ARGS[@]}")

(cd "$d" && timeout 600 "$T_LAUNCHER" suggest --cpu -o "$T_TMP/fp32.yaml" -- "${prog[@]}" -b 4 -i split1/shard0.bin) \
    >"$T_TMP/suggest.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 0 ] && grep -q 'accelshim-policy check: OK' "$T_TMP/suggest.log"; echo $?)" \
    "suggest --cpu on llm.c fp32 writes a policy that checks (rc $rc)" "$T_TMP/suggest.log" "$T_TMP/fp32.yaml"
(cd "$d" && timeout 600 "$T_LAUNCHER" explain --cpu -- "${prog[@]}" -b 4 -i split1/shard0.bin) \
    >"$T_TMP/explain.txt" 2>&1; rc=$?
grep '^step:\|sync point:\|^rule:' "$T_TMP/explain.txt" | cut -c1-220 | sed 's/^/# /'
out=$(python3 "$cmp" "$T_TMP/explain.txt" "$T_TOP/examples/llmc-fp32.yaml" 2>&1); st=$?
printf '%s\n' "$out" | sed 's/^/# /'
tp_case "$([ $rc -eq 0 ] && [ $st -eq 0 ]; echo $?)" \
    "explain --cpu on llm.c fp32: its rules are examples/llmc-fp32.yaml's (adamw_kernel2 arg 1 count arg 4 f32)" "$T_TMP/explain.txt"
grep -q '^  - at: "\**adamw_kernel2\*"' "$T_TMP/fp32.yaml" && grep -q 'buffer: { arg: 1, count_arg: 4 }' "$T_TMP/fp32.yaml"
tp_case $? "the written policy syncs at adamw_kernel2 (arg 1, count arg 4)" "$T_TMP/fp32.yaml"
grep -q 'sync point: #[0-9]* adamw_kernel2 (arg1).*nothing but the update' "$T_TMP/explain.txt"
tp_case $? "the reading: nothing but the update reads the gradients (no clipping in train_gpt2_fp32.cu)" "$T_TMP/explain.txt"

(cd "$d" && TMPDIR=$T_TMP/launcher timeout 850 "$T_LAUNCHER" test --cpu -n 2 --batch 2 --batch-arg '-b {batch}' --rtol 1e-4 \
    --policy "$T_TMP/fp32.yaml" -- "${prog[@]}" -l 0.001 -i 'split{world_size}/shard{rank}.bin') \
    >"$T_TMP/test.log" 2>&1; rc=$?
grep '^test:' "$T_TMP/test.log" | sed 's/^/# /'
tp_case "$([ $rc -eq 0 ] && grep -q '^test: OK' "$T_TMP/test.log"; echo $?)" \
    "accelerate-run test --cpu -n 2 --batch 2 --rtol 1e-4 with the suggested policy: OK (rc $rc)" "$T_TMP/test.log"

# controls
out=$(python3 "$cmp" "$T_TMP/explain.txt" "$T_TOP/examples/llmc-bf16.yaml" 2>&1); st=$?
printf '%s\n' "$out" | sed 's/^/# control: /'
tp_case "$([ $st -ne 0 ]; echo $?)" "control: the same reading does not match examples/llmc-bf16.yaml"
cat >"$T_TMP/phase.yaml" <<'YAML'
version: 1
gradients:               # what the reading said when it read the step from the update on
  - at: "encoder_forward_kernel3*"
    buffer: { arg: 2, region: allocation }
    dtype: f32
YAML
(cd "$d" && TMPDIR=$T_TMP/launcher timeout 850 "$T_LAUNCHER" test --cpu -n 2 --batch 2 --batch-arg '-b {batch}' --rtol 1e-4 \
    --policy "$T_TMP/phase.yaml" -- "${prog[@]}" -l 0.001 -i 'split{world_size}/shard{rank}.bin') \
    >"$T_TMP/phase.log" 2>&1; rc=$?
grep '^test:' "$T_TMP/phase.log" | sed 's/^/# control: /'
tp_case "$([ $rc -ne 0 ] && grep -q '^test: DIFFERS' "$T_TMP/phase.log"; echo $?)" \
    "control: the parameters averaged at encoder_forward_kernel3 are reported DIFFERS (rc $rc)" "$T_TMP/phase.log"
t_done
