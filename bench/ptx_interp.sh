#!/usr/bin/env bash
# ptx_interp.sh — hostcuda's PTX interpreter on a fixed mix (bench/ptx_interp_kernels.cu): a
# 256x256x256 shared-memory tiled GEMM with barriers, a warp-shuffle reduction of 4M floats and an
# elementwise axpby of 4M floats. Per kernel, side by side in one run: lane-instructions per second
# per host core with HOSTCUDA_THREADS=1 and with all cores (the interpreter's own counts from
# HOSTCUDA_EXEC_STATS=1, over the median launch wall time of REPS), and the speed-up of one launch
# from 1 to all cores. Rates and ratios only; prints, never fails on a figure. Env: REPS (3).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
RUN=$B/bench/ptx_interp
PTX=$B/bench/ptx_interp_kernels.ptx
bench_skip_unless_built "$RUN" "$PTX" "$B/tests/hostcuda/libcuda.so.1"
REPS=${REPS:-3}
CORES=$(nproc)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# one KERNEL THREADS -> "WALL LANE_INSTR_PER_LAUNCH CHECK" (lane_instr from the stats line / launches)
one() {
    local out rc
    LD_LIBRARY_PATH=$B/tests/hostcuda HOSTCUDA_EXEC=ptx HOSTCUDA_EXEC_STATS=1 HOSTCUDA_THREADS=$2 \
        timeout -k 5 600 "$RUN" "$PTX" "$1" "$REPS" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ "$rc" -eq 77 ] && { echo "SKIP: hostcuda has no PTX interpreter in this build"; exit 77; }
    [ "$rc" -eq 0 ] || { echo "FAIL: $1 with $2 threads exited $rc"; tail -3 "$TMP/err"; exit 1; }
    out=$(sed -n 's/^wall=\([^ ]*\) check=\(.*\)$/\1 \2/p' "$TMP/out")
    awk -v k="b_$1" -v o="$out" '$1 == "hostcuda:" && $2 == "exec" && $3 == k {
            for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
        END { split(o, w, " "); li = (v["launches"] > 0) ? v["lane_instr"] / v["launches"] : 0
              printf "%s %.0f %s\n", w[1], li, w[2] }' "$TMP/err"
}

printf '%-8s %14s %16s %16s %10s %9s  %s\n' kernel lane_instr "1 core lane/s" "$CORES cores /core" speedup check note
for k in gemm reduce axpby; do
    read -r w1 li c1 <<<"$(one "$k" 1)"
    read -r wn _ cn <<<"$(one "$k" "$CORES")"
    note=""
    [ "$li" = 0 ] && note="no HOSTCUDA_EXEC_STATS line: rates unknown"
    r1=$(awk -v l="$li" -v w="$w1" 'BEGIN { printf "%.3g", (w > 0) ? l / w : 0 }')
    rn=$(awk -v l="$li" -v w="$wn" -v c="$CORES" 'BEGIN { printf "%.3g", (w > 0) ? l / w / c : 0 }')
    sp=$(awk -v a="$w1" -v b="$wn" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    printf '%-8s %14s %16s %16s %10s %9s  %s\n' "$k" "$li" "$r1" "$rn" "${sp}x" "$c1/$cn" "$note"
    bench_raw "ptx_${k}_lane_instr" "$li"
    bench_raw "ptx_${k}_lane_instr_per_s_1core" "$r1"
    bench_raw "ptx_${k}_lane_instr_per_s_per_core_${CORES}cores" "$rn"
    bench_raw "ptx_${k}_wall_s_1core" "$w1"
    bench_raw "ptx_${k}_wall_s_${CORES}cores" "$wn"
    bench_ratio "ptx_${k}_speedup_1_to_${CORES}_cores" "$sp"
    [ "$c1/$cn" = "ok/ok" ] || bench_note "ptx_interp: $k computed a wrong result ($c1 with 1 core, $cn with $CORES)"
done
bench_note "ptx_interp: median of $REPS launches after a warm-up; lane_instr from HOSTCUDA_EXEC_STATS=1; $CORES cores"
