#!/usr/bin/env bash
# Property: hostcuda's PTX interpreter runs asynchronous copies (cp.async via cuda::pipeline,
# __pipeline_memcpy_async, cuda::memcpy_async with a cuda::barrier), mbarriers, brx.idx and a
# device function's static shared array with CUDA's results (test_hc_async on async_kernels.ptx,
# on 1 and 3 host threads); a copy's destination read before its wait holds the old bytes (the
# interpreter defers copies to the wait); an mbarrier wait no thread can complete ends as a
# reported deadlock (LAUNCH_FAILED naming the warps, PTX line and barrier state), not a hang; a
# cp.async past its allocation, a brx.idx index past its list, an mbarrier used before init and a
# bulk copy of a size that is not a multiple of 16 fail naming kernel, PTX line and thread. Control: a changed expected value must fail.
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/test_hc_async
EXEC=$H/test_hc_exec
PTX=$H/async_kernels.ptx
t_need "$RUN" "$EXEC" "$PTX" "$H/async_kernels_90.ptx" "$H/libcuda.so.1"
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC
t_tmp
# the PTX really has the instructions (nvcc for compute_80 emits cp.async, not a synchronous copy)
for op in 'cp\.async\.ca\.shared\.global' 'cp\.async\.cg\.shared\.global' 'cp\.async\.wait_group' \
          'cp\.async\.mbarrier\.arrive' 'mbarrier\.try_wait\.parity' 'brx\.idx' '\.branchtargets' \
          'cp\.async\.bulk\.shared::cluster\.global' 'cp\.async\.bulk\.global\.shared::cta\.bulk_group'; do
    grep -q "$op" "$PTX"
    t_case $? "async_kernels.ptx contains $op"
done
for th in 1 3; do
    HOSTCUDA_THREADS=$th timeout 120 "$RUN" "$PTX" >"$T_TMP/ok$th" 2>&1
    t_case $? "async copies, mbarriers, brx.idx, function shared memory give CUDA's results (HOSTCUDA_THREADS=$th)" ||
        t_show "$T_TMP/ok$th"
done
HOSTCUDA_THREADS=2 timeout 120 "$RUN" "$H/async_kernels_90.ptx" >"$T_TMP/ok90" 2>&1
t_case $? "the same kernels built for compute_90 (cuda::barrier waits with mbarrier.try_wait)" || t_show "$T_TMP/ok90"
grep -q 'mbarrier\.try_wait\.shared' "$H/async_kernels_90.ptx"
t_case $? "async_kernels_90.ptx contains cuda::barrier's mbarrier.try_wait"
TEST_HC_ASYNC_CONTROL=1 timeout 120 "$RUN" "$PTX" >"$T_TMP/ctl" 2>&1
rc=$?
grep -q "FAIL as_gemm C\[5\]\[7\]: got .*, want " "$T_TMP/ctl"
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "control: a changed expected value fails and prints got/want" || t_show "$T_TMP/ctl"

has() { grep -qE -- "$2" "$T_TMP/$1" || { echo "# $1: no line matching: $2"; t_show "$T_TMP/$1"; return 1; }; }
for c in deadlock_test deadlock_try; do
    start=$(date +%s)
    timeout 60 "$RUN" "$PTX" "$c" >"$T_TMP/$c" 2>&1
    took=$(( $(date +%s) - start ))
    has "$c" "^launch: CUDA_ERROR_LAUNCH_FAILED$" &&
        has "$c" "^hostcuda: mbarrier deadlock in as_mbar_deadlock block \(0,0,0\): .*warp 0 \(32 threads\) at PTX line [0-9]+ \(mbarrier\.(test|try)_wait\.parity.*; warp 1 .*1 of 2 arrivals pending" &&
        [ "$took" -lt 30 ]
    t_case $? "$c: an mbarrier no one completes is a reported deadlock (took ${took}s)"
done

# faults in hand-written PTX, one thread (test_hc_exec run1 KERNEL: KERNEL(unsigned *out), 16 bytes)
k() { # name body -> $T_TMP/name.ptx
    printf '.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry %s(.param .u64 out)\n{\n\t.reg .b32 %%r<8>;\n\t.reg .b64 %%rd<8>;\n\t.reg .pred %%p<4>;\n\t.shared .align 16 .b8 s[64];\n\t.shared .align 8 .b64 mb;\n\tld.param.u64 %%rd1, [out];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n%s\n\tret;\n}\n' "$1" "$2" >"$T_TMP/$1.ptx"
    timeout 60 "$EXEC" "$T_TMP/$1.ptx" run1 "$1" >"$T_TMP/$1" 2>&1
}
k k_cpoob $'\tmov.u32 %r1, s;\n\tcp.async.ca.shared.global [%r1], [%rd2+16], 4;\n\tcp.async.wait_all;'
has k_cpoob "^run1: CUDA_ERROR_ILLEGAL_ADDRESS" &&
    has k_cpoob "^hostcuda: illegal address in k_cpoob \(PTX line 14: cp\.async\.ca\.shared\.global \[%r1\], \[%rd2\+16\], 4;\) block \(0,0,0\) thread \(0,0,0\): ld 4 bytes at 0x[0-9a-f]+; nearest allocation 0x[0-9a-f]+\+16, 0 bytes after it"
t_case $? "cp.async past its source allocation: ILLEGAL_ADDRESS at issue, naming the PTX line and distance"
k k_cpmis $'\tmov.u32 %r1, s;\n\tcp.async.cg.shared.global [%r1+4], [%rd2], 16;\n\tcp.async.wait_all;'
has k_cpmis "^run1: CUDA_ERROR_ILLEGAL_ADDRESS" && has k_cpmis "st 16 bytes at shared address 0x[0-9a-f]*4; the shared window is [0-9]+ bytes \(misaligned\)"
t_case $? "cp.async to a misaligned shared address: ILLEGAL_ADDRESS naming it"
k k_cpvis $'\tmov.u32 %r1, s;\n\tmov.u32 %r2, 5;\n\tst.global.u32 [%rd2], %r2;\n\tcp.async.ca.shared.global [%r1], [%rd2], 4;\n\tcp.async.commit_group;\n\tld.shared.u32 %r3, [%r1];\n\tcp.async.wait_group 0;\n\tld.shared.u32 %r4, [%r1];\n\tmad.lo.u32 %r5, %r3, 10, %r4;\n\tst.global.u32 [%rd2], %r5;'
has k_cpvis "^run1: CUDA_SUCCESS 5$"
t_case $? "cp.async: the destination holds its old bytes (0) until wait_group, then the copy (5): 0 * 10 + 5"
k k_cpsrc $'\tmov.u32 %r1, s;\n\tmov.u32 %r2, 9;\n\tst.shared.u32 [%r1], %r2;\n\tst.shared.u32 [%r1+4], %r2;\n\tmov.u32 %r2, 5;\n\tst.global.u32 [%rd2], %r2;\n\tst.global.u32 [%rd2+4], %r2;\n\tsetp.eq.u32 %p1, %r2, 5;\n\tcp.async.ca.shared.global [%r1], [%rd2], 4, %p1;\n\tmov.u32 %r3, 4;\n\tcp.async.ca.shared.global [%r1+4], [%rd2+4], 4, %r3;\n\tcp.async.wait_all;\n\tld.shared.u32 %r4, [%r1];\n\tld.shared.u32 %r5, [%r1+4];\n\tmad.lo.u32 %r6, %r4, 10, %r5;\n\tst.global.u32 [%rd2], %r6;'
has k_cpsrc "^run1: CUDA_SUCCESS 5$"
t_case $? "cp.async with ignore-src true zero-fills (0), with a src-size register of 4 copies (5): 0 * 10 + 5"
k k_cpgrp $'\tmov.u32 %r1, s;\n\tmov.u32 %r2, 5;\n\tst.global.u32 [%rd2], %r2;\n\tmov.u32 %r2, 7;\n\tst.global.u32 [%rd2+4], %r2;\n\tcp.async.ca.shared.global [%r1], [%rd2], 4;\n\tcp.async.commit_group;\n\tcp.async.ca.shared.global [%r1+4], [%rd2+4], 4;\n\tcp.async.commit_group;\n\tcp.async.wait_group 1;\n\tld.shared.u32 %r4, [%r1];\n\tld.shared.u32 %r5, [%r1+4];\n\tmad.lo.u32 %r6, %r4, 10, %r5;\n\tst.global.u32 [%rd2], %r6;'
has k_cpgrp "^run1: CUDA_SUCCESS 50$"
t_case $? "cp.async.wait_group 1 completes the older group (5) and leaves the newest in flight (0): 5 * 10 + 0"
k k_brx $'\tmov.u32 %r1, 3;\n\tts: .branchtargets L0, L1;\n\tbrx.idx %r1, ts;\nL0:\nL1:'
has k_brx "^run1: CUDA_ERROR_LAUNCH_FAILED" && has k_brx "^hostcuda: error in k_brx \(PTX line 15: brx\.idx %r1, ts;\) block \(0,0,0\) thread \(0,0,0\): brx\.idx index 3 outside its list of 2 targets$"
t_case $? "brx.idx past its list: LAUNCH_FAILED naming the index and the list's length"
k k_mbinit $'\tmov.u32 %r1, mb;\n\tmbarrier.arrive.shared.b64 %rd3, [%r1];'
has k_mbinit "^run1: CUDA_ERROR_LAUNCH_FAILED" && has k_mbinit "^hostcuda: error in k_mbinit \(PTX line 14: .*\) block \(0,0,0\) thread \(0,0,0\): mbarrier at shared offset 0x40 is used before mbarrier\.init"
t_case $? "mbarrier used before init: LAUNCH_FAILED naming the barrier's offset"
k k_mbglob $'\tmbarrier.init.b64 [%rd2], 1;'
has k_mbglob "^run1: CUDA_ERROR_LAUNCH_FAILED" && has k_mbglob "mbarrier object at 0x[0-9a-f]+ is not in shared memory"
t_case $? "mbarrier at a global address: LAUNCH_FAILED, not in shared memory"
k k_bulk16 $'\tmov.u32 %r1, s;\n\tmov.u32 %r2, mb;\n\tmbarrier.init.shared.b64 [%r2], 1;\n\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2], 8, [%r2];'
has k_bulk16 "^run1: CUDA_ERROR_LAUNCH_FAILED" && has k_bulk16 "^hostcuda: error in k_bulk16 \(PTX line 16: cp\.async\.bulk.*\) block \(0,0,0\) thread \(0,0,0\): cp\.async\.bulk size 8 is not a positive multiple of 16$"
t_case $? "cp.async.bulk of 8 bytes: LAUNCH_FAILED, the size must be a multiple of 16"
t_done
