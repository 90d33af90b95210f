#!/usr/bin/env bash
# test_ptx_facts.sh — kernel facts from PTX (shim/ptx/ash_ptx_facts.h), through ptx_facts_dump:
#   - the bundled trainers' kernels (build/tests/trainers/*.ptx): e.g. sgd_update reads its
#     grads and writes its params, adam_update writes params/m/v, counts are values
#   - llm.c's fp32 trainer, compiled at test time from ACCELSHIM_THIRDPARTY (never copied):
#     adamw_kernel2 writes params/m/v and reads grads; its size_t count is not a pointer;
#     encoder_backward accumulates with atomics; and its bf16 trainer (train_gpt2.cu, with
#     tests/thirdparty/llmc_cuda13_compat.h forced in for CUDA 13's cudaMemAdvise): adamw_kernel3 writes
#     params/master/m/v and reads grads, global_norm_squared_kernel reads grads. Skipped (one line)
#     if the corpus or nvcc is absent; under CI=true that skip is a failure
#   - tests/explain/facts_cases.ptx: an index is not a pointer, a write through a .func, a spill,
#     an atomic-only access, tensor-core loads and stores (wmma)
#   - tests/hostcuda/async_kernels.cu (compute_90 PTX, built by make): pointers read only by
#     cp.async / cp.async.bulk, and one written only by a bulk copy out of shared memory
# Negative controls: a copy of mlp's PTX whose sgd_update stores are removed no longer reports
# params written (the expectation that passed fails, both sides printed); a copy of facts_cases
# whose index scaling (shl) becomes a mov reports the index as a pointer.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dump="$top/build/tests/explain/ptx_facts_dump"
tdir="$top/build/tests/trainers"
third=${ACCELSHIM_THIRDPARTY:-$top/../shared/thirdparty}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -x "$dump" ] || { echo "FAIL: $dump not built (make all)"; exit 1; }

# expect_in OUT KERNEL PI WANT: the line of parameter PI of KERNEL (name or its mangled form
# containing it) has fields 4.. equal to WANT ("ptr R W - f32"); 0 if so, else prints both sides
check() {
    local out=$1 k=$2 p=$3 want=$4 got
    got=$(awk -v k="$k" -v p="p$p" '($1 == k || $1 ~ ("^_Z[0-9]+" k "[A-Z]")) && $2 == p {
              $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print; exit }' "$out")
    [ "$got" = "$want" ] && return 0
    echo "  $k p$p: want '$want', got '${got:-<no such parameter>}'"
    return 1
}
expect() { check "$@" || fail "$(basename "$1") $2 p$3"; }

# --- the bundled trainers ---
"$dump" "$tdir/mlp_kernels.ptx" > "$work/mlp.txt" || fail "dump of mlp_kernels.ptx"
expect "$work/mlp.txt" sgd_update 0 "ptr R W - f32"       # params
expect "$work/mlp.txt" sgd_update 1 "ptr R - - f32"       # grads
expect "$work/mlp.txt" sgd_update 2 "val - - - -"         # n
expect "$work/mlp.txt" sgd_update 4 "ptr R - - f32"       # the clip scale
expect "$work/mlp.txt" adam_update 0 "ptr R W - f32"
expect "$work/mlp.txt" adam_update 1 "ptr R - - f32"
expect "$work/mlp.txt" adam_update 2 "ptr R W - f32"
expect "$work/mlp.txt" adam_update 3 "ptr R W - f32"
expect "$work/mlp.txt" linear_forward 0 "ptr - W - f32"
expect "$work/mlp.txt" linear_forward 2 "ptr R - - f32"
expect "$work/mlp.txt" linear_forward 4 "val - - - -"
expect "$work/mlp.txt" grad_norm_squared 1 "ptr R - - f32"
expect "$work/mlp.txt" grad_norm_squared 0 "ptr - W - f32"
"$dump" "$tdir/layers_kernels.ptx" > "$work/layers.txt" || fail "dump of layers_kernels.ptx"
expect "$work/layers.txt" sgd_apply 0 "ptr R W - f32"
expect "$work/layers.txt" sgd_apply 1 "ptr R - - f32"
expect "$work/layers.txt" sgd_apply 2 "val - - - -"       # a size_t count
expect "$work/layers.txt" layer_forward 1 "ptr R - - f32"

# --- hand-written cases ---
"$dump" --all "$top/tests/explain/facts_cases.ptx" > "$work/cases.txt" || fail "dump of facts_cases.ptx"
expect "$work/cases.txt" idx_only 0 "val - - - -"
expect "$work/cases.txt" idx_only 1 "ptr R - - b16"
expect "$work/cases.txt" store_to 0 "ptr - W - f32"
expect "$work/cases.txt" via_func 0 "ptr - W - f32"
expect "$work/cases.txt" spilled 0 "ptr - W - f32"
expect "$work/cases.txt" atomic_only 0 "ptr - W A f32"
expect "$work/cases.txt" atomic_only 1 "val - - - -"
expect "$work/cases.txt" wmma_tile 0 "ptr R - - f16"   # wmma.load.a
expect "$work/cases.txt" wmma_tile 1 "ptr R - - f16"   # wmma.load.b
expect "$work/cases.txt" wmma_tile 2 "ptr R W - f32"   # wmma.load.c, wmma.store.d

# --- negative controls ---
sed '/\.entry sgd_update/,/^}/ s/^[[:space:]]*st\.global\.f32.*$//' "$tdir/mlp_kernels.ptx" > "$work/mlp_nost.ptx"
"$dump" "$work/mlp_nost.ptx" > "$work/mlp_nost.txt" || fail "dump of the mutated mlp PTX"
echo "control: sgd_update without its stores (a mismatch is expected below)"
if check "$work/mlp_nost.txt" sgd_update 0 "ptr R W - f32"; then
    fail "control: sgd_update with its stores removed still reports params written"
fi
sed 's/shl\.b64[[:space:]]*%rd4, %rd1, 1;/mov.b64 %rd4, %rd1;/' "$top/tests/explain/facts_cases.ptx" > "$work/cases_mov.ptx"
"$dump" --all "$work/cases_mov.ptx" > "$work/cases_mov.txt" || fail "dump of the mutated cases"
echo "control: the index added unscaled (a mismatch is expected below)"
if check "$work/cases_mov.txt" idx_only 0 "val - - - -"; then
    fail "control: an unscaled offset added to an address is still reported as a value"
fi

# --- llm.c fp32, compiled now ---
src="$third/llm.c/train_gpt2_fp32.cu"
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
if [ ! -f "$src" ] || ! [ -x "$nvcc" ]; then
    echo "SKIP llm.c part: no $src or no nvcc at $nvcc"
    [ "${CI:-}" = true ] && fail "the llm.c corpus is required under CI=true"
else
    if ! "$nvcc" -ptx -arch=compute_75 --use_fast_math -std=c++17 -o "$work/fp32.ptx" "$src" \
            > "$work/nvcc.log" 2>&1; then
        tail -5 "$work/nvcc.log"; fail "nvcc -ptx of $src"
    else
        "$dump" "$work/fp32.ptx" > "$work/fp32.txt" || fail "dump of llm.c fp32 PTX"
        echo "llm.c fp32: $(grep -c '' "$work/fp32.txt") parameters of $(cut -d' ' -f1 "$work/fp32.txt" | sort -u | wc -l) kernels"
        expect "$work/fp32.txt" adamw_kernel2 0 "ptr R W - f32"   # params
        expect "$work/fp32.txt" adamw_kernel2 1 "ptr R - - f32"   # grads
        expect "$work/fp32.txt" adamw_kernel2 2 "ptr R W - f32"   # m
        expect "$work/fp32.txt" adamw_kernel2 3 "ptr R W - f32"   # v
        expect "$work/fp32.txt" adamw_kernel2 4 "val - - - -"     # num_parameters (size_t)
        expect "$work/fp32.txt" encoder_backward_kernel 0 "ptr - W A f32"   # dwte
        expect "$work/fp32.txt" encoder_backward_kernel 3 "ptr R - - u32"   # the token ids
        expect "$work/fp32.txt" residual_forward_kernel 0 "ptr - W - f32"
    fi
fi

# --- llm.c bf16 (train_gpt2.cu; CUDA 13 needs tests/thirdparty/llmc_cuda13_compat.h forced in), compiled now ---
src16="$third/llm.c/train_gpt2.cu"
if [ ! -f "$src16" ] || ! [ -x "$nvcc" ]; then
    echo "SKIP llm.c bf16 part: no $src16 or no nvcc at $nvcc"
    [ "${CI:-}" = true ] && fail "the llm.c corpus is required under CI=true"
elif ! "$nvcc" -ptx -arch=compute_80 --use_fast_math -std=c++17 -DENABLE_BF16 -DNO_MULTI_GPU -DNO_USE_MPI \
        -include "$top/tests/thirdparty/llmc_cuda13_compat.h" -I"$third/llm.c" -o "$work/bf16.ptx" "$src16" > "$work/nvcc16.log" 2>&1; then
    grep -i error "$work/nvcc16.log" | head -5; fail "nvcc -ptx of $src16"
else
    "$dump" "$work/bf16.ptx" > "$work/bf16.txt" || fail "dump of llm.c bf16 PTX"
    echo "llm.c bf16: $(grep -c '' "$work/bf16.txt") parameters of $(cut -d' ' -f1 "$work/bf16.txt" | sort -u | wc -l) kernels"
    # adamw_kernel3<bf16, bf16>(params, master_params, grads, m, v, num_parameters, ...): bf16
    # moves through 16-bit integer loads and stores (u16) in the PTX
    k=adamw_kernel3
    expect "$work/bf16.txt" $k 0 "ptr R W - u16"    # params (bf16)
    expect "$work/bf16.txt" $k 1 "ptr R W - f32"    # master params
    expect "$work/bf16.txt" $k 2 "ptr R - - u16"    # grads (bf16)
    expect "$work/bf16.txt" $k 3 "ptr R W - f32"    # m
    expect "$work/bf16.txt" $k 4 "ptr R W - f32"    # v
    expect "$work/bf16.txt" $k 5 "val - - - -"      # num_parameters
    expect "$work/bf16.txt" global_norm_squared_kernel 1 "ptr R - - u16"   # the grads it reads
    expect "$work/bf16.txt" global_norm_squared_kernel 2 "val - - - -"
fi

# --- asynchronous copies (tests/hostcuda/async_kernels.cu for compute_90): cp.async reads its
# global source, cp.async.bulk into shared memory reads, a bulk group's copy out writes ---
ak="$top/build/tests/hostcuda/async_kernels_90.ptx"
if [ ! -f "$ak" ]; then
    fail "$ak not built (make all)"
else
    "$dump" "$ak" > "$work/async.txt" || fail "dump of async_kernels_90.ptx"
    expect "$work/async.txt" as_gemm 0 "ptr R - - -"      # A, read only by cp.async
    expect "$work/async.txt" as_gemm 1 "ptr R - - -"      # B
    expect "$work/async.txt" as_gemm 2 "ptr - W - f32"    # C
    expect "$work/async.txt" as_reduce 0 "ptr R - - -"    # in, 16-byte cp.async.cg
    expect "$work/async.txt" as_bulk 0 "ptr R - - -"      # in, cp.async.bulk into shared memory
    expect "$work/async.txt" as_bulk 1 "ptr R W - u32"    # out: the bulk group's copy writes it
fi

[ "$fails" -eq 0 ] && echo "PASS test_ptx_facts" || echo "$fails failure(s)"
[ "$fails" -eq 0 ]
