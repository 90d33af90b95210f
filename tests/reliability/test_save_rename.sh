#!/usr/bin/env bash
# Property: one writer per output also holds when a program saves the safe way, to a temporary
# file that it then renames or links over the final name (rename, renameat, renameat2, link,
# linkat, then unlink). On rank 1, with outputs.main_process_only matching the final name (model.bin), the
# temporary and the rename both go nowhere and the rename succeeds: model.bin holds rank 0's data
# and no temporary is left, also when the policy lists "*.tmp" too (rank 1's rename must not fail
# with ENOENT). Control: rank 0's rename really happens (model.bin holds its data at once). And
# the io library reads the policy once, when it is loaded: deleting or editing the policy during
# the run changes nothing.
. "$(dirname "$0")/lib.sh"
SA=$RL_BUILD/tests/reliability/save_app
need "$RL_IO" "$SA"

io() { local r=$1; shift; env ACCELSHIM_POLICY="$pol" ACCELSHIM_RANK="$r" LD_PRELOAD="$RL_IO" "$@"; }

for outputs in '["model.bin"]' '["model.bin", "*.tmp"]'; do
    pol=$RL_TMP/pol.yaml
    printf 'version: 1\noutputs:\n  main_process_only: %s\n' "$outputs" >"$pol"
    for mode in rename renameat renameat2 link linkat; do
        d=$RL_TMP/d.$mode; rm -rf "$d"; mkdir -p "$d"
        io 0 "$SA" "$mode" "$d" model.bin rank0-data >"$RL_TMP/r0" 2>&1 \
            || { cat "$RL_TMP/r0"; fail "$mode, $outputs: rank 0's save failed"; }
        got=$(cat "$d/model.bin" 2>/dev/null); files=$(cd "$d" && ls | tr '\n' ' ')
        [ "$got" = rank0-data ] && [ "$files" = "model.bin " ] \
            || fail "$mode, $outputs: control: after rank 0's save model.bin holds [$got], files [$files]; expected [rank0-data], [model.bin ]"
        io 1 "$SA" "$mode" "$d" model.bin rank1-data >"$RL_TMP/r1" 2>&1
        rc=$?
        [ "$rc" -eq 0 ] || { cat "$RL_TMP/r1"; fail "$mode, $outputs: rank 1's save failed (exit $rc)"; }
        got=$(cat "$d/model.bin" 2>/dev/null); files=$(cd "$d" && ls | tr '\n' ' ')
        [ "$got" = rank0-data ] || fail "$mode, $outputs: after rank 1's save model.bin holds [$got], expected rank 0's [rank0-data]"
        [ "$files" = "model.bin " ] || fail "$mode, $outputs: after rank 1's save the folder holds [$files], expected [model.bin ]"
    done
    echo "ok: $outputs: rename, renameat, renameat2, link, linkat: rank 1's save succeeds and goes nowhere; model.bin holds rank 0's data; control: rank 0's save lands"
done

# rank 1 moving rank 0's output away (a backup rotation) does nothing either; rank 0's does
d=$RL_TMP/mv.d; rm -rf "$d"; mkdir -p "$d"; echo data >"$d/model.bin"
io 1 mv "$d/model.bin" "$d/model.bin.old" || fail "rank 1: mv model.bin model.bin.old failed"
files=$(cd "$d" && ls | tr '\n' ' ')
[ "$files" = "model.bin " ] || fail "rank 1: mv model.bin model.bin.old: folder holds [$files], expected [model.bin ]"
io 0 mv "$d/model.bin" "$d/model.bin.old" || fail "rank 0: mv failed"
files=$(cd "$d" && ls | tr '\n' ' ')
[ "$files" = "model.bin.old " ] || fail "control: rank 0's mv: folder holds [$files], expected [model.bin.old ]"
echo "ok: rank 1's mv of a matched file does nothing; control: rank 0's mv moves it"

# the policy is read once, at load: deleting or editing it before the first write changes nothing
pol=$RL_TMP/once.yaml
for change in delete edit; do
    d=$RL_TMP/once.$change; rm -rf "$d"; mkdir -p "$d"
    printf 'version: 1\noutputs:\n  main_process_only: ["*.ckpt"]\n' >"$pol"
    io 1 "$SA" "late-$change" "$pol" "$d/a.ckpt" x || fail "$change: save_app late-$change failed"
    [ -e "$d/a.ckpt" ] && fail "policy ${change}d mid-run: rank 1 wrote a.ckpt (the policy was read after the change)"
    [ "$change" = delete ] && [ -e "$pol" ] && fail "late-delete: the policy still exists (the test proves nothing)"
done
echo "ok: the policy deleted or edited before the first write: rank 1's write to a.ckpt still goes nowhere"
