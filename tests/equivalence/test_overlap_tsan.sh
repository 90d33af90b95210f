#!/usr/bin/env bash
# test_overlap_tsan.sh — the overlap's communication thread under ThreadSanitizer.
# Property: 2 ranks of the bundled trainer with ready points (examples/mlp-overlap.yaml) and with
# learned ones (overlap: auto), each backend, under the ThreadSanitizer build of the shim
# (tests/intercept/module.mk), finish with exit 0 and no ThreadSanitizer report: the program's
# thread (ready points, sync points, learned-point checks) and the communication thread share the
# engine's state without a data race. Open MPI's own lock-order report is suppressed
# (tsan-openmpi.supp). Control: the suppression statistics (print_suppressions=1) show that the
# ThreadSanitizer runtime was active in the ranks — a run without it would print none. Skips
# (77) without a TSan build.
set -u
. "$(dirname "$0")/lib.sh"
eq_preconditions
TS=$EQ_BUILD/tests/intercept/tsan/libaccelshim.so
[ -f "$TS" ] || { echo "1..0 # SKIP no ThreadSanitizer build of the shim"; exit 77; }
TSLIB=$(${CC:-cc} -print-file-name=libtsan.so)
[ -e "$TSLIB" ] || { echo "1..0 # SKIP libtsan.so not found"; exit 77; }
SUPP=$EQ_TOP/tests/equivalence/tsan-openmpi.supp
backends=(mpi); [ -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ] && backends+=(nccl)
cp "$EQ_POL/sgd-fused.yaml" "$EQ_TMP/auto.yaml"
echo "    overlap: auto" >>"$EQ_TMP/auto.yaml"
failed=0 n=0 active=0
echo "1..$(( ${#backends[@]} * 2 + 1 ))"
for be in "${backends[@]}"; do
    for pol in "$EQ_TOP/examples/mlp-overlap.yaml" "$EQ_TMP/auto.yaml"; do
        n=$((n + 1)) name=$(basename "$pol" .yaml) d=$EQ_TMP/$be-$(basename "$pol" .yaml)
        libpath=$T_HOSTCUDA_DIR; [ "$be" = nccl ] && libpath=$T_HOSTNCCL_DIR:$libpath
        t_mpirun 2 -x LD_LIBRARY_PATH="$libpath" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" \
            -x TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0 suppressions=$SUPP print_suppressions=1" \
            -x ACCELSHIM_POLICY="$pol" -x ACCELSHIM_BACKEND="$be" -x T_PRELOAD="$TSLIB:$TS" \
            -x T_RANK_LOG="$d.{rank}.log" bash -c "$(t_rank_cmd)" "$EQ_MLP" --steps 8 --batch 4 \
            --optimizer sgd --update fused --save "$d.{rank}" >"$d.mpirun.log" 2>&1
        rc=$?
        grep -q 'ThreadSanitizer: Matched' "$d".*.log && active=$((active + 1))
        if [ $rc -ne 0 ] || grep -q 'WARNING: ThreadSanitizer' "$d".*.log; then
            echo "not ok $n - $be $name: 2 ranks under ThreadSanitizer (rc $rc)"; failed=1
            grep -h -A30 'WARNING: ThreadSanitizer' "$d".*.log | head -40 | sed 's/^/# /'
            tail -5 "$d.mpirun.log" | sed 's/^/# /'
        else
            echo "ok $n - $be $name: 2 ranks under ThreadSanitizer, no report"
        fi
    done
done
n=$((n + 1))
if [ $active -gt 0 ]; then echo "ok $n - control: the ThreadSanitizer runtime was active in the ranks ($active run(s) printed suppression statistics)"
else echo "not ok $n - control: no run printed ThreadSanitizer statistics: was it active?"; failed=1; fi
exit $failed
