#!/usr/bin/env bash
# Property: allocations made with virtual memory management (cuMemAddressReserve, cuMemCreate,
# cuMemMap, cuMemSetAccess) are in the shim's allocation table, one entry per cuMemMap (its
# mapped extent), so a `region: allocation` rule works on them: vmm_train at 2 ranks with its
# gradients in a VMM mapping ends with parameters bit-identical to the cuMemAlloc version, on
# both backends. Controls: without the policy the two ranks differ (the sync point matters);
# a mapping unmapped and released before the update leaves the table, and the rule then stops
# the job as for any pointer in no allocation (exit 2, naming the rule and the pointer). Count
# forms: a count that fits the mapping runs; one past it, or on an unmapped pointer, stops the
# job (exit 2) naming the rule, the count and the mapping's size.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/vmm_train" "$ITEST_PTX"
# shellcheck source=tests/intercept/mpi.sh
source "$(dirname "$0")/mpi.sh"
POL=$ROOT/tests/intercept/vmm_policy.yaml
t_tmp; tmp=$T_TMP

for backend in mpi nccl; do
    if [ $backend = nccl ] && [ ! -e "$ROOT/build/tests/hostnccl/libnccl.so.2" ]; then
        echo "(nccl backend: hostnccl not built; only mpi)"; continue
    fi
    itest_ranks 2 $backend "$POL" "$tmp/mem.$backend" "$B/vmm_train" --alloc mem --steps 6 \
        || { show "$tmp/mem.$backend".*; no "$backend: cuMemAlloc run failed"; continue; }
    itest_ranks 2 $backend "$POL" "$tmp/vmm.$backend" "$B/vmm_train" --alloc vmm --steps 6 \
        || { show "$tmp/vmm.$backend".*; no "$backend: VMM run failed"; continue; }
    m0=$(cat "$tmp/mem.$backend.0"); m1=$(cat "$tmp/mem.$backend.1")
    v0=$(cat "$tmp/vmm.$backend.0"); v1=$(cat "$tmp/vmm.$backend.1")
    echo "$backend: cuMemAlloc rank 0: $m0"
    echo "$backend: VMM        rank 0: $v0"
    [ "$m0" = "$m1" ] || no "$backend: cuMemAlloc ranks differ: '$m0' vs '$m1'"
    [ "$v0" = "$v1" ] || no "$backend: VMM ranks differ: '$v0' vs '$v1'"
    [ "$v0" = "$m0" ] || no "$backend: VMM '$v0' != cuMemAlloc '$m0'"
done

# control: no policy -> the ranks' parameters differ, and differ from the synchronised run
itest_ranks 2 mpi "" "$tmp/none" "$B/vmm_train" --alloc vmm --steps 6 || { show "$tmp/none".*; no "run without a policy failed"; }
n0=$(cat "$tmp/none.0"); n1=$(cat "$tmp/none.1")
echo "no policy: rank 0: $n0"
echo "no policy: rank 1: $n1"
[ "$n0" != "$n1" ] || no "control: without the policy both ranks ended equal ('$n0'): the test cannot tell a sync from none"
[ "$n0" != "$(cat "$tmp/mem.mpi.0" 2>/dev/null)" ] || no "control: without the policy rank 0 equals the synchronised run"

# control: an unmapped, released range is not an allocation any more
itest_ranks 2 mpi "$POL" "$tmp/unmap" "$B/vmm_train" --alloc vmm --steps 6 --unmap-before-update 2
rc=$?
msg='vmm_policy.yaml:[0-9]+:[0-9]+: rule at "ash_itest_sgd" \(region: allocation\): pointer 0x[0-9a-f]+, argument 1 of ash_itest_sgd, lies in no live allocation'
if [ $rc -eq 0 ]; then
    no "control: the update on an unmapped range ran (rc 0)"; show "$tmp/unmap".*
elif ! grep -Eq "$msg" "$tmp/unmap.0.err"; then
    no "control: rank 0 did not stop naming the rule and the pointer (rc $rc)"; show "$tmp/unmap".*
else
    echo "unmapped range (rc $rc): $(grep -E "$msg" "$tmp/unmap.0.err")"
fi
# count forms: a VMM mapping is one allocation (the gradients fill the second 2 MiB mapping from
# its start): count 524288 (the mapping) runs, 524289 runs past it and stops the job (exit 2),
# and a count whose pointer was unmapped names no live allocation (exit 2)
count_policy() { sed "s/region: allocation/count: $1/" "$POL" >"$tmp/count-$1.yaml"; }
count_policy 524288; count_policy 524289; count_policy 1000
itest_ranks 2 mpi "$tmp/count-524288.yaml" "$tmp/c-fit" "$B/vmm_train" --alloc vmm --steps 2 \
    || { show "$tmp/c-fit".*; no "count: 524288 (the whole mapping) failed"; }
itest_ranks 2 mpi "$tmp/count-524289.yaml" "$tmp/c-past" "$B/vmm_train" --alloc vmm --steps 2
rc=$?
msg='count-524289.yaml:[0-9]+:[0-9]+: gradients\[0\] .*524289 f32 \(count: 524289 in the policy\) at ash_itest_sgd runs past .*holds 2097152 bytes'
if [ $rc -ne 2 ] || ! grep -Eq "$msg" "$tmp/c-past.0.err"; then
    no "count: 524289 past the mapping: rc $rc, expected 2 naming the rule and the mapping's size"; show "$tmp/c-past".*
else
    echo "count past the mapping (rc $rc): $(grep -Eo 'runs past.*needed' "$tmp/c-past.0.err" | head -1)"
fi
itest_ranks 2 mpi "$tmp/count-1000.yaml" "$tmp/c-unmap" "$B/vmm_train" --alloc vmm --steps 6 --unmap-before-update 2
rc=$?
if [ $rc -ne 2 ] || ! grep -q 'count: 1000 in the policy) at ash_itest_sgd has its pointer 0x[0-9a-f]* (argument 1) in no live allocation' "$tmp/c-unmap.0.err"; then
    no "count: 1000 on an unmapped range: rc $rc, expected 2 naming no live allocation"; show "$tmp/c-unmap".*
else
    echo "count on an unmapped range (rc $rc): refused"
fi
[ "$T_FAILS" -eq 0 ] || fail "$T_FAILS VMM allocation cases failed"
echo "PASS: VMM mappings are allocations for region: allocation (2 ranks = cuMemAlloc, bit for bit) and for count forms (one mapping = one allocation); unmapped ones are not"
