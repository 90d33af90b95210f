#!/usr/bin/env bash
# launch_overhead.sh — what the shim adds to a cuLaunchKernel that matches no rule, side by side
# in one run: ns per launch without / with LD_PRELOAD=libaccelshim.so on (1) the bench's fake driver
# (build/bench/fakecuda: cuLaunchKernel only returns, so the shim's own cost is visible) and (2)
# hostcuda (a launch queues work to a thread); runs alternate plain/shim, best of each kept.
# Then instructions per launch with callgrind on the fake driver: N and 2N launches, with and
# without the shim; per launch = (Ir(2N) - Ir(N)) / N, which cancels start-up and init.
# Rows "+ rule elsewhere": the shim with a policy loaded (bench/rule_elsewhere.yaml) whose rule
# matches some other kernel, so the launched one must stay on the same fast path.
# Row "+ overlap: auto" (fake driver; bench/overlap_auto_elsewhere.yaml with the world-1 switch, which
# keeps overlap on in one process): a learned-ready-points rule puts EVERY launch on the slow path
# (docs/overlap.md); the 25 ns target is not for that row.
# Targets (docs/design.md §2): < 25 ns and < 60 instructions added per launch. Prints; never fails on
# a figure. Env: LAUNCHES (default 2000000), ROUNDS (3), CG_LAUNCHES (200000).
# Under scripts/run-bench.sh the figures also go to build/bench/results.json (bench/lib.sh).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROOT=$BENCH_TOP
B=$ROOT/build
ELSEWHERE=$ROOT/bench/rule_elsewhere.yaml
BIN=$B/bench/launch_overhead
FAKE=$B/bench/fakecuda
SHIM=$B/libaccelshim.so
HC=$B/tests/hostcuda
for f in "$BIN" "$FAKE/libcuda.so.1" "$SHIM"; do
    [ -e "$f" ] || { echo "SKIP: $f not built (make all)"; exit 77; }
done
LAUNCHES=${LAUNCHES:-2000000}
ROUNDS=${ROUNDS:-3}
CG=${CG_LAUNCHES:-200000}

ns_of() { sed -n 's/.*best_ns_per_launch \([0-9.]*\).*/\1/p'; }
best() { printf '%s\n' "$@" | sort -g | head -1; }

# measure LIBDIR LAUNCHES [extra args...] -> prints "plain shim"; the shim side loads the policy
# $MEASURE_POLICY when set (empty: no policy). The fake driver lacks what sync points need, and the
# shim says so once per run: ACCELSHIM_LOG=error keeps that warning out of the table.
measure() {
    local dir=$1 n=$2; shift 2
    local p=() s=()
    for _ in $(seq "$ROUNDS"); do
        p+=("$(LD_LIBRARY_PATH=$dir "$BIN" --launches "$n" --repeat 3 "$@" | ns_of)")
        s+=("$(LD_LIBRARY_PATH=$dir ACCELSHIM_LOG=error ACCELSHIM_POLICY="${MEASURE_POLICY:-}" \
               LD_PRELOAD=$SHIM "$BIN" --launches "$n" --repeat 3 "$@" | ns_of)")
    done
    echo "$(best "${p[@]}") $(best "${s[@]}")"
}

row() { # name key plain shim
    bench_raw "$2_plain_ns" "$3"
    bench_raw "$2_shim_ns" "$4"
    bench_raw "$2_added_ns" "$(awk -v p="$3" -v s="$4" 'BEGIN { printf "%.2f", s - p }')"
    bench_ratio "$2_shim_over_plain" "$(awk -v p="$3" -v s="$4" 'BEGIN { printf "%.3f", (p > 0 ? s / p : 0) }')"
    awk -v n="$1" -v p="$3" -v s="$4" 'BEGIN {
        printf "%-22s %12.2f %12.2f %11.2f %8.3fx  %s\n", n, p, s, s - p, (p > 0 ? s / p : 0),
               (s - p < 25 ? "under 25 ns" : "OVER 25 ns") }'
}

bench_raw launches_fake "$LAUNCHES"
bench_raw launches_hostcuda $((LAUNCHES / 20))
bench_raw rounds "$ROUNDS"
echo "launch overhead: cuLaunchKernel of a kernel that matches no rule (best of $ROUNDS alternating runs)"
printf "%-22s %12s %12s %11s %9s\n" "driver" "plain ns" "shim ns" "added ns" "ratio"
read -r p s < <(measure "$FAKE" "$LAUNCHES")
row "fake (returns at once)" fake "$p" "$s"
read -r p s < <(MEASURE_POLICY=$ELSEWHERE measure "$FAKE" "$LAUNCHES")
row "fake + rule elsewhere" fake_rule_elsewhere "$p" "$s"
read -r p s < <(ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 MEASURE_POLICY=$ROOT/bench/overlap_auto_elsewhere.yaml \
    measure "$FAKE" "$LAUNCHES")
row "fake + overlap: auto" fake_overlap_auto "$p" "$s"
if [ -e "$HC/libcuda.so.1" ] && [ -e "$B/tests/intercept/kernels.ptx" ]; then
    n=$((LAUNCHES / 20))
    read -r p s < <(HOSTCUDA_KERNEL_LIBS=$B/tests/intercept/libitest_kernels.so \
        measure "$HC" "$n" --ptx "$B/tests/intercept/kernels.ptx" --sync-every 1000)
    row "hostcuda (queued)" hostcuda "$p" "$s"
    read -r p s < <(HOSTCUDA_KERNEL_LIBS=$B/tests/intercept/libitest_kernels.so MEASURE_POLICY=$ELSEWHERE \
        measure "$HC" "$n" --ptx "$B/tests/intercept/kernels.ptx" --sync-every 1000)
    row "hostcuda + rule elsew." hostcuda_rule_elsewhere "$p" "$s"

else
    echo "hostcuda: not built, skipped"
    bench_note "hostcuda rows skipped: not built"
fi

if ! command -v valgrind >/dev/null; then
    echo "callgrind: valgrind not installed, instruction counts skipped"
    bench_note "callgrind rows skipped: valgrind not installed"
    exit 0
fi
ir() { # preload-or-empty launches -> total instructions
    local pre=$1 n=$2
    LD_LIBRARY_PATH=$FAKE ACCELSHIM_LOG=error LD_PRELOAD=$pre valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$BIN" --launches "$n" --repeat 1 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
p1=$(ir "" "$CG"); p2=$(ir "" $((2 * CG)))
s1=$(ir "$SHIM" "$CG"); s2=$(ir "$SHIM" $((2 * CG)))
awk -v n="$CG" -v p1="$p1" -v p2="$p2" -v s1="$s1" -v s2="$s2" 'BEGIN {
    p = (p2 - p1) / n; s = (s2 - s1) / n
    printf "\ninstructions per launch (callgrind, fake driver, N=%d vs 2N):\n", n
    printf "%-22s %12s %12s %11s %9s\n", "", "plain", "shim", "added", "ratio"
    printf "%-22s %12.1f %12.1f %11.1f %8.2fx  %s\n", "loop + cuLaunchKernel", p, s, s - p, (p > 0 ? s / p : 0),
           (s - p < 60 ? "under 60 instructions" : "OVER 60 instructions") }'
awk -v n="$CG" -v p1="$p1" -v p2="$p2" -v s1="$s1" -v s2="$s2" 'BEGIN {
    p = (p2 - p1) / n; s = (s2 - s1) / n
    printf "raw callgrind_plain_instr %.1f\nraw callgrind_shim_instr %.1f\nraw callgrind_added_instr %.1f\n", p, s, s - p
    printf "ratio callgrind_shim_over_plain %.3f\n", (p > 0 ? s / p : 0) }' >>"${BENCH_RESULTS:-/dev/null}"
bench_raw callgrind_launches "$CG"
