#!/usr/bin/env bash
# Property: with `sync: required`, a job whose gradient rules have not fired by the time the
# program's launch sequence has repeated (its second step) stops then, exit 7, on every rank, with
# the unfired rules and the nearest kernels; the launcher's root-cause block names the job's
# state, not one rank. The issue's case: examples/mlp-clip.yaml (sync point before the clip-norm
# kernel) used without --clip, 100000 steps: before, the ranks trained apart until the end.
#   early:    exit 7 within seconds, both ranks' output name gradients[0] and the nearest kernels,
#             at most 2 steps printed per rank, no "exit 8", no mpirun banner; mpirun and the
#             launcher's own engine (nccl rendezvous).
#   control:  the same policy with --clip (its kernel is launched): exit 0; the layers trainer
#             (a step of L identical forward launches, then backward, then sgd_apply) with its
#             policy: exit 0 (a repeated layer is not a step).
#   knobs:    ACCELSHIM_SYNC_WATCH_STEPS=3 waits for the 3rd step; =0 watches nothing (exit 7 at
#             exit, the old verdict); ACCELSHIM_SYNC_WATCH_LAUNCHES=5 stops after 5 launches.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

pol=$RL_TOP/examples/mlp-clip.yaml
mlp=("$RL_MLP" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')

early() { # early LABEL LAUNCHER_ARGS...
    local label=$1; shift
    rl_launch 60 -n 2 "$@" --policy "$pol" -- "${mlp[@]}" --steps 100000
    [ "$RL_RC" -eq 7 ] || { rl_show; fail "$label: exit $RL_RC after ${RL_SECS}s, expected 7 at the 2nd step"; }
    local r n
    for r in 0 1; do
        grep -q "^\[rank $r\] .*gradients\[0\] (at: \"grad_norm_squared\", .*mlp-clip.yaml:14:5) never fired" "$RL_TMP/out" \
            || { rl_show; fail "$label: rank $r's output does not name the unfired rule"; }
        grep -q "^\[rank $r\] .*nearest kernel seen: " "$RL_TMP/out" \
            || { rl_show; fail "$label: rank $r's output does not name the nearest kernels"; }
        grep -q "^\[rank $r\] accelshim: rank $r: no gradient rule of .* fired by the time the program's launch sequence repeated" "$RL_TMP/out" \
            || { rl_show; fail "$label: rank $r does not say it stopped at the repeated step"; }
        n=$(grep -c "^\[rank $r\] step " "$RL_TMP/out")
        [ "$n" -le 2 ] || { rl_show; fail "$label: rank $r printed $n steps before stopping, expected <= 2"; }
    done
    grep -q 'accelerate-run: the ranks are not synchronised: no gradient rule fired (exit code 7 on [12] of 2 ranks; rank 0' "$RL_TMP/out" \
        || { rl_show; fail "$label: the root-cause block does not name the job's state with rank 0's lines"; }
    grep -q 'failed first' "$RL_TMP/out" && { rl_show; fail "$label: the root-cause block blames one rank"; }
    grep -q 'exit 8' "$RL_TMP/out" && { rl_show; fail "$label: the output mentions exit 8"; }
    grep -q 'Primary job  *terminated normally\|mpirun detected that one or more' "$RL_TMP/out" \
        && { rl_show; fail "$label: mpirun's own banner reached the console"; }
    echo "ok: $label: exit 7 at the 2nd step (${RL_SECS}s), every rank names the rule, job-level root cause"
}
early "mpirun" --backend mpi
if [ -e "$RL_BUILD/tests/hostnccl/libnccl.so.2" ]; then early "own engine (nccl)" --launcher local
else echo "note: hostnccl not built; the own-engine case skipped"; fi

rl_launch 60 -n 2 --backend mpi --policy "$pol" -- "${mlp[@]}" --steps 6 --clip 1.0
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control (--clip, the rule's kernel runs): exit $RL_RC"; }
grep -q 'never fired' "$RL_TMP/out" && { rl_show; fail "control (--clip): a never-fired warning"; }
layers=$RL_BUILD/tests/trainers/layers
need "$layers"
HOSTCUDA_KERNEL_LIBS=$RL_BUILD/tests/trainers/liblayers_kernels_host.so \
    rl_launch 60 -n 2 --backend mpi --policy "$RL_TOP/examples/layers.yaml" -- "$layers" --steps 4
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control (layers trainer, repeated layer launches): exit $RL_RC"; }
echo "ok: controls: the rule's kernel runs (mlp --clip; layers' sgd_apply after L repeated layers) -> exit 0"

rl_launch 60 -n 2 --backend mpi --env ACCELSHIM_SYNC_WATCH_STEPS=3 --policy "$pol" -- "${mlp[@]}" --steps 100000
[ "$RL_RC" -eq 7 ] && grep -q 'seen 3 times' "$RL_TMP/out" && [ "$(grep -c '^\[rank 0\] step ' "$RL_TMP/out")" -le 3 ] \
    || { rl_show; fail "ACCELSHIM_SYNC_WATCH_STEPS=3: exit $RL_RC, expected 7 at the 3rd step"; }
rl_launch 60 -n 2 --backend mpi --env ACCELSHIM_SYNC_WATCH_STEPS=0 --policy "$pol" -- "${mlp[@]}" --steps 5
[ "$RL_RC" -eq 7 ] && [ "$(grep -c '^\[rank 0\] step ' "$RL_TMP/out")" -eq 5 ] \
    || { rl_show; fail "ACCELSHIM_SYNC_WATCH_STEPS=0: exit $RL_RC, expected 7 at exit after 5 steps"; }
rl_launch 60 -n 2 --backend mpi --env ACCELSHIM_SYNC_WATCH_STEPS=0 --env ACCELSHIM_SYNC_WATCH_LAUNCHES=5 \
    --policy "$pol" -- "${mlp[@]}" --steps 100000
[ "$RL_RC" -eq 7 ] && grep -q 'fired in the first 5 kernel launches' "$RL_TMP/out" \
    || { rl_show; fail "ACCELSHIM_SYNC_WATCH_LAUNCHES=5: exit $RL_RC, expected 7 after 5 launches"; }
echo "ok: ACCELSHIM_SYNC_WATCH_STEPS=3 / =0 and ACCELSHIM_SYNC_WATCH_LAUNCHES=5 behave as documented"
