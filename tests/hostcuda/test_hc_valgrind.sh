#!/usr/bin/env bash
# test_hc_valgrind.sh — proves hostcuda stays memcheck-clean: the memory, stream and kernel tests
# (allocator, threads, queues, PTX parsing, launches) and the PTX interpreter's (test_hc_exec, and
# test_hc_mma for the tensor-core instructions) run under valgrind with no invalid access and no definitely-lost
# block (stacks of detached stream workers are "possibly lost" by design and not counted).
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="$root/build/tests/hostcuda"
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
fail=0
# small arenas: valgrind tracks every mapping, and 8 x 2 GiB of views make it crawl
export HOSTCUDA_DEVICES=2 HOSTCUDA_MEM_BYTES=256M
for t in test_hc_memory test_hc_streams test_hc_kernels; do
    [ -x "$dir/$t" ] || { echo "SKIP: $dir/$t not built"; exit 77; }
    log="$(mktemp)"
    if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        "$dir/$t" >"$log" 2>&1; then
        echo "ok: $t is clean under valgrind"
    else
        echo "FAIL: $t under valgrind (exit $?):"
        grep -E '==[0-9]+==|FAILED|ERROR' "$log" | head -40
        fail=1
    fi
    rm -f "$log"
done
# the PTX interpreter: its results run and an out-of-bounds store it must catch without touching
# memory it does not own
for c in "" oob; do
    [ -x "$dir/test_hc_exec" ] || { echo "SKIP: $dir/test_hc_exec not built"; exit 77; }
    log="$(mktemp)"
    if HOSTCUDA_THREADS=2 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        "$dir/test_hc_exec" "$dir/exec_kernels.ptx" $c >"$log" 2>&1; then
        echo "ok: test_hc_exec ${c:-(all cases)} is clean under valgrind"
    else
        echo "FAIL: test_hc_exec ${c:-(all cases)} under valgrind (exit $?):"
        grep -E '==[0-9]+==|FAIL' "$log" | head -40
        fail=1
    fi
    rm -f "$log"
done
# the tensor-core instructions: their GEMMs, and a misaligned wmma pointer caught before any access
for c in "" misaligned; do
    [ -x "$dir/test_hc_mma" ] || { echo "SKIP: $dir/test_hc_mma not built"; exit 77; }
    log="$(mktemp)"
    if HOSTCUDA_THREADS=2 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        "$dir/test_hc_mma" "$dir/mma_kernels.ptx" $c >"$log" 2>&1; then
        echo "ok: test_hc_mma ${c:-(all cases)} is clean under valgrind"
    else
        echo "FAIL: test_hc_mma ${c:-(all cases)} under valgrind (exit $?):"
        grep -E '==[0-9]+==|FAIL' "$log" | head -40
        fail=1
    fi
    rm -f "$log"
done
exit "$fail"
