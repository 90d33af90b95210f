#!/usr/bin/env bash
# Property: a ready point that fires twice in one step never gives a wrong result (issue 23,
# item 4). tests/trainers/layers --accum 2 --layers 4 --size 4096 with examples/layers-overlap.yaml
# (a ready point after every layer_backward, so each layer's region becomes ready once per pass,
# twice a step): the second firing proves the ready point is not the region's last writer. The
# shim then orders that launch after the region's early all-reduce, reduces the region again at
# the sync point (a mean: the early average is the same on every rank, so averaging it again
# with the second pass added gives the average of both passes) and turns the ready point off for
# the rest of the run, with one warning per rank naming it. 2 ranks (batch 4 each), mpi and nccl:
#   the ranks end bit-identical, and equal (rtol 1e-5) to 1 rank with batch 8 and to the same job
#   with ACCELSHIM_OVERLAP=off; exactly one warning per rank names gradients[0].ready[0].
# With reduce: sum the early sum cannot be taken back: the job stops (exit 2) naming the ready
# point. Negative control: a ready point the shim cannot check (offset/count form, nth: 1, on
# layer 3's region, after its first-pass launch) sends layer 3 before its second pass: the result
# differs from overlap off, so the comparison and the early reduction are real (with nccl the
# early reduction races the second pass, as on a GPU: up to 3 runs, one must differ).
set -u
. "$(dirname "$0")/lib.sh"
eq_preconditions
LAYERS=$EQ_BUILD/tests/trainers/layers
LKLIBS=$EQ_BUILD/tests/trainers/liblayers_kernels_host.so:$EQ_BUILD/collectives/libash_cast_kernels_host.so
[ -x "$LAYERS" ] || { echo "1..0 # SKIP $LAYERS not built"; exit 77; }
[ -x "$T_LAUNCHER" ] || { echo "1..0 # SKIP launcher missing"; exit 77; }
backends=(mpi)
[ -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ] && backends+=(nccl)
T=$EQ_TMP
ARGS=(--accum 2 --layers 4 --size 4096 --steps 6 --work 5)
failed=0 n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
no() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }

# the 1-rank reference: batch 8, no shim
LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$LKLIBS "$LAYERS" "${ARGS[@]}" --batch 8 \
    --dump "$T/ref.bin" >"$T/ref.log" 2>&1 || { cat "$T/ref.log"; echo "1..0 # the reference run failed"; exit 1; }

# job BACKEND POLICY OUT [ENV=VAL...]: 2 ranks of layers --batch 4 under the launcher; $T/OUT.{0,1}.bin
job() {
    local be=$1 pol=$2 out=$3 engine=(--backend mpi); shift 3
    [ "$be" = nccl ] && engine=(--backend nccl --launcher local)
    env HOSTCUDA_KERNEL_LIBS="$LKLIBS" "$@" timeout -k 5 120 "$T_LAUNCHER" --cpu -n 2 "${engine[@]}" \
        --timeout 30 --policy "$pol" -- "$LAYERS" "${ARGS[@]}" --batch 4 --shard-rank '{rank}' \
        --shard-count '{world_size}' --dump "$T/$out.{rank}.bin" >"$T/$out.log" 2>&1
}
show() { sed 's/^/#   | /' "$T/$1.log" | tail -n 12; }

sed 's/^    dtype: f32$/    dtype: f32\n    reduce: sum/' "$EQ_TOP/examples/layers-overlap.yaml" >"$T/sum.yaml"
grep -q 'reduce: sum' "$T/sum.yaml" || { echo "1..0 # could not make the sum policy"; exit 1; }
# the control: layer 3's region (offset 3*4096) ready after the FIRST layer_backward of a step
sed '/^    ready:/,$d' "$EQ_TOP/examples/layers-overlap.yaml" >"$T/control.yaml"
printf '    ready:\n      - after: "layer_backward"\n        nth: 1\n        offset: 12288\n        count: 4096\n' >>"$T/control.yaml"

echo "1..$((${#backends[@]} * 3))"
for be in "${backends[@]}"; do
    d="$be: layers --accum 2, a ready point that fires twice a step"
    if ! job "$be" "$EQ_TOP/examples/layers-overlap.yaml" "$be-on" || ! job "$be" "$EQ_TOP/examples/layers-overlap.yaml" "$be-off" ACCELSHIM_OVERLAP=off; then
        show "$be-on"; show "$be-off"; no "$d: the job failed"
    else
        rc=0
        out=$("$EQ_CMP" "$T/$be-on.0.bin" "$T/$be-on.1.bin" --identical) || { echo "# ranks differ: $out"; rc=1; }
        out=$("$EQ_CMP" --ref "$T/ref.bin" --rtol 1e-5 --atol 1e-6 "$T/$be-on.0.bin") || { echo "# vs 1 rank: $out"; rc=1; }
        out=$("$EQ_CMP" --ref "$T/$be-off.0.bin" --rtol 1e-5 --atol 1e-6 "$T/$be-on.0.bin") || { echo "# vs overlap off: $out"; rc=1; }
        for r in 0 1; do
            c=$(grep -c "rank $r\] WARN overlap: gradients\[0\]\.ready\[0\] (after: \"layer_backward\".*fires twice" "$T/$be-on.log")
            [ "$c" = 1 ] || { echo "# rank $r: $c warning(s) naming the ready point, want 1"; rc=1; }
        done
        [ $rc -eq 0 ] || show "$be-on"
        [ $rc -eq 0 ] && ok "$d: ranks identical, = 1 rank and = overlap off, one warning per rank" || no "$d"
    fi
    d="$be: the same with reduce: sum stops the job"
    job "$be" "$T/sum.yaml" "$be-sum"; rc=$?
    if [ "$rc" = 2 ] && grep -q 'ready\[0\] (after: "layer_backward".*fires twice.*reduce: sum' "$T/$be-sum.log"; then
        ok "$d (exit 2, naming the ready point)"
    else
        show "$be-sum"; no "$d: exit $rc, expected 2 with the line"
    fi
    d="$be: control: a ready point the shim cannot check, before the last writer, changes the result"
    # mpi stages the region at the ready point: the early copy is certain. nccl reduces it on a
    # stream of its own while layer 3's second pass writes it: a race, as on a GPU, which a loaded
    # machine can let the writer win; so up to 3 tries, the first that shows the difference counts
    tries=1
    [ "$be" = nccl ] && tries=3
    verdict=same
    for ((k = 1; k <= tries; k++)); do
        if ! job "$be" "$T/control.yaml" "$be-ctl"; then
            verdict=failed
            break
        elif ! "$EQ_CMP" --ref "$T/$be-off.0.bin" --rtol 1e-5 --atol 1e-6 "$T/$be-ctl.0.bin" >"$T/$be-ctl.cmp"; then
            verdict=differs
            break
        fi
    done
    case $verdict in
    failed) show "$be-ctl"; no "$d: the job failed" ;;
    same) no "$d: it changed nothing in $tries run(s): the comparison cannot fail" ;;
    *) sed -n 1,2p "$T/$be-ctl.cmp" | sed 's/^/# expected difference: /'; ok "$d (run $k of at most $tries)" ;;
    esac
done
exit $failed
