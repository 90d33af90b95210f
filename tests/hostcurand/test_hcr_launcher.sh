#!/usr/bin/env bash
# Property: `accelerate-run --cpu -n 1 -- PROGRAM` puts hostcurand on the rank's library path with
# nothing set by the user, so a program linked -lcurand (cr_equiv) gets hostcurand's numbers and
# statuses, not NVIDIA's library (which answers CURAND_STATUS_INITIALIZATION_FAILED on hostcuda).
# Control: the same program with only hostcudart + hostcuda on its path (NVIDIA's libcurand.so.10
# from the toolkit, when there) fails its status case, so the check can tell the two apart.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
P=$B/tests/hostcurand/cr_equiv
for f in "$P" "$B/libaccelshim.so" "$B/tests/hostcurand/libcurand.so.10" "$B/tests/hostcudart/libcudart.so.13"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
env -u LD_LIBRARY_PATH -u LD_PRELOAD timeout 300 "$ROOT/scripts/accelerate-run" --cpu -n 1 -- "$P" status \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -Eq '^(\[rank 0\] )?status: 0 failure\(s\)' "$tmp/out"; then
    echo "FAIL: accelerate-run --cpu -n 1 -- cr_equiv status: exit $rc"; grep -v '^ok' "$tmp/out" | head -8; tail -5 "$tmp/err"
    fails=$((fails + 1))
else
    echo "ok: accelerate-run --cpu -n 1 -- cr_equiv status: $(grep -Ec '^(\[rank 0\] )?ok' "$tmp/out") checks on hostcurand"
fi
# shellcheck disable=SC2016  # expanded by the rank's shell
env -u LD_LIBRARY_PATH -u LD_PRELOAD timeout 60 "$ROOT/scripts/accelerate-run" --cpu -n 1 -- sh -c 'echo "LDP=$LD_LIBRARY_PATH"' \
    >"$tmp/ldp" 2>&1
grep -q "LDP=.*$B/tests/hostcurand" "$tmp/ldp" || { echo "FAIL: hostcurand is not on the rank's path: $(grep LDP= "$tmp/ldp")"; fails=$((fails + 1)); }
NV=${CUDA_HOME:-/usr/local/cuda}/lib64
if [ -f "$NV/libcurand.so.10" ]; then
    # (in a subshell: NVIDIA's library may crash the program, and the shell's report goes to the log)
    (LD_LIBRARY_PATH="$B/tests/hostcudart:$B/tests/hostcuda:$NV" timeout 60 "$P" status; exit $?) >"$tmp/nv" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "FAIL control: cr_equiv status passed on NVIDIA's libcurand"; fails=$((fails + 1))
    else echo "ok control: on NVIDIA's libcurand (hostcuda) the status case fails (exit $rc) $(grep -m1 FAIL "$tmp/nv")"; fi
fi
[ "$fails" -eq 0 ] && echo PASS || echo "FAIL: $fails"
[ "$fails" -eq 0 ]
