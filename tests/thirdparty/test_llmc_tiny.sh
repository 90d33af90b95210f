#!/usr/bin/env bash
# tests/thirdparty/test_llmc_tiny.sh — build/bin/llmc-tiny writes a tiny GPT-2 that llm.c's own
# CPU trainer (train_gpt2.c, unmodified, built by tests/thirdparty/module.mk) trains: run in the
# directory llmc-tiny wrote, its per-step losses ("step N: train loss X (took Y ms)") are finite,
# start at ln(V) (uniform predictions from the 0.02-scale initialisation) and fall. Also: the
# files are the documented formats and sizes; the same seed gives the same bytes and another seed
# other bytes (control); the data recipe holds under llm.c's own loader (the 1-rank batch split
# by rank == the shards, over an epoch boundary), and fails with the shards swapped (control);
# --split names the first position where a file breaks the recipe; bad arguments exit 2.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
t_need "$TP_TINY"
t_tmp
d=$T_TMP/tiny

"$TP_TINY" --world 2 --world 4 "$d" >"$T_TMP/tiny.log" 2>&1
tp_case $? "llmc-tiny writes the model, tokenizer, data and splits" "$T_TMP/tiny.log"

# headers: int32 words at the start of each file
words() { od -An -t d4 -N "$2" "$1" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }
h=$(words "$d/gpt2_124M.bin" 32)
t_case "$([ "$h" = "20240326 3 64 256 2 4 128 256" ]; echo $?)" "fp32 checkpoint header {magic, 3, maxT, V, L, NH, C, Vp} (got: $h)"
h=$(words "$d/gpt2_124M_bf16.bin" 8)
t_case "$([ "$h" = "20240326 5" ]; echo $?)" "bf16 checkpoint header version 5 (got: $h)"
# 437760 parameters for L 2, C 128, maxT 64, Vp 256: (Vp + maxT) C + L (12 C^2 + 13 C) + 2 C
np=$(( (256 + 64) * 128 + 2 * (12 * 128 * 128 + 13 * 128) + 2 * 128 ))
s32=$(stat -c %s "$d/gpt2_124M.bin"); s16=$(stat -c %s "$d/gpt2_124M_bf16.bin")
t_case "$([ "$s32" -eq $((1024 + 4 * np)) ] && [ "$s16" -eq $((1024 + 2 * np)) ]; echo $?)" \
    "checkpoint sizes: header + $np parameters (fp32 $s32, bf16 $s16 bytes)"
h=$(words "$d/gpt2_tokenizer.bin" 16)
t_case "$([ "$h" = "20240328 2 256 0" ]; echo $?)" "tokenizer header {magic, 2, V, eot} (got: $h)"
tr=$d/dev/data/tinyshakespeare/tiny_shakespeare_train.bin
h=$(words "$tr" 12)
t_case "$([ "$h" = "20240520 1 2049" ] && [ "$(stat -c %s "$tr")" -eq $((1024 + 2 * 2049)) ]; echo $?)" \
    "train tokens: header {magic, 1, 8 batches x 4 x 64 + 1} and that many uint16 (got: $h)"
t_case "$(cmp -s "$tr" "$d/split1/shard0.bin"; echo $?)" "split1/shard0.bin is the 1-rank file"

"$TP_TINY" --world 2 --world 4 "$T_TMP/again" >/dev/null 2>&1
"$TP_TINY" --seed 2 "$T_TMP/other" >/dev/null 2>&1
same=0; for f in gpt2_124M.bin gpt2_124M_bf16.bin split2/shard1.bin; do cmp -s "$d/$f" "$T_TMP/again/$f" || same=1; done
t_case $same "the same seed writes the same bytes"
t_case "$(! cmp -s "$d/gpt2_124M.bin" "$T_TMP/other/gpt2_124M.bin" && ! cmp -s "$tr" "$T_TMP/other/dev/data/tinyshakespeare/tiny_shakespeare_train.bin"; echo $?)" \
    "control: another seed writes other weights and other text"

"$TP_TINY" --layers 0 "$T_TMP/bad" >"$T_TMP/bad.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 2 ] && grep -q -- "--layers '0'" "$T_TMP/bad.log"; echo $?)" "--layers 0: exit 2 naming the option (rc $rc)" "$T_TMP/bad.log"
"$TP_TINY" --channels 100 --heads 3 "$T_TMP/bad" >"$T_TMP/bad.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 2 ] && grep -q "multiple of NH" "$T_TMP/bad.log"; echo $?)" "C not a multiple of NH: exit 2 (rc $rc)" "$T_TMP/bad.log"

# a file that breaks the recipe: rank 0's last target in batch 0 (token 128) made different
# from the first input of its next chunk (token 256, end-of-text)
cp "$tr" "$T_TMP/broken.bin"
printf 'A\0' | dd of="$T_TMP/broken.bin" bs=1 seek=$((1024 + 2 * 128)) conv=notrunc status=none
"$TP_TINY" --split "$T_TMP/broken.bin" --global-batch 4 --seq 64 --world 2 "$T_TMP/bs" >"$T_TMP/bs.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 1 ] && grep -q "token 128 " "$T_TMP/bs.log"; echo $?)" "--split on a file that breaks the recipe: exit 1 naming token 128 (rc $rc)" "$T_TMP/bs.log"
"$TP_TINY" --split "$tr" --global-batch 4 --seq 64 --world 2 "$T_TMP/good" >"$T_TMP/good.log" 2>&1
tp_case "$(cmp -s "$T_TMP/good/split2/shard1.bin" "$d/split2/shard1.bin"; echo $?)" "--split of the train file == the shards llmc-tiny wrote" "$T_TMP/good.log"

tp_need_corpus
t_need "$TP_BUILD/llmc_split_check" "$TP_LLMC/train_gpt2"

# llm.c's loader: 20 steps (2.5 epochs of 8 batches, so two reshuffles) at world 2 and 4
for w in 2 4; do
    shards=(); for ((r = 0; r < w; r++)); do shards+=("$d/split$w/shard$r.bin"); done
    "$TP_BUILD/llmc_split_check" "$d/split1/shard0.bin" 4 64 20 "${shards[@]}" >"$T_TMP/split$w.log" 2>&1
    tp_case $? "llm.c's loader: world $w shards == the 1-rank batches split by rank, 20 steps" "$T_TMP/split$w.log"
done
"$TP_BUILD/llmc_split_check" "$d/split1/shard0.bin" 4 64 20 "$d/split2/shard1.bin" "$d/split2/shard0.bin" >"$T_TMP/swap.log" 2>&1; rc=$?
t_case "$([ $rc -eq 1 ]; echo $?)" "control: shards swapped -> the loader check fails (rc $rc: $(head -c 120 "$T_TMP/swap.log"))"

# llm.c's CPU trainer on the files: 41 steps (its fixed main: B 4, T 64, lr 1e-4)
(cd "$d" && OMP_NUM_THREADS=2 timeout 600 "$TP_LLMC/train_gpt2") >"$T_TMP/cpu.log" 2>&1; rc=$?
tp_case $rc "train_gpt2.c runs on the tiny files (rc $rc)" "$T_TMP/cpu.log"
losses=$(sed -n 's/^step \([0-9]*\): train loss \([^ ]*\) (took .*/\2/p' "$T_TMP/cpu.log")
n=$(wc -w <<<"$losses")
verdict=$(awk -v n="$n" 'BEGIN { lnV = log(256) } { v[NR] = $1; if ($1 != $1 + 0 || $1 + 0 > 1e30 || $1 + 0 < 0) bad = 1 }
    END { if (n != 41 || bad) { print "bad"; exit }
          if (v[1] < lnV - 0.1 || v[1] > lnV + 0.1) { print "first " v[1] " not within 0.1 of ln 256 = " lnV; exit }
          if (v[41] > v[1] - 0.5) { print "last " v[41] " did not fall 0.5 below first " v[1]; exit }
          print "ok first " v[1] " last " v[41] }' <<<"$losses")
tp_case "$([[ $verdict == ok* ]]; echo $?)" "41 finite losses, the first at ln 256, the last 0.5 lower ($n losses: $verdict)" "$T_TMP/cpu.log"
t_done
