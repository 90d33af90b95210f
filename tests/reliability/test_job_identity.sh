#!/usr/bin/env bash
# Property: a rank of another job never joins a job (issue 23, item 1). Ranks that meet through
# NCCL's bootstrap (NCCL_COMM_ID: --launcher local, the per-machine form) swap their job id right
# after the rendezvous, before any data; a rank of another job is refused with one line naming
# both jobs, and every rank of such a pairing exits 2.
#   cross-pairing:  two per-machine jobs (A, B) on one port, started so that A's rank 0 can only
#                   meet B's rank 1 and B's rank 0 only A's rank 1: the four launchers exit 2,
#                   rank 0 of A names job "B" and its own "A" (before: exit 0, each job trained
#                   with the other's rank).
#   stranger:       a process with the job's NCCL_COMM_ID and rank 1 (another job id) started
#                   before the real rank 1: rank 0 refuses it (exit 2), the stranger exits 2
#                   without a training step (it received none of rank 0's data).
#   no job id:      the per-machine form without --job-id / ACCELSHIM_JOB_ID is refused before
#                   any rank starts (exit 2, naming --job-id).
#   issue's loop:   two --launcher local jobs on one port, rank 0 late: each job exits 0 with
#                   its two ranks' checksums equal, or exits 2 with the line naming both jobs
#                   (or 4: a rank found no peer in time, said so); never exit 0 with different
#                   checksums. Control: one job alone, exit 0, equal.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"

MLPA=("$RL_MLP" --steps 5 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}')
# machine JOB M PORT [EXTRA...]: one machine (rank M of 2) of the per-machine job JOB, in the
# background; output in $RL_TMP/JOB-M, exit status in $RL_TMP/JOB-M.rc when it ends
machine() {
    local job=$1 m=$2 port=$3; shift 3
    ( timeout -k 5 60 "$RL_LAUNCHER" --cpu -n 2 --num-machines 2 --machine-rank "$m" \
          --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "$job" --timeout 8 \
          --policy "$RL_POL/sgd-fused.yaml" "$@" -- "${MLPA[@]}" >"$RL_TMP/$job-$m" 2>&1
      echo $? >"$RL_TMP/$job-$m.rc" ) &
}
# wait_rc FILE...: until every exit status is written (at most 60 s)
wait_rc() {
    local f i
    for f in "$@"; do
        for ((i = 0; i < 600; i++)); do [ -s "$RL_TMP/$f.rc" ] && break; sleep 0.1; done
        [ -s "$RL_TMP/$f.rc" ] || { echo "  $f: no exit status after 60 s"; return 1; }
    done
}
rc_of() { cat "$RL_TMP/$1.rc"; }
show() { local f; for f in "$@"; do echo "--- $f (exit $(cat "$RL_TMP/$f.rc" 2>/dev/null))"; tail -n 8 "$RL_TMP/$f"; done; }
# the naming line: rank R of job MINE refuses a rank of job OTHER
names() { grep -m1 -E "accelshim rank $2\] .*belongs to job \"$4\".*not to this job \"$3\"" "$RL_TMP/$1"; }

# ---- cross-pairing, made certain by the start order
port=$(t_free_port 2)
machine B 1 "$port"; sleep 0.5   # B's rank 1 waits for a rank 0 at the port
machine A 0 "$port"; sleep 1.5   # A's rank 0 listens: B's rank 1 is the only one there
machine A 1 "$port"; sleep 0.3
machine B 0 "$port"
wait_rc A-0 A-1 B-0 B-1 || { show A-0 A-1 B-0 B-1; fail "cross-pairing: a launcher did not end"; }
echo "cross-pairing: exit A0 $(rc_of A-0) A1 $(rc_of A-1) B0 $(rc_of B-0) B1 $(rc_of B-1)"
for f in A-0 A-1 B-0 B-1; do
    [ "$(rc_of $f)" = 2 ] || { show A-0 A-1 B-0 B-1; fail "cross-pairing: $f exit $(rc_of $f), expected 2 (0: trained with another job's rank)"; }
done
names A-0 0 A B || { show A-0 B-1; fail "cross-pairing: rank 0 of job A did not name job B and its own"; }
names B-1 1 B A || { show A-0 B-1; fail "cross-pairing: rank 1 of job B did not name job A and its own"; }
echo "ok: cross-pairing: every rank refuses the other job's rank, exit 2, both jobs named"

# ---- a stranger with the job's address and rank 1, before the real rank 1
port=$(t_free_port 2)
machine S 1 "$port"; sleep 0.5
machine J 0 "$port"; sleep 1.5
machine J 1 "$port"
wait_rc J-0 J-1 S-1 || { show J-0 J-1 S-1; fail "stranger: a launcher did not end"; }
echo "stranger: exit J0 $(rc_of J-0) J1 $(rc_of J-1) stranger $(rc_of S-1)"
[ "$(rc_of J-0)" = 2 ] || { show J-0 S-1; fail "stranger: rank 0 exit $(rc_of J-0), expected 2"; }
[ "$(rc_of S-1)" = 2 ] || { show J-0 S-1; fail "stranger: the stranger exit $(rc_of S-1), expected 2"; }
[ "$(rc_of J-1)" != 0 ] || { show J-1; fail "stranger: the real rank 1 exit 0 without its rank 0"; }
names J-0 0 J S || { show J-0; fail "stranger: rank 0 did not name the stranger's job and its own"; }
! grep -q '\] step ' "$RL_TMP/S-1" || { show S-1; fail "stranger: the stranger trained a step with rank 0's data"; }
echo "ok: a stranger at rank 1 is refused (exit 2 both), trains no step; the real rank 1 ends (exit $(rc_of J-1))"

# ---- the per-machine form needs a job id
env -u ACCELSHIM_JOB_ID timeout 30 "$RL_LAUNCHER" --cpu -n 2 --num-machines 2 --machine-rank 0 \
    --main-process-ip 127.0.0.1 --main-process-port "$port" --policy "$RL_POL/sgd-fused.yaml" \
    -- "${MLPA[@]}" >"$RL_TMP/nojob" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q -- "--job-id" "$RL_TMP/nojob" && ! grep -q '^\[rank' "$RL_TMP/nojob" \
    || { cat "$RL_TMP/nojob"; fail "no job id: exit $rc, expected 2 naming --job-id before any rank starts"; }
grep -m1 -- "--job-id" "$RL_TMP/nojob"
echo "ok: the per-machine form without a job id is refused before any rank starts"

# ---- the issue's reproduction: two --launcher local jobs on one port, rank 0 late
# job S PORT: in the background; output $RL_TMP/L-S, status $RL_TMP/L-S.rc
local_job() {
    local s=$1 port=$2
    ( timeout -k 5 60 "$RL_LAUNCHER" --cpu -n 2 --launcher local --backend nccl --timeout 8 \
          --main-process-port "$port" --policy "$RL_TOP/examples/mlp.yaml" -- \
          bash -c '[ {rank} = 0 ] && sleep 0.'$((4 * s))'; exec "$0" "$@"' \
          "$RL_MLP" --steps 30 --seed "$s" --shard-rank '{rank}' --shard-count '{world_size}' \
          >"$RL_TMP/L-$s" 2>&1
      echo $? >"$RL_TMP/L-$s.rc" ) &
}
# verdict S: "ok" (exit 0, equal checksums), "refused" (exit 2, naming line), "unpaired" (exit 4:
# its ranks found no peer at the port within the timeout, said so) or what went wrong
verdict() {
    local s=$1 rc c0 c1
    rc=$(rc_of "L-$s")
    c0=$(sed -n 's/^\[rank 0\] checksum //p' "$RL_TMP/L-$s")
    c1=$(sed -n 's/^\[rank 1\] checksum //p' "$RL_TMP/L-$s")
    if [ "$rc" = 0 ] && [ -n "$c0" ] && [ "$c0" = "$c1" ]; then echo ok
    elif [ "$rc" = 2 ] && grep -q 'belongs to job .*, not to this job "' "$RL_TMP/L-$s"; then echo refused
    elif [ "$rc" = 4 ] && grep -q 'rendezvous.*did not all arrive' "$RL_TMP/L-$s"; then echo unpaired
    else echo "exit $rc, checksums rank 0 '$c0' rank 1 '$c1'"
    fi
}
port=$(t_free_port 2)
local_job 1 "$port"; wait_rc L-1 || fail "control: the job alone did not end"
[ "$(verdict 1)" = ok ] || { show L-1; fail "control: one job alone: $(verdict 1), expected exit 0 with equal checksums"; }
echo "ok: control: one job alone on the port trains (exit 0, equal checksums)"
refused=0 unpaired=0
for i in 1 2 3; do
    port=$(t_free_port 2)
    rm -f "$RL_TMP"/L-[12]*
    local_job 1 "$port"; local_job 2 "$port"
    wait_rc L-1 L-2 || { show L-1 L-2; fail "loop $i: a launcher did not end"; }
    v1=$(verdict 1) v2=$(verdict 2)
    echo "loop $i: job 1: $v1; job 2: $v2"
    for v in "$v1" "$v2"; do
        case $v in ok) ;; refused) refused=$((refused + 1)) ;; unpaired) unpaired=$((unpaired + 1)) ;;
            *) show L-1 L-2; fail "loop $i: a job ended '$v': neither its own ranks nor the naming line" ;; esac
    done
done
echo "ok: two jobs on one port: each trains with its own ranks or stops naming both ($refused refusals, $unpaired left without a peer (exit 4), in 6 jobs)"
