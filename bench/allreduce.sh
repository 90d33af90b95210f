#!/usr/bin/env bash
# allreduce.sh — what a sync point costs against hand-written MPI, side by side in one run: a 64 MiB
# f32 gradient all-reduced on 2 ranks (mpirun, hostcuda) by (a) allreduce_app, a plain Driver-API
# program under LD_PRELOAD=libaccelshim.so whose kernel launch is the sync point (policy
# `gradients: at: ash_bench_consume, buffer {arg: 0, count_arg: 1}, reduce: mean`), for backends
# mpi and nccl (hostnccl) and wires same, bf16, f16; and (b) allreduce_mpi, MPI_Allreduce on a host
# buffer of the same size. Each shim run is paired with a plain-MPI run just before it; a run's
# time = median of ITERS timed iterations after WARMUP; a row = the lower of ROUNDS such runs'
# medians on each side (other tenants of a small machine slow whole runs); ratio = plain_ms /
# shim_ms (DESIGN target >= 0.9 for wire same on GPUs). Each shim run checks the result (every rank = the mean) and that the exit
# report names the backend asked for. Diagnostic rows take the mpi backend's time apart: plain
# MPI_Allreduce in 4 MiB pieces (what the pipelined backend runs per slot; its ratio to the shim is
# the fairer one where a single 64 MiB MPI_Allreduce is slower than pieces, as on small caches),
# MPI_Iallreduce + MPI_Wait (the backend's wait when a direct caller sets a timeout; the sync
# engine bounds waits with its watchdog and uses blocking MPI_Allreduce), and host staging alone
# (DtoH + HtoD on hostcuda).
# Prints; never fails on a figure. Env: COUNT (16777216 floats), WARMUP (2), ITERS (7), ROUNDS (2),
# NCCL_ROUNDS (1), BACKENDS ("mpi nccl"), WIRES ("same bf16 f16"), DIAG (1: the diagnostic rows).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
B=$BENCH_BUILD
APP=$B/bench/allreduce_app
RAW=$B/bench/allreduce_mpi
PTX=$B/bench/allreduce_kernels.ptx
KLIBS=$B/bench/liballreduce_kernels_host.so:$B/collectives/libash_cast_kernels_host.so
SHIM=$B/libaccelshim.so
bench_skip_unless_built "$APP" "$RAW" "$PTX" "$SHIM" "$B/tests/hostcuda/libcuda.so.1" \
    "$B/bench/liballreduce_kernels_host.so" "$B/collectives/libash_cast_kernels_host.so"
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
COUNT=${COUNT:-16777216}
WARMUP=${WARMUP:-2}
ITERS=${ITERS:-7}
ROUNDS=${ROUNDS:-2}
NCCL_ROUNDS=${NCCL_ROUNDS:-1}   # hostnccl is a slow test double: one run per nccl row
BACKENDS=${BACKENDS:-mpi nccl}
WIRES=${WIRES:-same bf16 f16}
DIAG=${DIAG:-1}
NP=2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

median_of() { sed -n 's/.*median_ms \([0-9.]*\).*/\1/p' | head -1; }
lowest() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | head -1; }
ratio_of() { awk -v r="${1:-0}" -v s="${2:-0}" 'BEGIN { if (s + 0 > 0 && r + 0 > 0) printf "%.3f", r / s; else print "nan" }'; }

# pair BACKEND WIRE [mpirun args...] -> "plain_ms shim_ms check backend": ROUNDS (plain, shim) runs
pair() {
    local be=$1 wire=$2; shift 2
    local raws=() shims=() checks="" used="" raw shim check u rounds=$ROUNDS
    [ "$be" = nccl ] && rounds=$NCCL_ROUNDS
    for _ in $(seq "$rounds"); do
        raw=$(run_raw)
        read -r shim check u < <(run_shim "$be" "$wire" "$@")
        raws+=("${raw:-nan}"); shims+=("$shim")
        [ "$check" = ok ] || checks="$checks $check"
        [ "$u" = "$be" ] || used="(backend $u)"
    done
    raw=$(lowest "${raws[@]}"); shim=$(lowest "${shims[@]}")
    check=${checks:-ok}
    echo "${raw:-nan} ${shim:-nan} ${check# }$used"
}

# plain MPI_Allreduce on a host buffer [--mode blocking|iwait|ipoll] [--chunk C] -> median ms
run_raw() {
    bench_mpirun "$NP" "$RAW" --count "$COUNT" --warmup "$WARMUP" --iters "$ITERS" "$@" 2>"$TMP/raw.err" | median_of
}

# run_shim BACKEND WIRE [mpirun args...] -> "median_ms check backend_used" (rank logs in $TMP)
run_shim() {
    local be=$1 wire=$2; shift 2
    local libpath=$B/tests/hostcuda
    [ "$be" = nccl ] && libpath=$B/tests/hostnccl:$libpath
    cat >"$TMP/policy.yaml" <<EOF
version: 1
gradients:
  - at: "ash_bench_consume"
    buffer: { arg: 0, count_arg: 1 }
    dtype: f32
    reduce: mean
    wire: $wire
EOF
    rm -f "$TMP"/rank*.log
    # shellcheck disable=SC2016  # expanded by each rank's shell
    bench_mpirun "$NP" -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$KLIBS" \
        -x ACCELSHIM_POLICY="$TMP/policy.yaml" -x ACCELSHIM_BACKEND="$be" -x ACCELSHIM_LOG=info \
        -x BENCH_SHIM="$SHIM" -x BENCH_TMP="$TMP" "$@" \
        bash -c 'LD_PRELOAD=$BENCH_SHIM exec "$@" 2>"$BENCH_TMP/rank$OMPI_COMM_WORLD_RANK.log"' \
        _ "$APP" --ptx "$PTX" --count "$COUNT" --warmup "$WARMUP" --iters "$ITERS" >"$TMP/app.out" 2>"$TMP/mpirun.err"
    local rc=$? ms check used n
    ms=$(median_of <"$TMP/app.out")
    check=$(sed -n 's/.*check \([A-Za-z]*\).*/\1/p' "$TMP/app.out" | sort -u | paste -sd+)
    used=$(sed -n 's/.*report: sync: \([0-9]*\) all-reduce.*backend \([a-z]*\).*/\2/p' "$TMP/rank0.log")
    n=$(sed -n 's/.*report: sync: \([0-9]*\) all-reduce.*/\1/p' "$TMP/rank0.log")
    [ "$rc" -eq 0 ] || check="exit$rc"
    [ "${n:-0}" -eq $((WARMUP + ITERS)) ] || check="${check:-none}/${n:-0}-allreduces"
    echo "${ms:-nan} ${check:-none} ${used:-none}"
}

mib=$(awk -v c="$COUNT" 'BEGIN { printf "%.4g", c * 4 / 1048576 }')
echo "allreduce: $mib MiB f32 gradient ($COUNT floats), $NP ranks on hostcuda (no GPU), $(nproc) cores;"
echo "  median of $ITERS timed iterations after $WARMUP warm-up, best of $ROUNDS runs (nccl: $NCCL_ROUNDS); plain = MPI_Allreduce"
echo "  (MPI_FLOAT, SUM) on a host buffer of the same size, run just before each shim run;"
echo "  ratio = plain ms / shim ms (target >= 0.9)"
printf "%-8s %-5s %9s %10s %10s %9s  %s\n" backend wire "wire MiB" "plain ms" "shim ms" "ratio" "check"

have_nccl=1
[ -e "$B/tests/hostnccl/libnccl.so.2" ] || have_nccl=0
bench_raw count "$COUNT"
bench_raw ranks "$NP"
bench_raw warmup "$WARMUP"
bench_raw iters "$ITERS"
bench_raw rounds "$ROUNDS"
bench_raw nccl_rounds "$NCCL_ROUNDS"
bench_raw gradient_bytes $((COUNT * 4))
for be in $BACKENDS; do
    if [ "$be" = nccl ] && [ $have_nccl -eq 0 ]; then
        echo "nccl: build/tests/hostnccl/libnccl.so.2 not built: nccl rows skipped"
        bench_note "nccl rows skipped: hostnccl not built"
        continue
    fi
    for wire in $WIRES; do
        wsize=4; [ "$wire" = same ] || wsize=2
        read -r raw shim check < <(pair "$be" "$wire")
        ratio=$(ratio_of "$raw" "$shim")
        printf "%-8s %-5s %9.4g %10.2f %10.2f %9s  %s\n" "$be" "$wire" \
            "$(awk -v c="$COUNT" -v w=$wsize 'BEGIN { print c * w / 1048576 }')" "${raw:-nan}" "$shim" "$ratio" "$check"
        bench_ratio "${be}_${wire}_raw_over_shim" "$ratio"
        bench_raw "${be}_${wire}_shim_ms" "$shim"
        bench_raw "${be}_${wire}_plain_mpi_ms" "${raw:-nan}"
        bench_raw "${be}_${wire}_wire_bytes" $((COUNT * wsize))
        bench_raw "${be}_${wire}_check" "$check"
    done
done

[ "$DIAG" = 1 ] || exit 0
echo
echo "where the mpi backend's time goes on this machine (diagnostics, same buffer, one run each):"
PIECE=$((1 << 20))   # floats: 4 MiB, the pipelined mpi backend's slot
for mode in blocking pieces iwait; do
    case $mode in
        blocking) what="MPI_Allreduce, one call (the plain side above)"; ms=$(run_raw --mode blocking) ;;
        pieces) what="MPI_Allreduce in 4 MiB pieces, one after the other"; ms=$(run_raw --mode blocking --chunk $PIECE) ;;
        iwait) what="MPI_Iallreduce + MPI_Wait (one call)"; ms=$(run_raw --mode iwait) ;;
    esac
    printf "  %-70s %9.2f ms\n" "$what" "${ms:-nan}"
    bench_raw "plain_mpi_${mode}_ms" "${ms:-nan}"
    [ "$mode" = pieces ] && pieces_ms=$ms
done
read -r stage _ < <(LD_LIBRARY_PATH=$B/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$KLIBS \
    "$APP" --ptx "$PTX" --count "$COUNT" --warmup "$WARMUP" --iters "$ITERS" --copy 1 | median_of)
printf "  %-70s %9.2f ms\n" "host staging alone (DtoH + HtoD, page-locked, hostcuda, 1 process)" "${stage:-nan}"
bench_raw staging_copy_ms "${stage:-nan}"
# the shim against the plain side's best form, measured again side by side
read -r _ shim check < <(pair mpi same)
printf "  %-70s %9.2f ms (ratio to plain in pieces %s, check %s)\n" \
    "shim mpi/same again" "$shim" "$(ratio_of "${pieces_ms:-0}" "$shim")" "$check"
bench_raw mpi_same_again_shim_ms "$shim"
bench_ratio mpi_same_pieces_over_shim "$(ratio_of "${pieces_ms:-0}" "$shim")"
echo "  (hostcuda device memory is host memory, so each staging copy is a real 64 MiB memcpy; on a GPU"
echo "   the copies are PCIe/NVLink DMA and the nccl backend does not stage at all)"
bench_note "hostcuda, no GPU: the mpi backend stages DtoH -> MPI_Allreduce -> mean -> HtoD, pipelined in 4 MiB slots; on hostcuda each copy is a real memcpy by the stream's worker thread"
bench_note "hostnccl is a test double (MPI_Allgather + serial reduce on the host), not NCCL: its rows measure the shim's nccl path, not NCCL speed"
exit 0
