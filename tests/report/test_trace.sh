#!/usr/bin/env bash
# test_trace.sh — the timeline (shim/observe/trace.c) through accelerate-run --trace on 2 ranks (--cpu).
# Properties: (1) the merged DIR/trace.json parses, has one track per rank (pid 0 and 1, each
# named by a process_name event) and exactly one complete ("X") collective event per collective
# each rank's JSON report counts, each with its bytes; (2) --trace-launches adds one complete
# event per kernel launch (8 a step for sgd --update fused) and the memcpys; (3) the policy's
# debug.trace alone writes a strict JSON file per rank ({rank} replaced); (4) a rank that
# crashes (SIGSEGV) leaves a file cut short (no closing ']') that still merges, with every
# collective it finished; (5) a trace path that is a symlink is not followed (ash_file_create: O_EXCL|O_NOFOLLOW).
set -u
. "$(dirname "$0")/lib.sh"
eq_preconditions
RUN=$EQ_TOP/scripts/accelerate-run
S=5
echo "1..5"
pol=$EQ_POL/init-broadcast.yaml   # parameters broadcast once at linear_forward, gradients at sgd_update
MLP_ARGS=(--steps "$S" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')
launch() {   # launch LOG ARGS... : accelerate-run --cpu -n 2 on the bundled trainer
    local log=$1; shift
    timeout -k 5 120 "$RUN" --cpu -n 2 --backend mpi --policy "$pol" "$@" >"$log" 2>&1
}

d=$EQ_TMP/t1; ok=0
if launch "$d.log" --trace "$d" --env "ACCELSHIM_REPORT=$d/report-{rank}.json" -- "$EQ_MLP" "${MLP_ARGS[@]}"; then
    grep -q "trace: 2 rank file(s), [0-9]* events -> $d/trace.json" "$d.log" || { ok=1; echo "# no merge line:"; eq_show "$d.log"; }
    rp_py "$d" <<'PY' || ok=1
import json, sys
d = sys.argv[1]
ev = json.load(open(d + "/trace.json"))
bad = 0
pids = sorted({e["pid"] for e in ev})
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
if pids != [0, 1] or names != {0: "rank 0", 1: "rank 1"}:
    print("# tracks: pids %s, names %s" % (pids, names)); bad = 1
# every thread that has events is named, and by what it is (the program's main thread: "main")
tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
tids = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "X" or e.get("ph") == "i"}
if any(n == "exit" for n in tnames.values()) or not any(n == "main" for n in tnames.values()) \
        or any(t not in tnames for t in tids):
    print("# thread labels: %s for the threads with events %s" % (tnames, sorted(tids))); bad = 1
for r in (0, 1):
    rep = json.load(open("%s/report-%d.json" % (d, r)))["collectives"]
    coll = [e for e in ev if e["pid"] == r and e.get("cat") == "collective" and e["ph"] == "X"]
    want = rep["allreduces"] + rep["broadcasts"]
    if len(coll) != want or any(e["dur"] < 0 or e["args"]["bytes"] <= 0 for e in coll):
        print("# rank %d: %d collective events, report says %d" % (r, len(coll), want)); bad = 1
    print("# rank %d: %d collective events (= report), %d sync instants" % (
        r, len(coll), sum(1 for e in ev if e["pid"] == r and e.get("cat") == "sync")))
sys.exit(bad)
PY
else ok=1; eq_show "$d.log"; fi
tap_case $ok "merged trace parses: one track per rank, one complete event per collective (= the JSON report)"

d=$EQ_TMP/t2; ok=0
if launch "$d.log" --trace "$d" --trace-launches -- "$EQ_MLP" "${MLP_ARGS[@]}"; then
    rp_py "$d" $S <<'PY' || ok=1
import json, sys
d, S = sys.argv[1], int(sys.argv[2])
ev = json.load(open(d + "/trace.json"))
bad = 0
for r in (0, 1):
    l = [e for e in ev if e["pid"] == r and e.get("cat") == "launch" and e["ph"] == "X"]
    m = [e for e in ev if e["pid"] == r and e.get("cat") == "memcpy" and e["ph"] == "X"]
    upd = sum(1 for e in l if e["name"].startswith("sgd_update"))
    print("# rank %d: %d launch events (%d sgd_update), %d memcpy events" % (r, len(l), upd, len(m)))
    if len(l) != 8 * S or upd != S or len(m) < 3 * S:
        bad = 1
sys.exit(bad)
PY
else ok=1; eq_show "$d.log"; fi
tap_case $ok "--trace-launches: one event per kernel launch (8 a step) and the memcpys"

d=$EQ_TMP/t3; mkdir -p "$d"; ok=0
sed '$a debug:\n  trace: "'"$d"'/p-{rank}.json"' "$pol" >"$d/pol.yaml"
if timeout -k 5 120 "$RUN" --cpu -n 2 --backend mpi --policy "$d/pol.yaml" -- "$EQ_MLP" "${MLP_ARGS[@]}" >"$d.log" 2>&1; then
    for r in 0 1; do
        python3 -m json.tool "$d/p-$r.json" >/dev/null 2>&1 || { ok=1; echo "# $d/p-$r.json is not strict JSON"; }
        [ "$(tail -c 2 "$d/p-$r.json")" = "]" ] || { ok=1; echo "# $d/p-$r.json does not end with ]"; }
    done
else ok=1; eq_show "$d.log"; fi
tap_case $ok "debug.trace in the policy: strict JSON per rank, {rank} replaced"

d=$EQ_TMP/t4; ok=0
launch "$d.log" --trace "$d" -- "$EQ_MLP" "${MLP_ARGS[@]}" --segv-rank 1 --segv-at-step 3
rc=$?
[ $rc -ne 0 ] || { ok=1; echo "# the crashing run exited 0"; }
if [ -f "$d/trace-1.json" ] && [ "$(tail -c 2 "$d/trace-1.json")" != "]" ]; then
    echo "# rank 1's file is cut short: $(tail -c 60 "$d/trace-1.json" | tr '\n' ' ')"
else ok=1; echo "# rank 1's trace is missing or complete"; fi
grep -q "trace: 2 rank file(s).*cut short.*trace-1.json" "$d.log" || { ok=1; echo "# merge line:"; grep "trace" "$d.log" | sed 's/^/#   /'; }
[ $ok = 0 ] && { rp_py "$d" <<'PY' || ok=1; }
import json, sys
ev = json.load(open(sys.argv[1] + "/trace.json"))
n = sum(1 for e in ev if e["pid"] == 1 and e.get("cat") == "collective")
print("# rank 1 finished %d collectives before the crash (1 broadcast + 3 all-reduces expected)" % n)
sys.exit(0 if n == 4 else 1)
PY
tap_case $ok "a rank that crashes leaves a trace cut short that still merges, with its finished collectives"

d=$EQ_TMP/t5; mkdir -p "$d"; ok=0
echo precious >"$d/target"; ln -s "$d/target" "$d/trace.json"
LD_LIBRARY_PATH=$EQ_BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS ACCELSHIM_TRACE="$d/trace.json" \
    LD_PRELOAD=$EQ_SHIM "$EQ_MLP" --steps 2 >"$d/out.log" 2>&1 || { ok=1; eq_show "$d/out.log"; }
[ "$(cat "$d/target")" = precious ] || { ok=1; echo "# the symlink's target was overwritten"; }
grep -q "cannot create the trace .*File exists (accelshim never overwrites a file or follows a symlink" "$d/out.log" || { ok=1; echo "# no warning:"; eq_show "$d/out.log"; }
tap_case $ok "a trace path that is a symlink is not followed (ash_file_create: O_EXCL|O_NOFOLLOW), with a warning"
exit "$RP_FAILED"
