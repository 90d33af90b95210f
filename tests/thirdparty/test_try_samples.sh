#!/usr/bin/env bash
# tests/thirdparty/test_try_samples.sh — scripts/try-cuda-samples.sh, the way a user dry-runs
# NVIDIA's cuda-samples from a checkout, on the corpus's copy (which holds five of them): vectorAdd
# is built with -cudart shared, runs under `accelerate-run --cpu -n 1` and PASSes by its own exit
# status; a name the checkout lacks is NOT FOUND and fails the run (exit 1, "1 of 2 passed");
# bad usage (no checkout, a bad SECONDS) exits 2 naming it. Skips (one line) without the corpus.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
tp_need_corpus
t_need "$T_SHIM" "$T_LAUNCHER" "$TP_HOSTCUDART_DIR/libcudart.so.13"
t_tmp
try=$T_TOP/scripts/try-cuda-samples.sh
TMPDIR=$T_TMP timeout 600 "$try" "$TP_SRC/cuda-samples" 300 vectorAdd no_such_sample >"$T_TMP/out" 2>&1; rc=$?
tp_case "$(grep -Eq '^vectorAdd +PASS \([0-9]+s\): .*Done' "$T_TMP/out"; echo $?)" \
    "vectorAdd from the checkout: built -cudart shared, PASS under accelerate-run --cpu" "$T_TMP/out"
tp_case "$([ $rc -eq 1 ] && grep -Eq '^no_such_sample +NOT FOUND' "$T_TMP/out" &&
           grep -q '^try-cuda-samples: 1 of 2 passed' "$T_TMP/out"; echo $?)" \
    "control: a sample the checkout lacks is NOT FOUND and fails the run (rc $rc)" "$T_TMP/out"
"$try" "$T_TMP/nothing" >"$T_TMP/usage" 2>&1; rc=$?
tp_case "$([ $rc -eq 2 ] && grep -q 'must be a cuda-samples checkout' "$T_TMP/usage"; echo $?)" \
    "no checkout: exit 2 naming what SRC_DIR must hold (rc $rc)" "$T_TMP/usage"
"$try" "$TP_SRC/cuda-samples" soon >"$T_TMP/secs" 2>&1; rc=$?
tp_case "$([ $rc -eq 2 ] && grep -q "SECONDS must be a positive whole number, not 'soon'" "$T_TMP/secs"; echo $?)" \
    "SECONDS 'soon': exit 2 naming it (rc $rc)" "$T_TMP/secs"
t_done
