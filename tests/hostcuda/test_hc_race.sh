#!/usr/bin/env bash
# Property: HOSTCUDA_JITTER makes a timing-dependent ordering bug show on EVERY run, and fresh
# allocations are poisoned. hc_race uploads on the legacy stream and reads on a non-blocking stream
# without synchronisation: under jitter (seeds 1-6) it must fail each time, reading poison (NaN);
# with the synchronisation added (--sync) it must pass under the same seeds. With HOSTCUDA_POISON=0
# the too-early read gives zeros (the value a plain allocation would hide behind).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
H=$ROOT/build/tests/hostcuda
if [ ! -x "$H/hc_race" ] || [ ! -e "$H/libcuda.so.1" ]; then echo "SKIP: hc_race / hostcuda not built"; exit 77; fi
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fails=0
for seed in 1 2 3 4 5 6; do
    out=$(HOSTCUDA_JITTER=$seed timeout 60 "$H/hc_race" 2>&1); rc=$?
    if [ $rc -ne 1 ] || ! grep -qE 'read -?nan' <<<"$out"; then
        echo "FAIL seed $seed: the racy program did not fail on poison (rc $rc): $out"; fails=$((fails + 1))
    fi
    out=$(HOSTCUDA_JITTER=$seed timeout 60 "$H/hc_race" --sync 2>&1); rc=$?
    [ $rc -eq 0 ] || { echo "FAIL seed $seed: with the sync added it failed (rc $rc): $out"; fails=$((fails + 1)); }
done
out=$(HOSTCUDA_JITTER=7 HOSTCUDA_POISON=0 timeout 60 "$H/hc_race" 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q 'read 0$' <<<"$out"; then
    echo "FAIL: HOSTCUDA_POISON=0: want a zero read, got rc $rc: $out"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "PASS: under jitter the race failed in 6 of 6 runs (NaN poison read), the synchronised program passed in 6 of 6"
