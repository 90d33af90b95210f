#!/usr/bin/env bash
# Property: hostcuda loads nvcc-made fatbins — `nvcc -fatbin` with CUDA 13's default compression
# (zstd), uncompressed, and a multi-entry one (sm_80 cubin + compute_80 + compute_90 PTX) — through
# cuModuleLoadData, cuModuleLoadFatBinary, cuLibraryLoadData and cudart's fatbin wrapper (v1, v2),
# picks the PTX entry, decompresses it (zstd; LZ4 on a fatbin written with liblz4) and runs the
# kernels with their host implementations (y = 2*3+1 everywhere). Bad input is refused with a
# clear error and no crash: a cubin-only fatbin (CUDA_ERROR_NO_BINARY_FOR_GPU), an entry whose
# header overruns the fatbin, a wrong header version, a missing zstd library (NOT_SUPPORTED, names
# the library). Without the host kernel library the interpreter runs the same kernels from the PTX;
# control: with HOSTCUDA_EXEC=twin as well, the same load runs nothing (exit 2).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
H=$ROOT/build/tests/hostcuda
RUN=$H/hc_fatbin_run
for f in "$RUN" "$H/libcuda.so.1" "$H/test_kernels.fatbin" "$H/test_kernels_multi.fatbin" "$H/libtest_kernels_host.so"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HOSTCUDA_KERNEL_LIBS=$H/libtest_kernels_host.so
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
u32() { od -An -t x4 -j "$2" -N 4 "$1" | tr -d ' '; }   # u32 at offset, hex
# the default fatbin really is zstd-compressed (flag 0x8000, payload starts with the zstd magic)
[ "$(u32 "$H/test_kernels.fatbin" 56)" = 00008011 ] || bad "test_kernels.fatbin: entry flags $(u32 "$H/test_kernels.fatbin" 56), want 00008011 (zstd)"
[ "$(u32 "$H/test_kernels.fatbin" 96)" = fd2fb528 ] || bad "test_kernels.fatbin: payload is not a zstd frame"
[ "$(u32 "$H/test_kernels_nc.fatbin" 56)" = 00000011 ] || bad "test_kernels_nc.fatbin: entry flags $(u32 "$H/test_kernels_nc.fatbin" 56), want uncompressed"
n=0
for fb in test_kernels test_kernels_nc test_kernels_multi; do
    for mode in data fatbinary library wrapper1 wrapper2; do
        out=$(timeout 60 "$RUN" "$H/$fb.fatbin" $mode 2>&1); rc=$?
        n=$((n + 1))
        [ $rc -eq 0 ] || bad "$fb $mode: exit $rc: $out"
    done
done
echo "nvcc fatbins: $n loads (3 fatbins x 5 entry points) ran their kernels"
if "$RUN" --lz4 "$H/test_kernels.ptx" "$tmp/lz4.fatbin" >/dev/null; then
    [ "$(u32 "$tmp/lz4.fatbin" 56)" = 00002011 ] || bad "lz4.fatbin: flags"
    out=$(timeout 60 "$RUN" "$tmp/lz4.fatbin" library 2>&1) || bad "LZ4 fatbin: $out"
    echo "LZ4: $out"
else
    echo "# liblz4 not present: LZ4 path not exercised"
fi
expect_refusal() {   # expect_refusal WHAT WANT_CURESULT WANT_MESSAGE FILE [env...]
    local what=$1 want=$2 msg=$3 file=$4; shift 4
    out=$(env "$@" timeout 60 "$RUN" "$file" data 2>&1); rc=$?
    if [ $rc -ne 2 ] || ! grep -q "$want" <<<"$out" || ! grep -q "$msg" <<<"$out"; then
        bad "$what: exit $rc, want 2 with $want and '$msg': $out"
    else
        echo "refused ($what): $(grep hostcuda: <<<"$out" | head -1)"
    fi
}
expect_refusal "cubin only" CUDA_ERROR_NO_BINARY_FOR_GPU "no PTX entry" "$H/test_kernels_sm80.fatbin"
cp "$H/test_kernels.fatbin" "$tmp/overrun.fatbin"
printf '\xff\xff\xff\x7f' | dd of="$tmp/overrun.fatbin" bs=1 seek=20 conv=notrunc status=none
expect_refusal "entry overruns" CUDA_ERROR_INVALID_IMAGE "overrun the fatbin" "$tmp/overrun.fatbin"
cp "$H/test_kernels.fatbin" "$tmp/version.fatbin"
printf '\x07' | dd of="$tmp/version.fatbin" bs=1 seek=4 conv=notrunc status=none
expect_refusal "header version" CUDA_ERROR_INVALID_IMAGE "header version" "$tmp/version.fatbin"
expect_refusal "no zstd library" CUDA_ERROR_NOT_SUPPORTED "libzstd could not be loaded" "$H/test_kernels.fatbin" \
    HOSTCUDA_ZSTD_LIB="$tmp/no-such-libzstd.so.1"
# control: without the host kernels and with the interpreter forbidden (HOSTCUDA_EXEC=twin)
# nothing runs, so a pass above means the kernels ran
out=$(env -u HOSTCUDA_KERNEL_LIBS HOSTCUDA_EXEC=twin timeout 60 "$RUN" "$H/test_kernels.fatbin" data 2>&1) &&
    bad "control: ran without host kernels: $out"
# without the host kernels (HOSTCUDA_EXEC=auto, the default) the interpreter runs them from the
# fatbin's PTX, with the same result
out=$(env -u HOSTCUDA_KERNEL_LIBS timeout 60 "$RUN" "$H/test_kernels.fatbin" data 2>&1) ||
    bad "the interpreter did not run the fatbin's kernels: $out"
[ $fails -eq 0 ] || exit 1
echo "PASS: nvcc fatbins (zstd, plain, multi-entry; LZ4) load through every entry point and run; bad fatbins refused clearly"
