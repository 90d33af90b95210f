#!/usr/bin/env bash
# Property: mlp is bit-reproducible — two runs with the same options print the same losses and
# checksum and --save identical bytes (676 float32 = 2704 bytes); a different --seed (control)
# changes them; --init per-process makes two runs start (and end) from different weights.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: same options give bit-identical output and --save; another --seed differs"
fail=0
same() { # name file1 file2
    if cmp -s "$2" "$3"; then echo "ok: $1 identical"; else
        echo "FAIL: $1 differ:"; diff "$2" "$3" | head -10; fail=1; fi
}
differ() { # name file1 file2
    if cmp -s "$2" "$3"; then echo "FAIL: $1 identical (should differ): $(tail -n1 "$2" | cut -c1-80)"
        fail=1
    elif [ "${2%.bin}" = "$2" ]; then echo "ok: $1 differ: $(mlp_checksum "$2") vs $(mlp_checksum "$3")"
    else echo "ok: $1 differ: $(cmp "$2" "$3" 2>&1 | sed 's/.* differ: //')"; fi
}
for opt in sgd adam; do
    a=$MLP_TMP/$opt.a; b=$MLP_TMP/$opt.b; c=$MLP_TMP/$opt.c
    mlp_run "$a" --steps 50 --batch 8 --seed 3 --optimizer $opt --clip 0.5 --save "$a.bin"
    mlp_run "$b" --steps 50 --batch 8 --seed 3 --optimizer $opt --clip 0.5 --save "$b.bin"
    mlp_run "$c" --steps 50 --batch 8 --seed 4 --optimizer $opt --clip 0.5 --save "$c.bin"
    same "$opt: stdout (losses + checksum) of two runs" "$a" "$b"
    same "$opt: --save files of two runs" "$a.bin" "$b.bin"
    differ "$opt: --seed 3 vs --seed 4 stdout" "$a" "$c"
    differ "$opt: --seed 3 vs --seed 4 --save files" "$a.bin" "$c.bin"
    size=$(wc -c <"$a.bin")
    [ "$size" -eq 2704 ] || { echo "FAIL: --save wrote $size bytes, want 2704 (676 float32)"; fail=1; }
done

# the checksum line is what the docs say: sum of the saved floats, FNV-1a 64 of the saved bytes
a=$MLP_TMP/sgd.a
want=$(od -An -v -tf4 "$a.bin" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { printf "%.6g", s }')
got=$(mlp_checksum "$a" | awk '{ printf "%.6g", $2 }')
if [ "$want" = "$got" ]; then echo "ok: checksum sum $got = sum of --save floats"
else echo "FAIL: checksum sum $got, sum of --save floats $want"; fail=1; fi
want=$(od -An -v -tu1 "$a.bin" | awk 'BEGIN { lo = 2216829733; hi = 3421674724 } # FNV offset basis 0xcbf29ce484222325
    function xor8(a, b,   r, k) { r = 0; for (k = 1; k < 256; k *= 2)
        { if ((int(a / k) % 2) != (int(b / k) % 2)) r += k } return r }
    { for (i = 1; i <= NF; i++) { lo = lo - lo % 256 + xor8(lo % 256, $i)
        # (hi:lo) *= 0x100000001b3, mod 2^64, in 16-bit limbs to stay exact in doubles
        l0 = lo % 65536; l1 = int(lo / 65536); h0 = hi % 65536; h1 = int(hi / 65536)
        p0 = l0 * 435; p1 = l1 * 435 + int(p0 / 65536); p0 %= 65536
        p2 = h0 * 435 + int(p1 / 65536) + l0 * 256; p1 %= 65536
        p3 = h1 * 435 + int(p2 / 65536) + l1 * 256; p2 %= 65536; p3 %= 65536
        lo = p1 * 65536 + p0; hi = p3 * 65536 + p2 } }
    END { printf "%04x%04x%04x%04x", int(hi / 65536), hi % 65536, int(lo / 65536), lo % 65536 }')
got=$(mlp_checksum "$a" | awk '{ print $3 }')
if [ "$want" = "$got" ]; then echo "ok: checksum hash $got = FNV-1a 64 of the --save bytes"
else echo "FAIL: checksum hash $got, FNV-1a 64 of --save bytes $want"; fail=1; fi

p=$MLP_TMP/pp; q=$MLP_TMP/pq
mlp_run "$p" --steps 0 --init per-process --save "$p.bin"
mlp_run "$q" --steps 0 --init per-process --save "$q.bin"
differ "--init per-process: initial weights of two runs" "$p.bin" "$q.bin"
mlp_run "$p" --steps 0 --seed 3 --save "$p.bin"
mlp_run "$q" --steps 0 --seed 3 --init seed --save "$q.bin"
same "--init seed (default): initial weights of two runs" "$p.bin" "$q.bin"
mlp_run "$p" --steps 5 --init per-process --save "$p.bin"
seed=$(sed -n 's/.*init_seed=\([0-9]*\).*/\1/p' "$p.err")
mlp_run "$q" --steps 5 --init-seed "$seed" --save "$q.bin"
same "--init-seed (printed init_seed) reproduces a --init per-process run" "$p.bin" "$q.bin"
exit $fail
