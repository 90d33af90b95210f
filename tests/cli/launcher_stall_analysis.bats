#!/usr/bin/env bats
# The root-cause analysis of a timeout (stall_analysis in scripts/accelerate-run.d/run.bash) on
# run folders written by hand: progress records and rank tails as the ranks leave them.
# Seen once under load: rank 1 stalled before sequence 2; rank 0's watchdog aborted first, so
# rank 2's collective failed (exit 4 first, no watchdog line of its own) and ranks 0 and 2 went
# on to begin sequence 3 before they ended. The block said "did not arrive at sequence 3" (rank
# 2's record), not the sequence the watchdog waited at.
load helpers

setup() {
  P_RUN_DIR=$(mktemp -d "${BATS_TMPDIR:-/tmp}/asr-stall.XXXXXX")
  P_N=3
  # shellcheck source=scripts/accelerate-run.d/run.bash
  . "$TOP/scripts/accelerate-run.d/run.bash"
  printf 'seq 3\tgradients[0] (at: "sgd_update") before sgd_update\n' >"$P_RUN_DIR/progress-0"
  printf 'seq 1\tgradients[0] (at: "sgd_update") before sgd_update\n' >"$P_RUN_DIR/progress-1"
  printf 'seq 3\tgradients[0] (at: "sgd_update") before sgd_update\n' >"$P_RUN_DIR/progress-2"
  printf '%s\n' 'step 2 loss 0.178063244' \
    '[accelshim rank 2] ERROR coll: collectives: ncclAllReduce failed on rank 2: unhandled system error (hostnccl)' \
    >"$P_RUN_DIR/rank-2.tail"
  printf '%s\n' 'step 2 loss 0.181' \
    '[accelshim rank 0] ERROR watchdog: gradients[0] (at: "sgd_update"), sequence number 2, has not completed after 10.0 s (timeout 10 s): x' \
    >"$P_RUN_DIR/rank-0.tail"
}
teardown() { rm -rf "$P_RUN_DIR"; }

@test "the rank that ended the job has no watchdog line: another rank's watchdog line says the sequence" {
  stall_analysis 2 vm
  first=${STALL_BLOCK%%$'\n'*}
  [ "$first" = "rank 1 is stuck: it did not arrive at sequence 2" ] || { echo "block: $STALL_BLOCK"; false; }
  [ "$STALL_STUCK" = 1 ] || { echo "stuck: '$STALL_STUCK'"; false; }
}

@test "the rank that ended the job has its own watchdog line: it wins over another's" {
  echo '[accelshim rank 2] ERROR watchdog: gradients[0] (at: "sgd_update"), sequence number 2, has not completed after 10.0 s (timeout 10 s): x' \
    >>"$P_RUN_DIR/rank-2.tail"
  sed -i 's/sequence number 2/sequence number 7/' "$P_RUN_DIR/rank-0.tail"
  stall_analysis 2 vm
  first=${STALL_BLOCK%%$'\n'*}
  [ "$first" = "rank 1 is stuck: it did not arrive at sequence 2" ] || { echo "block: $STALL_BLOCK"; false; }
}
