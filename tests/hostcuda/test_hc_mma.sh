#!/usr/bin/env bash
# Property: hostcuda's PTX interpreter runs tensor-core kernels (test_hc_mma on mma_kernels.ptx:
# nvcuda::wmma GEMMs in every element type, mma.sync + ldmatrix GEMMs in the PTX ISA's lane
# layouts) with the host reference's results, on 1 and on 3 host threads; its controls (a wrong
# lane layout, a tf32 reference without rounding) mismatch. A misaligned wmma pointer is
# CUDA_ERROR_ILLEGAL_ADDRESS with one hostcuda: line naming kernel, PTX line, thread and address;
# an mma that half a warp runs, or a wmma.load whose lanes give different matrices, is
# CUDA_ERROR_ILLEGAL_INSTRUCTION naming the lanes (the addresses).
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
RUN=$H/test_hc_mma
PTX=$H/mma_kernels.ptx
t_need "$RUN" "$PTX" "$H/libcuda.so.1"
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC
t_tmp
has() { grep -qE -- "$2" "$T_TMP/$1" || { echo "# $1: no line matching: $2"; t_show "$T_TMP/$1"; return 1; }; }
for th in 1 3; do
    HOSTCUDA_THREADS=$th timeout 300 "$RUN" "$PTX" >"$T_TMP/ok$th" 2>&1
    rc=$?
    has ok$th "^ok control: mma with two A registers swapped mismatches" &&
        has ok$th "^ok control: mma with the A fragments of lanes l and l \^ 4 exchanged mismatches" &&
        has ok$th "^ok control: a tf32 reference without the rounding mismatches" && has ok$th "^PASS$"
    t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "wmma / mma.sync / ldmatrix kernels match the host reference, controls mismatch (HOSTCUDA_THREADS=$th)" ||
        t_show "$T_TMP/ok$th"
done
timeout 60 "$RUN" "$PTX" misaligned >"$T_TMP/mis" 2>&1
has mis "^launch: CUDA_ERROR_ILLEGAL_ADDRESS$" &&
    has mis "^hostcuda: illegal address in mk_wmma_misaligned \(PTX line [0-9]+: wmma\.load\.a\.sync\.aligned\.row\.m16n16k16(\.global)?\.f16 .*\) block \(0,0,0\) thread \(0,0,0\): ld 16 bytes at 0x[0-9a-f]+; nearest allocation 0x[0-9a-f]+\+4096, 8 bytes inside it \(misaligned\)$"
t_case $? "misaligned wmma pointer: ILLEGAL_ADDRESS with kernel, PTX line, thread, address"
timeout 60 "$RUN" "$PTX" divergent >"$T_TMP/div" 2>&1
has div "^launch: CUDA_ERROR_ILLEGAL_INSTRUCTION$" &&
    has div "^hostcuda: wmma in mk_wmma_divergent \(PTX line [0-9]+: wmma\.load\.a.*\) block \(0,0,0\) thread \(1,0,0\): address 0x[0-9a-f]+ stride 16, but lane 0 of its warp gives 0x[0-9a-f]+ stride 16; the warp must give one matrix$"
t_case $? "lanes giving one wmma.load different matrices: ILLEGAL_INSTRUCTION naming both"
timeout 60 "$RUN" "$PTX" partial >"$T_TMP/part" 2>&1
has part "^launch: CUDA_ERROR_ILLEGAL_INSTRUCTION$" &&
    has part "^hostcuda: mma in mk_mma_partial \(PTX line [0-9]+: mma\.sync\.aligned\.m16n8k8.*\) block \(0,0,0\) warp 0: executed by lanes 0x0000ffff only"
t_case $? "mma.sync run by half a warp: ILLEGAL_INSTRUCTION naming the lanes"
t_done
