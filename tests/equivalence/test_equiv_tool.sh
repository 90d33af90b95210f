#!/usr/bin/env bash
# test_equiv_tool.sh — property: accelshim-equiv, the one equivalence comparison, says EQUAL
# exactly when every rank's file is bit-identical to rank 0's and rank 0's is within the
# tolerance of the reference; every other case (one rank off by one bit, rank 0 beyond the
# tolerance, a different length) is DIFFERENT (exit 1) with both sides printed, and a missing or
# torn file is an error (exit 2) naming the file. Small files made here; no CUDA.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_need "$T_EQUIV"
t_need_cmd python3
t_tmp
cd "$T_TMP" || t_fail "no scratch directory"
python3 - <<'PY'
import struct
def w(name, vals): open(name, "wb").write(struct.pack("<%df" % len(vals), *vals))
base = [0.5, -1.25, 3e-7, 2.0]
w("ref", base)
w("r0", [v * (1 + 2e-6) for v in base])            # within rtol 1e-5
w("r1", [v * (1 + 2e-6) for v in base])            # = r0
b = bytearray(open("r0", "rb").read()); b[4] ^= 1  # one bit off in element 1
open("r1bit", "wb").write(bytes(b))
w("far", [v * 1.001 for v in base])                # 1e-3 beyond the tolerance
w("short", base[:3])
open("torn", "wb").write(b"\0\0\0")
PY
# run NAME WANT ARGS...: accelshim-equiv ARGS must exit WANT; print its report on a surprise
run() {
    local name=$1 want=$2; shift 2
    t_equiv "$name.out" "$@"
    local rc=$?
    [ "$rc" -eq "$want" ]
    t_case $? "$name: exit $rc (want $want): $(tail -n 1 "$name.out")"
    [ "$rc" -eq "$want" ] || t_show "$name.out"
}
run equal          0 --ref ref r0 r1
run rank-bit       1 --ref ref r0 r1bit
grep -q 'r1bit=.*r0=' rank-bit.out
t_case $? "rank-bit: the differing element printed with both sides"
run beyond         1 --ref ref far r0
run beyond-r0      1 --ref ref far far
grep -q 'far=.*ref=' beyond-r0.out
t_case $? "beyond-r0: the differing element printed with both sides"
run max-abs-ok     0 --ref ref --max-abs 1e-2 far far
run max-abs-tight  1 --ref ref --max-abs 1e-4 far far
run length         1 --ref ref short
run pair-identical 0 r0 r1 --identical
run pair-bit       1 r0 r1bit --identical
run missing        2 --ref ref r0 nope
grep -q 'nope' missing.out
t_case $? "missing: the error names the file"
run torn           2 --ref ref torn
run usage          2 r0
run bad-number     2 --ref ref --rtol x r0
t_done
