#!/usr/bin/env bash
# equiv_suite.sh BACKEND — the data-parallel equivalence suite (docs/design.md §7) for one backend.
# Property: N ranks (N = 2, 4) of the unmodified trainer under accelshim, each with batch B on its
# own shard, end with the parameters of ONE process with batch N*B: within rtol 1e-5 (atol 1e-6)
# for wire `same`, within the stated bound for bf16/f16 wires; and all ranks end bit-identical.
# Modes: sgd+fused; adam+per-tensor; --clip with the sync point before the norm kernel;
# --init per-process with a parameters broadcast at the first forward kernel.
# Negative controls (expected to DIFFER, proving the comparison can fail): no policy -> ranks
# diverge; --clip with the sync point at the update kernel -> differs from the 1-rank run.
set -u
backend=$1
. "$(dirname "$0")/lib.sh"
export ACCELSHIM_LOG=info   # rank logs name the collectives backend that ran
eq_preconditions
[ "$backend" = nccl ] && [ ! -e "$EQ_BUILD/tests/hostnccl/libnccl.so.2" ] && { echo "1..0 # SKIP hostnccl not built"; exit 77; }

# Bounds for the 16-bit wires: max |param - reference| after EQ_STEPS steps (parameters are
# O(0.1..1)). SGD moves parameters by lr*grad, so wire rounding (bf16: 8 significant bits, f16:
# 11) stays small; Adam divides by sqrt(v), so a rounded tiny gradient can move a parameter by up
# to lr per step: its bound is a tenth of lr*steps = 0.025 (lr 0.01, 25 steps).
bound() {   # bound WIRE MODE
    case $1-$2 in
        bf16-adam*) echo 2.5e-2 ;;
        f16-adam*)  echo 5e-3 ;;
        bf16-*)     echo 2e-3 ;;
        f16-*)      echo 5e-4 ;;
    esac
}
MODES="sgd-fused adam-per-tensor clip-norm init-broadcast"
args_for() {
    case $1 in
        sgd-fused)       echo "--optimizer sgd --update fused" ;;
        adam-per-tensor) echo "--optimizer adam --update per-tensor" ;;
        clip-norm)       echo "--optimizer sgd --update fused --clip 0.05" ;;
        init-broadcast)  echo "--optimizer sgd --update fused --init per-process" ;;
    esac
}
ncase=$(( 2 * 4 * 3 + 2 * 2 ))
echo "1..$ncase"

for np in 2 4; do
    gb=$((np * EQ_BATCH))
    for mode in $MODES; do
        # shellcheck disable=SC2046
        set -- $(args_for "$mode")
        for wire in same bf16 f16; do
            d=$EQ_TMP/$np-$mode-$wire; mkdir -p "$d"
            eq_policy "$EQ_POL/$mode.yaml" "$wire" "$d/policy.yaml"
            desc="$backend N=$np $mode wire=$wire"
            if ! eq_ranks "$np" "$backend" "$d/policy.yaml" "$d/rank" --steps "$EQ_STEPS" --batch "$EQ_BATCH" "$@"; then
                echo "# ranks failed:"; eq_show "$d"/rank.*.log; tap_case 1 "$desc"; continue
            fi
            ref_args=("$@")
            if [ "$mode" = init-broadcast ]; then
                # the reference starts from rank 0's own (pid-seeded) initial weights
                seed=$(sed -n 's/.*init_seed=\([0-9]*\).*/\1/p' "$d/rank.0.log" | head -1)
                ref_args=(--optimizer sgd --update fused --init-seed "$seed")
            fi
            if ! eq_ref "$d/ref" --steps "$EQ_STEPS" --batch "$gb" "${ref_args[@]}"; then
                echo "# reference failed:"; eq_show "$d/ref.log"; tap_case 1 "$desc"; continue
            fi
            ok=0
            # the backend asked for is the one that ran (no silent fallback)
            if ! grep -q "collectives backend: $backend\$" "$d/rank.0.log"; then
                ok=1; echo "# rank 0 did not run on backend $backend:"; grep -i 'backend\|warn' "$d/rank.0.log" | sed 's/^/# /' | head -5
            fi
            case $wire in
                same) tol=(--rtol 1e-5 --atol 1e-6) ;;
                *)    tol=(--max-abs "$(bound "$wire" "$mode")") ;;
            esac
            files=(); for ((r = 0; r < np; r++)); do files+=("$d/rank.$r"); done
            t_equiv "$d/equiv.txt" "${tol[@]}" --ref "$d/ref" "${files[@]}" || ok=1
            sed 's/^/# /' "$d/equiv.txt"
            tap_case $ok "$desc: ranks bit-identical and rank 0 vs 1-rank batch $gb"
        done
    done
    # negative control 1: no policy -> the ranks diverge (sync optional: else the job fails, exit 7)
    d=$EQ_TMP/$np-nopolicy; mkdir -p "$d"
    if EQ_SYNC=optional eq_ranks "$np" "$backend" "" "$d/rank" --steps "$EQ_STEPS" --batch "$EQ_BATCH"; then
        if out=$("$EQ_CMP" "$d/rank.1" "$d/rank.0" --identical); then
            echo "# $out"; tap_case 1 "$backend N=$np control: without a policy the ranks diverge (they did NOT)"
        else
            echo "$out" | tail -1 | sed 's/^/# /'; tap_case 0 "$backend N=$np control: without a policy the ranks diverge"
        fi
    else
        eq_show "$d"/rank.*.log; tap_case 1 "$backend N=$np control: no policy (ranks failed)"
    fi
    # negative control 2: --clip with the sync point at the update kernel differs from 1 rank
    d=$EQ_TMP/$np-clipwrong; mkdir -p "$d"
    # shellcheck disable=SC2046
    set -- $(args_for clip-norm)
    if eq_ranks "$np" "$backend" "$EQ_POL/clip-at-update.yaml" "$d/rank" --steps "$EQ_STEPS" --batch "$EQ_BATCH" "$@" &&
       eq_ref "$d/ref" --steps "$EQ_STEPS" --batch "$gb" "$@"; then
        if out=$("$EQ_CMP" "$d/rank.0" "$d/ref" --rtol 1e-5 --atol 1e-6); then
            echo "# $out"; tap_case 1 "$backend N=$np control: sync at the update with --clip differs from 1 rank (it did NOT)"
        else
            echo "$out" | tail -1 | sed 's/^/# /'; tap_case 0 "$backend N=$np control: sync at the update with --clip differs from 1 rank"
        fi
    else
        eq_show "$d"/*.log; tap_case 1 "$backend N=$np control: clip-at-update (runs failed)"
    fi
done
