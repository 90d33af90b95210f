#!/usr/bin/env bash
# Property: a sync point never reduces past its buffer (issue 23, item 2). Every sync point checks
# that [ptr, ptr + count * size) lies in one live allocation; otherwise the job stops (exit 2)
# with one line naming the rule (file:line:col), the kernel, the count, where the count came from
# (the policy's constant or argument N) and the allocation's size. A count_arg that names a
# pointer or a float argument is refused the same way. On 2 ranks of the bundled trainer
# (mlp --optimizer adam: adam_update's grads, argument 1, hold 676 f32 in their own allocation),
# on both backends (mpi: mpirun; nccl: --launcher local):
#   count: 1352, count: 677      -> exit 2 naming the rule, adam_update, the count, 2704 bytes
#                                   (before: exit 0, the neighbouring allocation overwritten)
#   count_arg: 5 (float lr)      -> exit 2 naming argument 5
#   count_arg: 2 (pointer m)     -> exit 2 naming argument 2
#   control: count: 676          -> exit 0, the ranks agree (the checks refuse only what is wrong)
# And one rank: count: 677 stops too (a rehearsal on one GPU finds it). A mangled kernel whose
# count argument is declared a pointer (linear_forward(float*, ...), count_arg: 0) is refused at
# its first launch, naming the declared type.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_LAUNCHER"
rl_backends

# policy NAME BUFFER: a gradient rule at adam_update with that buffer form
policy() {
    printf 'version: 1\ngradients:\n  - at: "adam_update"\n    buffer: %s\n    dtype: f32\n    reduce: sum\n' "$2" >"$RL_TMP/$1.yaml"
}
policy c1352 '{ arg: 1, count: 1352 }'
policy c677 '{ arg: 1, count: 677 }'
policy c676 '{ arg: 1, count: 676 }'
policy float '{ arg: 1, count_arg: 5 }'
policy ptr '{ arg: 1, count_arg: 2 }'

# job BACKEND POLICY [N]: 2 (or N) ranks of mlp --optimizer adam under the launcher
job() {
    local engine=(--backend mpi)
    [ "$1" = nccl ] && engine=(--backend nccl --launcher local)
    rl_launch 90 -n "${3:-2}" "${engine[@]}" --timeout 20 --policy "$RL_TMP/$2.yaml" -- "$RL_MLP" \
        --optimizer adam --steps 3 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}'
}
# refused BACKEND POLICY ERE...: exit 2 and one accelshim line matching every ERE
refused() {
    local b=$1 p=$2 re line; shift 2
    job "$b" "$p"
    line=$(grep -m1 'runs past\|in no live allocation\|not an integer' "$RL_TMP/out")
    [ "$RL_RC" = 2 ] || { rl_show 15; fail "$b, $p: exit $RL_RC, expected 2"; }
    for re in "$@"; do
        grep -Eq -- "$re" <<<"$line" || { rl_show 15; fail "$b, $p: the line does not match /$re/: '$line'"; }
    done
    ! grep -q '\] step 0 ' "$RL_TMP/out" || { rl_show 15; fail "$b, $p: a step ran before the refusal"; }
    echo "ok: $b, $p: exit 2: ${line:0:200}..."
}
for b in "${RL_BACKENDS[@]}"; do
    refused "$b" c1352 "c1352\.yaml:[0-9]+:[0-9]+" 'adam_update' '1352 f32' 'count: 1352 in the policy' '2704 bytes'
    refused "$b" c677 "c677\.yaml:[0-9]+:[0-9]+" 'adam_update' '677 f32' 'count: 677 in the policy' '2704 bytes'
    refused "$b" float "float\.yaml:[0-9]+:[0-9]+" 'adam_update' 'argument 5'
    refused "$b" ptr "ptr\.yaml:[0-9]+:[0-9]+" 'adam_update' 'argument 2'
    job "$b" c676
    [ "$RL_RC" = 0 ] || { rl_show 15; fail "$b, control count: 676: exit $RL_RC, expected 0"; }
    c=$(sed -n 's/^\[rank \([01]\)\] checksum //p' "$RL_TMP/out" | sort -u | wc -l)
    [ "$c" = 1 ] || { rl_show 15; fail "$b, control count: 676: the ranks' checksums differ"; }
    echo "ok: $b, control count: 676: exit 0, the ranks agree"
done

# one rank: the same refusal (no collective would run, but the policy is wrong)
rl_launch 60 -n 1 --policy "$RL_TMP/c677.yaml" -- "$RL_MLP" --optimizer adam --steps 2 --batch 2
line=$(grep -m1 'runs past' "$RL_TMP/out")
[ "$RL_RC" = 2 ] && [ -n "$line" ] || { rl_show 15; fail "one rank, count: 677: exit $RL_RC, expected 2 with the line"; }
echo "ok: one rank, count: 677: exit 2"

# a mangled kernel: the declared type of the count argument is known
printf 'version: 1\nparameters:\n  - at: "linear_forward"\n    buffer: { arg: 1, count_arg: 0 }\n    dtype: f32\n' >"$RL_TMP/mangled.yaml"
rl_launch 60 -n 2 --backend mpi --sync-optional --policy "$RL_TMP/mangled.yaml" -- "$RL_MLP" --steps 2 --batch 2 \
    --shard-rank '{rank}' --shard-count '{world_size}'
line=$(grep -m1 'not an integer' "$RL_TMP/out")
[ "$RL_RC" = 2 ] && grep -q 'mangled\.yaml:[0-9]*:[0-9]*: .*argument 0 of kernel linear_forward.* is float\*' <<<"$line" \
    || { rl_show 15; fail "mangled kernel, count_arg: 0 (float*): exit $RL_RC, expected 2 naming the declared type"; }
echo "ok: a count argument declared float* is refused: ${line:0:200}"
