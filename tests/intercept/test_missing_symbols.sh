#!/usr/bin/env bash
# Property: a hooked symbol the real driver lacks answers CUDA_ERROR_NOT_SUPPORTED (never a call
# through NULL), with a warning capped at 10 lines per site plus one "suppressed" line; the real
# resolver's CUresult and symbolStatus pass through; without cuFuncGetName the kernel cache uses
# the names recorded by the cuModuleGetFunction hook (demangled via libstdc++). (Names the driver lacks through the resolver
# doors, unhooked names and unknown names are compared with the driver's answers in test_routing.sh.)
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/missing" "$B/libpartial_driver.so"
err=$(mktemp); trap 'rm -f "$err"' EXIT
ACCELSHIM_DRIVER_PATH=$B/libpartial_driver.so LD_PRELOAD=$SHIM "$B/missing" 2>"$err" || { cat "$err"; fail "missing symbols"; }
n=$(grep -c 'WARN intercept: cuMemAlloc_v2: the driver does not export it' "$err")
s=$(grep -c 'further warnings from .* suppressed' "$err")
[ "$n" -eq 10 ] && [ "$s" -ge 1 ] || { cat "$err"; fail "want 10 capped warnings + a suppressed line, got $n and $s"; }
echo "PASS: missing real symbols answer CUDA_ERROR_NOT_SUPPORTED; warnings capped ($n + suppressed)"
