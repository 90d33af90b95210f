#!/usr/bin/env bash
# gen-layout.sh — the rows of README.md's layout table for the library's folders, generated from
# each folder's own statement of what it owns, so the table cannot drift from the code.
#
#   scripts/gen-layout.sh [--root DIR]           print the rows, one per folder, in table order
#   scripts/gen-layout.sh [--root DIR] --write   replace those rows of DIR/README.md in place
#
# The statement: one file directly in the folder (its main header; shim/observe/: the observers'
# registry) has, in its opening comment, a paragraph that starts with " * Folder D/ owns: " and
# runs to the next " *" line, a " * Must not:" line or the comment's end; its lines are joined
# with one space and become the row "| `D/` | TEXT |". Exactly one file per folder carries it.
# Errors (a folder with no statement or two, a statement naming another folder, a README without
# the folder's row) are one line on stderr naming the folder and the file; exit 1. Usage: exit 2.
# DIR defaults to the repository root. tests/docs/test_layout.sh compares the README with this.
set -u
FOLDERS=(intercept shim shim/core shim/sync shim/observe shim/precision shim/io shim/explain policy collectives)

root=$(cd "$(dirname "$0")/.." && pwd)
write=0
while [ $# -gt 0 ]; do
    case $1 in
        --root) [ $# -ge 2 ] || { echo "gen-layout.sh: --root needs a folder" >&2; exit 2; }
                root=$2; shift 2 ;;
        --write) write=1; shift ;;
        *) echo "usage: scripts/gen-layout.sh [--root DIR] [--write]" >&2; exit 2 ;;
    esac
done
[ -d "$root" ] || { echo "gen-layout.sh: $root: no such folder" >&2; exit 2; }

# statement FILE: the folder statement in FILE's opening comment, as "D<TAB>TEXT" (nothing if none)
statement() {
    awk '
        /^ \* Folder [^ ]+\/ owns: / {
            on = 1; d = $3; sub(/\/$/, "", d)
            t = $0; sub(/^ \* Folder [^ ]+\/ owns: /, "", t); next
        }
        on && (/^ \*$/ || /\*\// || /^ \* Must not:/) { on = 0; done = 1 }
        on { s = $0; sub(/^ \* ?/, "", s); t = t " " s }
        /\*\// { exit }
        END { if (done || on) printf "%s\t%s\n", d, t }
    ' "$1"
}

fails=0
rows=()
for d in "${FOLDERS[@]}"; do
    found="" text=""
    for f in "$root/$d"/*.h "$root/$d"/*.c; do
        [ -f "$f" ] || continue
        s=$(statement "$f")
        [ -n "$s" ] || continue
        named=${s%%$'\t'*}
        if [ "$named" != "$d" ]; then
            echo "gen-layout.sh: ${f#"$root"/}: its statement names $named/, but the file is in $d/" >&2
            fails=$((fails + 1)); continue
        fi
        if [ -n "$found" ]; then
            echo "gen-layout.sh: $d/: two statements of what it owns (${found#"$root"/}, ${f#"$root"/}); keep one" >&2
            fails=$((fails + 1)); continue
        fi
        found=$f text=${s#*$'\t'}
    done
    if [ -z "$found" ]; then
        echo "gen-layout.sh: $d/: no file opens with \" * Folder $d/ owns: ...\" (its main header should)" >&2
        fails=$((fails + 1)); continue
    fi
    rows+=("| \`$d/\` | $text |")
done
[ "$fails" -eq 0 ] || exit 1

if [ "$write" -eq 0 ]; then
    printf '%s\n' "${rows[@]}"
    exit 0
fi

readme=$root/README.md
[ -f "$readme" ] || { echo "gen-layout.sh: $readme: no such file" >&2; exit 1; }
tmp=$(mktemp "$readme.XXXXXX") || exit 1
cp "$readme" "$tmp"
for i in "${!FOLDERS[@]}"; do
    d=${FOLDERS[$i]}
    if ! grep -q "^| \`$d/\` |" "$tmp"; then
        echo "gen-layout.sh: README.md: the layout table has no row for $d/ (add one: | \`$d/\` | ... |)" >&2
        rm -f "$tmp"; exit 1
    fi
    ROW=${rows[$i]} awk -v key="| \`$d/\` |" '
        index($0, key) == 1 { print ENVIRON["ROW"]; next } { print }
    ' "$tmp" > "$tmp.new" && mv "$tmp.new" "$tmp"
done
if cmp -s "$tmp" "$readme"; then
    rm -f "$tmp"
else
    cat "$tmp" > "$readme" && rm -f "$tmp"
    echo "gen-layout.sh: README.md's layout rows rewritten from the folders' statements" >&2
fi
