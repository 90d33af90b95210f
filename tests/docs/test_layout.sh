#!/usr/bin/env bash
# test_layout.sh — the library's call direction, read off the #include lines:
#   intercept -> shim -> {policy, collectives}. Inside shim/: core/ is the bottom layer (it
#   includes nothing of sync/, observe/, precision/, the lifecycle or intercept/); sync/ includes
#   nothing of observe/ or precision/; policy/ and collectives/ include nothing of ours but their
#   own headers and include/. The upward includes that remain are listed in ALLOWED below, each
#   with its reason (docs/design.md section 1 names them too); a new one fails this test.
# Also: every .c file of the product opens with a comment (what it owns), and the README's layout
# table names every folder of the library.
# Negative control: a planted include of an engine header in a copy of a core file is caught.
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

# every product .c opens with a comment
for f in $(git ls-files '*.c' | grep -E '^(intercept|shim|policy|collectives|tools)/'); do
    head -1 "$f" | grep -q '^/\* ' || fail "$f does not open with a comment saying what it owns"
done

# the README's layout table names every folder of the library
for d in intercept shim shim/core shim/sync shim/observe shim/precision shim/io policy collectives; do
    grep -q "^| \`$d/\` |" README.md || fail "README.md's layout table has no row for $d/"
done
for d in core sync observe precision io; do
    [ ! -e "$d" ] || fail "$d/ is back at the top level (it lives in shim/$d/)"
done

[ "$fails" -eq 0 ] && echo "ok: layout: includes run one way, every file opens with its comment, README names every folder"
exit $((fails > 0))
