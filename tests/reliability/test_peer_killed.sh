#!/usr/bin/env bash
# Property: a rank whose peer is killed in the middle of training (its collective fails because
# the transport broke, not because of anything in the configuration) ends with status 4, the
# status of a collective that did not complete, with one line saying a peer may have ended — not
# with status 2, which means a configuration error. The per-machine form (two machines of one
# rank, NCCL_COMM_ID, hostnccl) gives each rank its own launcher, so rank 0's own status is seen
# (no launcher stops it first). Control: without the kill both machines exit 0.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"

# machines STEPS [kill]: both machines in the background; with kill, rank 1's trainer is SIGKILLed
# once it printed step 3; each machine's exit status in rc[M], output in $RL_TMP/mM
machines() {
    local port=$(t_free_port 2) m pids=() i p
    for m in 0 1; do
        timeout -k 5 60 "$RL_LAUNCHER" --cpu -n 2 --num-machines 2 --machine-rank "$m" \
            --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "peer-killed-$port" --timeout 10 \
            --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --batch 2 --shard-rank '{rank}' \
            --shard-count '{world_size}' --steps "$1" --save "$RL_TMP/p$m.bin" >"$RL_TMP/m$m" 2>&1 &
        pids[m]=$!
    done
    if [ "${2:-}" = kill ]; then
        for ((i = 0; i < 300; i++)); do grep -q '^\[rank 1\] step 3 ' "$RL_TMP/m1" && break; sleep 0.1; done
        p=$(pgrep -f -- "--save $RL_TMP/p1.bin" | while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mlp ] && echo "$p"; done | head -n 1)
        [ -n "$p" ] || { tail "$RL_TMP/m0" "$RL_TMP/m1"; fail "rank 1's trainer not found at step 3"; }
        kill -KILL "$p"
    fi
    for m in 0 1; do rc[m]=0; wait "${pids[m]}" || rc[m]=$?; done
}

machines 5
[ "${rc[0]}${rc[1]}" = 00 ] || { tail -n 8 "$RL_TMP/m0" "$RL_TMP/m1"; fail "control: exit ${rc[0]} ${rc[1]}, expected 0 0"; }
echo "ok: control: both machines exit 0"

machines 1000000 kill
line=$(grep -m1 'accelshim: collective for .* failed' "$RL_TMP/m0")
echo "rank 1 killed mid-training: machine 0 exit ${rc[0]}: ${line:-no line}"
[ "${rc[0]}" = 4 ] || { tail -n 12 "$RL_TMP/m0"; fail "rank 0 exit ${rc[0]} after its peer was killed, expected 4 (2 = configuration error, 124 = hung)"; }
grep -q 'a peer rank ended or its connection broke' <<<"$line" || { tail -n 12 "$RL_TMP/m0"; fail "rank 0's line does not say a peer may have ended"; }
echo "ok: rank 1 killed mid-training: rank 0 exits 4 with one line saying a peer ended"
