#!/usr/bin/env bash
# Property: the mlp trainer is a Driver-API-only binary (DT_NEEDED libcuda.so.1, no cudart, no
# rpath) with its PTX embedded, and every kernel entry in the PTX has a host implementation
# hostcuda_kernel_<entry> exported by libmlp_kernels_host.so — including the C++-mangled one.
# Needs no driver: inspects the build outputs only.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/tests/trainers/mlp
ptx=$root/build/tests/trainers/mlp_kernels.ptx
so=$root/build/tests/trainers/libmlp_kernels_host.so
for f in "$bin" "$ptx" "$so"; do
    [ -f "$f" ] || { echo "FAIL: $f not built (make all)"; exit 1; }
done
for t in readelf nm c++filt; do
    command -v "$t" >/dev/null || { echo "skip: $t not installed"; exit 77; }
done
echo "property: Driver-API-only binary with embedded PTX; every kernel entry has a host implementation"
fail=0

needed=$(readelf -d "$bin" | awk '/NEEDED/ { gsub(/[][]/, "", $NF); print $NF }' | sort | tr '\n' ' ')
echo "DT_NEEDED: $needed"
case " $needed " in *" libcuda.so.1 "*) ;; *) echo "FAIL: libcuda.so.1 not in DT_NEEDED"; fail=1 ;; esac
case "$needed" in *cudart*) echo "FAIL: links cudart"; fail=1 ;; esac
if readelf -d "$bin" | grep -Eq 'RPATH|RUNPATH'; then
    echo "FAIL: binary has an rpath/runpath:"; readelf -d "$bin" | grep -E 'RPATH|RUNPATH'; fail=1
fi

expected="_Z14linear_forwardPfPKfS1_S1_iiii adam_update clip_scale grad_norm_squared \
linear_backward_input linear_backward_weight mse_grad mse_loss sgd_update"
entries=$(sed -n 's/^.*\.entry \([A-Za-z0-9_]*\)(.*$/\1/p' "$ptx" | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$entries" != "$(echo "$expected" | tr -s ' ')" ]; then
    echo "FAIL: PTX entries differ from the documented kernel list"
    echo "  ptx:      $entries"
    echo "  expected: $expected"
    fail=1
fi
exported=$(nm -D --defined-only "$so" | awk '{ print $NF }')
for e in $entries; do
    if ! grep -qx "hostcuda_kernel_$e" <<<"$exported"; then
        echo "FAIL: $so does not export hostcuda_kernel_$e"; fail=1
    fi
    if ! grep -aqF ".entry $e(" "$bin"; then
        echo "FAIL: the binary does not embed the PTX entry $e"; fail=1
    fi
done
dm=$(echo _Z14linear_forwardPfPKfS1_S1_iiii | c++filt)
want="linear_forward(float*, float const*, float const*, float const*, int, int, int, int)"
[ "$dm" = "$want" ] || { echo "FAIL: demangled '$dm', expected '$want'"; fail=1; }

[ $fail -eq 0 ] && echo "ok: Driver-API-only binary, PTX embedded, $(wc -w <<<"$entries") kernels each with a host implementation"
exit $fail
