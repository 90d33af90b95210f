#!/usr/bin/env bash
# Property: every hooked symbol, through every door (direct link, dlsym on the driver handle,
# dlsym(RTLD_DEFAULT), cuGetProcAddress_v2 and legacy cuGetProcAddress with cudaVersion 12000 and
# 13000 and each flag), is handed out as the shim's hook of EXACTLY the variant the driver itself
# resolves (same symbol name, owner libaccelshim.so), with the same CUresult and symbolStatus, and
# calling it reaches exactly that exported symbol once. Unhooked, unknown and hostcuda-absent
# names give the same answer as without the shim (driver's own pointer, same status).
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/routing_probe" "$B/routing_direct" "$ITEST_PTX" "$HOSTCUDA_KERNEL_LIBS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$B/routing_probe" --expect-driver > "$tmp/driver.txt" 2> "$tmp/driver.err" \
    || { cat "$tmp/driver.txt" "$tmp/driver.err" | grep -v '^gpa\|^dlsym' | tail -20; fail "probe without the shim failed"; }
LD_PRELOAD=$SHIM "$B/routing_probe" --expect-shim > "$tmp/shim.txt" 2> "$tmp/shim.err"
rc=$?
grep '^FAIL' "$tmp/shim.txt" | head -40
[ $rc -eq 0 ] || { tail -5 "$tmp/shim.err"; fail "probe with the shim failed (rc $rc)"; }
# same resolution and same call results, door by door; only the owner differs
if ! diff <(sed 's/ | owner=.*//' "$tmp/driver.txt") <(sed 's/ | owner=.*//' "$tmp/shim.txt") > "$tmp/diff.txt"; then
    head -40 "$tmp/diff.txt"
    fail "resolution with the shim differs from the driver's (< driver, > shim)"
fi
hooks=$(grep -c 'owner=libaccelshim.so' "$tmp/shim.txt")
lines=$(grep -c ' -> ' "$tmp/shim.txt")
echo "resolver doors: $lines lookups identical to the driver's; $hooks handed out a shim hook"
[ "$hooks" -gt 0 ] || fail "no lookup was routed to a hook"

# the names the shim must not touch, as the shim run saw them (identical to the driver's, above)
for q in cuNoSuchThing cuGraphCreate cuCtxGetDevice cuGetExportTable; do
    grep -m2 "^gpa_v2 $q 13000 0 \|^dlsym-handle $q " "$tmp/shim.txt"
done
LD_PRELOAD=$SHIM "$B/routing_direct" > "$tmp/direct.txt" 2> "$tmp/direct.err"
rc=$?
grep '^FAIL' "$tmp/direct.txt" | head -20
[ $rc -eq 0 ] || { tail -5 "$tmp/direct.err"; fail "direct-link door failed (rc $rc)"; }
tail -1 "$tmp/direct.txt"
echo "PASS: routing by pointer identity through every door"
