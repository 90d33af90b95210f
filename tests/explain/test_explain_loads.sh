#!/usr/bin/env bash
# test_explain_loads.sh — explain mode sees the images through every load hook: hostcuda's
# hc_fatbin_run loads nvcc's zstd fatbin (test_kernels.fatbin) by cuModuleLoadData,
# cuModuleLoadFatBinary, cuLibraryLoadData, and cuLibraryLoadData of a cudart fatbin wrapper (v1,
# v2), under the shim with ACCELSHIM_EXPLAIN; each explanation names the image by its load call
# and as a zstd fatbin with its PTX and 7 kernels, and the launched hc_fill with its pointer
# argument written (f32) and its count equal to the allocation's elements.
# A load the driver refuses (the SASS-only fatbin, on hostcuda) is not kept. Control: the plain PTX
# text (test_kernels.ptx through cuModuleLoadData) is named "PTX text", not a fatbin.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
H=$T_HOSTCUDA_DIR
t_need "$T_SHIM" "$H/libcuda.so.1" "$H/hc_fatbin_run" "$H/test_kernels.fatbin" "$H/libtest_kernels_host.so"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() { # OUT IMAGE MODE [EXPLAIN]
    env LD_LIBRARY_PATH="$H" HOSTCUDA_KERNEL_LIBS="$H/libtest_kernels_host.so" LD_PRELOAD="$T_SHIM" ${4:+ACCELSHIM_EXPLAIN="$4"} \
        "$H/hc_fatbin_run" "$2" "$3" > "$1.out" 2>&1
}
for m in data:cuModuleLoadData fatbinary:cuModuleLoadFatBinary library:cuLibraryLoadData \
         wrapper1:cuLibraryLoadData wrapper2:cuLibraryLoadData; do
    mode=${m%%:*} api=${m#*:}
    run "$work/$mode" "$H/test_kernels.fatbin" "$mode" "$work/$mode.txt"
    rc=$?
    [ $rc -eq 0 ] && grep -q "^  image 0: $api: fatbin: PTX compute_80 (zstd) of 1 PTX and 0 cubin entries; 7 kernels" "$work/$mode.txt" &&
        grep -q '^       arg0 -> buf0 +0 (4000 bytes = 1000 f32) written f32' "$work/$mode.txt" &&
        grep -q "^       arg2 = 1000  = the element count of the allocation of arg0's" "$work/$mode.txt"
    rc=$?
    [ $rc -eq 0 ] || { t_show "$work/$mode.out"; [ -f "$work/$mode.txt" ] && t_show "$work/$mode.txt"; }
    t_case $rc "$mode ($api): the fatbin's PTX read through the hook, hc_fill's argument written, its count named"
done
# a load the driver refuses (hostcuda runs no SASS: the cubin-only fatbin) is not kept
if [ -f "$H/test_kernels_sm80.fatbin" ]; then
    run "$work/sass" "$H/test_kernels_sm80.fatbin" data "$work/sass.txt"
    rc=$?
    [ $rc -eq 2 ] && grep -q '^images: 0 loaded' "$work/sass.txt"
    rc=$?
    [ $rc -eq 0 ] || { t_show "$work/sass.out"; t_show "$work/sass.txt"; }
    t_case $rc "a load the driver refused (SASS-only fatbin on hostcuda) is not kept: images: 0 loaded"
fi
if [ -f "$H/test_kernels.ptx" ]; then
    run "$work/ptx" "$H/test_kernels.ptx" data "$work/ptx.txt"
    grep -q '^  image 0: cuModuleLoadData: PTX text; 7 kernels' "$work/ptx.txt"
    rc=$?
    [ $rc -eq 0 ] || t_show "$work/ptx.txt"
    t_case $rc "control: PTX text is named PTX text"
fi
t_done
