#!/usr/bin/env bash
# scripts/fetch-thirdparty.sh — clone the third-party test corpus (llm.c, cuda-samples) at the
# commits the project's tests were written against, for a clone without ../shared/thirdparty.
#   scripts/fetch-thirdparty.sh [--dry-run] [DIR]
# DIR: default $ACCELSHIM_THIRDPARTY, else ../shared/thirdparty from the repository root (where
# the tests look). Each project is fetched at its pinned commit only (git fetch --depth 1 of the
# commit), into DIR/llm.c and DIR/cuda-samples; one already there at that commit is left alone,
# anything else already there is an error (nothing is overwritten). --dry-run prints the commands.
# Needs git and network access to github.com. Exit: 0 done, 1 a clone failed or DIR holds
# something else, 2 usage.
set -u

TP_PINS=(
  "llm.c https://github.com/karpathy/llm.c f1e2ace651495b74ae22d45d1723443fd00ecd3a"
  "cuda-samples https://github.com/NVIDIA/cuda-samples c94ff366aed18c797b8a85dfaac7817b0228b420"
)

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}

dry=0 dir=''
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    -n|--dry-run) dry=1 ;;
    -*) echo "fetch-thirdparty: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "fetch-thirdparty: one directory only ('$dir' and '$1')" >&2; exit 2; }
       dir=$1 ;;
  esac
  shift
done
top=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$dir" ] || dir=${ACCELSHIM_THIRDPARTY:-../shared/thirdparty}
case $dir in /*) ;; *) dir=$top/$dir ;; esac

run() {
  if [ $dry = 1 ]; then printf '%s\n' "$*"; else "$@"; fi
}

[ $dry = 1 ] || command -v git >/dev/null 2>&1 || { echo "fetch-thirdparty: git is not installed" >&2; exit 1; }
rc=0
for pin in "${TP_PINS[@]}"; do
  read -r name url commit <<<"$pin"
  dest=$dir/$name
  if [ -e "$dest" ]; then
    have=$(git -C "$dest" rev-parse HEAD 2>/dev/null || true)
    if [ "$have" = "$commit" ]; then
      echo "fetch-thirdparty: $dest: already at $commit"
      continue
    fi
    echo "fetch-thirdparty: $dest exists and is not a clone of $url at $commit${have:+ (it is at $have)}: remove it or pass another DIR" >&2
    rc=1
    continue
  fi
  echo "fetch-thirdparty: $name $commit -> $dest"
  if ! { run mkdir -p "$dest" && run git -C "$dest" init -q && run git -C "$dest" remote add origin "$url" &&
         run git -C "$dest" fetch -q --depth 1 origin "$commit" && run git -C "$dest" checkout -q FETCH_HEAD; }; then
    echo "fetch-thirdparty: fetching $name from $url failed (network, or the commit is gone)" >&2
    rc=1
  fi
done
exit $rc
