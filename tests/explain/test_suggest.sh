#!/usr/bin/env bash
# test_suggest.sh — `accelerate-run suggest --cpu` writes a policy from one run's reading, checked
# by accelshim-policy, every rule commented with its evidence, and with --batch-arg proves it at
# once with `accelerate-run test` (2 ranks x batch 4 against 1 rank x batch 8, every sync point's
# reduced buffers compared): OK for mlp (sgd), mlp --clip 0.01 (clipping active: the gradients
# must be averaged before the norm), mlp --optimizer adam, mlp --update per-tensor, and layers.
# With --init per-process (ranks seeded apart) the suggested broadcast makes the bundled test OK.
# Negative controls: the mlp suggestion without its parameters rule differs under --init
# per-process; examples/mlp.yaml (the update as sync point) on mlp --clip 0.01 DIFFERS under
# the same proof; one step (nothing repeats) writes no policy and fails; an existing -o FILE is
# kept without --force.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
t_need "$T_SHIM" "$T_MLP" "$T_BUILD/tests/trainers/layers" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_BUILD/bin/accelshim-compare"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export HOSTCUDA_KERNEL_LIBS=$T_BUILD/tests/trainers/liblayers_kernels_host.so
shard=(--shard-rank '{rank}' --shard-count '{world_size}')

suggest_proves() { # NAME PROGRAM ARGS...: suggest -o NAME.yaml with the proof; the case's verdict
    local name=$1; shift
    "$T_LAUNCHER" suggest --cpu -o "$work/$name.yaml" --batch 4 --batch-arg '--batch {batch}' -- "$@" "${shard[@]}" \
        > "$work/$name.log" 2>&1
    local rc=$?
    grep -q '^test: OK: 2 ranks x batch 4 == 1 rank x batch 8' "$work/$name.log" || rc=1
    [ $rc -eq 0 ] || { t_show "$work/$name.log"; [ -f "$work/$name.yaml" ] && t_show "$work/$name.yaml"; }
    t_case $rc "$name: the suggested policy checks and passes accelerate-run test"
    # every rule has its evidence comment right above it
    local bad
    bad=$(awk '/^  - at:/ && prev !~ /^  # evidence: / { print } { prev = $0 }' "$work/$name.yaml" 2>/dev/null)
    [ -f "$work/$name.yaml" ] && [ -z "$bad" ]
    t_case $? "$name: every rule is commented with its evidence"
}

suggest_proves mlp "$T_MLP" --steps 6
grep -q 'at: "sgd_update"' "$work/mlp.yaml" && grep -q 'broadcast: once' "$work/mlp.yaml"
t_case $? "mlp: gradients at sgd_update, parameters broadcast once"
# the broadcast: ranks seeded apart (--init per-process) end equal to 1 rank started from rank 0's
# weights only because of the suggested parameters rule; without it they differ
"$T_LAUNCHER" test --cpu --init per-process --steps 6 --policy "$work/mlp.yaml" > "$work/init.log" 2>&1
rc=$?
[ $rc -eq 0 ] || t_show "$work/init.log"
t_case $rc "mlp: with --init per-process the suggested broadcast makes the ranks start alike (accelerate-run test OK)"
sed '/^parameters:/,$d' "$work/mlp.yaml" > "$work/mlp-nobcast.yaml"
"$T_LAUNCHER" test --cpu --init per-process --steps 6 --policy "$work/mlp-nobcast.yaml" > "$work/init-control.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'DIFFERS' "$work/init-control.log"
rc=$?
[ $rc -eq 0 ] || t_show "$work/init-control.log"
t_case $rc "control: the same policy without its parameters rule differs under --init per-process"
suggest_proves mlp-clip "$T_MLP" --steps 6 --clip 0.01
grep -q 'at: "grad_norm_squared"' "$work/mlp-clip.yaml"
t_case $? "mlp-clip: the gradients are averaged at grad_norm_squared, before the norm"
grep -q '^# cannot tell: buf[0-9]* (4 bytes = 1 f32)' "$work/mlp-clip.yaml"
t_case $? "mlp-clip: the reading's 'cannot tell' (the clip scale) is copied into the policy"
suggest_proves mlp-adam "$T_MLP" --steps 6 --optimizer adam
suggest_proves mlp-tensor "$T_MLP" --steps 6 --update per-tensor
suggest_proves layers "$T_BUILD/tests/trainers/layers" --steps 4 --layers 3 --size 1024

# controls
"$T_LAUNCHER" test --cpu --batch 4 --batch-arg '--batch {batch}' --policy "$top/examples/mlp.yaml" \
    -- "$T_MLP" --steps 6 --clip 0.01 "${shard[@]}" > "$work/control.log" 2>&1
rc=$?
grep -q '^test: DIFFERS' "$work/control.log" && [ $rc -ne 0 ]
rc=$?
[ $rc -eq 0 ] || t_show "$work/control.log"
t_case $rc "control: examples/mlp.yaml (sync at the update) on mlp --clip 0.01 differs under the same proof"
"$T_LAUNCHER" suggest --cpu -o "$work/one.yaml" -- "$T_MLP" --steps 1 > "$work/one.log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ ! -e "$work/one.yaml" ] && grep -q 'no policy written' "$work/one.log"
rc=$?
[ $rc -eq 0 ] || t_show "$work/one.log"
t_case $rc "control: one step: suggest fails and writes no policy"
echo keep > "$work/kept.yaml"
"$T_LAUNCHER" suggest --cpu -o "$work/kept.yaml" -- "$T_MLP" --steps 4 > "$work/kept.log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ "$(cat "$work/kept.yaml")" = keep ]
t_case $? "an existing -o FILE is kept without --force"
t_done
