#!/usr/bin/env bash
# Property: every blocking exchange of the shim at exit is bounded by debug.timeout_s (issue 17,
# defect 2). Rank 1 runs 5 steps and reaches its exit; rank 0 stalls before step 5 outside any
# collective, so no watchdog of rank 0 fires. Rank 1's exit-time job summary must not wait
# forever: it names rank 0 as the rank that did not reach the end of the job and exits with 4,
# and the launcher stops rank 0. Both backends; each run bounded by `timeout` (124: hung).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

rl_steps_script

rl_backends
for b in "${RL_BACKENDS[@]}"; do
    STEPS0=10 STEPS1=5 rl_launch 90 -n 2 --backend "$b" --timeout 5 --policy "$RL_POL/sgd-fused.yaml" \
        -- sh "$RL_TMP/steps.sh" '{rank}' "$RL_MLP" --batch 4 --shard-rank '{rank}' \
        --shard-count '{world_size}' --stall-rank 0 --stall-at-step 5
    echo "$b stall at exit: exit $RL_RC after ${RL_SECS}s"
    [ "$RL_RC" -eq 4 ] || { rl_show; fail "$b: rank 1 at exit, rank 0 stalled: exit $RL_RC, expected 4 (124: hung)"; }
    line=$(grep -E "accelshim rank 1\] ERROR exit: rank\(s\) 0 did not reach the end of the job within 5 s" "$RL_TMP/out") \
        || { rl_show; fail "$b: rank 1 did not name rank 0 as missing at exit"; }
    echo "$line"
    echo "ok: $b: the rank at exit named the missing rank and ended with exit 4"
done
