# shellcheck shell=bash
# tests/report/lib.sh — shared by the report and trace tests (sourced): the equivalence suite's
# runners (tests/equivalence/lib.sh) plus a python3 JSON checker. Skips (77) without python3.
. "$(dirname "${BASH_SOURCE[0]}")/../equivalence/lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 not installed (scripts/install-deps.sh)"; exit 77; }

# rp_py ARGS... <<'PY' ... : run a python check (stdin) with ARGS; it prints "# ..." lines and
# exits 0 (property holds) or 1
rp_py() { python3 - "$@"; }

# tap_case as the equivalence tests print it, remembering a failure for the exit status
# shellcheck disable=SC2034  # read by the tests that source this file
RP_FAILED=0
eval "eq_$(declare -f tap_case)"
tap_case() { [ "$1" -eq 0 ] || RP_FAILED=1; eq_tap_case "$@"; }
