#!/usr/bin/env bash
# test_record_exit.sh — the record's exit lines: a program that exits without freeing a buffer a
# `parameters` rule resolved gets an "exit" line with the buffer's FINAL values (exit_app: 1.0 at
# the sync point, 2.0 at exit -> sum 1000 then 2000), then an "end" line; a program that frees it
# first (the bundled trainer) gets "state":"freed" instead of made-up values. Prints TAP.
set -u
. "$(dirname "$0")/lib.sh"
rc_preconditions
APP=$EQ_BUILD/tests/record/exit_app
PTX=$EQ_BUILD/bench/allreduce_kernels.ptx
KL=$EQ_KLIBS:$EQ_BUILD/bench/liballreduce_kernels_host.so
for f in "$APP" "$PTX" "$EQ_BUILD/bench/liballreduce_kernels_host.so"; do
    [ -e "$f" ] || { echo "1..0 # SKIP $f not built"; exit 77; }
done
T=$EQ_TMP
echo "1..2"
cat >"$T/p.yaml" <<'YAML'
version: 1
parameters:
  - at: "ash_bench_consume"
    buffer: { arg: 0, region: allocation }
    dtype: f32
YAML

# 1. a buffer still live at exit: its final values
env LD_LIBRARY_PATH="$EQ_BUILD/tests/hostcuda" HOSTCUDA_KERNEL_LIBS="$KL" ACCELSHIM_POLICY="$T/p.yaml" \
    ACCELSHIM_RECORD="$T/e.jsonl" LD_PRELOAD="$EQ_SHIM" timeout -k 5 60 "$APP" "$PTX" >"$T/e.log" 2>&1
st=$?
grep -q '"kind":"pre","rule":"parameters\[0\]".*"seq":0,"count":1000,.*"sum":1000,' "$T/e.jsonl" &&
    grep -q '"kind":"exit","rule":"parameters\[0\]","at":"ash_bench_consume","seq":0,"count":1000,.*"sum":2000,.*"min":2,"max":2' "$T/e.jsonl" &&
    tail -n1 "$T/e.jsonl" | grep -q '"kind":"end"' && [ $st -eq 0 ]
ok=$?
[ $ok -eq 0 ] || { echo "# exit $st; record and log:"; eq_show "$T/e.jsonl" "$T/e.log"; }
tap_case $ok "a parameter buffer live at exit: exit line holds its final values (sum 2000, was 1000)"

# 2. freed before exit (the bundled trainer): "freed", no values
rc_one "$T/m.log" ACCELSHIM_RECORD="$T/m.jsonl" -- --steps 2 --batch 4
st=$?
grep -q '"kind":"exit","rule":"parameters\[0\]","seq":0,"count":676,"dtype":"f32","state":"freed"}' "$T/m.jsonl" &&
    [ $st -eq 0 ]
ok=$?
[ $ok -eq 0 ] || { echo "# exit $st; record tail:"; tail -n 3 "$T/m.jsonl" | sed 's/^/# /'; }
tap_case $ok "a parameter buffer freed before exit: exit line says state freed"
