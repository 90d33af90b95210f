#!/usr/bin/env bash
# Property: cuRAND's host API on hostcurand gives NVIDIA's device-API sequences (cr_equiv.cu: every
# generator XORWOW / PHILOX4_32_10 / MRG32K3A / MTGP32 / SOBOL32 / SCRAMBLED_SOBOL32 x every distribution, device and host generators,
# offsets, calls that continue one another; bits and uniforms bit-exact, normals within 4e-6 /
# 1e-13 relative), its documented error statuses, and curandSetStream's ordering against kernels
# on the same stream. The program is linked against NVIDIA's -lcurand and finds hostcurand by
# LD_LIBRARY_PATH, as a user's program does. Controls: another seed and a shifted offset must be
# told apart from the host API's results; a fill queued after curandGenerate must show.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/tests
P=$B/hostcurand/cr_equiv
for f in "$P" "$B/hostcurand/libcurand.so.10" "$B/hostcudart/libcudart.so.13" "$B/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
for c in equiv mtgp sobol status stream control; do
    LD_LIBRARY_PATH="$B/hostcurand:$B/hostcudart:$B/hostcuda" timeout 300 "$P" "$c" >"$tmp/$c.out" 2>"$tmp/$c.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL $c: exit $rc"; grep -v '^ok' "$tmp/$c.out" | head -12; tail -3 "$tmp/$c.err"
        fails=$((fails + 1))
    else
        echo "ok $c: $(grep -c '^ok' "$tmp/$c.out") checks"
    fi
done
# the library the program ran on is hostcurand (NVIDIA's would answer status 203 on hostcuda)
LD_LIBRARY_PATH="$B/hostcurand:$B/hostcudart:$B/hostcuda" LD_DEBUG=libs timeout 60 "$P" status \
    >/dev/null 2>"$tmp/ld.err"
if ! grep -q "calling init: $B/hostcurand/libcurand.so.10" "$tmp/ld.err"; then
    echo "FAIL: cr_equiv did not load $B/hostcurand/libcurand.so.10"; grep libcurand "$tmp/ld.err" | head -3
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "PASS: hostcurand = NVIDIA's device API" || echo "FAIL: $fails case(s)"
[ "$fails" -eq 0 ]
