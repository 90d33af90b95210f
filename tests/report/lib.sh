# shellcheck shell=bash
# shellcheck disable=SC2034  # RP_FAILED is read by the tests that source this file
# tests/report/lib.sh — shared by the report and trace tests (sourced): the equivalence suite's
# runners (tests/equivalence/lib.sh, on the shared tests/lib.sh) plus a python3 JSON checker.
# Skips (77) without python3. RP_FAILED: 1 once a case failed (the tests exit with it).
# shellcheck source=tests/equivalence/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../equivalence/lib.sh"
t_need_cmd python3

# rp_py ARGS... <<'PY' ... : run a python check (stdin) with ARGS; it prints "# ..." lines and
# exits 0 (property holds) or 1
rp_py() { python3 - "$@"; }

# shellcheck disable=SC2034  # read by the tests that source this file
RP_FAILED=0
tap_case() { t_case "$@"; RP_FAILED=$T_FAILED; }
