#!/usr/bin/env bash
# Property: CUDA graphs and stream capture cannot silently skip a sync point. A launch on a
# stream being captured (cuStreamIsCapturing, asked of the real driver) that matches a gradient
# rule, or a parameters rule whose buffer was not broadcast yet, stops the job with exit 6 and a
# message naming the rule (file:line:col, at) and the kernel, at 2 ranks and (gradient rules) at
# world size 1 — so no graph the job launches holds a launch that needed a collective. A
# parameters rule already broadcast (eager warm-up step) does not stop the capture. Controls:
# the same program without capture runs and syncs at 2 ranks (ranks equal, unlike without the
# policy); a captured graph with no matching launch replays under the shim and gives the eager
# result bit for bit (2 ranks, synced); without the shim, hostcuda's replay of a captured step
# equals the eager steps, and the steps change the parameters (the replay really runs).
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/graph_train" "$ITEST_PTX"
# shellcheck source=tests/intercept/mpi.sh
source "$(dirname "$0")/mpi.sh"
POL=$ROOT/tests/intercept/vmm_policy.yaml
t_tmp; tmp=$T_TMP
params() { sed -n 's/^params //p' "$1"; }
msg='vmm_policy\.yaml:5:5: rule at "ash_itest_sgd" matched ash_itest_sgd, launched on a stream that is in CUDA graph capture: .*stopping the job \(exit 6\)'

# hostcuda alone: the replayed step equals the eager step, and it moved the parameters
for m in none step grad steps0; do
    a=(--graph "$m"); [ $m = steps0 ] && a=(--graph step --steps 0)
    env -u ACCELSHIM_POLICY "$B/graph_train" "${a[@]}" >"$tmp/solo.$m" 2>&1 || { show "$tmp/solo.$m"; no "no shim, --graph $m failed"; }
done
echo "no shim: eager $(params "$tmp/solo.none"); graph $(params "$tmp/solo.step")"
[ "$(params "$tmp/solo.step")" = "$(params "$tmp/solo.none")" ] || no "no shim: replayed step != eager"
[ "$(params "$tmp/solo.grad")" = "$(params "$tmp/solo.none")" ] || no "no shim: replayed grad + eager update != eager"
grep -q '^graph launches 5$' "$tmp/solo.step" || no "no shim: the graph was not launched 5 times"
[ "$(params "$tmp/solo.steps0")" != "$(params "$tmp/solo.none")" ] || no "control: 0 steps = 5 steps: the steps change nothing"

# a matched launch inside capture stops the job: 2 ranks, then world size 1
itest_ranks 2 mpi "$POL" "$tmp/cap" "$B/graph_train" --graph step
rc=$?
if [ $rc -ne 6 ]; then
    no "2 ranks, matched launch captured: rc $rc, want 6"; show "$tmp/cap".*
else
    for r in 0 1; do grep -Eq "$msg" "$tmp/cap.$r.err" || { no "rank $r: no message naming the rule"; show "$tmp/cap.$r.err"; }; done
    [ -s "$tmp/cap.0" ] && no "rank 0 printed parameters: it went on after the capture"
    echo "2 ranks (rc $rc): $(grep -E "$msg" "$tmp/cap.0.err" | cut -c1-160)..."
fi
ACCELSHIM_POLICY=$POL LD_PRELOAD=$SHIM HOSTCUDA_KERNEL_LIBS=$ITEST_KLIBS "$B/graph_train" --graph step >"$tmp/cap1" 2>"$tmp/cap1.err"
rc=$?
[ $rc -eq 6 ] && grep -Eq "$msg" "$tmp/cap1.err" && echo "world size 1: rc 6, rule named" \
    || { no "world size 1, matched launch captured: rc $rc, want 6 and the rule named"; show "$tmp/cap1" "$tmp/cap1.err"; }

# controls at 2 ranks: without capture the program runs and syncs; an unmatched graph replays
itest_ranks 2 mpi "$POL" "$tmp/eager" "$B/graph_train" --graph none || { show "$tmp/eager".*; no "2 ranks, no capture: failed"; }
itest_ranks 2 mpi "$POL" "$tmp/ugraph" "$B/graph_train" --graph grad || { show "$tmp/ugraph".*; no "2 ranks, unmatched graph: failed"; }
itest_ranks 2 mpi "" "$tmp/nopol" "$B/graph_train" --graph none || { show "$tmp/nopol".*; no "2 ranks, no policy: failed"; }
e0=$(params "$tmp/eager.0"); e1=$(params "$tmp/eager.1"); u0=$(params "$tmp/ugraph.0"); u1=$(params "$tmp/ugraph.1")
echo "2 ranks, no capture:      $e0 | $e1"
echo "2 ranks, unmatched graph: $u0 | $u1"
echo "2 ranks, no policy:       $(params "$tmp/nopol.0") | $(params "$tmp/nopol.1")"
[ -n "$e0" ] && [ "$e0" = "$e1" ] || no "no capture: ranks differ or printed nothing: '$e0' vs '$e1'"
[ "$u0" = "$e0" ] && [ "$u1" = "$e0" ] || no "unmatched graph: '$u0' / '$u1' != eager '$e0'"
[ "$(params "$tmp/nopol.0")" != "$(params "$tmp/nopol.1")" ] || no "control: without the policy the ranks agree: no sync needed"
[ "$e0" != "$(params "$tmp/nopol.0")" ] || no "control: the synced run equals rank 0 without the policy"

# parameters rule (broadcast once) at the captured kernel: stops unless already broadcast
PPOL=$ROOT/tests/intercept/graph_params_policy.yaml
pmsg='graph_params_policy\.yaml:5:5: rule at "ash_itest_grad" matched ash_itest_grad, launched on a stream that is in CUDA graph capture'
itest_ranks 2 mpi "$PPOL" "$tmp/pcap" "$B/graph_train" --graph grad
rc=$?
[ $rc -eq 6 ] && grep -Eq "$pmsg" "$tmp/pcap.0.err" && echo "parameters rule not yet broadcast, captured: rc 6, rule named" \
    || { no "parameters rule not yet broadcast, captured: rc $rc, want 6 and the rule named"; show "$tmp/pcap".*; }
itest_ranks 2 mpi "$PPOL" "$tmp/pwarm" "$B/graph_train" --graph grad --warmup 1 --steps 4 || { show "$tmp/pwarm".*; no "parameters already broadcast, captured: failed"; }
itest_ranks 2 mpi "$PPOL" "$tmp/peager" "$B/graph_train" --graph none --steps 5 || { show "$tmp/peager".*; no "parameters policy, no capture: failed"; }
w0=$(params "$tmp/pwarm.0"); w1=$(params "$tmp/pwarm.1"); p0=$(params "$tmp/peager.0")
echo "parameters broadcast in warm-up, then graph: $w0 | $w1 (eager: $p0)"
[ -n "$w0" ] && [ "$w0" = "$w1" ] && [ "$w0" = "$p0" ] || no "warm-up + unmatched-by-now graph: '$w0' / '$w1' != eager '$p0'"
[ "$T_FAILS" -eq 0 ] || fail "$T_FAILS graph/capture cases failed"
echo "PASS: a sync point inside stream capture stops the job (exit 6, rule named); graphs without one replay correctly"
