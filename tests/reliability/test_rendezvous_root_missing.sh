#!/usr/bin/env bash
# Property: in the per-machine form, a machine whose rank 0 never comes ends with the timeout's
# status (4), not 2 (configuration): its ranks say that rank 0's machine did not answer at the
# rendezvous address. Before, the NCCL double's connect limit ran out and the shim reported
# "cannot open collectives", exit 2 (real NCCL's bootstrap also gives up connecting after a
# while). Also: machine 0 says it is waiting for the other machines. Control: both machines: 0.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"

port=$((20000 + RANDOM % 20000))
common=(--cpu -n 2 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "root-missing-$$"
        --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 3 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}')
# the double gives up connecting after 3 s here (60 s by default), long before debug.timeout_s
HOSTNCCL_CONNECT_S=3 rl_launch 100 --machine-rank 1 "${common[@]}"
echo "machine 1 alone: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -eq 4 ] || { rl_show; fail "machine 1 alone (rank 0 never comes): exit $RL_RC, expected 4 (timeout)"; }
grep -q "rendezvous (NCCL_COMM_ID 127.0.0.1:$port): rank 0 did not answer" "$RL_TMP/out" \
    || { rl_show; fail "machine 1 alone: no line saying rank 0's machine did not answer"; }
grep -m1 "rank 0 did not answer" "$RL_TMP/out"
echo "ok: rank 0 never comes: exit 4, naming the address"

port=$((20000 + RANDOM % 20000))
common[8]=$port
timeout -k 5 120 "$RL_LAUNCHER" --machine-rank 1 "${common[@]}" >"$RL_TMP/m1" 2>&1 &
m1=$!
rl_launch 120 --machine-rank 0 "${common[@]}"
rc1=0; wait "$m1" || rc1=$?
[ "$RL_RC" -eq 0 ] && [ "$rc1" -eq 0 ] || { rl_show; tail -n 20 "$RL_TMP/m1"; fail "control: both machines: exit $RL_RC / $rc1, expected 0 / 0"; }
grep -q "machine 0 of 2: rank 0 runs here; waiting for the other machine's ranks to meet at 127.0.0.1:$port" "$RL_TMP/out" \
    || { rl_show; fail "machine 0 does not say it is waiting for the others"; }
grep -q "machine 1 of 2: rank 1 runs here; meeting machine 0 at 127.0.0.1:$port" "$RL_TMP/m1" \
    || { tail -n 20 "$RL_TMP/m1"; fail "machine 1 does not say where it meets machine 0"; }
echo "ok: control: both machines: exit 0; machine 0 says it waits, machine 1 where it meets"
