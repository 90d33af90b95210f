#!/usr/bin/env bash
# test_hcrt_valgrind.sh — proves hostcudart stays memcheck-clean: rt_api's launch, symbol, ctx
# and memory cases (registration, per-context modules, launches, copies, streams, events, reset)
# and rt_calls' cases (pools, pitched copies and memsets, stream attributes, peers, IPC)
# run under valgrind with no invalid access and no definitely-lost block. The registry of
# fatbins, kernels and variables lives as long as the process (as in NVIDIA's runtime): reachable,
# not counted. Skips (77) without valgrind or the build.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT/build/tests/hostcudart
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
for f in "$D/rt_api" "$D/libcudart.so.13" "$D/librt_kernels_host.so"; do [ -e "$f" ] || { echo "SKIP: $f not built"; exit 77; }; done
export HOSTCUDA_DEVICES=2 HOSTCUDA_MEM_BYTES=256M LD_LIBRARY_PATH="$D:$ROOT/build/tests/hostcuda" \
       HOSTCUDA_KERNEL_LIBS="$D/librt_kernels_host.so"
fail=0
for c in launch symbol ctx memory; do
    log=$(mktemp)
    if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$D/rt_api" "$c" >"$log" 2>&1; then
        echo "ok: rt_api $c is clean under valgrind"
    else
        echo "FAIL: rt_api $c under valgrind (exit $?):"; grep -E '==[0-9]+==|^FAIL' "$log" | head -40; fail=1
    fi
    rm -f "$log"
done
# rt_calls: pools, stream attach, pitched copies and memsets, stream attributes, device settings
if [ -e "$D/rt_calls" ]; then
    for c in pool attach copy2d copy3d stream device managed; do
        log=$(mktemp)
        if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$D/rt_calls" "$c" >"$log" 2>&1; then
            echo "ok: rt_calls $c is clean under valgrind"
        else
            echo "FAIL: rt_calls $c under valgrind (exit $?):"; grep -E '==[0-9]+==|^FAIL' "$log" | head -40; fail=1
        fi
        rm -f "$log"
    done
else
    echo "FAIL: $D/rt_calls is not built"; fail=1
fi
[ "$fail" = 0 ] && echo "PASS: hostcudart is memcheck-clean (rt_api launch, symbol, ctx, memory; rt_calls' cases)"
exit "$fail"
