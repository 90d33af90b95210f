#!/usr/bin/env bash
# test_record_files.sh — what accelshim-compare accepts and rejects, and how the shim opens a
# record file:
#  - a record cut mid-line (a killed run) is read up to its last complete line: it compares
#    `same` with itself, and against the full record differs (exit 1, "stopped early"), not 2;
#  - garbage, text, an empty file, JSON that is no record, a bad line in the middle, a missing
#    file and a bad option exit 2 with a message naming the problem;
#  - the shim never follows a symlink (O_NOFOLLOW), never overwrites a non-empty file that is not
#    a record, and does overwrite its own earlier record (a rerun); the run itself goes on.
# Prints TAP; each failed case shows what it saw as # lines.
set -u
. "$(dirname "$0")/lib.sh"
rc_preconditions
T=$EQ_TMP
echo "1..11"

rc_one "$T/full.log" ACCELSHIM_RECORD="$T/full.jsonl" -- --steps 8 --batch 4

# 1. cut mid-line (10 complete lines, then 40 bytes of the 11th): read up to the last complete line
{ head -n 10 "$T/full.jsonl"; sed -n 11p "$T/full.jsonl" | head -c 40; } >"$T/cut.jsonl"
last=$(tail -c 1 "$T/cut.jsonl" | od -An -c | tr -d ' ')
rc_cmp "$T/c1" "$T/cut.jsonl" "$T/cut.jsonl"
st=$?
[ "$last" != '\n' ] && [ $st -eq 0 ] && grep -q '^same$' "$T/c1" && grep -q 'last line incomplete' "$T/c1"
ok=$?
[ $ok -eq 0 ] || { echo "# last byte '$last'; compare exit $st:"; eq_show "$T/c1"; }
tap_case $ok "a record cut mid-line is read up to its last complete line (same with itself, a note)"

# 2. full vs cut: differs, naming the early stop
rc_cmp "$T/c2" "$T/full.jsonl" "$T/cut.jsonl"
st=$?
[ $st -eq 1 ] && grep -q 'absent from B .*no end line: the run stopped early' "$T/c2"
ok=$?
[ $ok -eq 0 ] || { echo "# compare exit $st (want 1):"; eq_show "$T/c2"; }
tap_case $ok "full vs cut record: differs (exit 1), B stopped early"

# 3-8. unreadable inputs: exit 2 with a clear message
bad_case() {   # bad_case DESCRIPTION EXPECTED_SUBSTRING ARGS...
    local what=$1 want=$2; shift 2
    rc_cmp "$T/cb" "$@"
    local st=$?
    [ $st -eq 2 ] && grep -q "^accelshim-compare: .*$want" "$T/cb"
    local ok=$?
    [ $ok -eq 0 ] || { echo "# compare exit $st (want 2, message with '$want'):"; eq_show "$T/cb"; }
    tap_case $ok "$what: exit 2 ($(head -n1 "$T/cb" | cut -c1-80))"
}
head -c 4096 /dev/urandom >"$T/garbage.bin"
printf 'hello world\nthis is not json\n' >"$T/text.txt"
: >"$T/empty.jsonl"
printf '{"a": 1}\n' >"$T/other.json"
{ head -n 3 "$T/full.jsonl"; echo '{"kind":"pre", broken'; tail -n 2 "$T/full.jsonl"; } >"$T/mid.jsonl"
bad_case "random bytes" "not a record line\|not an accelshim record\|incomplete" "$T/garbage.bin" "$T/full.jsonl"
bad_case "text" "text.txt: not an accelshim record (line 1 is not a JSON object" "$T/full.jsonl" "$T/text.txt"
bad_case "empty file" "empty: not an accelshim record" "$T/empty.jsonl" "$T/full.jsonl"
bad_case "JSON that is no record" "not an accelshim record\|no \"kind\"" "$T/other.json" "$T/full.jsonl"
bad_case "a broken line in the middle" "mid.jsonl:4: not a record line" "$T/full.jsonl" "$T/mid.jsonl"
bad_case "a missing file" "No such file" "$T/nope.jsonl" "$T/full.jsonl"
bad_case "a bad tolerance" "rtol: 'x' is not a number" "$T/full.jsonl" "$T/full.jsonl" --rtol x

# 9. the shim's file rules: symlink not followed; a foreign file not overwritten; the run goes on
echo "precious" >"$T/target.txt"
ln -s "$T/target.txt" "$T/link.jsonl"
rc_one "$T/s.log" ACCELSHIM_RECORD="$T/link.jsonl" -- --steps 3 --batch 4
s1=$?
echo "precious data" >"$T/foreign.jsonl"
rc_one "$T/f.log" ACCELSHIM_RECORD="$T/foreign.jsonl" -- --steps 3 --batch 4
s2=$?
[ $s1 -eq 0 ] && [ $s2 -eq 0 ] && [ "$(cat "$T/target.txt")" = precious ] &&
    [ "$(cat "$T/foreign.jsonl")" = "precious data" ] && grep -q 'symbolic link' "$T/s.log" &&
    grep -q 'not an accelshim record: not overwritten' "$T/f.log"
ok=$?
[ $ok -eq 0 ] || { echo "# runs exit $s1 $s2; logs:"; eq_show "$T/s.log" "$T/f.log"; }
tap_case $ok "a symlink is not followed and a foreign file is not overwritten (runs exit 0)"

# 10. a rerun replaces its own earlier record
cp "$T/full.jsonl" "$T/re.jsonl"
printf 'x%.0s' $(seq 1 5000) >>"$T/re.jsonl"   # longer than the new record: must be truncated
rc_one "$T/r.log" ACCELSHIM_RECORD="$T/re.jsonl" -- --steps 8 --batch 4
rc_cmp "$T/c10" "$T/re.jsonl" "$T/full.jsonl" --bitwise
st=$?
[ $st -eq 0 ] && [ "$(tail -c 1 "$T/re.jsonl" | od -An -c | tr -d ' ')" = '\n' ]
ok=$?
[ $ok -eq 0 ] || { echo "# compare exit $st:"; eq_show "$T/c10" "$T/r.log"; }
tap_case $ok "a rerun overwrites its own earlier record (and nothing of it is left)"
