#!/usr/bin/env bash
# Property: hostcudart's libcudart.so.13 is loadable in place of NVIDIA's: soname libcudart.so.13
# (+ libcudart.so link), every export at NVIDIA's one version node `libcudart.so.13`, exactly the
# rows of hcrt_api.def, which are what gen_rt_api.py derives from the installed headers; every
# symbol NVIDIA's libcudart.so.13 exports (when the toolkit has it) is exported here too; every
# versioned import of programs built with -cudart shared (rt_api, rt_api_ptsz, rt_mlp) resolves
# here, and they run with LD_BIND_NOW=1. Every runtime call the corpus programs make (llm.c's two
# trainers, vectorAdd, matrixMul, simpleDrvRuntime: the 33 the issue counts, grepped from the
# sources when ../shared/thirdparty is present) is implemented, i.e. a strong symbol, not one of the
# weak not-implemented bodies; README.md's count of them is the library's. Control: the same import check fails for a name the library lacks.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT/build/tests/hostcudart
LIB=$D/libcudart.so.13
CUDA=${CUDA_HOME:-/usr/local/cuda}
command -v readelf >/dev/null && command -v nm >/dev/null || { echo "SKIP: binutils missing"; exit 77; }
[ -f "$LIB" ] || { echo "SKIP: $LIB is not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

soname=$(readelf -d "$LIB" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = libcudart.so.13 ] || fail "soname '$soname'"
[ "$(readlink "$D/libcudart.so")" = libcudart.so.13 ] || fail "$D/libcudart.so is not a link to libcudart.so.13"
# name version, for every defined dynamic symbol
# NAME VERSION TYPE for every defined dynamic symbol (nm prints NAME@@VERSION)
symver() { nm -D --defined-only "$1" | awk '$2 != "A" {split($3, a, "@@"); print a[1], a[2], $2}' | sort; }
symver "$LIB" >"$tmp/ours"
awk '$2 != "libcudart.so.13"' "$tmp/ours" >"$tmp/badver"
[ -s "$tmp/badver" ] && fail "exports at another version node: $(head -3 "$tmp/badver" | tr '\n' ' ')"
cut -d' ' -f1 "$tmp/ours" | sort >"$tmp/names"
grep -o '^HCRT_FN([A-Za-z0-9_]*' "$ROOT/tests/hostcudart/hcrt_api.def" | cut -c9- | sort >"$tmp/def"
if ! diff -q "$tmp/names" "$tmp/def" >/dev/null; then
    fail "exports differ from hcrt_api.def (< exported, > def):"; diff "$tmp/names" "$tmp/def" | head -8
fi
echo "ok: $(wc -l <"$tmp/names") exports, all at version libcudart.so.13, = hcrt_api.def"
if command -v python3 >/dev/null && [ -f "$CUDA/include/cuda_runtime_api.h" ]; then
    mkdir "$tmp/gen" && python3 "$ROOT/tests/hostcudart/gen_rt_api.py" "$CUDA/include" "$tmp/gen" 2>/dev/null
    for f in hcrt_api.def hcrt_errors.def libcudart.map; do
        cmp -s "$tmp/gen/$f" "$ROOT/tests/hostcudart/$f" || fail "$f is not what gen_rt_api.py derives from $CUDA/include (rerun it)"
    done
    echo "ok: hcrt_api.def, hcrt_errors.def, libcudart.map = gen_rt_api.py on $CUDA/include"
fi
if [ -f "$CUDA/lib64/libcudart.so.13" ]; then
    symver "$CUDA/lib64/libcudart.so.13" | awk '$2 == "libcudart.so.13" {print $1}' >"$tmp/nvidia"
    missing=$(comm -23 "$tmp/nvidia" "$tmp/names")
    [ -z "$missing" ] || fail "NVIDIA's libcudart.so.13 exports these, ours does not: $(tr '\n' ' ' <<<"$missing" | head -c 300)"
    echo "ok: all $(wc -l <"$tmp/nvidia") exports of NVIDIA's libcudart.so.13 are here"
fi
# imports of programs built with -cudart shared
imports_ok() { # imports_ok BINARY NAMESFILE: every NAME@libcudart.so.13 it imports is in NAMESFILE
    local miss
    miss=$(nm -D "$1" | sed -n 's/.* U \(.*\)@libcudart\.so\.13$/\1/p' | sort | comm -23 - "$2")
    [ -z "$miss" ] || { echo "$miss"; return 1; }
}
progs=("$D/rt_api" "$D/rt_api_ptsz" "$ROOT/build/tests/gpu/rt_mlp_hostcheck")
for p in "${progs[@]}"; do
    [ -x "$p" ] || { echo "note: $p not built"; continue; }
    m=$(imports_ok "$p" "$tmp/names") || fail "$(basename "$p") imports what hostcudart lacks: $m"
    # readelf -V: the program needs version libcudart.so.13 of file libcudart.so.13; ours defines it
    need=$(readelf -V "$p" | awk '/File: libcudart.so.13/ {f = 1; next} /File:/ {f = 0} f && /Name:/ {print $3}')
    [ "$need" = libcudart.so.13 ] || fail "$(basename "$p") needs libcudart.so.13 version '$need'"
    readelf -V "$LIB" | grep -Eq 'Rev: 1 +Flags: none +Index: [0-9]+ +Cnt: [0-9]+ +Name: libcudart\.so\.13$' ||
        fail "no version definition libcudart.so.13 in $LIB"
    env LD_BIND_NOW=1 LD_LIBRARY_PATH="$D:$ROOT/build/tests/hostcuda" "$p" --help >/dev/null 2>&1
    [ $? -lt 127 ] || fail "$(basename "$p") does not load with LD_BIND_NOW=1"
    echo "ok: $(basename "$p"): its $(nm -D "$p" | grep -c '@libcudart.so.13') imports resolve"
done
# control: the import check catches a missing name
grep -vx cudaMalloc "$tmp/names" >"$tmp/names_less"
imports_ok "$D/rt_api" "$tmp/names_less" >/dev/null && fail "control: the import check missed cudaMalloc's absence" ||
    echo "ok control: without cudaMalloc the import check fails"

# implemented = strong; the generated not-implemented bodies are weak
awk '$3 == "T" {print $1}' "$tmp/ours" >"$tmp/strong"
calls="cudaGetLastError cudaMalloc cudaFree cudaMemcpy cudaMemcpyAsync cudaGetErrorString cudaMemset cudaMallocHost
cudaFreeHost cudaDeviceSynchronize cudaStreamSynchronize cudaEventRecord cudaEventDestroy cudaEventCreate
cudaMemsetAsync cudaSetDevice cudaStreamDestroy cudaStreamCreateWithFlags cudaStreamCreate cudaProfilerStop
cudaProfilerStart cudaMallocManaged cudaGetDeviceProperties cudaFuncSetAttribute cudaEventSynchronize
cudaEventElapsedTime cudaStreamWaitEvent cudaMemGetInfo cudaMemAdvise cudaGetDevice cudaDeviceGetAttribute
cudaLaunchKernel cudaGetErrorName"
TP=${ACCELSHIM_THIRDPARTY:-$ROOT/../shared/thirdparty}
if [ -d "$TP/llm.c" ] && [ -d "$TP/cuda-samples" ]; then
    found=$(grep -ohE '\bcuda[A-Z][A-Za-z0-9_]*\(' "$TP"/llm.c/train_gpt2_fp32.cu "$TP"/llm.c/train_gpt2.cu "$TP"/llm.c/llmc/*.h \
        "$TP"/llm.c/llmc/*.cuh "$TP"/cuda-samples/Samples/0_Introduction/{vectorAdd,matrixMul,simpleDrvRuntime}/*.c* 2>/dev/null |
        tr -d '(' | sort -u | grep -vxE 'cudaCheck_?|cudaFreeCheck|cudaMallocConditionallyManaged')
    calls="$calls $found"
fi
n=0
# shellcheck disable=SC2086  # $calls is a list of words on purpose
for c in $(printf '%s\n' $calls | sort -u); do
    n=$((n + 1)); grep -qx "$c" "$tmp/strong" || fail "$c, called by the corpus, is not implemented"
done
echo "ok: the $n runtime calls of the corpus are implemented; $(wc -l <"$tmp/strong") implemented in all, $(awk '$3 == "W"' "$tmp/ours" | wc -l) answer NotSupported"
# the README's count is the library's
impl=$(wc -l <"$tmp/strong") total=$(wc -l <"$tmp/names")
said=$(tr '\n' ' ' <"$ROOT/tests/hostcudart/README.md" | grep -o 'Today [0-9]* of the [0-9]* exports' | head -1)
[ "$said" = "Today $impl of the $total exports" ] || fail "README says '$said', the library has $impl of $total implemented"
[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS: hostcudart exports and symbol versions"
