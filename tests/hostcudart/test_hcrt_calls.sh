#!/usr/bin/env bash
# Property: the runtime calls ordinary programs make beyond malloc/copy/launch answer as NVIDIA's
# runtime documents them on hostcudart + hostcuda (rt_calls.cu, one case each: memory pools, managed
# memory's stream attach, peer attributes, ...): each call's result, each documented error code,
# the data that moved. Controls: with RT_CALLS_CORRUPT=1 every case that compares data must fail
# (its comparison can fail); an unknown case exits 2. Skips (77) when not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/tests
D=$B/hostcudart
for f in "$D/libcudart.so.13" "$D/rt_calls" "$D/rt_calls_ptsz" "$B/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
PROG=$D/rt_calls
run() { # run NAME EXPECTED_RC ENV... -- CASE   (the program: $PROG)
    local name=$1 want=$2; shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env LD_LIBRARY_PATH="$D:$B/hostcuda" "${envs[@]}" timeout 60 "$PROG" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL $name: exit $rc, expected $want"; grep -v '^ok' "$tmp/$name.out" | head -8; tail -3 "$tmp/$name.err"
        fails=$((fails + 1)); return 1
    fi
    if grep -q 'is not implemented' "$tmp/$name.err"; then
        echo "FAIL $name: a call it makes is not implemented:"; grep 'is not implemented' "$tmp/$name.err"
        fails=$((fails + 1)); return 1
    fi
    echo "ok $name ($(grep -c '^ok' "$tmp/$name.out") checks)"
}
CASES="pool attach p2p copy2d copy3d stream device managed basics"
DATA_CASES="pool attach copy2d copy3d device basics"
for c in $CASES; do run "$c" 0 -- "$c"; done
PROG=$D/rt_calls_ptsz
for c in $CASES; do run "ptsz_$c" 0 -- "$c"; done
imports=$(nm -D "$D/rt_calls_ptsz" 2>/dev/null | awk '$1 == "U" {print $2}')
for sym in cudaMemcpy2D_ptds cudaMemcpy2DAsync_ptsz cudaMemcpy3D_ptds cudaMemcpy3DAsync_ptsz cudaMemset2D_ptds \
           cudaMemset3DAsync_ptsz cudaStreamGetAttribute_ptsz cudaStreamAttachMemAsync_ptsz cudaMallocFromPoolAsync_ptsz; do
    grep -q "^$sym@" <<<"$imports" || { echo "FAIL ptsz: rt_calls_ptsz does not import $sym"; fails=$((fails + 1)); }
done
PROG=$D/rt_calls
run p2p_one_device 0 HOSTCUDA_DEVICES=1 -- p2p && grep -q 'one device' "$tmp/p2p_one_device.out" ||
    { echo "FAIL p2p_one_device: no 'one device' line"; fails=$((fails + 1)); }
# controls: a corrupted expectation must fail each data comparison, and say both sides
for c in $DATA_CASES; do
    if run "control_$c" 1 RT_CALLS_CORRUPT=1 -- "$c"; then
        grep -q '^FAIL .*expected 0x.., got 0x..' "$tmp/control_$c.out" ||
            { echo "FAIL control_$c: the failed comparison does not print both sides"; fails=$((fails + 1)); }
    fi
done
run unknown_case 2 -- no_such_case
[ "$fails" -eq 0 ] && echo "PASS: test_hcrt_calls" || echo "FAIL: test_hcrt_calls ($fails)"
[ "$fails" -eq 0 ]
