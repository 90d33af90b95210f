#!/usr/bin/env bash
# tests/thirdparty/test_llmc_overlap.sh — overlapped all-reduce on llm.c's train_gpt2_fp32.cu,
# unmodified, 2 ranks on hostcuda, 5 steps: with explicit ready points
# (tests/thirdparty/llmc-tiny-ready.yaml: examples/llmc-fp32-ready.yaml's, for the tiny model)
# and with examples/llmc-fp32-overlap.yaml (overlap: auto, ready points learned) every rank prints
# the same losses (each step's training loss and the validation loss after the last update, all
# digits llm.c prints) as with examples/llmc-fp32.yaml (overlap off), and rank 0's exit report says
# regions really went early without falling back. The losses stand in for the parameters:
# --record would turn overlap off (it reads each buffer before its collective). Control: the
# same comparison between rank 0 and rank 1 (other shards, other training losses) fails.
# HOSTCUDA_THREADS=1: llm.c's encoder_backward_kernel adds with float atomics, whose order (so
# the last bits) depends on how CTAs are scheduled.
# Skips (one line) without the corpus, the CUDA runtime for hostcuda, or PTX execution.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$TP_TINY" "$TP_LLMC/train_gpt2fp32cu" "$T_SHIM" "$T_LAUNCHER"
tp_need_cpu_cuda
tp_llmc_env
export HOSTCUDA_THREADS=1
T_DIR=$(cd "$(dirname "$0")" && pwd)
t_tmp
d=$T_TMP/tiny
TP_STEPS=5 tp_tiny "$d"

run() {   # run NAME POLICY
    (cd "$d" && ACCELSHIM_LOG=info timeout 280 "$T_LAUNCHER" --cpu -n 2 --policy "$2" \
        -- "$TP_LLMC/train_gpt2fp32cu" -b 2 -i 'split2/shard{rank}.bin' -j dev/data/tinyshakespeare/tiny_shakespeare_val.bin \
        "${TP_LLMC_ARGS[@]}") >"$T_TMP/$1.log" 2>&1
}
losses() {   # losses LOG RANK: that rank's loss lines, timings left out
    sed -n -E "s/^\[rank $2\] (step +[0-9]+\/[0-9]+: train loss [^ ]+|val loss .*).*/\1/p" "$1"
}
early() {   # early LOG: rank 0's overlap report, if regions went early and nothing fell back
    local line
    line=$(grep -m1 '^\[rank 0\].*report: overlap:' "$1")
    echo "${line:-no overlap report}"
    [ -n "$line" ] && [[ $line != *": 0 region(s)"* ]] && [[ $line != *"fell back"* ]]
}
run off "$T_TOP/examples/llmc-fp32.yaml"; rc=$?
tp_case $rc "overlap off: 2 ranks, 5 steps (rc $rc)" "$T_TMP/off.log"
n=$(losses "$T_TMP/off.log" 0 | grep -c 'train loss')
t_case "$([ "$n" -eq 5 ]; echo $?)" "overlap off: 5 training losses printed by rank 0 (got $n)"
diff <(losses "$T_TMP/off.log" 0) <(losses "$T_TMP/off.log" 1) >/dev/null; rc=$?
t_case "$([ $rc -eq 1 ]; echo $?)" "control: the comparison sees a difference (rank 0's losses vs rank 1's: other shards)"
for c in "ready $T_DIR/llmc-tiny-ready.yaml" "auto $T_TOP/examples/llmc-fp32-overlap.yaml"; do
    read -r name pol <<<"$c"
    run "$name" "$pol"; rc=$?
    tp_case $rc "$name: 2 ranks, 5 steps (rc $rc)" "$T_TMP/$name.log"
    same=0
    for r in 0 1; do
        if ! diff <(losses "$T_TMP/off.log" $r) <(losses "$T_TMP/$name.log" $r) >"$T_TMP/$name.diff$r"; then same=1; fi
    done
    tp_case $same "$name: both ranks print the same losses as overlap off" "$T_TMP/${name}.diff0" "$T_TMP/${name}.diff1"
    line=$(early "$T_TMP/$name.log"); ok=$?
    tp_case "$ok" "$name: regions went early ($line)" "$T_TMP/$name.log"
done
t_done
