#!/usr/bin/env bash
# Property: when the driver's cuGetProcAddress hands out entry points that are NOT exported symbols
# (hostcuda HOSTCUDA_UNEXPORTED_PROCS=1: hidden thunks), the shim still hands out its hook of
# exactly the variant the driver chose — by (symbol, cudaVersion, flags) against the PFN typedefs
# (intercept/pfn_versions.def) — legacy and per-thread twins apart, and launches through them reach
# the shim's kernel cache; a version whose PFN type no hook implements (cuMemAlloc at 2000) and
# unhooked names pass through unchanged. ACCELSHIM_ROUTING_TABLE records route "name" for them.
# Controls: the same program with ACCELSHIM_ROUTE_BY_NAME=0 sees every hook bypassed (0 launches
# in the shim), and its --expect-hooks check then fails; with exported pointers, route "identity".
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/route_name" "$ITEST_PTX" "$HOSTCUDA_KERNEL_LIBS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

HOSTCUDA_UNEXPORTED_PROCS=1 ACCELSHIM_ROUTING_TABLE=$tmp/name.tsv LD_PRELOAD=$SHIM "$B/route_name" --expect-hooks \
    > "$tmp/name.txt" 2> "$tmp/name.err"; rc=$?
grep -v '^ok' "$tmp/name.txt"
[ $rc -eq 0 ] || { tail -3 "$tmp/name.err"; fail "unexported pointers: routing by name (rc $rc)"; }
grep -q "PFN_cuMemAlloc_v2000, which no hook implements" "$tmp/name.err" \
    || fail "no warning for the PFN mismatch of cuMemAlloc at version 2000"
row() { awk -F'\t' -v s="$2" -v v="$3" -v f="$4" '$1 == s && $2 == v && $3 == f && $10 == "gpa_v2" { print $7, $8, $9; exit }' "$1"; }
for want in "cuLaunchKernel 13000 2|hook name cuLaunchKernel_ptsz" "cuLaunchKernel 13000 1|hook name cuLaunchKernel" \
            "cuMemAlloc 3020 0|hook name cuMemAlloc_v2" "cuCtxCreate 13000 0|hook name cuCtxCreate_v4"; do
    read -r s v f <<<"${want%|*}"
    got=$(row "$tmp/name.tsv" "$s" "$v" "$f")
    [ "$got" = "${want#*|}" ] || fail "routing table: $s $v $f -> '$got', want '${want#*|}'"
done
got=$(row "$tmp/name.tsv" cuMemAlloc 2000 0)
[ "${got% *}" = "passthrough none" ] || fail "routing table: cuMemAlloc 2000 0 -> '$got', want passthrough none"
echo "by name: $(grep -c $'\thook\tname\t' "$tmp/name.tsv") requests routed by name, $(grep -c $'\tpassthrough\t' "$tmp/name.tsv") passed through"

# control: fallback off -> every hook bypassed, and the hooks expectation fails
HOSTCUDA_UNEXPORTED_PROCS=1 ACCELSHIM_ROUTE_BY_NAME=0 LD_PRELOAD=$SHIM "$B/route_name" --expect-bypass \
    > "$tmp/off.txt" 2>&1 || { grep -v '^ok' "$tmp/off.txt"; fail "control: with ACCELSHIM_ROUTE_BY_NAME=0 hooks were not bypassed"; }
grep 'launches seen' "$tmp/off.txt"
HOSTCUDA_UNEXPORTED_PROCS=1 ACCELSHIM_ROUTE_BY_NAME=0 LD_PRELOAD=$SHIM "$B/route_name" --expect-hooks \
    > "$tmp/off2.txt" 2>&1 && fail "control: --expect-hooks passed with the fallback off (the check cannot fail)"
echo "control: fallback off -> $(grep -c '^FAIL' "$tmp/off2.txt") checks fail, as they must"

# exported pointers: the same hooks, by identity
ACCELSHIM_ROUTING_TABLE=$tmp/id.tsv LD_PRELOAD=$SHIM "$B/route_name" --expect-hooks > "$tmp/id.txt" 2>&1 \
    || { grep -v '^ok' "$tmp/id.txt"; fail "exported pointers: hooks not handed out"; }
got=$(row "$tmp/id.tsv" cuLaunchKernel 13000 2)
[ "$got" = "hook identity cuLaunchKernel_ptsz" ] || fail "routing table with exported pointers: '$got'"
awk -F'\t' '$8 == "name"' "$tmp/id.tsv" | grep -q . && fail "exported pointers: a request was routed by name"
echo "PASS: unexported driver pointers routed by (name, version, flags); PFN mismatches and unhooked names passed through; controls fail as they must"
