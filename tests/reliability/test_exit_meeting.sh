#!/usr/bin/env bash
# Property: ranks that meet without MPI (here the per-machine form: three machines of one rank,
# NCCL_COMM_ID, hostnccl) meet at exit too, over TCP at rank 0 (collectives/coll_meet.c), and
# every rank that waits there ends the same way. Each machine has its own launcher, so each
# rank's own exit status and line are seen (no launcher stops the others first).
#   control:        all three run 5 steps: every machine exits 0, none names a missing rank.
#   rank 2 stalls:  rank 0 (which gathers) and rank 1 (told by rank 0's verdict) both name
#                   rank 2 and exit 4 within the timeout.
#   rank 0 stalls:  ranks 1 and 2 name rank 0 (no answer from it) and exit 4.
#   rank 0 killed:  rank 2 stalls, rank 0 is killed (SIGKILL) while it waits at the meeting: rank 1
#                   says rank 0 cannot be reached, names it and exits 4 (no wait for a dead peer).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"

# machines STALLED [KILL]: the three machines in the background, rank STALLED (or none: -)
# stalling before step 5 of 10, the others running 5 steps; each machine's exit status in rc[M].
# KILL: rank 0's trainer is killed (SIGKILL) once it has printed its checksum (at its exit).
machines() {
    local port=$(t_free_port 2) m pids=() extra i p
    for m in 0 1 2; do
        extra=(--steps 5 --save "$RL_TMP/p$m.bin")
        [ "$m" = "$1" ] && extra=(--steps 10 --stall-rank "$m" --stall-at-step 5)
        timeout -k 5 60 "$RL_LAUNCHER" --cpu -n 3 --num-machines 3 --machine-rank "$m" \
            --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "meet-$port" --timeout 3 \
            --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --batch 2 --shard-rank '{rank}' \
            --shard-count '{world_size}' "${extra[@]}" >"$RL_TMP/m$m" 2>&1 &
        pids[m]=$!
    done
    if [ "${2:-}" = kill ]; then
        for ((i = 0; i < 300; i++)); do grep -q checksum "$RL_TMP/m0" && break; sleep 0.1; done
        p=$(pgrep -f -- "--save $RL_TMP/p0.bin" | while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mlp ] && echo "$p"; done | head -n 1)
        [ -n "$p" ] || { show; fail "rank 0 killed: rank 0's trainer not found at its exit"; }
        kill -KILL "$p"
    fi
    for m in 0 1 2; do
        if [ "$m" = "$1" ]; then continue; fi
        rc[m]=0; wait "${pids[m]}" || rc[m]=$?
    done
    if [ "$1" != - ]; then   # the stalled machine: stopped once the others have ended
        kill -TERM "${pids[$1]}" 2>/dev/null
        wait "${pids[$1]}" 2>/dev/null
    fi
}
show() { for m in 0 1 2; do echo "--- machine $m"; tail -n 12 "$RL_TMP/m$m"; done; }
names() { grep -m1 -E "accelshim rank $1\] ERROR exit: rank\(s\) $2 did not reach the end of the job within 3 s" "$RL_TMP/m$1"; }

machines -
echo "control: exit ${rc[0]} ${rc[1]} ${rc[2]}"
[ "${rc[0]}${rc[1]}${rc[2]}" = 000 ] || { show; fail "control: exit ${rc[0]} ${rc[1]} ${rc[2]}, expected 0 0 0"; }
! grep -q "did not reach the end" "$RL_TMP"/m[012] || { show; fail "control: a rank was named missing"; }
echo "ok: control: the three ranks met at exit, every machine exits 0"

# stalled S OTHERS...: with rank S stalled at exit, every other machine exits 4 naming rank S
stalled() {
    local s=$1 m; shift
    machines "$s"
    echo "rank $s stalls: machines $* exit$(for m in "$@"; do printf ' %s' "${rc[m]}"; done)"
    for m in "$@"; do
        [ "${rc[m]}" = 4 ] || { show; fail "rank $s stalls: machine $m exit ${rc[m]}, expected 4 (124: hung)"; }
        names "$m" "$s" || { show; fail "rank $s stalls: rank $m did not name rank $s"; }
    done
}
stalled 2 0 1
echo "ok: rank 2 stalls: rank 0 and rank 1 (by rank 0's verdict) name rank 2, exit 4"
stalled 0 1 2
echo "ok: rank 0 stalls: ranks 1 and 2 name rank 0, exit 4"

machines 2 kill
echo "rank 0 killed at the meeting: machine 0 exit ${rc[0]}, machine 1 exit ${rc[1]}"
[ "${rc[1]}" = 4 ] || { show; fail "rank 0 killed: machine 1 exit ${rc[1]}, expected 4 (124: hung)"; }
grep -m1 "rank 0, which gathers the ranks at exit, cannot be reached" "$RL_TMP/m1" \
    || { show; fail "rank 0 killed: rank 1 did not say that rank 0 cannot be reached"; }
# named at once, so the line says how long it waited, not "within 3 s" (which it did not wait)
grep -m1 -E "accelshim rank 1\] ERROR exit: rank\(s\) 0 did not reach the end of the job: gone after [0-9.]+ s " "$RL_TMP/m1" \
    || { show; fail "rank 0 killed: rank 1 did not name rank 0 with the time it waited"; }
echo "ok: rank 0 killed at the meeting: rank 1 names it at once, with the time it waited, exit 4"
