#!/usr/bin/env bash
# Property: libaccelshim.so runs nothing of its own at load time: .init_array holds only the
# toolchain's frame_dummy (crtbeginS.o), there is no .ctors and no DT_INIT of ours; all init is
# lazy (pthread_once from the first door used).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHIM=$ROOT/build/libaccelshim.so
[ -f "$SHIM" ] || { echo "SKIP: $SHIM not built"; exit 77; }
command -v readelf >/dev/null && command -v objdump >/dev/null || { echo "SKIP: binutils missing"; exit 77; }
if readelf -S "$SHIM" | grep -q '\.ctors'; then echo "FAIL: $SHIM has a .ctors section"; exit 1; fi
# addresses in .init_array (8-byte little-endian words)
words=$(objdump -s -j .init_array "$SHIM" 2>/dev/null | awk '/^ [0-9a-f]+ /{for(i=2;i<=5;i++) if (length($i) == 8 && $i ~ /^[0-9a-f]+$/) printf "%s", $i} END{print ""}')
entries=()
while [ ${#words} -ge 16 ]; do
    w=${words:0:16}; words=${words:16}
    le=""; for i in 14 12 10 8 6 4 2 0; do le+=${w:$i:2}; done
    entries+=("$((16#$le))")
done
names=()
for a in "${entries[@]}"; do
    n=$(nm "$SHIM" | awk -v a="$(printf '%016x' "$a")" '$1 == a && ($2 == "t" || $2 == "T") { print $3; exit }')
    names+=("${n:-unknown@$a}")
done
for n in "${names[@]}"; do
    if [ "$n" != frame_dummy ]; then
        echo "FAIL: .init_array runs $n (entries: ${names[*]})"; exit 1
    fi
done
if readelf -d "$SHIM" | grep -q '(INIT)'; then
    init=$(readelf -d "$SHIM" | awk '/\(INIT\)/{print $3}')
    n=$(nm "$SHIM" | awk -v a="$(printf '%016x' "$((init))")" '$1 == a && ($2 == "t" || $2 == "T") { print $3; exit }')
    [ "$n" = "_init" ] || { echo "FAIL: DT_INIT points at $n"; exit 1; }
fi
echo "PASS: no constructor of ours (.init_array: ${names[*]:-empty}; DT_INIT only the toolchain's _init)"
