#!/usr/bin/env bash
# Property: hostcurand's libcurand.so.10 loads in place of NVIDIA's: soname libcurand.so.10, every
# export at the one version node NVIDIA's library carries (libcurand.so.10), exactly the functions
# of hostcurand.map, which are NVIDIA's exports (checked against the toolkit's libcurand.so.10
# when it is there); every versioned curand import of a program linked -lcurand resolves with
# LD_BIND_NOW=1. Control: the import check fails for a name the library lacks.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L=$ROOT/build/tests/hostcurand/libcurand.so.10
P=$ROOT/build/tests/hostcurand/cr_equiv
MAP=$ROOT/tests/hostcurand/hostcurand.map
NV=${CUDA_HOME:-/usr/local/cuda}/lib64/libcurand.so.10
if ! command -v readelf >/dev/null || ! command -v nm >/dev/null; then echo "SKIP: binutils missing"; exit 77; fi
[ -f "$L" ] || { echo "SKIP: hostcurand is not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
symver() { nm -D --defined-only "$1" | awk '$2 != "A" {split($3, a, "@@"); print a[1], a[2], $2}' | sort; }

soname=$(readelf -d "$L" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = libcurand.so.10 ] || fail "soname '$soname'"
readelf -V "$L" | grep -Eq 'Name: libcurand\.so\.10$' || fail "no version definition libcurand.so.10"
symver "$L" >"$tmp/ours"
awk '$2 != "libcurand.so.10" || $3 != "T"' "$tmp/ours" >"$tmp/bad"
[ -s "$tmp/bad" ] && fail "exports not a function at libcurand.so.10: $(head -3 "$tmp/bad" | tr '\n' ' ')"
cut -d' ' -f1 "$tmp/ours" >"$tmp/names"
grep -o '^ *curand[A-Za-z0-9_]*;' "$MAP" | tr -d ' ;' | sort >"$tmp/map"
diff -q "$tmp/names" "$tmp/map" >/dev/null || { fail "exports differ from hostcurand.map:"; diff "$tmp/names" "$tmp/map" | head -8; }
if [ -f "$NV" ]; then
    nm -D --defined-only "$NV" | awk '$2 == "T" {split($3, a, "@@"); print a[1], a[2]}' | sort >"$tmp/nv"
    awk '{print $1, $2}' "$tmp/ours" >"$tmp/ours2"
    diff -q "$tmp/nv" "$tmp/ours2" >/dev/null || { fail "NVIDIA's exports (<) differ from ours (>):"; diff "$tmp/nv" "$tmp/ours2" | head -8; }
    [ "$fails" -eq 0 ] && echo "ok: $(wc -l <"$tmp/names") exports = NVIDIA's $(wc -l <"$tmp/nv"), all at version libcurand.so.10"
else
    echo "ok: $(wc -l <"$tmp/names") exports at libcurand.so.10 (no NVIDIA library here to compare)"
fi
# every curand import of a -lcurand program, with its version, is defined here
if [ -f "$P" ]; then
    nm -D --defined-only "$L" | awk '{print $3}' >"$tmp/defs"
    first_missing() { # IMPORT...: prints the first NAME@VERSION hostcurand does not define
        for s in "$@"; do grep -qx "${s%%@*}@@${s#*@}" "$tmp/defs" || { echo "$s"; return; }; done
    }
    imports=$(nm -D --undefined-only "$P" | awk '{print $2}' | grep '^curand')
    [ -n "$imports" ] || fail "cr_equiv has no curand imports"
    # shellcheck disable=SC2086
    miss=$(first_missing $imports)
    [ -n "$miss" ] && fail "cr_equiv imports $miss, not in hostcurand"
    # control: a name the library lacks is caught
    # shellcheck disable=SC2086
    [ -n "$(first_missing $imports curandNoSuchCall@libcurand.so.10)" ] || fail "control: a missing import passed"
    LD_BIND_NOW=1 LD_LIBRARY_PATH="$(dirname "$L"):$ROOT/build/tests/hostcudart:$ROOT/build/tests/hostcuda" \
        timeout 60 "$P" status >/dev/null 2>&1 || fail "cr_equiv status with LD_BIND_NOW=1 failed"
    [ "$fails" -eq 0 ] && echo "ok: every curand import of cr_equiv resolves (LD_BIND_NOW=1); control caught"
fi
[ "$fails" -eq 0 ] && echo PASS || echo "FAIL: $fails"
[ "$fails" -eq 0 ]
