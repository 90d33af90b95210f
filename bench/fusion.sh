#!/usr/bin/env bash
# fusion.sh — what `fuse: true` changes for a trainer that updates tensor by tensor: 2 ranks of the
# bundled trainer (--optimizer adam --update per-tensor: 4 update launches a step) on hostcuda,
# per-launch reduction (tests/equivalence/policies/adam-per-tensor.yaml) vs fused
# (adam-per-tensor-fused.yaml), same run, alternating, median of ROUNDS; and the same with many
# small tensors: --update-chunks 16 splits each tensor's update into 16 launches over slices (64
# adam_update launches a step; b2 has 4 floats, so 12 of them are empty and reduce nothing: 52
# all-reduces a step per launch). Figures from the ranks'
# JSON exit reports (ACCELSHIM_REPORT): collectives per rank, time in collectives (stream events),
# wall time of rank 0; ratios fused / per-launch. Backends mpi, and nccl when hostnccl is built.
# Prints; never fails on a figure. Env: STEPS (default 300), ROUNDS (3).
set -u
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
MLP=$B/tests/trainers/mlp
SHIM=$B/libaccelshim.so
KLIBS=$B/tests/trainers/libmlp_kernels_host.so:$B/collectives/libash_cast_kernels_host.so
POL=$BENCH_TOP/tests/equivalence/policies
bench_skip_unless_built "$MLP" "$SHIM" "$B/tests/hostcuda/libcuda.so.1" "$B/collectives/libash_cast_kernels_host.so"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
STEPS=${STEPS:-300}
ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
backends=(mpi)
[ -e "$B/tests/hostnccl/libnccl.so.2" ] && backends+=(nccl)

run() {   # run BACKEND POLICY TAG [MLP ARGS...] -> "collectives comm_s wall_s" of rank 0
    local backend=$1 pol=$2 tag=$1-$3 lp=$B/tests/hostcuda
    shift 3
    [ "$backend" = nccl ] && lp=$B/tests/hostnccl:$lp
    rm -f "$tmp/$tag"-*.json   # the shim never overwrites a report (O_EXCL)
    # shellcheck disable=SC2016  # expanded by the rank shell
    bench_mpirun 2 -x LD_LIBRARY_PATH="$lp" -x HOSTCUDA_KERNEL_LIBS="$KLIBS" -x ACCELSHIM_POLICY="$pol" \
        -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_REPORT="$tmp/$tag-{rank}.json" -x SHIM="$SHIM" \
        bash -c 'LD_PRELOAD=$SHIM exec "$0" "$@" --shard-rank "$OMPI_COMM_WORLD_RANK" --shard-count 2' \
        "$MLP" --steps "$STEPS" --batch 4 --optimizer adam --update per-tensor "$@" >"$tmp/$tag.log" 2>&1 || return 1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["collectives"]
print(c["allreduces"] + c["broadcasts"], c["comm_s"], r["wall_s"])' "$tmp/$tag-0.json"
}

echo "fused vs per-launch reduction: 2 ranks, mlp --optimizer adam --update per-tensor, $STEPS steps (median of $ROUNDS)"
echo "launches: adam_update launches a step (4: one per tensor; 64: --update-chunks 16)"
printf "%-8s %-8s %-11s %12s %14s %12s\n" backend launches mode collectives "comm ms/step" "wall ms/step"
# case: "LAUNCHES KEY-SUFFIX MLP-ARGS..." (the 4-launch case keeps the original keys)
cases=("4 " "64 _64 --update-chunks 16")
for backend in "${backends[@]}"; do
  for cs in "${cases[@]}"; do
    read -r nl sfx extra <<<"$cs"
    # shellcheck disable=SC2206  # extra is a word list
    margs=($extra)
    pc=() pm=() pw=() fc=() fm=() fw=()
    for i in $(seq "$ROUNDS"); do
        read -r c m w < <(run "$backend" "$POL/adam-per-tensor.yaml" "per$nl-$i" "${margs[@]}") || { echo "$backend $nl-launch per-launch run failed:"; tail -5 "$tmp/$backend-per$nl-$i.log"; continue 2; }
        pc+=("$c"); pm+=("$m"); pw+=("$w")
        read -r c m w < <(run "$backend" "$POL/adam-per-tensor-fused.yaml" "fused$nl-$i" "${margs[@]}") || { echo "$backend $nl-launch fused run failed:"; tail -5 "$tmp/$backend-fused$nl-$i.log"; continue 2; }
        fc+=("$c"); fm+=("$m"); fw+=("$w")
    done
    P_C=$(bench_median "${pc[@]}"); P_M=$(bench_median "${pm[@]}"); P_W=$(bench_median "${pw[@]}")
    F_C=$(bench_median "${fc[@]}"); F_M=$(bench_median "${fm[@]}"); F_W=$(bench_median "${fw[@]}")
    awk -v b="$backend" -v nl="$nl" -v s="$STEPS" -v pc="$P_C" -v pm="$P_M" -v pw="$P_W" -v fc="$F_C" -v fm="$F_M" -v fw="$F_W" 'BEGIN {
        printf "%-8s %-8s %-11s %12d %14.4f %12.4f\n", b, nl, "per-launch", pc, 1000 * pm / s, 1000 * pw / s
        printf "%-8s %-8s %-11s %12d %14.4f %12.4f\n", b, nl, "fused", fc, 1000 * fm / s, 1000 * fw / s
        printf "%-8s %-8s %-11s %11.3fx %13.3fx %11.3fx\n", b, nl, "fused/per", fc / pc, (pm > 0 ? fm / pm : 0), (pw > 0 ? fw / pw : 0) }'
    bench_ratio "${backend}_collectives_fused_over_per_launch$sfx" "$(awk -v a="$F_C" -v b="$P_C" 'BEGIN { printf "%.4f", a / b }')"
    bench_ratio "${backend}_comm_time_fused_over_per_launch$sfx" "$(awk -v a="$F_M" -v b="$P_M" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')"
    bench_ratio "${backend}_wall_fused_over_per_launch$sfx" "$(awk -v a="$F_W" -v b="$P_W" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')"
    bench_raw "${backend}_per_launch_comm_s$sfx" "$P_M"; bench_raw "${backend}_fused_comm_s$sfx" "$F_M"
  done
done
bench_note "hostcuda on $(nproc) CPU cores: ratios show the collective count and latency saved, not GPU figures"
