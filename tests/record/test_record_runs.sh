#!/usr/bin/env bash
# test_record_runs.sh — recording and the NaN sentinel on the bundled trainer (hostcuda, mpi):
#  - two identical 2-rank runs give records that accelshim-compare --bitwise calls `same`;
#  - a different --seed differs at seq 0;
#  - 1 rank with a 4x batch vs 4 ranks: the post-collective lines agree within the equivalence
#    tolerance (fp32 wire, rtol 1e-5), and the wrong reference (1 rank, 1x batch) does not;
#  - ACCELSHIM_RECORD_EVERY=3 records seq 0, 3, 6, ... only;
#  - a NaN injected at step S on rank 1 of 2 is caught by the sentinel at exactly seq S, naming
#    rank 1 (exit 5; rank 1's record ends with the NaN line and a stop line); with one rank, by
#    debug.nan_check in the policy; with the nccl backend (hostnccl) too, where the scan runs on
#    the stream the all-reduce is queued on; the launcher's --record/--nan-check end to end.
# Prints TAP; each failed case shows both sides as # lines.
set -u
. "$(dirname "$0")/lib.sh"
rc_preconditions
T=$EQ_TMP
S=12   # steps
echo "1..10"

# 1. two identical runs: same, bitwise
rc_ranks 2 "$T/a" ACCELSHIM_RECORD="$T/a-{rank}.jsonl" -- --steps $S --batch 4
ra=$?
rc_ranks 2 "$T/b" ACCELSHIM_RECORD="$T/b-{rank}.jsonl" -- --steps $S --batch 4
rb=$?
mkdir -p "$T/A" "$T/B" && cp "$T"/a-*.jsonl "$T/A/" && cp "$T"/b-*.jsonl "$T/B/"
rc_cmp "$T/c1" "$T/A" "$T/B" --bitwise
st=$?
[ $ra -eq 0 ] && [ $rb -eq 0 ] && [ $st -eq 0 ] && [ "$(head -n1 "$T/c1")" = same ]
ok=$?
[ $ok -eq 0 ] || { echo "# runs exit $ra $rb; compare exit $st:"; eq_show "$T/c1" "$T/a.0.log"; }
tap_case $ok "two identical 2-rank runs: accelshim-compare --bitwise says same"

# 2. another seed differs at seq 0
rc_ranks 2 "$T/s" ACCELSHIM_RECORD="$T/s-{rank}.jsonl" -- --steps $S --batch 4 --seed 7
mkdir -p "$T/S2" && cp "$T"/s-*.jsonl "$T/S2/"
rc_cmp "$T/c2" "$T/A" "$T/S2" --bitwise
st=$?
[ $st -eq 1 ] && grep -q '^differs: .* seq 0 ' "$T/c2"
ok=$?
[ $ok -eq 0 ] || { echo "# compare exit $st (want 1, divergence at seq 0):"; eq_show "$T/c2"; }
tap_case $ok "--seed 7 vs --seed 1: differs at seq 0 ($(cut -c1-90 "$T/c2" | head -n1))"

# 3. 1 rank x4 batch vs 4 ranks: post-collective values within the equivalence tolerance
rc_one "$T/one.log" ACCELSHIM_RECORD="$T/one.jsonl" -- --steps $S --batch 16
r1=$?
rc_ranks 4 "$T/q" ACCELSHIM_RECORD="$T/q-{rank}.jsonl" -- --steps $S --batch 4
r4=$?
mkdir -p "$T/Q" && cp "$T"/q-*.jsonl "$T/Q/"
rc_cmp "$T/c3" "$T/one.jsonl" "$T/Q" --rtol 1e-5 --atol 0
st=$?
[ $r1 -eq 0 ] && [ $r4 -eq 0 ] && [ $st -eq 0 ] && [ "$(head -n1 "$T/c3")" = same ]
ok=$?
[ $ok -eq 0 ] || { echo "# runs exit $r1 $r4; compare exit $st:"; eq_show "$T/c3" "$T/one.log"; }
tap_case $ok "1 rank batch 16 vs 4 ranks batch 4: post lines same within rtol 1e-5"

# 4. negative control: the wrong reference (1 rank, batch 4) differs under the same tolerance
rc_one "$T/wrong.log" ACCELSHIM_RECORD="$T/wrong.jsonl" -- --steps $S --batch 4
rc_cmp "$T/c4" "$T/wrong.jsonl" "$T/Q" --rtol 1e-5 --atol 0
st=$?
[ $st -eq 1 ] && grep -q '^differs: gradients\[0\] seq 0 (post' "$T/c4"
ok=$?
[ $ok -eq 0 ] || { echo "# compare exit $st (want 1 at gradients[0] seq 0 post):"; eq_show "$T/c4"; }
tap_case $ok "negative control: 1 rank batch 4 vs 4 ranks differs at the first gradient"

# 5. ACCELSHIM_RECORD_EVERY=3: only seq 0, 3, 6, 9 of the gradient rule
rc_one "$T/ev.log" ACCELSHIM_RECORD="$T/ev.jsonl" ACCELSHIM_RECORD_EVERY=3 -- --steps 10 --batch 4
seqs=$(grep '"kind":"pre","rule":"gradients\[0\]"' "$T/ev.jsonl" | sed 's/.*"seq":\([0-9]*\).*/\1/' | tr '\n' ' ')
[ "$seqs" = "0 3 6 9 " ]
ok=$?
[ $ok -eq 0 ] || echo "# recorded gradient seqs: '$seqs' (want '0 3 6 9 ')"
tap_case $ok "ACCELSHIM_RECORD_EVERY=3 records seq 0 3 6 9 of 10"

# 6. NaN at step 5 on rank 1 of 2: caught at seq 5, naming rank 1, before the collective
rc_ranks 2 "$T/n" ACCELSHIM_NAN_CHECK=1 ACCELSHIM_RECORD="$T/n-{rank}.jsonl" -- \
    --steps $S --batch 4 --nan-rank 1 --nan-at-step 5
st=$?
grep -q 'nan_check: rank 1: gradients\[0\] (at: "sgd_update") sync point seq 5, .*1 NaN and 0 Inf' "$T/n.1.log" &&
    ! grep -q 'nan_check' "$T/n.0.log" && grep -q '^step 4 loss' "$T/n.1.log" &&
    ! grep -q '^step 5 loss' "$T/n.1.log" &&
    tail -n1 "$T/n-1.jsonl" | grep -q '"kind":"stop","reason":"nan_check",.*"seq":5,.*"nan":1' &&
    [ $st -ne 0 ]
ok=$?
[ $ok -eq 0 ] || { echo "# mpirun exit $st; rank 1 log, rank 0 log, rank 1 record tail:";
                   eq_show "$T/n.1.log" "$T/n.0.log"; tail -n2 "$T/n-1.jsonl" | sed 's/^/# /'; }
tap_case $ok "NaN injected at step 5 on rank 1: sentinel stops the job at seq 5 naming rank 1"

# 7. one rank, debug.nan_check in the policy (no environment): caught at seq 3, exit 5
sed 's/^version: 1$/version: 1\ndebug: { nan_check: true }/' "$RC_POLICY" >"$T/nan.yaml"
RC_POLICY=$T/nan.yaml rc_one "$T/n1.log" -- --steps $S --batch 4 --nan-rank 0 --nan-at-step 3
st=$?
[ $st -eq 5 ] && grep -q 'nan_check: rank 0: gradients\[0\] .* seq 3, .*1 NaN' "$T/n1.log"
ok=$?
[ $ok -eq 0 ] || { echo "# exit $st (want 5):"; eq_show "$T/n1.log"; }
tap_case $ok "one rank, debug.nan_check: true: NaN at step 3 caught at seq 3, exit 5"

# 8. without nan_check the same NaN goes through (the sentinel is what stopped it)
rc_one "$T/n0.log" -- --steps 6 --batch 4 --nan-rank 0 --nan-at-step 3
st=$?
[ $st -eq 0 ] && ! grep -q nan_check "$T/n0.log"
ok=$?
[ $ok -eq 0 ] || { echo "# exit $st (want 0):"; eq_show "$T/n0.log"; }
tap_case $ok "control: without nan_check the NaN run completes (exit 0)"

# 9. the launcher: accelerate-run --cpu --record DIR --nan-check
ASR=$EQ_TOP/scripts/accelerate-run
timeout -k 5 120 "$ASR" --cpu -n 2 --backend mpi --policy "$RC_POLICY" --record "$T/L" --nan-check -- \
    "$EQ_MLP" --steps 6 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}' \
    --nan-rank 1 --nan-at-step 2 >"$T/l.log" 2>&1
st=$?
[ $st -eq 5 ] && grep -q 'nan_check: rank 1: .* seq 2,' "$T/l.log" && [ -s "$T/L/rank-0.jsonl" ] &&
    grep -q '"kind":"stop".*"seq":2' "$T/L/rank-1.jsonl"
ok=$?
[ $ok -eq 0 ] || { echo "# accelerate-run exit $st (want 5):"; eq_show "$T/l.log"; ls -l "$T/L" 2>&1 | sed 's/^/# /'; }
tap_case $ok "accelerate-run --cpu --record DIR --nan-check: rank 1 named at seq 2, exit 5, DIR/rank-R.jsonl"

# 10. the nccl backend (hostnccl): the scan runs on the stream NCCL's all-reduce uses; records
#     equal the mpi backend's bitwise
if [ -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ]; then
    rc_ranks 2 "$T/nc" ACCELSHIM_BACKEND=nccl LD_LIBRARY_PATH="$EQ_BUILD/tests/hostnccl:$EQ_BUILD/tests/hostcuda" \
        ACCELSHIM_LOG=info ACCELSHIM_NAN_CHECK=1 ACCELSHIM_RECORD="$T/NC/" -- --steps $S --batch 4 --nan-rank 0 --nan-at-step 7
    st=$?
    rc_ranks 2 "$T/mp" ACCELSHIM_RECORD="$T/MP/" -- --steps 7 --batch 4
    head -n -2 "$T/NC/rank-0.jsonl" >"$T/nc0.jsonl"    # up to step 6: drop step 7's pre + stop
    head -n -1 "$T/MP/rank-0.jsonl" | grep -v '"kind":"exit"' >"$T/mp0.jsonl"
    rc_cmp "$T/c10" "$T/nc0.jsonl" "$T/mp0.jsonl" --bitwise
    cst=$?
    [ $st -ne 0 ] && grep -q 'nan_check: rank 0: .* seq 7,' "$T/nc.0.log" && grep -q 'collectives backend: nccl' "$T/nc.0.log" &&
        [ $cst -eq 0 ]
    ok=$?
    [ $ok -eq 0 ] || { echo "# mpirun exit $st, compare exit $cst:"; eq_show "$T/nc.0.log" "$T/c10"; }
    tap_case $ok "nccl backend: NaN on rank 0 at step 7 caught at seq 7; steps 0-6 bitwise equal to mpi's"
else
    EQ_N=$((EQ_N + 1)); echo "ok $EQ_N - nccl backend # SKIP hostnccl not built"
fi
