#!/usr/bin/env bash
# Property: mlp loads cuBLAS only when --gemm cublas asks for it, so it runs on a GPU machine whose
# cuBLAS lives only in a Python wheel (or nowhere): (1) libcublas.so.13 is not DT_NEEDED; (2) the
# default run never loads a libcublas (LD_DEBUG=files), even with an unloadable libcublas.so.13
# first on LD_LIBRARY_PATH; (3) --gemm cublas then fails with one clear line naming
# libcublas.so.13 and exit 1 (control: the unloadable file does stop it); (4) with hostcublas on
# LD_LIBRARY_PATH --gemm cublas trains, and under the shim with ACCELSHIM_MATMUL=bf16 the exit
# report counts all 5 GEMMs per step as bf16 (the lazily resolved calls still reach the shim's
# hooks) and the parameters differ from the fp32 run.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
B=$MLP_ROOT/build
for f in "$B/tests/hostcublas/libcublas.so.13" "$B/libaccelshim.so"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
command -v readelf >/dev/null || { echo "SKIP: readelf not installed"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
needed=$(readelf -d "$MLP_BIN" | awk '/NEEDED/ { gsub(/[][]/, "", $NF); printf "%s ", $NF }')
echo "DT_NEEDED: $needed"
case $needed in *libcublas*) bad "libcublas is DT_NEEDED" ;; esac

mkdir -p "$MLP_TMP/broken"
: >"$MLP_TMP/broken/libcublas.so.13"   # an empty file: dlopen refuses it
LDP=$MLP_TMP/broken:$B/tests/hostcuda
LD_DEBUG=files LD_LIBRARY_PATH=$LDP HOSTCUDA_KERNEL_LIBS=$MLP_KLIB "$MLP_BIN" --steps 3 >"$MLP_TMP/k.out" 2>"$MLP_TMP/k.err"
rc=$?
[ $rc -eq 0 ] || bad "default run with a broken libcublas.so.13 first on the path: exit $rc: $(grep -v '^ *[0-9]*:' "$MLP_TMP/k.err" | tail -2)"
grep -q 'file=libcublas' "$MLP_TMP/k.err" && bad "the default run loaded cuBLAS: $(grep -m1 'file=libcublas' "$MLP_TMP/k.err")"
grep -q '^step 2 ' "$MLP_TMP/k.out" && echo "ok: --gemm kernels runs without loading cuBLAS"

LD_LIBRARY_PATH=$LDP HOSTCUDA_KERNEL_LIBS=$MLP_KLIB "$MLP_BIN" --steps 3 --gemm cublas >"$MLP_TMP/b.out" 2>"$MLP_TMP/b.err"
rc=$?
echo "broken cuBLAS, --gemm cublas: exit $rc: $(cat "$MLP_TMP/b.err")"
[ $rc -eq 1 ] || bad "--gemm cublas with an unloadable libcublas.so.13: exit $rc (want 1)"
grep -q 'cannot load libcublas.so.13' "$MLP_TMP/b.err" || bad "no message naming libcublas.so.13"

LDP=$B/tests/hostcublas:$B/tests/hostcuda
run() {   # run TAG ENV...: 20 steps --gemm cublas on hostcublas
    local tag=$1; shift
    env LD_LIBRARY_PATH="$LDP" HOSTCUDA_KERNEL_LIBS="$MLP_KLIB" "$@" "$MLP_BIN" --steps 20 --batch 8 --gemm cublas \
        --save "$MLP_TMP/$tag.bin" >"$MLP_TMP/$tag.out" 2>"$MLP_TMP/$tag.err" || bad "$tag: exit $?: $(tail -2 "$MLP_TMP/$tag.err")"
}
run f32
run bf16 LD_PRELOAD="$B/libaccelshim.so" ACCELSHIM_MATMUL=bf16 ACCELSHIM_LOG=info
first=$(awk '/^step /{print $4; exit}' "$MLP_TMP/f32.out") last=$(awk '/^step /{l = $4} END {print l}' "$MLP_TMP/f32.out")
echo "fp32 cuBLAS loss $first -> $last"
awk -v a="$first" -v z="$last" 'BEGIN { exit !(a != "" && z + 0 < a + 0) }' || bad "the loss did not fall with --gemm cublas"
counts=$(sed -n 's/.*INFO report: cublas GEMMs (matmul: bf16): \(.*\); kept fp32.*$/\1/p' "$MLP_TMP/bf16.err" | tail -1)
echo "shim, ACCELSHIM_MATMUL=bf16: $counts"
[ "$counts" = "32F 0, 32F_FAST_TF32 0, 32F_FAST_16BF 100, 32F_FAST_16F 0, other 0" ] ||
    bad "the shim's report does not count 100 bf16 GEMMs: '$counts'"
cmp -s "$MLP_TMP/f32.bin" "$MLP_TMP/bf16.bin" && bad "bf16 GEMMs gave the fp32 parameters (the hooks were not reached)"
[ $fail -eq 0 ] && echo "PASS: cuBLAS is loaded lazily, a missing one is named, and the shim still rewrites its GEMMs"
exit $fail
