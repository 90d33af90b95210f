#!/usr/bin/env bash
# Property: the shim is silent at the default level (warn) on a clean run; every line it writes
# is "[accelshim rank R] LEVEL subsys: ..."; ACCELSHIM_LOG=debug logs each distinct kernel ONCE
# with its name and parameter sizes; a bad ACCELSHIM_LOG warns and falls back to warn; at
# ACCELSHIM_LOG=error warnings are not printed; ACCELSHIM_LOG=info prints the exit report.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/threads"
err=$(mktemp); trap 'rm -f "$err"' EXIT
run() { env "$@" LD_PRELOAD="$SHIM" "$B/threads" 2 3 >/dev/null 2>"$err" || { cat "$err"; fail "threads run failed ($*)"; }; }
run ACCELSHIM_LOG=
[ -s "$err" ] && { cat "$err"; fail "output at the default level on a clean run"; }
run ACCELSHIM_LOG=debug
bad=$(grep -Ev '^\[accelshim rank ([0-9]+|\?)\] (ERROR|WARN|INFO|DEBUG) [a-z]+: ' "$err")
[ -z "$bad" ] || { echo "$bad"; fail "lines without the prefix"; }
k=$(grep -c 'DEBUG kernels: kernel ash_itest_fill params=\[8,4,4\]$' "$err")
[ "$k" -eq 1 ] || { cat "$err"; fail "want the kernel logged once with params=[8,4,4], got $k lines"; }
grep -q 'INFO report: 6 kernel launches through the shim, 1 distinct kernels' "$err" || { cat "$err"; fail "exit report"; }
run ACCELSHIM_LOG=loud
grep -q 'WARN options: ACCELSHIM_LOG=loud is not one of error|warn|info|debug; using warn' "$err" || { cat "$err"; fail "bad level"; }
run ACCELSHIM_LOG=error ACCELSHIM_LOCAL_RANK=oops
[ -s "$err" ] && { cat "$err"; fail "a warning printed at level error"; }
run ACCELSHIM_LOG=warn ACCELSHIM_LOCAL_RANK=oops
grep -q 'WARN world: ACCELSHIM_LOCAL_RANK="oops" is not an integer' "$err" || { cat "$err"; fail "no warning at level warn"; }
echo "PASS: log levels, prefix, once-per-kernel debug line, exit report"
