#!/usr/bin/env bash
# Property: ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 makes the engine run every sync point's collective
# at world size 1 through the real backend code (what gpu-check's world1-collectives check uses to
# exercise NCCL, its scratch and cast kernels, on one GPU). On hostcuda + hostnccl, mlp with the
# sgd policy, backends nccl and mpi x wires same and bf16: with the switch the exit report
# (ACCELSHIM_REPORT) names the backend and counts hits and all-reduces (> 0); wire same leaves the
# parameters bit-identical to the run without the switch; wire bf16 stays within the bf16 bound
# (max-abs 2e-3) and differs (the casts ran, counted in the report). Control: without the switch
# the report counts 0 collectives and backend "none"; a bad value ("2") warns and stays off.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
MLP=$B/tests/trainers/mlp SHIM=$B/libaccelshim.so CMP=$B/tests/equivalence/fcompare
for f in "$MLP" "$SHIM" "$CMP" "$B/tests/hostcuda/libcuda.so.1" "$B/tests/hostnccl/libnccl.so.2" \
         "$B/collectives/libash_cast_kernels_host.so"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
KL=$B/tests/trainers/libmlp_kernels_host.so:$B/collectives/libash_cast_kernels_host.so
# field FILE NAME: the "collectives" object's NAME, or the first rule's "hits" (NAME=hits)
field() {
    case $2 in
        hits) grep -o '"hits": [0-9]*' "$1" | head -1 | grep -o '[0-9]*$' ;;
        backend) sed -n 's/.*"backend": "\([a-z]*\)".*/\1/p' "$1" | head -1 ;;
        casts) grep -o '"collectives_with_cast": [0-9]*' "$1" | grep -o '[0-9]*$' ;;
        *) grep -o "\"collectives\": {.*" "$1" | grep -o "\"$2\": [0-9]*" | head -1 | grep -o '[0-9]*$' ;;
    esac
}
# run TAG BACKEND WIRE SWITCH: mlp at world 1 under the shim; TAG.bin, TAG.json, TAG.err
run() {
    local tag=$1 be=$2 wire=$3 sw=$4
    sed "s/wire: same/wire: $wire/" "$ROOT/tests/equivalence/policies/sgd-fused.yaml" >"$tmp/$tag.yaml"
    timeout -k 5 120 env LD_LIBRARY_PATH="$B/tests/hostnccl:$B/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$KL" \
        ACCELSHIM_POLICY="$tmp/$tag.yaml" ACCELSHIM_BACKEND="$be" ACCELSHIM_DEBUG_WORLD1_COLLECTIVES="$sw" \
        ACCELSHIM_LOG=info ACCELSHIM_REPORT="$tmp/$tag.json" LD_PRELOAD="$SHIM" \
        "$MLP" --steps 10 --batch 4 --save "$tmp/$tag.bin" >"$tmp/$tag.out" 2>"$tmp/$tag.err"
}
for be in nccl mpi; do
    for wire in same bf16; do
        c="$be/$wire"
        run "off-$be-$wire" "$be" "$wire" 0 || { bad "$c without the switch: exit $?: $(tail -2 "$tmp/off-$be-$wire.err")"; continue; }
        run "on-$be-$wire" "$be" "$wire" 1 || { bad "$c with the switch: exit $?: $(tail -2 "$tmp/on-$be-$wire.err")"; continue; }
        on=$tmp/on-$be-$wire off=$tmp/off-$be-$wire
        a_on=$(field "$on.json" allreduces) a_off=$(field "$off.json" allreduces)
        h_on=$(field "$on.json" hits) be_on=$(field "$on.json" backend) be_off=$(field "$off.json" backend)
        echo "$c: with the switch backend $be_on, hits $h_on, all-reduces $a_on, casts $(field "$on.json" casts);" \
             "without: backend $be_off, all-reduces $a_off"
        [ "${a_on:-0}" -gt 0 ] || bad "$c: with the switch the report counts '${a_on}' all-reduces (want > 0)"
        [ "${h_on:-0}" -gt 0 ] || bad "$c: with the switch the report counts '${h_on}' hits (want > 0)"
        [ "$be_on" = "$be" ] || bad "$c: with the switch the report's backend is '$be_on' (want $be)"
        [ "$a_off" = 0 ] || bad "control $c: without the switch the report counts '$a_off' all-reduces (want 0)"
        [ "$be_off" = none ] || bad "control $c: without the switch the report's backend is '$be_off' (want none)"
        grep -q "sync point for gradients\[0\]" "$on.err" || bad "$c: no 'sync point for gradients[0]' log line"
        if [ "$wire" = same ]; then
            cmp -s "$on.bin" "$off.bin" || bad "$c: parameters differ from the run without the switch: $("$CMP" "$on.bin" "$off.bin" --identical 2>&1 | head -3)"
        else
            out=$("$CMP" "$on.bin" "$off.bin" --max-abs 2e-3 2>&1) || bad "$c: beyond the bf16 bound: $out"
            cmp -s "$on.bin" "$off.bin" && bad "$c: bit-identical to the run without the switch: the bf16 casts did not run"
            [ "$(field "$on.json" casts)" -gt 0 ] 2>/dev/null || bad "$c: the report counts no collective with a cast"
        fi
    done
done
# a bad value is refused by the options table: one line naming the variable, exit 2, no run
run bad-value nccl same 2; rc=$?
[ $rc -eq 2 ] || bad "ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=2: exit $rc, want 2"
grep -q 'ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=2' "$tmp/bad-value.err" || bad "=2: no line naming it: $(head -3 "$tmp/bad-value.err")"
[ $fails -eq 0 ] || { echo "FAIL: $fails problems"; exit 1; }
echo "PASS: the world-1 debug switch runs the collectives (nccl and mpi, wires same/bf16) with the plain run's results; off: 0 collectives"
