#!/usr/bin/env bash
# Property: rt_mlp's host logic equals mlp's. rt_mlp.cu built with `-cudart shared` runs on
# hostcudart (build/tests/hostcudart/libcudart.so.13, the CUDA runtime on hostcuda's Driver API)
# with the same host kernels that hostcuda runs for mlp; for every option set its stdout
# (`step`/`checksum` lines), --save and --dump-samples files are bit-identical to mlp's on
# hostcuda, and its config line on stderr matches mlp's after the program name. This does NOT
# prove the real static cudart path (scripts/gpu-check.sh does, on a GPU). Skips (77) when not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
RT=$B/tests/gpu/rt_mlp_hostcheck MLP=$B/tests/trainers/mlp KL=$B/tests/trainers/libmlp_kernels_host.so
for f in "$RT" "$B/tests/hostcudart/libcudart.so.13" "$MLP" "$KL" "$B/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
while read -r args; do
    n=$((n + 1))
    read -r -a av <<<"$args"
    LD_LIBRARY_PATH=$B/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$KL "$MLP" "${av[@]}" --save "$tmp/m.bin" \
        --dump-samples "$tmp/m.dump" >"$tmp/m.out" 2>"$tmp/m.err"; r1=$?
    LD_LIBRARY_PATH=$B/tests/hostcudart:$B/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$KL "$RT" "${av[@]}" --save "$tmp/r.bin" \
        --dump-samples "$tmp/r.dump" >"$tmp/r.out" 2>"$tmp/r.err"; r2=$?
    if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
        echo "FAIL [$args]: exit $r1 (mlp) / $r2 (rt_mlp): $(tail -1 "$tmp/m.err") / $(tail -1 "$tmp/r.err")"; fails=$((fails + 1)); continue
    fi
    if ! cmp -s "$tmp/m.out" "$tmp/r.out"; then
        echo "FAIL [$args]: stdout differs (< mlp, > rt_mlp)"; diff "$tmp/m.out" "$tmp/r.out" | head -6; fails=$((fails + 1)); continue
    fi
    if ! cmp -s "$tmp/m.bin" "$tmp/r.bin" || ! cmp -s "$tmp/m.dump" "$tmp/r.dump"; then
        echo "FAIL [$args]: --save or --dump-samples differ"; fails=$((fails + 1)); continue
    fi
    if [ "$(sed 's/^mlp: //' "$tmp/m.err")" != "$(sed 's/^rt_mlp: //' "$tmp/r.err")" ]; then
        echo "FAIL [$args]: config lines differ: $(cat "$tmp/m.err") / $(cat "$tmp/r.err")"; fails=$((fails + 1)); continue
    fi
    echo "ok [$args]: identical ($(tail -1 "$tmp/r.out"))"
done <<'SETS'
--steps 20 --batch 8
--steps 15 --batch 4 --lr 0.05 --seed 7
--steps 10 --optimizer adam
--steps 10 --optimizer adam --update per-tensor --clip 1.0
--steps 10 --update per-tensor
--steps 10 --clip 0.05
--steps 10 --shard-rank 1 --shard-count 3 --init-seed 12345
--steps 0
SETS
# negative control: another seed must differ (the comparison can fail)
LD_LIBRARY_PATH=$B/tests/hostcudart:$B/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$KL "$RT" --steps 5 --seed 2 >"$tmp/r2.out" 2>/dev/null
LD_LIBRARY_PATH=$B/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$KL "$MLP" --steps 5 >"$tmp/m2.out" 2>/dev/null
cmp -s "$tmp/r2.out" "$tmp/m2.out" && { echo "FAIL: control: --seed 2 gave mlp's --seed 1 output"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "FAIL: $fails of $n option sets"; exit 1; }
echo "PASS: rt_mlp (runtime API, hostcudart) = mlp (Driver API, hostcuda), bit for bit, for $n option sets"
