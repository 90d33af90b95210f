#!/usr/bin/env bash
# check_collectives.sh — what ACCELSHIM_CHECK_COLLECTIVES=1 (a fingerprint exchange before every
# collective, shim/sync/sync.c) costs: 2 ranks of the bundled trainer (sgd, --update fused, policy
# tests/equivalence/policies/sgd-fused.yaml: one all-reduce a step) on hostcuda, without and with
# the check, same run, alternating, median of ROUNDS. Figures from rank 0: wall time and
# collectives (JSON exit report, ACCELSHIM_REPORT), the shim's own mean time per fingerprint
# exchange (its info report line); added µs per collective = (wall checked - wall plain) /
# collectives. Backends mpi, and nccl when hostnccl is built. Prints; never fails on a figure.
# Env: STEPS (default 500), ROUNDS (3).
set -u
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
MLP=$B/tests/trainers/mlp
SHIM=$B/libaccelshim.so
KLIBS=$B/tests/trainers/libmlp_kernels_host.so:$B/collectives/libash_cast_kernels_host.so
POLICY=$BENCH_TOP/tests/equivalence/policies/sgd-fused.yaml
bench_skip_unless_built "$MLP" "$SHIM" "$B/tests/hostcuda/libcuda.so.1" "$B/collectives/libash_cast_kernels_host.so"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
STEPS=${STEPS:-500}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
backends=(mpi)
[ -e "$B/tests/hostnccl/libnccl.so.2" ] && backends+=(nccl)

run() {   # run BACKEND CHECK(0|1) TAG -> "collectives wall_s fingerprint_us" of rank 0 (us: 0 if none)
    local backend=$1 check=$2 tag=$1-$3 lp=$B/tests/hostcuda fp
    [ "$backend" = nccl ] && lp=$B/tests/hostnccl:$lp
    rm -f "$tmp/$tag"-*.json   # the shim never overwrites a report (O_EXCL)
    # info level in both runs (same logging cost): the report line with the fingerprint time
    # shellcheck disable=SC2016  # expanded by the rank shell
    bench_mpirun 2 -x LD_LIBRARY_PATH="$lp" -x HOSTCUDA_KERNEL_LIBS="$KLIBS" -x ACCELSHIM_POLICY="$POLICY" \
        -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_CHECK_COLLECTIVES="$check" -x ACCELSHIM_LOG=info \
        -x ACCELSHIM_REPORT="$tmp/$tag-{rank}.json" -x SHIM="$SHIM" \
        bash -c 'LD_PRELOAD=$SHIM exec "$0" "$@" --shard-rank "$OMPI_COMM_WORLD_RANK" --shard-count 2' \
        "$MLP" --steps "$STEPS" --batch 4 --optimizer sgd --update fused >"$tmp/$tag.log" 2>&1 || return 1
    fp=$(sed -n 's/^\[accelshim rank 0\] INFO report: check_collectives: .*, \([0-9.]*\) us each.*/\1/p' "$tmp/$tag.log" | head -1)
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["collectives"]
print(c["allreduces"] + c["broadcasts"], r["wall_s"], sys.argv[2])' "$tmp/$tag-0.json" "${fp:-0}"
}

echo "check_collectives cost: 2 ranks, mlp --optimizer sgd --update fused (policy sgd-fused.yaml), $STEPS steps (median of $ROUNDS)"
printf "%-8s %-9s %12s %12s %16s %16s\n" backend check collectives "wall ms/step" "added us/coll" "fingerprint us"
for backend in "${backends[@]}"; do
    pc=() pw=() cc=() cw=() cf=()
    for i in $(seq "$ROUNDS"); do
        read -r c w _ < <(run "$backend" 0 "plain$i") || { echo "$backend plain run failed:"; tail -5 "$tmp/$backend-plain$i.log"; continue 2; }
        pc+=("$c"); pw+=("$w")
        read -r c w f < <(run "$backend" 1 "check$i") || { echo "$backend checked run failed:"; tail -5 "$tmp/$backend-check$i.log"; continue 2; }
        cc+=("$c"); cw+=("$w"); cf+=("$f")
    done
    P_C=$(bench_median "${pc[@]}"); P_W=$(bench_median "${pw[@]}")
    C_C=$(bench_median "${cc[@]}"); C_W=$(bench_median "${cw[@]}"); C_F=$(bench_median "${cf[@]}")
    ADDED=$(awk -v a="$C_W" -v b="$P_W" -v n="$C_C" 'BEGIN { printf "%.2f", (n > 0 ? 1e6 * (a - b) / n : 0) }')
    RATIO=$(awk -v a="$C_W" -v b="$P_W" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
    awk -v b="$backend" -v s="$STEPS" -v pc="$P_C" -v pw="$P_W" -v cc="$C_C" -v cw="$C_W" -v cf="$C_F" \
        -v added="$ADDED" -v ratio="$RATIO" 'BEGIN {
        printf "%-8s %-9s %12d %12.4f %16s %16s\n", b, "off", pc, 1000 * pw / s, "-", "-"
        printf "%-8s %-9s %12d %12.4f %16.2f %16.2f\n", b, "on", cc, 1000 * cw / s, added, cf
        printf "%-8s %-9s %12s %11.3fx\n", b, "on/off", "", ratio }'
    bench_ratio "${backend}_wall_check_over_plain" "$RATIO"
    bench_raw "${backend}_check_added_us_per_collective" "$ADDED"
    bench_raw "${backend}_fingerprint_us_each" "$C_F"
    bench_raw "${backend}_collectives_per_rank" "$C_C"
done
bench_note "hostcuda on $(nproc) CPU cores: added us per collective is wall-time difference / collectives (noisy at this size); fingerprint us is the shim's own mean per exchange"
