#!/usr/bin/env bats
# launcher_slurm.bats — accelerate-run on a real (one-node) Slurm cluster, on the srun engine.
# The test starts munged, slurmctld and slurmd from a configuration it writes into a temporary
# folder (slurm_cluster.bash) and stops them at the end; every wait is bounded. Properties: inside
# `salloc -I30 -O -n 2` the launcher picks srun (the ranks are job steps); 2 ranks of the bundled trainer
# on hostcuda end bit-identical and equal to 1 rank with the 2x batch (rtol 1e-5 per parameter);
# output lines arrive whole (3 ranks x 20,000 long lines); a failing rank tears the job down and
# is named with its last line and its exit status; scancel of the allocation stops every rank
# and the launcher. Skips (77) only when the daemons cannot start here, saying why.

# shellcheck disable=SC2016  # literal $ in single quotes is on purpose
load helpers
load slurm_cluster
bats_require_minimum_version 1.5.0

setup_file() {
  SLURM_DIR=$(mktemp -d)
  export SLURM_DIR
  local rc=0
  slurm_up "$SLURM_DIR" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$SLURM_WHY" >"$SLURM_DIR/why"
  else
    printf '%s\n' "${SLURM_PIDS[@]}" >"$SLURM_DIR/pids"
  fi
}
teardown_file() {
  if [ -f "$SLURM_DIR/pids" ]; then mapfile -t SLURM_PIDS <"$SLURM_DIR/pids"; slurm_down; fi
  rm -rf "$SLURM_DIR"
}

setup() {
  MARK="asr-slurm-$$-$RANDOM"
  [ ! -f "$SLURM_DIR/why" ] || skip "Slurm cannot run here: $(cat "$SLURM_DIR/why")"
  export SLURM_CONF=$SLURM_DIR/slurm.conf
  unset SLURM_JOB_ID SLURM_MPI_TYPE CUDA_VISIBLE_DEVICES
  T=$(mktemp -d)
  cd "$T" || exit 1
}
teardown() {
  local p
  for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done
  [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }
}
leftovers() { [[ ${MARK:-} == asr-slurm-* ]] && pgrep -f "$MARK"; true; }

@test "inside salloc -n 2 the launcher runs the ranks as srun job steps" {
  run timeout 120 salloc -I30 -O -n 2 "$A" --no-preload -- bash -c 'echo "procid=$SLURM_PROCID step=${SLURM_STEP_ID-none}"'
  status_is 0
  contains "[rank 0] procid=0 step=0"
  contains "[rank 1] procid=1 step=0"
}

@test "srun: 2 ranks x batch 4 == 1 rank x batch 8 (hostcuda trainer), ranks bit-identical" {
  need_trainer
  need_shim
  need_policy_tool
  local common=(--steps 8 --seed 7)
  run timeout 180 salloc -I30 -O -n 2 "$A" --cpu --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" "${common[@]}" --batch 4 \
      --shard-rank '{rank}' --shard-count '{world_size}' --save "$T/p{rank}.out"
  status_is 0
  run timeout 180 salloc -I30 -O -n 1 "$A" --cpu --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" "${common[@]}" --batch 8 \
      --save "$T/one.out"
  status_is 0
  cmp p0.out p1.out || { echo "ranks 0 and 1 ended with different parameters"; false; }
  paste <(od -An -v -tf4 -w4 one.out) <(od -An -v -tf4 -w4 p0.out) | awk '
    { d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1
      if (d > 1e-8 + 1e-5 * m) { bad++; if (bad == 1) printf "parameter %d: 1 rank %s, 2 ranks %s\n", NR - 1, $1, $2 } }
    END { if (NR == 0) { print "no parameters saved"; exit 1 } exit bad > 0 }'
}

@test "srun: 3 ranks x 20,000 long lines arrive whole, stdout on stdout, stderr on stderr" {
  need_cmd python3
  write_printer printer.py
  timeout 180 salloc -I30 -O -n 3 "$A" --no-preload -- python3 "$T/printer.py" '{rank}' 20000 300 >out.txt 2>err.txt
  grep -v '^salloc: ' err.txt >err-ranks.txt
  check_stream out.txt out 3 20000
  check_stream err-ranks.txt err 3 20000
}

@test "srun: a failing rank tears the job down and is named with its last line and status" {
  run timeout 120 salloc -I30 -O -n 2 "$A" --no-preload -- \
      bash -c "if [ {rank} = 1 ]; then echo 'rank one gives up'; exit 3; fi; sleep 100 # $MARK"
  status_is 3
  contains "rank 1 failed first: exit code 3"
  contains "    | rank one gives up"
  for _ in $(seq 50); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
  [ -z "$(leftovers)" ] || { echo "ranks still running"; ps -o pid,cmd -p "$(leftovers | paste -sd, -)"; false; }
}

@test "scancel of the allocation stops every rank and the launcher" {
  timeout 120 salloc -I30 -O -n 2 -J "$MARK" "$A" --no-preload -- bash -c "echo up; sleep 100 # $MARK" >out 2>&1 &
  local lp=$! job='' rc=0
  for _ in $(seq 300); do [ "$(grep -c 'up$' out)" -eq 2 ] && break; sleep 0.1; done
  [ "$(grep -c 'up$' out)" -eq 2 ] || { echo "ranks did not start"; cat out; false; }
  job=$(squeue -h -n "$MARK" -o %i)
  [ -n "$job" ] || { echo "job not found"; squeue; false; }
  scancel "$job"
  wait "$lp" || rc=$?
  [ "$rc" -ne 0 ] || { echo "the launcher exited 0 after scancel"; cat out; false; }
  [ "$rc" -ne 124 ] || { echo "the launcher did not end after scancel (timeout)"; cat out; false; }
  for _ in $(seq 100); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
  [ -z "$(leftovers)" ] || { echo "ranks still running after scancel"; ps -o pid,cmd -p "$(leftovers | paste -sd, -)"; cat out; false; }
}

@test "srun: every rank gets torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT)" {
  run timeout 120 salloc -I30 -O -n 2 "$A" --no-preload -- \
      sh -c 'echo "tr RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT"'
  status_is 0
  contains "[rank 0] tr RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER="
  contains "[rank 1] tr RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER="
  [[ $output =~ MASTER=[^:\ ]+:29500 ]] || { echo "no MASTER_ADDR:MASTER_PORT"; show; false; }
}
