#!/usr/bin/env bash
# Property: NVIDIA's static cudart (CUDA 13: rt_min, the smallest nvcc-built runtime program, and
# the rt_mlp trainer) run on hostcuda under the shim with ACCELSHIM_ROUTING_TABLE: every
# cuGetProcAddress[_v2] request is recorded (symbol, cudaVersion, flags, status, owner, real, handed,
# route, hook, door), and
#   1. every request whose answer is a symbol the shim hooks (hooks.def) was handed out as OUR hook
#      of exactly that symbol (legacy, _v2, _ptsz/_ptds variants as the driver chose them);
#   2. every other answer was passed through unchanged (the driver's own pointer, owned by hostcuda);
#   3. the program then stops in initialisation the documented way: hostcuda refuses every
#      cuGetExportTable (printed with its UUID), the first runtime call fails with
#      cudaErrorNotSupported (801), exit 1 — no signal, no hang (timeout 60 s);
#   4. the table equals the golden tests/gpu/cudart13_routing.tsv (a new toolkit or a routing change
#      shows as a readable diff; refresh: see the header of that file), and its requests are
#      exactly tests/gpu/cudart13_queries.txt (what gpu-check replays on the real driver).
# Control: the same run with hooks bypassed (hostcuda thunks + ACCELSHIM_ROUTE_BY_NAME=0) must
# fail check 1, so the check can fail. Skips (77) while the programs or hostcuda are not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
SHIM=$B/libaccelshim.so H=$B/tests/hostcuda GOLD=$ROOT/tests/gpu/cudart13_routing.tsv
for f in "$B/tests/gpu/rt_min" "$B/tests/trainers/rt_mlp" "$SHIM" "$H/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
export LD_LIBRARY_PATH=$H${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
hooked=$(grep -o '^ASH_HOOK([A-Z]*, *[A-Za-z0-9_]*' "$ROOT/intercept/hooks.def" | sed 's/.*, *//' | sort -u)
[ "$(wc -l <<<"$hooked")" -gt 40 ] || { echo "FAIL: could not read the hooked names from hooks.def"; exit 1; }

# check_table TABLE: checks 1 and 2; prints each violation, returns their count (0 = all good)
check_table() {
    awk -F'\t' -v hooked="$hooked" '
        BEGIN { n = split(hooked, h, "\n"); for (i = 1; i <= n; i++) H[h[i]] = 1 }
        /^#/ { next }
        { rows++ }
        $4 ~ /^0:/ && $6 !~ /^[~-]/ && ($6 in H) {
            if ($7 != "hook" || $9 != $6) { printf "  not hooked: %s %s %s -> driver %s, handed %s %s\n", $1, $2, $3, $6, $7, $9; bad++ }
            else hooks++
            next }
        $4 ~ /^0:/ && $6 ~ /^~/ { printf "  unexported driver pointer: %s %s %s -> %s (%s %s)\n", $1, $2, $3, $6, $7, $8; bad++; next }
        $7 != "passthrough" || $5 != "libcuda.so.1" && $5 != "-" { printf "  touched: %s %s %s -> %s owner %s, handed %s %s\n", $1, $2, $3, $6, $5, $7, $9; bad++; next }
        { pass++ }
        END { printf "%d requests: %d handed out as our hook, %d passed through unchanged, %d violations\n", rows, hooks, pass, bad
              if (rows == 0) bad++; exit bad > 0 }' "$1"
}

fails=0
for prog in rt_min rt_mlp; do
    bin=$B/tests/gpu/rt_min; args=()
    [ $prog = rt_mlp ] && { bin=$B/tests/trainers/rt_mlp; args=(--steps 2); }
    ACCELSHIM_ROUTING_TABLE=$tmp/$prog.tsv LD_PRELOAD=$SHIM timeout 60 "$bin" "${args[@]}" >"$tmp/$prog.out" 2>"$tmp/$prog.err"
    rc=$?
    echo "$prog: exit $rc; $(grep -c 'cuGetExportTable' "$tmp/$prog.err") private tables refused; $(grep "$prog: cuda" "$tmp/$prog.err" | head -1)"
    if [ $rc -ne 1 ]; then
        echo "FAIL $prog: exit $rc, want 1 (124 = hung, >128 = signal)"; tail -3 "$tmp/$prog.err"; fails=$((fails + 1))
    fi
    grep -q "^$prog: cudaSetDevice(0) failed: cudaErrorNotSupported (801" "$tmp/$prog.err" \
        || { echo "FAIL $prog: not the documented stop (cudaSetDevice -> cudaErrorNotSupported 801)"; tail -3 "$tmp/$prog.err"; fails=$((fails + 1)); }
    grep -qE '^hostcuda: cuGetExportTable [0-9a-f-]{36}: refused' "$tmp/$prog.err" \
        || { echo "FAIL $prog: no refused cuGetExportTable recorded"; fails=$((fails + 1)); }
    check_table "$tmp/$prog.tsv" || { echo "FAIL $prog: routing violations (above)"; fails=$((fails + 1)); }
    if ! d=$(diff <(grep -v "^##" "$GOLD") "$tmp/$prog.tsv"); then
        echo "FAIL $prog: the routing table differs from $GOLD (< golden, > now):"; head -30 <<<"$d"; fails=$((fails + 1))
    fi
done
# the requests are the ones gpu-check replays on the real driver
q=$(awk -F'\t' '!/^#/ && $10 == "gpa_v2" { print $1, $2, $3 }' "$tmp/rt_mlp.tsv" | awk '!seen[$0]++')
if ! d=$(diff <(grep -v '^#' "$ROOT/tests/gpu/cudart13_queries.txt") <(printf '%s\n' "$q")); then
    echo "FAIL: the recorded requests differ from tests/gpu/cudart13_queries.txt (< file, > now):"; head -10 <<<"$d"; fails=$((fails + 1))
fi

# control: hooks bypassed (unexported pointers, fallback off) -> check 1 must fail
HOSTCUDA_UNEXPORTED_PROCS=1 ACCELSHIM_ROUTE_BY_NAME=0 ACCELSHIM_ROUTING_TABLE=$tmp/off.tsv LD_PRELOAD=$SHIM \
    timeout 60 "$B/tests/gpu/rt_min" >/dev/null 2>&1
if check_table "$tmp/off.tsv" >"$tmp/off.txt"; then
    echo "FAIL: control: with every hook bypassed the table check passed"; fails=$((fails + 1))
else
    echo "control (hooks bypassed): $(tail -1 "$tmp/off.txt")"
fi
# and with the by-name fallback on, the same unexported pointers are all hooked again
HOSTCUDA_UNEXPORTED_PROCS=1 ACCELSHIM_ROUTING_TABLE=$tmp/name.tsv LD_PRELOAD=$SHIM timeout 60 "$B/tests/gpu/rt_min" >/dev/null 2>&1
n_id=$(awk -F'\t' '$7 == "hook"' "$tmp/rt_min.tsv" | wc -l) n_name=$(awk -F'\t' '$7 == "hook" && $8 == "name"' "$tmp/name.tsv" | wc -l)
[ "$n_name" -eq "$n_id" ] || { echo "FAIL: unexported pointers: $n_name hooked by name, want $n_id (as by identity)"; fails=$((fails + 1)); }
echo "unexported pointers: $n_name of cudart's requests hooked by name (by identity: $n_id)"
[ $fails -eq 0 ] || exit 1
echo "PASS: static cudart's requests (rt_min, rt_mlp) routed as the golden table says; initialisation stops at the refused private tables"
