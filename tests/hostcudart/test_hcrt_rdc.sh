#!/usr/bin/env bash
# Property: a program built with relocatable device code (nvcc -rdc=true -cudart shared, two
# translation units that need each other: rt_rdc_main.cu, rt_rdc_dev.cu) runs on hostcudart: the
# runtime links the units' PTX through the driver's public cuLink* calls and every
# check of the program passes — a device function, a __device__ and a __constant__ variable of
# the other unit, a kernel of the other unit launched from this one's host code, the same
# template in both units, device printf from both (each unit's own format strings). Under the
# shim at world 1 its stdout is identical to without it, and the shim names both units' kernels.
# Control: the same program where no kernel can run (HOSTCUDA_EXEC=twin: none has a host twin)
# exits non-zero: its checks can fail.
. "$(dirname "$0")/../lib.sh"
D=$T_BUILD/tests/hostcudart
t_need "$D/rt_rdc" "$D/libcudart.so.13" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_SHIM"
t_tmp
rt() { env LD_LIBRARY_PATH="$D:$T_HOSTCUDA_DIR" "$@"; }
rt timeout 120 "$D/rt_rdc" >"$T_TMP/plain" 2>"$T_TMP/plain.err"
rc=$?
grep -q "^rt_rdc: all checks passed$" "$T_TMP/plain" && grep -q "^dev unit says: filling 1000$" "$T_TMP/plain" &&
    grep -q "^main unit says: scale\[0\] is 1$" "$T_TMP/plain"
t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "rt_rdc (-rdc=true, 2 units): every check passes, both units' printf" ||
    { t_show "$T_TMP/plain"; t_show "$T_TMP/plain.err"; }

rt env LD_PRELOAD="$T_SHIM" ACCELSHIM_LOG=debug timeout 120 "$D/rt_rdc" >"$T_TMP/shim" 2>"$T_TMP/shim.err"
rc=$?
cmp -s "$T_TMP/plain" "$T_TMP/shim"
t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "under the shim (world 1): exit 0, stdout identical" ||
    { diff "$T_TMP/plain" "$T_TMP/shim" | head -8; t_show "$T_TMP/shim.err"; }
grep -q "DEBUG kernels: kernel _Z8dev_fillPfi " "$T_TMP/shim.err" && grep -q "DEBUG kernels: kernel _Z11main_kernelPfi " "$T_TMP/shim.err"
t_case $? "the shim names the kernels of both units" || t_show "$T_TMP/shim.err"

rt env HOSTCUDA_EXEC=twin timeout 60 "$D/rt_rdc" >"$T_TMP/twin" 2>&1
rc=$?
t_case $(( rc != 0 ? 0 : 1 )) "control: with the kernels unable to run (HOSTCUDA_EXEC=twin) the program fails (exit $rc)" ||
    t_show "$T_TMP/twin"
t_done
