#!/usr/bin/env bash
# Property: every kernel nvcc 13 makes from the corpus — llm.c train_gpt2_fp32.cu (compute_75, as
# nvcc's defaults embed it) and train_gpt2.cu (bf16, compute_80 and compute_90), NVIDIA's
# cuda-samples kernels, the project's own kernels — parses, decodes and passes the interpreter's
# load-time check (hc_ptx_check: every instruction known and implemented).
# Control: the same check refuses a kernel with a tensor-core instruction (exit 1, one line).
# Skips without nvcc or the third-party corpus (ACCELSHIM_THIRDPARTY, default ../shared/thirdparty).
. "$(dirname "$0")/../lib.sh"
CHECK=$T_HOSTCUDA_DIR/hc_ptx_check
t_need "$CHECK"
TP=${ACCELSHIM_THIRDPARTY:-$T_TOP/../shared/thirdparty}
[ -d "$TP/llm.c" ] && [ -d "$TP/cuda-samples" ] || t_skip "the third-party corpus is missing under $TP (set ACCELSHIM_THIRDPARTY)"
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$NVCC" ] || t_skip "nvcc not found at $NVCC"
t_tmp
L=$TP/llm.c
# llm.c's train_gpt2.cu under CUDA 13: cudaMemAdvise takes a cudaMemLocation (third-party README)
cat >"$T_TMP/compat.h" <<'H'
#include <cuda_runtime.h>
static inline cudaError_t cudaMemAdvise(const void *p, size_t n, cudaMemoryAdvise a, int dev)
{ cudaMemLocation l; l.type = cudaMemLocationTypeDevice; l.id = dev; return cudaMemAdvise(p, n, a, l); }
H
build() { # out.ptx nvcc-args...
    local out=$1; shift
    "$NVCC" -ptx -o "$T_TMP/$out" "$@" >"$T_TMP/$out.log" 2>&1 || { t_show "$T_TMP/$out.log"; t_fail "nvcc: $out"; }
}
build fp32_75.ptx --use_fast_math -std=c++17 -arch=compute_75 "$L/train_gpt2_fp32.cu"
for a in 80 90; do
    build bf16_$a.ptx --use_fast_math -std=c++17 -arch=compute_$a -DENABLE_BF16 -DNO_MULTI_GPU -DNO_USE_MPI \
        -include "$T_TMP/compat.h" -I"$L" "$L/train_gpt2.cu"
done
S=$TP/cuda-samples/Samples/0_Introduction
for f in "$S"/vectorAddDrv/*.cu "$S"/matrixMulDrv/*.cu "$S"/simpleDrvRuntime/*.cu "$S"/vectorAdd/*.cu "$S"/matrixMul/*.cu; do
    build "s_$(basename "$(dirname "$f")")_$(basename "$f" .cu).ptx" -arch=compute_75 -I"$TP/cuda-samples/Common" "$f"
done
own=()
for f in "$T_HOSTCUDA_DIR/test_kernels.ptx" "$T_HOSTCUDA_DIR/exec_kernels.ptx" "$T_HOSTCUDA_DIR/async_kernels.ptx" \
         "$T_HOSTCUDA_DIR/mma_kernels.ptx" "$T_BUILD"/tests/trainers/*.ptx \
         "$T_BUILD/collectives/cast_kernels.ptx" "$T_BUILD/sync/inspect_kernels.ptx"; do
    [ -f "$f" ] && own+=("$f")
done
"$CHECK" "$T_TMP"/*.ptx "${own[@]}" >"$T_TMP/check" 2>&1
rc=$?
sed 's/^/# /' "$T_TMP/check"
t_case $rc "every kernel of the corpus and of the project parses and passes the load-time check ($(grep -c ' kernels' "$T_TMP/check") files)"
cat >"$T_TMP/ctl.ptx" <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k_wmma(.param .u64 p)
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	wmma.load.a.sync.aligned.row.m8n8k128.global.b1 {%r1}, [%rd1];
	ret;
}
PTX
"$CHECK" "$T_TMP/ctl.ptx" >"$T_TMP/ctl" 2>&1
rc=$?
grep -q "^REFUSED .*ctl.ptx: kernel k_wmma: PTX line 9: instruction not supported: wmma.load" "$T_TMP/ctl"
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "control: a kernel with a wmma variant the interpreter lacks (single-bit) is refused, naming kernel, PTX line, instruction" || t_show "$T_TMP/ctl"
t_done
