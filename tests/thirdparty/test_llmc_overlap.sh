#!/usr/bin/env bash
# tests/thirdparty/test_llmc_overlap.sh — examples/llmc-fp32-overlap.yaml (overlap: auto: the
# shim learns which launches finish each region of llm.c's gradient buffer and all-reduces it
# while the backward pass goes on) on train_gpt2_fp32.cu, unmodified, 2 ranks on hostcuda: the
# records are bit-identical to examples/llmc-fp32.yaml's (overlap off), and rank 0's exit report
# says regions really went early without falling back. The same for explicit ready points
# (tests/thirdparty/llmc-tiny-ready.yaml: examples/llmc-fp32-ready.yaml's, for the tiny model). HOSTCUDA_THREADS=1 (float atomics in
# encoder_backward_kernel: test_llmc_record.sh).
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$T_SHIM" "$T_LAUNCHER" "$T_BUILD/bin/accelshim-compare"
tp_need_cpu_cuda
tp_llmc_env
export HOSTCUDA_THREADS=1
T_DIR=$(cd "$(dirname "$0")" && pwd)
t_tmp
d=$T_TMP/tiny
tp_tiny "$d"

run() {   # run NAME POLICY
    (cd "$d" && ACCELSHIM_LOG=info timeout 400 "$T_LAUNCHER" --cpu -n 2 --policy "$2" --record "$T_TMP/$1" \
        -- "$TP_LLMC/train_gpt2fp32cu" -b 2 -i 'split2/shard{rank}.bin' -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
        "${TP_LLMC_ARGS[@]}") >"$T_TMP/$1.log" 2>&1
}
run off "$T_TOP/examples/llmc-fp32.yaml"; rc=$?
tp_case $rc "overlap off: 2 ranks, --record (rc $rc)" "$T_TMP/off.log"
run on "$T_TOP/examples/llmc-fp32-overlap.yaml"; rc=$?
tp_case $rc "overlap: auto: 2 ranks, --record (rc $rc)" "$T_TMP/on.log"
"$T_BUILD/bin/accelshim-compare" "$T_TMP/off" "$T_TMP/on" --bitwise >"$T_TMP/cmp.txt" 2>&1; rc=$?
tp_case "$([ $rc -eq 0 ] && grep -q '^same' "$T_TMP/cmp.txt"; echo $?)" "overlap on == off, bit for bit (rc $rc: $(head -c 200 "$T_TMP/cmp.txt"))"
early() {   # early LOG: rank 0's overlap report says regions went early, no fallback
    local line
    line=$(grep -m1 'report: overlap:' "$1")
    echo "${line:-no overlap report}"
    [ -n "$line" ] && [[ $line != *": 0 region(s)"* ]] && [[ $line != *"fell back"* ]]
}
line=$(early "$T_TMP/on.log"); ok=$?
tp_case "$ok" "overlap: auto: regions went early ($line)" "$T_TMP/on.log"
run ready "$T_DIR/llmc-tiny-ready.yaml"; rc=$?
tp_case $rc "explicit ready points: 2 ranks, --record (rc $rc)" "$T_TMP/ready.log"
"$T_BUILD/bin/accelshim-compare" "$T_TMP/off" "$T_TMP/ready" --bitwise >"$T_TMP/cmp2.txt" 2>&1; rc=$?
tp_case "$([ $rc -eq 0 ] && grep -q '^same' "$T_TMP/cmp2.txt"; echo $?)" "ready points == off, bit for bit (rc $rc: $(head -c 200 "$T_TMP/cmp2.txt"))"
line=$(early "$T_TMP/ready.log"); ok=$?
tp_case "$ok" "ready points: regions went early ($line)" "$T_TMP/ready.log"
t_done
