#!/usr/bin/env bash
# test_hcr_valgrind.sh — proves hostcurand stays memcheck-clean: test_hcr_host (every generator and
# result kind, device and host generators, calls split in three) runs under valgrind with no invalid
# access, no use of an uninitialised value and no definitely-lost block (valgrind.supp: one word
# read inside glibc's loader while NVIDIA's library is dlmopen'ed). Skips (77) without valgrind or
# the build.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$ROOT/build/tests/hostcurand/test_hcr_host
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
[ -x "$T" ] || { echo "SKIP: $T not built"; exit 77; }
log=$(mktemp); trap 'rm -f "$log"' EXIT
if HOSTCUDA_MEM_BYTES=256M timeout 600 valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions="$ROOT/tests/hostcurand/valgrind.supp" \
    "$T" >"$log" 2>&1; then
    echo "PASS: test_hcr_host is clean under valgrind ($(grep -c '^ok' "$log") checks passed)"
    exit 0
fi
echo "FAIL: test_hcr_host under valgrind:"; grep -E '==[0-9]+==|FAIL' "$log" | head -40
exit 1
