#!/usr/bin/env bats
# launcher_subcommands.bats — accelerate-run config / env / test and their --help.
# Properties: `config` writes a starter policy only when asked (--write-policy or FILE): a commented one that passes `accelshim-policy check`,
# never overwrites without --force, and prints to stdout with '-'; `env` succeeds and names every
# part of a bug report (version, driver, toolkit, NCCL, MPI, GPUs, policy in effect, normalised);
# `test` on hostcuda prints success or exactly what differed (it needs the sync engine to pass).

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID ACCELSHIM_POLICY
  export TMPDIR=$T     # `test` keeps its logs on failure: keep them inside $T
}
teardown() { cd / && rm -rf "$T"; }

@test "--help works for every subcommand" {
  for s in config env test; do
    run "$A" "$s" --help
    status_is 0
    contains "usage: accelerate-run $s"
  done
}

@test "config writes no starter policy unless asked (--write-policy, or a FILE)" {
  run "$A" config </dev/null
  status_is 0
  [ ! -e accelshim.yaml ]
  contains "--write-policy"
}

@test "config writes a commented starter policy that accelshim-policy accepts" {
  need_policy_tool
  run "$A" config --write-policy
  status_is 0
  [ -f accelshim.yaml ]
  grep -q '^# ' accelshim.yaml
  grep -q '^version: 1' accelshim.yaml
  run "$POLICY_TOOL" check accelshim.yaml
  status_is 0
  run "$A" config sub/dir/p.yaml
  status_is 0
  run "$POLICY_TOOL" check sub/dir/p.yaml
  status_is 0
}

@test "config does not overwrite without --force; '-' prints to stdout" {
  echo 'keep me' >accelshim.yaml
  run "$A" config --write-policy
  status_is 2
  [ "$(cat accelshim.yaml)" = 'keep me' ]
  run "$A" config --write-policy --force
  status_is 0
  grep -q '^version: 1' accelshim.yaml
  run "$A" config -
  status_is 0
  contains "version: 1"
  contains "gradients:"
}

@test "the starter policy is picked up as ./accelshim.yaml by a launch" {
  need_policy_tool
  "$A" config --write-policy >/dev/null
  run "$A" --dry-run --no-preload -n 2 -- prog
  status_is 0
  contains "ACCELSHIM_POLICY=$T/accelshim.yaml"
}

@test "env prints what a bug report needs and succeeds" {
  run "$A" env
  status_is 0
  for k in "accelshim version" "library:" "NVIDIA driver" "CUDA toolkit" "NCCL" "MPI:" "GPUs" \
           "policy in effect" "ACCELSHIM_"; do
    contains "$k"
  done
}

@test "env shows the policy in effect, normalised" {
  need_policy_tool
  printf 'version: 1\ndebug:\n  timeout_s: 60\n' >p.yaml
  run "$A" env --policy p.yaml
  status_is 0
  contains "policy in effect:   p.yaml, normalised"
  contains "timeout_s: 60"
  ACCELSHIM_LOG=info run "$A" env
  contains "ACCELSHIM_LOG=info"
}

@test "test (hostcuda): 2 ranks x batch 4 == 1 rank x batch 8, or exactly what differed" {
  need_trainer
  need_shim
  need_policy_tool
  run "$A" test --cpu -n 2 --batch 4 --steps 5
  echo "$output"
  if [ "$status" -ne 0 ]; then
    # A failure must say what differed, never just "failed".
    [[ $output == *"DIFFERS:"* || $output == *"exited with status"* || $output == *"no checksum"* ]]
    false
  fi
  contains "test: OK"
}

# A policy for the bundled trainer's sgd path (kernel names and argument positions from
# tests/trainers/README.md), so these two cases do not depend on examples/mlp.yaml.
sgd_policy() {
  cat >"$1" <<'YAML'
version: 1
gradients:
  - at: "sgd_update"
    buffer: { arg: 1, count_arg: 2 }
    dtype: f32
parameters:
  - at: "linear_forward*"
    buffer: { arg: 1, region: allocation }
    dtype: f32
YAML
}

@test "test --policy (sgd rules): 3 ranks x batch 2 == 1 rank x batch 6, ranks bit-identical" {
  need_trainer
  need_shim
  need_policy_tool
  sgd_policy sgd.yaml
  run "$A" test --cpu -n 3 --batch 2 --steps 6 --policy sgd.yaml
  echo "$output"
  status_is 0
  contains "test: OK: 3 ranks x batch 2 == 1 rank x batch 6"
}

@test "test with a policy that syncs nothing fails and says exactly what differed" {
  need_trainer
  need_shim
  need_policy_tool
  printf 'version: 1\n' >empty.yaml
  run "$A" test --cpu -n 2 --batch 4 --steps 3 --policy empty.yaml
  status_is 1
  contains "DIFFERS: ranks ended with different parameters"
  contains "rank 0: "
  contains "rank 1: "
  contains "DIFFERS: the saved parameters (accelshim-equiv)"
  contains "params-rank1.out vs"            # rank 1 against rank 0, bit for bit
  contains "(required: identical): MISMATCH"
  contains "(required: |diff| <= 1e-08 + 1e-05*|b|): MISMATCH"   # rank 0 against 1 rank
  contains "mismatch [0]: "                 # both sides of the first difference
}

@test "test --init per-process: the parameter broadcast makes different starts equal rank 0's" {
  need_trainer
  need_shim
  need_policy_tool
  sgd_policy sgd.yaml
  run "$A" test --cpu -n 2 --batch 4 --steps 4 --init per-process --policy sgd.yaml
  echo "$output"
  status_is 0
  contains "test: OK"
}
