#!/usr/bin/env bash
# Property: scripts/gpu-check.sh is safe to run anywhere. Where no NVIDIA GPU/driver is present it
# exits 77 printing exactly ONE line that says so (this test then skips: 77, never a pass); where
# one is present it runs every check on the real driver and this test passes only if all passed
# (exit 0). Its report lands in a temporary directory (kept on failure, path printed).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
out=$(timeout -k 10 600 "$ROOT/scripts/gpu-check.sh" "$tmp" 2>&1); rc=$?
lines=$(printf '%s\n' "$out" | grep -c .)
case $rc in
    77)
        if [ "$lines" -ne 1 ] || ! grep -q 'no NVIDIA GPU/driver' <<<"$out"; then
            echo "FAIL: exit 77 but $lines lines of output (want exactly one saying there is no GPU/driver):"
            printf '%s\n' "$out" | head -20; exit 1
        fi
        rm -rf "$tmp"
        echo "$out"
        echo "SKIP: no GPU here; gpu-check exited 77 with one line (as it must)"
        exit 77 ;;
    0)
        printf '%s\n' "$out" | tail -25; rm -rf "$tmp"
        echo "PASS: gpu-check passed every check on the real driver"; exit 0 ;;
    *)
        printf '%s\n' "$out" | tail -40
        echo "FAIL: gpu-check exited $rc (report kept in $tmp)"; exit 1 ;;
esac
