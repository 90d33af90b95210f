#!/usr/bin/env bats
# launcher_rootcause.bats — the root-cause block of a job that ends by a stall blames the right rank.
# Properties: when the first failure is a timeout (exit 4), the launcher reads the ranks' progress
# records (RUN_DIR/progress-R, "seq N<TAB>sync point") and its block names the STUCK rank (the one
# last seen at the earliest sequence; at exit, the ranks the deadline's line names), the sync point
# and sequence it was last seen at, and the ranks that were waiting for it with their sequences,
# not "rank W failed first" for the rank W whose watchdog fired; the exit status stays 4. Checked
# with records a plain program writes itself (fast; the name moves with the records: the control;
# a tie or no records leave the ordinary block) and with the mlp trainer stalled on one rank
# (--stall-rank) under the shim, on mpirun and the launcher's own engine, and at exit. Also: the lines a rank printed before a stall or a fatal
# error reach the launcher's output — line-buffered by default, and with --no-line-buffered
# through the shim's stdio flush before it ends the process (a rank ended by SIGTERM in the
# teardown, which no flush reaches, loses them: the control). And: a rank killed from outside
# (SIGKILL) is the root cause even when the peer whose collective then failed is recorded first.

# shellcheck disable=SC2016  # literal $ in single quotes is on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  MARK="asr-test-$$-$RANDOM"
  need_cmd mpirun
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID
  POL=$TOP/tests/equivalence/policies/sgd-fused.yaml
}
teardown() {
  local p
  if [[ ${MARK:-} == asr-test-* ]]; then for p in $(pgrep -f "$MARK"); do kill -KILL "$p" 2>/dev/null; done; fi
  [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }
}

# block: the root-cause block of the last `run` (between its ==== lines)
block() { sed -n '/^=====/,/^=====/p' <<<"$output"; }
in_block() { [[ $(block) == *"$1"* ]] || { echo "expected in the root-cause block: $1"; show; return 1; }; }
not_in_block() { [[ $(block) != *"$1"* ]] || { echo "expected NOT in the root-cause block: $1"; show; return 1; }; }

# planted RANKS [LAUNCHER-OPTIONS...]: every rank writes its own progress record from the seq in $SEQS (one per rank,
# "-" = none), the way the shim does; rank $FIRE then exits 4 (a watchdog; with $WD, after
# printing the shim's line "ERROR $WD"), the others sleep.
planted() {
  local n=$1; shift
  run "$A" --no-preload --launcher local -n "$n" "$@" -- bash -c '
    seqs=($SEQS); s=${seqs[{rank}]}
    if [ "$s" != - ]; then
      printf "seq %s\tgradients[0] (at: \"sgd_update\") before sgd_update step %s%300s" "$s" "$s" "" \
        | head -c 319 >"$ACCELSHIM_PROGRESS_DIR/progress-{rank}"; echo >>"$ACCELSHIM_PROGRESS_DIR/progress-{rank}"
    fi
    echo "rank {rank} at $s"
    if [ {rank} = "$FIRE" ]; then
      sleep 0.5; echo "watchdog of {rank} fires"
      [ -n "${WD:-}" ] && echo "[accelshim rank {rank}] ERROR $WD" >&2
      exit 4
    fi
    sleep 100 # '"$MARK"
}

@test "records: the stuck rank (earliest sequence) is named, with its sync point and the waiting ranks" {
  SEQS='5 3 5' FIRE=2 planted 3
  status_is 4
  in_block "rank 1 is stuck: it did not arrive at sequence 5"
  in_block 'rank 1 was last seen at sequence 3 (step 3): gradients[0] (at: "sgd_update") before sgd_update step 3'
  in_block "ranks waiting for it: 0, 2 (last at sequence 5)"
  in_block "rank 2's watchdog fired first: exit code 4"
  in_block "    | rank 1 at 3"
  not_in_block "failed first"
  # ranks ahead of it at different sequences are grouped by sequence; the sequence it did not
  # arrive at is the one in the watchdog's line (the firing rank's record may have moved on)
  SEQS='5 3 4 5' FIRE=0 WD='watchdog: g (at: "u"), sequence number 4, has not completed after 3.0 s (timeout 3 s)' planted 4
  status_is 4
  in_block "rank 1 is stuck: it did not arrive at sequence 4"
  in_block "ranks waiting for it: 2 (last at sequence 4); 0, 3 (last at sequence 5)"
  # --max-restarts keeps each try's cause: the stuck rank, not the watchdog's
  SEQS='5 3' FIRE=0 planted 2 --max-restarts 1
  status_is 4
  contains "try 1: the job timed out at sequence 5: rank 1 stuck, last seen at sequence 3 (step 3): "
  # the watchdog of the meeting at exit
  SEQS='9 8' FIRE=0 WD='watchdog: at exit: the exit exchange has not completed after 3.0 s (timeout 3 s)' planted 2
  status_is 4
  in_block "rank 1 is stuck: it did not arrive at the end of the job"
  in_block "rank 1 was last seen at sequence 8 (step 8): "
  # the deadline at exit names the ranks that did not reach the end, though every record is at
  # the same sequence (the stuck rank began the last sync point, then stalled before its end)
  SEQS='4 4 4' FIRE=1 WD='exit: rank(s) 0, 2 did not reach the end of the job within 3 s (debug.timeout_s; rank 1 of 3 waited): ...' planted 3
  status_is 4
  in_block "ranks 0, 2 are stuck: they did not arrive at the end of the job"
  in_block "rank 1's deadline at exit fired first: exit code 4"
  in_block "rank 0 was last seen at sequence 4 (step 4): "
  in_block "rank 2 was last seen at sequence 4 (step 4): "
  in_block "ranks waiting for it: 1 (last at sequence 4)"
}

@test "records (control): the name moves with the records; no record at all means no collective begun" {
  SEQS='2 7 7' FIRE=1 planted 3
  status_is 4
  in_block "rank 0 is stuck: it did not arrive at sequence 7"
  in_block "ranks waiting for it: 1, 2 (last at sequence 7)"
  not_in_block "rank 1 is stuck: "
  SEQS='4 - 4' FIRE=0 planted 3
  status_is 4
  in_block "rank 1 is stuck: it did not arrive at sequence 4"
  in_block "rank 1 was last seen before any sync point (no progress record)"
}

@test "records (control): every rank at the same sequence, or no records: the ordinary block" {
  SEQS='6 6' FIRE=1 planted 2
  status_is 4
  in_block "rank 1 failed first: exit code 4"
  in_block "every rank began sequence 6: none is behind"
  not_in_block "stuck: "
  SEQS='- -' FIRE=1 planted 2
  status_is 4
  in_block "rank 1 failed first: exit code 4"
  not_in_block "stuck: "
}

# stall ENGINE-OPTIONS... -- MLP-OPTIONS...: the trainer on hostcuda with the shim, watchdog 3 s
stall() {
  local eng=()
  while [ "$1" != -- ]; do eng+=("$1"); shift; done; shift
  run timeout -k 5 90 "$A" --cpu --policy "$POL" --timeout 3 "${eng[@]}" -- "$TRAINER" --steps 6 --batch 4 \
    --shard-rank '{rank}' --shard-count '{world_size}' "$@"
}

@test "the mlp trainer stalled on rank 1: the block names rank 1 and its sync point (mpirun, own engine)" {
  need_trainer
  need_shim
  for eng in mpirun local; do
    stall --launcher "$eng" -n 3 -- --stall-rank 1 --stall-at-step 2
    status_is 4
    in_block 'rank 1 is stuck: it did not arrive at sequence 2'
    in_block 'rank 1 was last seen at sequence 1: gradients[0] (at: "sgd_update") before sgd_update'
    # a waiting rank may begin its next sync point once the watchdog's abort fails its collective
    block | grep -Eq 'ranks waiting for it: (0, 2 \(last at sequence [23]\)|[02] \(last at sequence 2\); [02] \(last at sequence 3\))$' \
      || { echo "$eng: ranks 0 and 2 not named as the waiting ranks"; show; false; }
    in_block "    | mlp: --stall-rank: rank 1 stalls before step 2's update"
    not_in_block "failed first"
  done
}

@test "the mlp trainer stalled on rank 0 at step 1: the block names rank 0 (the name is not fixed)" {
  need_trainer
  need_shim
  stall -n 2 -- --stall-rank 0 --stall-at-step 1
  status_is 4
  in_block 'rank 0 is stuck: it did not arrive at sequence 1'
  in_block 'rank 0 was last seen at sequence 0: '
  block | grep -Eq 'ranks waiting for it: 1 \(last at sequence [12]\)$' || { echo "rank 1 not named as waiting"; show; false; }
  not_in_block "rank 1 is stuck: "
}

@test "the mlp trainer stalled while its peer is at exit: the block names the stalled rank (mpirun)" {
  need_trainer
  need_shim
  # rank 1 runs 5 steps and waits at exit; rank 0 stalls before step 5's update (both began
  # sequence 4 last: only the deadline's own line tells them apart)
  run timeout -k 5 90 "$A" --cpu --backend mpi --policy "$POL" --timeout 3 -n 2 -- bash -c 'exec "$0" "$@" --steps $((10 - 5 * {rank}))' \
    "$TRAINER" --batch 4 --shard-rank '{rank}' --shard-count '{world_size}' --stall-rank 0 --stall-at-step 5
  status_is 4
  in_block "rank 0 is stuck: it did not arrive at the end of the job"
  in_block 'rank 0 was last seen at sequence 4: gradients[0] (at: "sgd_update") before sgd_update'
  in_block "ranks waiting for it: 1 (last at sequence 4)"
  in_block "    | mlp: --stall-rank: rank 0 stalls before step 5's update"
  not_in_block "failed first"
}

@test "lines printed before a stall reach the output: line-buffered, and through the shim's flush" {
  need_trainer
  need_shim
  stall -n 2 -- --stall-rank 1 --stall-at-step 2
  status_is 4
  contains "[rank 1] step 1 loss"     # the stuck rank, ended by SIGTERM in the teardown
  contains "[rank 0] step 1 loss"     # the rank whose watchdog ended it
  # the program's own buffering: the watchdog's rank keeps its lines (the shim flushes stdio
  # before it exits), the stuck rank, killed by SIGTERM, loses them (control: the check can fail)
  stall --no-line-buffered -n 2 -- --stall-rank 1 --stall-at-step 2
  status_is 4
  contains "[rank 0] step 1 loss"
  lacks "[rank 1] step 1 loss"
}

@test "lines printed before a fatal error (nan_check, exit 5) reach the output, also with --no-line-buffered" {
  need_trainer
  need_shim
  for lb in --line-buffered --no-line-buffered; do
    stall "$lb" --nan-check -n 2 -- --nan-rank 1 --nan-at-step 3
    status_is 5
    in_block "rank 1 failed first: exit code 5"
    contains "[rank 1] step 2 loss"
    lacks "[rank 1] step 3 loss"
  done
}

# killed: rank 1 is killed (SIGKILL, from outside the launcher); rank 0 sees it gone (a marker
# rank 1 leaves just before) and fails at once with exit 2, as a survivor's failed collective
# does. Both ends fall within milliseconds; which record comes first is up to the scheduler (the
# order that blamed the survivor shows only now and then, so this guards the outcome rather than
# reproducing that order every time).
killed() {
  rm -f "$T/rank1-dying"
  run "$A" --no-preload --launcher local -n 2 -- bash -c '
    if [ {rank} = 0 ]; then
      until [ -e "'"$T"'/rank1-dying" ]; do sleep 0.01; done
      echo "rank 0: collective failed"; exit 2
    fi
    sleep 0.3; : >"'"$T"'/rank1-dying"; kill -KILL $$
    sleep 100 # '"$MARK"
}

@test "a rank killed from outside is the root cause, not the peer whose collective then failed" {
  local i
  for i in 1 2 3; do   # the two records come in either order
    killed
    [ "$status" -eq 137 ] || { echo "try $i: status $status, want 137"; show; return 1; }
    in_block "rank 1 failed first: signal SIGKILL"
  done
}
