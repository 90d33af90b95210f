#!/usr/bin/env bash
# Property: libaccelshim.so exports only cu[A-Z]* hooks, the cuBLAS hooks of
# shim/precision/cublas_hooks.def (exact names), dlsym and accelshim_* (version script
# intercept/exports.map + -fvisibility=hidden), every hook named in intercept/hooks.def and
# cublas_hooks.def is exported, the library does not link libcuda (the driver is dlopen'ed by name) and never calls
# the public dlsym (only the real one, from dlvsym).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHIM=$ROOT/build/libaccelshim.so
[ -f "$SHIM" ] || { echo "SKIP: $SHIM not built"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: nm missing"; exit 77; }
syms=$(nm -D --defined-only "$SHIM" | awk '{print $3}' | sed 's/@.*//' | sort -u)
cublas_want=$(sed -n 's/^ASH_CUBLAS_HOOK([A-Z]*, *\([A-Za-z0-9_]*\)).*/\1/p' "$ROOT/shim/precision/cublas_hooks.def" | sort -u)
[ -n "$cublas_want" ] || { echo "FAIL: no ASH_CUBLAS_HOOK rows found in shim/precision/cublas_hooks.def"; exit 1; }
bad=$(echo "$syms" | grep -Ev '^(cu[A-Z][A-Za-z0-9_]*|dlsym|accelshim_[A-Za-z0-9_]+)$' | grep -vxF "$cublas_want")
if [ -n "$bad" ]; then
    echo "FAIL: exported beyond cu[A-Z]*, the cuBLAS hooks, dlsym, accelshim_*:"; echo "$bad"; exit 1
fi
missing=$(comm -23 <(echo "$cublas_want") <(echo "$syms"))
if [ -n "$missing" ]; then
    echo "FAIL: cuBLAS hooks in cublas_hooks.def not exported:"; echo "$missing"; exit 1
fi
# a cuBLAS symbol the shim does not hook (e.g. cublasCreate_v2) must not be exported
if echo "$syms" | grep -qx 'cublasCreate_v2'; then echo "FAIL: cublasCreate_v2 exported"; exit 1; fi
want=$(sed -n 's/^ASH_HOOK([A-Z]*, *\([A-Za-z0-9_]*\),.*/\1/p' "$ROOT/intercept/hooks.def" | sort -u)
missing=$(comm -23 <(echo "$want") <(echo "$syms"))
if [ -n "$missing" ]; then
    echo "FAIL: hooks in hooks.def not exported:"; echo "$missing"; exit 1
fi
echo "$syms" | grep -qx dlsym || { echo "FAIL: dlsym not exported"; exit 1; }
echo "$syms" | grep -qx accelshim_version || { echo "FAIL: accelshim_version not exported"; exit 1; }
if readelf -d "$SHIM" | grep NEEDED | grep -q 'libcuda'; then
    echo "FAIL: $SHIM links libcuda:"; readelf -d "$SHIM" | grep NEEDED; exit 1
fi
# the shim never calls the public dlsym (it would be its own hook): no dlsym import, no PLT call
if nm -D --undefined-only "$SHIM" | grep -qw 'dlsym'; then echo "FAIL: $SHIM imports dlsym"; exit 1; fi
if objdump -d "$SHIM" | grep -q 'call.*<dlsym@plt>'; then echo "FAIL: $SHIM calls dlsym through its PLT"; exit 1; fi
echo "PASS: $(echo "$syms" | wc -l) exported symbols: $(echo "$want" | wc -l) hooks, $(echo "$cublas_want" | wc -l) cuBLAS hooks, dlsym, $(echo "$syms" | grep -c '^accelshim_') accelshim_*; no libcuda DT_NEEDED"
