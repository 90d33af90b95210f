#!/usr/bin/env bash
# Property: the policy parser survives hostile input: libFuzzer (with ASan + UBSan) runs
# ash_policy_parse and the print/parse round trip for FUZZ_SECONDS (default 60) from the seed
# corpus (examples/*.yaml, tests/policy/bad/*.yaml) without a crash, leak, sanitizer report or
# round-trip difference. New inputs are kept in build/tests/fuzz/corpus; a crashing input is
# saved as build/tests/fuzz/crash-* (and printed). Skips (77) when clang/libFuzzer is missing.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/tests/fuzz/fuzz_policy
secs=${FUZZ_SECONDS:-60}
if [ ! -x "$bin" ]; then
    command -v clang >/dev/null || { echo "SKIP: clang not installed"; exit 77; }
    echo "SKIP: $bin not built (clang cannot link -fsanitize=fuzzer: install libclang-rt-14-dev)"
    exit 77
fi
corpus=$top/build/tests/fuzz/corpus
mkdir -p "$corpus"
seeds=$top/build/tests/fuzz/seeds
rm -rf "$seeds"; mkdir -p "$seeds"
cp "$top"/examples/*.yaml "$top"/tests/policy/bad/*.yaml "$seeds"/
echo "fuzzing ash_policy_parse for ${secs}s: $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) saved inputs"
cd "$top/build/tests/fuzz" || exit 1
log=$top/build/tests/fuzz/last-run.log
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$top/build/tests/fuzz/" "$corpus" "$seeds" >"$log" 2>&1
rc=$?
grep -E '^(#[0-9]+ +(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tail -n 4
if [ "$rc" -ne 0 ]; then
    echo "FAIL: fuzzer exited $rc; last lines:"
    tail -n 40 "$log"
    for f in "$top"/build/tests/fuzz/crash-* "$top"/build/tests/fuzz/leak-*; do
        [ -e "$f" ] && { echo "--- $f:"; head -c 600 "$f" | cat -v; echo; }
    done
    exit 1
fi
echo "ok: no crash, leak, sanitizer report or round-trip difference in ${secs}s"
