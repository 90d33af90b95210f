#!/usr/bin/env bash
# Property: cooperative launches, device malloc/free and the context limits on hostcuda's
# interpreter (test_hc_coop on coop_kernels.ptx, on 1 and 3 host threads, and with 2 SMs, where
# the largest cooperative grid is small): a grid-wide sync across many CTAs gives CUDA's result;
# a cooperative grid larger than the device holds is COOPERATIVE_LAUNCH_TOO_LARGE; a grid sync in
# an ordinary launch ends (never hangs) with one hostcuda: line naming the kernel, the PTX line and
# the cooperative launch it needs; free of what malloc did not return, or twice, is
# LAUNCH_FAILED naming kernel, PTX line, thread, address; CU_LIMIT_STACK_SIZE decides how deep a
# recursion may go; CU_LIMIT_PRINTF_FIFO_SIZE caps device printf, saying what was dropped;
# virtual functions and function pointers call the right function, a call through a pointer to
# data is ILLEGAL_ADDRESS naming it.
# Controls: the grid check fails for the kernel without a grid barrier (inside test_hc_coop);
# the recursion that fits a raised stack limit overflows the default one; with the default FIFO
# every printf line appears.
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/test_hc_coop
PTX=$H/coop_kernels.ptx
t_need "$RUN" "$PTX" "$H/libcuda.so.1"
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC HOSTCUDA_SMS
t_tmp
for cfg in "HOSTCUDA_THREADS=1" "HOSTCUDA_THREADS=3" "HOSTCUDA_THREADS=2 HOSTCUDA_SMS=2"; do
    env $cfg HOSTCUDA_KERNEL_TIMEOUT_S=100 timeout 120 "$RUN" "$PTX" >"$T_TMP/ok" 2>&1
    rc=$?
    grep -q "^control: co_shift_cta .* has [1-9][0-9]* wrong elements$" "$T_TMP/ok" &&
        grep -q "^test_hc_coop: all checks passed$" "$T_TMP/ok"
    t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "grid sync, largest grid / one CTA more, malloc/free, limits, virtual calls ($cfg)" ||
        t_show "$T_TMP/ok"
done
grep -q "^gridmax: 2 blocks of 1024 threads per SM x 2 SMs = 4$" "$T_TMP/ok"
t_case $? "HOSTCUDA_SMS=2: the largest cooperative grid of 1024-thread blocks is 4" || t_show "$T_TMP/ok"

fault() { # case arg env... -> stdout+stderr in $T_TMP/$1$2
    local c=$1 a=$2; shift 2
    env "$@" HOSTCUDA_KERNEL_TIMEOUT_S=60 timeout 90 "$RUN" "$PTX" "$c" "$a" >"$T_TMP/$c$a" 2>&1
    echo "rc=$?" >>"$T_TMP/$c$a"
}
has() { grep -qE -- "$2" "$T_TMP/$1" || { echo "# $1: no line matching: $2"; t_show "$T_TMP/$1"; return 1; }; }

fault noncoop ""
has noncoop "^sync: CUDA_ERROR_ILLEGAL_INSTRUCTION$" &&
    has noncoop "^hostcuda: trap in co_shift \(PTX line [0-9]+: trap;\) block \(0,0,0\) thread \(0,0,0\): the kernel reads the grid workspace \(%envreg1:%envreg2\), which only a cooperative launch has: a grid-wide sync \(cooperative_groups::this_grid\(\)\.sync\(\)\) needs cuLaunchCooperativeKernel / cudaLaunchCooperativeKernel$"
t_case $? "grid sync in an ordinary launch: ILLEGAL_INSTRUCTION and a line naming kernel, PTX line, the launch it needs"

fault freebad ""
has freebad "^sync: CUDA_ERROR_LAUNCH_FAILED$" &&
    has freebad "^hostcuda: free of 0x[0-9a-f]+ in co_free_bad \(PTX line [0-9]+: call\.uni\) block \(0,0,0\) thread \(3,0,0\): not a block device malloc returned, or one already freed$"
t_case $? "free of an address device malloc did not return: LAUNCH_FAILED, one line with kernel, PTX line, thread"
fault freetwice ""
has freetwice "^sync: CUDA_ERROR_LAUNCH_FAILED$" &&
    has freetwice "^hostcuda: free of 0x[0-9a-f]+ in co_free_twice \(PTX line [0-9]+: call\.uni\) block \(0,0,0\) thread \(0,0,0\): not a block device malloc returned, or one already freed$"
t_case $? "the same pointer freed twice: LAUNCH_FAILED naming it"

fault badcall ""
has badcall "^sync: CUDA_ERROR_ILLEGAL_ADDRESS$" &&
    has badcall "^hostcuda: indirect call in co_fnptr \(PTX line [0-9]+: call .*\) block \(0,0,0\) thread \(0,0,0\): 0x[0-9a-f]+ is not the address of a device function of this module$"
t_case $? "a call through a pointer to data: ILLEGAL_ADDRESS, one line with kernel, PTX line, thread, address"

fault deep 50
has deep50 "^sync: CUDA_SUCCESS$" && has deep50 "^result: ([0-9]+) \(want \1\)$"
t_case $? "recursion 50 deep with the default CU_LIMIT_STACK_SIZE: CUDA's result"
fault deep 500
has deep500 "^sync: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES$" &&
    has deep500 "^hostcuda: stack overflow in co_deep \(PTX line [0-9]+: call\.uni .*\) block \(0,0,0\) thread \(0,0,0\): call depth [0-9]+, 16416 bytes of local memory per thread$"
t_case $? "control: recursion 500 deep overflows the default stack (LAUNCH_OUT_OF_RESOURCES, named)"
mv "$T_TMP/deep500" "$T_TMP/deep500.default"
fault deep 500 TEST_HC_COOP_STACK=65536
has deep500 "^sync: CUDA_SUCCESS$" && has deep500 "^result: ([0-9]+) \(want \1\)$"
t_case $? "recursion 500 deep after cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 65536): CUDA's result"

fault fifo 20
[ "$(grep -c '^line [0-9]* of the printf FIFO test$' "$T_TMP/fifo20")" -eq 20 ] &&
    has fifo20 "^set after a printf launch: CUDA_ERROR_INVALID_VALUE$"
t_case $? "control: the default printf FIFO keeps all 20 lines; its size is fixed after a printf launch"
mv "$T_TMP/fifo20" "$T_TMP/fifo20.default"
fault fifo 20 TEST_HC_COOP_FIFO=200
[ "$(grep -c '^line [0-9]* of the printf FIFO test$' "$T_TMP/fifo20")" -eq 6 ] &&
    has fifo20 "^line 005 of the printf FIFO test$" &&
    has fifo20 "^hostcuda: co_print: 462 bytes of device printf output past the printf FIFO \(CU_LIMIT_PRINTF_FIFO_SIZE 200 bytes\) were dropped, as a GPU drops them$"
t_case $? "CU_LIMIT_PRINTF_FIFO_SIZE=200: the first 6 lines (33 bytes each) kept, the drop reported"
t_done
