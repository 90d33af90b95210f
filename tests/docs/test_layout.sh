#!/usr/bin/env bash
# test_layout.sh — the library's call direction, read off the #include lines:
#   intercept -> shim -> {policy, collectives}. Inside shim/: core/ is the bottom layer (it
#   includes nothing of sync/, observe/, precision/, the lifecycle or intercept/); sync/ includes
#   nothing of observe/ or precision/; policy/ and collectives/ include nothing of ours but their
#   own headers and include/. The upward includes that remain are listed in ALLOWED below, each
#   with its reason (docs/design.md section 1 names them too); a new one fails this test.
# Also: every .c file of the product, its tools and its test doubles (tests/hostcuda, hostnccl,
# hostcublas; not their test_*.c) opens with a comment saying what it owns, with a line of its own
# starting " * Must not:"; the README's layout table names every folder of the library, and its
# rows for the library's folders equal what scripts/gen-layout.sh makes of the folders' own
# statements (" * Folder D/ owns: ..." in each folder's main header), both sides printed on a
# mismatch.
# Negative controls: a planted include of an engine header in a copy of a core file is caught; a
# copy of a .c file without its "Must not:" line is caught; a tampered copy of the README's rows
# and a tampered copy of a folder's statement are caught; a folder with no statement fails the
# generator.
set -u
cd "$(dirname "$0")/../.."
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# header name -> folder, for every project header
declare -A owner
for h in $(git ls-files '*.h' '*.def' | grep -E '^(intercept|shim|policy|collectives|include)/'); do
    owner[$(basename "$h")]=$(dirname "$h")
done

# upward includes we keep, with the reason
ALLOWED=(
    "shim/sync:intercept"        # ash_launch_prepare takes intercept's kernel record (ash_kernels.h) and asks its stream-capture guard (ash_capture.h)
    "shim/precision:intercept"   # the cuBLAS feature hooks libcublas symbols: it is a boundary of its own (ash_hook.h: the real dlsym)
    "shim/observe:shim/sync"     # observers read the engine's event and policy types (ash_sync.h, ash_fuse.h); they issue nothing
)
allowed() { local p; for p in "${ALLOWED[@]}"; do [ "$p" = "$1:$2" ] && return 0; done; return 1; }

# forbidden[FROM]="TO TO ..." (folder prefixes)
declare -A forbidden=(
    [shim/core]="shim/sync shim/observe shim/precision shim/io intercept policy shim:top"
    [shim/sync]="shim/observe shim/precision intercept"
    [shim/observe]="shim/precision intercept shim/sync"
    [shim/precision]="shim/observe intercept"
    [shim/explain]="shim/sync shim/observe shim/precision intercept policy collectives"   # explain mode: core, the reader, the lifecycle
    [shim/ptx]="shim/core shim/sync shim/observe shim/precision shim/explain intercept policy collectives shim:top"   # the reader and its facts: pure C11
    [policy]="intercept shim collectives"
    [collectives]="intercept shim policy"
)

check_file() { # FILE FROM-FOLDER
    local f=$1 from=$2 inc to t
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
        to=${owner[$inc]:-}
        [ -n "$to" ] || continue
        [ "$to" = "$from" ] && continue
        for t in ${forbidden[$from]}; do
            if [ "$t" = "shim:top" ]; then
                [ "$to" = "shim" ] || continue
            else
                case "$to" in "$t"|"$t"/*) ;; *) continue ;; esac
            fi
            allowed "$from" "${to%%/*}" && continue
            allowed "$from" "$to" && continue
            echo "$f includes $inc ($to): $from must not use $to"
            return 1
        done
    done
    return 0
}

for from in "${!forbidden[@]}"; do
    for f in $(git ls-files "$from/*.c" "$from/*.h"); do
        [ "$(dirname "$f")" = "$from" ] || continue
        check_file "$f" "$from" || fail "an include runs the wrong way (above)"
    done
done

# negative control: a core file that includes the engine's header must be caught
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
{ echo '#include "ash_sync.h"'; cat shim/core/world.c; } > "$tmp/world.c"
if check_file "$tmp/world.c" shim/core >/dev/null; then
    fail "control: a planted include of ash_sync.h in a core file was not caught"
else
    echo "ok: control: a planted upward include in shim/core is caught"
fi

# every product .c opens with a comment, and that comment has its " * Must not:" line
must_not() { # FILE: 0 when FILE's opening comment has a line starting " * Must not:"
    awk '/^ \* Must not:/ { found = 1; exit } /\*\// { exit } END { exit !found }' "$1"
}
nfiles=0 f0=$fails
for f in $(git ls-files '*.c' | grep -E '^(intercept|shim|policy|collectives|tools|tests/hostcuda|tests/hostcudart|tests/hostnccl|tests/hostcublas)/' |
           grep -v '/test_[^/]*\.c$'); do
    nfiles=$((nfiles + 1))
    head -1 "$f" | grep -q '^/\* ' || { fail "$f does not open with a comment saying what it owns"; continue; }
    must_not "$f" || fail "$f: its opening comment has no line starting ' * Must not:' (what the file must not do)"
done
[ "$nfiles" -gt 0 ] || fail "no .c file found to check (run from a git checkout)"
# control: the same file without its "Must not:" line, or with it below the opening comment
sed '/^ \* Must not:/d' shim/core/log.c > "$tmp/log.c"
must_not "$tmp/log.c" && fail "control: a copy of shim/core/log.c without its Must not: line was not caught"
{ sed '/^ \* Must not:/d' shim/core/log.c; echo '/* Must not: late */'; echo ' * Must not: late'; } > "$tmp/log2.c"
must_not "$tmp/log2.c" && fail "control: a Must not: line after the opening comment was taken for it"
[ "$fails" -eq "$f0" ] && echo "ok: $nfiles .c files open with what they own and what they must not do (control: a file without it is caught)"

# the README's rows for the library's folders are what scripts/gen-layout.sh generates
# shellcheck disable=SC2016  # the backticks are Markdown's, not expansions
rows_re='^\| `(intercept|shim|shim/core|shim/sync|shim/observe|shim/precision|shim/io|shim/explain|policy|collectives)/` \|'
rows_match() { # README GENERATED: 0 when README's rows equal GENERATED, else both printed
    grep -E "$rows_re" "$1" > "$tmp/readme-rows"
    if diff -u --label "$1 (layout rows)" --label "scripts/gen-layout.sh" "$tmp/readme-rows" "$2" > "$tmp/rows.diff"; then
        return 0
    fi
    cat "$tmp/rows.diff"
    return 1
}
f0=$fails
if bash scripts/gen-layout.sh > "$tmp/gen-rows"; then
    rows_match README.md "$tmp/gen-rows" ||
        fail "README.md's layout rows differ from the folders' statements (above); run scripts/gen-layout.sh --write"
    [ "$(wc -l < "$tmp/gen-rows")" -eq 10 ] || fail "scripts/gen-layout.sh gave $(wc -l < "$tmp/gen-rows") rows, not 10"
    # control 1: a README whose shim/io row was edited by hand
    # shellcheck disable=SC2016  # Markdown backticks
    sed 's#^| `shim/io/` | .*#| `shim/io/` | edited by hand |#' README.md > "$tmp/README.md"
    rows_match "$tmp/README.md" "$tmp/gen-rows" >/dev/null &&
        fail "control: a hand-edited README row was not caught"
    # control 2: a folder's statement edited in a copy of the tree, README unchanged
    mkdir -p "$tmp/root"
    for d in intercept shim shim/core shim/sync shim/observe shim/precision shim/io shim/explain policy collectives; do
        mkdir -p "$tmp/root/$d" && cp "$d"/*.[ch] "$tmp/root/$d/"
    done
    sed -i 's#^ \* Folder policy/ owns: YAML policy#& (edited)#' "$tmp/root/policy/ash_policy.h"
    if bash scripts/gen-layout.sh --root "$tmp/root" > "$tmp/gen-tampered" 2>/dev/null; then
        rows_match README.md "$tmp/gen-tampered" >/dev/null &&
            fail "control: an edited folder statement did not change the generated rows"
    else
        fail "control: scripts/gen-layout.sh failed on a tree with an edited statement"
    fi
    # control 3: a folder whose statement is gone fails the generator, naming it
    sed -i '/^ \* Folder collectives\/ owns:/s/Folder collectives\/ owns:/Folder:/' "$tmp/root/collectives/ash_coll.h"
    if bash scripts/gen-layout.sh --root "$tmp/root" > /dev/null 2> "$tmp/gen-err"; then
        fail "control: scripts/gen-layout.sh passed a tree where collectives/ has no statement"
    else
        grep -q 'collectives/' "$tmp/gen-err" || fail "control: the generator's error does not name collectives/: $(cat "$tmp/gen-err")"
    fi
    [ "$fails" -eq "$f0" ] && echo "ok: README's layout rows equal scripts/gen-layout.sh (controls: an edited row, an edited statement, a missing one)"
else
    fail "scripts/gen-layout.sh failed (above)"
fi

# the README's layout table names every folder of the library
for d in intercept shim shim/core shim/sync shim/observe shim/precision shim/io shim/explain policy collectives; do
    grep -q "^| \`$d/\` |" README.md || fail "README.md's layout table has no row for $d/"
done
for d in core sync observe precision io; do
    [ ! -e "$d" ] || fail "$d/ is back at the top level (it lives in shim/$d/)"
done

[ "$fails" -eq 0 ] && echo "ok: layout: includes run one way, every file opens with its comment and its Must not: line, README rows generated"
exit $((fails > 0))
