#!/usr/bin/env bash
# Property: garbage in accelshim's environment gives ONE clear line naming the variable, the
# value and what is allowed, and exit 2 at the first CUDA call (like a policy error), for every
# variable: no value the user set is ignored with a warning (the options table validates each
# once; test_options_garbage.sh covers every option of the table, this file hand-picked cases,
# including those only the device query can judge and ACCELSHIM_RENDEZVOUS=nccl without
# NCCL_COMM_ID). Each case runs the trainer for one step, single process, on hostcuda.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1"

fails=0
# case EXPECTED_RC 'REGEX for the one accelshim line' VAR=VALUE...
case_() {
    local rc_want=$1 re=$2; shift 2
    local out=$RL_TMP/env.out rc n
    env "$@" LD_PRELOAD="$RL_SHIM" LD_LIBRARY_PATH="$RL_BUILD/tests/hostcuda" \
        HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" HOSTCUDA_DEVICES=2 timeout 30 "$RL_MLP" --steps 1 --batch 2 \
        >"$out" 2>&1
    rc=$?
    n=$(grep -Ec '^(\[accelshim|accelshim:)' "$out")
    if [ "$rc" -ne "$rc_want" ] || [ "$n" -ne 1 ] || ! grep -Eq "$re" "$out"; then
        echo "not ok: $* -> exit $rc (want $rc_want), $n accelshim line(s) (want 1), want /$re/:"
        sed 's/^/  | /' "$out"
        fails=$((fails + 1))
    else
        echo "ok: $* -> exit $rc: $(grep -E '^(\[accelshim|accelshim:)' "$out")"
    fi
}

case_ 2 '^accelshim: ACCELSHIM_BACKEND=gloo: expected auto, nccl or mpi$' ACCELSHIM_BACKEND=gloo
case_ 2 'ACCELSHIM_TIMEOUT_S=5s: expected an integer in 0\.\.604800' ACCELSHIM_TIMEOUT_S=5s
case_ 2 'ACCELSHIM_TIMEOUT_S=-1: expected an integer in 0\.\.604800' ACCELSHIM_TIMEOUT_S=-1
case_ 2 'ACCELSHIM_TIMEOUT_S=99999999999999999999999: expected' ACCELSHIM_TIMEOUT_S=99999999999999999999999
case_ 2 'ACCELSHIM_CHECK_COLLECTIVES=yes: expected 0 or 1' ACCELSHIM_CHECK_COLLECTIVES=yes
# set but empty: a number or a switch is refused (ACCELSHIM_TIMEOUT_S=$UNSET_VAR would silently
# mean the default 600 s); an empty text or choice (ACCELSHIM_LOG=) still reads as unset
case_ 2 '^accelshim: ACCELSHIM_TIMEOUT_S=: expected an integer in 0\.\.604800 \(set but empty' ACCELSHIM_TIMEOUT_S=
case_ 2 '^accelshim: ACCELSHIM_CHECK_COLLECTIVES=: expected 0 or 1 \(set but empty' ACCELSHIM_CHECK_COLLECTIVES=
case_ 2 'ACCELSHIM_WIRE_OVERRIDE=fp8: expected bf16, f16, fp16, no or same' ACCELSHIM_WIRE_OVERRIDE=fp8
case_ 2 'ACCELSHIM_RENDEZVOUS=tcp: expected mpi or nccl' ACCELSHIM_RENDEZVOUS=tcp
case_ 2 'ACCELSHIM_RENDEZVOUS=nccl: NCCL_COMM_ID .* is not set' ACCELSHIM_RENDEZVOUS=nccl NCCL_COMM_ID=
# once warnings with a fallback, now refused like the others
case_ 2 'ACCELSHIM_WORLD_SIZE=abc: expected an integer in 1\.\.[0-9]+' ACCELSHIM_WORLD_SIZE=abc
case_ 2 'ACCELSHIM_WORLD_SIZE=99999999999999999999: expected an integer' ACCELSHIM_WORLD_SIZE=99999999999999999999
case_ 2 'ACCELSHIM_RANK=-3: expected an integer in 0\.\.' ACCELSHIM_RANK=-3
case_ 2 'ACCELSHIM_LOCAL_RANK=1x: expected an integer' ACCELSHIM_LOCAL_RANK=1x
case_ 2 'ACCELSHIM_DEVICES=0,7: expected device ordinals below 2 ' ACCELSHIM_DEVICES=0,7
case_ 2 'ACCELSHIM_DEVICES=zero: expected a comma list' ACCELSHIM_DEVICES=zero
case_ 2 'ACCELSHIM_LOG=loud: expected error, warn, info or debug' ACCELSHIM_LOG=loud
case_ 2 'ACCELSHIM_CRASH_HANDLER=maybe: expected 0 or 1' ACCELSHIM_CRASH_HANDLER=maybe
case_ 2 'OMPI_COMM_WORLD_SIZE=two: expected an integer' OMPI_COMM_WORLD_SIZE=two
# control: valid values of the same variables run the step (exit 0) without a single line
env ACCELSHIM_WORLD_SIZE=1 ACCELSHIM_RANK=0 ACCELSHIM_LOCAL_RANK=0 ACCELSHIM_DEVICES=1 \
    ACCELSHIM_LOG=warn ACCELSHIM_CRASH_HANDLER=0 ACCELSHIM_TIMEOUT_S=5 ACCELSHIM_BACKEND=mpi \
    LD_PRELOAD="$RL_SHIM" LD_LIBRARY_PATH="$RL_BUILD/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" \
    HOSTCUDA_DEVICES=2 timeout 30 "$RL_MLP" --steps 1 --batch 2 >"$RL_TMP/ctl" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || grep -Eq '^(\[accelshim|accelshim:)' "$RL_TMP/ctl" || ! grep -q '^step 0 ' "$RL_TMP/ctl"; then
    echo "not ok: control (valid values) -> exit $rc:"; sed 's/^/  | /' "$RL_TMP/ctl"; fails=$((fails + 1))
else
    echo "ok: control: valid values of the same variables -> exit 0, no accelshim line"
fi
[ "$fails" -eq 0 ] || fail "$fails case(s) failed"
echo "all environment cases behave as documented"
