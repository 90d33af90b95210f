#!/usr/bin/env bash
# test_claims.sh — property: what the README counts is what the tree holds, computed here, and
# the documentation speaks of the product only.
#   - "N Driver API entry points" = the ASH_HOOK rows of intercept/hooks.def
#   - "the N cuBLAS/cuBLASLt hooks" = the rows of shim/precision/cublas_hooks.def = the cublas*
#     symbols libaccelshim.so exports (when built)
#   - "N malformed policies tested" = tests/policy/bad/*.yaml (each has a line in expected.txt,
#     checked by tests/policy/policy_cli.bats)
#   - "tests/equivalence/, N cases" = the equivalence suite's plan times its backends
#   - README.md, docs/*.md, examples/ and the folders' README.md files speak of the product for
#     its users and maintainers, not of how the tree was worked on (the patterns below: work
#     logs, revision ids, private note folders, version-control steps, designs kept outside the
#     repository); a negative control shows the checker finds such text.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
cd "$T_TOP" || t_fail "cannot enter $T_TOP"
readme=README.md

# claim NUMBER-IN-README WHAT COMPUTED: one case
claim() {
    local said=$1 what=$2 real=$3
    [ -n "$said" ] && [ "$said" = "$real" ]
    t_case $? "README: ${said:-(no number found)} $what; the tree: $real"
}

hooks=$(grep -c '^ASH_HOOK(' intercept/hooks.def)
claim "$(grep -o '[0-9]* Driver API entry points' "$readme" | head -1 | cut -d' ' -f1)" \
      "Driver API entry points hooked" "$hooks"

cublas=$(grep -c '^ASH_CUBLAS_HOOK(' shim/precision/cublas_hooks.def)
claim "$(grep -o 'the [0-9]*[[:space:]]*cuBLAS/cuBLASLt hooks' "$readme" | head -1 | awk '{print $2}')" \
      "cuBLAS/cuBLASLt hooks" "$cublas"
if [ -f "$T_SHIM" ] && command -v nm >/dev/null; then
    exported=$(nm -D --defined-only "$T_SHIM" | awk '{print $3}' | sed 's/@.*//' | grep -c '^cublas')
    [ "$exported" -eq "$cublas" ]
    t_case $? "libaccelshim.so exports $exported cublas* symbols = $cublas rows of cublas_hooks.def"
fi

bad=$(find tests/policy/bad -name '*.yaml' | grep -c .)
claim "$(grep -o '([0-9]* malformed policies' "$readme" | head -1 | tr -dc '0-9')" "malformed policies" "$bad"

# shellcheck disable=SC2016  # a literal $(( in the pattern
plan=$(sed -n 's/^ncase=\$((\(.*\)))$/\1/p' tests/equivalence/equiv_suite.sh)
backends=$(find tests/equivalence -name 'test_equivalence_*.sh' | grep -c .)
[ -n "$plan" ] || t_fail "no ncase=\$((...)) line in tests/equivalence/equiv_suite.sh"
claim "$(grep -o 'tests/equivalence/`, [0-9]* cases' "$readme" | head -1 | tr -dc '0-9')" \
      "equivalence cases" "$(( (plan) * backends ))"

# process talk: PATTERN<TAB>why
talk() {
    grep -EnH -e 'session [0-9]|[Ss]ession [0-9]' -e '[Tt]he lead\b' -e 'DO NOT run git' \
        -e 'git (add|commit)/' -e '\.notes/' -e '\bcommit [0-9a-f]{7,40}\b' -e '\.\./shared/' \
        -e 'DESIGN\.md' -e '\b(engineer|helper|agent)s? (owns?|commits?|writes?)\b' "$@"
}
t_tmp
printf 'Figures from commit 87f5cf5 (session 2).\nThe lead commits; see ../shared/DESIGN.md.\n' >"$T_TMP/control.md"
[ "$(talk "$T_TMP/control.md" | grep -c .)" -eq 2 ]
t_case $? "control: the checker flags a made-up page's commit id, session, lead and outside design"
docs=(README.md docs/*.md tests/*/README.md scripts/accelerate-run.d/README.md examples/*)
found=$(talk "${docs[@]}" 2>/dev/null)
[ -z "$found" ]
t_case $? "the docs (${#docs[@]} files) speak of the product only"
[ -z "$found" ] || printf '# %s\n' "$found" | head -20
t_done
