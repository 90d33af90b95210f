#!/usr/bin/env bash
# Property: the rendezvous is covered by the timeout. A per-machine job (accelerate-run
# --num-machines 2, the ranks meet through NCCL_COMM_ID, no MPI) whose other machine never starts
# ends on its own: each waiting rank says the ranks did not all arrive within debug.timeout_s
# (--timeout 3) and exits with status 4, as the watchdog does for a stuck collective. Before, only
# the NCCL double's own 60 s limit ended it (real NCCL has none). Control: with the other machine
# started, the same job ends with exit 0, machine 0 saying it waits for the others and machine 1
# where it meets machine 0. Also: a machine whose rank 0 never comes ends with the timeout's status
# (4), not 2 (configuration): its ranks say that rank 0's machine did not answer at the
# rendezvous address. Before, the NCCL double's connect limit ran out and the shim reported
# "cannot open collectives", exit 2 (real NCCL's bootstrap also gives up connecting after a while).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"

port=$(t_free_port 2)
common=(--cpu -n 2 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id rdv --timeout 3
        --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 3 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}')
rl_launch 120 --machine-rank 0 "${common[@]}"
echo "machine 0 alone: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -eq 124 ] && { rl_show; fail "machine 0 alone: still waiting after 120 s"; }
[ "$RL_RC" -eq 4 ] || { rl_show; fail "machine 0 alone: exit $RL_RC, expected 4 (timeout)"; }
grep -q "rendezvous.*did not all arrive within 3 s" "$RL_TMP/out" \
    || { rl_show; fail "machine 0 alone: no line saying the ranks did not all arrive within the timeout"; }
grep -m1 "did not all arrive" "$RL_TMP/out"
echo "ok: a peer that never arrives: the rendezvous ends with the timeout's exit 4, naming it"

port=$(t_free_port 2)
lone=(--cpu -n 2 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "root-missing-$$"
        --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 3 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}')
# the double gives up connecting after 3 s here (60 s by default), long before debug.timeout_s
HOSTNCCL_CONNECT_S=3 rl_launch 100 --machine-rank 1 "${lone[@]}"
echo "machine 1 alone: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -eq 4 ] || { rl_show; fail "machine 1 alone (rank 0 never comes): exit $RL_RC, expected 4 (timeout)"; }
grep -q "rendezvous (NCCL_COMM_ID 127.0.0.1:$port): rank 0 did not answer" "$RL_TMP/out" \
    || { rl_show; fail "machine 1 alone: no line saying rank 0's machine did not answer"; }
grep -m1 "rank 0 did not answer" "$RL_TMP/out"
echo "ok: rank 0 never comes: exit 4, naming the address"

# control: both machines: the job runs
port=$(t_free_port 2)
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
echo "ok: control: with the other machine started the job ends with exit 0; machine 0 says it waits, machine 1 where it meets"
