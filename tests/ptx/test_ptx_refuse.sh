#!/usr/bin/env bash
# test_ptx_refuse.sh — proves hostcuda refuses the kernels that use what its PTX interpreter does
# not run, instead of giving a wrong answer later: tensor-core variants it lacks (single-bit wmma
# through nvcuda::wmma, ldmatrix .m16n16.b8), cp.async.bulk.tensor (TMA) and a cube-map texture fetch (refuse_kernels.cu, each kernel as its own module with
# HOSTCUDA_EXEC=ptx). The module loads, as on a GPU; asking for such a kernel
# (cuModuleGetFunction, which the runtime does at a kernel's first launch) answers
# CUDA_ERROR_NOT_SUPPORTED with one hostcuda: line naming the kernel, the PTX line and the
# instruction. The other kernels of a module stay usable: the whole file as one module loads,
# its r_ok kernel runs and computes right while r_wmma is refused (a program with one tensor-core
# kernel among plain ones runs its plain ones). Positive control: a kernel of fault_kernels.ptx
# loads and is found the same way. Skips without an interpreter.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests/ptx
RUN=$B/ptx_fault_run
t_need "$RUN" "$B/refuse_kernels.ptx" "$B/fault_kernels.ptx" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_tmp
load() {   # load PTX NAME -> $T_TMP/NAME.out/.err
    LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_EXEC=ptx timeout -k 5 60 "$RUN" load "$1" "$2" \
        >"$T_TMP/$2.out" 2>"$T_TMP/$2.err"
}
LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_EXEC=ptx timeout -k 5 60 "$RUN" ok >"$T_TMP/probe" 2>&1
[ $? -eq 77 ] && t_skip "hostcuda has no PTX interpreter in this build"

load "$B/fault_kernels.ptx" f_read
grep -qx 'load=CUDA_SUCCESS get=CUDA_SUCCESS' "$T_TMP/f_read.out"
t_case $? "positive control: f_read alone loads and is found"

for k in r_wmma:wmma r_ldmatrix:ldmatrix r_cp_tensor:cp.async.bulk.tensor r_texture:tex.cube; do
    name=${k%%:*} insn=${k#*:}
    load "$B/refuse_kernels.ptx" "$name"
    grep -qx 'load=CUDA_SUCCESS get=CUDA_ERROR_NOT_SUPPORTED' "$T_TMP/$name.out"
    t_case $? "$name: the module loads, the kernel is refused with CUDA_ERROR_NOT_SUPPORTED ($(cat "$T_TMP/$name.out"))"
    n=$(grep '^hostcuda:' "$T_TMP/$name.err" | grep -- "$name" | grep -i 'line' | grep -c -- "$insn")
    t_case $(( n != 1 )) "$name: one hostcuda: line names the kernel, the PTX line and $insn"
    [ "$n" -eq 1 ] || t_show "$T_TMP/$name.err"
done

LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_EXEC=ptx timeout -k 5 60 "$RUN" whole "$B/refuse_kernels.ptx" r_ok r_wmma \
    >"$T_TMP/whole.out" 2>"$T_TMP/whole.err"
grep -qx 'load=CUDA_SUCCESS bad=CUDA_ERROR_NOT_SUPPORTED good=CUDA_SUCCESS launch=CUDA_SUCCESS wrong=0' "$T_TMP/whole.out"
t_case $? "one module with refused kernels: it loads, r_wmma is refused, r_ok runs right ($(cat "$T_TMP/whole.out"))"
[ "$(grep -c '^hostcuda:' "$T_TMP/whole.err")" -eq 1 ] && grep -q 'r_wmma' "$T_TMP/whole.err"
t_case $? "one module: only the kernel asked for is named (one hostcuda: line, r_wmma)"
t_done
