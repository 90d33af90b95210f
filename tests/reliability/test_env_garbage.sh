#!/usr/bin/env bash
# Property: garbage in accelshim's environment gives ONE clear line naming the variable and the
# value, and never undefined behaviour. Decided per variable (documented in the README):
#   fatal (exit 2 at the first CUDA call, like a policy error): ACCELSHIM_BACKEND,
#     ACCELSHIM_TIMEOUT_S, ACCELSHIM_CHECK_COLLECTIVES, ACCELSHIM_WIRE_OVERRIDE,
#     ACCELSHIM_RENDEZVOUS (and =nccl without NCCL_COMM_ID)
#   warning + fallback (the program runs): ACCELSHIM_RANK / LOCAL_RANK / WORLD_SIZE (next
#     source, else the default), ACCELSHIM_DEVICES (all visible devices), ACCELSHIM_LOG (warn),
#     ACCELSHIM_CRASH_HANDLER (1)
# Each case runs the trainer for one step, single process, on hostcuda.
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

# fatal
case_ 2 'ACCELSHIM_BACKEND=gloo: expected auto, nccl or mpi' ACCELSHIM_BACKEND=gloo
case_ 2 'ACCELSHIM_TIMEOUT_S=5s: expected whole seconds' ACCELSHIM_TIMEOUT_S=5s
case_ 2 'ACCELSHIM_TIMEOUT_S=-1: expected whole seconds' ACCELSHIM_TIMEOUT_S=-1
case_ 2 'ACCELSHIM_TIMEOUT_S=99999999999999999999999: expected' ACCELSHIM_TIMEOUT_S=99999999999999999999999
case_ 2 'ACCELSHIM_CHECK_COLLECTIVES=yes: expected 0 or 1' ACCELSHIM_CHECK_COLLECTIVES=yes
case_ 2 'ACCELSHIM_WIRE_OVERRIDE=fp8: expected bf16, f16 or no' ACCELSHIM_WIRE_OVERRIDE=fp8
case_ 2 'ACCELSHIM_RENDEZVOUS=tcp: expected mpi or nccl' ACCELSHIM_RENDEZVOUS=tcp
case_ 2 'ACCELSHIM_RENDEZVOUS=nccl: NCCL_COMM_ID .* is not set' ACCELSHIM_RENDEZVOUS=nccl NCCL_COMM_ID=
# warning + fallback
case_ 0 'WARN world: ACCELSHIM_WORLD_SIZE="abc" is not an integer in 1\.\.[0-9]+; ignored' ACCELSHIM_WORLD_SIZE=abc
case_ 0 'WARN world: ACCELSHIM_WORLD_SIZE="99999999999999999999" is not an integer' ACCELSHIM_WORLD_SIZE=99999999999999999999
case_ 0 'WARN world: ACCELSHIM_RANK="-3" is not an integer in 0\.\.' ACCELSHIM_RANK=-3
case_ 0 'WARN world: ACCELSHIM_LOCAL_RANK="1x" is not an integer' ACCELSHIM_LOCAL_RANK=1x
case_ 0 'WARN world: ACCELSHIM_DEVICES="0,7" names a device >= the 2 visible' ACCELSHIM_DEVICES=0,7
case_ 0 'WARN world: ACCELSHIM_DEVICES="zero" is not a comma list' ACCELSHIM_DEVICES=zero
case_ 0 'WARN options: ACCELSHIM_LOG=loud is not one of error\|warn\|info\|debug; using warn' ACCELSHIM_LOG=loud
case_ 0 'WARN crash: ACCELSHIM_CRASH_HANDLER=maybe is not 0 or 1; using 1' ACCELSHIM_CRASH_HANDLER=maybe
[ "$fails" -eq 0 ] || fail "$fails case(s) failed"
echo "all environment cases behave as documented"
