#!/usr/bin/env bash
# Property (docs/design.md §7, passthrough identity): with world size 1 and no policy, the mlp trainer
# prints byte-identical stdout and stderr and writes byte-identical --save files with and without
# LD_PRELOAD=libaccelshim.so, for every trainer option; --init per-process (output differs per pid
# by design) runs to completion under the shim. Skips (77) while the trainer is not built.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
T=$ROOT/build/tests/trainers
need "$T/mlp" "$T/libmlp_kernels_host.so"
export HOSTCUDA_KERNEL_LIBS=$T/libmlp_kernels_host.so
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
run_pair() {
    n=$((n + 1))
    local a=$tmp/plain.$n b=$tmp/shim.$n
    env -u ACCELSHIM_LOG "$T/mlp" "$@" --save "$a.bin" > "$a.out" 2> "$a.err"
    local rc1=$?
    LD_PRELOAD=$SHIM "$T/mlp" "$@" --save "$b.bin" > "$b.out" 2> "$b.err"
    local rc2=$?
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        echo "FAIL [$*]: exit codes $rc1 (plain) / $rc2 (shim)"; tail -3 "$a.err" "$b.err"; fails=$((fails + 1)); return
    fi
    if ! cmp -s "$a.out" "$b.out"; then
        echo "FAIL [$*]: stdout differs (< plain, > shim)"; diff "$a.out" "$b.out" | head -10; fails=$((fails + 1)); return
    fi
    if ! cmp -s "$a.bin" "$b.bin"; then
        echo "FAIL [$*]: --save files differ"; cmp "$a.bin" "$b.bin"; fails=$((fails + 1)); return
    fi
    if ! cmp -s "$a.err" "$b.err"; then
        echo "FAIL [$*]: stderr differs (the shim must be silent at the default level)"; diff "$a.err" "$b.err" | head -10
        fails=$((fails + 1)); return
    fi
    echo "ok [$*]: identical ($(grep -m1 checksum "$b.out"))"
}
run_pair --steps 20 --batch 8
run_pair --steps 15 --batch 4 --lr 0.05 --seed 7
run_pair --steps 10 --optimizer adam
run_pair --steps 10 --optimizer adam --update per-tensor
run_pair --steps 10 --update per-tensor
run_pair --steps 10 --clip 0.5
run_pair --steps 10 --optimizer adam --clip 1.0 --update fused
run_pair --steps 10 --shard-rank 1 --shard-count 3
run_pair --steps 0
run_pair --steps 5 --init seed
LD_PRELOAD=$SHIM "$T/mlp" --steps 5 --init per-process > "$tmp/pp.out" 2>&1 \
    && grep -q checksum "$tmp/pp.out" && echo "ok [--init per-process]: runs under the shim" \
    || { echo "FAIL [--init per-process]: did not run under the shim"; tail -5 "$tmp/pp.out"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || fail "$fails of $((n + 1)) trainer runs differ under the shim"
echo "PASS: passthrough identity for $n option sets; per-process init runs"
