#!/usr/bin/env bash
# Property: every malformed command line makes mlp exit 2 with an "mlp: ..." message on stderr
# and no training output; --help exits 0 and documents every option.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: malformed command lines exit 2 with a message; --help lists every option"
fail=0
check_bad() {
    local out=$MLP_TMP/bad rc
    "$MLP_BIN" "$@" >"$out" 2>"$out.err"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q '^mlp: ' "$out.err" || [ -s "$out" ]; then
        echo "FAIL: mlp $* -> exit $rc (want 2), stderr: $(head -c 300 "$out.err"), stdout: $(head -c 200 "$out")"
        fail=1
    else
        echo "ok: mlp $* -> exit 2: $(head -n1 "$out.err")"
    fi
}
check_bad --steps -1
check_bad --steps abc
check_bad --steps 5x
check_bad --steps
check_bad --batch 0
check_bad --lr 0
check_bad --lr nan
check_bad --lr -0.1
check_bad --seed -3
check_bad --seed 99999999999999999999999
check_bad --optimizer rmsprop
check_bad --update sometimes
check_bad --shard-count 0
check_bad --shard-rank 2 --shard-count 2
check_bad --shard-rank -1
check_bad --clip 0
check_bad --clip inf
check_bad --init random
check_bad --bogus
check_bad -x
check_bad stray-argument

out=$MLP_TMP/help
if "$MLP_BIN" --help >"$out" 2>&1; then
    for o in --steps --batch --lr --seed --shard-rank --shard-count --optimizer --update --clip \
             --init --save --dump-samples --help; do
        grep -q -- "$o" "$out" || { echo "FAIL: --help does not mention $o"; fail=1; }
    done
    [ $fail -eq 0 ] && echo "ok: --help exits 0 and lists every option"
else
    echo "FAIL: --help exited non-zero"; cat "$out"; fail=1
fi
exit $fail
