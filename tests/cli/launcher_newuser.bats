#!/usr/bin/env bats
# launcher_newuser.bats — what a new user trips on (issue 26), each case first failing as reported:
#   torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
#   MASTER_PORT) for every rank on mpirun, the own engine and the per-machine form (srun: in
#   launcher_slurm.bats' cluster only; not here), and the shim still sees one world with them.

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
