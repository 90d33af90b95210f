#!/usr/bin/env bash
# test_ptx_faults.sh — proves a faulty kernel run by hostcuda's PTX interpreter (HOSTCUDA_EXEC=ptx)
# is told what a GPU and compute-sanitizer would tell it, never hangs and never writes outside
# the device arenas: an out-of-bounds read or write, a use after cuMemFree, a misaligned load, a
# null pointer and a shared-memory read past the CTA's shared memory
# fail with CUDA_ERROR_ILLEGAL_ADDRESS (a misaligned one may say CUDA_ERROR_MISALIGNED_ADDRESS, as a
# GPU does), sticky (the next synchronise answers the same; so does a cuMemAlloc, as on a GPU,
# whose context is lost: a case of its own), with one `hostcuda:`
# line naming the kernel, block and thread and the address; a barrier some warps never reach is
# CUDA_ERROR_LAUNCH_FAILED naming the warps; a kernel that never ends is stopped by
# HOSTCUDA_KERNEL_TIMEOUT_S=2; a failed assert() is CUDA_ERROR_ASSERT with the GPU's message;
# device printf reaches stdout at the synchronise. llm.c's matmul_forward_kernel4 (PTX compiled
# from ../shared/thirdparty at build time) runs with channels that are multiples of 128 (result
# checked against a C matmul: the positive control) and is an illegal address with 96 channels.
# HOSTCUDA_EXEC=auto interprets a kernel without a twin, =twin refuses it.
# Each case runs ptx_fault_run in its own process under a time bound. Skips without an interpreter.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests/ptx
RUN=$B/ptx_fault_run
t_need "$RUN" "$B/fault_kernels.ptx" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_tmp

# run MODE ARGS...: $T_TMP/MODE.out, .err; rc in $rc (time bound 60 s)
run() {
    local name=$1; shift
    LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_EXEC=ptx timeout -k 5 60 "$RUN" "$@" \
        >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    rc=$?
}
run probe ok
[ "$rc" -eq 77 ] && t_skip "$(grep SKIP "$T_TMP/probe.out" | head -1)"

# field FILE KEY: the value of KEY= on the result line
field() { sed -n "s/.*\<$2=\([^ ]*\).*/\1/p" "$1" | tail -1; }
# one_line FILE WORD...: exactly one hostcuda: line holding every WORD (case-insensitive)
one_line() {
    local f=$1; shift
    local lines w
    lines=$(grep '^hostcuda:' "$f")
    for w in "$@"; do lines=$(printf '%s\n' "$lines" | grep -i -- "$w"); done
    [ -n "$lines" ] && [ "$(printf '%s\n' "$lines" | wc -l)" -eq 1 ]
}
evidence() { t_show "$T_TMP/$1.out" "$T_TMP/$1.err"; }
# sticky FILE WANT...: the synchronise answers one of WANT, and so does the next synchronise
sticky() {
    local f=$1 s a w; shift
    s=$(field "$f" sync); a=$(field "$f" again)
    for w in "$@"; do [ "$s" = "$w" ] && [ "$a" = "$w" ] && return 0; done
    return 1
}
# sticky_alloc FILE: a cuMemAlloc after the failure answers the same error (the context is lost)
sticky_alloc() { [ "$(field "$1" alloc)" = "$(field "$1" sync)" ]; }

run ok ok
t_case $(( rc != 0 || $(grep -c 'sync=CUDA_SUCCESS again=CUDA_SUCCESS alloc=CUDA_SUCCESS' "$T_TMP/ok.out") != 1 )) \
    "positive control: the same read kernel in bounds succeeds"
[ "$rc" -eq 0 ] || evidence ok

# the execution modes: auto (the default) interprets a kernel with no twin; twin forbids it
HOSTCUDA_EXEC=auto LD_LIBRARY_PATH=$T_HOSTCUDA_DIR timeout -k 5 60 "$RUN" ok >"$T_TMP/auto.out" 2>"$T_TMP/auto.err"
t_case $(( $? != 0 || $(grep -c 'sync=CUDA_SUCCESS' "$T_TMP/auto.out") != 1 )) \
    "HOSTCUDA_EXEC=auto runs a kernel that has no host twin through the interpreter"
HOSTCUDA_EXEC=twin LD_LIBRARY_PATH=$T_HOSTCUDA_DIR timeout -k 5 60 "$RUN" ok >"$T_TMP/twin.out" 2>"$T_TMP/twin.err"
t_case $(( $? != 77 )) "HOSTCUDA_EXEC=twin refuses it (cuModuleGetFunction: CUDA_ERROR_NOT_FOUND)"

for mode in read write freed misaligned; do
    run "$mode" "$mode"
    addr=$(field "$T_TMP/$mode.out" addr); addr=${addr#0x}
    want="CUDA_ERROR_ILLEGAL_ADDRESS"
    [ "$mode" = misaligned ] && want="CUDA_ERROR_ILLEGAL_ADDRESS CUDA_ERROR_MISALIGNED_ADDRESS"
    # shellcheck disable=SC2086
    sticky "$T_TMP/$mode.out" $want
    t_case $? "$mode: the launch fails with ${want// / or } and stays failed"
    sticky_alloc "$T_TMP/$mode.out"
    t_case $? "$mode: a cuMemAlloc after it answers the same error ($(field "$T_TMP/$mode.out" alloc))"
    one_line "$T_TMP/$mode.err" "f_$( [ "$mode" = freed ] && echo read || echo "$mode")" block thread "$addr"
    ok=$?
    t_case $ok "$mode: one hostcuda: line names the kernel, block, thread and address 0x$addr"
    [ "$ok" -eq 0 ] || evidence "$mode"
done

# a null pointer, and shared memory read far past its end
run null null
sticky "$T_TMP/null.out" CUDA_ERROR_ILLEGAL_ADDRESS
t_case $? "a read through a null pointer: CUDA_ERROR_ILLEGAL_ADDRESS, sticky"
one_line "$T_TMP/null.err" f_read block thread
ok=$?
t_case $ok "null: one hostcuda: line names the kernel, block and thread"
[ "$ok" -eq 0 ] || evidence null
run shared shared
sticky "$T_TMP/shared.out" CUDA_ERROR_ILLEGAL_ADDRESS
t_case $? "a shared-memory read far past the CTA's shared memory: CUDA_ERROR_ILLEGAL_ADDRESS, sticky"
one_line "$T_TMP/shared.err" f_shared block thread
ok=$?
t_case $ok "shared: one hostcuda: line names the kernel, block and thread"
[ "$ok" -eq 0 ] || evidence shared

t0=$(date +%s)
HOSTCUDA_KERNEL_TIMEOUT_S=2 run hang hang
t1=$(date +%s)
sticky "$T_TMP/hang.out" CUDA_ERROR_LAUNCH_TIMEOUT CUDA_ERROR_LAUNCH_FAILED
t_case $? "a kernel that never ends is stopped (HOSTCUDA_KERNEL_TIMEOUT_S=2): LAUNCH_TIMEOUT or LAUNCH_FAILED, sticky ($((t1 - t0)) s)"
sticky_alloc "$T_TMP/hang.out"
t_case $? "hang: a cuMemAlloc after it answers the same error ($(field "$T_TMP/hang.out" alloc))"
one_line "$T_TMP/hang.err" f_hang
t_case $? "hang: one hostcuda: line names the kernel"
[ "$rc" -eq 0 ] || evidence hang

HOSTCUDA_KERNEL_TIMEOUT_S=20 run barrier barrier
sticky "$T_TMP/barrier.out" CUDA_ERROR_LAUNCH_FAILED
t_case $? "a barrier some warps never reach: CUDA_ERROR_LAUNCH_FAILED, sticky"
sticky_alloc "$T_TMP/barrier.out"
t_case $? "barrier: a cuMemAlloc after it answers the same error ($(field "$T_TMP/barrier.out" alloc))"
one_line "$T_TMP/barrier.err" f_barrier warp
ok=$?
t_case $ok "barrier: one hostcuda: line names the kernel and the warps"
[ "$ok" -eq 0 ] || evidence barrier

run assert assert
sticky "$T_TMP/assert.out" CUDA_ERROR_ASSERT
t_case $? "a failed assert(): CUDA_ERROR_ASSERT, sticky"
sticky_alloc "$T_TMP/assert.out"
t_case $? "assert: a cuMemAlloc after it answers the same error ($(field "$T_TMP/assert.out" alloc))"
# a GPU prints: FILE:LINE: f_assert: block: [0,0,0], thread: [5,0,0] Assertion `p[t] < 5` failed.
# shellcheck disable=SC2016  # a literal backquote in the pattern
grep -q 'block: \[0,0,0\], thread: \[5,0,0\] Assertion `p\[t\] < 5` failed' "$T_TMP/assert.err" "$T_TMP/assert.out"
ok=$?
t_case $ok "assert: the message as a GPU prints it (block: [0,0,0], thread: [5,0,0] Assertion \`p[t] < 5\` failed.)"
[ "$ok" -eq 0 ] || evidence assert

run printf printf
n=$(grep -c '^device printf: thread [0-3] of block [01] value [0-9]* half [0-9.]*$' "$T_TMP/printf.out")
order=$(awk '/^launched$/ { l = NR } /^device printf/ { if (!f) f = NR; e = NR } /^launch=/ { r = NR }
             END { print (l < f && e < r) ? "ok" : "bad" }' "$T_TMP/printf.out")
exp=$(grep -c '^device printf: thread 1 of block 1 value 1 half 0.50$' "$T_TMP/printf.out")
t_case $(( rc != 0 || n != 8 || exp != 1 )) "device printf: 8 lines with their values ($n seen)"
t_case $(( rc != 0 )) "device printf: launch and synchronise succeed"
[ "$order" = ok ]; t_case $? "device printf: flushed at the synchronise (after the launch returned, before it ended)"
if [ "$n" -ne 8 ] || [ "$order" != ok ]; then evidence printf; fi

# llm.c's matmul_forward_kernel4
LLMC=$B/llmc_fp32.ptx
if [ -e "$LLMC" ]; then
    run llmc_ok llmc "$LLMC" 128 256
    rel=$(sed -n 's/^maxrel=//p' "$T_TMP/llmc_ok.out")
    awk -v r="${rel:-1}" 'BEGIN { exit !(r < 1e-5) }'
    t_case $? "llm.c matmul_forward_kernel4, C=128 OC=256: matches a C matmul (max relative error ${rel:-none} < 1e-5)"
    [ -n "$rel" ] || evidence llmc_ok
    run llmc_bad llmc "$LLMC" 96 96
    sticky "$T_TMP/llmc_bad.out" CUDA_ERROR_ILLEGAL_ADDRESS
    t_case $? "llm.c matmul_forward_kernel4, C=96 OC=96 (not multiples of 128): CUDA_ERROR_ILLEGAL_ADDRESS"
    sticky_alloc "$T_TMP/llmc_bad.out"
    t_case $? "llm.c overrun: a cuMemAlloc after it answers the same error ($(field "$T_TMP/llmc_bad.out" alloc))"
    one_line "$T_TMP/llmc_bad.err" matmul_forward_kernel4 block thread
    ok=$?
    t_case $ok "llm.c overrun: one hostcuda: line names the kernel, block and thread"
    [ "$ok" -eq 0 ] || evidence llmc_bad
else
    echo "# llm.c's PTX is not built (no ../shared/thirdparty/llm.c at build time): its cases are not run"
fi
t_done
