#!/usr/bin/env bash
# Property: an ordinary Thrust program (rt_thrust.cu, built with nvcc's default code and -cudart
# shared) runs on hostcuda's runtime with CUB's kernels interpreted from their PTX, and each of
# its 11 algorithms equals the C++ standard library's result on the same input; under the shim
# (world 1) its output is identical and the shim counts its launches. Controls: --corrupt (one
# expected value changed) must fail the sort check printing both values; with PTX execution off
# (HOSTCUDA_EXEC=twin, CUB's kernels have no host twins) the program must fail. Skips (77) when
# not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
D=$B/tests/hostcudart
P=$D/rt_thrust
for f in "$D/libcudart.so.13" "$P" "$B/libaccelshim.so" "$B/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rt() { env LD_LIBRARY_PATH="$D:$B/tests/hostcuda" timeout 300 "$@"; }

rt "$P" >"$tmp/plain.out" 2>"$tmp/plain.err"; rc=$?
n=$(grep -c '^ok - ' "$tmp/plain.out")
if [ $rc -eq 0 ] && [ "$n" -eq 11 ] && grep -q '^PASSED: 0 failed' "$tmp/plain.out"; then
    echo "ok: rt_thrust: $n algorithms equal the standard library's"
else
    fail "rt_thrust: exit $rc, $n of 11 checks ok"; grep -v '^ok' "$tmp/plain.out" | head -5; tail -3 "$tmp/plain.err"
fi

rt "$P" --corrupt >"$tmp/corrupt.out" 2>&1; rc=$?
if [ $rc -eq 1 ] && grep -Eq '^not ok - thrust::sort of ints .*: index [0-9]+: got -?[0-9]+, expected -?[0-9]+' "$tmp/corrupt.out"; then
    echo "ok: control: a changed expected value fails the sort check, both values printed"
else
    fail "control --corrupt: exit $rc"; head -5 "$tmp/corrupt.out"
fi

HOSTCUDA_EXEC=twin rt "$P" >"$tmp/twin.out" 2>&1; rc=$?
if [ $rc -ne 0 ] && grep -q 'has no host implementation' "$tmp/twin.out"; then
    echo "ok: control: without PTX execution the program fails (exit $rc)"
else
    fail "control HOSTCUDA_EXEC=twin: exit $rc"; tail -3 "$tmp/twin.out"
fi

rt env LD_PRELOAD="$B/libaccelshim.so" ACCELSHIM_LOG=info "$P" >"$tmp/shim.out" 2>"$tmp/shim.err"; rc=$?
k=$(sed -n 's/.*INFO report: \([0-9]*\) kernel launches through the shim.*/\1/p' "$tmp/shim.err")
if [ $rc -eq 0 ] && cmp -s "$tmp/plain.out" "$tmp/shim.out" && [ "${k:-0}" -gt 0 ]; then
    echo "ok: under the shim: identical output, $k launches through the shim"
else
    fail "under the shim: exit $rc, launches '${k:-}'"; diff "$tmp/plain.out" "$tmp/shim.out" | head -4; tail -3 "$tmp/shim.err"
fi
[ $fails -eq 0 ] && echo "PASS: rt_thrust (4 checks)"
exit $((fails > 0))
