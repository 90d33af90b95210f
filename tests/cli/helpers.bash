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
