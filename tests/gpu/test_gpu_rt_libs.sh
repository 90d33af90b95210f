#!/usr/bin/env bash
# Property: gpu-check finds NCCL and cuBLAS where a GPU image keeps them, and summarises the routing
# recorder defensively (scripts/gpu-rt.bash). gpu_rt_find_lib SONAME MODULE: (1) a library 10
# folders below a Python module's directory (as a wheel's nvidia/nccl/lib, at any depth) is found by
# asking Python (PYTHONPATH) where the module lives; (2) one in another folder of the `nvidia`
# namespace (nvidia/cu13/lib) through the namespace; (3) otherwise a search of
# GPU_RT_SEARCH_ROOTS finds it; controls: without PYTHONPATH the module route finds nothing, and
# with nothing anywhere it returns 1. gpu_rt_routing_summary: a TSV (columns found by value)
# counted per route and hand-back; an absent, empty or comment-only file says "not supported by
# this shim build" with exit 1. Skips (77) without python3.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# shellcheck source=scripts/gpu-rt.bash
. "$ROOT/scripts/gpu-rt.bash"
deep=$tmp/site/nvidia/ashwheel/a/b/c/d/e/f/g/h/i/lib
mkdir -p "$deep" "$tmp/site/nvidia/cu99/lib" "$tmp/other/x/y/z"
: >"$tmp/site/nvidia/ashwheel/__init__.py"
: >"$deep/libashwheel.so.1"; : >"$tmp/site/nvidia/cu99/lib/libashns.so.2"; : >"$tmp/other/x/y/z/libashfar.so.3"
export LD_LIBRARY_PATH='' GPU_RT_SEARCH_ROOTS=$tmp/nowhere

PYTHONPATH=$tmp/site gpu_rt_find_lib libashwheel.so.1 nvidia.ashwheel; rc=$?
echo "module, 10 folders down: exit $rc, $GPU_RT_LIBDIR ($GPU_RT_HOW)"
[ $rc -eq 0 ] && [ "$GPU_RT_LIBDIR" = "$deep" ] && [[ $GPU_RT_HOW == python* ]] || bad "the wheel's deep library was not found through Python"
PYTHONPATH=$tmp/site gpu_rt_find_lib libashns.so.2 nvidia.cublas; rc=$?
echo "nvidia namespace: exit $rc, $GPU_RT_LIBDIR ($GPU_RT_HOW)"
[ $rc -eq 0 ] && [ "$GPU_RT_LIBDIR" = "$tmp/site/nvidia/cu99/lib" ] || bad "the namespace's library was not found"
PYTHONPATH='' gpu_rt_find_lib libashwheel.so.1 nvidia.ashwheel; rc=$?
echo "control, no PYTHONPATH: exit $rc"
[ $rc -eq 1 ] || bad "control: found without the module on the path ($GPU_RT_LIBDIR, $GPU_RT_HOW)"
GPU_RT_SEARCH_ROOTS="$tmp/nowhere $tmp/other" gpu_rt_find_lib libashfar.so.3 nvidia.none; rc=$?
echo "search fallback: exit $rc, $GPU_RT_LIBDIR ($GPU_RT_HOW)"
[ $rc -eq 0 ] && [ "$GPU_RT_LIBDIR" = "$tmp/other/x/y/z" ] || bad "the search fallback did not find it"
LD_LIBRARY_PATH=$tmp/other/x/y/z gpu_rt_find_lib libashfar.so.3 nvidia.none; rc=$?
[ $rc -eq 0 ] && [ "$GPU_RT_HOW" = LD_LIBRARY_PATH ] || bad "LD_LIBRARY_PATH did not come before the search"

printf '# symbol\tcudaVersion\tflags\tstatus\tdriver\thanded\troute\n' >"$tmp/rt.tsv"
printf 'cuLaunchKernel\t4000\t0\t0\t0x7f01\thook\tidentity\n' >>"$tmp/rt.tsv"
printf 'cuLaunchKernel_ptsz\t7000\t2\t0\t0x7f02\thook\tname\n' >>"$tmp/rt.tsv"
printf 'cuFoo\t12000\t0\t0\t0x7f03\tpassthrough\tnone\n' >>"$tmp/rt.tsv"
sum=$(gpu_rt_routing_summary "$tmp/rt.tsv"); rc=$?
echo "summary: $sum"
[ $rc -eq 0 ] && [ "$sum" = "3 request(s): route identity 1 name 1 none 1; handed back hook 2, passthrough 1; this driver hands out unexported pointers (routed by name)" ] ||
    bad "routing summary: exit $rc, '$sum'"
for f in "$tmp/absent.tsv" "$tmp/empty.tsv" "$tmp/comments.tsv"; do
    : >"$tmp/empty.tsv"; printf '# header only\n' >"$tmp/comments.tsv"
    sum=$(gpu_rt_routing_summary "$f"); rc=$?
    echo "${f##*/}: exit $rc: $sum"
    [ $rc -eq 1 ] && [[ $sum == "not supported by this shim build"* ]] || bad "${f##*/}: exit $rc, '$sum'"
done
[ $fails -eq 0 ] || { echo "FAIL: $fails problems"; exit 1; }
echo "PASS: NCCL/cuBLAS-style libraries found through Python modules at any depth, the namespace, or a search; routing summary defensive"
