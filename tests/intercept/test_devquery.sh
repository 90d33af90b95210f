#!/usr/bin/env bash
# Property: a Driver-API program that passes the literal ordinal 0 to the device queries
# (cuDeviceGetName, GetUuid, GetPCIBusId, GetAttribute, TotalMem, ComputeCapability) and to the
# primary-context calls (Retain, SetFlags, GetState, Release, Reset) gets, under the shim at local
# rank R of 8 devices, exactly what device R answers to a program without the shim (name, UUID,
# bus id and board group differ per device on hostcuda); cuCtxGetDevice and cuDeviceGetByPCIBusId
# of its own bus id give the handle cuDeviceGet(0) gives, which is device R; the count is 1; another
# device's bus id answers CUDA_ERROR_INVALID_DEVICE (as a device CUDA_VISIBLE_DEVICES hides).
# With CUDA_VISIBLE_DEVICES=R (one device, as the launcher sets it) the remap is the identity:
# ordinal 0, handle 0, device R's answers, no warning (ACCELSHIM_DEVICES, which names devices
# among the visible ones, is then not to be set: a value > 0 is warned about and device 0 used).
# Control: without the shim ordinal 0 is device 0, whose answers differ from device R's.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/devquery"
fails=0
clean() { env -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMIX_RANK \
              -u CUDA_VISIBLE_DEVICES -u ACCELSHIM_DEVICES -u ACCELSHIM_LOCAL_RANK HOSTCUDA_DEVICES=8 "$@"; }
err=$(mktemp); trap 'rm -f "$err"' EXIT
# expect LABEL WANT_QUERY WANT_HANDLES -- command...
expect() {
    local label=$1 wq=$2 wh=$3; shift 4
    local out q h
    out=$("$@" 2>"$err") || { echo "FAIL [$label]: rc $?"; cat "$err"; fails=$((fails + 1)); return; }
    q=$(sed -n 's/^query: //p' <<<"$out"); h=$(sed -n 's/^handles: //p' <<<"$out")
    if [ "$q" != "$wq" ] || [ "$h" != "$wh" ]; then
        printf 'FAIL [%s]:\n  got  query:   %s\n  want query:   %s\n  got  handles: %s\n  want handles: %s\n' \
            "$label" "$q" "$wq" "$h" "$wh"
        cat "$err"; fails=$((fails + 1))
    elif grep -q WARN "$err"; then
        echo "FAIL [$label]: unexpected warning:"; cat "$err"; fails=$((fails + 1))
    else
        echo "ok [$label] $h"
    fi
}
declare -a truth
for r in 0 1 2 3 4 5 6 7; do
    truth[r]=$(clean "$B/devquery" "$r" 2>&1 | sed -n 's/^query: //p')
    [ -n "${truth[r]}" ] || fail "device $r: no answer without the shim"
done
echo "device 3 without the shim: ${truth[3]}"
# control: the devices answer differently, and without the shim ordinal 0 is device 0
[ "$(printf '%s\n' "${truth[@]}" | sort -u | wc -l)" -eq 8 ] || fail "hostcuda's 8 devices do not answer differently"
expect "no shim, ordinal 0" "${truth[0]}" "get0=0 ctxdev=0 bybus=0 count=8 bus18=0/0" -- clean "$B/devquery" 0
nc=$(clean "$B/devquery" 0 | sed -n 's/^query: //p')
[ "$nc" != "${truth[5]}" ] || fail "control: without the shim ordinal 0 answered like device 5"
for r in 0 1 2 3 4 5 6 7; do
    b18="101/-1"; [ $r -eq 0 ] && b18="0/0"   # another device's bus id is not visible
    expect "shim, local rank $r, ordinal 0" "${truth[r]}" "get0=$r ctxdev=$r bybus=$r count=1 bus18=$b18" -- \
        clean ACCELSHIM_LOCAL_RANK=$r LD_PRELOAD="$SHIM" "$B/devquery" 0
done
expect "shim, ACCELSHIM_DEVICES=6,2, local rank 1" "${truth[2]}" "get0=2 ctxdev=2 bybus=2 count=1 bus18=101/-1" -- \
    clean ACCELSHIM_DEVICES=6,2 ACCELSHIM_LOCAL_RANK=1 LD_PRELOAD="$SHIM" "$B/devquery" 0
for r in 3 7; do
    expect "shim, CUDA_VISIBLE_DEVICES=$r, local rank $r" "${truth[r]}" "get0=0 ctxdev=0 bybus=0 count=1 bus18=101/-1" -- \
        clean CUDA_VISIBLE_DEVICES=$r ACCELSHIM_LOCAL_RANK=$r LD_PRELOAD="$SHIM" "$B/devquery" 0
done
[ $fails -eq 0 ] || fail "$fails device-query cases failed"
echo "PASS: literal ordinal 0 reaches the rank's device in every query and primary-context call"
