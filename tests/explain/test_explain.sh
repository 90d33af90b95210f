#!/usr/bin/env bash
# test_explain.sh — `accelerate-run explain --cpu` on the bundled trainers (hostcuda): the step is
# found and its reading names the same kernels and buffers as the hand-written example policies
# (tests/explain/compare_rules.py decides):
#   mlp (sgd, fused update)         examples/mlp.yaml       gradients at sgd_update, params at linear_forward
#   mlp --clip                      examples/mlp-clip.yaml  gradients at grad_norm_squared (before the update)
#   mlp --optimizer adam            examples/mlp.yaml       adam_update; m and v are optimizer state
#   mlp --update per-tensor         examples/mlp.yaml       4 sgd_update launches, each a slice (count_arg 2)
#   layers                          examples/layers.yaml    gradients at sgd_apply
# plus what the reading must say: the clip scale "cannot tell" (not sized like the parameters),
# gradients reset each step by the memset, the norm read before the update.
# Negative controls: the --clip explanation compared with examples/mlp.yaml (made for no clip)
# fails; one step (nothing repeats) gives "step: cannot tell" and no rule. Bad input (no program,
# a missing one, an existing ACCELSHIM_EXPLAIN file, a program that fails) is named, non-zero.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
t_need "$T_SHIM" "$T_MLP" "$T_BUILD/tests/trainers/layers" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_need_cmd python3
python3 -c 'import yaml' 2>/dev/null || t_skip "python3 has no yaml module (python3-yaml)"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmp=$top/tests/explain/compare_rules.py
export HOSTCUDA_KERNEL_LIBS=$T_BUILD/tests/trainers/liblayers_kernels_host.so

explain() { # NAME ARGS...: the explanation of one run into $work/NAME.txt
    local name=$1; shift
    "$T_LAUNCHER" explain --cpu -- "$@" > "$work/$name.txt" 2>&1
}
check() { # NAME POLICY: compare; the case's verdict
    local out
    out=$(python3 "$cmp" "$work/$1.txt" "$top/examples/$2" 2>&1)
    local rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    [ $rc -eq 0 ] || { echo "# --- the explanation:"; t_show "$work/$1.txt"; }
    t_case $rc "$1: the reading names the kernels and buffers of examples/$2"
}
has() { # NAME PATTERN DESCRIPTION
    grep -Eq -- "$2" "$work/$1.txt"
    local rc=$?
    [ $rc -eq 0 ] || { echo "# no line matching '$2' in:"; t_show "$work/$1.txt"; }
    t_case $rc "$1: $3"
}

explain mlp "$T_MLP" --steps 4
check mlp mlp.yaml
has mlp '^step: 9 launches, repeated 4 times' "the step: 9 launches (memset, 2 forward, loss, grad, 3 backward, update), 4 repetitions"
has mlp 'gradients: buf[0-9]+ \(2704 bytes = 676 f32\).*reset each step \(by #0 memset' "gradients: 676 f32, reset each step by the memset"
has mlp 'sync point: #8 sgd_update \(arg1\).*nothing but the update reads them first' "sync point: the update, nothing reads the gradients first"

explain mlp-clip "$T_MLP" --steps 4 --clip 1.0
check mlp-clip mlp-clip.yaml
has mlp-clip "sync point: #8 grad_norm_squared \(arg1\).*it is not the update" "with --clip the norm reads the gradients first, not the update"
has mlp-clip '^  cannot tell: buf[0-9]+ \(4 bytes = 1 f32\) is written in the step by #9 clip_scale' "the clip scale: cannot tell, with the evidence"

explain mlp-adam "$T_MLP" --steps 4 --optimizer adam
check mlp-adam mlp-adam.yaml
[ "$(grep -c '^  optimizer state: buf' "$work/mlp-adam.txt")" -eq 2 ]
t_case $? "mlp-adam: two optimizer-state buffers (m, v), read and written only by adam_update"

explain mlp-tensor "$T_MLP" --steps 4 --update per-tensor
check mlp-tensor mlp.yaml
has mlp-tensor 'note: 4 launches of sgd_update read buf[0-9]+, each its own part' "per tensor: 4 update launches, each a slice"

explain layers "$T_BUILD/tests/trainers/layers" --steps 4 --layers 3 --size 1024
check layers layers.yaml
has layers 'sync point: #7 sgd_apply \(arg1\)' "layers: the sync point is sgd_apply"

# negative controls
out=$(python3 "$cmp" "$work/mlp-clip.txt" "$top/examples/mlp.yaml" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/# control: /'
[ $rc -ne 0 ]
t_case $? "control: the --clip reading does not match examples/mlp.yaml (made for no clip)"
explain one-step "$T_MLP" --steps 1
grep -q '^step: cannot tell' "$work/one-step.txt" && ! grep -q '^rule:' "$work/one-step.txt"
rc=$?
[ $rc -eq 0 ] || t_show "$work/one-step.txt"
t_case $rc "control: one step, nothing repeats: 'step: cannot tell' and no rule"
# bad input: named, non-zero, no crash
"$T_LAUNCHER" explain --cpu > "$work/noprog.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'explain: no program given' "$work/noprog.txt"
t_case $? "no program: exit 2, 'explain: no program given'"
"$T_LAUNCHER" explain --cpu -- "$work/nonexistent" > "$work/badprog.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "explain: '$work/nonexistent' is not an executable program" "$work/badprog.txt"
t_case $? "a program that does not exist: exit 2, named"
echo keep > "$work/exists.txt"
LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$T_KLIBS LD_PRELOAD=$T_SHIM ACCELSHIM_EXPLAIN=$work/exists.txt \
    "$T_MLP" --steps 2 > "$work/exists.out" 2> "$work/exists.err"
rc=$?
[ $rc -eq 0 ] && [ "$(cat "$work/exists.txt")" = keep ] && grep -q "explain: cannot create $work/exists.txt" "$work/exists.err"
rc=$?
[ $rc -eq 0 ] || t_show "$work/exists.err"
t_case $rc "ACCELSHIM_EXPLAIN naming an existing file: kept, the error names it, the program's own status"
"$T_LAUNCHER" explain --cpu -- "$T_MLP" --steps 2 --no-such-option > "$work/progfail.txt" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'explain: ' "$work/progfail.txt"
rc=$?
[ $rc -eq 0 ] || t_show "$work/progfail.txt"
t_case $rc "a program that fails: explain says so, non-zero"
t_done
