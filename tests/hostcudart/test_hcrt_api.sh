#!/usr/bin/env bash
# Property: hostcudart implements the runtime's semantics for an unmodified nvcc -cudart shared
# program (rt_api.cu): launches from two fatbins (<<<>>> and cudaLaunchKernel), __device__ and
# __constant__ symbols, non-sticky errors and the cudaGetLastError reset, sticky errors (a driver
# failure injected by fault_inject.so: 700 is sticky, 2 is not; and a kernel's own illegal address
# where hostcuda runs kernels from their PTX, else that case is skipped and the PASS line says so),
# a context the program made with cuCtxCreate, per-thread device/launches/last error (4 threads),
# stream capture to a graph and its replays, a
# stream callback, bad input to the registration ABI (rt_badfat.c), an -rdc=true build (linked),
# the not-implemented path (cudaErrorNotSupported, one stderr line per call however
# often it is made), device properties with HOSTCUDA_SMS (a bad value: one line, the default), occupancy, memory/streams/events/reset,
# and the per-thread default stream (rt_api_ptsz imports the _ptsz/_ptds twins and they reach the
# driver's per-thread entry points); launch/memory/symbol/graph/threads also under HOSTCUDA_JITTER. Controls:
# without the kernels' host twins and with PTX execution off (HOSTCUDA_EXEC=twin) the launch case
# must fail; with the fault variable but no injector the sticky case must fail. Skips (77) when
# not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/tests
D=$B/hostcudart
for f in "$D/libcudart.so.13" "$D/rt_api" "$D/rt_api_ptsz" "$D/rt_badfat" "$D/librt_kernels_host.so" "$D/fault_inject.so" \
         "$B/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
run() { # run NAME EXPECTED_RC ENV... -- PROGRAM CASE
    local name=$1 want=$2; shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    env LD_LIBRARY_PATH="$D:$B/hostcuda" HOSTCUDA_KERNEL_LIBS="$D/librt_kernels_host.so" "${envs[@]}" \
        timeout 60 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL $name: exit $rc, expected $want"; grep -v '^ok' "$tmp/$name.out" | head -8; tail -3 "$tmp/$name.err"
        fails=$((fails + 1)); return 1
    fi
    echo "ok $name ($(grep -c '^ok' "$tmp/$name.out") checks)"
}
for c in launch symbol errors ctx graph threads unimpl memory; do run "$c" 0 -- "$D/rt_api" "$c"; done
run props 0 HOSTCUDA_SMS=8 -- "$D/rt_api" props
grep -qx 'sms 8' "$tmp/props.out" || { echo "FAIL props: HOSTCUDA_SMS=8 not reported: $(grep '^sms' "$tmp/props.out")"; fails=$((fails + 1)); }
for bad in 0 abc 12x 4096; do
    run "props_bad_$bad" 0 HOSTCUDA_SMS=$bad -- "$D/rt_api" props
    grep -qx 'sms 132' "$tmp/props_bad_$bad.out" && grep -q "^hostcuda: HOSTCUDA_SMS=$bad: not a count from 1 to 1024; using 132$" "$tmp/props_bad_$bad.err" ||
        { echo "FAIL props: HOSTCUDA_SMS=$bad: want one line naming it and 132 SMs: $(cat "$tmp/props_bad_$bad.err")"; fails=$((fails + 1)); }
done
run props_default 0 -- "$D/rt_api" props
grep -qx 'sms 132' "$tmp/props_default.out" || { echo "FAIL props: default SM count is not 132"; fails=$((fails + 1)); }
run sticky700 0 LD_PRELOAD="$D/fault_inject.so" HCRT_TEST_FAULT=700 -- "$D/rt_api" sticky
run sticky2 0 LD_PRELOAD="$D/fault_inject.so" HCRT_TEST_FAULT=2 -- "$D/rt_api" sticky
run ptsz_legacy 0 -- "$D/rt_api" ptsz
run ptsz 0 -- "$D/rt_api_ptsz" ptsz
# the runtime's ordering (synchronous copies, stream 0, events) holds when streams run late
for c in launch memory symbol graph threads; do run "jitter_$c" 0 HOSTCUDA_JITTER=20261201 -- "$D/rt_api" "$c"; done

# a kernel's own fault (illegal address) is sticky: needs a hostcuda that runs kernels from their PTX
skipped=''
if env LD_LIBRARY_PATH="$D:$B/hostcuda" HOSTCUDA_KERNEL_LIBS= timeout 60 "$D/rt_api" launch >/dev/null 2>&1; then
    run fault 0 HOSTCUDA_KERNEL_LIBS= -- "$D/rt_api" fault
else
    skipped=' (case fault skipped: this hostcuda runs no kernel without a host twin)'
    echo "skip fault: this hostcuda runs no kernel without a host twin"
fi
# the registration ABI with bad input: named, no crash, the launch answers InvalidKernelImage
run badfat 0 -- "$D/rt_badfat"
grep -q '^hostcudart: __cudaRegisterFatBinary: not a fatbin wrapper (magic 0x12345678, version 1)' "$tmp/badfat.err" ||
    { echo "FAIL badfat: no line naming the bad wrapper: $(cat "$tmp/badfat.err")"; fails=$((fails + 1)); }
# relocatable device code (-rdc=true): the runtime links the units' PTX through cuLink* and the
# same cases pass (test_hcrt_rdc.sh has a program whose units need each other)
if [ -x "$D/rt_api_rdc" ]; then
    for c in launch symbol; do run "rdc-$c" 0 -- "$D/rt_api_rdc" "$c"; done
fi
# the not-implemented path names each call once, however often it is made
n=$(grep -c '^hostcudart: cudaGraphAddEventRecordNode is not implemented$' "$tmp/unimpl.err")
[ "$n" = 1 ] || { echo "FAIL unimpl: 'cudaGraphAddEventRecordNode is not implemented' printed $n times, expected once"; fails=$((fails + 1)); }
# the per-thread build really imports the twins
for s in __cudaLaunchKernel_ptsz cudaMemcpy_ptds cudaStreamSynchronize_ptsz; do
    nm -D "$D/rt_api_ptsz" | grep -q " U $s@libcudart.so.13" || { echo "FAIL ptsz: rt_api_ptsz does not import $s"; fails=$((fails + 1)); }
done

# controls: the checks can fail
run control_no_twins 1 HOSTCUDA_KERNEL_LIBS=/nonexistent.so HOSTCUDA_EXEC=twin -- "$D/rt_api" launch >/dev/null &&
    echo "ok control: without host twins the launch case fails ($(grep -c '^FAIL' "$tmp/control_no_twins.out") FAIL lines)"
run control_no_injector 1 HCRT_TEST_FAULT=700 -- "$D/rt_api" sticky >/dev/null &&
    echo "ok control: without the injector the sticky case fails"
[ $fails -eq 0 ] || { echo "FAIL: $fails case(s)"; exit 1; }
echo "PASS: hostcudart runtime semantics (rt_api, rt_api_ptsz)$skipped"
