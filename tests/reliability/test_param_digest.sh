#!/usr/bin/env bash
# Property: where the policy names parameter buffers, the ranks compare a digest of them at exit.
#   mismatch: a parameters rule (broadcast once at the start) but no gradient rule (sync:
#             optional), each rank on its own data shard: the ranks end apart -> rank 0 reports
#             "ranks ended with different parameters" naming rank 1, the job exits 8.
#   also:     ranks initialised differently (--init-seed {rank}) and nothing synchronised at
#             all but a parameters rule that never matches: no buffer was broadcast, so nothing
#             can be compared and the job is not failed by the digest (documented limit); the
#             rule that never fired is named instead.
#   control:  the synchronised job (parameters + gradient rule): exit 0 and "parameters agree".
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER"
need_mpirun

rl_params_only_policy "$RL_TMP/params-only.yaml"
mlp=("$RL_MLP" --steps 3 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')

rl_launch 90 -n 2 --backend mpi --policy "$RL_TMP/params-only.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 8 ] || { rl_show; fail "ranks trained apart: exit $RL_RC, expected 8"; }
rl_digest_mismatch_named "ranks trained apart"
echo "ok: ranks trained apart -> 'ranks ended with different parameters', rank 1 named, exit 8"

sed 's/linear_forward\*/no_such_kernel/' "$RL_TMP/params-only.yaml" >"$RL_TMP/params-never.yaml"
rl_launch 90 -n 2 --backend mpi --env ACCELSHIM_LOG=info --policy "$RL_TMP/params-never.yaml" -- \
    "${mlp[@]}" --init-seed '{rank}'
[ "$RL_RC" -eq 0 ] || { rl_show; fail "no buffer broadcast: exit $RL_RC, expected 0 (nothing to compare)"; }
grep -q 'different parameters' "$RL_TMP/out" && { rl_show; fail "no buffer broadcast: a difference reported"; }
grep -q 'parameters\[0\] (at: "no_such_kernel", .*) never fired' "$RL_TMP/out" \
    || { rl_show; fail "no buffer broadcast: the rule that never fired is not named"; }
echo "ok: a parameters rule that never fired: nothing to compare (the rule is named instead), exit 0"

rl_launch 90 -n 2 --backend mpi --env ACCELSHIM_LOG=info --policy "$RL_POL/init-broadcast.yaml" -- \
    "${mlp[@]}" --init-seed '{rank}'
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control (synchronised job): exit $RL_RC"; }
grep -q 'INFO digest: parameters agree on all 2 ranks: digest [0-9a-f]* over 1 buffer(s), 2704 bytes' "$RL_TMP/out" \
    || { rl_show; fail "control: no 'parameters agree' line over the 2704-byte parameter buffer"; }
grep -q 'different parameters' "$RL_TMP/out" && { rl_show; fail "control: a difference reported"; }
echo "ok: control (ranks initialised differently, broadcast + gradient sync) -> parameters agree, exit 0"
