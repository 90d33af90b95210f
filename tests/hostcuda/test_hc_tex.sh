#!/usr/bin/env bash
# Property: CUDA arrays, texture and surface objects work through the Driver API alone
# (test_hc_tex on tex_kernels.ptx: a layered 1D texture with linear filtering and 9-bit weights,
# a signed 32-bit integer texture with border and clamp addressing, a 16-bit unorm texture, a 1D
# byte surface with .zero reads and .clamp stores, txq.array_size), on 1 and 3 host threads.
# Control: a store to a handle that is no surface object fails the launch with
# CUDA_ERROR_ILLEGAL_ADDRESS and one hostcuda: line naming the kernel, the PTX line and the handle, and
# so does a clamped surface read wider than the surface's row;
# tex forms the interpreter does not run (tex_refuse.ptx) are refused at load with their line.
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/test_hc_tex
PTX=$H/tex_kernels.ptx
t_need "$RUN" "$PTX" "$H/libcuda.so.1" "$H/hc_ptx_check"
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC
t_tmp
for th in 1 3; do
    HOSTCUDA_THREADS=$th timeout 120 "$RUN" "$PTX" >"$T_TMP/ok$th" 2>&1
    rc=$?
    grep -q '^PASS: 0 failed$' "$T_TMP/ok$th" && ! grep -q FAIL "$T_TMP/ok$th"
    t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "Driver API arrays, textures, surfaces (HOSTCUDA_THREADS=$th)" ||
        t_show "$T_TMP/ok$th"
done
timeout 60 "$RUN" "$PTX" badsurf >"$T_TMP/bad" 2>&1
rc=$?
grep -q '^badsurf: CUDA_ERROR_ILLEGAL_ADDRESS$' "$T_TMP/bad" &&
    [ "$(grep -c '^hostcuda: sust in tx_badsurf (PTX line [0-9]*: sust.b.1d.b32.trap .*not a live surface object (handle 0x7777)$' "$T_TMP/bad")" -eq 1 ]
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "control: a bad surface handle fails the launch, named" || t_show "$T_TMP/bad"
timeout 60 "$RUN" "$PTX" widesurf >"$T_TMP/wide" 2>&1
rc=$?
grep -q '^widesurf: CUDA_ERROR_ILLEGAL_ADDRESS$' "$T_TMP/wide" &&
    grep -q '^hostcuda: suld in tx_widesurf (PTX line [0-9]*: suld.b.1d.v4.b32.clamp .*: suld of 16 bytes on a surface whose rows are 1 bytes' "$T_TMP/wide"
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "a clamped read wider than the surface's row fails the launch (reads nothing outside)" ||
    t_show "$T_TMP/wide"
# forms it does not run are refused at load, named (not misread): independent sampler mode, offsets
"$H/hc_ptx_check" "$(dirname "$0")/tex_refuse.ptx" >"$T_TMP/refuse" 2>&1
grep -q 'REFUSED .*kernel k_samp: PTX line 13: instruction not supported: tex.2d.v4.f32.f32 .*\[%rd1, %rd2, ' "$T_TMP/refuse" &&
    grep -q 'REFUSED .*kernel k_off: PTX line 24: tex form not supported .*no offsets' "$T_TMP/refuse" &&
    ! grep -q 'k_imm' "$T_TMP/refuse" && grep -q ': 3 kernels, .* 2 refused$' "$T_TMP/refuse"
t_case $? "sampler-mode and offset tex forms are refused at load, naming the line; immediate coordinates load" ||
    t_show "$T_TMP/refuse"
t_done
