#!/usr/bin/env bash
# Property: a CUDA graph built BY HAND (hand_graph.c: cuGraphAddKernelNode[_v2], cuGraphAddNode[_v2]
# of type KERNEL, cuGraphKernelNodeSetParams[_v2], cuGraphNodeSetParams,
# cuGraphExecKernelNodeSetParams[_v2], cuGraphExecNodeSetParams; linked by name and, for the _v2
# forms, resolved through cuGetProcAddress_v2) cannot silently skip a sync point. Putting a kernel
# that matches a gradient rule into a graph stops the job at that call, exit 6, with a message
# naming the rule (file:line:col, at), the kernel and the driver call, at world size 1 and at 2
# ranks (every rank); a parameters rule whose buffer was not broadcast yet stops too (2 ranks),
# one already broadcast by an eager warm-up step does not (the graph runs and syncs).
# A graph of kernels that match no rule runs under the shim and gives the result it gives
# without the shim, bit for bit (1 rank; 2 ranks synced = the eager synced run).
# Controls: without the shim every buildable graph gives the eager result and the steps change
# the parameters (the replay really runs); the same program launching the kernel directly syncs
# at 2 ranks (ranks equal, unlike without the policy).
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/hand_graph" "$ITEST_PTX"
# shellcheck source=tests/intercept/mpi.sh
source "$(dirname "$0")/mpi.sh"
POL=$ROOT/tests/intercept/vmm_policy.yaml PPOL=$ROOT/tests/intercept/graph_params_policy.yaml
t_tmp; tmp=$T_TMP
params() { sed -n 's/^params //p' "$1"; }
msg() { # msg CALL [RULE_LINE AT]: the stop's message for a node added by CALL
    echo "${3:-vmm_policy}\\.yaml:${2:-5}:5: rule at \"${4:-ash_itest_sgd}\" matched ${4:-ash_itest_sgd}, put into a hand-built CUDA graph by $1: .*stopping the job \\(exit 6\\)\\. .*launch the matched kernels directly"
}
# build mode -> the driver call that puts ash_itest_sgd into the graph
declare -A CALL=([add]=cuGraphAddKernelNode_v2 [add_v1]=cuGraphAddKernelNode [addnode]=cuGraphAddNode_v2
                 [addnode_v1]=cuGraphAddNode [kset]=cuGraphKernelNodeSetParams_v2
                 [kset_v1]=cuGraphKernelNodeSetParams [nodeset]=cuGraphNodeSetParams
                 [execset]=cuGraphExecKernelNodeSetParams_v2 [execset_v1]=cuGraphExecKernelNodeSetParams
                 [execnodeset]=cuGraphExecNodeSetParams)
RUNS=(add addnode addnode_v1 kset execset) # the builds hostcuda can run (it lacks the legacy exports)

# no shim: every runnable build, linked and through cuGetProcAddress, equals the eager steps
env -u ACCELSHIM_POLICY "$B/hand_graph" --build none >"$tmp/eager" 2>&1 || { show "$tmp/eager"; no "no shim, eager failed"; }
eager=$(params "$tmp/eager")
env -u ACCELSHIM_POLICY "$B/hand_graph" --build none --steps 0 >"$tmp/eager0" 2>&1
[ -n "$eager" ] && [ "$(params "$tmp/eager0")" != "$eager" ] || no "control: 0 steps = 5 steps ('$eager'): the steps change nothing"
for b in "${RUNS[@]}"; do
    for gm in step grad; do
        for via in "" --gpa; do
            o=$tmp/ns.$b.$gm$via
            env -u ACCELSHIM_POLICY "$B/hand_graph" --build "$b" --graph $gm $via >"$o" 2>&1 || { show "$o"; no "no shim, $b $gm $via failed"; continue; }
            [ "$(params "$o")" = "$eager" ] && grep -q '^graph launches 5$' "$o" \
                || no "no shim, $b $gm $via: '$(params "$o")' != eager '$eager' (or not launched 5 times)"
        done
    done
done
echo "no shim: eager = every hand-built graph: $eager"

# world size 1: the sync kernel put into a graph stops the job at that call
shim1() { ACCELSHIM_POLICY=$1 LD_PRELOAD=$SHIM "$B/hand_graph" "${@:2}"; }
for b in "${!CALL[@]}"; do
    for via in "" --gpa; do
        [ -n "$via" ] && [[ $b == *_v1 || $b == *nodeset ]] && continue # cuGetProcAddress gives the _v2 forms
        o=$tmp/s1.$b$via
        shim1 "$POL" --build "$b" --graph step $via >"$o" 2>"$o.err"
        rc=$?
        if [ $rc -ne 6 ] || ! grep -Eq "$(msg "${CALL[$b]}")" "$o.err"; then
            no "world size 1, $b $via: rc $rc, want 6 and the rule, kernel and ${CALL[$b]} named"; show "$o" "$o.err"
        elif [ -s "$o" ]; then
            no "world size 1, $b $via: printed parameters: it went on after the stop"
        fi
    done
done
echo "world size 1: every way in stops (exit 6): $(grep -E "$(msg cuGraphAddKernelNode_v2)" "$tmp/s1.add.err" | cut -c1-200)..."

# world size 1, no sync kernel in the graph: runs, the same as without the shim
for b in "${RUNS[@]}"; do
    for via in "" --gpa; do
        o=$tmp/u1.$b$via
        shim1 "$POL" --build "$b" --graph grad $via >"$o" 2>"$o.err" || { show "$o" "$o.err"; no "world size 1, unmatched graph $b $via: failed"; continue; }
        [ "$(params "$o")" = "$eager" ] || no "world size 1, unmatched graph $b $via: '$(params "$o")' != no shim '$eager'"
    done
done
echo "world size 1, graphs without a sync kernel: = no shim"

# 2 ranks: stops on every rank; an unmatched graph = the eager synced run; controls
itest_ranks 2 mpi "$POL" "$tmp/cap" "$B/hand_graph" --build add --graph step
rc=$?
[ $rc -eq 6 ] || { no "2 ranks, sync kernel in a graph: rc $rc, want 6"; show "$tmp/cap".*; }
for r in 0 1; do
    grep -Eq "$(msg cuGraphAddKernelNode_v2)" "$tmp/cap.$r.err" || { no "2 ranks: rank $r did not name the rule"; show "$tmp/cap.$r.err"; }
done
itest_ranks 2 mpi "$POL" "$tmp/sync" "$B/hand_graph" --build none || { show "$tmp/sync".*; no "2 ranks, direct launches: failed"; }
itest_ranks 2 mpi "$POL" "$tmp/ug" "$B/hand_graph" --build add --graph grad --gpa || { show "$tmp/ug".*; no "2 ranks, unmatched graph: failed"; }
itest_ranks 2 mpi "" "$tmp/nopol" "$B/hand_graph" --build none || { show "$tmp/nopol".*; no "2 ranks, no policy: failed"; }
s0=$(params "$tmp/sync.0") s1=$(params "$tmp/sync.1") u0=$(params "$tmp/ug.0") u1=$(params "$tmp/ug.1")
n0=$(params "$tmp/nopol.0") n1=$(params "$tmp/nopol.1")
echo "2 ranks, direct launches: $s0 | $s1"
echo "2 ranks, unmatched graph: $u0 | $u1"
echo "2 ranks, no policy:       $n0 | $n1"
[ -n "$s0" ] && [ "$s0" = "$s1" ] || no "direct launches: ranks differ: '$s0' vs '$s1'"
[ "$u0" = "$s0" ] && [ "$u1" = "$s0" ] || no "unmatched graph: '$u0' / '$u1' != direct '$s0'"
[ "$n0" != "$n1" ] || no "control: without the policy the ranks agree: no sync needed"

# a parameters rule (broadcast once, not yet done) at the graph's kernel: stops at 2 ranks
itest_ranks 2 mpi "$PPOL" "$tmp/pcap" "$B/hand_graph" --build add --graph grad
rc=$?
pm=$(msg cuGraphAddKernelNode_v2 5 graph_params_policy ash_itest_grad)
[ $rc -eq 6 ] && grep -Eq "$pm" "$tmp/pcap.0.err" && echo "2 ranks, parameters rule in a graph: rc 6, rule named" \
    || { no "2 ranks, parameters rule not yet broadcast, in a graph: rc $rc, want 6 and the rule named"; show "$tmp/pcap".*; }
# ... and once its buffer was broadcast (an eager warm-up step), the same graph runs and syncs
itest_ranks 2 mpi "$PPOL" "$tmp/pwarm" "$B/hand_graph" --build add --graph grad --warmup 1 --steps 4 || { show "$tmp/pwarm".*; no "2 ranks, parameters already broadcast, in a graph: failed"; }
itest_ranks 2 mpi "$PPOL" "$tmp/peager" "$B/hand_graph" --build none || { show "$tmp/peager".*; no "2 ranks, parameters policy, direct launches: failed"; }
w0=$(params "$tmp/pwarm.0") w1=$(params "$tmp/pwarm.1") p0=$(params "$tmp/peager.0")
echo "2 ranks, parameters broadcast in warm-up, then graph: $w0 | $w1 (direct: $p0)"
[ -n "$w0" ] && [ "$w0" = "$w1" ] && [ "$w0" = "$p0" ] || no "warm-up + graph: '$w0' / '$w1' != direct '$p0'"
[ "$T_FAILS" -eq 0 ] || fail "$T_FAILS hand-built graph cases failed"
echo "PASS: a sync point put into a hand-built CUDA graph stops the job there (exit 6, rule and call named); graphs without one run as without the shim"
