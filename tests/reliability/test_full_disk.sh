#!/usr/bin/env bash
# Property: outputs written when the disk fills up are complete or absent, and say so once:
#   record (ACCELSHIM_RECORD): the file ends with a whole line (the line that did not fit is cut
#     back off), the run goes on, one error line;
#   report (ACCELSHIM_REPORT): no 0-byte or half JSON file is left, one warning;
#   trace merge (scripts/accelerate-run.d/trace-merge): no Python traceback, no temporary file
#     left, exit 1 with one line; a planted trace.json.tmp (a symlink, a directory) is neither
#     followed nor in the way, and the merge still succeeds.
# A full disk is a file-size limit (ulimit -f, with SIGXFSZ ignored, so write(2) fails with
# EFBIG as it would with ENOSPC: part of a write lands, then nothing). Controls: without the limit
# the same outputs are larger than the limit (so the limit cut them) and complete.
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_TOP/scripts/accelerate-run.d/trace-merge"
t_need_cmd python3
MERGE=$RL_TOP/scripts/accelerate-run.d/trace-merge
POL=$RL_POL/sgd-fused.yaml

# limited KIB CMD...: CMD with every file it writes limited to KIB KiB (0: none), SIGXFSZ ignored;
# its output through a pipe (the limit would cut a log file too). For python only: hostcuda
# itself needs files (its device memory), so the shim's outputs get a small tmpfs instead.
limited() {
    local kib=$1; shift
    (trap '' XFSZ; [ "$kib" -gt 0 ] && ulimit -f "$kib"; exec "$@") 2>&1 | cat
}
# small FREE_KIB CMD...: CMD in a private mount namespace where $RL_TMP/small is a 16 KiB tmpfs
# with FREE_KIB KiB left (the rest taken by a filler file); output through a pipe
small() {
    local free=$1; shift
    mkdir -p "$RL_TMP/small"
    # shellcheck disable=SC2016  # expanded by the namespace's shell
    unshare -m --propagation private bash -c 'mount -t tmpfs -o size=16k tmpfs "$1" || exit 99
        [ "$2" -lt 16 ] && head -c $(((16 - $2) * 1024)) /dev/zero >"$1/filler"
        shift 2; "$@"; rc=$?; cp -a "'"$RL_TMP"'/small/." "'"$RL_TMP"'/kept/" 2>/dev/null; exit $rc' \
        _ "$RL_TMP/small" "$free" "$@" 2>&1 | cat
}
ENVS=(env LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" ACCELSHIM_POLICY="$POL" LD_PRELOAD="$RL_SHIM")
RUN=(timeout -k 5 60 "$RL_MLP" --steps 40 --batch 2)
mlp() { "${ENVS[@]}" "$@" "${RUN[@]}"; }

if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    # ---- record ----
    mlp ACCELSHIM_RECORD="$RL_TMP/full.jsonl" >"$RL_TMP/rec0.log" 2>&1
    rm -rf "$RL_TMP/kept"; mkdir -p "$RL_TMP/kept"
    small 4 "${ENVS[@]}" ACCELSHIM_RECORD="$RL_TMP/small/cut.jsonl" "${RUN[@]}" >"$RL_TMP/rec1.log"
    full=$(stat -c %s "$RL_TMP/full.jsonl" 2>/dev/null || echo 0)
    cut=$(stat -c %s "$RL_TMP/kept/cut.jsonl" 2>/dev/null || echo 0)
    last=$(tail -c 1 "$RL_TMP/kept/cut.jsonl" 2>/dev/null | od -An -tx1 | tr -d ' ')
    lines=$(grep -c . "$RL_TMP/kept/cut.jsonl" 2>/dev/null)
    ok=1
    [ "$full" -gt 4096 ] && [ "$cut" -gt 0 ] && [ "$cut" -le 4096 ] && [ "$last" = 0a ] &&
        [ "$(grep -c 'ERROR record: .*write failed' "$RL_TMP/rec1.log")" -eq 1 ] &&
        grep -q '^checksum' "$RL_TMP/rec1.log" && ok=0
    t_case $ok "record on a full disk (4 KiB free): whole lines only ($cut of $full bytes, $lines lines, last byte 0x$last), one error, the run goes on"
    [ $ok -eq 0 ] || { t_show "$RL_TMP/rec1.log"; echo "# last 80 bytes:"; tail -c 80 "$RL_TMP/kept/cut.jsonl" | od -c | sed 's/^/# /'; }

    # ---- report ----
    mlp ACCELSHIM_REPORT="$RL_TMP/rep0.json" >"$RL_TMP/rep0.log" 2>&1
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$RL_TMP/rep0.json" >"$RL_TMP/rep0.parse" 2>&1
    t_case $? "report with room: complete JSON ($(stat -c %s "$RL_TMP/rep0.json" 2>/dev/null) bytes)"
    # no room at all (tmpfs counts whole pages: the report, under 1 KiB, fits all or nothing)
    rm -rf "$RL_TMP/kept"; mkdir -p "$RL_TMP/kept"
    small 0 "${ENVS[@]}" ACCELSHIM_REPORT="$RL_TMP/small/rep.json" "${RUN[@]}" >"$RL_TMP/rep-0.log"
    ok=1
    [ ! -e "$RL_TMP/kept/rep.json" ] && [ "$(grep -c 'WARN report: .*JSON report' "$RL_TMP/rep-0.log")" -eq 1 ] &&
        grep -q '^checksum' "$RL_TMP/rep-0.log" && ok=0
    t_case $ok "report on a full disk: no file left ($(stat -c '%n %s bytes' "$RL_TMP/kept/rep.json" 2>&1 | cut -c1-90)), one warning, the run goes on"
    [ $ok -eq 0 ] || t_show "$RL_TMP/rep-0.log"
else
    for c in record report report-0; do echo "ok $((T_N += 1)) - # SKIP $c: needs root and unshare -m for a small tmpfs"; done
fi

# ---- trace merge ----
mkdir -p "$RL_TMP/tr"
for r in 0 1; do
    { echo "["; for ((i = 0; i < 200; i++)); do
        printf '{"name":"allreduce","ph":"X","pid":%d,"tid":0,"ts":%d,"dur":5},\n' "$r" "$i"; done; } >"$RL_TMP/tr/trace-$r.json"
done
limited 0 python3 "$MERGE" "$RL_TMP/tr/ok.json" "$RL_TMP"/tr/trace-[01].json >"$RL_TMP/m0.log"
big=$(stat -c %s "$RL_TMP/tr/ok.json" 2>/dev/null || echo 0)
limited 0 python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))) == 400' "$RL_TMP/tr/ok.json" >/dev/null
t_case $? "trace merge without a limit: 400 events ($big bytes)"
limited 1 python3 "$MERGE" "$RL_TMP/tr/full.json" "$RL_TMP"/tr/trace-[01].json >"$RL_TMP/m1.log"
left=''
for f in "$RL_TMP"/tr/* "$RL_TMP"/tr/.[!.]*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    case ${f##*/} in trace-[01].json|ok.json) ;; *) left+="${f##*/} " ;; esac
done
ok=1
[ "$big" -gt 1024 ] && ! grep -q Traceback "$RL_TMP/m1.log" && [ -z "$left" ] &&
    [ "$(grep -c . "$RL_TMP/m1.log")" -eq 1 ] && grep -q '^trace-merge: cannot write' "$RL_TMP/m1.log" && ok=0
t_case $ok "trace merge on a full disk: one line, no traceback, nothing left (left: '${left}')"
[ $ok -eq 0 ] || t_show "$RL_TMP/m1.log"
for plant in link dir; do
    out=$RL_TMP/tr/p-$plant.json
    if [ $plant = link ]; then echo precious >"$RL_TMP/victim"; ln -s "$RL_TMP/victim" "$out.tmp"; else mkdir "$out.tmp"; fi
    limited 0 python3 "$MERGE" "$out" "$RL_TMP"/tr/trace-[01].json >"$RL_TMP/mp.log"
    ok=1
    ! grep -q Traceback "$RL_TMP/mp.log" && [ "$(cat "$RL_TMP/victim")" = precious ] &&
        limited 0 python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))) == 400' "$out" >/dev/null && ok=0
    t_case $ok "trace merge with a planted $(basename "$out").tmp ($plant): merged, the plant untouched, no traceback"
    [ $ok -eq 0 ] || t_show "$RL_TMP/mp.log"
done
t_done
