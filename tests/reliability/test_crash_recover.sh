#!/usr/bin/env bash
# Property: a program that recovers from SIGSEGV itself (its handler makes a protected page
# writable and returns: guard pages, JITs, GC write barriers) goes on under accelshim exactly as
# without it: exit 0, no crash report, also when it installed its handler after the shim's
# (after cuInit) and the job then opened its collectives (Open MPI and the shim's reinstall at
# the first sync point must not displace it). Controls: the same run without the shim exits 0
# (the program really recovers), and a program with no handler of its own still gets the crash
# report and exit 139.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"

run_one() { # NAME PRELOAD MLP_ARGS... : one process on hostcuda; output in $RL_TMP/NAME
    local name=$1 pre=$2; shift 2
    { (LD_PRELOAD=$pre LD_LIBRARY_PATH=$RL_BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$RL_KLIBS \
        exec "$RL_MLP" "$@") >"$RL_TMP/$name" 2>&1; } 2>/dev/null
}

# control: without the shim the program recovers (the test's premise)
run_one plain "" --steps 3 --batch 4 --recover-segv-at-step 1
rc=$?
[ "$rc" -eq 0 ] || { cat "$RL_TMP/plain"; fail "without the shim: exit $rc, expected 0 (the program does not recover?)"; }
grep -q "handler fixed 1 fault" "$RL_TMP/plain" || { cat "$RL_TMP/plain"; fail "without the shim: the fault never happened"; }
echo "ok: without the shim: the program's handler fixes the page, exit 0"

# one process with the shim
run_one one "$RL_SHIM" --steps 3 --batch 4 --recover-segv-at-step 1
rc=$?
[ "$rc" -eq 0 ] || { cat "$RL_TMP/one"; fail "with the shim (one process): exit $rc, expected 0"; }
grep -q "crash:" "$RL_TMP/one" && { cat "$RL_TMP/one"; fail "with the shim (one process): a crash report for a recovered fault"; }
grep -q "handler fixed 1 fault" "$RL_TMP/one" || { cat "$RL_TMP/one"; fail "with the shim: the fault never happened"; }
echo "ok: with the shim, one process: exit 0, no crash report"

# the handler installed before the shim's (before cuInit; recover_app): the shim calls it first
# and it repairs the page; when it gives up on a fault that is not its own (default action
# restored, signal raised again) the crash is real: report and 139. Control: without the shim
RA=$RL_BUILD/tests/reliability/recover_app
need "$RA"
ra() { # NAME PRELOAD MODE
    { (LD_PRELOAD=$2 LD_LIBRARY_PATH=$RL_BUILD/tests/hostcuda exec "$RA" "$3") >"$RL_TMP/$1" 2>&1; } 2>/dev/null
}
for pre in "" "$RL_SHIM"; do
    what=${pre:+with the shim}; what=${what:-without the shim}
    ra ra-fix "$pre" fix; rc=$?
    [ "$rc" -eq 0 ] || { cat "$RL_TMP/ra-fix"; fail "recover_app fix, $what: exit $rc, expected 0"; }
    grep -q "crash:" "$RL_TMP/ra-fix" && { cat "$RL_TMP/ra-fix"; fail "recover_app fix, $what: a crash report for a recovered fault"; }
    ra ra-giveup "$pre" giveup; rc=$?
    [ "$rc" -eq 139 ] || { cat "$RL_TMP/ra-giveup"; fail "recover_app giveup, $what: exit $rc, expected 139"; }
done
grep -q "crash: SIGSEGV (address 0x0) in recover_app_null_write" "$RL_TMP/ra-giveup" \
    || { cat "$RL_TMP/ra-giveup"; fail "recover_app giveup with the shim: no crash report naming recover_app_null_write"; }
echo "ok: handler installed before the shim's: called first; it repairs the page (exit 0, no report) or gives up (report, 139); same exits without the shim"

# control: no handler of its own: the report and 139 stay
run_one segv "$RL_SHIM" --steps 2 --batch 4 --segv-rank 0 --segv-at-step 0
rc=$?
[ "$rc" -eq 139 ] || { cat "$RL_TMP/segv"; fail "control: a plain NULL write: exit $rc, expected 139"; }
grep -q "crash: SIGSEGV (address 0x0) in mlp_deliberate_crash" "$RL_TMP/segv" \
    || { cat "$RL_TMP/segv"; fail "control: no crash report for a fault nobody handles"; }
echo "ok: control: a fault nobody handles: crash report, exit 139"

# two ranks: the handler is installed after the shim's, then the first sync point opens the
# collectives (MPI) before the fault at step 2
need_mpirun
rl_launch 120 -n 2 --policy "$RL_POL/sgd-fused.yaml" -- "$RL_MLP" --steps 4 --batch 4 \
    --shard-rank '{rank}' --shard-count '{world_size}' --recover-segv-at-step 2
echo "launcher: exit $RL_RC after ${RL_SECS}s"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "2 ranks: exit $RL_RC, expected 0"; }
grep -q "crash:" "$RL_TMP/out" && { rl_show; fail "2 ranks: a crash report for a recovered fault"; }
n=$(grep -c "handler fixed 1 fault" "$RL_TMP/out")
[ "$n" -eq 2 ] || { rl_show; fail "2 ranks: $n rank(s) reported the fixed fault, expected 2"; }
echo "ok: 2 ranks (accelerate-run, mpi): both recover after the collectives opened, exit 0"
