#!/usr/bin/env bats
# launcher_newuser.bats — what a new user trips on (issue 26), each case first failing as reported:
#   torchrun's variables for every rank on mpirun, the own engine and the per-machine form (srun:
#   launcher_slurm.bats), the shim still seeing one world with them; --log_dir's folder per
#   attempt; no restart of a configuration error; torchrun's --tee without --log_dir and
#   --dynamo_backend VALUE; mpirun's banners off the console; the quick start without a warning;
#   --list-kernels (README step 1 without a GPU); `test`'s advice from the evidence; one version
#   string; env without a reachable Slurm.

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID ACCELSHIM_POLICY RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
  export XDG_CONFIG_HOME=$T/xdg HF_HOME=$T/hf
}
teardown() { [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }; }

TR='echo "tr RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT"'

@test "torchrun's variables for every rank: mpirun and the own engine, with and without the shim" {
  need_cmd mpirun
  for eng in mpirun local; do
    for pre in --no-preload --sync-optional; do
      run "$A" $pre --launcher "$eng" -n 3 --main-process-port 29650 -- sh -c "$TR"
      status_is 0
      for r in 0 1 2; do
        contains "[rank $r] tr RANK=$r LOCAL_RANK=$r WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 MASTER=127.0.0.1:"
      done
    done
  done
  run "$A" --no-preload --launcher local -n 2 --main-process-port 29651 -- sh -c "$TR"
  contains "[rank 1] tr RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:29651"
}

@test "torchrun's variables in the per-machine form: machine 1's ranks are 2-3, local 0-1" {
  "$A" --no-preload -n 4 --num-machines 2 --machine-rank 1 --main-process-ip 127.0.0.1 --main-process-port 29652 -- sh -c "$TR" >m1.out 2>&1 &
  run "$A" --no-preload -n 4 --num-machines 2 --machine-rank 0 --main-process-ip 127.0.0.1 --main-process-port 29652 -- sh -c "$TR"
  wait $!
  status_is 0
  contains "[rank 0] tr RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:29652"
  contains "[rank 1] tr RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:29652"
  run cat m1.out
  contains "[rank 2] tr RANK=2 LOCAL_RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:29652"
  contains "[rank 3] tr RANK=3 LOCAL_RANK=1 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:29652"
}

@test "with torchrun's variables set, the shim still sees one world: 2 ranks train in sync (mpirun, own engine)" {
  need_trainer; need_shim; need_cmd mpirun
  for eng in mpirun local; do
    run "$A" --cpu --launcher "$eng" -n 2 --env ACCELSHIM_LOG=info --policy "$TOP/examples/mlp.yaml" -- \
        "$TRAINER" --steps 3 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}'
    status_is 0
    contains "[rank 0] [accelshim rank 0] INFO world: rank 0 ("
    contains "[rank 1] [accelshim rank 1] INFO world: rank 1 ("
    contains "world size 2"
    lacks "conflicting sources"
    # the ranks agree: the same checksum line on both
    c0=$(grep '^\[rank 0\] checksum' <<<"$output" | cut -d' ' -f3-)
    c1=$(grep '^\[rank 1\] checksum' <<<"$output" | cut -d' ' -f3-)
    [ -n "$c0" ] && [ "$c0" = "$c1" ] || { echo "$eng: checksums differ: '$c0' vs '$c1'"; show; false; }
  done
}

@test "--log_dir: one folder per attempt, the first attempt's logs kept; an earlier run's logs moved aside" {
  need_cmd mpirun
  # try 1 fails (exit 3), try 2 succeeds: the count of tries lives in a file
  # (each rank counts its own tries: one shared counter would race between the ranks)
  prog='n=$(cat '"$T"'/tries-{rank} 2>/dev/null || echo 0); echo $((n + 1)) >'"$T"'/tries-{rank}; echo "try $n rank {rank}"; [ "$n" -ge 1 ] || [ {rank} != 1 ] || exit 3'
  run "$A" --no-preload -n 2 --log_dir logs --max-restarts 2 -- sh -c "$prog"
  status_is 0
  [ "$(cat logs/attempt-0/rank-1.log)" = "try 0 rank 1" ] || { ls -R logs; cat logs/attempt-0/rank-1.log; false; }
  [ "$(cat logs/attempt-1/rank-1.log)" = "try 1 rank 1" ] || { ls -R logs; false; }
  [ ! -e logs/attempt-2 ]
  # a second run into the same folder keeps the first run's logs
  run "$A" --no-preload -n 2 --log_dir logs -- sh -c 'echo "second run {rank}"'
  status_is 0
  contains "the earlier run's logs were moved to $T/logs/run-"
  [ "$(cat logs/attempt-0/rank-1.log)" = "second run 1" ]
  [ "$(cat logs/run-*/attempt-0/rank-1.log)" = "try 0 rank 1" ] || { ls -R logs; false; }
  [ "$(cat logs/run-*/attempt-1/rank-1.log)" = "try 1 rank 1" ]
}

@test "--max-restarts does not restart a job that failed with exit 2 (configuration); exit 3 is restarted (control)" {
  need_cmd mpirun
  run "$A" --no-preload -n 2 --max-restarts 2 -- sh -c 'echo "ran {rank}" >>'"$T"'/ran-2; exit 2'
  status_is 2
  contains "not restarting: exit status 2 is a configuration error"
  [ "$(grep -c 'ran 1' ran-2)" -eq 1 ] || { cat ran-2; false; }   # rank 1 (the failing one) ran once
  run "$A" --no-preload -n 2 --max-restarts 1 -- sh -c 'echo "ran {rank}" >>'"$T"'/ran-3; exit 3'
  status_is 3
  [ "$(grep -c 'ran 1' ran-3)" -eq 2 ] || { cat ran-3; false; }   # ... here twice
}

@test "torchrun's --tee 3 without --log_dir is accepted; --dynamo_backend no takes its value" {
  need_cmd mpirun
  run "$A" --no-preload --tee 3 -n 2 -- sh -c 'echo "tee {rank}"'
  status_is 0
  contains "[rank 1] tee 1"
  run "$A" --no-preload --dynamo_backend no -n 1 -- sh -c 'echo "prog ran"'
  status_is 0
  contains "prog ran"
  contains "--dynamo-backend no: accepted, not used"
}

@test "a failing rank: mpirun's own 'exited non-zero' banners stay off the console" {
  need_cmd mpirun
  run "$A" --no-preload -n 2 -- sh -c '[ {rank} = 1 ] && exit 3; sleep 1'
  status_is 3
  contains "rank 1 failed first: exit code 3"
  lacks "Primary job"
  lacks "mpirun detected that one or more processes exited"
  lacks "[mpirun] ----"
}

@test "the README's quick start runs with no warning (no unfired rule of the bundled example)" {
  need_trainer; need_shim; need_cmd mpirun
  run "$A" --cpu -n 2 --policy "$TOP/examples/mlp.yaml" -- \
      "$TRAINER" --steps 20 --shard-rank '{rank}' --shard-count '{world_size}'
  status_is 0
  lacks "WARN"
  lacks "never fired"
  # control: the adam example with sgd names its unfired rule (the check can fail)
  run "$A" --cpu -n 2 --policy "$TOP/examples/mlp-adam.yaml" --env ACCELSHIM_SYNC_WATCH_STEPS=0 -- \
      "$TRAINER" --steps 2 --shard-rank '{rank}' --shard-count '{world_size}'
  contains 'gradients[0] (at: "adam_update"'
}

@test "README step 1 runs as written without a GPU: --cpu --list-kernels prints the kernels with their parameter sizes" {
  need_trainer; need_shim
  run "$A" --cpu --list-kernels -- "$TRAINER" --steps 2 --clip 1.0
  status_is 0
  contains "kernels launched by"
  contains "linear_forward(float*, float const*, float const*, float const*, int, int, int, int)  _Z14linear_forwardPfPKfS1_S1_iiii  params=[8,8,8,8,4,4,4,4]"
  contains "grad_norm_squared  params=[8,8,4]"
  contains "sgd_update  params=[8,8,4,4,8]"
  lacks "DEBUG"                                  # the listing, not the debug log
  # without --clip the clip kernels are not launched (the listing is what ran, not what exists)
  run "$A" --cpu --list-kernels -- "$TRAINER" --steps 1
  status_is 0
  lacks "grad_norm_squared"
  run "$A" --cpu --list-kernels -n 2 -- "$TRAINER" --steps 1
  status_is 2
  contains "--list-kernels runs one rank"
}

# `accelerate-run test` on the user's own program: the advice follows the evidence
tprog() { run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch={batch}' "$@"; }

@test "test: a sync point after the clip-norm kernel is 'too late: an earlier kernel', naming the candidates" {
  need_trainer; need_shim; need_cmd mpirun
  tprog --policy "$TOP/tests/equivalence/policies/clip-at-update.yaml" -- \
      "$TRAINER" --steps 4 --clip 0.5 --shard-rank '{rank}' --shard-count '{world_size}'
  [ "$status" -ne 0 ] || { show; false; }
  contains "test: DIFFERS"
  contains "agree at seq 0"
  contains "the sync point is too late"
  contains "pick an earlier kernel"
  contains "grad_norm_squared"
  lacks "pick a later kernel"
}

@test "test: forgotten sharding arguments: the values differ already before the first collective" {
  need_trainer; need_shim; need_cmd mpirun
  tprog --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" --steps 4
  [ "$status" -ne 0 ] || { show; false; }
  contains "differ already before the first collective"
  contains "different data or weights"
  contains "{rank}"
  lacks "pick a later kernel"
  lacks "pick an earlier kernel"
}

@test "test: a typo'd rule shows the nearest kernel; the correct policy passes (control)" {
  need_trainer; need_shim; need_cmd mpirun
  sed 's/"sgd_update"/"sgd_updte"/' "$TOP/examples/mlp.yaml" >typo.yaml
  tprog --policy typo.yaml -- "$TRAINER" --steps 3 --shard-rank '{rank}' --shard-count '{world_size}'
  [ "$status" -ne 0 ] || { show; false; }
  contains "no gradient sync point fired"
  contains "nearest kernel seen: sgd_update (edit distance 1)"
  tprog --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" --steps 3 --shard-rank '{rank}' --shard-count '{world_size}'
  status_is 0
  contains "test: OK"
}

@test "--version and env print the same version: 0.1.0 and the commit" {
  run "$A" --version
  status_is 0
  v=$output
  [[ $v =~ ^0\.1\.0\ \(git\ [^\)]+\)$ ]] || { echo "--version: '$v'"; false; }
  run "$A" env
  status_is 0
  contains "- accelshim version:  $v"
}

@test "env on a machine where srun cannot reach Slurm: one clear line, not srun's raw error" {
  mkdir bin
  printf '#!/bin/sh\necho "srun: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host" >&2\necho "srun: fatal: Could not establish a configuration source" >&2\nexit 1\n' >bin/srun
  chmod +x bin/srun
  PATH=$T/bin:$PATH run "$A" env
  status_is 0
  contains "- Slurm:              srun is installed but cannot reach a Slurm configuration here (not a Slurm cluster); no job"
  lacks "resolve_ctls_from_dns_srv"
  lacks "srun: fatal"
  printf '#!/bin/sh\necho "slurm 22.05.8"\n' >bin/srun     # control: a working srun is reported as it is
  PATH=$T/bin:$PATH run "$A" env
  contains "- Slurm:              slurm 22.05.8 (job: none)"
}
