#!/usr/bin/env bash
# Property: every option of the shim's options table (shim/core/ash_options.h, printed by
# build/tests/reliability/options_table, so an option added to the table is covered with no
# change here), set to a value that does not parse or is out of range, stops the program before
# its first training step: exit 2 and exactly ONE accelshim line, "accelshim: NAME=VALUE:
# expected ...", naming the variable and the value. Control: each option set to a valid value
# runs the step to exit 0 with no accelshim line at all (so the refusals come from the values).
# Each case runs the bundled trainer for one step, single process, on hostcuda.
. "$(dirname "$0")/lib.sh"
table=$RL_BUILD/tests/reliability/options_table
need "$table" "$RL_MLP" "$RL_SHIM" "$RL_BUILD/tests/hostcuda/libcuda.so.1"

"$table" >"$RL_TMP/table" || fail "the options table judged its own derived values wrongly"
[ "$(wc -l <"$RL_TMP/table")" -ge 20 ] || fail "options table: $(wc -l <"$RL_TMP/table") rows"

# a valid value for the free-text options without a default: what each names
valid_str() {
    case $1 in
        ACCELSHIM_POLICY) echo "$RL_POL/init-broadcast.yaml" ;;
        *) echo "$RL_TMP/out-$1-{rank}" ;; # REPORT, TRACE, RECORD: a new file
    esac
}

# torchrun sets RANK and WORLD_SIZE together (one alone is refused): a control sets its partner
partner() {
    case $1 in
        RANK) echo WORLD_SIZE=1 ;;
        WORLD_SIZE) echo RANK=0 ;;
    esac
}

run() {   # run VAR=VALUE [VAR=VALUE] -> $rc, $RL_TMP/o (stdout), $RL_TMP/e (stderr)
    env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_LOCAL_RANK -u OMPI_COMM_WORLD_SIZE \
        -u PMIX_RANK -u SLURM_PROCID -u SLURM_LOCALID -u SLURM_NTASKS \
        "$@" LD_PRELOAD="$RL_SHIM" LD_LIBRARY_PATH="$RL_BUILD/tests/hostcuda" \
        HOSTCUDA_KERNEL_LIBS="$RL_KLIBS" HOSTCUDA_DEVICES=2 timeout 30 "$RL_MLP" --steps 1 --batch 2 \
        >"$RL_TMP/o" 2>"$RL_TMP/e"
    rc=$?
}

fails=0 cases=0 controls=0
while IFS=$'\t' read -r name type valid garbage; do
    [ "$valid" = - ] && valid=$(valid_str "$name")
    rm -rf "$RL_TMP"/out-*
    # shellcheck disable=SC2046  # partner: nothing or one word
    run "$name=$valid" $(partner "$name")
    controls=$((controls + 1))
    n=$(grep -Ec '^(\[accelshim|accelshim:)' "$RL_TMP/e")
    if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ] || ! grep -q '^step 0 ' "$RL_TMP/o"; then
        echo "not ok: control $name=$valid ($type) -> exit $rc (want 0), $n accelshim line(s) (want 0):"
        sed 's/^/  | /' "$RL_TMP/e" | head -5
        fails=$((fails + 1))
    else
        echo "ok: control $name=$valid -> exit 0"
    fi
    IFS=$'\t' read -r -a bad <<<"$garbage"
    for g in "${bad[@]}"; do
        cases=$((cases + 1))
        run "$name=$g"
        shown=${g:0:200}   # the shim shows at most 200 bytes of a value
        n=$(grep -Ec '^(\[accelshim|accelshim:)' "$RL_TMP/e")
        line=$(grep -E '^(\[accelshim|accelshim:)' "$RL_TMP/e")
        if [ "$rc" -ne 2 ] || [ "$n" -ne 1 ] || [ "${line#"accelshim: $name=$shown"}" = "$line" ] ||
           ! grep -q ': expected ' <<<"$line" || grep -q '^step ' "$RL_TMP/o"; then
            echo "not ok: $name=${g:0:40} ($type) -> exit $rc (want 2), $n accelshim line(s) (want 1 naming it):"
            sed 's/^/  | /' "$RL_TMP/e" | cut -c1-300 | head -5
            fails=$((fails + 1))
        else
            echo "ok: $name=${g:0:40} -> exit 2: ${line:0:160}"
        fi
    done
done <"$RL_TMP/table"
[ "$fails" -eq 0 ] || fail "$fails of $cases garbage case(s) and $controls control(s) failed"
echo "all $cases garbage values refused (exit 2, one line naming them); $controls valid controls ran"
