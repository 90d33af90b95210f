#!/usr/bin/env bash
# Property: mlp actually learns — over 200 steps the mean loss of the last 10 steps is below a
# quarter of the mean loss of the first 10 steps, for sgd and for adam (fused and per-tensor).
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: mlp learns: last-10 mean loss < 1/4 of first-10 mean over 200 steps"
fail=0
for args in "--optimizer sgd" "--optimizer adam" "--optimizer sgd --update per-tensor --clip 1" \
            "--optimizer adam --update per-tensor"; do
    out=$MLP_TMP/run
    # shellcheck disable=SC2086
    mlp_run "$out" --steps 200 --batch 16 --seed 7 $args
    read -r first last first10 last10 < <(awk '$1 == "step" {
            l[$2] = $4; n++ }
        END { for (i = 0; i < 10; i++) { a += l[i]; b += l[n - 1 - i] }
              printf "%.9g %.9g %.9g %.9g\n", l[0], l[n - 1], a / 10, b / 10 }' "$out")
    echo "$args: first loss $first, last loss $last; mean of first 10 $first10, of last 10 $last10"
    if ! awk -v a="$first10" -v b="$last10" 'BEGIN { exit !(b < a / 4) }'; then
        echo "FAIL: $args: loss did not fall enough (last-10 mean $last10 vs first-10 mean $first10)"
        fail=1
    fi
done
exit $fail
