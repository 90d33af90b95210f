#!/usr/bin/env bash
# test_mixed_trainer.sh — issue 10 with the bundled trainer in `--gemm cublas` mode (its 5 matmuls
# per step through cublasSgemm_v2, libcublas.so.13 = build/tests/hostcublas on hostcuda).
# Properties (TAP):
#  - `--gemm kernels` (the default) prints exactly what the trainer prints without the option;
#  - one rank, matmul: default under the shim -> stdout bit-identical to the run without the shim;
#  - one rank, matmul: bf16 -> the final parameters differ from fp32 (the policy took effect), the
#    loss still falls, and the report counts 5 x steps GEMMs as 32F_FAST_16BF;
#  - two ranks (mpirun, examples/mlp.yaml + precision bf16, mpi backend): both ranks end with
#    bit-identical parameters, the loss falls on each, each report counts 5 x steps 32F_FAST_16BF;
#  - a bad --gemm value is a usage error (exit 2).
# Nothing here runs on a GPU.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/equivalence/lib.sh disable=SC1091
. "$ROOT/tests/equivalence/lib.sh" # eq_mpirun, EQ_KLIBS, EQ_MLP, EQ_SHIM
B=$ROOT/build
for f in "$EQ_MLP" "$EQ_SHIM" "$B/tests/hostcuda/libcuda.so.1" "$B/tests/hostcublas/libcublas.so.13" \
         "$B/collectives/libash_cast_kernels_host.so"; do
    [ -e "$f" ] || { echo "1..0 # SKIP $f not built"; exit 77; }
done
command -v mpirun >/dev/null || { echo "1..0 # SKIP mpirun not installed"; exit 77; }
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
LIBS=$B/tests/hostcublas:$B/tests/hostcuda
STEPS=30 BATCH=4
N=0 FAILED=0
tap() { N=$((N + 1)); if [ "$1" -eq 0 ]; then echo "ok $N - $2"; else echo "not ok $N - $2"; FAILED=1; fi; }
show() { sed 's/^/# /' "$@" | tail -n 20; }
run1() { # NAME POLICY(or "") MLP_ARGS... : one process; stdout NAME.out, stderr NAME.err
    local name=$1 pol=$2; shift 2
    if [ -n "$pol" ]; then
        LD_LIBRARY_PATH=$LIBS HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS LD_PRELOAD=$EQ_SHIM ACCELSHIM_POLICY=$pol \
            ACCELSHIM_LOG=info "$EQ_MLP" "$@" >"$T/$name.out" 2>"$T/$name.err"
    else
        LD_LIBRARY_PATH=$LIBS HOSTCUDA_KERNEL_LIBS=$EQ_KLIBS "$EQ_MLP" "$@" >"$T/$name.out" 2>"$T/$name.err"
    fi
}
loss_falls() { # FILE: last step's loss below the first's
    awk '/^step /{if (first == "") first = $4; last = $4} END {exit !(first != "" && last + 0 < first + 0)}' "$1"
}
gemm_report() { sed -n 's/.*INFO report: cublas GEMMs (matmul: [a-z0-9]*): \(.*\)$/\1/p' "$1"; }
want_bf16="32F 0, 32F_FAST_TF32 0, 32F_FAST_16BF $((5 * STEPS)), 32F_FAST_16F 0, other 0; kept fp32 by matmul_exclude 0"
policy() { cp "$ROOT/examples/mlp.yaml" "$T/$1.yaml"; printf 'precision:\n  matmul: %s\n' "$1" >>"$T/$1.yaml"; }
policy default
policy bf16

echo "1..7"
run1 plain "" --steps $STEPS --batch $BATCH
run1 kernels "" --steps $STEPS --batch $BATCH --gemm kernels
rc=$?; cmp -s "$T/plain.out" "$T/kernels.out" || rc=1
tap $rc "--gemm kernels prints exactly what the trainer prints without --gemm"
[ $rc -eq 0 ] || diff "$T/plain.out" "$T/kernels.out" | show /dev/stdin

run1 f32 "" --steps $STEPS --batch $BATCH --gemm cublas --save "$T/f32.bin"
rc=$?; run1 def "$T/default.yaml" --steps $STEPS --batch $BATCH --gemm cublas --save "$T/def.bin" || rc=1
cmp -s "$T/f32.out" "$T/def.out" && cmp -s "$T/f32.bin" "$T/def.bin" || rc=1
tap $rc "--gemm cublas, matmul: default under the shim -> output and parameters bit-identical to no shim"
[ $rc -eq 0 ] || { show "$T/def.err"; diff "$T/f32.out" "$T/def.out" | show /dev/stdin; }

run1 bf16 "$T/bf16.yaml" --steps $STEPS --batch $BATCH --gemm cublas --save "$T/bf16.bin"
rc=$?; cmp -s "$T/f32.bin" "$T/bf16.bin" && rc=1
loss_falls "$T/bf16.out" || rc=1
tap $rc "--gemm cublas, matmul: bf16 -> parameters differ from fp32 and the loss falls"
[ $rc -eq 0 ] || { show "$T/bf16.err"; sed -n '1p;$p' "$T/f32.out" "$T/bf16.out" | show /dev/stdin; }
got=$(gemm_report "$T/bf16.err")
[ "$got" = "$want_bf16" ]
tap $? "one rank: the report counts $((5 * STEPS)) GEMMs as 32F_FAST_16BF (5 per step)"
[ "$got" = "$want_bf16" ] || { echo "#   want: $want_bf16"; echo "#   got:  $got"; }

# two ranks under mpirun, as tests/equivalence/lib.sh starts them, plus build/tests/hostcublas
# shellcheck disable=SC2016  # expanded by the rank shell, on purpose
eq_mpirun 2 -x LD_LIBRARY_PATH="$LIBS" -x HOSTCUDA_KERNEL_LIBS="$EQ_KLIBS" -x ACCELSHIM_POLICY="$T/bf16.yaml" \
    -x ACCELSHIM_BACKEND=mpi -x ACCELSHIM_LOG=info -x EQ_SHIM="$EQ_SHIM" \
    bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$EQ_SHIM exec "$0" "$@" --shard-rank "$r" \
             --shard-count "$OMPI_COMM_WORLD_SIZE" --save "'"$T"'/r.$r" >"'"$T"'/r.$r.out" 2>"'"$T"'/r.$r.err"' \
    "$EQ_MLP" --steps $STEPS --batch $BATCH --gemm cublas >"$T/mpirun.log" 2>&1
rc=$?; [ -s "$T/r.0" ] && cmp -s "$T/r.0" "$T/r.1" || rc=1
loss_falls "$T/r.0.out" && loss_falls "$T/r.1.out" || rc=1
tap $rc "two ranks, matmul: bf16 -> bit-identical parameters across ranks and the loss falls on each"
[ $rc -eq 0 ] || { show "$T/mpirun.log"; show "$T/r.0.err"; show "$T/r.1.err"; cmp "$T/r.0" "$T/r.1" | show /dev/stdin; }
rc=0
for r in 0 1; do
    got=$(gemm_report "$T/r.$r.err")
    [ "$got" = "$want_bf16" ] || { rc=1; echo "# rank $r: want: $want_bf16"; echo "# rank $r: got:  $got"; }
done
grep -q "sync: .* all-reduce" "$T/r.0.err" || { rc=1; echo "# rank 0 did no all-reduce:"; show "$T/r.0.err"; }
tap $rc "two ranks: each rank's report counts $((5 * STEPS)) x 32F_FAST_16BF and gradients were all-reduced"

LD_LIBRARY_PATH=$LIBS "$EQ_MLP" --gemm blas >"$T/bad.out" 2>"$T/bad.err"
rc=$?; [ $rc -eq 2 ] && grep -q "mlp: --gemm: invalid value 'blas' (kernels or cublas)" "$T/bad.err"
tap $? "--gemm blas is a usage error (exit $rc)"
exit $FAILED
