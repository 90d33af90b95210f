#!/usr/bin/env bash
# Property: the step watch (sync required, 2 ranks) does not stop a correct job that evaluates
# before it trains. A repeated block of launches with a host read is a training step only when it
# changes persistent state: some allocation is read in the block before it is written in it, and
# then written in it (the parameters: read by the forward pass, written by the update). The
# kernels' own PTX says which pointer arguments they read and write.
#   fix:      mlp --eval-batches 3 (3 identical forward + loss-read batches before step 0) with
#             examples/mlp.yaml (sync point at sgd_update): exit 0, every eval and step line
#             printed by both ranks (before the fix: exit 7 in the 3rd evaluation batch).
#   control:  the same with a typo'd rule (sgd_updte): still exit 7, at the 2nd TRAINING step
#             (both ranks print their 3 eval lines and at most 2 step lines).
#   bound:    evaluation batches are watched on: ACCELSHIM_SYNC_WATCH_LAUNCHES=50 with 100 eval
#             batches (300 launches) before training still stops, exit 7, after 50 launches.
#   accumulation: mlp --accum-steps 3 (3 micro-batches a step, each reading its loss; the
#             gradients are added up, the parameters not written until the update): exit 0 with
#             the right policy (before: exit 7 in step 0's 3rd micro-batch); with the typo'd rule
#             exit 7 at the 2nd step.
#   no facts: the same kernels loaded from a PTX file the shim's PTX reader cannot read (one
#             unknown directive added; hostcuda runs the kernels' host twins): no evidence
#             either way, today's rule: exit 7 in the evaluation batches, before step 0.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

mlp=("$RL_MLP" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}' --eval-batches 3)
count() { grep -c "^\[rank $1\] $2 " "$RL_TMP/out"; }

rl_launch 120 -n 2 --backend mpi --policy "$RL_TOP/examples/mlp.yaml" -- "${mlp[@]}" --steps 4
[ "$RL_RC" -eq 0 ] || { rl_show; fail "3 eval batches, right policy: exit $RL_RC, expected 0 (the eval batches are not steps)"; }
for r in 0 1; do
    [ "$(count $r eval)" -eq 3 ] && [ "$(count $r step)" -eq 4 ] ||
        { rl_show; fail "3 eval batches, right policy: rank $r printed $(count $r eval) eval and $(count $r step) step lines, expected 3 and 4"; }
done
grep -q 'never fired' "$RL_TMP/out" && { rl_show; fail "3 eval batches, right policy: a never-fired warning"; }
echo "ok: 3 eval batches before training, right policy: 2 ranks train, exit 0"

rl_launch 120 -n 2 --backend mpi --env ACCELSHIM_SYNC_WATCH_LAUNCHES=50 --policy "$RL_TOP/examples/mlp.yaml" -- \
    "$RL_MLP" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}' --eval-batches 100 --steps 2
[ "$RL_RC" -eq 7 ] && grep -q 'fired in the first 50 kernel launches' "$RL_TMP/out" && [ "$(count 0 step)" -eq 0 ] ||
    { rl_show; fail "100 eval batches, ACCELSHIM_SYNC_WATCH_LAUNCHES=50: exit $RL_RC, expected 7 after 50 launches"; }
echo "ok: the launch bound still applies to evaluation batches (exit 7 after 50 launches)"

cat > "$RL_TMP/typo.yaml" <<'YAML'
version: 1
gradients:
  - at: "sgd_updte"
    buffer: { arg: 1, count_arg: 2 }
    dtype: f32
YAML
rl_launch 120 -n 2 --backend mpi --policy "$RL_TMP/typo.yaml" -- "${mlp[@]}" --steps 100000
[ "$RL_RC" -eq 7 ] || { rl_show; fail "control (typo'd rule): exit $RL_RC after ${RL_SECS}s, expected 7"; }
for r in 0 1; do
    e=$(count $r eval) s=$(count $r step)
    [ "$e" -eq 3 ] && [ "$s" -ge 1 ] && [ "$s" -le 2 ] ||
        { rl_show; fail "control (typo'd rule): rank $r printed $e eval and $s step lines, expected 3 and 1..2 (stopped at the 2nd training step)"; }
done
grep -q "^\[rank 0\] .*nearest kernel seen: sgd_update (edit distance 1)" "$RL_TMP/out" ||
    { rl_show; fail "control (typo'd rule): the nearest kernel sgd_update is not named"; }
echo "ok: control: a typo'd rule still stops at the 2nd training step (exit 7), after the 3 eval batches"

acc=("$RL_MLP" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}' --accum-steps 3)
rl_launch 120 -n 2 --backend mpi --policy "$RL_TOP/examples/mlp.yaml" -- "${acc[@]}" --steps 4
[ "$RL_RC" -eq 0 ] && [ "$(count 0 step)" -eq 4 ] && [ "$(count 1 step)" -eq 4 ] ||
    { rl_show; fail "3 accumulation micro-steps, right policy: exit $RL_RC with $(count 0 step) step lines, expected 0 and 4"; }
rl_launch 120 -n 2 --backend mpi --policy "$RL_TMP/typo.yaml" -- "${acc[@]}" --steps 100000
s=$(count 0 step)
[ "$RL_RC" -eq 7 ] && [ "$s" -ge 1 ] && [ "$s" -le 2 ] && grep -q "launch sequence repeated" "$RL_TMP/out" ||
    { rl_show; fail "3 accumulation micro-steps, typo'd rule: exit $RL_RC with $s step lines, expected 7 at the 2nd step"; }
echo "ok: 3 accumulation micro-steps a step: right policy trains (exit 0); typo'd rule stops at the 2nd step (exit 7)"

# the kernels' PTX with one directive the shim's reader does not know (in a kernel the
# evaluation does not run, so hostcuda's twins run the same program)
ptx=$RL_BUILD/tests/trainers/mlp_kernels.ptx
need "$ptx"
awk '/^\.visible \.entry clip_scale\(/ { inclip = 1 } inclip && /^\{/ && !done { print; print "\t.frobnicate 1;"; done = 1; next } { print }' \
    "$ptx" > "$RL_TMP/nofacts.ptx"
grep -q "[.]frobnicate" "$RL_TMP/nofacts.ptx" || fail "could not plant the unknown directive in a copy of $ptx"
HOSTCUDA_KERNEL_LIBS=$RL_KLIBS rl_launch 120 -n 2 --backend mpi --policy "$RL_TOP/examples/mlp.yaml" -- \
    "${mlp[@]}" --steps 4 --ptx-file "$RL_TMP/nofacts.ptx"
[ "$RL_RC" -eq 7 ] && [ "$(count 0 step)" -eq 0 ] && grep -q "launch sequence repeated" "$RL_TMP/out" ||
    { rl_show; fail "no facts: exit $RL_RC with $(count 0 step) step lines, expected 7 in the eval batches (today's rule)"; }
echo "ok: kernels without facts (unreadable PTX): today's rule, exit 7 in the eval batches"
