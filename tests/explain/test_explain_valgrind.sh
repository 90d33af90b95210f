#!/usr/bin/env bash
# test_explain_valgrind.sh — explain mode is memory-clean: the bundled trainer (with --clip and
# with --update per-tensor) under the shim with ACCELSHIM_EXPLAIN runs under valgrind memcheck with
# no error (--error-exitcode), and writes its explanation; reading_script (the shim's reading.c
# on a PTX module with no launches) is clean too. Control: a planted one-byte overread in a small
# C program makes memcheck exit with that code, so the check can fail.
# Skips (77) without valgrind or the builds.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
t_need_cmd valgrind
t_need "$T_SHIM" "$T_MLP" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_BUILD/tests/explain/reading_script"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
vg=(valgrind --error-exitcode=9 --leak-check=no -q)

for args in "--steps 3 --clip 1.0" "--steps 3 --update per-tensor"; do
    tag=${args// /}; tag=${tag//-/}
    # shellcheck disable=SC2086  # $args: the trainer's words
    timeout 300 env LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" HOSTCUDA_KERNEL_LIBS="$T_KLIBS" LD_PRELOAD="$T_SHIM" \
        ACCELSHIM_EXPLAIN="$work/$tag.txt" "${vg[@]}" "$T_MLP" $args > /dev/null 2> "$work/$tag.err"
    rc=$?
    [ $rc -eq 0 ] && grep -q '^rule: gradients' "$work/$tag.txt"
    rc=$?
    [ $rc -eq 0 ] || t_show "$work/$tag.err"
    t_case $rc "mlp $args in explain mode: no memcheck error, an explanation with a gradients rule"
done
"${vg[@]}" "$T_BUILD/tests/explain/reading_script" "$top/tests/explain/facts_cases.ptx" /dev/null > "$work/rs.txt" 2> "$work/rs.err"
rc=$?
[ $rc -eq 0 ] || t_show "$work/rs.err"
t_case $rc "reading_script (the reading on no launches) under memcheck: no error"

# control: memcheck reports a planted overread with the same exit code
printf '#include <stdlib.h>\nint main(void){ char *p = malloc(4); int r = p[4]; free(p); return r & 0; }\n' > "$work/bad.c"
cc -O0 -g -o "$work/bad" "$work/bad.c"
"${vg[@]}" "$work/bad" > /dev/null 2>&1
[ $? -eq 9 ]
t_case $? "control: a planted one-byte overread makes memcheck exit 9"
t_done
