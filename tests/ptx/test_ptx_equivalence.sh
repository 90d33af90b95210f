#!/usr/bin/env bash
# test_ptx_equivalence.sh — a named subset of the data-parallel equivalence suite
# (tests/equivalence/equiv_suite.sh) again with every kernel run by hostcuda's PTX interpreter
# (HOSTCUDA_EXEC=ptx, passed to the ranks through mpirun's environment): the trainer's, the
# collectives' casts and the NaN scans. Property, as in the suite: N ranks under accelshim end
# bit-identical and within the stated bound of ONE process with an N-times batch.
# Cases (EQ_STEPS=12 to keep CI time small): mpi N=2 sgd-fused wire=same, mpi N=2
# adam-per-tensor wire=bf16, mpi N=2 clip-norm wire=same, nccl (hostnccl) N=2 sgd-fused wire=same.
# Every rank's and the reference's HOSTCUDA_EXEC_STATS=1 lines must show the interpreter ran the
# trainer's kernels (with no such line anywhere hostcuda has no interpreter: skip).
# Negative control: without a policy the ranks diverge.
set -u
export EQ_STEPS=${EQ_STEPS:-12}
# shellcheck source=tests/equivalence/lib.sh
. "$(dirname "$0")/../equivalence/lib.sh"
export HOSTCUDA_EXEC=ptx HOSTCUDA_EXEC_STATS=1 ACCELSHIM_LOG=info
eq_preconditions

# ran_ptx LOG...: every LOG has an interpreter line for the trainer's forward kernel
ran_ptx() {
    local f
    for f in "$@"; do grep -Eq '^hostcuda: exec .*linear_forward.* launches=[1-9]' "$f" || return 1; done
}

# one BACKEND NP MODE WIRE BOUND-ARGS...
first=1
one() {
    local backend=$1 np=$2 mode=$3 wire=$4; shift 4
    local d=$EQ_TMP/$backend-$np-$mode-$wire args gb=$((np * EQ_BATCH)) files=() r ok=0
    mkdir -p "$d"
    case $mode in
        sgd-fused)       args=(--optimizer sgd --update fused) ;;
        adam-per-tensor) args=(--optimizer adam --update per-tensor) ;;
        clip-norm)       args=(--optimizer sgd --update fused --clip 0.05) ;;
    esac
    eq_policy "$EQ_POL/$mode.yaml" "$wire" "$d/policy.yaml"
    local desc="HOSTCUDA_EXEC=ptx $backend N=$np $mode wire=$wire"
    if ! eq_ranks "$np" "$backend" "$d/policy.yaml" "$d/rank" --steps "$EQ_STEPS" --batch "$EQ_BATCH" "${args[@]}" ||
       ! eq_ref "$d/ref" --steps "$EQ_STEPS" --batch "$gb" "${args[@]}"; then
        echo "# a run failed:"; eq_show "$d"/*.log; t_case 1 "$desc"; return
    fi
    for ((r = 0; r < np; r++)); do files+=("$d/rank.$r"); done
    if [ "$first" = 1 ] && ! grep -q '^hostcuda: exec ' "$d"/*.log; then
        t_skip "no HOSTCUDA_EXEC_STATS line in any log: hostcuda has no PTX interpreter (HOSTCUDA_EXEC=ptx ignored)"
    fi
    first=0
    ran_ptx "$d/ref.log" "$d"/rank.*.log || { ok=1; echo "# a log has no interpreter line for linear_forward"; }
    t_equiv "$d/equiv.txt" "$@" --ref "$d/ref" "${files[@]}" || ok=1
    sed 's/^/# /' "$d/equiv.txt"
    t_case $ok "$desc: kernels interpreted, ranks bit-identical and rank 0 vs 1-rank batch $gb"
}
one mpi 2 sgd-fused same --rtol 1e-5 --atol 1e-6
one mpi 2 adam-per-tensor bf16 --max-abs 2.5e-2
one mpi 2 clip-norm same --rtol 1e-5 --atol 1e-6
if [ -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ]; then
    one nccl 2 sgd-fused same --rtol 1e-5 --atol 1e-6
else
    echo "# hostnccl is not built: the nccl case is not run"
fi

d=$EQ_TMP/nopolicy; mkdir -p "$d"
if EQ_SYNC=optional eq_ranks 2 mpi "" "$d/rank" --steps "$EQ_STEPS" --batch "$EQ_BATCH"; then
    "$EQ_CMP" "$d/rank.1" "$d/rank.0" --identical >"$d/cmp.txt" 2>&1
    t_case $(( $? == 0 )) "negative control: without a policy the ranks diverge"
    tail -1 "$d/cmp.txt" | sed 's/^/# /'
else
    eq_show "$d"/rank.*.log; t_case 1 "negative control: no policy (ranks failed)"
fi
t_done
