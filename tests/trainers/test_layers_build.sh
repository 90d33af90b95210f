#!/usr/bin/env bash
# Property: the layers trainer (tests/trainers/layers.c) is built like mlp — a Driver-API-only
# binary with its PTX embedded, every kernel entry (layer_backward, layer_forward, sgd_apply) with
# a host implementation in liblayers_kernels_host.so — and one rank of it runs on hostcuda under
# the shim with examples/layers.yaml: a `step S time_ms T` line per step and `mean_step_ms`,
# --dump writes L x N finite float32, and --work changes the time only: two --work values give
# byte-identical dumps. Negative control: another --seed gives a different dump (the comparison
# can fail). Timings are printed, never compared.
set -u
# shellcheck source=tests/trainers/mlp_test_lib.sh
. "$(dirname "$0")/mlp_test_lib.sh"
BIN=$T_BUILD/tests/trainers/layers
PTX=$T_BUILD/tests/trainers/layers_kernels.ptx
KLIB=$T_BUILD/tests/trainers/liblayers_kernels_host.so
POLICY=$T_TOP/examples/layers.yaml
for f in "$BIN" "$PTX" "$KLIB" "$T_SHIM"; do
    [ -f "$f" ] || t_fail "$f not built (make all)"
done
t_need_cmd readelf nm od
mlp_need_driver
export HOSTCUDA_KERNEL_LIBS=$KLIB:$T_BUILD/collectives/libash_cast_kernels_host.so
echo "property: layers is built like mlp and runs under the shim; --work does not change its result"

needed=$(readelf -d "$BIN" | awk '/NEEDED/ { gsub(/[][]/, "", $NF); print $NF }' | sort | tr '\n' ' ')
case " $needed " in *" libcuda.so.1 "*) ;; *) t_no "libcuda.so.1 not in DT_NEEDED ($needed)" ;; esac
case "$needed" in *cudart*) t_no "links cudart ($needed)" ;; esac
entries=$(sed -n 's/^.*\.entry \([A-Za-z0-9_]*\)(.*$/\1/p' "$PTX" | sort | tr '\n' ' ' | sed 's/ $//')
[ "$entries" = "layer_backward layer_busy layer_forward sgd_apply" ] \
    || t_no "PTX entries '$entries', expected 'layer_backward layer_busy layer_forward sgd_apply'"
exported=$(nm -D --defined-only "$KLIB" | awk '{ print $NF }')
for e in $entries; do
    grep -qx "hostcuda_kernel_$e" <<<"$exported" || t_no "$KLIB does not export hostcuda_kernel_$e"
    grep -aqF ".entry $e(" "$BIN" || t_no "the binary does not embed the PTX entry $e"
done

L=4 N=4096 STEPS=5
# run NAME ARGS...: one rank under the shim, the policy loaded; stdout NAME.out, dump NAME.bin
run() {
    local name=$1; shift
    if ! ACCELSHIM_POLICY=$POLICY LD_PRELOAD=$T_SHIM "$BIN" --layers $L --size $N --steps $STEPS \
            --dump "$MLP_TMP/$name.bin" "$@" >"$MLP_TMP/$name.out" 2>"$MLP_TMP/$name.err"; then
        echo "FAIL: layers $* exited non-zero:"; tail -5 "$MLP_TMP/$name.err"; exit 1
    fi
}
run w0 --work 0
run w40 --work 40 --device-us 200
run seed2 --work 0 --seed 2

out=$MLP_TMP/w0.out
steps=$(grep -c '^step [0-9]* time_ms [0-9.]*$' "$out")
[ "$steps" -eq $STEPS ] || t_no "$steps 'step S time_ms T' lines, expected $STEPS: $(head -3 "$out")"
grep -q '^mean_step_ms [0-9.]*$' "$out" || t_no "no 'mean_step_ms X' line: $(tail -3 "$out")"
size=$(stat -c %s "$MLP_TMP/w0.bin" 2>/dev/null || echo 0)
[ "$size" -eq $((L * N * 4)) ] || t_no "--dump wrote $size bytes, expected $((L * N * 4))"
bad=$(od -An -v -f "$MLP_TMP/w0.bin" | tr -s ' ' '\n' | grep -ciE 'nan|inf')
[ "$bad" -eq 0 ] || t_no "$bad parameters are not finite"
if cmp -s "$MLP_TMP/w0.bin" "$MLP_TMP/w40.bin"; then
    echo "ok: --work 0 and --work 40 dumps identical ($(grep checksum "$MLP_TMP/w40.out")); mean_step_ms $(awk '/mean_step_ms/ { print $2 }' "$MLP_TMP/w0.out") vs $(awk '/mean_step_ms/ { print $2 }' "$MLP_TMP/w40.out")"
else
    t_no "--work 0 and --work 40 dumps differ: $(cmp "$MLP_TMP/w0.bin" "$MLP_TMP/w40.bin"); $(grep checksum "$MLP_TMP/w0.out") vs $(grep checksum "$MLP_TMP/w40.out")"
fi
if cmp -s "$MLP_TMP/w0.bin" "$MLP_TMP/seed2.bin"; then
    t_no "control: --seed 1 and --seed 2 dumps are identical (the comparison cannot fail)"
else
    echo "ok: control: --seed 2 gives a different dump"
fi
[ "$T_FAILS" -eq 0 ] || t_fail "$T_FAILS check(s) failed"
echo "ok: layers built like mlp; 1 rank under the shim: $STEPS step lines, finite dump, --work-independent"
