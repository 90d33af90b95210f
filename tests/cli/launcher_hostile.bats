#!/usr/bin/env bats
# launcher_hostile.bats — the launcher against a hostile file system and a killed launcher.
# Properties: a symlink planted where the launcher creates a file (--log-dir's attempt-N/rank-R.log,
# `config FILE`, dangling or not) is refused with one line naming it and exit 2, and the file it
# points to is untouched; SIGKILL to the launcher (which no trap sees) still ends every process of
# the job — the engine (mpirun), the rank wrappers, the programs — within a bounded wait, and its
# run folder is removed, on mpirun and on the launcher's own engine. Processes of a test are found
# by a variable in their environment (ASR_TEST_MARK), inherited by everything the launcher starts.

# shellcheck disable=SC2154  # status/output are set by bats
load helpers
bats_require_minimum_version 1.5.0

setup() {
  MARK="asr-test-$$-$RANDOM"
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID
}
teardown() {
  local p
  for p in $(marked); do kill -KILL "$p" 2>/dev/null; done
  [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }
}

# marked: pids of live processes whose environment holds ASR_TEST_MARK=$MARK (this test's own).
marked() {
  [[ ${MARK:-} == asr-test-* ]] || return 0
  grep -lzaxF "ASR_TEST_MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | grep -v "^/proc/$$/" \
    | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
  true
}
# n_marked_named NAME: how many marked processes run the program NAME (comm)
n_marked_named() {
  local p n=0
  for p in $(marked); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] && n=$((n + 1)); done
  echo "$n"
}

@test "a symlink planted as rank-R.log is never written through, its target untouched" {
  for eng in mpirun local; do
    [ "$eng" = mpirun ] && ! command -v mpirun >/dev/null && continue
    mkdir -p "logs-$eng/attempt-0"
    echo "precious $eng" >"victim-$eng"
    ln -s "$T/victim-$eng" "logs-$eng/attempt-0/rank-1.log"
    # an earlier run's folder (with the link) is moved aside whole; the new attempt-0 is fresh
    run "$A" --no-preload --launcher "$eng" -n 2 --log-dir "logs-$eng" -- bash -c 'echo "line {rank}"'
    status_is 0
    [ "$(cat "victim-$eng")" = "precious $eng" ] || { echo "$eng: the victim was changed to:"; cat "victim-$eng"; false; }
    [ ! -L "logs-$eng/attempt-0/rank-1.log" ] && [ "$(cat "logs-$eng/attempt-0/rank-1.log")" = "line 1" ] \
      || { echo "$eng: the new log is not a fresh file"; ls -lR "logs-$eng"; false; }
    compgen -G "logs-$eng/run-*/attempt-0/rank-1.log" >/dev/null && [ -L logs-$eng/run-*/attempt-0/rank-1.log ] \
      || { echo "$eng: the planted link was not kept aside as it was"; ls -lR "logs-$eng"; false; }
  done
  # the rank wrapper itself (a link planted after the launcher looked): refused, exit 2
  mkdir -p logs-late; echo "precious late" >victim-late; ln -s "$T/victim-late" logs-late/rank-1.log
  run -2 "$TOP/scripts/accelerate-run.d/rank-wrapper" --log-dir "$T/logs-late" --rank 1 --local-rank 1 --world-size 2 -- echo hi
  contains "logs-late/rank-1.log' is a symbolic link; refusing to write through it"
  [ "$(cat victim-late)" = "precious late" ] || { echo "wrapper: the victim was changed to:"; cat victim-late; false; }
  # control: the same run without the link writes both logs
  run "$A" --no-preload --launcher local -n 2 --log-dir logs-ok -- bash -c 'echo "line {rank}"'
  status_is 0
  [ "$(cat logs-ok/attempt-0/rank-1.log)" = "line 1" ] || { echo "control: rank-1.log:"; cat logs-ok/attempt-0/rank-1.log; false; }
  # a second run keeps the first run's logs aside and writes its own
  run "$A" --no-preload --launcher local -n 2 --log-dir logs-ok -- bash -c 'echo "again {rank}"'
  status_is 0
  [ "$(cat logs-ok/attempt-0/rank-1.log)" = "again 1" ] || { echo "rerun: rank-1.log:"; cat logs-ok/attempt-0/rank-1.log; false; }
  [ "$(cat logs-ok/run-*/attempt-0/rank-1.log)" = "line 1" ] || { ls -R logs-ok; false; }
}

@test "config FILE: a symlink (dangling or not) is refused (exit 2), nothing written through it" {
  ln -s "$T/created-by-link.yaml" dangling.yaml
  run -2 "$A" config dangling.yaml
  contains "dangling.yaml' is a symbolic link; refusing to write through it"
  [ ! -e created-by-link.yaml ] || { echo "written through a dangling link:"; cat created-by-link.yaml; false; }
  echo precious >victim.yaml
  ln -s "$T/victim.yaml" link.yaml
  run -2 "$A" config --force link.yaml
  contains "link.yaml' is a symbolic link; refusing to write through it"
  [ "$(cat victim.yaml)" = precious ] || { echo "victim changed:"; cat victim.yaml; false; }
  # control: a plain path is written
  run -0 "$A" config plain.yaml
  grep -q . plain.yaml
}

# kill_launcher ENGINE: start 2 ranks of the trainer for a long run, SIGKILL the launcher once
# both programs run, then every process of the job must be gone and the run folder removed.
kill_launcher() {
  local eng=$1 lp i
  mkdir -p "$T/tmp-$eng"
  ASR_TEST_MARK=$MARK TMPDIR=$T/tmp-$eng "$A" --cpu --launcher "$eng" -n 2 --sync-optional -- "$TRAINER" --steps 100000000 --batch 2 \
      --shard-rank '{rank}' --shard-count '{world_size}' >"out-$eng" 2>&1 &
  lp=$!
  for i in $(seq 600); do [ "$(n_marked_named mlp)" -ge 2 ] && break; sleep 0.1; done
  [ "$(n_marked_named mlp)" -ge 2 ] || { echo "$eng: the ranks did not start"; cat "out-$eng"; false; }
  sleep 1
  kill -KILL "$lp"
  for i in $(seq 150); do [ -z "$(marked)" ] && break; sleep 0.1; done
  if [ -n "$(marked)" ]; then
    echo "$eng: 15 s after SIGKILL to the launcher, still running:"
    ps -o pid,ppid,pgid,cmd -p "$(marked | paste -sd, -)"; false
  fi
  for i in $(seq 50); do compgen -G "$T/tmp-$eng/accelerate-run.*" >/dev/null || break; sleep 0.1; done
  if compgen -G "$T/tmp-$eng/accelerate-run.*" >/dev/null; then
    echo "$eng: run folder left behind:"; ls -la "$T/tmp-$eng"; false
  fi
}

@test "SIGKILL to the launcher (mpirun): the engine and every rank end, the run folder is removed" {
  need_cmd mpirun
  need_trainer
  need_shim
  kill_launcher mpirun
}

@test "SIGKILL to the launcher (own engine): every rank ends, the run folder is removed" {
  need_trainer
  need_shim
  kill_launcher local
}
