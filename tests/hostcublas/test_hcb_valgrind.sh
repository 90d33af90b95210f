#!/usr/bin/env bash
# test_hcb_valgrind.sh — proves hostcublas stays memcheck-clean: test_hcb_blas (copies, level 1,
# gemv, geam, Dgemm batches, GemmEx, pointer mode device, stream order) runs under valgrind with
# no invalid access, no use of an uninitialised value and no definitely-lost block (hostcuda's
# stream threads live as long as the process: possibly lost, not counted). Skips (77) without
# valgrind or the build.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$ROOT/build/tests/hostcublas/test_hcb_blas
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
[ -x "$T" ] || { echo "SKIP: $T not built"; exit 77; }
log=$(mktemp); trap 'rm -f "$log"' EXIT
if HOSTCUDA_MEM_BYTES=256M valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    "$T" >"$log" 2>&1; then
    echo "PASS: test_hcb_blas is clean under valgrind ($(grep -o '[0-9]* test(s)' "$log" | tail -1) passed)"
    exit 0
fi
echo "FAIL: test_hcb_blas under valgrind:"; grep -E '==[0-9]+==|FAILED|ERROR|got' "$log" | head -40
exit 1
