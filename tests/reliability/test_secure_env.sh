#!/usr/bin/env bash
# Property: the shim reads its environment with secure_getenv only. (1) No getenv call exists in
# the shim's sources (shim/ and its parts, intercept, collectives); options.c's one
# getter is secure_getenv. (2) A
# set-uid copy of a program using the options table (euid != ruid: AT_SECURE) sees defaults
# only, while the same program run normally sees ACCELSHIM_POLICY. (2) needs root (to make a
# set-uid-nobody copy) and a filesystem without nosuid; otherwise only (1) runs.
. "$(dirname "$0")/lib.sh"
prog=$RL_BUILD/tests/reliability/test_file_create
need "$prog"

hits=$(grep -rnE '(^|[^_a-z])getenv *\(' "$RL_TOP"/shim "$RL_TOP"/intercept "$RL_TOP"/collectives --include='*.c' --include='*.h' || true)
[ -z "$hits" ] || fail "getenv (not secure_getenv) used: $hits"
n=$(grep -c 'secure_getenv(' "$RL_TOP/shim/core/options.c")
[ "$n" -eq 1 ] || fail "shim/core/options.c: expected one secure_getenv call, found $n"
echo "ok: secure_getenv in shim/core/options.c is the only environment getter"

normal=$(ACCELSHIM_POLICY=/x.yaml "$prog" --print-policy)
[ "$normal" = "ACCELSHIM_POLICY seen by the shim: /x.yaml" ] || fail "normal run: $normal"
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
    echo "note: not root (or no user nobody): set-uid case not run"; exit 0
fi
d=$RL_BUILD/tests/reliability/suid.d
rm -rf "$d"; mkdir -p "$d"; chmod 755 "$d"
cp "$prog" "$d/prog"; chown nobody "$d/prog"; chmod 4755 "$d/prog"
suid=$(ACCELSHIM_POLICY=/x.yaml "$d/prog" --print-policy 2>&1)
rm -rf "$d"
case $suid in
  "ACCELSHIM_POLICY seen by the shim: (unset)") echo "ok: set-uid copy (AT_SECURE) sees no ACCELSHIM_* variable; normal run sees it" ;;
  "ACCELSHIM_POLICY seen by the shim: /x.yaml") skip "set-uid bit not honoured here (nosuid mount?)" ;;
  *) fail "set-uid run: $suid" ;;
esac
