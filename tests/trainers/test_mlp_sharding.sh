#!/usr/bin/env bash
# Property: --shard-rank/--shard-count shard the global sample stream as documented. Step t's
# global batch is samples [t*N*B, (t+1)*N*B); rank R reads [t*N*B + R*B, t*N*B + (R+1)*B).
# Checked from --dump-samples, not assumed: for N=2,B=4 (and N=3,B=3) the ranks' lists do not
# overlap, their union is exactly the single-process list for B=8 (B=9), and interleaving the
# ranks' per-step slices in rank order reproduces that list line for line. Also: the samples
# behind the indices are the same (step-0 loss of B=8 = mean of the ranks' step-0 losses), and
# gradients are batch MEANS (after one sgd step the mean of the ranks' parameters equals the
# single process's, to float rounding) — the two facts data-parallel equivalence rests on.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: --shard-rank/--shard-count read disjoint slices whose union is the single-process stream; gradients are batch means"
fail=0
steps=5
for cfg in "2 4" "3 3"; do
    read -r N B <<<"$cfg"
    G=$((N * B))
    single=$MLP_TMP/single
    mlp_run "$single" --steps $steps --batch $G --seed 11 --dump-samples "$single.idx"
    seq 0 $((steps * G - 1)) >"$MLP_TMP/expected.idx"
    if ! cmp -s "$single.idx" "$MLP_TMP/expected.idx"; then
        echo "FAIL: single process (batch $G) did not read samples 0..$((steps * G - 1)) in order"
        diff "$single.idx" "$MLP_TMP/expected.idx" | head; fail=1
    fi
    : >"$MLP_TMP/all.idx"
    for ((r = 0; r < N; r++)); do
        mlp_run "$MLP_TMP/r$r" --steps $steps --batch "$B" --seed 11 --shard-rank $r \
            --shard-count "$N" --dump-samples "$MLP_TMP/r$r.idx"
        lines=$(wc -l <"$MLP_TMP/r$r.idx")
        [ "$lines" -eq $((steps * B)) ] ||
            { echo "FAIL: rank $r/$N read $lines samples, want $((steps * B))"; fail=1; }
        cat "$MLP_TMP/r$r.idx" >>"$MLP_TMP/all.idx"
    done
    dups=$(sort -n "$MLP_TMP/all.idx" | uniq -d | head -5 | tr '\n' ' ')
    [ -z "$dups" ] || { echo "FAIL: N=$N: samples read by more than one rank: $dups"; fail=1; }
    if ! sort -n "$MLP_TMP/all.idx" | cmp -s - <(sort -n "$single.idx"); then
        echo "FAIL: N=$N B=$B: union of the ranks' samples != the batch-$G single-process samples"
        diff <(sort -n "$MLP_TMP/all.idx") <(sort -n "$single.idx") | head; fail=1
    fi
    # interleave: for each step t, rank 0's B lines, then rank 1's, ...
    : >"$MLP_TMP/inter.idx"
    for ((t = 0; t < steps; t++)); do
        for ((r = 0; r < N; r++)); do
            sed -n "$((t * B + 1)),$((t * B + B))p" "$MLP_TMP/r$r.idx" >>"$MLP_TMP/inter.idx"
        done
    done
    if cmp -s "$MLP_TMP/inter.idx" "$single.idx"; then
        echo "ok: N=$N B=$B: ranks read disjoint slices whose per-step interleaving is exactly the batch-$G list ($((steps * G)) samples)"
    else
        echo "FAIL: N=$N B=$B: interleaved rank slices != single-process list"
        diff "$MLP_TMP/inter.idx" "$single.idx" | head; fail=1
    fi
    # same samples behind the indices: loss(G) == mean of the ranks' losses at step 0
    losses="$(mlp_loss "$single" 0)"
    for ((r = 0; r < N; r++)); do losses="$losses $(mlp_loss "$MLP_TMP/r$r" 0)"; done
    if awk -v l="$losses" 'BEGIN { n = split(l, a, " "); for (i = 2; i <= n; i++) s += a[i]
            m = s / (n - 1); d = m - a[1]; if (d < 0) d = -d; exit !(d <= 1e-6 * a[1]) }'; then
        echo "ok: N=$N: step-0 loss of batch $G equals the mean of the ranks' step-0 losses ($losses)"
    else echo "FAIL: N=$N: step-0 losses inconsistent (single, then ranks): $losses"; fail=1; fi
done

# gradients are means: one sgd step of N=2 ranks (B=4) averaged == one step of batch 8
mlp_run "$MLP_TMP/g0" --steps 0 --seed 11 --save "$MLP_TMP/g0.bin"
mlp_run "$MLP_TMP/g8" --steps 1 --batch 8 --seed 11 --save "$MLP_TMP/g8.bin"
for r in 0 1; do
    mlp_run "$MLP_TMP/g$r" --steps 1 --batch 4 --seed 11 --shard-rank $r --shard-count 2 \
        --save "$MLP_TMP/gr$r.bin"
done
if cmp -s "$MLP_TMP/g0.bin" "$MLP_TMP/g8.bin"; then
    echo "FAIL: one sgd step did not change the parameters (the mean check would be vacuous)"; fail=1
fi
res=$(paste <(od -An -v -tf4 -w4 "$MLP_TMP/g8.bin") <(od -An -v -tf4 -w4 "$MLP_TMP/gr0.bin") \
            <(od -An -v -tf4 -w4 "$MLP_TMP/gr1.bin") <(od -An -v -tf4 -w4 "$MLP_TMP/g0.bin") |
      awk '# $1 single, $2 $3 ranks, $4 initial. Tolerance: 1e-3 of this parameter step plus
           # 4 float ulps of the parameter (rounding); a SUM gradient would be off by half a step.
           function abs(x) { return x < 0 ? -x : x }
           { d = abs(($2 + $3) / 2 - $1); s = abs($1 - $4); tol = 1e-3 * s + 4.8e-7 * abs($1) + 1e-9
             if (d > tol) bad++; if (d > worst) worst = d; sd += d; ss += s; n++ }
           END { printf "%d %d %.3g %.3g\n", n, bad, worst, (ss > 0 ? sd / ss : 1) }')
read -r n bad worst ratio <<<"$res"
if [ "$n" -eq 676 ] && [ "$bad" -eq 0 ] && awk -v r="$ratio" 'BEGIN { exit !(r < 1e-3) }'; then
    echo "ok: mean of the 2 ranks' parameters after one sgd step == batch-8 parameters ($n values, worst |diff| $worst, sum|diff|/sum|step| $ratio)"
else
    echo "FAIL: gradient is not a batch mean: $bad of $n parameters off (worst |diff| $worst, sum|diff|/sum|step| $ratio)"; fail=1
fi
# --shard-count 1 is the plain single process
mlp_run "$MLP_TMP/p1" --steps 20 --batch 8 --seed 11
mlp_run "$MLP_TMP/p2" --steps 20 --batch 8 --seed 11 --shard-rank 0 --shard-count 1
if cmp -s "$MLP_TMP/p1" "$MLP_TMP/p2"; then echo "ok: --shard-count 1 --shard-rank 0 == no sharding options"
else echo "FAIL: --shard-count 1 changes the run"; diff "$MLP_TMP/p1" "$MLP_TMP/p2" | head -4; fail=1; fi
exit $fail
