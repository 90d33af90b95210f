#!/usr/bin/env bash
# Property: ranks without an MPI world (accelerate-run --launcher local: NCCL_COMM_ID, hostnccl)
# still compare the parameter digest and gather the job summary at exit: both travel over the
# exit meeting's TCP connections (collectives/coll_meet.c), without CUDA.
#   control:   ranks initialised differently (--init per-process), rank 0's parameters broadcast
#              once and the gradients averaged (examples/mlp.yaml): exit 0, rank 0 says
#              "parameters agree" over the 2704-byte parameter buffer and prints the job line
#              (2 ranks, the slowest named); rank 1 prints no job line.
#   mismatch:  a parameters rule (broadcast once at the start) and no gradient rule (sync:
#              optional), each rank on its own data shard: the ranks end apart -> rank 0 names
#              rank 1 ("ranks ended with different parameters"), rank 1 says its own differs,
#              exit 8 (the comparison of the control can fail).
#   different exchanges: rank 0's policy has a parameters rule, rank 1's none: rank 1 is in the
#              job summary's exchange while rank 0 is in the digest's. Rank 0 names rank 1 and
#              closes the connections, rank 1 is let go at once, neither takes the other's words
#              (no "different parameters", no job line), exit 0 without a watchdog. Without the
#              check of the exchange's name rank 0 compared rank 1's job figures as a digest
#              (exit 8): that is what this case catches.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_BUILD/tests/hostnccl/libnccl.so.2" \
    "$RL_LAUNCHER"

mlp=("$RL_MLP" --steps 3 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')
nompi=(-n 2 --backend nccl --launcher local --timeout 20 --env ACCELSHIM_LOG=info)
# not_mpi: the ranks met through NCCL_COMM_ID, not as one MPI world
not_mpi() {
    grep -q 'rank 0\] INFO sync: collectives backend: nccl' "$RL_TMP/out" \
        || { rl_show; fail "$1: rank 0 did not use the nccl backend"; }
    grep -q 'OMPI_COMM_WORLD\|mpirun' "$RL_TMP/out" && { rl_show; fail "$1: the ranks ran under MPI"; }
    return 0
}

rl_launch 120 "${nompi[@]}" --policy "$RL_TOP/examples/mlp.yaml" -- "${mlp[@]}" --init per-process
[ "$RL_RC" -eq 0 ] || { rl_show; fail "control (synchronised job, no MPI): exit $RL_RC"; }
not_mpi control
grep -q 'rank 0\] INFO digest: parameters agree on all 2 ranks: digest [0-9a-f]* over 1 buffer(s), 2704 bytes' "$RL_TMP/out" \
    || { rl_show; fail "control: no 'parameters agree' line over the 2704-byte parameter buffer"; }
grep -q 'different parameters' "$RL_TMP/out" && { rl_show; fail "control: a difference reported"; }
grep -q 'rank 0\] INFO report: job: 2 rank(s); slowest rank [01] (wall [0-9.]* s); mean time in communication [0-9.]*% of wall time' "$RL_TMP/out" \
    || { rl_show; fail "control: rank 0 printed no job line"; }
grep -q 'rank 1\] INFO report: job:' "$RL_TMP/out" && { rl_show; fail "control: rank 1 printed a job line"; }
grep -qE 'not compared|no job summary|exchange [0-9]+ after the exit meeting' "$RL_TMP/out" \
    && { rl_show; fail "control: an exchange at exit was skipped or failed"; }
echo "ok: control (no MPI; initialised differently, broadcast + gradient sync) -> parameters agree, rank 0's job line, exit 0"
grep -E 'rank 0\] INFO (digest|report: job)' "$RL_TMP/out" | sed 's/^/  | /'

rl_params_only_policy "$RL_TMP/params-only.yaml"
rl_launch 120 "${nompi[@]}" --policy "$RL_TMP/params-only.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 8 ] || { rl_show; fail "ranks trained apart (no MPI): exit $RL_RC, expected 8"; }
not_mpi mismatch
rl_digest_mismatch_named mismatch
echo "ok: ranks trained apart (no MPI) -> 'ranks ended with different parameters', rank 1 named, exit 8"
grep -E 'ERROR digest' "$RL_TMP/out" | sed 's/^/  | /'

# ranks in different exchanges: rank 0's policy has a parameters rule (that never fires), rank
# 1's none, so rank 1 skips the digest and is in the job summary's exchange while rank 0 is in the
# digest's. Rank 0 names rank 1 and closes the meeting's connections; rank 1's exchange fails at
# once (no wait), both say what was not exchanged, both exit 0 (no watchdog, no exit 4).
cat >"$RL_TMP/pol-0.yaml" <<'P'
version: 1
sync: optional
gradients:
  - at: "sgd_update"
    buffer: { arg: 1, count_arg: 2 }
    dtype: f32
parameters:
  - at: "no_such_kernel"
    buffer: { arg: 1, region: allocation }
    dtype: f32
P
sed '/^parameters:/,$d' "$RL_TMP/pol-0.yaml" >"$RL_TMP/pol-1.yaml"
rl_launch 120 "${nompi[@]}" --env "ACCELSHIM_POLICY=$RL_TMP/pol-{rank}.yaml" -- "${mlp[@]}"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "ranks in different exchanges: exit $RL_RC, expected 0"; }
not_mpi "different exchanges"
grep -q 'rank 0\] WARN coll: collectives: exit meeting: exchanging the parameter digest failed at rank 1: it is in another exchange' "$RL_TMP/out" \
    || { rl_show; fail "different exchanges: rank 0 did not name rank 1 as in another exchange"; }
grep -q 'rank 1\] WARN coll: collectives: exit meeting: exchanging the job summary failed at rank 0: it closed the connection' "$RL_TMP/out" \
    || { rl_show; fail "different exchanges: rank 1 did not say that rank 0 closed the exchange"; }
grep -q 'rank 0\] WARN digest: exchanging the parameter digests failed' "$RL_TMP/out" \
    || { rl_show; fail "different exchanges: rank 0 did not say the parameters were not compared"; }
grep -q 'rank 0\] WARN report: gathering the ranks. figures failed' "$RL_TMP/out" \
    || { rl_show; fail "different exchanges: rank 0 did not say there is no job summary"; }
bad='ERROR (watchdog|exit)|different parameters|INFO report: job:'
grep -qE "$bad" "$RL_TMP/out" && { grep -E "$bad" "$RL_TMP/out"; rl_show; fail "different exchanges: a wait ran out, or mixed words were compared or summed"; }
echo "ok: ranks in different exchanges at exit: rank 0 names rank 1, rank 1 is let go at once, nothing mixed, exit 0"
grep -E 'WARN (coll|digest|report: gathering)' "$RL_TMP/out" | sed 's/^/  | /'
