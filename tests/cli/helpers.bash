# helpers.bash — shared set-up for the accelerate-run bats tests (tests/cli/*.bats).
# Locates the repository from this file's path; A = the launcher under test. need_* helpers
# skip a test (counted as skipped, never passed) when a build product it needs is missing.
# shellcheck shell=bash disable=SC2034,SC2154  # variables used by the .bats files; status/output set by bats

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
A=$TOP/scripts/accelerate-run
BUILD=$TOP/build
POLICY_TOOL=$BUILD/bin/accelshim-policy
TRAINER=$BUILD/tests/trainers/mlp
SHIM=$BUILD/libaccelshim.so
HOSTCUDA=$BUILD/tests/hostcuda/libcuda.so.1

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
