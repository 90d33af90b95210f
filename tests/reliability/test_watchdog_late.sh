#!/usr/bin/env bash
# Property: the watchdog watches every collective however many have run and however fast they
# come (issue 17, defect 1). With --timeout 5, on both backends (mpi: host waits; nccl: hostnccl,
# the collective queued on the stream): (a) a rank that stalls late, after a thousand fast
# collectives, is reported by the rank waiting for it, naming the collective's sequence number;
# (b) ranks with different step counts (the short rank reaches its exit while the long one
# issues its next collective) end with a report too, naming who is stuck or who did not
# arrive. Each run is bounded by `timeout` (a hang is exit 124, a failure here); the job must
# end with exit 4, the timeout status.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

rl_steps_script

rl_backends
common=(--batch 4 --shard-rank '{rank}' --shard-count '{world_size}')
for b in "${RL_BACKENDS[@]}"; do
    # (a) a late stall: rank 1 sleeps before step 1000's update, of 30000
    rl_launch 60 -n 2 --backend "$b" --timeout 5 --policy "$RL_POL/sgd-fused.yaml" -- \
        "$RL_MLP" --steps 30000 "${common[@]}" --stall-rank 1 --stall-at-step 1000
    echo "$b late stall: exit $RL_RC after ${RL_SECS}s"
    [ "$RL_RC" -eq 4 ] || { rl_show; fail "$b: a stall at step 1000 ended with exit $RL_RC, expected 4 (124: hung)"; }
    line=$(grep -E "accelshim rank 0\] ERROR watchdog: gradients\[0\] \(at: \"sgd_update\"\).*sequence number 1000, has not completed after [5-9]\.[0-9] s \(timeout 5 s" "$RL_TMP/out") \
        || { rl_show; fail "$b: no watchdog report from rank 0 naming sequence number 1000"; }
    echo "$line"
    echo "ok: $b: a stall after 1000 collectives was reported by the waiting rank"

    # (b) uneven step counts: rank 0 runs 1500 steps, rank 1 3000
    STEPS0=1500 STEPS1=3000 rl_launch 60 -n 2 --backend "$b" --timeout 5 \
        --policy "$RL_POL/sgd-fused.yaml" -- sh "$RL_TMP/steps.sh" '{rank}' "$RL_MLP" "${common[@]}"
    echo "$b uneven steps: exit $RL_RC after ${RL_SECS}s"
    [ "$RL_RC" -eq 4 ] || { rl_show; fail "$b: 1500 vs 3000 steps ended with exit $RL_RC, expected 4 (124: hung)"; }
    line=$(grep -E "accelshim rank 1\] ERROR watchdog: gradients\[0\] .*sequence number 1500, has not completed|accelshim rank 0\] ERROR .*rank\(s\) 1 did not reach" "$RL_TMP/out") \
        || { rl_show; fail "$b: uneven steps: no report naming collective 1500 on rank 1 or rank 1 missing at exit"; }
    echo "$line"
    echo "ok: $b: uneven step counts ended with exit 4 and a report"
done
