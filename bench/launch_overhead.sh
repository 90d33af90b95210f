#!/usr/bin/env bash
# launch_overhead.sh — what the shim adds to a cuLaunchKernel that matches no rule, side by side
# in one run: ns per launch without / with LD_PRELOAD=libaccelshim.so on (1) the bench's fake driver
# (build/bench/fakecuda: cuLaunchKernel only returns, so the shim's own cost is visible) and (2)
# hostcuda (a launch queues work to a thread); runs alternate plain/shim, best of each kept.
# Then instructions per launch with callgrind on the fake driver: N and 2N launches, with and
# without the shim; per launch = (Ir(2N) - Ir(N)) / N, which cancels start-up and init.
# Targets (DESIGN.md §2): < 25 ns and < 60 instructions added per launch. Prints; never fails on
# a figure. Env: LAUNCHES (default 2000000), ROUNDS (3), CG_LAUNCHES (200000).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
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

# measure LABEL LIBDIR LAUNCHES [extra args...] -> prints "plain shim"
measure() {
    local dir=$1 n=$2; shift 2
    local p=() s=()
    for _ in $(seq "$ROUNDS"); do
        p+=("$(LD_LIBRARY_PATH=$dir "$BIN" --launches "$n" --repeat 3 "$@" | ns_of)")
        s+=("$(LD_LIBRARY_PATH=$dir LD_PRELOAD=$SHIM "$BIN" --launches "$n" --repeat 3 "$@" | ns_of)")
    done
    echo "$(best "${p[@]}") $(best "${s[@]}")"
}

row() { # name plain shim
    awk -v n="$1" -v p="$2" -v s="$3" 'BEGIN {
        printf "%-22s %12.2f %12.2f %11.2f %8.3fx  %s\n", n, p, s, s - p, (p > 0 ? s / p : 0),
               (s - p < 25 ? "under 25 ns" : "OVER 25 ns") }'
}

echo "launch overhead: cuLaunchKernel of a kernel that matches no rule (best of $ROUNDS alternating runs)"
printf "%-22s %12s %12s %11s %9s\n" "driver" "plain ns" "shim ns" "added ns" "ratio"
read -r p s < <(measure "$FAKE" "$LAUNCHES")
row "fake (returns at once)" "$p" "$s"
if [ -e "$HC/libcuda.so.1" ] && [ -e "$B/tests/intercept/kernels.ptx" ]; then
    n=$((LAUNCHES / 20))
    read -r p s < <(HOSTCUDA_KERNEL_LIBS=$B/tests/intercept/libitest_kernels.so \
        measure "$HC" "$n" --ptx "$B/tests/intercept/kernels.ptx" --sync-every 1000)
    row "hostcuda (queued)" "$p" "$s"
else
    echo "hostcuda: not built, skipped"
fi

if ! command -v valgrind >/dev/null; then
    echo "callgrind: valgrind not installed, instruction counts skipped"; exit 0
fi
ir() { # preload-or-empty launches -> total instructions
    local pre=$1 n=$2
    LD_LIBRARY_PATH=$FAKE LD_PRELOAD=$pre valgrind --tool=callgrind --callgrind-out-file=/dev/null \
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
