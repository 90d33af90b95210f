#!/usr/bin/env bats
# launcher_test_program.bats — `accelerate-run test ... -- PROGRAM`: a policy proved on any program.
# Properties: with the bundled trainer as "the user's program" (its batch set by --batch-arg), the
# right policy gives OK (2 ranks x B == 1 rank x 2B at every sync point, through the records);
# the negative control, a policy that syncs the gradients at the wrong kernel (the backward pass,
# before the gradients are complete), is reported DIFFERS with the rule, the step and both
# values; a policy whose gradient rule never fires fails saying so (an empty comparison would
# prove nothing); the tolerance follows the wire (bf16 -> 1e-2); bad input exits 2.

load helpers
bats_require_minimum_version 1.5.0

setup() {
  need_trainer
  need_shim
  need_policy_tool
  need_file "$BUILD/bin/accelshim-compare" accelshim-compare
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID CUDA_VISIBLE_DEVICES ACCELSHIM_POLICY
  PROG=("$TRAINER" --steps 5 --shard-rank '{rank}' --shard-count '{world_size}')
}
teardown() { [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }; }

@test "the right policy: OK at every sync point (2 ranks x 4 == 1 rank x 8)" {
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --policy "$TOP/examples/mlp.yaml" -- "${PROG[@]}"
  status_is 0
  contains "test: OK: 2 ranks x batch 4 == 1 rank x batch 8 at every sync point"
  contains "rtol 1e-5"
}

@test "negative control: gradients synced at the wrong kernel are reported with the rule, step and both values" {
  cat >wrong.yaml <<'Y'
version: 1
gradients:
  - at: "linear_backward_weight"
    buffer: { arg: 0, region: allocation }
    dtype: f32
parameters:
  - at: "linear_forward*"
    buffer: { arg: 1, region: allocation }
    dtype: f32
    broadcast: once
Y
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --policy wrong.yaml -- "${PROG[@]}"
  status_is 1
  contains "test: DIFFERS (A = 1 rank, B = 2 ranks): gradients[0] seq "
  [[ $output =~ \(post,\ rank\ 0\):\ [a-z_0-9]+:\ A=[-0-9.e]+\ B=[-0-9.e]+ ]] || { echo "both values expected"; show; false; }
  contains "logs and records kept in"
}

@test "ranks that end with different parameters are never OK, whatever the tolerance (records that agree within it)" {
  # --clip: the trainer scales its step by the gradients' norm, which examples/mlp.yaml (synced
  # at sgd_update) lets each rank compute from its own gradients; --rtol 1e9 makes every record
  # agree, so only the parameter digest at exit sees that the ranks parted
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --rtol 1e9 --policy "$TOP/examples/mlp.yaml" \
      -- "${PROG[@]}" --clip 0.05
  status_is 1
  contains "test: DIFFERS: the 2 ranks ended with different parameters"
  contains "every sync point agrees within rtol 1e9"
  lacks "test: OK"
  # the control: the same job with the policy that syncs before the norm is OK
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --rtol 1e9 --policy "$TOP/examples/mlp-clip.yaml" \
      -- "${PROG[@]}" --clip 0.05
  status_is 0
  contains "test: OK"
  lacks "different parameters"
}

@test "a gradient rule that never fires fails the check instead of comparing nothing" {
  printf 'version: 1\ngradients:\n  - at: "sgd_updte"\n    buffer: { arg: 1, count_arg: 2 }\n    dtype: f32\n' >typo.yaml
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --policy typo.yaml -- "${PROG[@]}"
  status_is 1
  contains "no gradient sync point fired"
}

@test "the tolerance follows the wire: --mixed-precision bf16 -> rtol 1e-2, OK" {
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch={batch}' --mixed-precision bf16 \
      --policy "$TOP/examples/mlp.yaml" -- "${PROG[@]}"
  status_is 0
  contains "rtol 1e-2"
  contains "test: OK"
}

@test "the tolerance follows the policy's dtype when the rule also names a wire (bf16 + wire: same -> 1e-2)" {
  printf 'version: 1\ngradients:\n  - at: "k"\n    buffer: { arg: 1, count_arg: 2 }\n    dtype: bf16\n    wire: same\n' >bf16.yaml
  printf 'version: 1\ngradients:\n  - at: "k"\n    buffer: { arg: 1, count_arg: 2 }\n    dtype: f16\n    wire: same\n' >f16.yaml
  printf 'version: 1\ngradients:\n  - at: "k"\n    buffer: { arg: 1, count_arg: 2 }\n    dtype: f32\n    wire: same\n' >f32.yaml
  run bash -c 'L_POLICY_TOOL=$1; . "$2"; for p in bf16 f16 f32; do echo "$p $(policy_rtol "$p.yaml" no)"; done' _ \
      "$BUILD/bin/accelshim-policy" "$TOP/scripts/accelerate-run.d/test-program.bash"
  status_is 0
  contains "bf16 1e-2"
  contains "f16 2e-3"
  contains "f32 1e-5"   # the control: a policy without a narrow type keeps f32's tolerance
}

@test "bad input exits 2 naming it" {
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch 8' --policy "$TOP/examples/mlp.yaml" -- "${PROG[@]}"
  status_is 2
  contains "has no {batch}"
  run "$A" test --cpu -n 1 --batch 4 --batch-arg '-b {batch}' --policy "$TOP/examples/mlp.yaml" -- "${PROG[@]}"
  status_is 2
  contains "at least 2"
  run "$A" test --cpu -n 2 --batch x --batch-arg '-b {batch}' --policy "$TOP/examples/mlp.yaml" -- "${PROG[@]}"
  status_is 2
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '-b {batch}' -- "${PROG[@]}"
  status_is 2
  contains "no policy"
}
