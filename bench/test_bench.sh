#!/usr/bin/env bash
# test_bench.sh — proves that scripts/run-bench.sh (`make bench`) reports what its benchmarks did:
# (1) with three stand-in benchmarks (one that ran and handed over figures, one that skipped with
# exit 77, one that failed) it exits non-zero, and results.json parses as a JSON array with one
# object per benchmark carrying status, reason, ratios/raw (numbers as numbers, nan as null,
# words as strings), notes and the machine; (2) bench/allreduce.sh, run small (4096 floats, one
# iteration, mpi and nccl, wires same/bf16/f16), reduces correctly at the sync point on 2 ranks:
# every row's check (all elements = the mean, one all-reduce per launch, backend as asked) is ok;
# (3) bench/overlap.sh, run small (3 layers x 4096 floats, 4 steps, one round), ends with both
# ranks bit-identical and, where the build takes ready points, with overlap bit-identical to
# without: every backend's check is ok and its ratios are present (numbers or null).
# Timings are never asserted. Skips (77) without python3 (to parse JSON) or without what the
# allreduce benchmark needs (it then exits 77 itself).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed (JSON check)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
fails=0

# --- 1: stand-in benchmarks -------------------------------------------------------------------
mkdir -p "$tmp/b"
cat >"$tmp/b/ran.sh" <<'EOF'
#!/bin/sh
echo "a table"
{ echo "ratio speedup 0.95"; echo "raw ms 12.5"; echo "raw bad nan"; echo "raw word \"quoted\" text"
  echo "note a note"; } >>"$BENCH_RESULTS"
EOF
printf '#!/bin/sh\necho "SKIP: no widget"\nexit 77\n' >"$tmp/b/skips.sh"
printf '#!/bin/sh\necho "boom"\nexit 3\n' >"$tmp/b/fails.sh"
chmod +x "$tmp"/b/*.sh
ACCELSHIM_BENCH_OUT=$tmp/out bash "$top/scripts/run-bench.sh" "$tmp/b/ran.sh" "$tmp/b/skips.sh" \
    "$tmp/b/fails.sh" >"$tmp/run1.log" 2>&1
rc=$?
python3 - "$tmp/out/results.json" "$rc" >"$tmp/check1.log" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = [("ran", "ok", 0), ("skips", "skipped", 77), ("fails", "failed", 3)]
assert int(sys.argv[2]) != 0, "run-bench.sh exited 0 although a benchmark failed"
assert [(o["name"], o["status"], o["exit"]) for o in d] == want, [(o["name"], o["status"], o["exit"]) for o in d]
r = d[0]
assert r["ratios"] == {"speedup": 0.95}, r["ratios"]
assert r["raw"] == {"ms": 12.5, "bad": None, "word": '"quoted" text'}, r["raw"]
assert "a note" in r["notes"], r["notes"]
assert d[1]["reason"] == "SKIP: no widget", d[1]["reason"]
assert d[2]["reason"].startswith("exit 3"), d[2]["reason"]
for o in d:
    m = o["machine"]
    assert m["arch"] and m["nproc"] >= 1 and m["cpu_model"] and o["date"] and o["git"], o
print("results.json: 3 objects, statuses ok/skipped/failed, figures typed, machine present")
EOF
rc=$?
if [ $rc -eq 0 ]; then
    echo "ok 1 - run-bench.sh: results.json parses; ok/skipped/failed reported with figures and machine"
else
    sed 's/^/# /' "$tmp/check1.log" "$tmp/run1.log" | tail -30
    fails=$((fails + 1))
    echo "not ok 1 - run-bench.sh: results.json parses; ok/skipped/failed reported with figures and machine"
fi

# --- 2: the allreduce benchmark's sync point reduces correctly (small) --------------------------
COUNT=4096 ITERS=1 WARMUP=1 ROUNDS=1 DIAG=0 ACCELSHIM_BENCH_OUT=$tmp/out2 \
    bash "$top/scripts/run-bench.sh" "$top/bench/allreduce.sh" >"$tmp/run2.log" 2>&1
python3 - "$tmp/out2/results.json" >"$tmp/check2.log" 2>&1 <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))[0]
if o["status"] == "skipped":
    print("SKIPPED:", o["reason"]); sys.exit(77)
assert o["status"] == "ok", o
checks = {k: v for k, v in o["raw"].items() if k.endswith("_check")}
rows = [f"{b}_{w}_check" for b in ("mpi", "nccl") for w in ("same", "bf16", "f16")]
missing = [r for r in rows if r not in checks and not any("nccl rows skipped" in n for n in o["notes"])]
assert not missing, f"rows missing: {missing}"
bad = {k: v for k, v in checks.items() if v != "ok"}
assert not bad, f"rows whose check failed: {bad}"
print("allreduce rows ok:", sorted(checks))
EOF
rc=$?
if [ $rc -eq 0 ]; then
    echo "ok 2 - allreduce bench (4096 floats, 2 ranks): every backend/wire row reduces to the mean"
elif [ $rc -eq 77 ]; then
    echo "ok 2 - allreduce bench # SKIP $(tail -1 "$tmp/check2.log")"
else
    sed 's/^/# /' "$tmp/check2.log" "$tmp/run2.log" | tail -30
    fails=$((fails + 1))
    echo "not ok 2 - allreduce bench (4096 floats, 2 ranks): every backend/wire row reduces to the mean"
fi

# --- 3: the overlap benchmark's runs agree (small) ---------------------------------------------
LAYERS=3 SIZE=4096 STEPS=4 ROUNDS=1 ACCELSHIM_BENCH_OUT=$tmp/out3 \
    bash "$top/scripts/run-bench.sh" "$top/bench/overlap.sh" >"$tmp/run3.log" 2>&1
python3 - "$tmp/out3/results.json" >"$tmp/check3.log" 2>&1 <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))[0]
if o["status"] == "skipped":
    print("SKIPPED:", o["reason"]); sys.exit(77)
assert o["status"] == "ok", o
raw, ratios = o["raw"], o["ratios"]
checks = {k: v for k, v in raw.items() if k.endswith("_check")}
assert "mpi_check" in checks, f"no mpi row: {raw}"
bad = {k: v for k, v in checks.items() if v != "ok"}
assert not bad, f"rows whose check failed: {bad}"
for k in ("exposed_comm_with_over_without", "step_with_over_without"):
    assert k in ratios, f"ratio {k} missing: {ratios}"
n = raw["mpi_without_collectives"]
assert n >= 4, f"without overlap: {n} all-reduces, expected at least 4 (one per step)"
print("overlap rows ok:", sorted(checks), "ready points:", raw["ready_points_supported"])
EOF
rc=$?
if [ $rc -eq 0 ]; then
    echo "ok 3 - overlap bench (3 layers, 2 ranks): ranks identical; with overlap identical to without"
elif [ $rc -eq 77 ]; then
    echo "ok 3 - overlap bench # SKIP $(tail -1 "$tmp/check3.log")"
else
    sed 's/^/# /' "$tmp/check3.log" "$tmp/run3.log" | tail -30
    fails=$((fails + 1))
    echo "not ok 3 - overlap bench (3 layers, 2 ranks): ranks identical; with overlap identical to without"
fi
[ $fails -eq 0 ]
