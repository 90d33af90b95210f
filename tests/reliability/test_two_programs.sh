#!/usr/bin/env bash
# Property: a rank command that runs two CUDA programs one after the other (a script: a
# preprocessing step, then the trainer) works under mpirun. Open MPI lets each rank initialise MPI
# once, so the first program that opens the collectives joins the job (its ranks stay in step:
# bit-identical parameters) and the second runs as a plain single-process program, after one
# line saying so (its ranks train alone: different parameters, each on its own shard). Exit 0.
# Before: the second MPI_Init_thread aborted the job (exit 1).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1"
need_mpirun

script=$RL_TMP/train.sh
cat >"$script" <<'SH'
#!/bin/sh
# rank command: a preprocessing step with CUDA, then the trainer (both the bundled mlp)
"$MLP" --steps 2 --batch 2 "$@" | sed 's/^/prep: /' || exit 1
exec "$MLP" --steps 3 --batch 2 "$@"
SH
chmod +x "$script"
logs=$RL_TMP/rank{rank}.log
T_MPIRUN_TIMEOUT=120 t_mpirun 2 -x LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" -x HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" \
    -x T_PRELOAD="$RL_SHIM" -x MLP="$RL_MLP" -x ACCELSHIM_POLICY="$RL_POL/sgd-fused.yaml" \
    -x ACCELSHIM_BACKEND=mpi -x T_RANK_LOG="$logs" bash -c "$(t_rank_cmd)" "$script" >"$RL_TMP/out" 2>&1
rc=$?
show() { for r in 0 1; do echo "--- rank $r"; tail -n 15 "$RL_TMP/rank$r.log"; done; tail -n 20 "$RL_TMP/out"; }
[ "$rc" -eq 0 ] || { show; fail "mpirun: exit $rc, expected 0"; }
for r in 0 1; do
    n=$(grep -c "already joined the job's MPI world.*runs as a plain single-process program" "$RL_TMP/rank$r.log")
    [ "$n" -eq 1 ] || { show; fail "rank $r: $n line(s) saying the second program runs alone, expected 1"; }
done
p0=$(grep '^prep: checksum' "$RL_TMP/rank0.log"); p1=$(grep '^prep: checksum' "$RL_TMP/rank1.log")
[ -n "$p0" ] && [ "$p0" = "$p1" ] || { show; fail "the first program's ranks differ (not in one job?): rank 0 [$p0], rank 1 [$p1]"; }
s0=$(grep '^checksum' "$RL_TMP/rank0.log"); s1=$(grep '^checksum' "$RL_TMP/rank1.log")
[ -n "$s0" ] && [ -n "$s1" ] || { show; fail "the second program printed no checksum"; }
[ "$s0" != "$s1" ] || { show; fail "the second program's ranks are identical ([$s0]): they were not alone"; }
grep -m1 "runs as a plain single-process program" "$RL_TMP/rank1.log"
echo "ok: first program joined the job (ranks identical: $p0); second ran alone on each rank (rank 0 [$s0], rank 1 [$s1]); exit 0"
