#!/usr/bin/env bash
# run-bench.sh — `make bench`: run each benchmark given (an executable; exit 0 = ran, 77 = skipped,
# its reason on its last "SKIP" line, anything else = failed), print its table as it runs, and write
# build/bench/results.json: a JSON array with one object per benchmark:
#   {name, path, status (ok|skipped|failed), exit, reason, seconds, ratios{}, raw{}, notes[],
#    machine{arch, nproc, cpu_model, loadavg, cpu_busy_before_pct}, date, git}
# Before each benchmark it samples /proc/stat for a second; if other work kept the CPUs more than
# 25% busy, the table and the notes say the timings are unreliable.
# A benchmark hands over its figures by appending lines "ratio KEY VALUE", "raw KEY VALUE" and
# "note TEXT" to the file named by $BENCH_RESULTS (bench/lib.sh has helpers); a number becomes a
# JSON number, nan/inf become null, anything else a string. Each table also goes to
# build/bench/<name>.log. Exit 0 unless a benchmark failed. Env: ACCELSHIM_BENCH_TIMEOUT (600 s each),
# ACCELSHIM_BENCH_OUT (build/bench: where results.json and the logs go).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${ACCELSHIM_BENCH_OUT:-$top/build/bench}
mkdir -p "$out"
timeout_s=${ACCELSHIM_BENCH_TIMEOUT:-600}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

arch=$(uname -m)
ncpu=$(nproc)
cpu=$(sed -n 's/^\(model name\|Model\|cpu model\|Hardware\)[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -1)
cpu=${cpu:-unknown}
git_desc=$(git -C "$top" describe --always --dirty --tags 2>/dev/null || echo unknown)

# cpu_busy_pct: percent of all CPU time not idle over the next second (from /proc/stat)
cpu_busy_pct() {
    local a b
    a=$(head -1 /proc/stat 2>/dev/null) || { echo unknown; return; }
    sleep 1
    b=$(head -1 /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {
        n = split(a, x, " "); split(b, y, " ")
        for (i = 2; i <= n; i++) { t += y[i] - x[i]; if (i == 5 || i == 6) idle += y[i] - x[i] }
        printf "%.0f", (t > 0 ? 100 * (t - idle) / t : 0) }'
}

# json_object NAME PATH STATUS EXIT REASON SECONDS LOADAVG DATE RESULTS_FILE BUSY -> one JSON object
json_object() {
    awk -v name="$1" -v path="$2" -v status="$3" -v rc="$4" -v reason="$5" -v secs="$6" \
        -v load="$7" -v date="$8" -v busy="${10}" -v arch="$arch" -v ncpu="$ncpu" -v cpu="$cpu" -v git="$git_desc" '
    function esc(s) {
        gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, "\\t", s); gsub(/\r/, "", s)
        gsub(/[\001-\037]/, "", s)
        return "\"" s "\""
    }
    function val(v) {
        if (v ~ /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) return v
        if (tolower(v) ~ /^[-+]?(nan|inf|infinity)$/ || v == "") return "null"
        return esc(v)
    }
    { line = $0; sub(/^[ \t]+/, "", line) }
    line ~ /^(ratio|raw)[ \t]/ {
        kind = line; sub(/[ \t].*/, "", kind)
        rest = line; sub(/^[a-z]+[ \t]+/, "", rest)
        key = rest; sub(/[ \t].*/, "", key)
        v = rest; if (!sub(/^[^ \t]+[ \t]+/, "", v)) v = ""
        if (!((kind, key) in seen)) order[kind, ++n[kind]] = key
        seen[kind, key] = 1; value[kind, key] = v
        next
    }
    line ~ /^note[ \t]/ { sub(/^note[ \t]+/, "", line); notes[++nn] = line; next }
    END {
        printf "  {\n    \"name\": %s,\n    \"path\": %s,\n    \"status\": %s,\n    \"exit\": %d,\n", esc(name), esc(path), esc(status), rc
        printf "    \"reason\": %s,\n    \"seconds\": %s,\n", (reason == "" ? "null" : esc(reason)), secs
        split("ratio raw", kinds, " ")
        for (k = 1; k <= 2; k++) {
            printf "    \"%s\": {", (kinds[k] == "ratio" ? "ratios" : "raw")
            for (i = 1; i <= n[kinds[k]]; i++) {
                key = order[kinds[k], i]
                printf "%s\n      %s: %s", (i > 1 ? "," : ""), esc(key), val(value[kinds[k], key])
            }
            printf "%s},\n", (n[kinds[k]] ? "\n    " : "")
        }
        printf "    \"notes\": ["
        for (i = 1; i <= nn; i++) printf "%s\n      %s", (i > 1 ? "," : ""), esc(notes[i])
        printf "%s],\n", (nn ? "\n    " : "")
        printf "    \"machine\": {\"arch\": %s, \"nproc\": %d, \"cpu_model\": %s, \"loadavg\": %s, \"cpu_busy_before_pct\": %s},\n", esc(arch), ncpu, esc(cpu), esc(load), val(busy)
        printf "    \"date\": %s,\n    \"git\": %s\n  }", esc(date), esc(git)
    }' "$9"
}

echo "accelshim benchmarks on $arch, $ncpu cores, $cpu; $git_desc"
objs=()
failed=()
for b in "$@"; do
    path=$b
    [ -e "$path" ] || path=$top/$b
    name=$(basename "$b"); name=${name%.sh}
    res=$tmp/$name.res
    log=$out/$name.log
    : >"$res"
    load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
    # a busy machine makes side-by-side timings meaningless: measure what others use (the previous
    # benchmark has ended) and say so in the table and the JSON
    busy_pct=$(cpu_busy_pct)
    busy=""
    if awk -v b="$busy_pct" 'BEGIN { exit !(b + 0 > 25) }'; then
        busy="CPUs ${busy_pct}% busy with other work just before it started: timings are unreliable"
        echo "note $busy" >>"$res"
    fi
    when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    echo
    echo "== $name ($b)"
    [ -z "$busy" ] || echo "WARNING: $busy"
    start=$(date +%s.%N)
    if [ -x "$path" ]; then
        BENCH_RESULTS=$res timeout --kill-after=10 "$timeout_s" "$path" </dev/null 2>&1 | tee "$log"
    else
        BENCH_RESULTS=$res timeout --kill-after=10 "$timeout_s" bash "$path" </dev/null 2>&1 | tee "$log"
    fi
    rc=${PIPESTATUS[0]}
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    reason=""
    case $rc in
        0) status=ok ;;
        77) status=skipped
            reason=$(grep -i 'skip' "$log" | tail -1)
            [ -n "$reason" ] || reason=$(tail -1 "$log") ;;
        124|137) status=failed; reason="timed out after ${timeout_s}s"; failed+=("$name") ;;
        *) status=failed; reason="exit $rc: $(tail -1 "$log")"; failed+=("$name") ;;
    esac
    echo "-- $name: $status (${secs}s)${reason:+: $reason}"
    objs+=("$(json_object "$name" "$b" "$status" "$rc" "$reason" "$secs" "$load" "$when" "$res" "$busy_pct")")
done

{
    echo "["
    for i in "${!objs[@]}"; do
        [ "$i" -gt 0 ] && echo ","
        printf '%s' "${objs[$i]}"
    done
    echo
    echo "]"
} >"$out/results.json.tmp" && mv "$out/results.json.tmp" "$out/results.json"
echo
echo "results: ${out#"$top"/}/results.json (${#objs[@]} benchmark(s)${failed[*]:+, failed: ${failed[*]}})"
[ ${#failed[@]} -eq 0 ]
