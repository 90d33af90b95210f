#!/usr/bin/env bash
# Property: with check_collectives on (accelerate-run --debug = ACCELSHIM_CHECK_COLLECTIVES=1), a
# rank that reduces a different element count at a sync point is caught BEFORE the collective:
# every rank prints the fingerprint mismatch naming both ranks and counts (rank 1 reduces 612,
# rank 0 reduces 676), the job ends with a non-zero status (3) within 30 s, no hang. Control:
# the same run without --bad-count-rank passes the fingerprint check and exits 0.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

args=(-n 2 --debug --backend mpi --policy "$RL_POL/sgd-fused.yaml" --
      "$RL_MLP" --steps 4 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')
rl_launch 60 "${args[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control run (same counts, --debug) exited $RL_RC"; }
grep -q "mismatch" "$RL_TMP/out" && { rl_show; fail "control run reported a mismatch"; }
n=$(grep -Ec "accelshim rank [01]\] INFO report: check_collectives: 4 fingerprint exchange" "$RL_TMP/out")
[ "$n" -eq 2 ] || { rl_show; fail "control run: expected both ranks to report 4 fingerprint exchanges, got $n"; }
echo "ok: control run with fingerprints on (4 exchanges per rank): exit 0 in ${RL_SECS}s"

# cost per collective, printed (not asserted): the exit report's average exchange time
rl_launch 120 -n 2 --backend mpi --env ACCELSHIM_LOG=info --env ACCELSHIM_CHECK_COLLECTIVES=1 \
    --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 300 --batch 4 --shard-rank '{rank}' \
    --shard-count '{world_size}'
echo "cost (2 ranks, mpi backend, hostcuda, 300 steps): $(grep -Eo 'check_collectives: .*' "$RL_TMP/out" | head -2 | tr '\n' ' ')"

rl_launch 60 "${args[@]}" --bad-count-rank 1
echo "bad-count run: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -ne 0 ] || { rl_show; fail "exit status 0 despite a count mismatch"; }
[ "$RL_SECS" -le 30 ] || { rl_show; fail "took ${RL_SECS}s (> 30 s)"; }
for r in 0 1; do
    grep -Eq "accelshim rank $r\] ERROR check: collective fingerprint mismatch: rank 1 reduces 612 f32.*at gradients\[0\] seq 0; rank 0 reduces 676 f32" "$RL_TMP/out" \
        || { rl_show; fail "rank $r did not print the mismatch naming rank 1 (612) and rank 0 (676)"; }
done
grep -q "exit 3" "$RL_TMP/out" || { rl_show; fail "no 'exit 3' in the report"; }
grep -E "fingerprint mismatch" "$RL_TMP/out" | head -2
echo "ok: mismatch reported by both ranks; job ended in ${RL_SECS}s with status $RL_RC"
