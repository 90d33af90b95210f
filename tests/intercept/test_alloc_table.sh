#!/usr/bin/env bash
# Property: the allocation hooks record every allocation API's result in the shim's allocation
# table (base, size, physical device, kind) and every free removes it; the exit report at
# ACCELSHIM_LOG=info prints the device's peak.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/alloc_table"
err=$(mktemp); trap 'rm -f "$err"' EXIT
ACCELSHIM_LOCAL_RANK=2 ACCELSHIM_LOG=info LD_PRELOAD=$SHIM "$B/alloc_table" 2 2>"$err"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { tail -20 "$err"; fail "allocation table does not follow the hooks"; }
grep -E 'INFO report: device 2: peak [0-9]+ bytes' "$err" || { cat "$err"; fail "no exit report with the peak of device 2"; }
echo "PASS: allocation hooks feed the table; exit report shows the peak"
