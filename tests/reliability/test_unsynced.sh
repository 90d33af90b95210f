#!/usr/bin/env bash
# Property: a data-parallel job that synchronises nothing says so instead of exiting 0.
#   typo:     a policy whose only gradient rule never matches (at: "sgd_updte") at 2 ranks: rank 0
#             names the rule, its glob and the nearest kernel seen (sgd_update, edit distance 1),
#             and the job fails with exit 7.
#   no policy at 2 ranks: the launcher refuses (exit 2) before any rank starts; ranks started
#             without it (mpirun): exit 7 and a line saying there is no policy.
#   opt-out:  the same typo with `sync: optional` in the policy, or --sync-optional: exit 0 (the
#             warning block is still printed).
#   control:  the correct rule: exit 0 and no "never fired" warning.
#   origin:   ./accelshim.yaml picked up by accelerate-run is announced; a policy without rules is
#             refused for 2 ranks, warned about by the shim at 1.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

sed 's/"sgd_update"/"sgd_updte"/' "$RL_POL/sgd-fused.yaml" >"$RL_TMP/typo.yaml"
{ cat "$RL_TMP/typo.yaml"; echo "sync: optional"; } >"$RL_TMP/typo-optional.yaml"
mlp=("$RL_MLP" --steps 3 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')

rl_launch 90 -n 2 --backend mpi --policy "$RL_TMP/typo.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 7 ] || { rl_show; fail "typo rule at 2 ranks: exit $RL_RC, expected 7"; }
grep -q 'gradients\[0\] (at: "sgd_updte", .*typo.yaml:4:5) never fired' "$RL_TMP/out" \
    || { rl_show; fail "typo rule: no warning naming gradients[0], its glob and where it is written"; }
grep -q 'nearest kernel seen: sgd_update (edit distance 1)' "$RL_TMP/out" \
    || { rl_show; fail "typo rule: the near kernel sgd_update is not named"; }
grep -q 'no gradient rule of .* fired .*the 2 ranks are training apart' "$RL_TMP/out" \
    || { rl_show; fail "typo rule: no line saying why the job failed"; }
echo "ok: typo rule -> warning naming sgd_update, exit 7"

# no policy at 2 ranks: the launcher refuses before any rank starts; the shim's own verdict
# (ranks started without the launcher) is exit 7 at exit
rl_launch 90 -n 2 --backend mpi -- "${mlp[@]}"
[ "$RL_RC" -eq 2 ] || { rl_show; fail "no policy at 2 ranks (launcher): exit $RL_RC, expected 2"; }
grep -q 'accelerate-run: no policy for 2 ranks: nothing would be synchronised' "$RL_TMP/out" \
    || { rl_show; fail "no policy (launcher): the refusal does not say there is no policy"; }
grep -q '^\[rank' "$RL_TMP/out" && { rl_show; fail "no policy (launcher): a rank was started"; }
rl_mpirun 2 90 ACCELSHIM_BACKEND=mpi -- --steps 3 --batch 4
[ "$RL_RC" -eq 7 ] || { rl_show; fail "no policy at 2 ranks (mpirun, shim): exit $RL_RC, expected 7"; }
grep -q 'no policy (ACCELSHIM_POLICY not set) in this 2-rank job' "$RL_TMP/out" \
    || { rl_show; fail "no policy: the failure does not say there is no policy"; }
echo "ok: no policy at 2 ranks -> refused by the launcher (exit 2); the shim alone: exit 7"

rl_launch 90 -n 2 --backend mpi --policy "$RL_TMP/typo-optional.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "typo rule with sync: optional: exit $RL_RC, expected 0"; }
grep -q 'never fired' "$RL_TMP/out" || { rl_show; fail "sync: optional hid the never-fired warning"; }
rl_launch 90 -n 2 --backend mpi --sync-optional --policy "$RL_TMP/typo.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "typo rule with --sync-optional: exit $RL_RC, expected 0"; }
rl_launch 90 -n 2 --backend mpi --sync-optional -- "${mlp[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "no policy with --sync-optional: exit $RL_RC, expected 0"; }
echo "ok: opt-out (policy sync: optional, --sync-optional) -> exit 0"

rl_launch 90 -n 2 --backend mpi --policy "$RL_POL/sgd-fused.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control (the correct rule): exit $RL_RC"; }
grep -q 'never fired' "$RL_TMP/out" && { rl_show; fail "control: a never-fired warning for a rule that fired"; }
echo "ok: control (correct rule) -> exit 0, no warning"

# one rank: a rule that never fired is still named, but one rank has nothing to synchronise
rl_launch 90 -n 1 --policy "$RL_TMP/typo.yaml" -- "$RL_MLP" --steps 2 --batch 4
[ "$RL_RC" -eq 0 ] || { rl_show; fail "1 rank with the typo rule: exit $RL_RC, expected 0"; }
grep -q 'nearest kernel seen: sgd_update' "$RL_TMP/out" || { rl_show; fail "1 rank: the typo is not named"; }

# where the policy came from: ./accelshim.yaml picked up (and a starter policy without rules)
mkdir -p "$RL_TMP/wd" && printf 'version: 1\n' >"$RL_TMP/wd/accelshim.yaml"
(cd "$RL_TMP/wd" && timeout -k 5 90 "$RL_LAUNCHER" --cpu -n 2 --backend mpi -- "${mlp[@]}" >"$RL_TMP/out" 2>&1)
RL_RC=$?
[ "$RL_RC" -eq 2 ] || { rl_show; fail "starter policy (no rules) at 2 ranks: exit $RL_RC, expected 2 (refused)"; }
grep -q 'policy ./accelshim.yaml (found in the working directory' "$RL_TMP/out" \
    || { rl_show; fail "the launcher did not say it picked up ./accelshim.yaml"; }
grep -q 'accelshim.yaml (from ./accelshim.yaml) has no gradient or parameter rule: 2 ranks would train apart' "$RL_TMP/out" \
    || { rl_show; fail "the launcher did not refuse the policy without rules"; }
grep -q '^\[rank' "$RL_TMP/out" && { rl_show; fail "starter policy: a rank was started"; }
(cd "$RL_TMP/wd" && timeout -k 5 90 "$RL_LAUNCHER" --cpu -n 1 -- "${mlp[@]}" >"$RL_TMP/out" 2>&1)
RL_RC=$?
[ "$RL_RC" -eq 0 ] && grep -q 'accelshim.yaml (from ./accelshim.yaml) has no gradient or parameter rule' "$RL_TMP/out" \
    || { rl_show; fail "starter policy at 1 rank: exit $RL_RC, expected 0 with the shim's warning"; }
echo "ok: ./accelshim.yaml without rules: announced; refused for 2 ranks (exit 2), warned about at 1"

# garbage in the switch is refused
rl_launch 60 -n 1 --env ACCELSHIM_SYNC=maybe -- "$RL_MLP" --steps 1 --batch 4
[ "$RL_RC" -eq 2 ] && grep -q 'ACCELSHIM_SYNC=maybe: expected required or optional' "$RL_TMP/out" \
    || { rl_show; fail "ACCELSHIM_SYNC=maybe: exit $RL_RC, expected 2 with one line"; }
echo "ok: ACCELSHIM_SYNC=maybe -> exit 2"
