# helpers.bash — shared set-up for the accelerate-run bats tests (tests/cli/*.bats), on the
# shared library tests/lib.sh (paths). A = the launcher under test. need_* helpers skip a test
# with bats' own skip (counted as skipped, never passed) when a build product it needs is missing.
# shellcheck shell=bash disable=SC2034,SC2154  # variables used by the .bats files; status/output set by bats

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
TOP=$T_TOP
A=$T_LAUNCHER
BUILD=$T_BUILD
POLICY_TOOL=$BUILD/bin/accelshim-policy
TRAINER=$T_MLP
SHIM=$T_SHIM
HOSTCUDA=$T_HOSTCUDA_DIR/libcuda.so.1

# No configuration of the machine's user reaches the launcher under test (Accelerate's default
# config, accelerate-run's saved defaults); tests that want one point these at their own folder.
export HF_HOME=/nonexistent/accelshim-test-hf XDG_CONFIG_HOME=/nonexistent/accelshim-test-xdg

need_file() { [ -e "$1" ] || skip "${2:-$1} not built ($1 missing)"; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed"; }
need_policy_tool() { need_file "$POLICY_TOOL" accelshim-policy; }
need_trainer() { need_file "$TRAINER" "the mlp trainer"; need_file "$HOSTCUDA" hostcuda; }
need_shim() { need_file "$SHIM" libaccelshim.so; }

# Print what was run and what came out: bats shows this only when a test fails.
show() { printf 'status=%s\n--- output ---\n%s\n--- end ---\n' "$status" "$output"; }

# contains STRING: the last `run` output contains STRING (literally).
contains() { [[ $output == *"$1"* ]] || { echo "expected to find: $1"; show; return 1; }; }
lacks() { [[ $output != *"$1"* ]] || { echo "expected NOT to find: $1"; show; return 1; }; }
status_is() { [ "$status" -eq "$1" ] || { echo "expected status $1"; show; return 1; }; }

# write_printer FILE: a python3 program "FILE RANK N WIDTH" that writes N lines of ~WIDTH bytes
# to stdout (in stdio blocks, so writes cut lines anywhere), every tenth also to stderr, then a
# last line without a newline on each.
write_printer() {
  cat >"$1" <<'EOF'
import sys
r, n, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pad = "x" * w
for i in range(n):
    sys.stdout.write("out %s %d %s end\n" % (r, i, pad))
    if i % 10 == 0:
        sys.stderr.write("err %s %d %s end\n" % (r, i, pad))
sys.stdout.write("partial-out %s" % r)
sys.stderr.write("partial-err %s" % r)
EOF
}

# check_stream FILE KIND RANKS N: FILE holds, for each rank r < RANKS, exactly the KIND lines
# 0..N-1 (step 10 for err) in order and whole, then "partial-KIND r"; nothing else.
check_stream() {
  local file=$1 kind=$2 ranks=$3 n=$4 step=1
  [ "$kind" = err ] && step=10
  awk -v kind="$kind" -v ranks="$ranks" -v n="$n" -v step="$step" -v w=300 '
    BEGIN { pad = sprintf("%" w "s", ""); gsub(/ /, "x", pad) }
    {
      if (match($0, /^\[rank [0-9]+\] /) == 0) { bad++; if (bad <= 3) printf "unprefixed line %d: %.120s\n", NR, $0; next }
      r = substr($0, 7, RLENGTH - 8) + 0; body = substr($0, RLENGTH + 1)
      if (body == "partial-" kind " " r) { part[r]++; next }
      want = kind " " r " " next_i[r] + 0 " " pad " end"
      if (body != want) { bad++; if (bad <= 3) printf "rank %d: expected line %d, got line %d: %.160s\n", r, next_i[r], NR, $0; next }
      next_i[r] += step
    }
    END {
      for (r = 0; r < ranks; r++) {
        if (next_i[r] != n) { bad++; printf "rank %d: %d %s lines, expected %d\n", r, next_i[r] / step, kind, n / step }
        if (part[r] != 1) { bad++; printf "rank %d: partial last %s line seen %d times, expected once\n", r, kind, part[r] }
      }
      exit bad > 0
    }' "$file"
}

