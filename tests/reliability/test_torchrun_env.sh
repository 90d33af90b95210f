#!/usr/bin/env bash
# Property: processes started the way torchrun starts them (RANK, WORLD_SIZE, LOCAL_RANK,
# LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; no mpirun) form one synchronised job: the shim's
# ranks meet through NCCL (hostnccl here) at MASTER_ADDR:MASTER_PORT+1, leaving MASTER_PORT to
# torchrun's store (held open by a stand-in listener during the run), and 2 ranks with batch 2
# each end bit-identical and equal to 1 rank with batch 4; rank 0 prints the job line (the
# ranks' figures exchanged at exit without MPI or CUDA).
#   control:  the same 2 processes with no policy (sync optional): the ranks differ, and the
#             comparison says so (it can fail).
#   refused:  torchrun and Open MPI disagreeing on the rank, and RANK without WORLD_SIZE: exit 2,
#             one line naming the variables.
# The variables are set by hand; real torchrun is not installed by scripts/install-deps.sh
# (Debian 12's python3-torch pulls in 229 packages).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_HOSTNCCL_DIR/libnccl.so.2" "$T_EQUIV"

# rank R of 2 as torchrun would start it; extra KEY=VALUE words first, then "--", then mlp args
tr_rank() {
    local r=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u SLURM_PROCID -u SLURM_NTASKS \
        LD_PRELOAD="$RL_SHIM" LD_LIBRARY_PATH="$T_HOSTCUDA_DIR:$T_HOSTNCCL_DIR" \
        HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" RANK="$r" WORLD_SIZE=2 LOCAL_RANK="$r" LOCAL_WORLD_SIZE=2 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT="$PORT" "${envs[@]}" \
        timeout -k 5 90 "$RL_MLP" --steps 6 --batch 2 --shard-rank "$r" --shard-count 2 "$@"
}
# both ranks; their output in $RL_TMP/tr-R.out; fails unless both exit 0
tr_job() {
    local tag=$1 pids=() r rc=0; shift
    for r in 0 1; do
        tr_rank "$r" "$@" --save "$RL_TMP/$tag-$r.bin" >"$RL_TMP/$tag-$r.out" 2>&1 &
        pids+=($!)
    done
    for r in 0 1; do wait "${pids[$r]}" || { rc=1; echo "# rank $r of '$tag' failed:"; tail -n 15 "$RL_TMP/$tag-$r.out" | sed 's/^/#   /'; }; done
    return $rc
}

PORT=$(t_free_port 2)
# a stand-in for torchrun's store on MASTER_PORT: the shim must meet elsewhere
store=''
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' "$PORT" &
    store=$!
fi
tr_job sync ACCELSHIM_POLICY="$RL_POL/sgd-fused.yaml" ACCELSHIM_LOG=info -- || fail "the torchrun-style job failed"
[ -n "$store" ] && kill "$store" 2>/dev/null
grep -q "world size 2 (WORLD_SIZE)" "$RL_TMP/sync-1.out" || fail "rank 1 did not take its world from WORLD_SIZE"
grep -q "meet through NCCL at 127.0.0.1:$((PORT + 1))" "$RL_TMP/sync-0.out" \
    || { t_show "$RL_TMP/sync-0.out"; fail "the ranks did not meet at MASTER_PORT + 1"; }
grep -q "collectives backend: nccl" "$RL_TMP/sync-0.out" || fail "not the nccl backend"
# no MPI world: the figures of rank 0's job line travel over the exit meeting's TCP connections
grep -q "INFO report: job: 2 rank(s); slowest rank [01]" "$RL_TMP/sync-0.out" \
    || { t_show "$RL_TMP/sync-0.out"; fail "rank 0 printed no job line"; }
LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$RL_KLIBS "$RL_MLP" --steps 6 --batch 4 \
    --save "$RL_TMP/ref.bin" >/dev/null 2>&1 || fail "the 1-rank reference run failed"
t_equiv "$RL_TMP/eq" --ref "$RL_TMP/ref.bin" "$RL_TMP/sync-0.bin" "$RL_TMP/sync-1.bin" \
    || { t_show "$RL_TMP/eq"; fail "torchrun-style ranks differ from each other or from 1 rank x 4 batch"; }
echo "ok: RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT, 2 processes: bit-identical ranks = 1 rank, batch 4 ($(tail -n 1 "$RL_TMP/eq"))"

PORT=$(t_free_port 2)
tr_job nosync ACCELSHIM_SYNC=optional -- || fail "the unsynchronised control job failed"
if t_equiv "$RL_TMP/eq" --ref "$RL_TMP/ref.bin" "$RL_TMP/nosync-0.bin" "$RL_TMP/nosync-1.bin"; then
    fail "control: unsynchronised ranks compared equal (the comparison proves nothing)"
fi
echo "ok: control without a policy: the comparison fails ($(tail -n 1 "$RL_TMP/eq"))"

tr_rank 1 OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 -- --steps 1 >"$RL_TMP/conflict.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "conflicting sources: torchrun says rank 1 of 2 (RANK, WORLD_SIZE), Open MPI says rank 0 of 2" "$RL_TMP/conflict.out" \
    || { t_show "$RL_TMP/conflict.out"; fail "torchrun vs Open MPI disagreeing: exit $rc, expected 2 with one line"; }
[ "$(grep -c . "$RL_TMP/conflict.out")" -eq 1 ] || { t_show "$RL_TMP/conflict.out"; fail "the refusal is not one line"; }
env -u WORLD_SIZE LD_PRELOAD="$RL_SHIM" LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" RANK=1 \
    timeout 30 "$RL_MLP" --steps 1 >"$RL_TMP/partial.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "RANK=1 is set but WORLD_SIZE is not (torchrun sets both)" "$RL_TMP/partial.out" \
    || { t_show "$RL_TMP/partial.out"; fail "RANK without WORLD_SIZE: exit $rc, expected 2 naming both"; }
echo "ok: conflicting sources and RANK alone are refused with one line, exit 2"
