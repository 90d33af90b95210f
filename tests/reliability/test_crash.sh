#!/usr/bin/env bash
# Property: a rank that segfaults prints a crash report with a symbolised backtrace naming the
# faulting function (mlp_deliberate_crash), the exit status stays honest (killed by SIGSEGV:
# 139), and accelerate-run's root-cause block (last lines of the failing rank) shows it.
# ACCELSHIM_CRASH_HANDLER=0 disables the report (the signal still kills the process).
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
