#!/usr/bin/env bash
# test_reading_llmc.sh — explain's reading on llm.c, which hostcuda cannot run (a CUDA runtime
# program): reading_script replays a scripted step (tests/explain/llmc_{fp32,bf16}_step.txt: the
# kernels of one training step in train_gpt2*.cu's order, with each kernel's argument layout; the
# cuBLAS matmuls as kernels without PTX) over the facts of llm.c's REAL PTX, compiled now from
# ACCELSHIM_THIRDPARTY. The reading must name what the hand-written policies name:
#   fp32  examples/llmc-fp32.yaml  gradients at adamw_kernel2 arg 1 count_arg 4, f32
#   bf16  examples/llmc-bf16.yaml  gradients at global_norm_squared_kernel arg 1 count_arg 2, bf16:
#         the norm reads the gradients before the update (not at adamw_kernel3); master weights,
#         m and v are optimizer state; bf16 named from the kernels' signatures
# A program with every tensor in its own allocation (tests/explain/tensors_step.txt, over the
# trainer's kernels) gets one rule per kernel and argument, not one per buffer.
# A first step whose update differs (train_gpt2.cu fills its optimizer state there): the step is still
# read from the forward pass (the fewest values carried in), with the same reading.
# With an evaluation loop (forward only, more launches than training) before the steps, the step is
# still the training step. Negative controls: the evaluation loop alone gives no gradients rule;
# the bf16 reading against llmc-fp32.yaml fails; without the norm launch the
# bf16 sync point moves to adamw_kernel3; a kernel without PTX touching the gradients between
# their last known write and the norm makes the reading say "cannot tell".
# Skipped (one line) without the corpus or nvcc; under CI=true that skip is a failure.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
rs=$T_BUILD/tests/explain/reading_script
t_need "$rs" "$T_BUILD/tests/trainers/mlp_kernels.ptx"
third=${ACCELSHIM_THIRDPARTY:-$top/../shared/thirdparty}
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
if [ ! -f "$third/llm.c/train_gpt2.cu" ] || [ ! -x "$nvcc" ]; then
    [ "${CI:-}" = true ] && t_fail "the llm.c corpus ($third/llm.c) and nvcc are required under CI=true"
    t_skip "no llm.c corpus at $third/llm.c or no nvcc at $nvcc"
fi
python3 -c 'import yaml' 2>/dev/null || t_skip "python3 has no yaml module (python3-yaml)"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmp=$top/tests/explain/compare_rules.py
"$nvcc" -ptx -arch=compute_75 --use_fast_math -std=c++17 -o "$work/fp32.ptx" "$third/llm.c/train_gpt2_fp32.cu" \
    > "$work/nvcc.log" 2>&1 || { tail -5 "$work/nvcc.log"; t_fail "nvcc -ptx train_gpt2_fp32.cu"; }
"$nvcc" -ptx -arch=compute_80 --use_fast_math -std=c++17 -DENABLE_BF16 -DNO_MULTI_GPU -DNO_USE_MPI \
    -include "$top/tests/thirdparty/llmc_cuda13_compat.h" -I"$third/llm.c" -o "$work/bf16.ptx" "$third/llm.c/train_gpt2.cu" \
    > "$work/nvcc16.log" 2>&1 || { grep -i error "$work/nvcc16.log" | head -5; t_fail "nvcc -ptx train_gpt2.cu"; }

reading() { # NAME PTX SCRIPT
    "$rs" "$2" "$3" > "$work/$1.txt" 2>&1
    local rc=$?
    [ $rc -eq 0 ] || t_show "$work/$1.txt"
    t_case $rc "$1: the scripted step reads"
}
check() { # NAME POLICY
    local out rc
    out=$(python3 "$cmp" "$work/$1.txt" "$top/examples/$2" 2>&1); rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    [ $rc -eq 0 ] || t_show "$work/$1.txt"
    t_case $rc "$1: the reading names the kernel and buffer of examples/$2"
}
has() { # NAME PATTERN DESCRIPTION
    grep -Eq -- "$2" "$work/$1.txt"
    local rc=$?
    [ $rc -eq 0 ] || { echo "# no line matching '$2' in:"; t_show "$work/$1.txt"; }
    t_case $rc "$1: $3"
}

reading fp32 "$work/fp32.ptx" "$top/tests/explain/llmc_fp32_step.txt"
check fp32 llmc-fp32.yaml
has fp32 'sync point: #10 adamw_kernel2 \(arg1\).*nothing but the update' "fp32: no norm, the update is the sync point"
has fp32 '^  optimizer state: buf2 .*adamw_kernel2 \(arg2\)' "fp32: m is optimizer state"
reading bf16 "$work/bf16.ptx" "$top/tests/explain/llmc_bf16_step.txt"
check bf16 llmc-bf16.yaml
has bf16 'sync point: #12 [^(]*global_norm_squared_kernel.*it is not the update' "bf16: the gradients are read first by the norm, not by adamw_kernel3"
has bf16 '^  optimizer state: buf2 \(16384 bytes = 4096 f32\)' "bf16: the f32 master weights are optimizer state"
has bf16 '^  gradients: buf1 \(8192 bytes = 4096 bf16\)' "bf16: the gradients are 4096 bf16 (named from the signature)"

# the run as train_gpt2.cu makes it: a validation pass (the forward only) before step 0, whose
# update zeroes m and v and fills the master weights a tensor at a time (copy_and_cast_kernel
# before each adamw_kernel3), then two more steps and a last validation pass. The launches start
# repeating at step 0's last adamw_kernel3; read from there the step straddles two steps (the
# gradients, read first by adamw_kernel3, were taken for parameters, the parameters for
# gradients, the sync point "cannot tell", the broadcast put at adamw_kernel3 arg 2: what
# `explain --cpu` on the real train_gpt2cu said before the step was read from its forward pass).
src=$top/tests/explain/llmc_bf16_step.txt
{ sed -n '/^buf /p' "$src"
  sed -n '/^  launch encoder_forward_kernel3/,/^  opaque logits qkv params/p' "$src"
  sed -n '/^  launch encoder_forward_kernel3/,/^  launch global_sum_single_block_kernel/p' "$src"
  echo "  memset m"; echo "  memset v"
  awk '/^  launch adamw_kernel3/ { print "  launch copy_and_cast_kernel " $4 " " $3 " " $8 " " $8 " " $8; print }' "$src"
  sed -n '/^repeat /,$p' "$src" | sed 's/^repeat 4/repeat 2/'
  sed -n '/^  launch encoder_forward_kernel3/,/^  opaque logits qkv params/p' "$src"; } > "$work/first.script"
reading first "$work/bf16.ptx" "$work/first.script"
has first '^  #0 encoder_forward_kernel3' "first step differing in its update: the step is read from encoder_forward_kernel3, not from adamw_kernel3"
check first llmc-bf16.yaml
has first 'sync point: #12 [^(]*global_norm_squared_kernel.*it is not the update' "first step differing: the sync point is global_norm_squared_kernel"
has first '^  gradients: buf1 \(8192 bytes = 4096 bf16\)' "first step differing: the gradients are grads (adamw_kernel3's arg 2), not the parameters"
has first '^rule: parameters at: "encoder_forward_kernel3\*" buffer: \{ arg: 2, region: allocation \} dtype: bf16 broadcast: once' \
    "first step differing: the parameters are broadcast at encoder_forward_kernel3 arg 2"

# controls
out=$(python3 "$cmp" "$work/bf16.txt" "$top/examples/llmc-fp32.yaml" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# control: /'
[ $rc -ne 0 ]
t_case $? "control: the bf16 reading does not match examples/llmc-fp32.yaml"
grep -v 'global_norm_squared_kernel\|global_sum_single_block_kernel' "$top/tests/explain/llmc_bf16_step.txt" > "$work/nonorm.script"
reading nonorm "$work/bf16.ptx" "$work/nonorm.script"
has nonorm 'sync point: #12 [^(]*adamw_kernel3.*nothing but the update' "control: without the norm the sync point is adamw_kernel3"
sed 's|^  launch global_norm_squared_kernel|  opaque grads\n&|' "$top/tests/explain/llmc_bf16_step.txt" > "$work/opaque.script"
reading opaque "$work/bf16.ptx" "$work/opaque.script"
has opaque '^  cannot tell: #12 cublas_gemm .*touches buf1 after its last known write' "control: a kernel without PTX on the gradients before the norm: cannot tell"
# an evaluation loop (forward only, 30 batches: more launches than the 4 training steps) before
# training: the step is still the training step, whose repetition holds parameters and gradients
{ sed -n '/^buf /p' "$top/tests/explain/llmc_bf16_step.txt"
  echo "repeat 30"
  sed -n '/^  launch encoder_forward_kernel3/,/^  opaque logits qkv params/p' "$top/tests/explain/llmc_bf16_step.txt"
  echo "end"
  sed -n '/^repeat /,$p' "$top/tests/explain/llmc_bf16_step.txt"; } > "$work/eval.script"
reading eval "$work/bf16.ptx" "$work/eval.script"
has eval '^step: 17 launches, repeated 4 times' "with an evaluation loop first (120 launches) the step is still the 17-launch training step"
has eval 'sync point: #12 [^(]*global_norm_squared_kernel' "... and its sync point global_norm_squared_kernel"
sed -n '1,/^end$/p' "$work/eval.script" > "$work/evalonly.script"
reading evalonly "$work/bf16.ptx" "$work/evalonly.script"
grep -q '^rule: gradients' "$work/evalonly.txt"
rc=$?
[ $rc -ne 0 ] || t_show "$work/evalonly.txt"
t_case $((rc == 0)) "control: the evaluation loop alone suggests no gradients rule"
# every tensor its own allocation (the trainer's kernels, tests/explain/tensors_step.txt): four
# parameter and four gradient buffers, one gradients rule (sgd_update arg 1, count arg 2: each
# launch's own n) and one parameters rule per argument of linear_forward (W at arg 1, b at arg 2)
reading tensors "$T_BUILD/tests/trainers/mlp_kernels.ptx" "$top/tests/explain/tensors_step.txt"
g=$(grep -c '^rule: gradients at: "sgd_update" buffer: { arg: 1, count_arg: 2 } dtype: f32' "$work/tensors.txt")
pr=$(grep -c '^rule: parameters at: "linear_forward\*" buffer: { arg: [12], region: allocation }' "$work/tensors.txt")
all=$(grep -c '^rule:' "$work/tensors.txt")
np=$(grep -c '^  parameters: buf' "$work/tensors.txt") ng=$(grep -c '^  gradients: buf' "$work/tensors.txt")
[ "$g" -eq 1 ] && [ "$pr" -eq 2 ] && [ "$all" -eq 3 ] && [ "$np" -eq 4 ] && [ "$ng" -eq 4 ]
rc=$?
[ $rc -eq 0 ] || { echo "# gradients rules $g (want 1), parameters rules $pr (want 2), rules $all (want 3), parameters $np, gradients $ng (want 4, 4)"; t_show "$work/tensors.txt"; }
t_case $rc "a tensor per allocation: 4 parameters, 4 gradients, one gradients rule and one parameters rule per argument"
t_done
