#!/usr/bin/env bash
# test_step_phase.sh — the step is read from its forward pass even when the launch sequence
# starts repeating elsewhere. A program whose first step differs in its update (llm.c zeroes its
# optimizer state inside its first update) repeats from that update on; read from there, one
# repetition straddles two steps: the gradients (read first, by the update) look like parameters,
# no gradients are found, and the broadcast lands on the update. reading_script replays such a
# run over the bundled trainer's kernels (tests/explain/tensors_step.txt, its first step with an
# extra memset before the update): the step must begin at the memsets of the gradients, and the
# reading must be tensors_step.txt's own (4 parameters, 4 gradients, gradients at sgd_update arg
# 1 count arg 2, parameters at linear_forward). Control: the same steps without the differing
# first step read the same (the step of an evenly repeating run is not moved).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
rs=$T_BUILD/tests/explain/reading_script
ptx=$T_BUILD/tests/trainers/mlp_kernels.ptx
t_need "$rs" "$ptx"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
src=$top/tests/explain/tensors_step.txt
{ sed -n '/^buf /p' "$src"; echo "buf m 16"
  sed -n '/^  memset dW1/,/^  launch linear_backward_weight dW1/p' "$src"
  echo "  memset m"                       # the first update only: its state is zeroed there
  sed -n '/^  launch sgd_update/p' "$src"
  sed -n '/^repeat /,$p' "$src" | sed 's/^repeat 4/repeat 3/'; } > "$work/first.script"
"$rs" "$ptx" "$work/first.script" > "$work/first.txt" 2>&1
t_case $? "the scripted run with a differing first step reads"
"$rs" "$ptx" "$src" > "$work/even.txt" 2>&1
t_case $? "the evenly repeating run reads"
summary() { # FILE: the step's first launch, the roles and the rules
    sed -n '/^  #0 /p; /^  parameters: buf/p; /^  gradients: buf/p; /^rule:/p' "$1" | sed 's/ (after their.*//; s/   # evidence.*//'
}
grep -q '^step: 15 launches, repeated 3 times from launch 16 ' "$work/first.txt" && grep -q '^  #0 memset' "$work/first.txt"
rc=$?
[ $rc -eq 0 ] || { grep '^step:\|^  #[0-9]* ' "$work/first.txt" | sed 's/^/# /'; }
t_case $rc "the step begins at the gradients' memsets (launch 16), not at the first step's update (launch 12)"
np=$(grep -c '^  parameters: buf[0-3] ' "$work/first.txt") ng=$(grep -c '^  gradients: buf[4-7] ' "$work/first.txt")
g=$(grep -c '^rule: gradients at: "sgd_update" buffer: { arg: 1, count_arg: 2 } dtype: f32' "$work/first.txt")
pr=$(grep -c '^rule: parameters at: "linear_forward\*" buffer: { arg: [12], region: allocation }' "$work/first.txt")
[ "$np" -eq 4 ] && [ "$ng" -eq 4 ] && [ "$g" -eq 1 ] && [ "$pr" -eq 2 ]
rc=$?
[ $rc -eq 0 ] || { echo "# parameters $np gradients $ng (want 4, 4), gradients rules $g (want 1), parameters rules $pr (want 2)"; t_show "$work/first.txt"; }
t_case $rc "its reading: W and b are the parameters, dW and db the gradients, synchronised at sgd_update"
diff <(summary "$work/even.txt") <(summary "$work/first.txt") > "$work/diff.txt"
rc=$?
[ $rc -eq 0 ] || t_show "$work/diff.txt"
t_case $rc "control: the evenly repeating run's step and reading are the same"
t_done
