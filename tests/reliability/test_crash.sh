#!/usr/bin/env bash
# Property: a rank that segfaults prints a crash report with a symbolised backtrace naming the
# faulting function (mlp_deliberate_crash), the exit status stays honest (killed by SIGSEGV:
# 139), and accelerate-run's root-cause block (last lines of the failing rank) shows it.
# ACCELSHIM_CRASH_HANDLER=0 disables the report (the signal still kills the process). A stack
# overflow in a second thread that worked with CUDA is reported too (its own alternate stack);
# control: one in a thread that never touched CUDA is not.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

rl_launch 60 -n 2 --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 4 --batch 4 \
    --shard-rank '{rank}' --shard-count '{world_size}' --segv-rank 1 --segv-at-step 1
echo "launcher: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -eq 139 ] || { rl_show; fail "exit status $RL_RC, expected 139 (SIGSEGV)"; }
block=$(sed -n '/rank 1 failed first/,$p' "$RL_TMP/out")
[ -n "$block" ] || { rl_show; fail "no root-cause block naming rank 1"; }
echo "$block" | grep -Eq '\| \[accelshim rank 1\] crash: SIGSEGV \(address 0x0\) in mlp_deliberate_crash\+0x' \
    || { rl_show; fail "root-cause block lacks the crash line naming mlp_deliberate_crash"; }
echo "$block" | grep -Eq '\| \[accelshim rank 1\]   #1 0x[0-9a-f]+ main\+0x' \
    || { rl_show; fail "root-cause block lacks the caller frame (main)"; }
echo "$block" | grep -E 'crash:|#[01] '
echo "ok: root-cause block shows the backtrace naming mlp_deliberate_crash"

# one process, handler disabled: no report, same signal
out=$RL_TMP/one
ACCELSHIM_CRASH_HANDLER=0 LD_PRELOAD=$RL_SHIM LD_LIBRARY_PATH=$RL_BUILD/tests/hostcuda \
    HOSTCUDA_KERNEL_LIBS=$RL_KLIBS "$RL_MLP" --steps 2 --segv-rank 0 --segv-at-step 0 >"$out" 2>&1
rc=$?
[ "$rc" -eq 139 ] || { cat "$out"; fail "CRASH_HANDLER=0: exit $rc, expected 139"; }
grep -q "crash:" "$out" && { cat "$out"; fail "CRASH_HANDLER=0 still printed a report"; }
echo "ok: ACCELSHIM_CRASH_HANDLER=0: no report, exit 139"

# a stack overflow in a second thread: reported when that thread worked with CUDA (it retained a
# context, so the shim gave it an alternate stack of its own); control: a thread that never
# touched CUDA has none, and the same overflow kills the process without a report
OV=$RL_BUILD/tests/reliability/overflow_app
need "$OV"
for mode in --cuda-in-thread none; do
    arg=$mode; [ "$mode" = none ] && arg=
    # shellcheck disable=SC2086  # no argument in the control
    { (LD_PRELOAD=$RL_SHIM LD_LIBRARY_PATH=$RL_BUILD/tests/hostcuda exec "$OV" $arg) >"$RL_TMP/ov-$mode" 2>&1; } 2>/dev/null
    rc=$?   # (the shell's own "Segmentation fault" notice goes to /dev/null)
    [ "$rc" -eq 139 ] || { cat "$RL_TMP/ov-$mode"; fail "overflow_app $mode: exit $rc, expected 139 (SIGSEGV)"; }
done
grep -Eq '^\[accelshim rank 0\] crash: SIGSEGV \(address 0x[0-9a-f]+\) in ash_overflow_deep\+0x' "$RL_TMP/ov---cuda-in-thread" \
    || { cat "$RL_TMP/ov---cuda-in-thread"; fail "no crash report for the overflow in a thread that retained a context"; }
grep -q "crash:" "$RL_TMP/ov-none" && { cat "$RL_TMP/ov-none"; fail "control: a report without an alternate stack (the test proves nothing)"; }
echo "ok: stack overflow in a CUDA worker thread: report naming ash_overflow_deep; control (no CUDA in the thread): no report, exit 139"
