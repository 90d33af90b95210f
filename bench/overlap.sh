#!/usr/bin/env bash
# overlap.sh — gradient communication overlapped with the backward pass, side by side in one run:
# tests/trainers/layers (L layers, one gradient allocation, backward from the last layer to the
# first, one sgd_apply) on 2 ranks (mpirun, hostcuda) under accelshim, for each backend:
#   base     the same per-rank work with no communication (ACCELSHIM_SYNC=optional, no policy)
#   without  examples/layers-overlap.yaml with ACCELSHIM_OVERLAP=off: everything reduced at the
#            sync point (sgd_apply)
#   with     examples/layers-overlap.yaml: each layer's gradients reduced after its layer_backward,
#            while the layers below it run
# Step time = the median of rank 0's `step S time_ms T` lines (the steps after the first two) over
# ROUNDS rounds that run the three one after the other (a median: a 2-core machine shared with
# other work adds spikes); the trainer's own mean_step_ms (median over rounds) goes to the JSON.
# Exposed communication = step(run) - step(base); ratios with/without of the exposed
# communication and of the step time (below 1: overlap helps).
# Checks (the `check` column): both ranks end bit-identical, and `with` ends bit-identical to
# `without` (2 ranks: a mean of two values, elementwise, whatever the pieces); control: the base
# run's ranks differ (no communication, different shards), so the identity check can fail.
# A shim whose policy parser does not know `ready:` yet: `without` runs examples/layers.yaml and
# `with` is skipped. Prints; never fails on a figure. Env: BACKENDS ("mpi nccl"), LAYERS (6),
# SIZE (131072 floats a layer), BATCH (1), WORK (0), DEVICE_US (1000: each layer's backward also
# keeps its stream busy 1 ms without host work, as a GPU kernel would: tests/trainers/layers
# --device-us), STEPS (60), ROUNDS (5).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
LAYERS_BIN=$B/tests/trainers/layers
SHIM=$B/libaccelshim.so
KLIBS=$B/tests/trainers/liblayers_kernels_host.so:$B/collectives/libash_cast_kernels_host.so
POL_READY=$BENCH_TOP/examples/layers-overlap.yaml
POL_PLAIN=$BENCH_TOP/examples/layers.yaml
bench_skip_unless_built "$LAYERS_BIN" "$SHIM" "$B/tests/hostcuda/libcuda.so.1" \
    "$B/tests/trainers/liblayers_kernels_host.so" "$B/collectives/libash_cast_kernels_host.so"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
BACKENDS=${BACKENDS:-mpi nccl}
LAYERS=${LAYERS:-6}
SIZE=${SIZE:-131072}
BATCH=${BATCH:-1}
WORK=${WORK:-0}
DEVICE_US=${DEVICE_US:-1000}
STEPS=${STEPS:-60}
ROUNDS=${ROUNDS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ARGS=(--layers "$LAYERS" --size "$SIZE" --batch "$BATCH" --work "$WORK" --device-us "$DEVICE_US" --steps "$STEPS")

# run_job BACKEND POLICY SYNC OVERLAP OUTDIR: 2 ranks; rank r's stdout+stderr in OUTDIR/rank.r.log,
# its parameters in OUTDIR/rank.r; status of mpirun
run_job() {
    local be=$1 pol=$2 sync=$3 ovl=$4 d=$5 libpath=$B/tests/hostcuda
    [ "$be" = nccl ] && libpath=$B/tests/hostnccl:$libpath
    rm -rf "$d"; mkdir -p "$d"
    bench_mpirun 2 -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$KLIBS" \
        -x ACCELSHIM_POLICY="$pol" -x ACCELSHIM_SYNC="$sync" -x ACCELSHIM_OVERLAP="$ovl" \
        -x ACCELSHIM_BACKEND="$be" -x ACCELSHIM_LOG=info -x T_PRELOAD="$SHIM" \
        -x T_RANK_LOG="$d/rank.{rank}.log" bash -c "$(t_rank_cmd)" "$LAYERS_BIN" "${ARGS[@]}" \
        --dump "$d/rank.{rank}" >"$d/mpirun.log" 2>&1
}

mean_ms() { awk '$1 == "mean_step_ms" { print $2; f = 1 } END { if (!f) print "nan" }' "$1/rank.0.log"; }
step_lines() { awk '$1 == "step" && $3 == "time_ms" && $2 >= 2 { print $4 }' "$1/rank.0.log"; }
collectives() { sed -n 's/.*report: sync: \([0-9]*\) all-reduce.*/\1/p' "$1/rank.0.log" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && b != "nan" && b > 0) printf "%.3f", a / b; else print "nan" }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && b != "nan") printf "%.3f", a - b; else print "nan" }'; }

# does this shim take ready points? (a parser without them rejects the policy at start-up)
ready=1
if ! run_job mpi "$POL_READY" "" on "$TMP/probe" || ! grep -q '^mean_step_ms' "$TMP/probe/rank.0.log"; then
    ready=0
    echo "NOTE: this build rejects examples/layers-overlap.yaml (no ready points yet):"
    grep -ih 'policy\|error' "$TMP/probe"/rank.0.log "$TMP/probe/mpirun.log" 2>/dev/null | head -3 | sed 's/^/  /'
    echo "  'without' runs examples/layers.yaml; 'with' is not run"
    bench_note "ready points not supported by this build: 'with' not run; 'without' = examples/layers.yaml"
fi
POL_WITHOUT=$POL_READY
[ $ready -eq 1 ] || POL_WITHOUT=$POL_PLAIN

echo "overlap: tests/trainers/layers, $LAYERS layers x $SIZE f32 ($((LAYERS * SIZE * 4 / 1024)) KiB of gradients"
echo "  per step), --batch $BATCH --work $WORK, $STEPS steps, 2 ranks on hostcuda ($(nproc) cores);"
echo "  step = median of rank 0's step times over $ROUNDS rounds; exposed comm = step - step(base)"
printf "%-5s %-8s %10s %12s %6s  %s\n" backend run "step ms" "exposed ms" colls check
bench_raw layers "$LAYERS"
bench_raw size_per_layer "$SIZE"
bench_raw batch "$BATCH"
bench_raw work "$WORK"
bench_raw device_us "$DEVICE_US"
bench_raw steps "$STEPS"
bench_raw rounds "$ROUNDS"
bench_raw ready_points_supported "$ready"

for be in $BACKENDS; do
    if [ "$be" = nccl ] && [ ! -e "$B/tests/hostnccl/libnccl.so.2" ]; then
        echo "(nccl rows skipped: hostnccl not built)"; bench_note "nccl rows skipped: hostnccl not built"; continue
    fi
    base=() without=() with=() mbase=() mwithout=() mwith=() check=ok colls_without="" colls_with=""
    for _ in $(seq "$ROUNDS"); do
        if run_job "$be" "" optional "" "$TMP/base"; then
            mapfile -t -O ${#base[@]} base < <(step_lines "$TMP/base"); mbase+=("$(mean_ms "$TMP/base")")
            # control: with no communication the ranks' shards make their parameters differ
            ! cmp -s "$TMP/base/rank.0" "$TMP/base/rank.1" || check="base-ranks-identical"
        else check="base-failed"; fi
        if run_job "$be" "$POL_WITHOUT" "" off "$TMP/without"; then
            mapfile -t -O ${#without[@]} without < <(step_lines "$TMP/without")
            mwithout+=("$(mean_ms "$TMP/without")"); colls_without=$(collectives "$TMP/without")
            cmp -s "$TMP/without/rank.0" "$TMP/without/rank.1" || check="ranks-differ-without"
        else check="without-failed"; fi
        [ $ready -eq 1 ] || continue
        if run_job "$be" "$POL_READY" "" on "$TMP/with"; then
            mapfile -t -O ${#with[@]} with < <(step_lines "$TMP/with")
            mwith+=("$(mean_ms "$TMP/with")"); colls_with=$(collectives "$TMP/with")
            cmp -s "$TMP/with/rank.0" "$TMP/with/rank.1" || check="ranks-differ-with"
            cmp -s "$TMP/with/rank.0" "$TMP/without/rank.0" || check="with-differs-from-without"
        else check="with-failed"; fi
    done
    [ "$check" = ok ] || { echo "$be: a run failed or differed ($check); rank 0's log:"; tail -5 "$TMP"/*/rank.0.log | sed 's/^/  /'; }
    sb=nan sw=nan so=nan
    [ ${#base[@]} -gt 0 ] && sb=$(printf "%.3f" "$(bench_median "${base[@]}")")
    [ ${#without[@]} -gt 0 ] && sw=$(printf "%.3f" "$(bench_median "${without[@]}")")
    [ ${#with[@]} -gt 0 ] && so=$(printf "%.3f" "$(bench_median "${with[@]}")")
    ew=$(minus "$sw" "$sb") eo=$(minus "$so" "$sb")
    printf "%-5s %-8s %10s %12s %6s  %s\n" "$be" base "$sb" "-" 0 "$check"
    printf "%-5s %-8s %10s %12s %6s  %s\n" "$be" without "$sw" "$ew" "${colls_without:-?}" "$check"
    printf "%-5s %-8s %10s %12s %6s  %s\n" "$be" with "$so" "$eo" "${colls_with:--}" "$check"
    er=$(ratio "$eo" "$ew") sr=$(ratio "$so" "$sw")
    # the first backend's ratios also go under the plain names (mpi unless BACKENDS says otherwise)
    if [ -z "${first_be:-}" ]; then
        first_be=$be
        bench_ratio exposed_comm_with_over_without "$er"
        bench_ratio step_with_over_without "$sr"
        bench_raw backend_of_plain_ratios "$be"
    fi
    bench_ratio "${be}_exposed_comm_with_over_without" "$er"
    bench_ratio "${be}_step_with_over_without" "$sr"
    bench_raw "${be}_base_step_ms" "$sb"
    bench_raw "${be}_without_step_ms" "$sw"
    bench_raw "${be}_with_step_ms" "$so"
    bench_raw "${be}_without_exposed_comm_ms" "$ew"
    [ ${#mbase[@]} -gt 0 ] && bench_raw "${be}_base_mean_step_ms" "$(bench_median "${mbase[@]}")"
    [ ${#mwithout[@]} -gt 0 ] && bench_raw "${be}_without_mean_step_ms" "$(bench_median "${mwithout[@]}")"
    [ ${#mwith[@]} -gt 0 ] && bench_raw "${be}_with_mean_step_ms" "$(bench_median "${mwith[@]}")"
    bench_raw "${be}_with_exposed_comm_ms" "$eo"
    bench_raw "${be}_without_collectives" "${colls_without:-nan}"
    bench_raw "${be}_with_collectives" "${colls_with:-nan}"
    bench_raw "${be}_check" "$check"
    echo "$be: exposed comm with/without $er, step with/without $sr"
done
echo "(2 ranks on $(nproc) cores: each rank's stream worker computes the backward on a core, so the"
echo " communication started early competes with it for the CPUs; a GPU computes apart from the host)"
bench_note "hostcuda, no GPU: backward and communication share the host's cores"
exit 0
