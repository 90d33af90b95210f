#!/usr/bin/env bash
# Property: --clip runs the global-norm path. A small NORM (0.05) changes the trained parameters
# (the norm kernel really reads the gradients and the update kernels really scale), while a huge
# NORM (1e30, scale exactly 1) leaves them bit-identical to no clipping (the path is otherwise
# neutral); step 0's loss, computed before any update, is the same in all runs.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: --clip runs the global-norm path: a small NORM changes the result, a huge one does not"
fail=0
for opt in sgd adam; do
    n=$MLP_TMP/none s=$MLP_TMP/small h=$MLP_TMP/huge
    common="--steps 40 --batch 8 --seed 9 --optimizer $opt"
    # shellcheck disable=SC2086
    mlp_run "$n" $common --save "$n.bin"
    # shellcheck disable=SC2086
    mlp_run "$s" $common --clip 0.05 --save "$s.bin"
    # shellcheck disable=SC2086
    mlp_run "$h" $common --clip 1e30 --save "$h.bin"
    echo "$opt: no clip:   $(mlp_checksum "$n")"
    echo "$opt: clip 0.05: $(mlp_checksum "$s")"
    echo "$opt: clip 1e30: $(mlp_checksum "$h")"
    if cmp -s "$n.bin" "$s.bin"; then
        echo "FAIL: $opt: --clip 0.05 did not change the parameters (norm/scale path not applied)"
        fail=1
    else echo "ok: $opt: --clip 0.05 changes the parameters"; fi
    if cmp -s "$n.bin" "$h.bin"; then echo "ok: $opt: --clip 1e30 is bit-identical to no clip"
    else echo "FAIL: $opt: --clip 1e30 differs from no clip (scale should be exactly 1)"; fail=1; fi
    l0=$(mlp_loss "$n" 0) l1=$(mlp_loss "$s" 0)
    [ "$l0" = "$l1" ] || { echo "FAIL: $opt: step 0 loss differs: $l0 vs $l1"; fail=1; }
done
exit $fail
