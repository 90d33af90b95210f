#!/usr/bin/env bash
# Property: an nvcc -cudart shared program's CUDA arrays, texture and surface objects (runtime and
# Driver API) work on hostcudart + hostcuda: rt_tex.cu's samples equal its host reference of the
# programming guide's formulas (point, linear with 9-bit weights, every address mode, normalized
# coordinates, unorm/snorm reads, tld4, 3D, layered, linear and pitch2D resources), surface writes
# read back, txq/suq answer the sizes, bad descriptors get their errors; on 1 and 3 host threads.
# Negative control (in rt_tex): a reference with exact weights must differ for linear filtering.
# Fault controls: an array handle used as a pointer (ld.global), a texture handle that is no
# object, and a .trap surface read past the edge must each fail the launch with
# cudaErrorIllegalAddress and one hostcuda: line naming the kernel, the PTX line and the handle.
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests
D=$B/hostcudart
t_need "$D/rt_tex" "$D/libcudart.so.13" "$B/hostcuda/libcuda.so.1"
export LD_LIBRARY_PATH=$D:$B/hostcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC HOSTCUDA_SMS RT_TEX_CASE
t_tmp
for th in 1 3; do
    HOSTCUDA_THREADS=$th HOSTCUDA_KERNEL_TIMEOUT_S=60 timeout 120 "$D/rt_tex" >"$T_TMP/ok" 2>&1
    rc=$?
    [ "$(grep -c '^ok ' "$T_TMP/ok")" -ge 150 ] && ! grep -q '^FAIL' "$T_TMP/ok" && grep -q '^PASS: 0 failed$' "$T_TMP/ok" &&
        grep -q '^negative control: exact weights: [1-9][0-9]* linear samples differ' "$T_TMP/ok"
    t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "arrays, textures, surfaces vs the documented formulas (HOSTCUDA_THREADS=$th)" ||
        t_show "$T_TMP/ok"
done
check_fault() {   # case, the hostcuda: line's pattern
    RT_TEX_CASE=$1 HOSTCUDA_KERNEL_TIMEOUT_S=60 timeout 60 "$D/rt_tex" >"$T_TMP/$1" 2>&1
    local rc=$?
    grep -q "^launch ($1): cudaErrorIllegalAddress\$" "$T_TMP/$1" && grep -q "$2" "$T_TMP/$1"
    t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "fault: $1 fails its launch, named" || t_show "$T_TMP/$1"
}
check_fault ldarray '^hostcuda: illegal address in _Z7k_ldptrPKfPf (PTX line [0-9]*: ld.global.f32 '
check_fault badhandle '^hostcuda: tex in _Z10k_sample2d.* (PTX line [0-9]*: tex.2d.v4.f32.f32 .*not a live texture object (handle 0x5eed)$'
check_fault trap '^hostcuda: suld in _Z11k_surf_trapyi (PTX line [0-9]*: suld.b.2d.b32.trap .*out of range: byte x 40, y 0'
t_done
