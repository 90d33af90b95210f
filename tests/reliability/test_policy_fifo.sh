#!/usr/bin/env bash
# Property: a policy path that names a FIFO or a device is refused with one clear line naming it
# and exit status 2, never read (a FIFO with no writer blocks its reader forever): by the shim at
# the first CUDA call (libaccelshim-io.so preloaded too, which reads the policy at load), and by
# accelerate-run's check before any rank starts. Each run is under a time limit, so a hang reads
# as exit 124. Control: the same run with a regular policy file exits 0.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_IO" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
t_need_cmd mkfifo timeout

fifo=$RL_TMP/policy.fifo
mkfifo "$fifo" || skip "mkfifo failed in $RL_TMP"
one() { # POLICY [RANK] : one process, both libraries preloaded (rank 1 by default: the io
         # library reads the policy only there), 60 s at most; output in $RL_TMP/one
    timeout -k 5 60 env ACCELSHIM_POLICY="$1" LD_PRELOAD="$RL_SHIM:$RL_IO" \
        LD_LIBRARY_PATH="$RL_BUILD/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" ACCELSHIM_RANK="${2:-1}" ACCELSHIM_WORLD_SIZE=$((${2:-1} + 1)) \
        "$RL_MLP" --steps 1 --batch 2 >"$RL_TMP/one" 2>&1 </dev/null
}

for p in "$fifo" /dev/zero; do
    one "$p"; rc=$?
    [ "$rc" -eq 124 ] && fail "ACCELSHIM_POLICY=$p: still running after 60 s (hang)"
    [ "$rc" -eq 2 ] || { cat "$RL_TMP/one"; fail "ACCELSHIM_POLICY=$p: exit $rc, expected 2"; }
    grep -q "^accelshim: $p: cannot read policy: not a regular file" "$RL_TMP/one" \
        || { cat "$RL_TMP/one"; fail "ACCELSHIM_POLICY=$p: no line naming it as not a regular file"; }
    echo "ok: ACCELSHIM_POLICY=$p: $(grep -m1 '^accelshim:' "$RL_TMP/one"), exit 2"
done

timeout -k 5 60 "$RL_LAUNCHER" --cpu -n 1 --policy "$fifo" -- "$RL_MLP" --steps 1 --batch 2 \
    >"$RL_TMP/launch" 2>&1 </dev/null
rc=$?
[ "$rc" -eq 124 ] && fail "accelerate-run --policy FIFO: still running after 60 s (hang)"
[ "$rc" -eq 2 ] || { cat "$RL_TMP/launch"; fail "accelerate-run --policy FIFO: exit $rc, expected 2"; }
grep -q "not a regular file" "$RL_TMP/launch" || { cat "$RL_TMP/launch"; fail "accelerate-run --policy FIFO: the reason is not shown"; }
echo "ok: accelerate-run --policy FIFO: refused before any rank starts, exit 2"

# control: a regular file works
one "$RL_POL/sgd-fused.yaml" 0; rc=$?
[ "$rc" -eq 0 ] || { cat "$RL_TMP/one"; fail "control: a regular policy file: exit $rc, expected 0"; }
echo "ok: control: a regular policy file: exit 0"
