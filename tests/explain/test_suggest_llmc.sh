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
# llm.c bf16 (train_gpt2.cu, V = 8192 tiny model): the suggestion's gradients rule is
# examples/llmc-bf16.yaml's (before global_norm_squared_kernel, arg 1, count arg 2, bf16: the norm
# reads the gradients before the update), the parameters are broadcast at encoder_forward_kernel3,
# and `accelerate-run test --cpu -n 2 --batch 2` with it prints OK (at bf16's rtol 1e-2); the
# reading once began at step 0's last adamw_kernel3 and took the gradients for the parameters.
# Controls: the same comparison against examples/llmc-bf16.yaml fails (and the bf16 reading's
# against examples/llmc-fp32.yaml); the policy the fp32 reading once
# suggested (the parameters averaged at encoder_forward_kernel3, arg 2) is reported DIFFERS.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda or PTX execution; under
# CI=true a missing corpus fails. Run time: 58 s (scripts/run-tests.sh, the development machine:
# 2 cores shared with other work).
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/../thirdparty/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$TP_LLMC/train_gpt2cu" "$T_SHIM" "$T_LAUNCHER"
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

# llm.c bf16 (train_gpt2.cu) on the tiny model with V = Vp = 8192 (its fused classifier needs
# V >= 8184, docs/llmc.md), the settings of tests/thirdparty/test_llmc_bf16_shim.sh
db=$T_TMP/tiny16
tp_tiny "$db" --vocab 8192 --padded-vocab 8192
prog16=("$TP_LLMC/train_gpt2cu" -e gpt2_124M_bf16.bin -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin "${TP_LLMC_ARGS[@]}")
(cd "$db" && timeout 600 "$T_LAUNCHER" suggest --cpu -o "$T_TMP/bf16.yaml" -- "${prog16[@]}" -b 4 -i split1/shard0.bin) \
    >"$T_TMP/suggest16.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 0 ] && grep -q 'accelshim-policy check: OK' "$T_TMP/suggest16.log"; echo $?)" \
    "suggest --cpu on llm.c bf16 writes a policy that checks (rc $rc)" "$T_TMP/suggest16.log" "$T_TMP/bf16.yaml"
(cd "$db" && timeout 600 "$T_LAUNCHER" explain --cpu -- "${prog16[@]}" -b 4 -i split1/shard0.bin) \
    >"$T_TMP/explain16.txt" 2>&1; rc=$?
grep '^step:\|^  #0 \|sync point:\|^rule:' "$T_TMP/explain16.txt" | cut -c1-220 | sed 's/^/# /'
out=$(python3 "$cmp" "$T_TMP/explain16.txt" "$T_TOP/examples/llmc-bf16.yaml" 2>&1); st=$?
printf '%s\n' "$out" | sed 's/^/# /'
tp_case "$([ $rc -eq 0 ] && [ $st -eq 0 ]; echo $?)" \
    "explain --cpu on llm.c bf16: its gradients rule is examples/llmc-bf16.yaml's (global_norm_squared_kernel arg 1 count arg 2 bf16)" \
    "$T_TMP/explain16.txt"
grep -q '^  #0 encoder_forward_kernel3' "$T_TMP/explain16.txt"
tp_case $? "llm.c bf16: the step is read from encoder_forward_kernel3 (the launches start repeating at step 0's update)" \
    "$T_TMP/explain16.txt"
grep -q 'sync point: #[0-9]* global_norm_squared_kernel<__nv_bfloat16> (arg1).*it is not the update' "$T_TMP/explain16.txt" &&
    grep -q '^  - at: "\*global_norm_squared_kernel\*"' "$T_TMP/bf16.yaml" && grep -q 'buffer: { arg: 1, count_arg: 2 }' "$T_TMP/bf16.yaml" &&
    ! grep -q '^  - at: "\*adamw_kernel3\*"' "$T_TMP/bf16.yaml"
tp_case $? "the written bf16 policy syncs before global_norm_squared_kernel (arg 1, count arg 2), not at adamw_kernel3" \
    "$T_TMP/explain16.txt" "$T_TMP/bf16.yaml"
grep -q '^  - at: "encoder_forward_kernel3\*"' "$T_TMP/bf16.yaml" && grep -q 'buffer: { arg: 2, region: allocation }' "$T_TMP/bf16.yaml"
tp_case $? "the written bf16 policy broadcasts the parameters at encoder_forward_kernel3 arg 2" "$T_TMP/bf16.yaml"
(cd "$db" && TMPDIR=$T_TMP/launcher timeout 850 "$T_LAUNCHER" test --cpu -n 2 --batch 2 --batch-arg '-b {batch}' \
    --policy "$T_TMP/bf16.yaml" -- "${prog16[@]}" -i 'split{world_size}/shard{rank}.bin') >"$T_TMP/test16.log" 2>&1; rc=$?
grep '^test:' "$T_TMP/test16.log" | sed 's/^/# /'
tp_case "$([ $rc -eq 0 ] && grep -q '^test: OK' "$T_TMP/test16.log"; echo $?)" \
    "accelerate-run test --cpu -n 2 --batch 2 with the suggested bf16 policy: OK (rc $rc)" "$T_TMP/test16.log"

# controls
out=$(python3 "$cmp" "$T_TMP/explain.txt" "$T_TOP/examples/llmc-bf16.yaml" 2>&1); st=$?
printf '%s\n' "$out" | sed 's/^/# control: /'
tp_case "$([ $st -ne 0 ]; echo $?)" "control: the same reading does not match examples/llmc-bf16.yaml"
out=$(python3 "$cmp" "$T_TMP/explain16.txt" "$T_TOP/examples/llmc-fp32.yaml" 2>&1); st=$?
printf '%s\n' "$out" | sed 's/^/# control: /'
tp_case "$([ $st -ne 0 ]; echo $?)" "control: the bf16 reading does not match examples/llmc-fp32.yaml"
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
