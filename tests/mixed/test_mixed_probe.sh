#!/usr/bin/env bash
# test_mixed_probe.sh — issue 10 on hostcuda + hostcublas, with build/tests/mixed/gemm_probe
# (every hooked GEMM entry point, cuBLAS linked dynamically). Properties (TAP, one per line):
#  - precision.matmul: default under the shim -> results bit-identical to the run without shim;
#  - tf32 / bf16 / f16 -> every fp32 GEMM within that type's rounding bound of the exact product
#    AND different from the fp32 result (gemm_probe --expect); the COMPUTE_32F_PEDANTIC GEMM and
#    the Sgemm on a CUBLAS_PEDANTIC_MATH handle untouched;
#  - matmul_exclude ["*loss*"] keeps probe_loss_forward's GEMM bit-identical to fp32 while the
#    others downcast; ACCELSHIM_MATMUL overrides the policy (f16 over bf16, default over bf16);
#  - the exit report's GEMM counts per compute type match the calls the probe made;
#  - negative controls: the probe's downcast check fails without the shim, and a bad
#    ACCELSHIM_MATMUL value leaves every GEMM fp32 (and says so).
# Nothing here runs on a GPU: hostcublas rounds inputs as the FAST compute types define.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
PROBE=$B/tests/mixed/gemm_probe
SHIM=$B/libaccelshim.so
for f in "$PROBE" "$SHIM" "$B/tests/hostcuda/libcuda.so.1" "$B/tests/hostcublas/libcublas.so.13" \
         "$B/tests/hostcublas/libcublasLt.so.13"; do
    [ -e "$f" ] || { echo "1..0 # SKIP $f not built"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH=$B/tests/hostcublas:$B/tests/hostcuda
N=0 FAILED=0
tap() { N=$((N + 1)); if [ "$1" -eq 0 ]; then echo "ok $N - $2"; else echo "not ok $N - $2"; FAILED=1; fi; }
show() { sed 's/^/# /' "$@" | tail -n 25; }
policy() { printf 'version: 1\nprecision:\n  matmul: %s\n' "$1" >"$T/$2.yaml"; [ -n "${3:-}" ] && printf '  matmul_exclude: [%s]\n' "$3" >>"$T/$2.yaml"; return 0; }
# shim NAME POLICY ARGS... : the probe under the shim at info level; log in $T/NAME.log
shim() {
    local name=$1 pol=$2; shift 2
    LD_PRELOAD=$SHIM ACCELSHIM_POLICY=$pol ACCELSHIM_LOG=${LOG:-info} "$PROBE" --out "$T/$name.bin" "$@" \
        >"$T/$name.log" 2>&1
}
# report NAME: the "cublas GEMMs" report line's counts, e.g. "32F 1, 32F_FAST_TF32 0, ..."
report() { sed -n 's/.*INFO report: cublas GEMMs (matmul: [a-z0-9]*): \(.*\)$/\1/p' "$T/$1.log"; }
expect_report() { # NAME WANT
    local got; got=$(report "$1")
    [ "$got" = "$2" ] && return 0
    echo "# report mismatch for $1"; echo "#   want: $2"; echo "#   got:  $got"; return 1
}

echo "1..14"
"$PROBE" --expect default --out "$T/ref.bin" >"$T/ref.log" 2>&1
rc=$?; tap $rc "without the shim: every GEMM equals the CPU fp32 emulation (hostcublas sanity)"
[ $rc -eq 0 ] || show "$T/ref.log"

policy default def
shim def "$T/def.yaml" --expect default
rc=$?; cmp -s "$T/ref.bin" "$T/def.bin" || rc=1
tap $rc "matmul: default -> bit-identical to no shim (all 10 GEMMs)"
[ $rc -eq 0 ] || { show "$T/def.log"; cmp "$T/ref.bin" "$T/def.bin" | sed 's/^/# /'; }
expect_report def "32F 9, 32F_FAST_TF32 0, 32F_FAST_16BF 0, 32F_FAST_16F 0, other 1; kept fp32 by matmul_exclude 0"
tap $? "matmul: default -> report counts 9 x 32F and 1 other (the COMPUTE_32F_PEDANTIC GEMM)"

for m in tf32 bf16 f16; do
    policy "$m" "$m"
    shim "$m" "$T/$m.yaml" --expect "$m"
    rc=$?; tap $rc "matmul: $m -> each fp32 GEMM within the $m bound and different from fp32; the pedantic two untouched"
    [ $rc -eq 0 ] || show "$T/$m.log"
done
expect_report bf16 "32F 1, 32F_FAST_TF32 0, 32F_FAST_16BF 8, 32F_FAST_16F 0, other 1; kept fp32 by matmul_exclude 0" &&
expect_report tf32 "32F 1, 32F_FAST_TF32 8, 32F_FAST_16BF 0, 32F_FAST_16F 0, other 1; kept fp32 by matmul_exclude 0" &&
expect_report f16 "32F 1, 32F_FAST_TF32 0, 32F_FAST_16BF 0, 32F_FAST_16F 8, other 1; kept fp32 by matmul_exclude 0"
tap $? "the report counts 8 GEMMs of the chosen FAST type (6 cuBLAS + 1 cuBLASLt + loss), 1 x 32F (PEDANTIC_MATH handle), 1 other"

policy bf16 excl '"*loss*"'
LOG=debug shim excl "$T/excl.yaml" --expect bf16 --excluded loss
rc=$?; tap $rc "matmul_exclude [\"*loss*\"]: probe_loss_forward's GEMM stays bit-identical fp32, the 7 others downcast"
[ $rc -eq 0 ] || show "$T/excl.log"
expect_report excl "32F 2, 32F_FAST_TF32 0, 32F_FAST_16BF 7, 32F_FAST_16F 0, other 1; kept fp32 by matmul_exclude 1"
tap $? "matmul_exclude: the report counts 2 x 32F (excluded + PEDANTIC_MATH), 7 x 32F_FAST_16BF, 1 excluded"
rc=0
grep -q 'GEMM called from probe_loss_forward.*kept in fp32 (matmul_exclude "\*loss\*")' "$T/excl.log" || rc=1
[ "$(grep -c 'DEBUG cublas: GEMM cublas' "$T/excl.log")" -eq 10 ] || rc=1
tap $rc "ACCELSHIM_LOG=debug names the excluded caller and logs each of the 10 distinct GEMM shapes once"
[ $rc -eq 0 ] || grep cublas "$T/excl.log" | show /dev/stdin

ACCELSHIM_MATMUL=f16 shim envf16 "$T/bf16.yaml" --expect f16
rc=$?; tap $rc "ACCELSHIM_MATMUL=f16 overrides precision.matmul: bf16"
[ $rc -eq 0 ] || show "$T/envf16.log"
ACCELSHIM_MATMUL=default shim envdef "$T/bf16.yaml" --expect default
rc=$?; cmp -s "$T/ref.bin" "$T/envdef.bin" || rc=1
tap $rc "ACCELSHIM_MATMUL=default overrides precision.matmul: bf16 -> bit-identical to no shim"

"$PROBE" --expect bf16 >"$T/neg.log" 2>&1
rc=$?; [ $rc -eq 1 ] && grep -q "did not take effect" "$T/neg.log"
tap $? "negative control: without the shim the probe's bf16 check fails (exit $rc)"
ACCELSHIM_MATMUL=fp8 shim bad "$T/bf16.yaml" --expect default
rc=$?; [ $rc -eq 2 ] && grep -q "^accelshim: ACCELSHIM_MATMUL=fp8: expected default, tf32, bf16 or f16$" "$T/bad.log" &&
    ! grep -q "GEMM" "$T/bad.log"; rc=$?
tap $rc "ACCELSHIM_MATMUL=fp8 stops the program before any GEMM (exit 2, one line naming it)"
[ $rc -eq 0 ] || show "$T/bad.log"
exit $FAILED
