#!/usr/bin/env bash
# Property: CUDA graphs work through hostcudart on hostcuda for an unmodified nvcc -cudart shared
# program (rt_graph.cu; each case states its property at the top of that file): a plain stream, a
# capture and a hand-built graph of one order-sensitive pipeline give the same array and replays
# repeat it; dependency order beats creation order (control: without the edge, creation order);
# cross-stream capture through events (also under HOSTCUDA_JITTER, which reorders what the CUDA
# model allows), an unjoined fork refused; exec updates; errors with their controls; memory nodes
# replayed; kernel node parameters read back; child graphs, host/empty nodes, clones. A conditional node is refused with a line naming
# it. Under valgrind (when installed) the cases have no invalid access and no definitely-lost
# block: node, exec and replay lifetimes are sound. Skips (77) when not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/tests
D=$B/hostcudart
for f in "$D/libcudart.so.13" "$D/rt_graph" "$B/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
run() { # run NAME CASE ENV...
    local name=$1 c=$2; shift 2
    env LD_LIBRARY_PATH="$D:$B/hostcuda" "$@" timeout 120 "$D/rt_graph" "$c" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ "$rc" -ne 0 ] || grep -q '^FAIL' "$tmp/$name.out"; then
        echo "FAIL $name: exit $rc"; grep '^FAIL' "$tmp/$name.out" | head -8; tail -3 "$tmp/$name.err"
        fails=$((fails + 1)); return 1
    fi
    echo "ok $name ($(grep -c '^ok' "$tmp/$name.out") checks)"
}
for c in equal deps fork update errors memnodes params child; do run "$c" "$c"; done
run fork-jitter fork HOSTCUDA_JITTER=7
run equal-jitter equal HOSTCUDA_JITTER=11
# the refused conditional node says what was refused
grep -q '^hostcuda: cuGraphAddNode: conditional nodes (type 13) are not supported$' "$tmp/errors.err" ||
    { echo "FAIL errors: no line naming the conditional node: $(head -3 "$tmp/errors.err")"; fails=$((fails + 1)); }
if command -v valgrind >/dev/null; then
    for c in equal fork update errors memnodes child; do
        env LD_LIBRARY_PATH="$D:$B/hostcuda" HOSTCUDA_DEVICES=2 HOSTCUDA_MEM_BYTES=256M timeout 300 valgrind -q \
            --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$D/rt_graph" "$c" >"$tmp/vg.log" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ]; then echo "ok valgrind $c: clean"
        else echo "FAIL valgrind $c (exit $rc):"; grep -E '==[0-9]+==|^FAIL' "$tmp/vg.log" | head -30; fails=$((fails + 1)); fi
    done
else
    echo "note: valgrind not installed, the memcheck pass is not run"
fi
# an unknown case is refused, not passed
env LD_LIBRARY_PATH="$D:$B/hostcuda" "$D/rt_graph" nosuchcase >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q "unknown case 'nosuchcase'" "$tmp/bad.err" ||
    { echo "FAIL control: an unknown case should exit 2 naming it"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && { echo "PASS"; exit 0; }
echo "FAIL: $fails case(s)"; exit 1
