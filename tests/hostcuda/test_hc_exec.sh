#!/usr/bin/env bash
# Property: hostcuda's PTX interpreter runs kernels that have no host twin with the results CUDA
# defines (test_hc_exec on exec_kernels.ptx, on 1 and on 3 host threads), and tells a faulty
# kernel what a GPU would, plus where: an out-of-bounds store is CUDA_ERROR_ILLEGAL_ADDRESS with
# one hostcuda: line naming the kernel, PTX line, block, thread, address and the distance to the
# nearest allocation, sticky for the context; a barrier deadlock is CUDA_ERROR_LAUNCH_FAILED
# naming the waiting warps; assert() is CUDA_ERROR_ASSERT with the GPU's message; printf prints;
# a kernel that never ends stops at HOSTCUDA_KERNEL_TIMEOUT_S. Bad option values fail cuInit
# naming the variable. Control: the same checks with one expected value changed must fail.
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/test_hc_exec
PTX=$H/exec_kernels.ptx
t_need "$RUN" "$PTX" "$H/libcuda.so.1"
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC
t_tmp
for th in 1 3; do
    HOSTCUDA_THREADS=$th timeout 120 "$RUN" "$PTX" >"$T_TMP/ok$th" 2>&1
    t_case $? "kernels without twins give CUDA's results (HOSTCUDA_THREADS=$th)" || true
    [ "$(grep -c FAIL "$T_TMP/ok$th")" -eq 0 ] || t_show "$T_TMP/ok$th"
done
# control: a wrong expectation is caught, with both sides printed
TEST_HC_EXEC_CONTROL=1 timeout 120 "$RUN" "$PTX" >"$T_TMP/ctl" 2>&1
rc=$?
grep -q "FAIL ex_reduce block 0: got .*, want " "$T_TMP/ctl"
t_case $(( rc == 1 && $? == 0 ? 0 : 1 )) "control: a changed expected value fails and prints got/want"

fault() { # case env... -> stdout+stderr in $T_TMP/$1
    local c=$1; shift
    env "$@" timeout 60 "$RUN" "$PTX" "$c" >"$T_TMP/$c" 2>&1
}
has() { grep -qE -- "$2" "$T_TMP/$1" || { echo "# $1: no line matching: $2"; t_show "$T_TMP/$1"; return 1; }; }

fault printf
fault oob
has oob "^launch: CUDA_ERROR_ILLEGAL_ADDRESS$" &&
    has oob "^after: CUDA_ERROR_ILLEGAL_ADDRESS$" && has oob "^copy: CUDA_ERROR_ILLEGAL_ADDRESS$" &&
    has oob "^next launch: CUDA_ERROR_ILLEGAL_ADDRESS$" && has printf "^next launch: CUDA_SUCCESS$" &&
    has oob "^hostcuda: illegal address in ex_oob \(PTX line [0-9]+: st\.global\.[a-z0-9]+ \[%rd[0-9]+\], %r[0-9]+;\) block \(1,0,0\) thread \(5,0,0\): st 4 bytes at 0x[0-9a-f]+; nearest allocation 0x[0-9a-f]+\+256, 12 bytes after it$"
t_case $? "out-of-bounds store: ILLEGAL_ADDRESS, sticky, one line with kernel, PTX line, block, thread, distance"
[ "$(grep -c '^hostcuda:' "$T_TMP/oob")" -eq 1 ]
t_case $? "out-of-bounds store: exactly one hostcuda: line"

fault deadlock
has deadlock "^launch: CUDA_ERROR_LAUNCH_FAILED$" &&
    has deadlock "^hostcuda: barrier deadlock in ex_deadlock block \(0,0,0\): barrier 1 has 32 of 64 threads, barrier 2 has 32 of 64 threads; waiting warps: 0 1"
t_case $? "barrier deadlock: LAUNCH_FAILED naming the barriers and the waiting warps"

fault assert
has assert "^launch: CUDA_ERROR_ASSERT$" &&
    has assert "exec_kernels\.cu:[0-9]+: void ex_assert\(const int \*\): block: \[0,0,0\], thread: \[5,0,0\] Assertion \`p\[threadIdx\.x\] == 0\` failed\.$" &&
    has assert "^hostcuda: device assertion failed in ex_assert \(PTX line [0-9]+\) block \(0,0,0\) thread \(5,0,0\)$"
t_case $? "assert: CUDA_ERROR_ASSERT with the message as a GPU prints it"

fault printf
has printf "^thread 0 of block 0: 100 0\.00$" && has printf "^thread 1 of block 0: 101 0\.25$" &&
    has printf "^launch: CUDA_SUCCESS$"
t_case $? "device printf: formatted output, launch succeeds"

start=$(date +%s)
fault spin HOSTCUDA_KERNEL_TIMEOUT_S=1
took=$(( $(date +%s) - start ))
has spin "^launch: CUDA_ERROR_LAUNCH_TIMEOUT$" && has spin "^hostcuda: kernel ex_spin ran past HOSTCUDA_KERNEL_TIMEOUT_S \(1 s\)" &&
    [ "$took" -lt 30 ]
t_case $? "a kernel that never ends: LAUNCH_TIMEOUT after HOSTCUDA_KERNEL_TIMEOUT_S=1 (took ${took}s)"

for bad in HOSTCUDA_EXEC=gpu HOSTCUDA_THREADS=0 HOSTCUDA_KERNEL_TIMEOUT_S=soon HOSTCUDA_EXEC_STATS=yes; do
    env "$bad" timeout 60 "$RUN" "$PTX" >"$T_TMP/bad" 2>&1
    rc=$?
    grep -q "^hostcuda: ${bad%%=*}=${bad#*=}: expected" "$T_TMP/bad"
    t_case $(( rc != 0 && $? == 0 ? 0 : 1 )) "bad $bad: cuInit fails naming the variable" || t_show "$T_TMP/bad"
done

# refused at load: a tensor-core variant the interpreter lacks (Volta's m8n8k4 f16 mma)
cat >"$T_TMP/mma.ptx" <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k_mma(.param .u64 p)
{
	.reg .b32 %r<12>;
	.reg .f32 %f<8>;
	mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};
	ret;
}
PTX
timeout 60 "$RUN" "$T_TMP/mma.ptx" load k_mma >"$T_TMP/mma" 2>&1
has mma "^load: CUDA_SUCCESS$" && has mma "^get: CUDA_ERROR_NOT_SUPPORTED$" &&
    has mma "^hostcuda: kernel k_mma: PTX line 8: tensor-core instruction variant not supported: mma\.sync\.aligned\.m8n8k4\.row\.col\.f32\.f16"
t_case $? "an mma variant the interpreter lacks: the module loads, the kernel is refused, one line with kernel, PTX line, instruction"
# a syntax error: CUDA_ERROR_INVALID_PTX naming line, column and token
printf '.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k_bad()\n{\n\tadd.s32 %%r1, %%r2, 1;\n\tret;\n}\n' >"$T_TMP/bad.ptx"
timeout 60 "$RUN" "$T_TMP/bad.ptx" load k_bad >"$T_TMP/bad" 2>&1
has bad "^load: CUDA_SUCCESS$" && has bad "^get: CUDA_ERROR_INVALID_PTX$" && has bad "ptx:6:10: undeclared register '%r1'"
t_case $? "PTX that does not parse: its kernels answer INVALID_PTX with line:col and the token"

# a 32-bit register used as a shared-memory address wraps at 2^32 (0xffffffff + 1 is address 0)
cat >"$T_TMP/wrap.ptx" <<'PTX'
.version 8.0
.target sm_80
.address_size 64
.visible .entry k_wrap(.param .u64 out)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<3>;
	.shared .align 4 .b8 s[16];
	mov.u32 %r1, 0xffffffff;
	add.s32 %r2, %r1, 1;
	st.shared.u32 [%r2+4], 7;
	mov.u32 %r3, s;
	ld.shared.u32 %r4, [%r3+4];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	st.global.u32 [%rd2], %r4;
	ret;
}
PTX
timeout 60 "$RUN" "$T_TMP/wrap.ptx" run1 k_wrap >"$T_TMP/wrap" 2>&1
has wrap "^run1: CUDA_SUCCESS 7$"
t_case $? "a 32-bit address register wraps at 2^32 (shared store at (0xffffffff + 1) + 4)"

# HOSTCUDA_EXEC=twin keeps hostcuda's twin-only behaviour: test_hc_kernels' twin cases pass and a
# kernel without a twin is not found (the test checks that branch itself)
if [ -x "$H/test_hc_kernels" ]; then
    HOSTCUDA_EXEC=twin timeout 300 "$H/test_hc_kernels" >"$T_TMP/twin" 2>&1
    t_case $? "HOSTCUDA_EXEC=twin: test_hc_kernels passes with twins only" || t_show "$T_TMP/twin"
fi

# HOSTCUDA_EXEC_STATS=1: one line per kernel at exit
HOSTCUDA_EXEC_STATS=1 timeout 120 "$RUN" "$PTX" >"$T_TMP/stats" 2>&1
grep -qE "^hostcuda: exec ex_reduce launches=1 warp_instr=[1-9][0-9]* lane_instr=[1-9][0-9]* seconds=[0-9.]+$" "$T_TMP/stats"
t_case $? "HOSTCUDA_EXEC_STATS=1: a line per kernel at exit" || t_show "$T_TMP/stats"
t_done
