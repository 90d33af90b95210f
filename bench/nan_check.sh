#!/usr/bin/env bash
# nan_check.sh — what the NaN/Inf sentinel (debug.nan_check) and recording (ACCELSHIM_RECORD) add
# to a sync point, side by side in one run: bench/allreduce_app under LD_PRELOAD=libaccelshim.so,
# one process (world size 1: no collective, so the difference is the inspection alone), its
# kernel launch the gradients' sync point, for a 4 MiB and a 64 MiB f32 gradient. Three rows
# per size: off, ACCELSHIM_NAN_CHECK=1 (the shim's scan kernels on the launch's stream + a 4 KiB
# copy + a stream synchronise), ACCELSHIM_RECORD (the whole buffer copied to the host, hashed
# with xxHash3 and summarised). A row's time = the lower of ROUNDS runs' medians of ITERS timed
# iterations (launch + synchronise) after WARMUP. Added ms = row - off; GB/s = buffer bytes /
# added time; ratio record_over_nan_check = how much more recording adds than the sentinel. Driver: hostcuda (the scan kernels run on the host, serially: a CPU figure, not a
# GPU one); DRIVER=real uses the machine's libcuda.so.1 (a GPU). Prints; never fails on a figure.
# Env: WARMUP (2), ITERS (7), ROUNDS (2), DRIVER (hostcuda|real).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
APP=$B/bench/allreduce_app
PTX=$B/bench/allreduce_kernels.ptx
SHIM=$B/libaccelshim.so
KLIBS=$B/bench/liballreduce_kernels_host.so:$B/collectives/libash_cast_kernels_host.so:$B/shim/libash_inspect_kernels_host.so
DRIVER=${DRIVER:-hostcuda}
bench_skip_unless_built "$APP" "$PTX" "$SHIM" "$B/shim/libash_inspect_kernels_host.so" \
    "$B/bench/liballreduce_kernels_host.so"
[ "$DRIVER" = real ] || bench_skip_unless_built "$B/tests/hostcuda/libcuda.so.1"
WARMUP=${WARMUP:-2}
ITERS=${ITERS:-7}
ROUNDS=${ROUNDS:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/policy.yaml" <<EOF
version: 1
gradients:
  - at: "ash_bench_consume"
    buffer: { arg: 0, count_arg: 1 }
    dtype: f32
EOF

# run COUNT ENV... -> the median ms of one run ("nan" if it failed)
run() {
    local count=$1; shift
    local envs=(ACCELSHIM_POLICY="$TMP/policy.yaml" "$@")
    [ "$DRIVER" = real ] || envs+=(LD_LIBRARY_PATH="$B/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$KLIBS")
    env "${envs[@]}" LD_PRELOAD="$SHIM" timeout -k 5 300 "$APP" --ptx "$PTX" --count "$count" \
        --warmup "$WARMUP" --iters "$ITERS" 2>>"$TMP/err" | sed -n 's/.*median_ms \([0-9.]*\).*check ok.*/\1/p' | head -1
}
best() {   # best COUNT ENV... -> lowest median over ROUNDS runs
    local vals=() v
    for _ in $(seq "$ROUNDS"); do v=$(run "$@"); vals+=("${v:-nan}"); rm -f "$TMP"/rec*.jsonl; done
    printf '%s\n' "${vals[@]}" | grep -E '^[0-9.]+$' | sort -g | head -1
}

bench_raw driver "$DRIVER"
bench_raw iters "$ITERS"
bench_raw rounds "$ROUNDS"
printf "%-9s %-10s %10s %10s %10s\n" "MiB" "mode" "ms/step" "added ms" "GB/s"
for count in 1048576 16777216; do
    mib=$((count * 4 / 1048576))
    off=$(best "$count")
    nan_added=''
    for mode in off nan_check record; do
        case $mode in
            off) ms=$off ;;
            nan_check) ms=$(best "$count" ACCELSHIM_NAN_CHECK=1) ;;
            record) ms=$(best "$count" ACCELSHIM_RECORD="$TMP/rec.jsonl") ;;
        esac
        read -r added gbs < <(awk -v m="${ms:-0}" -v o="${off:-0}" -v b=$((count * 4)) 'BEGIN {
            if (m + 0 <= 0 || o + 0 <= 0) { print "nan nan"; exit }
            a = m - o; printf "%.3f %s\n", a, (a > 0 ? sprintf("%.2f", b / (a / 1e3) / 1e9) : "-") }')
        printf "%-9s %-10s %10s %10s %10s\n" "$mib" "$mode" "${ms:-nan}" "$added" "$gbs"
        bench_raw "${mode}_${mib}MiB_ms" "${ms:-nan}"
        [ "$mode" = off ] && continue
        bench_raw "${mode}_${mib}MiB_added_ms" "$added"
        bench_raw "${mode}_${mib}MiB_GBps" "$gbs"
        if [ "$mode" = nan_check ]; then nan_added=$added
        else bench_ratio "record_over_nan_check_${mib}MiB" \
                 "$(awk -v r="$added" -v n="$nan_added" 'BEGIN { if (n + 0 > 0) printf "%.2f", r / n; else print "nan" }')"
        fi
    done
done
# anything the shim or the app complained about, so a missing row explains itself
[ -s "$TMP/err" ] && grep -m5 -i 'error\|warn\|fail' "$TMP/err" | sed 's/^/note: /'
bench_note "world size 1 (no collective): the rows differ only by the inspection; DRIVER=$DRIVER"
