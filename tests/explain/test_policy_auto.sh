#!/usr/bin/env bash
# test_policy_auto.sh — `accelerate-run --policy auto`: with no suggestion cached for the program
# and its arguments, one rank runs it first (accelerate-run suggest), the policy is cached under
# $XDG_CACHE_HOME/accelshim/policies/ (sha256 of the program file and of its arguments) and
# printed, and the job runs with it: 2 ranks of mlp --clip 0.01 end bit-identical (checksums) with
# the sync point at grad_norm_squared. A second launch takes the cached policy without a new run;
# other arguments (no --clip) get their own suggestion (sgd_update).
# Negative control: a program whose one step does not repeat (--steps 1) gets no policy: the
# launcher stops before any rank starts, non-zero, saying so.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
t_need "$T_SHIM" "$T_MLP" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_need_mpirun
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache
cache=$XDG_CACHE_HOME/accelshim/policies
args=(--steps 6 --clip 0.01 --shard-rank '{rank}' --shard-count '{world_size}')

"$T_LAUNCHER" --cpu -n 2 --policy auto -- "$T_MLP" "${args[@]}" > "$work/first.log" 2>&1
rc=$?
[ $rc -eq 0 ] || t_show "$work/first.log"
t_case $rc "first launch with --policy auto runs (exit 0)"
grep -q 'policy auto: none cached' "$work/first.log" && grep -q '^    |   - at: "grad_norm_squared"' "$work/first.log"
t_case $? "it made the suggestion first and printed the policy used (gradients at grad_norm_squared)"
sums=$(sed -n 's/^\[rank \([01]\)\] checksum \(.*\)$/\2/p' "$work/first.log" | sort -u | wc -l)
[ "$(grep -c '^\[rank [01]\] checksum' "$work/first.log")" -eq 2 ] && [ "$sums" -eq 1 ]
t_case $? "the 2 ranks end with the same parameters (one checksum)"
n=$(find "$cache" -name '*.yaml' 2>/dev/null | wc -l)
[ "$n" -eq 1 ]
t_case $? "one policy cached ($n)"

"$T_LAUNCHER" --cpu -n 2 --policy auto -- "$T_MLP" "${args[@]}" > "$work/second.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'policy auto: .*suggested earlier' "$work/second.log" && ! grep -q 'none cached' "$work/second.log"
rc=$?
[ $rc -eq 0 ] || t_show "$work/second.log"
t_case $rc "second launch takes the cached policy"

"$T_LAUNCHER" --cpu -n 2 --policy auto -- "$T_MLP" --steps 6 --shard-rank '{rank}' --shard-count '{world_size}' > "$work/noclip.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^    |   - at: "sgd_update"' "$work/noclip.log" && [ "$(find "$cache" -name '*.yaml' | wc -l)" -eq 2 ]
rc=$?
[ $rc -eq 0 ] || t_show "$work/noclip.log"
t_case $rc "other arguments (no --clip) get their own suggestion: gradients at sgd_update"

"$T_LAUNCHER" --cpu -n 2 --policy auto -- "$T_MLP" --steps 1 > "$work/one.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'no policy could be suggested' "$work/one.log" && ! grep -q '^\[rank 1\]' "$work/one.log"
rc=$?
[ $rc -eq 0 ] || t_show "$work/one.log"
t_case $rc "control: nothing repeats (--steps 1): no policy, no rank started, non-zero"
t_done
