#!/usr/bin/env bash
# Property: a slow or hung step cannot eat gpu-check's device window, and what was not run says
# so. In the dry run (GPU_CHECK_FAKE=hostcuda): (1) a step that never finishes
# (GPU_CHECK_TEST_HANG=ptx-load) is killed at its check's cap (GPU_CHECK_CAP_S=3) and FAILs
# naming that, and the next check still runs and PASSes; (2) past the hard stop
# (GPU_CHECK_HARD_S=9, a hung driver check) the hung step is killed and every later check is
# "not run: time"; (3) with a spent budget (GPU_CHECK_BUDGET_S=0) no check starts, each is
# "not run: time", exit 3, and report.json is complete and lists them; (4) a TERM (the device
# tool's time limit) ends the running step at once: it is "stopped by a signal while running",
# the rest "not run", report.json complete; (5) bad settings exit 2 with a message. Control: the same checks without the hang pass (exit 0). Skips (77) unbuilt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
for f in "$B/tests/hostcuda/libcuda.so.1" "$B/libaccelshim.so" "$B/tests/gpu/gpu_routing" "$B/tests/gpu/gpu_probe"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
gc() {   # gc NAME ENV...: the dry run into $tmp/NAME, output $tmp/NAME.out; sets rc
    local n=$1; shift
    env GPU_CHECK_FAKE=hostcuda "$@" timeout -k 10 300 "$ROOT/scripts/gpu-check.sh" "$tmp/$n" >"$tmp/$n.out" 2>&1; rc=$?
    sed "s/^/  $n: /" "$tmp/$n.out" | grep -v -- '----'
}

gc control GPU_CHECK_ONLY='^(ptx-load|remap)$'
[ $rc -eq 0 ] || bad "control: exit $rc without a hang (want 0)"

gc hang GPU_CHECK_ONLY='^(ptx-load|remap)$' GPU_CHECK_TEST_HANG=ptx-load GPU_CHECK_CAP_S=3
[ $rc -eq 1 ] || bad "hung step: exit $rc (want 1)"
grep -Eq '^FAIL ptx-load .*did not finish: killed at the check.s cap' "$tmp/hang/report.txt" || bad "the hung check did not FAIL at its cap"
grep -Eq '^PASS remap ' "$tmp/hang/report.txt" || bad "the check after the hung one did not run and pass"
[ -s "$tmp/hang/logs.tar.gz" ] || bad "no logs.tar.gz after a hung step"

gc hard GPU_CHECK_ONLY='^(driver|ptx-load|remap)$' GPU_CHECK_TEST_HANG=driver GPU_CHECK_HARD_S=9
grep -Eq '^FAIL driver .*did not finish' "$tmp/hard/report.txt" || bad "past the hard stop: the hung driver check was not killed"
for c in ptx-load remap; do
    grep -Eq "^SKIP $c .*not run: time" "$tmp/hard/report.txt" || bad "past the hard stop: $c is not 'not run: time'"
done

# stopped from outside (as the device tool's time limit does): the running step is ended at once
env GPU_CHECK_FAKE=hostcuda GPU_CHECK_ONLY='^(driver|ptx-load|remap)$' GPU_CHECK_TEST_HANG=ptx-load \
    timeout -k 10 300 "$ROOT/scripts/gpu-check.sh" "$tmp/term" >"$tmp/term.out" 2>&1 &
tpid=$!
for _ in $(seq 600); do grep -q -- '^---- ptx-load' "$tmp/term.out" 2>/dev/null && break; sleep 0.2; done
sleep 1   # the hung step has started
kill -TERM "$tpid" || bad "TERM: no gpu-check process to stop"   # timeout passes it on to gpu-check
wait "$tpid"
sed 's/^/  term: /' "$tmp/term.out" | grep -v -- '----'
grep -Eq '^SKIP ptx-load .*stopped by a signal while running' "$tmp/term/report.txt" 2>/dev/null || bad "TERM: the running check was not reported as stopped while running"
grep -Eq '^SKIP remap .*not run: stopped by a signal' "$tmp/term/report.txt" 2>/dev/null || bad "TERM: the next check is not 'not run: stopped by a signal'"
grep -q '"complete":true' "$tmp/term/report.json" 2>/dev/null || bad "TERM: report.json was not completed"

gc budget GPU_CHECK_ONLY='^(driver|routing|remap)$' GPU_CHECK_BUDGET_S=0
[ $rc -eq 3 ] || bad "spent budget: exit $rc (want 3: skipped, none failed)"
for c in driver routing remap; do
    grep -Eq "^SKIP $c .*not run: time" "$tmp/budget/report.txt" || bad "spent budget: $c is not 'not run: time'"
done
if command -v python3 >/dev/null; then
    python3 - "$tmp/budget/report.json" <<'PY' || bad "report.json of the spent-budget run is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
names = [c["name"] for c in r["checks"] if c["status"] == "SKIP" and c["reason"].startswith("not run: time")]
assert names == ["driver", "routing", "remap"], names
assert r["complete"] is True and r["exit"] == 3, (r["complete"], r["exit"])
print("report.json: not run: %s" % ", ".join(names))
PY
fi

for bad_env in GPU_CHECK_PROFILE=quick GPU_CHECK_BUDGET_S=soon GPU_CHECK_CAP_S=-1; do
    out=$(env GPU_CHECK_FAKE=hostcuda "$bad_env" timeout 60 "$ROOT/scripts/gpu-check.sh" "$tmp/bad" 2>&1); r=$?
    echo "$bad_env: exit $r: $out"
    [ $r -eq 2 ] && grep -q "${bad_env%%=*}" <<<"$out" || bad "$bad_env: exit $r, want 2 with a message naming it"
done
[ $fails -eq 0 ] || { echo "FAIL: $fails problems"; exit 1; }
echo "PASS: a hung step is killed at its cap or the hard stop, later checks run or say 'not run: time'"
