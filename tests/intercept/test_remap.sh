#!/usr/bin/env bash
# Property: under the shim the program sees ONE device (cuDeviceGetCount 1, cuDeviceGet(1) ->
# CUDA_ERROR_INVALID_DEVICE = 101) and its memory lands on the rank's physical device:
# ACCELSHIM_DEVICES list[local_rank % len] (default all visible), local rank from
# ACCELSHIM_LOCAL_RANK > OMPI_COMM_WORLD_LOCAL_RANK > SLURM_LOCALID; a bad value stops the program
# (exit 2, one line naming the variable, the value and what is allowed).
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/remap"
fails=0
# check EXPECTED_ORDINAL EXPECTED_WARNING_REGEX_OR_EMPTY -- env assignments...
check() {
    local want=$1 warn=$2; shift 3
    local out err
    err=$(mktemp)
    # one process posing as a rank: it synchronises nothing on purpose (ACCELSHIM_SYNC=optional)
    out=$(env -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMIX_RANK \
          -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE ACCELSHIM_SYNC=optional \
          HOSTCUDA_DEVICES=8 "$@" LD_PRELOAD="$SHIM" "$B/remap" 2>"$err")
    local got="count=1 get1=101 ordinal=$want"
    if [ "$out" != "$got" ]; then
        echo "FAIL [$*]: got '$out', want '$got'"; cat "$err"; fails=$((fails + 1))
    elif [ -n "$warn" ] && ! grep -Eq "$warn" "$err"; then
        echo "FAIL [$*]: no warning matching /$warn/ on stderr:"; cat "$err"; fails=$((fails + 1))
    elif [ -z "$warn" ] && grep -q WARN "$err"; then
        echo "FAIL [$*]: unexpected warning:"; cat "$err"; fails=$((fails + 1))
    else
        echo "ok [$*] -> $out${warn:+ (warned)}"
    fi
    rm -f "$err"
}
check 0 '' --
check 3 '' -- ACCELSHIM_LOCAL_RANK=3
check 6 '' -- ACCELSHIM_DEVICES=5,6 ACCELSHIM_LOCAL_RANK=1
check 5 '' -- ACCELSHIM_DEVICES=5,6 ACCELSHIM_LOCAL_RANK=2
check 2 '' -- OMPI_COMM_WORLD_LOCAL_RANK=2
check 4 '' -- OMPI_COMM_WORLD_LOCAL_RANK=2 ACCELSHIM_LOCAL_RANK=4
check 5 '' -- SLURM_LOCALID=5
check 2 '' -- HOSTCUDA_DEVICES=4 ACCELSHIM_LOCAL_RANK=6
check 7 "" -- ACCELSHIM_RANK=7 ACCELSHIM_WORLD_SIZE=8
# refuse EXPECTED_LINE_REGEX -- env assignments...: exit 2, that one line, no device answer
refuse() {
    local want=$1; shift 2
    local out err rc=0
    err=$(mktemp)
    out=$(env -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMIX_RANK \
          HOSTCUDA_DEVICES=8 "$@" LD_PRELOAD="$SHIM" "$B/remap" 2>"$err") || rc=$?
    if [ "$rc" -ne 2 ] || [ -n "$out" ] || [ "$(grep -c accelshim "$err")" -ne 1 ] || ! grep -Eq "$want" "$err"; then
        echo "FAIL [$*]: exit $rc (want 2), stdout '$out' (want none), want one line /$want/:"; cat "$err"
        fails=$((fails + 1))
    else
        echo "ok [$*] -> exit 2: $(cat "$err")"
    fi
    rm -f "$err"
}
refuse '^accelshim: ACCELSHIM_LOCAL_RANK=abc: expected an integer' -- ACCELSHIM_LOCAL_RANK=abc
refuse '^accelshim: world: rank 7 \(ACCELSHIM_RANK\) is not below the world size 1' -- ACCELSHIM_RANK=7
refuse '^accelshim: ACCELSHIM_LOCAL_RANK=-1: expected an integer' -- ACCELSHIM_LOCAL_RANK=-1 OMPI_COMM_WORLD_LOCAL_RANK=3
refuse '^accelshim: ACCELSHIM_DEVICES=5,x: expected a comma list' -- ACCELSHIM_DEVICES=5,x ACCELSHIM_LOCAL_RANK=1
refuse '^accelshim: ACCELSHIM_DEVICES=9: expected device ordinals below 8 ' -- ACCELSHIM_DEVICES=9 ACCELSHIM_LOCAL_RANK=1
refuse '^accelshim: ACCELSHIM_DEVICES=,1: expected a comma list' -- ACCELSHIM_DEVICES=,1 ACCELSHIM_LOCAL_RANK=1
[ $fails -eq 0 ] || fail "$fails remap cases failed"
echo "PASS: one visible device, remapped to the rank's physical device; bad values stop the program"
