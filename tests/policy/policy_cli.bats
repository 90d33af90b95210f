#!/usr/bin/env bats
# policy_cli.bats — build/bin/accelshim-policy from the outside.
# Properties: every malformed policy in tests/policy/bad/ (table: bad/expected.txt, FILE<TAB>
# LINE:COL<TAB>substring) exits 2 with stderr starting "PATH:LINE:COL: " exactly and containing
# the expected text, and nothing on stdout; the comparison itself can fail (negative control);
# the shipped examples are valid and their normalised form is a fixed point; a missing file is
# named; usage errors exit 1; --help exits 0. Skips when the CLI has not been built.

bats_require_minimum_version 1.5.0

setup() {
    ROOT="$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)"
    CLI="$ROOT/build/bin/accelshim-policy"
    [ -x "$CLI" ] || skip "build/bin/accelshim-policy is not built (run make)"
    cd "$ROOT" || return 1
    TMP="$(mktemp -d)"
}

teardown() {
    [ -n "${TMP:-}" ] && rm -rf "$TMP"
}

# check_case FILE LINE:COL SUBSTRING — 0 when the CLI rejects FILE as expected; otherwise prints
# what was expected and what came back, and returns 1.
check_case() {
    local file=$1 pos=$2 sub=$3 rc=0 out err
    "$CLI" check "$file" >"$TMP/out" 2>"$TMP/err" || rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
    if [[ $rc -ne 2 || $err != "$file:$pos: "* || $err != *"$sub"* || -n $out ]]; then
        echo "MISMATCH $file"
        echo "  expected: exit 2, stderr '$file:$pos: ...$sub...', empty stdout"
        echo "  got:      exit $rc, stderr '$err', stdout '${out:0:200}'"
        return 1
    fi
    return 0
}

@test "each malformed policy fails with its exact file:line:col and message" {
    local n=0 failed=0 file pos sub
    while IFS=$'\t' read -r file pos sub; do
        [[ -z $file || $file == \#* ]] && continue
        n=$((n + 1))
        check_case "tests/policy/bad/$file" "$pos" "$sub" || failed=$((failed + 1))
    done <tests/policy/bad/expected.txt
    echo "$n cases, $failed mismatches"
    [ "$n" -ge 25 ]
    [ "$failed" -eq 0 ]
}

@test "every tests/policy/bad/*.yaml has a line in expected.txt" {
    local f missing=0
    for f in tests/policy/bad/*.yaml; do
        if ! cut -f1 tests/policy/bad/expected.txt | grep -qxF "$(basename "$f")"; then
            echo "no expectation for $f"
            missing=1
        fi
    done
    [ "$missing" -eq 0 ]
}

@test "negative control: check_case reports a wrong line, a wrong message and a valid file" {
    run check_case tests/policy/bad/missing-version.yaml 2:1 "missing 'version'"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ $output == *"MISMATCH"* ]]
    [[ $output == *"got:      exit 2, stderr 'tests/policy/bad/missing-version.yaml:1:1: "* ]]
    run check_case tests/policy/bad/missing-version.yaml 1:1 "some other message"
    [ "$status" -eq 1 ]
    run check_case examples/llmc-fp32.yaml 1:1 ""
    [ "$status" -eq 1 ]
    [[ $output == *"exit 0"* ]]
    run check_case tests/policy/bad/missing-version.yaml 1:1 "missing 'version'"
    [ "$status" -eq 0 ]
}

@test "examples are valid and their normalised form is a fixed point" {
    local f
    for f in examples/*.yaml; do
        run --separate-stderr "$CLI" check "$f"
        echo "$f: exit $status, stderr: $stderr"
        [ "$status" -eq 0 ]
        [ -z "$stderr" ]
        [[ $output == "version: 1"* ]]
        printf '%s\n' "$output" >"$TMP/norm.yaml"
        run --separate-stderr "$CLI" check "$TMP/norm.yaml"
        [ "$status" -eq 0 ]
        diff <(printf '%s\n' "$output") "$TMP/norm.yaml"
    done
}

@test "the normalised form spells out defaults" {
    printf 'version: 1\ngradients:\n  - { at: "k*", buffer: { arg: 1, count_arg: 2 }, dtype: f32, wire: f32 }\n' >"$TMP/p.yaml"
    run --separate-stderr "$CLI" check "$TMP/p.yaml"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ $output == *"reduce: mean"* ]]
    [[ $output == *"wire: same"* ]]
    [[ $output == *"timeout_s: 600"* ]]
    [[ $output == *"check_collectives: false"* ]]
}

@test "a missing file is named and exits 2" {
    run --separate-stderr "$CLI" check "$TMP/does-not-exist.yaml"
    echo "exit $status, stderr: $stderr"
    [ "$status" -eq 2 ]
    [ "$stderr" = "$TMP/does-not-exist.yaml: cannot read policy: No such file or directory" ]
}

@test "an unreadable file is named and exits 2" {
    local as=()
    if [ "$(id -u)" -eq 0 ]; then # root reads mode-000 files: drop to nobody when possible
        command -v setpriv >/dev/null || skip "running as root and setpriv is missing"
        as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        chmod 755 "$TMP"
        "${as[@]}" test -x "$CLI" || skip "user nobody cannot run $CLI"
    fi
    printf 'version: 1\n' >"$TMP/secret.yaml"
    chmod 000 "$TMP/secret.yaml"
    run --separate-stderr "${as[@]}" "$CLI" check "$TMP/secret.yaml"
    echo "exit $status, stderr: $stderr"
    [ "$status" -eq 2 ]
    [ "$stderr" = "$TMP/secret.yaml: cannot read policy: Permission denied" ]
}

@test "a directory is not a policy" {
    run --separate-stderr "$CLI" check "$TMP"
    [ "$status" -eq 2 ]
    [[ $stderr == "$TMP: cannot read policy: Is a directory" ]]
}

@test "usage errors exit 1 with the usage on stderr" {
    local args
    for args in "" "check" "check a b" "frobnicate x" "match x"; do
        # shellcheck disable=SC2086
        run --separate-stderr "$CLI" $args
        echo "args '$args': exit $status, stderr: $stderr"
        [ "$status" -eq 1 ]
        [[ $stderr == *"usage: accelshim-policy check FILE"* ]]
        [ -z "$output" ]
    done
}

@test "--help exits 0 with the usage on stdout" {
    run --separate-stderr "$CLI" --help
    [ "$status" -eq 0 ]
    [[ $output == *"usage: accelshim-policy check FILE"* ]]
    [[ $output == *"exit status"* ]]
}

@test "match lists the rules for a kernel name; no rule exits 3" {
    run --separate-stderr "$CLI" match examples/mnist-1layer.yaml _Z17matmul_a_b_kernelPfS_S_iii
    echo "$output"
    [ "$status" -eq 0 ]
    [[ $output == 'parameters[0] at "*matmul_a_b_kernel*" (examples/mnist-1layer.yaml:'* ]]
    run --separate-stderr "$CLI" match examples/llmc-fp32.yaml _Z13adamw_kernel2PfS_S_S_lffffff
    [ "$status" -eq 0 ]
    [[ $output == 'gradients[0] at "*adamw_kernel2*"'* ]]
    run --separate-stderr "$CLI" match examples/llmc-bf16.yaml adamw_kernel3
    [ "$status" -eq 3 ]
    [ "$output" = "no rule matches" ]
}

@test "match demangles a mangled name as the shim does: mangled, demangled and bare-name globs" {
    # issue: `match yours.yaml _Z14linear_forwardPfPKfS1_S1_iiii` said "no rule matches" although
    # the shim matches that kernel at run time (it also tries the demangled and the bare name)
    run --separate-stderr "$CLI" match examples/mlp.yaml _Z14linear_forwardPfPKfS1_S1_iiii
    echo "$output"
    [ "$status" -eq 0 ]
    [[ $output == 'parameters[0] at "linear_forward*" (examples/mlp.yaml:'* ]]
    local t; t=$(mktemp -d)
    for glob in '_Z14linear_forward*' 'linear_forward' 'linear_forward(float*, float const*, float const*, float const*, int, int, int, int)'; do
        printf 'version: 1\ngradients:\n  - at: "%s"\n    buffer: { arg: 1, count_arg: 4 }\n    dtype: f32\n' "$glob" >"$t/p.yaml"
        run --separate-stderr "$CLI" match "$t/p.yaml" _Z14linear_forwardPfPKfS1_S1_iiii
        echo "glob $glob: $output"
        [ "$status" -eq 0 ]
        [[ $output == 'gradients[0] at "'* ]]
    done
    # negative control: a glob that none of the three forms matches
    printf 'version: 1\ngradients:\n  - at: "linear_forwar"\n    buffer: { arg: 1, count_arg: 4 }\n    dtype: f32\n' >"$t/p.yaml"
    run --separate-stderr "$CLI" match "$t/p.yaml" _Z14linear_forwardPfPKfS1_S1_iiii
    echo "$output"
    [ "$status" -eq 3 ]
    [[ $output == 'no rule matches _Z14linear_forwardPfPKfS1_S1_iiii (demangled: linear_forward(float*,'* ]]
    rm -rf "$t"
}
