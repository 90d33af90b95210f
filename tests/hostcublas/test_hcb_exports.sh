#!/usr/bin/env bash
# Property: hostcublas's libcublas.so.13 and libcublasLt.so.13 load in place of NVIDIA's: sonames
# libcublas.so.13 / libcublasLt.so.13, every export at the one version node NVIDIA's library
# carries (its soname), exactly the rows of hcb_api.def / hcblt_api.def (+ the test-only
# hostcublas_* extras), which are what gen_blas_api.py derives from NVIDIA's libraries and headers
# (checked when the toolkit has them); every function NVIDIA's libraries export is exported here
# at the same node; every versioned cuBLAS import of the test programs resolves here and they run
# with LD_BIND_NOW=1. The routines README/docs promise (Set/GetVector..., level 1, gemv, geam,
# the GEMMs, handle calls) are implemented, i.e. strong symbols, not weak not-implemented bodies.
# Control: the import check fails for a name the library lacks.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$ROOT/build/tests/hostcublas
CUDA=${CUDA_HOME:-/usr/local/cuda}
if ! command -v readelf >/dev/null || ! command -v nm >/dev/null; then echo "SKIP: binutils missing"; exit 77; fi
if [ ! -f "$D/libcublas.so.13" ] || [ ! -f "$D/libcublasLt.so.13" ]; then echo "SKIP: hostcublas is not built"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mark=0
begin() { mark=$fails; }
ok() { [ "$fails" -eq "$mark" ] && echo "ok: $*"; }  # only when the checks since begin passed
# NAME VERSION TYPE for every defined dynamic symbol (nm prints NAME@@VERSION)
symver() { nm -D --defined-only "$1" | awk '$2 != "A" {split($3, a, "@@"); print a[1], a[2], $2}' | sort; }

for lib in libcublas.so.13:hcb_api.def libcublasLt.so.13:hcblt_api.def; do
    so=${lib%%:*} def=${lib#*:} L=$D/${lib%%:*}
    begin
    soname=$(readelf -d "$L" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    [ "$soname" = "$so" ] || fail "$so: soname '$soname'"
    symver "$L" >"$tmp/$so.ours"
    awk -v v="$so" '$2 != v' "$tmp/$so.ours" >"$tmp/badver"
    [ -s "$tmp/badver" ] && fail "$so exports at another version node: $(head -3 "$tmp/badver" | tr '\n' ' ')"
    readelf -V "$L" | grep -Eq "Name: ${so//./\\.}\$" || fail "no version definition $so in $L"
    cut -d' ' -f1 "$tmp/$so.ours" | grep -v '^hostcublas_' | sort >"$tmp/$so.names"
    grep -o '^HCB_FN([A-Za-z0-9_]*' "$ROOT/tests/hostcublas/$def" | cut -c8- | sort >"$tmp/$so.def"
    if ! diff -q "$tmp/$so.names" "$tmp/$so.def" >/dev/null; then
        fail "$so: exports differ from $def (< exported, > def):"; diff "$tmp/$so.names" "$tmp/$so.def" | head -8
    fi
    ok "$so: $(wc -l <"$tmp/$so.names") exports, all at version $so, = $def;" \
        "$(awk '$3 == "T"' "$tmp/$so.ours" | grep -vc ' hostcublas_\|^hostcublas_') implemented, $(awk '$3 == "W"' "$tmp/$so.ours" | wc -l) answer NOT_SUPPORTED"
    if [ -f "$CUDA/lib64/$so" ]; then
        symver "$CUDA/lib64/$so" | awk -v v="$so" '$2 == v && $3 == "T" {print $1}' >"$tmp/$so.nvidia"
        begin
        missing=$(comm -23 "$tmp/$so.nvidia" "$tmp/$so.names")
        [ -z "$missing" ] || fail "NVIDIA's $so exports these, ours does not: $(tr '\n' ' ' <<<"$missing" | head -c 300)"
        ok "all $(wc -l <"$tmp/$so.nvidia") exports of NVIDIA's $so are here"
    fi
done
if command -v python3 >/dev/null && [ -f "$CUDA/lib64/libcublas.so.13" ] && [ -f "$CUDA/lib64/libcublasLt.so.13" ] &&
    [ -f "$CUDA/include/cublas_api.h" ]; then
    begin
    mkdir "$tmp/gen" && python3 "$ROOT/tests/hostcublas/gen_blas_api.py" "$CUDA" "$tmp/gen" 2>/dev/null
    for f in hcb_api.def hcblt_api.def hostcublas.map hostcublaslt.map; do
        cmp -s "$tmp/gen/$f" "$ROOT/tests/hostcublas/$f" || fail "$f is not what gen_blas_api.py derives from $CUDA (rerun it)"
    done
    ok "hcb_api.def, hcblt_api.def and both maps = gen_blas_api.py on $CUDA"
fi

# imports of programs linked against cuBLAS
imports_ok() { # imports_ok BINARY SONAME NAMESFILE: every NAME@SONAME it imports is in NAMESFILE
    local miss
    miss=$(nm -D "$1" | sed -n "s/.* U \\(.*\\)@${2//./\\.}\$/\\1/p" | sort | comm -23 - "$3")
    [ -z "$miss" ] || { echo "$miss"; return 1; }
}
for p in "$D/test_hcb" "$D/test_hcb_blas"; do
    [ -x "$p" ] || { echo "note: $p not built"; continue; }
    begin
    for so in libcublas.so.13 libcublasLt.so.13; do
        m=$(imports_ok "$p" "$so" "$tmp/$so.names") || fail "$(basename "$p") imports from $so what hostcublas lacks: $m"
    done
    env LD_BIND_NOW=1 LD_LIBRARY_PATH="$D:$ROOT/build/tests/hostcuda" "$p" --help >/dev/null 2>&1
    [ $? -lt 127 ] || fail "$(basename "$p") does not load with LD_BIND_NOW=1"
    ok "$(basename "$p"): its $(nm -D "$p" | grep -c '@libcublas') cuBLAS imports resolve"
done
grep -vx cublasSetVector "$tmp/libcublas.so.13.names" >"$tmp/names_less"
imports_ok "$D/test_hcb_blas" libcublas.so.13 "$tmp/names_less" >/dev/null &&
    fail "control: the import check missed cublasSetVector's absence" ||
    echo "ok control: without cublasSetVector the import check fails"

# implemented = strong; the generated not-implemented bodies are weak
awk '$3 == "T" {print $1}' "$tmp/libcublas.so.13.ours" "$tmp/libcublasLt.so.13.ours" | sort >"$tmp/strong"
impl="cublasCreate_v2 cublasDestroy_v2 cublasSetStream_v2 cublasGetStream_v2 cublasSetPointerMode_v2
cublasGetPointerMode_v2 cublasSetMathMode cublasGetMathMode cublasSetAtomicsMode cublasGetAtomicsMode
cublasSetWorkspace_v2 cublasGetVersion_v2 cublasGetProperty cublasGetCudartVersion cublasGetStatusName
cublasGetStatusString cublasLoggerConfigure cublasSetLoggerCallback cublasGetLoggerCallback"
for f in SetVector GetVector SetMatrix GetMatrix SetVectorAsync GetVectorAsync SetMatrixAsync GetMatrixAsync; do
    impl="$impl cublas$f cublas${f}_64"
done
for t in S D; do
    for f in axpy scal dot nrm2 asum copy swap; do impl="$impl cublas$t${f}_v2 cublas$t${f}_v2_64"; done
    impl="$impl cublasI${t,}amax_v2 cublasI${t,}amin_v2 cublasI${t,}amax_v2_64 cublasI${t,}amin_v2_64 cublas${t}gemv_v2 cublas${t}geam cublas${t}gemm_v2"
    impl="$impl cublas${t}gemmBatched cublas${t}gemmStridedBatched cublas${t}gemv_v2_64 cublas${t}geam_64"
    impl="$impl cublas${t}gemm_v2_64 cublas${t}gemmBatched_64 cublas${t}gemmStridedBatched_64"
done
impl="$impl cublasGemmEx cublasGemmStridedBatchedEx cublasGemmBatchedEx cublasLtCreate cublasLtMatmul"
impl="$impl cublasGemmEx_64 cublasGemmStridedBatchedEx_64 cublasGemmBatchedEx_64"
n=0
begin
# shellcheck disable=SC2086  # $impl is a list of words on purpose
for c in $impl; do
    n=$((n + 1)); grep -qx "$c" "$tmp/strong" || fail "$c is not implemented (a weak not-implemented body)"
done
ok "the $n routines promised are implemented"
[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS: hostcublas exports and symbol versions"
