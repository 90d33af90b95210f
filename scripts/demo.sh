#!/usr/bin/env bash
# demo.sh — `make demo`: the bundled legacy trainer (tests/trainers/mlp, unmodified, Driver API
# only) trained data-parallel on 2 ranks by accelshim, then checked against ONE process with a
# 2x larger batch. On a machine without a GPU the ranks run on hostcuda (--cpu).
set -u -o pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
b=$top/build
out=$b/demo
rm -rf "$out"; mkdir -p "$out"
steps=40 batch=8 np=2
train=(--steps "$steps" --clip 0.05 --init per-process)

cpu=(--cpu)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then cpu=(); fi
where=${cpu:+"hostcuda (no GPU here)"}; where=${where:-"GPU"}

echo "== accelshim demo: $np ranks of an unmodified single-GPU trainer, on $where"
echo "   policy: examples/mlp-clip.yaml (average gradients before the clip-norm kernel;"
echo "           broadcast rank 0's per-process initial weights at the first forward kernel)"
echo
set -x
"$top/scripts/accelerate-run" "${cpu[@]}" -n "$np" --policy "$top/examples/mlp-clip.yaml" \
    --log-dir "$out/logs" --tee -- \
    "$b/tests/trainers/mlp" --shard-rank "{rank}" --shard-count "{world_size}" \
    --batch "$batch" "${train[@]}" --save "$out/rank{rank}.bin" \
    | grep -E '^\[rank [0-9]+\] (step (0|10|20|30|39) |checksum)'
{ rc=${PIPESTATUS[0]}; set +x; } 2>/dev/null
[ "$rc" -eq 0 ] || { echo "demo: the $np-rank run failed (status $rc); logs in $out/logs"; exit 1; }

# the reference: one process, batch np*batch, starting from rank 0's initial weights
seed=$(sed -n 's/.*init_seed=\([0-9]*\).*/\1/p' "$out/logs/attempt-0/rank-0.log" | head -1)
[ -n "$seed" ] || { echo "demo: cannot find rank 0's init_seed in $out/logs/attempt-0/rank-0.log"; exit 1; }
echo
echo "== reference: 1 process, batch $((np * batch)), same initial weights (--init-seed $seed)"
libs=()
if [ ${#cpu[@]} -gt 0 ]; then
    libs=(env LD_LIBRARY_PATH="$b/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$b/tests/trainers/libmlp_kernels_host.so")
fi
"${libs[@]}" "$b/tests/trainers/mlp" --batch $((np * batch)) --steps "$steps" --clip 0.05 \
    --init-seed "$seed" --save "$out/reference.bin" 2>/dev/null | grep -E '^(step (0|39) |checksum)'

echo
echo "== result"
ok=0
"$b/tests/equivalence/fcompare" "$out/rank1.bin" "$out/rank0.bin" --identical | sed 's/^/ranks 0 and 1:        /' || ok=1
"$b/tests/equivalence/fcompare" "$out/rank0.bin" "$out/reference.bin" --rtol 1e-5 --atol 1e-6 \
    | sed 's/^/rank 0 vs 1 process:  /' || ok=1
if [ $ok -eq 0 ]; then
    echo "EQUAL: $np ranks x batch $batch ended with the parameters of 1 process x batch $((np * batch)) (rtol 1e-5)."
else
    echo "DIFFERENT: see above."
fi
exit $ok
