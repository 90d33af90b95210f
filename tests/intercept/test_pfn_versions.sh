#!/usr/bin/env bash
# Property: intercept/pfn_versions.def (the name-routing fallback's table) is exactly what
# intercept/gen_pfn_versions.sh derives from this toolkit's cudaTypedefs.h and hooks.def, and every
# hooks.def PFN type appears in it (so each hook can be chosen). Refresh after a toolkit update:
#   bash intercept/gen_pfn_versions.sh $CUDA_HOME/include/cudaTypedefs.h intercept/hooks.def > intercept/pfn_versions.def
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${CUDA_HOME:-/usr/local/cuda}/include/cudaTypedefs.h
[ -f "$T" ] || { echo "SKIP: $T not found"; exit 77; }
got=$(bash "$ROOT/intercept/gen_pfn_versions.sh" "$T" "$ROOT/intercept/hooks.def") || { echo "FAIL: generator failed"; exit 1; }
if ! d=$(diff <(printf '%s\n' "$got") "$ROOT/intercept/pfn_versions.def"); then
    head -20 <<<"$d"
    echo "FAIL: pfn_versions.def is stale (< generated now, > committed)"; exit 1
fi
miss=0
while read -r p; do
    grep -q "\"$p\"" "$ROOT/intercept/pfn_versions.def" || { echo "FAIL: $p (hooks.def) has no row"; miss=1; }
done < <(grep -o 'PFN_cu[A-Za-z0-9_]*' "$ROOT/intercept/hooks.def" | sort -u)
[ $miss -eq 0 ] || exit 1
# control: a table missing a row is seen as stale
if diff -q <(printf '%s\n' "$got" | sed '7d') "$ROOT/intercept/pfn_versions.def" >/dev/null; then
    echo "FAIL: control: a table without one row compared equal"; exit 1
fi
echo "PASS: pfn_versions.def = cudaTypedefs.h's $(grep -c '^ASH_PFN' "$ROOT/intercept/pfn_versions.def") versioned PFN typedefs of hooked names"
