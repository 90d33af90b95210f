#!/usr/bin/env bash
# test_policy_errors_shim.sh — a bad policy stops an unmodified program under the shim at its
# first CUDA call: exit status 2, "file:line:col: message" on stderr, and NOT ONE training step.
# Every malformed policy of tests/policy/bad/expected.txt (the CLI's table) is run through the
# preloaded shim with the bundled trainer; plus policies that are valid YAML but wrong for the
# kernel they name (an argument past the kernel's parameters, a non-pointer buffer argument, the
# same in a ready point's buffer),
# which only the shim can see. Control: a valid policy runs all steps with exit 0.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
b=$top/build
mlp=$b/tests/trainers/mlp
for f in "$mlp" "$b/libaccelshim.so" "$b/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "1..0 # SKIP $f not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() {   # run POLICY -> $rc, $tmp/out, $tmp/err
    ACCELSHIM_POLICY=$1 LD_PRELOAD=$b/libaccelshim.so LD_LIBRARY_PATH=$b/tests/hostcuda \
        HOSTCUDA_KERNEL_LIBS=$b/tests/trainers/libmlp_kernels_host.so \
        timeout 30 "$mlp" --steps 3 --batch 2 --clip 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
n=0
case_result() {   # case_result OK DESC
    n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
table=$top/tests/policy/bad/expected.txt
rows=$(grep -cv '^#' "$table")
echo "1..$((rows + 4))"
while IFS=$'\t' read -r file pos want; do
    case $file in '#'*|'') continue ;; esac
    path=$top/tests/policy/bad/$file
    run "$path"
    ok=0
    [ "$rc" -eq 2 ] || { ok=1; echo "# exit status $rc, want 2"; }
    head -1 "$tmp/err" | grep -qF -- "$path:$pos: " || { ok=1; echo "# want '$path:$pos: ...', got: $(head -1 "$tmp/err")"; }
    grep -qF -- "$want" "$tmp/err" || { ok=1; echo "# message lacks: $want"; }
    ! grep -q '^step ' "$tmp/out" || { ok=1; echo "# a training step ran: $(head -1 "$tmp/out")"; }
    case_result $ok "$file rejected at $pos before any step, exit 2"
done <"$table"

# valid YAML, wrong for the kernel: only the shim, at the kernel's first launch, can tell
cat >"$tmp/argrange.yaml" <<'Y'
version: 1
gradients:
  - at: "grad_norm_squared"
    buffer: { arg: 1, count_arg: 5 }
    dtype: f32
Y
run "$tmp/argrange.yaml"
ok=0; [ "$rc" -eq 2 ] || ok=1
grep -q "argrange.yaml:3:5: gradients\[0\] (at: \"grad_norm_squared\") names argument 5, but kernel grad_norm_squared has 3 parameter" "$tmp/err" || ok=1
! grep -q '^step 1 ' "$tmp/out" || ok=1
[ $ok -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
case_result $ok "an argument past the kernel's parameters stops the program (exit 2, file:line:col)"

cat >"$tmp/notptr.yaml" <<'Y'
version: 1
gradients:
  - at: "grad_norm_squared"
    buffer: { arg: 2, count: 4 }
    dtype: f32
Y
run "$tmp/notptr.yaml"
ok=0; [ "$rc" -eq 2 ] || ok=1
grep -q "notptr.yaml:3:5: .*argument 2 of kernel grad_norm_squared is 4 bytes, not a pointer" "$tmp/err" || ok=1
[ $ok -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
case_result $ok "a non-pointer buffer argument stops the program (exit 2)"

# a ready point's buffer is checked against ITS kernel the same way, and named as the ready point
cat >"$tmp/readyarg.yaml" <<'Y'
version: 1
gradients:
  - at: "grad_norm_squared"
    buffer: { arg: 1, count_arg: 2 }
    dtype: f32
    ready:
      - after: "linear_backward_weight"
        buffer: { arg: 9, count: 4 }
Y
run "$tmp/readyarg.yaml"
ok=0; [ "$rc" -eq 2 ] || ok=1
grep -q "readyarg.yaml:7:9: gradients\[0\].ready\[0\] (after: \"linear_backward_weight\") names argument 9, but kernel linear_backward_weight has 7 parameter" "$tmp/err" || ok=1
! grep -q '^step 1 ' "$tmp/out" || ok=1
[ $ok -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
case_result $ok "a ready point's argument past its kernel's parameters stops the program (exit 2, the entry's line:col)"

# control: the same program with a valid policy trains all its steps
run "$top/examples/mlp-clip.yaml"
ok=0; [ "$rc" -eq 0 ] || ok=1; [ "$(grep -c '^step ' "$tmp/out")" -eq 3 ] || ok=1
[ $ok -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -5
case_result $ok "control: a valid policy runs every step, exit 0"
