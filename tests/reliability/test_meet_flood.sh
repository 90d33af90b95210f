#!/usr/bin/env bash
# Property: strangers on the exit meeting's port cost a closed socket, never a real rank's place
# (issue 23, item 5). A per-machine job of two ranks (the ranks meet at exit over TCP at rank 0,
# collectives/coll_meet.c); while it trains, a bounded local flood (900 TCP connections to
# 127.0.0.1 only, silent, held open, plus 20 that send a wrong hello) reaches rank 0's meeting
# port. The job must end as without the flood: both machines exit 0, nobody named missing, and
# rank 0 says it closed the strangers' connections (so the flood did reach it). Before: the real
# rank 1 was reset and the job ended with exit 4 ("rank 0 ... has ended").
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostnccl/libnccl.so.2" "$RL_LAUNCHER"
command -v python3 >/dev/null || skip "python3 not installed"

port=$(t_free_port 2)
common=(--cpu -n 2 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port"
        --job-id "flood-$port" --timeout 10 --policy "$RL_POL/sgd-fused.yaml")
prog=(-- "$RL_MLP" --steps 4000 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' --save "$RL_TMP/p{rank}.bin")
timeout -k 5 120 "$RL_LAUNCHER" --machine-rank 1 "${common[@]}" "${prog[@]}" >"$RL_TMP/m1" 2>&1 &
m1=$!
timeout -k 5 120 "$RL_LAUNCHER" --machine-rank 0 "${common[@]}" --env ACCELSHIM_LOG=debug "${prog[@]}" >"$RL_TMP/m0" 2>&1 &
m0=$!
meet=''
for ((i = 0; i < 300; i++)); do
    meet=$(sed -n 's/.*the ranks meet at exit on port \([0-9]*\) .*/\1/p' "$RL_TMP/m0" | head -n 1)
    [ -n "$meet" ] && break
    sleep 0.05
done
# rank 0's trainer held (SIGSTOP) until the flood is in place, so that the job cannot end first
r0=$(pgrep -f -- "--save $RL_TMP/p0.bin" | while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mlp ] && echo "$p"; done | head -n 1)
[ -n "$r0" ] && kill -STOP "$r0"
[ -n "$meet" ] || { kill "$m0" "$m1" 2>/dev/null; tail "$RL_TMP/m0"; fail "rank 0 did not say its meeting port"; }
[ -n "$r0" ] || fail "rank 0's trainer not found"
grep -q 'checksum' "$RL_TMP/m0" && fail "the job ended before the flood (raise --steps): the test proves nothing"
# the flood: 900 silent connections kept open (each one rank 0 closes is opened again, as an
# adversary would), 20 more with a wrong hello; 127.0.0.1 only, at most 60 s
python3 - "$meet" >"$RL_TMP/flood" 2>&1 <<'EOF' &
import errno, socket, struct, sys, time
port = int(sys.argv[1])
def conn(hello):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    if hello:   # the right form with a guessed token, once it can be sent
        time.sleep(0.01)
        try: s.send(struct.pack("!IIII", 0x41534d31, 1, 2, 0) + b"\0" * 16)
        except OSError: pass
    return s
socks = [conn(i >= 900) for i in range(920)]
print("flood: %d connections" % len(socks), flush=True)
again, end = 0, time.time() + 60
while time.time() < end:
    time.sleep(0.1)
    for i, s in enumerate(socks):
        try:
            if s.recv(64) == b"":
                raise OSError
        except BlockingIOError:
            continue
        except OSError:
            pass
        s.close()
        socks[i] = conn(i >= 900)
        again += 1
    if again:
        print("flood: %d connections opened again" % again, flush=True)
        again = 0
EOF
flood=$!
for ((i = 0; i < 200; i++)); do grep -q "flood: 920 connections" "$RL_TMP/flood" && break; sleep 0.1; done
kill -CONT "$r0"
rc0=0; wait "$m0" || rc0=$?
rc1=0; wait "$m1" || rc1=$?
kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null
echo "with 920 strangers on rank 0's meeting port $meet: machine 0 exit $rc0, machine 1 exit $rc1"
show() { for f in m0 m1 flood; do echo "--- $f"; grep -v 'DEBUG' "$RL_TMP/$f" | tail -n 12; done; }
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || { show; fail "the flood failed the job: exit $rc0 / $rc1, expected 0 / 0"; }
! grep -q "did not reach the end\|cannot be reached" "$RL_TMP/m0" "$RL_TMP/m1" || { show; fail "a rank was named missing"; }
grep -m1 "exit meeting: .*strangers' connection" "$RL_TMP/m0" || { show; fail "rank 0 did not say it closed the strangers' connections (did the flood reach it?)"; }
echo "ok: 920 strangers on the meeting's port cost closed sockets; the job ends with exit 0 on both machines"
