#!/usr/bin/env bash
# Property: --update fused (one update launch over the whole contiguous parameter buffer) and
# --update per-tensor (one launch per tensor W1, b1, W2, b2) give bit-identical --save files and
# identical losses, for sgd and adam, with and without --clip (0.05 binds: see test_mlp_clip.sh).
# And --update per-tensor --update-chunks 16 (64 update launches a step, some over empty slices)
# gives the same --save file and output as --update-chunks 1, for sgd and adam.
. "$(dirname "$0")/mlp_test_lib.sh"
mlp_need_driver
echo "property: --update fused and per-tensor are bit-identical (sgd/adam, with/without --clip)"
fail=0
for opt in sgd adam; do
    for clip in "" "--clip 0.05"; do
        f=$MLP_TMP/fused p=$MLP_TMP/per
        # shellcheck disable=SC2086
        mlp_run "$f" --steps 60 --batch 8 --seed 5 --optimizer $opt $clip --update fused --save "$f.bin"
        # shellcheck disable=SC2086
        mlp_run "$p" --steps 60 --batch 8 --seed 5 --optimizer $opt $clip --update per-tensor --save "$p.bin"
        what="--optimizer $opt ${clip:-(no clip)}"
        if cmp -s "$f.bin" "$p.bin" && cmp -s "$f" "$p"; then
            echo "ok: $what: fused and per-tensor identical: $(mlp_checksum "$f")"
        else
            echo "FAIL: $what: fused and per-tensor differ"
            echo "  fused:      $(mlp_checksum "$f")"
            echo "  per-tensor: $(mlp_checksum "$p")"
            cmp "$f.bin" "$p.bin"; diff "$f" "$p" | head -6
            fail=1
        fi
    done
done
echo "property: --update per-tensor --update-chunks 16 (64 launches) == --update-chunks 1 (sgd/adam)"
for opt in sgd adam; do
    one=$MLP_TMP/k1 many=$MLP_TMP/k16
    mlp_run "$one" --steps 60 --batch 8 --seed 5 --optimizer $opt --update per-tensor --update-chunks 1 --save "$one.bin"
    mlp_run "$many" --steps 60 --batch 8 --seed 5 --optimizer $opt --update per-tensor --update-chunks 16 --save "$many.bin"
    if cmp -s "$one.bin" "$many.bin" && cmp -s "$one" "$many"; then
        echo "ok: --optimizer $opt: --update-chunks 16 and 1 identical: $(mlp_checksum "$many")"
    else
        echo "FAIL: --optimizer $opt: --update-chunks 16 and 1 differ"
        echo "  chunks 1:  $(mlp_checksum "$one")"
        echo "  chunks 16: $(mlp_checksum "$many")"
        cmp "$one.bin" "$many.bin"; diff "$one" "$many" | head -6
        fail=1
    fi
done
exit $fail
