#!/usr/bin/env bash
# Property: an nvcc -cudart shared program's cooperative launches (cudaLaunchCooperativeKernel,
# cudaLaunchKernelExC with the cooperative attribute), the too-large refusal, cudaDeviceSetLimit /
# GetLimit and device new/delete work on hostcudart + hostcuda (rt_coop.cu, its checks), on 1 and
# 3 host threads. Control: the same grid-sync kernel launched with <<<>>> must be reported as a
# failed launch by the same program (exit 1), not give a result or hang.
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests
D=$B/hostcudart
t_need "$D/rt_coop" "$D/libcudart.so.13" "$B/hostcuda/libcuda.so.1"
export LD_LIBRARY_PATH=$D:$B/hostcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC HOSTCUDA_SMS
t_tmp
for th in 1 3; do
    HOSTCUDA_THREADS=$th HOSTCUDA_KERNEL_TIMEOUT_S=60 timeout 90 "$D/rt_coop" >"$T_TMP/ok" 2>&1
    rc=$?
    [ "$(grep -c '^ok ' "$T_TMP/ok")" -ge 15 ] && ! grep -q '^FAIL' "$T_TMP/ok"
    t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "cooperative launches, limits, device new/delete (HOSTCUDA_THREADS=$th)" ||
        t_show "$T_TMP/ok"
done
RT_COOP_CONTROL=1 HOSTCUDA_KERNEL_TIMEOUT_S=60 timeout 90 "$D/rt_coop" >"$T_TMP/ctl" 2>&1
rc=$?
grep -q '^launch (how 2): cudaErrorLaunchFailure$\|^launch (how 2): cudaErrorIllegalInstruction$' "$T_TMP/ctl" &&
    grep -q '^FAIL rc_shift with <<<>>>: wrong elements (-1: the launch failed): got -1, want 0$' "$T_TMP/ctl"
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "control: the grid-sync kernel launched with <<<>>> fails, reported" ||
    t_show "$T_TMP/ctl"
t_done
