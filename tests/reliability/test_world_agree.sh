#!/usr/bin/env bash
# Property: every description of the world a rank is given must agree, or the rank stops at once
# (exit 2, one line naming both variables) instead of training alone or waiting forever for a rank
# that does not exist: the ACCELSHIM_* override against Open MPI's, torchrun's and PMIx's variables,
# and a rank that is not below the world size. Variables that agree are accepted (controls), and
# Slurm's, which every launcher inside an allocation inherits, are not compared. Under a real
# mpirun, `-x ACCELSHIM_RANK=0` and a stale ACCELSHIM_WORLD_SIZE=1 end the job with exit 2 in
# seconds (before: a deadlock in MPI_Finalize / MPI_Comm_dup, or a rank training alone).
. "$(dirname "$0")/lib.sh"
need "$RL_SHIM" "$RL_MLP" "$T_BUILD/tests/intercept/remap"
REMAP=$T_BUILD/tests/intercept/remap
export ITEST_PTX=$T_BUILD/tests/intercept/kernels.ptx HOSTCUDA_KERNEL_LIBS=$T_BUILD/tests/intercept/libitest_kernels.so

# world CASE_NAME WANT_RC WANT_REGEX ENV...: the device-query program as one rank (no collectives)
world() {
    local name=$1 want=$2 re=$3; shift 3
    env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_LOCAL_RANK -u PMIX_RANK \
        -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_LOCALID -u RANK -u WORLD_SIZE -u LOCAL_RANK \
        -u LOCAL_WORLD_SIZE -u ACCELSHIM_RANK -u ACCELSHIM_WORLD_SIZE ACCELSHIM_SYNC=optional \
        HOSTCUDA_DEVICES=8 LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" "$@" LD_PRELOAD="$RL_SHIM" \
        timeout -k 5 30 "$REMAP" >"$RL_TMP/$name.out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$re" "$RL_TMP/$name.out" &&
       { [ "$want" -eq 0 ] || [ "$(grep -c . "$RL_TMP/$name.out")" -eq 1 ]; }; then
        t_case 0 "$name: exit $rc ($(head -c 200 "$RL_TMP/$name.out" | head -n 1))"
    else
        t_case 1 "$name: exit $rc (want $want), want /$re/$([ "$want" -ne 0 ] && echo ' as the only line')"
        t_show "$RL_TMP/$name.out"
    fi
}
world stale-size 2 '^accelshim: world: ACCELSHIM_WORLD_SIZE=1 contradicts OMPI_COMM_WORLD_SIZE=2 \(Open MPI' \
    ACCELSHIM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2
world stale-rank 2 '^accelshim: world: ACCELSHIM_RANK=0 contradicts OMPI_COMM_WORLD_RANK=1' \
    ACCELSHIM_RANK=0 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2
world pmix-rank 2 '^accelshim: world: OMPI_COMM_WORLD_RANK=1 contradicts PMIX_RANK=0' \
    OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 PMIX_RANK=0
world torchrun-vs-override 2 '^accelshim: world: ACCELSHIM_WORLD_SIZE=4 contradicts WORLD_SIZE=2 \(torchrun' \
    ACCELSHIM_RANK=1 ACCELSHIM_WORLD_SIZE=4 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999
world rank-alone 2 '^accelshim: world: rank 3 \(ACCELSHIM_RANK\) is not below the world size 1 \(default\)' \
    ACCELSHIM_RANK=3
world rank-past-size 2 '^accelshim: world: rank 1 \(OMPI_COMM_WORLD_RANK\) is not below the world size 1 \(SLURM_NTASKS\)' \
    OMPI_COMM_WORLD_RANK=1 SLURM_NTASKS=1
# controls: the same world said several ways; Slurm's inherited size is not compared
world agree-all 0 'count=1 get1=101 ordinal=1' \
    ACCELSHIM_RANK=1 ACCELSHIM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 PMIX_RANK=1 \
    RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999
world slurm-inherited 0 'count=1 get1=101 ordinal=1' \
    OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 SLURM_NTASKS=8 SLURM_PROCID=0

# the same under a real mpirun: the job ends with exit 2 in seconds, the line on the rank that
# disagrees (every rank with a stale size)
if command -v mpirun >/dev/null 2>&1; then
    POL=$RL_POL/sgd-fused.yaml
    for c in "ACCELSHIM_RANK=0|ACCELSHIM_RANK=0 contradicts OMPI_COMM_WORLD_RANK=1" \
             "ACCELSHIM_WORLD_SIZE=1|ACCELSHIM_WORLD_SIZE=1 contradicts OMPI_COMM_WORLD_SIZE=2"; do
        kv=${c%%|*} re=${c#*|}
        rl_mpirun 2 60 "$kv" ACCELSHIM_POLICY="$POL" ACCELSHIM_BACKEND=mpi ACCELSHIM_TIMEOUT_S=3 -- --steps 3 --batch 2
        if [ "$RL_RC" -eq 2 ] && [ "$RL_SECS" -le 33 ] && grep -q -- "$re" "$RL_TMP/out"; then
            t_case 0 "mpirun -x $kv: exit 2 in ${RL_SECS}s naming it"
        else
            t_case 1 "mpirun -x $kv: exit $RL_RC in ${RL_SECS}s (want 2 within 33 s, a line /$re/)"
            t_show "$RL_TMP/out"
        fi
    done
    # control: the override agreeing with Open MPI trains as usual
    rl_mpirun 2 60 'ACCELSHIM_WORLD_SIZE=2' ACCELSHIM_POLICY="$POL" ACCELSHIM_BACKEND=mpi ACCELSHIM_TIMEOUT_S=3 -- --steps 3 --batch 2
    t_case "$RL_RC" "mpirun -x ACCELSHIM_WORLD_SIZE=2 (agreeing): exit $RL_RC"
    [ "$RL_RC" -eq 0 ] || t_show "$RL_TMP/out"
else
    echo "ok $((T_N += 1)) - # SKIP mpirun not installed"
fi
t_done
