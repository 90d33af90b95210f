#!/usr/bin/env bash
# tests/thirdparty/test_fetch_thirdparty.sh — scripts/fetch-thirdparty.sh without the network: its
# options (--help, --dry-run, a bad option, two directories), that --dry-run prints the pinned
# clone commands and creates nothing, that a directory holding something else is refused and
# left as it was, and that the commits it pins are the ones the corpus README records.
# shellcheck source=tests/thirdparty/lib.sh
. "$(dirname "$0")/lib.sh"
f=$T_TOP/scripts/fetch-thirdparty.sh
t_tmp

"$f" --help >"$T_TMP/help" 2>&1; rc=$?
t_case "$([ $rc -eq 0 ] && grep -q -- "--dry-run" "$T_TMP/help"; echo $?)" "--help: usage, exit 0 (rc $rc)"
"$f" --bogus >"$T_TMP/bad" 2>&1; rc=$?
t_case "$([ $rc -eq 2 ] && grep -q "unknown option '--bogus'" "$T_TMP/bad"; echo $?)" "unknown option: exit 2 naming it (rc $rc)"
"$f" "$T_TMP/a" "$T_TMP/b" >"$T_TMP/two" 2>&1; rc=$?
t_case "$([ $rc -eq 2 ]; echo $?)" "two directories: exit 2 (rc $rc)"

"$f" --dry-run "$T_TMP/new" >"$T_TMP/dry" 2>&1; rc=$?
ok=$([ $rc -eq 0 ] && [ ! -e "$T_TMP/new" ] &&
     grep -q "fetch -q --depth 1 origin f1e2ace651495b74ae22d45d1723443fd00ecd3a" "$T_TMP/dry" &&
     grep -q "remote add origin https://github.com/NVIDIA/cuda-samples" "$T_TMP/dry" &&
     grep -q "fetch -q --depth 1 origin c94ff366aed18c797b8a85dfaac7817b0228b420" "$T_TMP/dry"; echo $?)
tp_case "$ok" "--dry-run: both pinned fetches printed, nothing created (rc $rc)" "$T_TMP/dry"

mkdir -p "$T_TMP/taken/llm.c" && echo mine >"$T_TMP/taken/llm.c/file"
"$f" --dry-run "$T_TMP/taken" >"$T_TMP/taken.log" 2>&1; rc=$?
tp_case "$([ $rc -eq 1 ] && grep -q "taken/llm.c exists and is not a clone" "$T_TMP/taken.log" &&
          [ "$(cat "$T_TMP/taken/llm.c/file")" = mine ]; echo $?)" "a directory holding something else: exit 1, named, untouched (rc $rc)" "$T_TMP/taken.log"

tp_need_corpus
for c in f1e2ace651495b74ae22d45d1723443fd00ecd3a c94ff366aed18c797b8a85dfaac7817b0228b420; do
    t_case "$(grep -q "$c" "$TP_SRC/README.md"; echo $?)" "the corpus README records the pinned commit $c"
done
t_done
