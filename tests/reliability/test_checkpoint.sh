#!/usr/bin/env bash
# Property: one writer per output. Under 4 ranks with libaccelshim-io.so preloaded and a policy
# whose outputs.main_process_only matches "*.ckpt", each rank asks to write its own legacy
# checkpoint (mlp --checkpoint out/ck{rank}.ckpt, fopen/fwrite) but exactly ONE file exists,
# rank 0's, complete (676 floats) and byte-identical to what rank 0 wrote with --save (a path the
# policy does not match, so every rank's --save file exists: reads and other paths untouched).
# Also: the io library exports exactly the twenty-two interposed libc names, a program built with
# _FORTIFY_SOURCE (opens through __open_2 and kin) is redirected too, and accelerate-run preloads
# it (one file again through the launcher).
. "$(dirname "$0")/lib.sh"
need "$RL_MLP" "$RL_SHIM" "$RL_IO" "$RL_BUILD/tests/hostcuda/libcuda.so.1"
need_mpirun

want="__open64_2 __open_2 __openat64_2 __openat_2 creat creat64 fopen fopen64 freopen freopen64 link linkat open open64 openat openat64 remove rename renameat renameat2 unlink unlinkat"
got=$(nm -D --defined-only "$RL_IO" | awk '$2 ~ /^[TW]$/ {print $3}' | sort | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] || fail "libaccelshim-io.so exports [$got], expected [$want]"
echo "ok: libaccelshim-io.so exports exactly: $got"

pol=$RL_TMP/ckpt.yaml
{ cat "$RL_POL/sgd-fused.yaml"; printf 'outputs:\n  main_process_only: ["*.ckpt"]\n'; } >"$pol"

# open(2)-family writers (bash redirections, dd's O_CREAT|O_EXCL-free opens, touch) on rank 1 go
# nowhere; rank 0 and reads are untouched
d=$RL_TMP/sh.d; mkdir -p "$d"; echo keep >"$d/r.ckpt"
io_sh() { env ACCELSHIM_POLICY="$pol" LD_PRELOAD="$RL_IO" "$@"; }
io_sh ACCELSHIM_RANK=1 bash -c "echo x >'$d/a.ckpt'; echo y >>'$d/b.ckpt'; touch '$d/c.ckpt'; echo z >'$d/other.txt'"
io_sh OMPI_COMM_WORLD_RANK=2 bash -c "echo x >'$d/d.ckpt'"
io_sh ACCELSHIM_RANK=0 bash -c "echo x >'$d/e.ckpt'"
got=$(io_sh ACCELSHIM_RANK=1 cat "$d/r.ckpt")
[ "$got" = keep ] || fail "rank 1 could not read r.ckpt (got '$got')"
ls_got=$(cd "$d" && ls | tr '\n' ' ')
[ "$ls_got" = "e.ckpt other.txt r.ckpt " ] || fail "open-family writes: files [$ls_got], expected [e.ckpt other.txt r.ckpt ]"
echo "ok: open/openat/creat writers: rank 1/2 matches -> /dev/null, rank 0 and other paths and reads untouched"

# _FORTIFY_SOURCE: open(path, flags) with flags unknown at compile time is a call to __open_2 (and
# open64/openat/openat64 to their __*_2): O_WRONLY|O_TRUNC of existing files, no O_CREAT
FO=$RL_BUILD/tests/reliability/fortify_open
need "$FO"
fo_syms=$(nm -D --undefined-only "$FO" | awk '{print $2}' | sed 's/@.*//' | grep '^__open' | sort | tr '\n' ' ')
[ "$fo_syms" = "__open64_2 __open_2 __openat64_2 __openat_2 " ] \
    || fail "fortify_open calls [$fo_syms], expected the four __*_2 opens (was it built with _FORTIFY_SOURCE?)"
fo_flags=$(( $(printf '%d' 01) | $(printf '%d' 01000) ))   # O_WRONLY | O_TRUNC (Linux values)
fo_run() {   # fo_run RANK -> "contents of the four files"
    local d=$RL_TMP/fo.d n
    rm -rf "$d"; mkdir -p "$d"
    for n in open open64 openat openat64; do echo keep >"$d/$n.ckpt"; done
    io_sh ACCELSHIM_RANK="$1" "$FO" "$d" "$fo_flags" || fail "fortify_open (rank $1) failed"
    cat "$d/open.ckpt" "$d/open64.ckpt" "$d/openat.ckpt" "$d/openat64.ckpt" | tr '\n' ' '
}
got=$(fo_run 1)
[ "$got" = "keep keep keep keep " ] || fail "fortified opens on rank 1: files hold [$got], expected the old contents (keep x4)"
got=$(fo_run 0)
[ "$got" = "written written written written " ] || fail "fortified opens on rank 0: files hold [$got], expected written x4 (control)"
echo "ok: _FORTIFY_SOURCE opens (__open_2, __open64_2, __openat_2, __openat64_2): rank 1 -> /dev/null; rank 0 writes (control)"
mkdir -p "$RL_TMP/out.d"
rl_mpirun 4 90 ACCELSHIM_POLICY="$pol" ACCELSHIM_BACKEND=mpi -- --steps 6 --batch 2 \
    --checkpoint "$RL_TMP/out.d/ck{rank}.ckpt" --checkpoint-every 2 --save "$RL_TMP/out.d/save{rank}.bin"
[ "$RL_RC" -eq 0 ] || { rl_show; fail "4-rank run exited $RL_RC"; }
files=$(cd "$RL_TMP/out.d" && ls)
echo "files written: $(echo "$files" | tr '\n' ' ')"
ckpts=$(cd "$RL_TMP/out.d" && ls -- *.ckpt)
[ "$ckpts" = "ck0.ckpt" ] || fail "checkpoint files: [$ckpts], expected exactly [ck0.ckpt]"
for r in 0 1 2 3; do [ -s "$RL_TMP/out.d/save$r.bin" ] || fail "save$r.bin missing (non-matching path redirected?)"; done
size=$(stat -c %s "$RL_TMP/out.d/ck0.ckpt")
[ "$size" -eq 2704 ] || fail "ck0.ckpt is $size bytes, expected 2704 (676 floats)"
cmp "$RL_TMP/out.d/ck0.ckpt" "$RL_TMP/out.d/save0.bin" \
    || fail "ck0.ckpt differs from rank 0's --save file"
echo "ok: exactly one checkpoint (ck0.ckpt, $size bytes), byte-identical to rank 0's --save"

# control: without the io library every rank writes its checkpoint
rm -f "$RL_TMP"/out.d/*
RL_IO_SAVED=$RL_IO RL_IO=$RL_SHIM   # preload the shim twice instead (harmless), no io library
rl_mpirun 2 60 ACCELSHIM_POLICY="$pol" ACCELSHIM_BACKEND=mpi -- --steps 2 --batch 2 \
    --checkpoint "$RL_TMP/out.d/ck{rank}.ckpt"
RL_IO=$RL_IO_SAVED
n=$(cd "$RL_TMP/out.d" && ls -- *.ckpt 2>/dev/null | wc -l)
[ "$RL_RC" -eq 0 ] && [ "$n" -eq 2 ] || { rl_show; fail "control without the io library: $n checkpoint(s), exit $RL_RC"; }
echo "ok: control: without libaccelshim-io.so both ranks write (2 files)"

# the user's path: accelerate-run preloads libaccelshim-io.so next to the shim
if [ -x "$RL_LAUNCHER" ]; then
    rm -f "$RL_TMP"/out.d/*
    rl_launch 60 -n 2 --backend mpi --policy "$pol" -- "$RL_MLP" --steps 2 --batch 2 \
        --shard-rank '{rank}' --shard-count '{world_size}' --checkpoint "$RL_TMP/out.d/ck{rank}.ckpt"
    ckpts=$(cd "$RL_TMP/out.d" && ls -- *.ckpt 2>/dev/null)
    [ "$RL_RC" -eq 0 ] && [ "$ckpts" = ck0.ckpt ] \
        || { rl_show; fail "accelerate-run: checkpoint files [$ckpts] (exit $RL_RC), expected [ck0.ckpt]"; }
    echo "ok: accelerate-run --cpu -n 2: only rank 0's checkpoint exists (the launcher preloads the io library)"
fi
