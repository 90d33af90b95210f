#!/usr/bin/env bash
# test_ptx_equivalence_mpi.sh — the whole MPI equivalence suite (tests/equivalence/equiv_suite.sh
# mpi: N = 2, 4; sgd, adam, clip, init broadcast; wires same/bf16/f16; its two negative controls)
# once more with every kernel run by hostcuda's PTX interpreter (HOSTCUDA_EXEC=ptx; mpirun passes
# the environment to the ranks). First a one-step run of the trainer must show the interpreter's
# HOSTCUDA_EXEC_STATS line for its forward kernel: without one, hostcuda has no interpreter (it
# would run the twins and prove nothing) and the test skips. About 35 s on 2 cores.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_need "$T_MLP" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_tmp
LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$T_KLIBS HOSTCUDA_EXEC=ptx HOSTCUDA_EXEC_STATS=1 \
    timeout -k 5 120 "$T_MLP" --steps 1 --batch 4 >"$T_TMP/probe.log" 2>&1 ||
    { t_show "$T_TMP/probe.log"; t_fail "the trainer failed with HOSTCUDA_EXEC=ptx"; }
grep -Eq '^hostcuda: exec .*linear_forward.* launches=[1-9]' "$T_TMP/probe.log" ||
    t_skip "no HOSTCUDA_EXEC_STATS line for linear_forward: hostcuda has no PTX interpreter"
echo "# the interpreter runs the trainer's kernels; the MPI equivalence suite follows with HOSTCUDA_EXEC=ptx"
export HOSTCUDA_EXEC=ptx
exec bash "$T_TOP/tests/equivalence/equiv_suite.sh" mpi
