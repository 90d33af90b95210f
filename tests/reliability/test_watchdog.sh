#!/usr/bin/env bash
# Property: with debug.timeout_s: 5, a rank that stalls before a sync point is reported by the
# rank waiting for it (watchdog: rank, rule, sequence number, elapsed time) and the job ends
# with a non-zero status within 35 s, on both backends: mpi (the wait is on the host) and
# nccl (hostnccl: the collective is queued on the stream and the waiting rank is blocked in the
# application's own cuStreamSynchronize). The waiting rank names the rank that did not arrive and
# the sync point it was last seen at (the launcher's progress records); with the stall moved to
# rank 0 the report names rank 0 instead (the name is not fixed). Also: ACCELSHIM_TIMEOUT_S
# overrides the policy.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

pol=$RL_TMP/stall.yaml
{ cat "$RL_POL/sgd-fused.yaml"; printf 'debug:\n  timeout_s: 5\n'; } >"$pol"
rl_backends
for b in "${RL_BACKENDS[@]}"; do
    rl_launch 60 -n 2 --backend "$b" --policy "$pol" -- "$RL_MLP" --steps 6 --batch 4 \
        --shard-rank '{rank}' --shard-count '{world_size}' --stall-rank 1 --stall-at-step 2
    echo "$b: exit $RL_RC after ${RL_SECS}s"
    [ "$RL_RC" -ne 0 ] || { rl_show; fail "$b: exit status 0 although rank 1 stalled"; }
    [ "$RL_SECS" -le 35 ] || { rl_show; fail "$b: took ${RL_SECS}s (> 35 s)"; }
    line=$(grep -E "accelshim rank 0\] ERROR watchdog: gradients\[0\] \(at: \"sgd_update\"\).*sequence number 2, has not completed after [5-9]\.[0-9] s \(timeout 5 s" "$RL_TMP/out") \
        || { rl_show; fail "$b: no watchdog report from rank 0 naming rule, sequence 2, elapsed"; }
    echo "$line"
    grep -Eq "accelshim rank 0\] ERROR watchdog: ranks that did not arrive at sequence 2: rank 1 \(last at sequence 1: gradients\[0\] \(at: \"sgd_update\"\) before sgd_update\)" "$RL_TMP/out" \
        || { rl_show; fail "$b: rank 0 did not name rank 1 as the rank that did not arrive (last at sequence 1)"; }
    echo "ok: $b: the waiting rank reported the stall and named rank 1; job ended in ${RL_SECS}s"
done

# the environment overrides the policy: ACCELSHIM_TIMEOUT_S=3
rl_launch 60 -n 2 --backend mpi --timeout 3 --policy "$pol" -- "$RL_MLP" --steps 6 --batch 4 \
    --shard-rank '{rank}' --shard-count '{world_size}' --stall-rank 0 --stall-at-step 1
grep -Eq "accelshim rank 1\] ERROR watchdog: .*sequence number 1, .*\(timeout 3 s" "$RL_TMP/out" \
    || { rl_show; fail "ACCELSHIM_TIMEOUT_S=3 (--timeout 3): no report from rank 1 with timeout 3 s"; }
grep -Eq "accelshim rank 1\] ERROR watchdog: ranks that did not arrive at sequence 1: rank 0 \(last at sequence 0: " "$RL_TMP/out" \
    || { rl_show; fail "stall on rank 0: rank 1 did not name rank 0 as the rank that did not arrive"; }
echo "ok: --timeout 3 (ACCELSHIM_TIMEOUT_S) overrides debug.timeout_s; rank 1 reported rank 0's stall"
