#!/usr/bin/env bash
# Property: test_hand_graph.sh's property through the CUDA runtime: an unmodified nvcc -cudart
# shared program (rt_hand_graph.cu, on hostcudart) that builds its graph with
# cudaGraphAddKernelNode, cudaGraphAddNode, cudaGraphKernelNodeSetParams or
# cudaGraphExecKernelNodeSetParams (the runtime makes the driver's _v2 calls) stops at the call
# that puts the sync point's kernel into the graph: exit 6, the rule, the kernel and the driver
# call named, at world size 1 and on both of 2 ranks. A graph of kernels that match no rule runs
# and gives the result it gives without the shim (1 rank), or the synced eager result (2 ranks).
# Controls: without the shim every graph gives the eager result and the steps change the
# parameters; the same program launching the kernel directly (<<<...>>>) syncs at 2 ranks (ranks
# equal, unlike without the policy).
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
RTD=$T_BUILD/tests/hostcudart
need "$B/rt_hand_graph" "$RTD/libcudart.so.13"
# shellcheck source=tests/intercept/mpi.sh
source "$(dirname "$0")/mpi.sh"
export ITEST_LIBPATH=$RTD LD_LIBRARY_PATH=$RTD:$LD_LIBRARY_PATH
POL=$ROOT/tests/intercept/rt_graph_policy.yaml
t_tmp; tmp=$T_TMP
params() { sed -n 's/^params //p' "$1"; }
msg() {
    echo "rt_graph_policy\\.yaml:5:5: rule at \"rt_sgd\" matched rt_sgd, put into a hand-built CUDA graph by $1: .*stopping the job \\(exit 6\\)"
}
declare -A CALL=([add]=cuGraphAddKernelNode_v2 [addnode]=cuGraphAddNode_v2 [kset]=cuGraphKernelNodeSetParams_v2
                 [execset]=cuGraphExecKernelNodeSetParams_v2)
run() { timeout 120 "$B/rt_hand_graph" "$@"; }

run --build none >"$tmp/eager" 2>&1 || { show "$tmp/eager"; no "no shim, eager failed"; }
eager=$(params "$tmp/eager")
run --build none --steps 0 >"$tmp/eager0" 2>&1
[ -n "$eager" ] && [ "$(params "$tmp/eager0")" != "$eager" ] || no "control: 0 steps = 5 steps ('$eager')"
for b in "${!CALL[@]}"; do
    for gm in step grad; do
        o=$tmp/ns.$b.$gm
        run --build "$b" --graph $gm >"$o" 2>&1 || { show "$o"; no "no shim, $b $gm failed"; continue; }
        [ "$(params "$o")" = "$eager" ] && grep -q '^graph launches 5$' "$o" || no "no shim, $b $gm: '$(params "$o")' != eager '$eager'"
    done
done
echo "no shim: eager = every hand-built graph: $eager"

for b in "${!CALL[@]}"; do
    o=$tmp/s1.$b
    ACCELSHIM_POLICY=$POL LD_PRELOAD=$SHIM run --build "$b" --graph step >"$o" 2>"$o.err"
    rc=$?
    if [ $rc -ne 6 ] || ! grep -Eq "$(msg "${CALL[$b]}")" "$o.err"; then
        no "world size 1, $b: rc $rc, want 6 and the rule, kernel and ${CALL[$b]} named"; show "$o" "$o.err"
    else
        echo "world size 1, cudaGraph $b: rc 6, ${CALL[$b]} named"
    fi
    o=$tmp/u1.$b
    ACCELSHIM_POLICY=$POL LD_PRELOAD=$SHIM run --build "$b" --graph grad >"$o" 2>"$o.err" \
        || { show "$o" "$o.err"; no "world size 1, unmatched graph $b: failed"; continue; }
    [ "$(params "$o")" = "$eager" ] || no "world size 1, unmatched graph $b: '$(params "$o")' != no shim '$eager'"
done

itest_ranks 2 mpi "$POL" "$tmp/cap" "$B/rt_hand_graph" --build add --graph step
rc=$?
[ $rc -eq 6 ] || { no "2 ranks, sync kernel in a graph: rc $rc, want 6"; show "$tmp/cap".*; }
for r in 0 1; do
    grep -Eq "$(msg cuGraphAddKernelNode_v2)" "$tmp/cap.$r.err" || { no "2 ranks: rank $r did not name the rule"; show "$tmp/cap.$r.err"; }
done
itest_ranks 2 mpi "$POL" "$tmp/sync" "$B/rt_hand_graph" --build none || { show "$tmp/sync".*; no "2 ranks, direct launches: failed"; }
itest_ranks 2 mpi "$POL" "$tmp/ug" "$B/rt_hand_graph" --build add --graph grad || { show "$tmp/ug".*; no "2 ranks, unmatched graph: failed"; }
itest_ranks 2 mpi "" "$tmp/nopol" "$B/rt_hand_graph" --build none || { show "$tmp/nopol".*; no "2 ranks, no policy: failed"; }
s0=$(params "$tmp/sync.0") s1=$(params "$tmp/sync.1") u0=$(params "$tmp/ug.0") u1=$(params "$tmp/ug.1")
n0=$(params "$tmp/nopol.0") n1=$(params "$tmp/nopol.1")
echo "2 ranks, direct launches: $s0 | $s1"
echo "2 ranks, unmatched graph: $u0 | $u1"
echo "2 ranks, no policy:       $n0 | $n1"
[ -n "$s0" ] && [ "$s0" = "$s1" ] || no "direct launches: ranks differ: '$s0' vs '$s1'"
[ "$u0" = "$s0" ] && [ "$u1" = "$s0" ] || no "unmatched graph: '$u0' / '$u1' != direct '$s0'"
[ "$n0" != "$n1" ] || no "control: without the policy the ranks agree: no sync needed"
[ "$T_FAILS" -eq 0 ] || fail "$T_FAILS runtime hand-built graph cases failed"
echo "PASS: the runtime's hand-built graphs: a sync point put in stops the job there (exit 6); graphs without one run as without the shim"
