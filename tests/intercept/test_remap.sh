#!/usr/bin/env bash
# Property: under the shim the program sees ONE device (cuDeviceGetCount 1, cuDeviceGet(1) ->
# CUDA_ERROR_INVALID_DEVICE = 101) and its memory lands on the rank's physical device:
# ACCELSHIM_DEVICES list[local_rank % len] (default all visible), local rank from
# ACCELSHIM_LOCAL_RANK > OMPI_COMM_WORLD_LOCAL_RANK > SLURM_LOCALID; bad values warn and fall back.
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
check 7 "rank 7 \\(ACCELSHIM_RANK\\) >= world size 1" -- ACCELSHIM_RANK=7
check 0 'ACCELSHIM_LOCAL_RANK="abc" is not an integer' -- ACCELSHIM_LOCAL_RANK=abc
check 3 'ACCELSHIM_LOCAL_RANK="-1" is not an integer' -- ACCELSHIM_LOCAL_RANK=-1 OMPI_COMM_WORLD_LOCAL_RANK=3
check 1 'ACCELSHIM_DEVICES="5,x" is not a comma list' -- ACCELSHIM_DEVICES=5,x ACCELSHIM_LOCAL_RANK=1
check 1 'ACCELSHIM_DEVICES="9" names a device >= the 8 visible' -- ACCELSHIM_DEVICES=9 ACCELSHIM_LOCAL_RANK=1
check 1 'ACCELSHIM_DEVICES=",1" is not a comma list' -- ACCELSHIM_DEVICES=,1 ACCELSHIM_LOCAL_RANK=1
[ $fails -eq 0 ] || fail "$fails remap cases failed"
echo "PASS: one visible device, remapped to the rank's physical device; bad values warn and fall back"
