#!/usr/bin/env bash
# Property (issue 17, the stress case): 4 ranks, tens of thousands of small collectives, with
# fusion off and on, --debug (check_collectives: a fingerprint exchange before each collective),
# on the nccl backend (hostnccl: every collective watched on the stream) under hostcuda's
# HOSTCUDA_JITTER (stream ops delayed by seeded random amounts). Each run must end with exit 0
# (no hang: bounded by `timeout`, 124 fails), every rank's VmRSS after the last step within
# RSS_BOUND_KB of its VmRSS after step 100 (no leak per collective), and all ranks' final
# parameters bit-identical (checksum lines). Scale: mlp --update-chunks 16 makes 52 non-empty
# update launches a step, each a sync point; STRESS_STEPS (default 700) steps = 36,400
# all-reduces unfused (100,000 needs STRESS_STEPS=1924: ~4 min alone on 2 busy cores).
# Control: the same comparison of 4 ranks trained apart (no shim) must find them different.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1" "$RL_LAUNCHER" \
    "$RL_BUILD/tests/hostnccl/libnccl.so.2"
need_mpirun

steps=${STRESS_STEPS:-700}
bound=${RSS_BOUND_KB:-2048}
export HOSTCUDA_JITTER=${HOSTCUDA_JITTER:-20261201}
echo "# HOSTCUDA_JITTER=$HOSTCUDA_JITTER steps=$steps rss bound ${bound} kB"
trainer=(--batch 4 --optimizer adam --update per-tensor --update-chunks 16)

# same_checksums FILE: 0 when FILE holds 4 `checksum` lines, all equal (each printed)
same_checksums() {
    local n u
    grep -E '(^|\] )checksum ' "$1" | sed 's/^/  /'
    n=$(grep -cE '(^|\] )checksum ' "$1")
    u=$(grep -E '(^|\] )checksum ' "$1" | sed 's/.*checksum //' | sort -u | wc -l)
    [ "$n" -eq 4 ] && [ "$u" -eq 1 ]
}

# control: without the shim each rank trains on its own shard; the comparison must see it
for r in 0 1 2 3; do
    LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$RL_KLIBS "$RL_MLP" "${trainer[@]}" \
        --steps 20 --shard-rank "$r" --shard-count 4 | grep '^checksum' >>"$RL_TMP/control"
done
if same_checksums "$RL_TMP/control"; then fail "control: 4 ranks trained apart compare equal"; fi
echo "ok: control: 4 ranks trained apart differ (the comparison can fail)"

for pol in adam-per-tensor adam-per-tensor-fused; do
    rl_launch 600 -n 4 --debug --backend nccl --timeout 60 --policy "$RL_POL/$pol.yaml" -- \
        "$RL_MLP" "${trainer[@]}" --steps "$steps" --shard-rank '{rank}' \
        --shard-count '{world_size}' --rss-at-step 100
    red=$(grep -m1 -o 'sync: [0-9]* all-reduce(s)' "$RL_TMP/out")
    echo "$pol: exit $RL_RC after ${RL_SECS}s; rank: $red"
    [ "$RL_RC" -eq 0 ] || { rl_show; fail "$pol: exit $RL_RC (124: hung)"; }
    grep -q "ACCELSHIM_CHECK_COLLECTIVES=1" "$RL_TMP/out" || { rl_show; fail "$pol: --debug did not turn check_collectives on"; }
    for r in 0 1 2 3; do
        a=$(sed -n "s/^\[rank $r\] rss step 100 \([0-9]*\)$/\1/p" "$RL_TMP/out")
        b=$(sed -n "s/^\[rank $r\] rss end \([0-9]*\)$/\1/p" "$RL_TMP/out")
        [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ] || { rl_show; fail "$pol: rank $r printed no VmRSS"; }
        echo "  rank $r VmRSS: $a kB after step 100, $b kB after step $((steps - 1)) ($((b - a)) kB)"
        [ $((b - a)) -le "$bound" ] || fail "$pol: rank $r grew by $((b - a)) kB (> $bound kB) from step 100 to the end"
    done
    same_checksums "$RL_TMP/out" || { rl_show; fail "$pol: the ranks' final parameters differ"; }
    echo "ok: $pol: no hang, no growth beyond $bound kB, ranks bit-identical"
done
