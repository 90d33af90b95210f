#!/usr/bin/env bash
# Property: under the shim (LD_PRELOAD=libaccelshim.so, world 1) a program built with -cudart
# shared runs on hostcudart exactly as without it, and the shim sees the runtime's driver calls:
# rt_mlp's stdout is bit-identical with and without the shim; the shim's debug log names each of
# its kernels; the exit report counts as many launches through the shim as it counts for mlp (the
# same trainer on the Driver API) under the shim. rt_api's launch, symbol, ctx, threads and memory cases pass under
# the shim too. Control: a run with one more step must count different launches. Skips (77) when
# not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
D=$B/tests/hostcudart
RT=$B/tests/gpu/rt_mlp_hostcheck MLP=$B/tests/trainers/mlp KL=$B/tests/trainers/libmlp_kernels_host.so
for f in "$D/libcudart.so.13" "$B/libaccelshim.so" "$RT" "$MLP" "$KL" "$D/rt_api" "$B/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rt() { env LD_LIBRARY_PATH="$D:$B/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$KL" "$@"; }
launches() { sed -n 's/.*INFO report: \([0-9]*\) kernel launches through the shim.*/\1/p' "$1"; }

rt "$RT" --steps 6 >"$tmp/plain.out" 2>/dev/null || fail "rt_mlp without the shim exited $?"
rt env LD_PRELOAD="$B/libaccelshim.so" ACCELSHIM_LOG=debug "$RT" --steps 6 >"$tmp/shim.out" 2>"$tmp/shim.err" ||
    fail "rt_mlp under the shim exited $?: $(tail -2 "$tmp/shim.err")"
if cmp -s "$tmp/plain.out" "$tmp/shim.out"; then
    echo "ok: rt_mlp output identical with and without the shim ($(tail -1 "$tmp/shim.out"))"
else
    fail "rt_mlp output differs under the shim (< plain, > shim)"; diff "$tmp/plain.out" "$tmp/shim.out" | head -6
fi
for k in _Z14linear_forwardPfPKfS1_S1_iiii mse_loss mse_grad linear_backward_weight linear_backward_input sgd_update; do
    grep -q "DEBUG kernels: kernel $k " "$tmp/shim.err" || fail "the shim's debug log does not name kernel $k"
done
env LD_LIBRARY_PATH="$B/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$KL" LD_PRELOAD="$B/libaccelshim.so" ACCELSHIM_LOG=info \
    "$MLP" --steps 6 >/dev/null 2>"$tmp/mlp.err" || fail "mlp under the shim exited $?"
a=$(launches "$tmp/shim.err") b=$(launches "$tmp/mlp.err")
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" -gt 0 ]; then
    echo "ok: the shim counts $a launches for rt_mlp (runtime) and $b for mlp (Driver API)"
else
    fail "launches through the shim: rt_mlp '$a', mlp '$b' (want equal and > 0)"
fi
# control: the count is not a constant
rt env LD_PRELOAD="$B/libaccelshim.so" ACCELSHIM_LOG=info "$RT" --steps 7 >/dev/null 2>"$tmp/ctl.err"
c=$(launches "$tmp/ctl.err")
[ -n "$c" ] && [ "$c" != "$a" ] && echo "ok control: 7 steps count $c launches, not $a" ||
    fail "control: 7 steps counted '$c' launches, the same as 6 steps ('$a')"
for c in launch symbol ctx threads memory; do
    env LD_LIBRARY_PATH="$D:$B/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$D/librt_kernels_host.so" \
        LD_PRELOAD="$B/libaccelshim.so" "$D/rt_api" "$c" >"$tmp/$c.out" 2>"$tmp/$c.err" &&
        echo "ok: rt_api $c under the shim ($(grep -c '^ok' "$tmp/$c.out") checks)" ||
        { fail "rt_api $c under the shim"; grep -v '^ok' "$tmp/$c.out" | head -5; tail -2 "$tmp/$c.err"; }
done
[ $fails -eq 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS: hostcudart under the shim at world 1: identical output, every launch seen by the shim"
