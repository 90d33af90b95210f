#!/usr/bin/env bash
# test_report.sh — the exit report of shim/observe/report.c, on 2 ranks of the bundled trainer (mpi).
# Properties: (1) ACCELSHIM_REPORT=PATH ({rank}) writes JSON that parses, and its counts are
# what the trainer did: sgd --update fused + a parameters rule at linear_forward: gradients
# hits = allreduces = steps, parameters hits = 2 x steps (two forward launches a step) and ONE
# broadcast (one buffer), bytes on the wire = steps x 676 x 4 + 2704; (2) fused adam per-tensor:
# hits = 4 x steps, allreduces = 4 + (steps - 1) of which steps - 1 fused, 3 x (steps - 1)
# launches skipped; (3) bf16 wire: one cast per all-reduce, wire bytes = payload / 2; (4) rank
# 0 gathers the job (both ranks' figures) and prints one job line; (5) a report path that is a
# symlink is not followed (ash_file_create: O_EXCL|O_NOFOLLOW): the link's target is untouched, a warning names it.
set -u
. "$(dirname "$0")/lib.sh"
export ACCELSHIM_LOG=info
eq_preconditions
S=6
echo "1..5"

pol=$EQ_POL/init-broadcast.yaml   # parameters broadcast once at linear_forward, gradients at sgd_update
d=$EQ_TMP/sgd; mkdir -p "$d"
ok=0
ACCELSHIM_REPORT="$d/report-{rank}.json" eq_ranks 2 mpi "$pol" "$d/rank" --steps $S --batch 4 --optimizer sgd --update fused || { ok=1; eq_show "$d"/rank.*.log; }
[ $ok = 0 ] && { rp_py "$d" $S <<'PY' || ok=1; }
import json, sys
d, S = sys.argv[1], int(sys.argv[2])
bad = 0
for r in (0, 1):
    rep = json.load(open("%s/report-%d.json" % (d, r)))
    g = [x for x in rep["rules"] if x["list"] == "gradients"][0]
    p = [x for x in rep["rules"] if x["list"] == "parameters"][0]
    want = {"g.hits": S, "g.allreduces": S, "p.hits": 2 * S, "p.broadcasts": 1,
            "wire_bytes": S * 676 * 4 + 2704, "rank": r, "world_size": 2}
    got = {"g.hits": g["hits"], "g.allreduces": g["allreduces"], "p.hits": p["hits"],
           "p.broadcasts": p["broadcasts"], "wire_bytes": rep["collectives"]["wire_bytes"],
           "rank": rep["rank"], "world_size": rep["world_size"]}
    for k in want:
        if want[k] != got[k]:
            print("# rank %d %s: expected %s, got %s" % (r, k, want[k], got[k])); bad = 1
    c = rep["collectives"]
    if not (0 <= c["comm_s"] <= rep["wall_s"] and c["timed_by_events"] + c["timed_on_host"] == S + 1):
        print("# rank %d timing: %s (wall %s)" % (r, c, rep["wall_s"])); bad = 1
    if rep["peak_device_bytes"] <= 0:
        print("# rank %d: no peak device memory" % r); bad = 1
print("# rank 0: %d hits, %d collectives, %d wire bytes, comm %.1f%% of wall" % (
    g["hits"] + p["hits"], c["allreduces"] + c["broadcasts"], c["wire_bytes"], 100 * c["comm_share"]))
sys.exit(bad)
PY
tap_case $ok "JSON report parses on both ranks; counts = steps x rules (sgd fused + broadcast once)"

d=$EQ_TMP/fused; mkdir -p "$d"; ok=0
ACCELSHIM_LOG=info ACCELSHIM_REPORT="$d/report-{rank}.json" eq_ranks 2 mpi "$EQ_POL/adam-per-tensor-fused.yaml" "$d/rank" --steps $S --batch 4 --optimizer adam --update per-tensor || { ok=1; eq_show "$d"/rank.*.log; }
# the exit line counts collectives too, not launches: a skipped launch is no all-reduce
for r in 0 1; do
  line=$(grep -o 'sync: [0-9]* all-reduce(s)' "$d/rank.$r.log")
  [ "$line" = "sync: $((4 + S - 1)) all-reduce(s)" ] || { echo "# rank $r: expected \"sync: $((4 + S - 1)) all-reduce(s)\", got \"$line\""; ok=1; }
done
[ $ok = 0 ] && { rp_py "$d" $S <<'PY' || ok=1; }
import json, sys
d, S = sys.argv[1], int(sys.argv[2])
bad = 0
for r in (0, 1):
    g = json.load(open("%s/report-%d.json" % (d, r)))["rules"][0]
    want = {"hits": 4 * S, "allreduces": 4 + S - 1, "fused_allreduces": S - 1,
            "fused_skipped_launches": 3 * (S - 1), "fuse": "fused", "wire_bytes": S * 676 * 4}
    for k in want:
        if g[k] != want[k]:
            print("# rank %d %s: expected %s, got %s" % (r, k, want[k], g[k])); bad = 1
print("# rank 1: %s" % g)
sys.exit(bad)
PY
tap_case $ok "fused per-tensor: 4 x steps hits, 4 + (steps-1) all-reduces (report and exit line), steps-1 fused, 3 x (steps-1) skipped"

d=$EQ_TMP/bf16; mkdir -p "$d"; ok=0
eq_policy "$EQ_POL/sgd-fused.yaml" bf16 "$d/p.yaml"
ACCELSHIM_REPORT="$d/report-{rank}.json" eq_ranks 2 mpi "$d/p.yaml" "$d/rank" --steps $S --batch 4 --optimizer sgd --update fused || { ok=1; eq_show "$d"/rank.*.log; }
[ $ok = 0 ] && { rp_py "$d" $S <<'PY' || ok=1; }
import json, sys
d, S = sys.argv[1], int(sys.argv[2])
rep = json.load(open("%s/report-0.json" % d))
c, k = rep["collectives"], rep["casts"]
print("# casts %s, bytes %d, wire bytes %d" % (k, c["bytes"], c["wire_bytes"]))
sys.exit(0 if k["collectives_with_cast"] == S == c["allreduces"] and c["wire_bytes"] * 2 == c["bytes"]
         and k["elements_cast"] == 2 * S * 676 else 1)
PY
tap_case $ok "bf16 wire: one cast per all-reduce (down and up), wire bytes = payload / 2"

d=$EQ_TMP/sgd; ok=0
if ! grep -q "INFO report: job: 2 rank(s); slowest rank [01] (wall [0-9.]* s); mean time in communication [0-9.]*% of wall time" "$d/rank.0.log"; then
    ok=1; echo "# rank 0's job line is missing:"; grep "report" "$d/rank.0.log" | sed 's/^/#   /'
fi
grep -q "INFO report: job:" "$d/rank.1.log" && { ok=1; echo "# rank 1 printed a job line"; }
grep -q "INFO report: rank 1: wall" "$d/rank.1.log" || { ok=1; echo "# rank 1 has no rank line"; }
[ $ok = 0 ] && { rp_py "$d" <<'PY' || ok=1; }
import json, sys
j = json.load(open(sys.argv[1] + "/report-0.json")).get("job")
r1 = json.load(open(sys.argv[1] + "/report-1.json"))
print("# job: %s" % j)
ok = j and j["world_size"] == 2 and len(j["ranks"]) == 2 and j["slowest_rank"] in (0, 1) \
     and 0 <= j["mean_comm_share"] <= 1 and j["ranks"][1]["collectives"] == r1["collectives"]["allreduces"] + r1["collectives"]["broadcasts"] \
     and "job" not in r1
sys.exit(0 if ok else 1)
PY
grep "INFO report: job:" "$d/rank.0.log" | sed 's/^/# /'
tap_case $ok "rank 0 gathers both ranks: one job line (slowest rank, mean comm share) and a job object"

d=$EQ_TMP/link; mkdir -p "$d"; ok=0
echo precious >"$d/target"; ln -s "$d/target" "$d/report.json"
LD_LIBRARY_PATH=$EQ_BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS ACCELSHIM_REPORT="$d/report.json" \
    LD_PRELOAD=$EQ_SHIM "$EQ_MLP" --steps 2 >"$d/out.log" 2>&1 || { ok=1; eq_show "$d/out.log"; }
[ "$(cat "$d/target")" = precious ] || { ok=1; echo "# the symlink's target was overwritten"; }
grep -q "cannot write the JSON report .*File exists (accelshim never overwrites a file or follows a symlink" "$d/out.log" || { ok=1; echo "# no warning:"; eq_show "$d/out.log"; }
tap_case $ok "a report path that is a symlink is not followed (ash_file_create: O_EXCL|O_NOFOLLOW), with a warning"
exit "$RP_FAILED"
