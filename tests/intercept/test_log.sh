#!/usr/bin/env bash
# Property: the shim is silent at the default level (warn) on a clean run; every line it writes
# is "[accelshim rank R] LEVEL subsys: ..."; ACCELSHIM_LOG=debug logs each distinct kernel ONCE
# with its name and parameter sizes; a bad ACCELSHIM_LOG stops the program (exit 2, one line);
# at ACCELSHIM_LOG=error warnings are not printed, at warn they are; ACCELSHIM_LOG=info prints
# the exit report.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/threads"
err=$(mktemp); trap 'rm -f "$err" "$err.yaml"' EXIT
run() { env "$@" LD_PRELOAD="$SHIM" "$B/threads" 2 3 >/dev/null 2>"$err" || { cat "$err"; fail "threads run failed ($*)"; }; }
run ACCELSHIM_LOG=
[ -s "$err" ] && { cat "$err"; fail "output at the default level on a clean run"; }
run ACCELSHIM_LOG=debug
bad=$(grep -Ev '^\[accelshim rank ([0-9]+|\?)\] (ERROR|WARN|INFO|DEBUG) [a-z]+: ' "$err")
[ -z "$bad" ] || { echo "$bad"; fail "lines without the prefix"; }
k=$(grep -c 'DEBUG kernels: kernel ash_itest_fill params=\[8,4,4\]$' "$err")
[ "$k" -eq 1 ] || { cat "$err"; fail "want the kernel logged once with params=[8,4,4], got $k lines"; }
grep -q 'INFO report: 6 kernel launches through the shim, 1 distinct kernels' "$err" || { cat "$err"; fail "exit report"; }
rc=0; env ACCELSHIM_LOG=loud LD_PRELOAD="$SHIM" "$B/threads" 2 3 >/dev/null 2>"$err" || rc=$?
[ "$rc" -eq 2 ] && grep -q '^accelshim: ACCELSHIM_LOG=loud: expected error, warn, info or debug$' "$err" ||
    { cat "$err"; fail "bad level: exit $rc (want 2 and one line naming it)"; }
# a warning the shim prints on a clean configuration: a policy without any rule
printf 'version: 1\n' >"$err.yaml"
run ACCELSHIM_LOG=error ACCELSHIM_POLICY="$err.yaml"
[ -s "$err" ] && { cat "$err"; fail "a warning printed at level error"; }
run ACCELSHIM_LOG=warn ACCELSHIM_POLICY="$err.yaml"
grep -q 'WARN sync: policy: .* has no gradient or parameter rule' "$err" || { cat "$err"; fail "no warning at level warn"; }
echo "PASS: log levels, prefix, once-per-kernel debug line, exit report"
