#!/usr/bin/env bash
# test_no_cuda.sh — property: `make help` and `make clean` work on a machine without the CUDA
# toolkit (nothing to build, nothing to check), and a goal that builds says which file is missing
# and fails. Run in a private mount namespace with /usr/local/cuda hidden (an empty directory
# bind-mounted over it), once with CUDA_HOME unset and once with CUDA_HOME an empty directory, on a
# copy of the Makefiles (so `make clean` removes nothing of this tree). Needs root; skips (77).
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_need_root_ns
git -C "$T_TOP" rev-parse --git-dir >/dev/null 2>&1 || t_skip "not a git checkout (the tree is copied with git ls-files)"
t_tmp
src=$T_TMP/src
mkdir -p "$src" "$T_TMP/empty" "$T_TMP/nocuda"
(cd "$T_TOP" && git ls-files -z --cached --others --exclude-standard -- Makefile '*.mk' 'scripts/*' \
    | xargs -0 tar --ignore-failed-read -cf - 2>/dev/null) | tar xf - -C "$src" || t_fail "cannot copy the Makefiles"
mkdir -p "$src/build" && : >"$src/build/marker"
cuda=$(readlink -f /usr/local/cuda 2>/dev/null || echo /usr/local/cuda)

# run_nocuda OUT CUDA_HOME_OR_EMPTY GOAL: make GOAL with the toolkit hidden
run_nocuda() {
    local out=$1 home=$2 goal=$3
    # shellcheck disable=SC2016  # expanded by the namespace's shell
    unshare -m --propagation private bash -c '
        if [ -d "$1" ]; then mount --bind "$2" "$1" || exit 90; fi
        [ ! -e /usr/local/cuda/include/cuda.h ] || exit 91
        cd "$3" && if [ -n "$4" ]; then CUDA_HOME=$4 make "$5"; else env -u CUDA_HOME make "$5"; fi
    ' _ "$cuda" "$T_TMP/empty" "$src" "$home" "$goal" >"$out" 2>&1 </dev/null
}

for home in "" "$T_TMP/nocuda"; do
    what=${home:+CUDA_HOME=empty dir}; what=${what:-CUDA_HOME unset}
    run_nocuda "$T_TMP/help" "$home" help
    rc=$?
    [ "$rc" -eq 0 ] && grep -q 'clean' "$T_TMP/help"
    t_case $? "make help without CUDA ($what): status $rc, lists the targets"
    [ "$rc" -eq 0 ] || t_show "$T_TMP/help"

    run_nocuda "$T_TMP/all" "$home" all
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 90 ] && grep -q 'cuda.h\|CUDA toolkit not found' "$T_TMP/all"
    t_case $? "make all without CUDA ($what): refused (status $rc) with: $(grep -m1 -o 'CUDA toolkit not found\|[^ ]*cuda.h not found' "$T_TMP/all")"
    { [ "$rc" -ne 0 ] && [ "$rc" -lt 90 ]; } || t_show "$T_TMP/all"

    : >"$src/build/marker"
    run_nocuda "$T_TMP/clean" "$home" clean
    rc=$?
    [ "$rc" -eq 0 ] && [ ! -e "$src/build" ]
    t_case $? "make clean without CUDA ($what): status $rc, build/ removed"
    [ "$rc" -eq 0 ] || t_show "$T_TMP/clean"
    mkdir -p "$src/build"
done
t_done
