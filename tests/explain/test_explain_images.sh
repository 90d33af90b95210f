#!/usr/bin/env bash
# test_explain_images.sh — explain mode's image reader (shim/core/image.c) through fatbin_dump:
#   nvcc's fatbins as hostcuda's tests build them (zstd by default, --no-compress, a multi-entry
#   one: compute_80 + compute_90 PTX + an sm_80 cubin) give their PTX (the highest arch: 90 of the
#   multi-entry one) with all 7 kernels; a cubin-only fatbin and an ELF cubin are named "SASS only"
#   (no PTX); PTX text is taken as it is.
# Negative controls: a fatbin whose entry size is corrupted is refused (named, no PTX); a file of
# text that is no PTX is named as of unknown format.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dump=$top/build/tests/explain/fatbin_dump
hc=$top/build/tests/hostcuda
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$dump" "$hc/test_kernels.fatbin" "$top/build/tests/explain/mlp_kernels_sm80.cubin"; do
    [ -e "$f" ] || { echo "FAIL: $f not built (make all)"; exit 1; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# want FILE LINE1 [LINE2]: fatbin_dump's output equals the lines given (both sides on a mismatch)
want() {
    local f=$1 got exp; shift
    got=$("$dump" "$f" 2>&1)
    exp=$(printf '%s\n' "$@")
    [ "$got" = "$exp" ] && { echo "ok: $(basename "$f"): $1"; return 0; }
    echo "  $(basename "$f"): want:"; printf '    %s\n' "$@"; echo "  got:"; printf '%s\n' "$got" | sed 's/^/    /'
    return 1
}
# the kernels: as many as hostcuda's own PTX of the same source has; the PTX's size: the
# uncompressed fatbin's, which the zstd one must reproduce byte for byte in length
k=$(grep -c '\.entry' "$hc/test_kernels.ptx")
[ "$k" -gt 0 ] || fail "no kernels in $hc/test_kernels.ptx"
size=$("$dump" "$hc/test_kernels_nc.fatbin" | awk '$1 == "ptx" { print $2 }')
[ -n "$size" ] || fail "no PTX from $hc/test_kernels_nc.fatbin"
want "$hc/test_kernels_nc.fatbin" "fatbin: PTX compute_80 of 1 PTX and 0 cubin entries" "ptx $size entries $k" ||
    fail "uncompressed fatbin"
want "$hc/test_kernels.fatbin" "fatbin: PTX compute_80 (zstd) of 1 PTX and 0 cubin entries" "ptx $size entries $k" ||
    fail "zstd fatbin"
size90=$("$dump" "$hc/test_kernels_multi.fatbin" | awk '$1 == "ptx" { print $2 }')   # compute_90's own text
want "$hc/test_kernels_multi.fatbin" "fatbin: PTX compute_90 (zstd) of 2 PTX and 1 cubin entries" "ptx ${size90:-?} entries $k" ||
    fail "multi-entry fatbin"
want "$hc/test_kernels_sm80.fatbin" "fatbin: SASS only (1 cubin entry, no PTX)" || fail "cubin-only fatbin"
want "$top/build/tests/explain/mlp_kernels_sm80.cubin" "ELF cubin: SASS only, no PTX" || fail "ELF cubin"
n=$(grep -c '^\.visible \.entry\|^\.entry' "$top/build/tests/trainers/mlp_kernels.ptx")
want "$top/build/tests/trainers/mlp_kernels.ptx" "PTX text" "ptx $(wc -c < "$top/build/tests/trainers/mlp_kernels.ptx") entries $n" ||
    fail "PTX text"

# controls
python3 - "$hc/test_kernels_nc.fatbin" "$work/bad.fatbin" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<Q', b, 16 + 8, 1 << 40)      # the first entry's payload size: far past the end
open(sys.argv[2], 'wb').write(b)
PY
want "$work/bad.fatbin" "fatbin whose entry 0 overruns it" || fail "control: a corrupted fatbin was not refused"
printf 'hello, not PTX\n' > "$work/text.bin"
want "$work/text.bin" "an image of unknown format (not PTX, fatbin or ELF)" || fail "control: text taken for PTX"

[ "$fails" -eq 0 ] && echo "PASS test_explain_images" || echo "$fails failure(s)"
[ "$fails" -eq 0 ]
