#!/usr/bin/env bash
# Property: llm.c's matmul_forward_kernel4 (train_gpt2_fp32.cu, compiled by nvcc to compute_75
# PTX as nvcc's defaults embed it, --use_fast_math as llm.c builds) runs on hostcuda's interpreter
# with the product a host computes (within 1e-5 relative), and the overrun llm.c's README warns
# of — B*T not a multiple of 128, so the kernel writes whole 128-row tiles past `out` — fails the
# launch with CUDA_ERROR_ILLEGAL_ADDRESS and one hostcuda: line naming the kernel, its PTX line and
# the allocation the store left, where a GPU would silently corrupt memory.
# Control: the same sizes rounded up to 128 rows do not fault.
# Skips without nvcc or the third-party corpus (ACCELSHIM_THIRDPARTY, default ../shared/thirdparty).
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/hc_exec_matmul
t_need "$RUN" "$H/libcuda.so.1"
TP=${ACCELSHIM_THIRDPARTY:-$T_TOP/../shared/thirdparty}
SRC=$TP/llm.c/train_gpt2_fp32.cu
[ -f "$SRC" ] || t_skip "the third-party corpus is missing: $SRC (set ACCELSHIM_THIRDPARTY)"
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$NVCC" ] || t_skip "nvcc not found at $NVCC"
t_tmp
"$NVCC" -ptx --use_fast_math -std=c++17 -arch=compute_75 -o "$T_TMP/llmc.ptx" "$SRC" >"$T_TMP/nvcc.log" 2>&1 ||
    { t_show "$T_TMP/nvcc.log"; t_fail "nvcc could not compile $SRC"; }
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC

timeout 300 "$RUN" "$T_TMP/llmc.ptx" 256 96 256 >"$T_TMP/ok" 2>&1
t_case $? "matmul_forward_kernel4 256x96 @ 256x96: the host's product" || t_show "$T_TMP/ok"

timeout 300 "$RUN" "$T_TMP/llmc.ptx" 128 64 128 >"$T_TMP/ctl" 2>&1
t_case $? "control: B*T = 128 (a whole tile) runs clean" || t_show "$T_TMP/ctl"

timeout 300 "$RUN" "$T_TMP/llmc.ptx" 100 64 128 >"$T_TMP/over" 2>&1
rc=$?
grep -q "^launch: CUDA_ERROR_ILLEGAL_ADDRESS$" "$T_TMP/over" &&
    grep -qE "^hostcuda: illegal address in _Z22matmul_forward_kernel4PfPKfS1_S1_ii \(PTX line [0-9]+: st\.global\.v4\.f32 .*\) block \([0-9]+,[0-9]+,0\) thread \([0-9]+,[0-9]+,0\): st 16 bytes at 0x[0-9a-f]+; nearest allocation 0x[0-9a-f]+\+51200, [0-9]+ bytes after it$" "$T_TMP/over"
t_case $(( rc == 3 && $? == 0 ? 0 : 1 )) "B*T = 100: the tile overrun is CUDA_ERROR_ILLEGAL_ADDRESS naming kernel, PTX line, allocation" ||
    t_show "$T_TMP/over"
t_done
