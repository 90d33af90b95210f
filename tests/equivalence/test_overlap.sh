#!/usr/bin/env bash
# test_overlap.sh [BACKEND...] — overlap of gradient all-reduces with the backward pass
# (gradients[].ready and overlap: auto; shim/sync/overlap.c, docs/overlap.md).
# Property: a job with ready points ends with parameters BIT-IDENTICAL to the same job with
# ACCELSHIM_OVERLAP=off (every region reduced at the sync point), on every rank, and the regions
# really went early (the exit report counts them). Cases, for N = 2 and 4 ranks, wire same and
# bf16, each backend (mpi; nccl when hostnccl is built), under HOSTCUDA_JITTER (poison is on):
#   layers-ready   tests/trainers/layers, explicit ready points (examples/layers-overlap.yaml)
#   layers-auto    the same with overlap: auto, and --accum 2 (the last writer of each layer is
#                  its launch in the second pass: the learner must find it)
#   mlp-auto       the bundled trainer, overlap: auto, --gemm cublas (cuBLAS writes the weight
#                  gradients: the learner sees them through the GEMM hooks)
#   mlp-partial    explicit ready points where one never fires (nth: 3 of 2 launches): its region
#                  is reduced at the sync point (the report counts bytes there), the other early
#   layers-bucket  fuse: true with a 16 KiB bucket and ready points on layers 5, 3 and 2 of 6
#                  (8 KiB each): layers 5 and 3 fill a bucket (not adjacent: packed into one
#                  buffer), layer 2 waits in the next one until the sync point
#   layers-vary    overlap: auto, and every 5th step launches differently (tests/trainers/layers
#                  --vary-every 5): skip (a learned launch missing) and swap (two launches in the
#                  other order) fall back with ONE warning per rank, bit-identical to overlap off;
#                  extra (one more launch into a region already reduced) is ordered after that
#                  reduction and the region reduced again: within rtol 1e-5 (the average taken
#                  twice rounds differently), with both warnings; and swap again on 4 ranks: a
#                  fallback in the middle of a step must not reduce the regions already sent a
#                  second time — checked by the exit report: bytes reduced early + bytes at the
#                  sync points = steps x buffer, every byte once a step
# Negative control: --accum 2 with a ready point the shim cannot check (offset/count form, nth: 1:
# layer 3's region after its first-pass launch, before the second pass adds to it) must give a
# different result, showing the comparison and the early reduction are real (a ready point with a
# buffer form that fires twice a step is caught: tests/equivalence/test_overlap_twice.sh). TAP.
set -u
. "$(dirname "$0")/lib.sh"
failed=0
eval "eq_$(declare -f tap_case)"
tap_case() { [ "$1" -eq 0 ] || failed=1; eq_tap_case "$@"; }
eq_preconditions
backends=("$@")
[ ${#backends[@]} -gt 0 ] || { backends=(mpi); [ -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ] && backends+=(nccl); }
LAYERS=$EQ_BUILD/tests/trainers/layers
LKLIBS=$EQ_BUILD/tests/trainers/liblayers_kernels_host.so:$EQ_BUILD/collectives/libash_cast_kernels_host.so
[ -x "$LAYERS" ] || { echo "1..0 # SKIP $LAYERS not built"; exit 77; }
export HOSTCUDA_JITTER=${HOSTCUDA_JITTER:-20261201}
T=$EQ_TMP
LARGS=(--layers 4 --size 4096 --steps 6 --work 20)
MARGS=(--steps 8 --batch 4 --optimizer sgd --update fused --gemm cublas)

# the policies: examples/layers-overlap.yaml, and auto forms of it and of the mlp's
cp "$EQ_TOP/examples/layers-overlap.yaml" "$T/layers-ready.yaml"
sed '/^    ready:/,$d' "$T/layers-ready.yaml" >"$T/layers-auto.yaml"
echo "    overlap: auto" >>"$T/layers-auto.yaml"
sed '/^    ready:/,$d' "$T/layers-ready.yaml" >"$T/layers-control.yaml"
printf '    ready:\n      - after: "layer_backward"\n        nth: 1\n        offset: 12288\n        count: 4096\n' >>"$T/layers-control.yaml"
cp "$EQ_POL/sgd-fused.yaml" "$T/mlp-auto.yaml"
echo "    overlap: auto" >>"$T/mlp-auto.yaml"
cp "$EQ_POL/sgd-fused.yaml" "$T/mlp-partial.yaml"
cat >>"$T/mlp-partial.yaml" <<'EOF'
    ready:
      - after: "linear_backward_weight"
        nth: 1
        offset: 544
        count: 132
      - after: "linear_backward_weight"
        nth: 3
        offset: 0
        count: 544
EOF
sed '/^    ready:/,$d' "$T/layers-ready.yaml" >"$T/layers-bucket.yaml"
cat >>"$T/layers-bucket.yaml" <<'EOF'
    fuse: true
    bucket_cap_bytes: 16384
    ready:
      - after: "layer_backward"
        nth: 1
        buffer: { arg: 0, count_arg: 1 }
      - after: "layer_backward"
        nth: 3
        buffer: { arg: 0, count_arg: 1 }
      - after: "layer_backward"
        nth: 4
        buffer: { arg: 0, count_arg: 1 }
EOF

# run PROG NP BACKEND POLICY PREFIX ARGS...: N ranks of PROG under the shim
run() {
    local prog=$1 np=$2 be=$3 pol=$4 prefix=$5; shift 5
    local libpath=$T_HOSTCUDA_DIR:$EQ_BUILD/tests/hostcublas klibs=$LKLIBS bin=$LAYERS
    [ "$be" = nccl ] && libpath=$T_HOSTNCCL_DIR:$libpath
    [ "$prog" = mlp ] && { klibs=$EQ_KLIBS; bin=$EQ_MLP; }
    t_mpirun "$np" -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$klibs" \
        -x HOSTCUDA_JITTER -x ACCELSHIM_OVERLAP="${OVERLAP:-on}" -x ACCELSHIM_LOG=info \
        -x ACCELSHIM_POLICY="$pol" -x ACCELSHIM_BACKEND="$be" -x T_PRELOAD="$EQ_SHIM" \
        -x T_RANK_LOG="$prefix.{rank}.log" bash -c "$(t_rank_cmd)" "$bin" "$@" --save "$prefix.{rank}"
}
# same DIR NP REF: every rank of DIR/on bit-identical to REF (rank 0 of the run without overlap)
same() {
    local r ok=0 out
    for ((r = 0; r < $2; r++)); do
        out=$("$EQ_CMP" "$1/on.$r" "$3" --identical) || { ok=1; echo "# rank $r with overlap vs without: $out"; }
    done
    return $ok
}
# once DIR BYTES: rank 0's report counts every byte of the buffer reduced exactly once a step:
# early + at the sync points = BYTES (steps x buffer bytes)
once() {
    local line e y
    line=$(grep -h 'report: overlap:' "$1/on.0.log" | head -1)
    e=$(sed -n 's/.* \([0-9]*\) bytes reduced early.*/\1/p' <<<"$line")
    y=$(sed -n 's/.* \([0-9]*\) bytes at the sync points.*/\1/p' <<<"$line")
    [ -n "$e" ] && [ -n "$y" ] && [ $((e + y)) -eq "$2" ] && return 0
    echo "# bytes reduced: ${e:-?} early + ${y:-?} at the sync points, want $2 in all: $line"; return 1
}
# early DIR: rank 0's exit report says regions were reduced early (the overlap really happened)
early() {
    local line
    line=$(grep -h 'report: overlap:' "$1/on.0.log" | head -1)
    case $line in *": 0 region(s)"*|"") echo "# no region went early: ${line:-no overlap report}"; return 1 ;; esac
    grep -q 'fell back' <<<"$line" && { echo "# $line"; return 1; }
    return 0
}

echo "1..$(( ${#backends[@]} * (2 * 2 * 3 + 2 * 2 + 4 + 1) ))"
for be in "${backends[@]}"; do
    for np in 2 4; do
        for wire in same bf16; do
            for c in layers-ready layers-auto mlp-auto; do
                d=$T/$be-$np-$wire-$c; mkdir -p "$d"
                eq_policy "$T/$c.yaml" "$wire" "$d/policy.yaml"
                [ "$wire" = bf16 ] && ! grep -q 'wire:' "$d/policy.yaml" && sed -i 's/^    dtype: f32$/    dtype: f32\n    wire: bf16/' "$d/policy.yaml"
                prog=layers args=("${LARGS[@]}")
                [ "$c" = mlp-auto ] && prog=mlp args=("${MARGS[@]}")
                [ "$c" = layers-auto ] && args+=(--accum 2)
                desc="$be N=$np wire=$wire $c: overlap on == overlap off, bit for bit"
                if ! OVERLAP=off run "$prog" "$np" "$be" "$d/policy.yaml" "$d/off" "${args[@]}" ||
                   ! run "$prog" "$np" "$be" "$d/policy.yaml" "$d/on" "${args[@]}"; then
                    echo "# ranks failed:"; eq_show "$d"/*.0.log; tap_case 1 "$desc"; continue
                fi
                rc=0
                same "$d" "$np" "$d/off.0" || rc=1
                early "$d" || rc=1
                [ "$prog" = layers ] && { once "$d" $((6 * 4 * 4096 * 4)) || rc=1; }
                [ $rc -eq 0 ] || eq_show "$d/on.0.log"
                tap_case $rc "$desc"
            done
        done
    done
    # partial ready points and buckets: 2 ranks, wire same and bf16
    for wire in same bf16; do
        for c in mlp-partial layers-bucket; do
            d=$T/$be-2-$wire-$c; mkdir -p "$d"
            eq_policy "$T/$c.yaml" "$wire" "$d/policy.yaml"
            [ "$wire" = bf16 ] && ! grep -q 'wire:' "$d/policy.yaml" && sed -i 's/^    dtype: f32$/    dtype: f32\n    wire: bf16/' "$d/policy.yaml"
            prog=layers args=(--layers 6 --size 2048 --steps 6 --work 20)
            [ "$c" = mlp-partial ] && prog=mlp args=(--steps 8 --batch 4 --optimizer sgd --update fused)
            desc="$be N=2 wire=$wire $c: overlap on == overlap off, bit for bit"
            if ! OVERLAP=off run "$prog" 2 "$be" "$d/policy.yaml" "$d/off" "${args[@]}" ||
               ! run "$prog" 2 "$be" "$d/policy.yaml" "$d/on" "${args[@]}"; then
                echo "# ranks failed:"; eq_show "$d"/*.0.log; tap_case 1 "$desc"; continue
            fi
            rc=0
            same "$d" 2 "$d/off.0" || rc=1
            early "$d" || rc=1
            line=$(grep -h 'report: overlap:' "$d/on.0.log" | head -1)
            case $c in
                mlp-partial) # W1/b1 (2176 bytes a step) at the sync point, W2/b2 early
                    [[ $line == *" 3696 bytes reduced early in 7 step(s); "* ]] || { echo "# unexpected split: $line"; rc=1; } ;;
                layers-bucket) # layers 5, 3, 2: 3 x 8 KiB early in each of steps 1-5
                    [[ $line == *" 122880 bytes reduced early in 5 step(s); "* ]] || { echo "# unexpected split: $line"; rc=1; } ;;
            esac
            [ $rc -eq 0 ] || eq_show "$d/on.0.log"
            tap_case $rc "$desc"
        done
    done
    # learned ready points whose pattern changes: fall back, never a wrong result
    for v in skip swap extra; do
        d=$T/$be-vary-$v; mkdir -p "$d"
        desc="$be N=2 layers-vary $v: overlap: auto falls back with one warning"
        args=(--layers 4 --size 4096 --steps 10 --work 20 --vary-every 5 --vary "$v")
        if ! OVERLAP=off run layers 2 "$be" "$T/layers-auto.yaml" "$d/off" "${args[@]}" ||
           ! run layers 2 "$be" "$T/layers-auto.yaml" "$d/on" "${args[@]}"; then
            echo "# ranks failed:"; eq_show "$d"/*.0.log; tap_case 1 "$desc"; continue
        fi
        rc=0
        if [ "$v" = extra ]; then
            for r in 0 1; do
                out=$("$EQ_CMP" --ref "$d/off.0" --rtol 1e-5 --atol 1e-6 "$d/on.$r") || { echo "# rank $r: $out"; rc=1; }
            done
            grep -q 'reduced again at the sync point' "$d/on.0.log" || { echo "# no warning about the region reduced again"; rc=1; }
        else
            same "$d" 2 "$d/off.0" || rc=1
            once "$d" $((10 * 4 * 4096 * 4)) || rc=1
        fi
        for r in 0 1; do
            c=$(grep -c 'learned ready points off for this rule' "$d/on.$r.log")
            [ "$c" -eq 1 ] || { echo "# rank $r: $c fallback warning(s), want 1"; rc=1; }
        done
        grep -q 'fell back' "$d/on.0.log" || { echo "# the report does not say it fell back"; rc=1; }
        [ $rc -eq 0 ] || eq_show "$d/on.0.log"
        tap_case $rc "$desc"
    done
    d=$T/$be-vary-4; mkdir -p "$d"
    cp "$T/layers-auto.yaml" "$d/policy.yaml"
    desc="$be N=4 layers-vary swap: the fallback mid-step reduces no region twice"
    args=(--layers 4 --size 4096 --steps 10 --work 20 --vary-every 5 --vary swap)
    if ! OVERLAP=off run layers 4 "$be" "$d/policy.yaml" "$d/off" "${args[@]}" ||
       ! run layers 4 "$be" "$d/policy.yaml" "$d/on" "${args[@]}"; then
        echo "# ranks failed:"; eq_show "$d"/*.0.log; tap_case 1 "$desc"
    else
        rc=0
        same "$d" 4 "$d/off.0" || rc=1
        once "$d" $((10 * 4 * 4096 * 4)) || rc=1
        grep -q 'fell back' "$d/on.0.log" || { echo "# the report does not say it fell back"; rc=1; }
        [ $rc -eq 0 ] || eq_show "$d/on.0.log"
        tap_case $rc "$desc"
    fi
    # negative control: a ready point before the last writer that the shim cannot see as such
    # (--accum 2; layer 3's region by offset/count after the step's first layer_backward)
    d=$T/$be-control; mkdir -p "$d"
    desc="$be N=2 control: a ready point before the region's last writer gives a different result"
    if ! OVERLAP=off run layers 2 "$be" "$T/layers-control.yaml" "$d/off" "${LARGS[@]}" --accum 2 ||
       ! run layers 2 "$be" "$T/layers-control.yaml" "$d/on" "${LARGS[@]}" --accum 2; then
        echo "# ranks failed:"; eq_show "$d"/*.0.log; tap_case 1 "$desc"; continue
    fi
    if "$EQ_CMP" "$d/on.0" "$d/off.0" --identical >"$d/cmp.txt"; then
        echo "# the misplaced ready point changed nothing: the comparison cannot fail"; tap_case 1 "$desc"
    else
        sed -n 1,3p "$d/cmp.txt" | sed 's/^/# expected difference: /'; tap_case 0 "$desc"
    fi
done
exit $failed
