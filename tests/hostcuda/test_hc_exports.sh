#!/usr/bin/env bash
# test_hc_exports.sh — proves hostcuda's libcuda.so.1 exports exactly the rows of hc_api.def plus
# the three hostcuda_* test extras, each at its own address (no merged twins), under soname
# libcuda.so.1 with a libcuda.so symlink next to it, and that hc_api.def's proc-address rows are
# what cudaTypedefs.h's PFN typedefs give.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lib="$root/build/tests/hostcuda/libcuda.so.1"
def="$root/tests/hostcuda/hc_api.def"
if ! command -v nm >/dev/null || ! command -v readelf >/dev/null; then
    echo "SKIP: nm/readelf not installed"; exit 77
fi
[ -f "$lib" ] || { echo "SKIP: $lib not built"; exit 77; }
fail=0

soname="$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
[ "$soname" = "libcuda.so.1" ] || { echo "FAIL: soname is '$soname', expected libcuda.so.1"; fail=1; }
[ "$(readlink "$root/build/tests/hostcuda/libcuda.so")" = "libcuda.so.1" ] ||
    { echo "FAIL: build/tests/hostcuda/libcuda.so is not a symlink to libcuda.so.1"; fail=1; }

exported="$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)"
expected="$( (grep -o '^X([A-Za-z0-9_]*' "$def" | cut -c3-; printf '%s\n' hostcuda_call_count \
    hostcuda_reset_call_counts hostcuda_host_view) | sort)"
extra="$(comm -23 <(echo "$exported") <(echo "$expected"))"
missing="$(comm -13 <(echo "$exported") <(echo "$expected"))"
[ -z "$extra" ] || { echo "FAIL: exported but not in hc_api.def: $extra"; fail=1; }
[ -z "$missing" ] || { echo "FAIL: in hc_api.def but not exported: $missing"; fail=1; }

dups="$(nm -D --defined-only "$lib" | awk '{print $1}' | sort | uniq -d)"
[ -z "$dups" ] || { echo "FAIL: symbols share an address (merged functions): $dups"; fail=1; }

# the proc-address rows still agree with the installed cudaTypedefs.h
typedefs="${CUDA_HOME:-/usr/local/cuda}/include/cudaTypedefs.h"
if command -v python3 >/dev/null && [ -f "$typedefs" ]; then
    if ! grep -o '^X([A-Za-z0-9_]*' "$def" | cut -c3- |
        python3 "$root/tests/hostcuda/gen_api_table.py" "$typedefs" | diff - <(grep '^X(' "$def"); then
        echo "FAIL: hc_api.def rows differ from what gen_api_table.py derives from $typedefs"; fail=1
    fi
else
    echo "note: python3 or $typedefs missing; hc_api.def not re-derived"
fi

n="$(echo "$exported" | grep -c '^cu')"
[ "$fail" = 0 ] && echo "ok: $n cu* symbols + 3 hostcuda_* exported, all distinct, soname libcuda.so.1"
exit "$fail"
