#!/usr/bin/env bash
# shellcheck disable=SC2317,SC2034,SC2012  # helpers and MLPR are used by the lines of matrix.tsv (eval)
# Property: every fault of tests/faults/matrix.tsv ends the way its line says — the launcher's
# exit status, within the time bound (a multiple of the job's timeout plus a margin), the rank it
# must name, and what must be kept or left (files, no process, no run folder) — on the backends
# and engines the line names. One TAP case per line. A line marked in the `known` column is a
# known defect: while it fails it is reported "not ok ... # TODO" (an expected failure, counted
# apart); once it passes it is reported as a failure, so the mark must be removed.
# Usage: test_fault_matrix.sh [--markdown FILE] [ID...]   (--markdown: also write the results
# table docs/reliability.md shows). Each case runs in its own scratch folder with TMPDIR in it.
. "$(dirname "$0")/../lib.sh"
t_need "$T_MLP" "$T_SHIM" "$T_IO" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_HOSTNCCL_DIR/libnccl.so.2"
t_need_mpirun
t_need_cmd perl
t_tmp

md=''
[ "${1:-}" = --markdown ] && { md=$2; shift 2; }
only=" $* "

# ---- what a line's injection may use -------------------------------------------------------
A=$T_LAUNCHER
MLP=$T_MLP
POL=$T_TOP/tests/equivalence/policies/sgd-fused.yaml
T=3                                  # --timeout of every case (debug.timeout_s)
LP=''                                # the launcher's pid (its own process group: set -m)
# go LAUNCHER_ARGS...: accelerate-run --cpu --timeout $T ARGS, in the background, in its own
# process group (as a job at a terminal: Ctrl-C reaches the group), output in $D/out
go() {
    set -m
    "$A" --cpu --timeout "$T" "$@" >"$D/out" 2>&1 </dev/null &
    LP=$!
    set +m
}
# at_step R S: wait (at most 60 s) until rank R printed its step S; at_out ERE: until a line matches
at_step() { at_out "^\[rank $1\] step $2 "; }
at_out() {
    local i
    for ((i = 0; i < 600; i++)); do
        grep -Eq -- "$1" "$D/out" && return 0
        kill -0 "$LP" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# rank_pid R: the trainer process of rank R (its --save names $D/pR.bin)
rank_pid() { pgrep -f -- "--save $D/p$1.bin" | while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mlp ] && echo "$p"; done | head -n 1; }
sig_rank() { local p; p=$(rank_pid "$1"); [ -n "$p" ] && kill -s "$2" "$p"; }
sig_launcher() { kill -s "$1" "$LP"; }
sig_group() { kill -s "$1" -- "-$LP"; }
# gone: within 15 s no process of this case is left (they all carry $D in their arguments or
# environment) and no run folder is left in $D/tmp
gone() {
    local i
    for ((i = 0; i < 150; i++)); do
        if [ -z "$(case_pids)" ] && ! compgen -G "$D/tmp/accelerate-run.*" >/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "# left behind:"; ps -o pid,stat,cmd -p "$(case_pids | paste -sd, -)" 2>/dev/null | cut -c1-200 | sed 's/^/#   /'
    ls "$D/tmp" | sed 's/^/#   tmp: /'
    return 1
}
case_pids() {     # the pattern is read from a file, so that this grep does not find itself
    printf '%s/\n' "$D" >"$T_TMP/pattern"
    grep -lzF -f "$T_TMP/pattern" /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | grep -v "^/proc/$$/" | cut -d/ -f3 | sort -u
}
# MLPR (set per case): the trainer as every rank runs it (append --steps N and fault options)


# ---- one case ----------------------------------------------------------------------------------
n=0 failed=0 xfails=0 rows=()
run_case() {
    local id=$1 fault=$2 where=$3 inject=$4 want_rc=$5 bound=$6 named=$7 kept=$8 known=$9
    local rc t0 secs limit a b verdict why='' i
    D=$T_TMP/$id; mkdir -p "$D/tmp"
    MLPR=("$MLP" --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' --save "$D/p{rank}.bin")
    # bound "aT+b": a times the timeout plus b seconds
    a=${bound%%T*}; b=${bound#*T}; b=${b#+}; limit=$((a * T + ${b:-0}))
    LP=''
    t0=$EPOCHREALTIME
    ( cd "$D" && export TMPDIR=$D/tmp D && eval "$inject"
      irc=$?
      [ -n "$LP" ] || exit "$irc"          # a case run in the foreground: its own status
      # wait for the launcher, at most limit + 10 s (then it hangs: SIGKILL its group)
      if [ -n "$LP" ]; then
          for ((i = 0; i < (limit + 10) * 10; i++)); do kill -0 "$LP" 2>/dev/null || break; sleep 0.1; done
          if kill -0 "$LP" 2>/dev/null; then kill -KILL -- "-$LP" 2>/dev/null; wait "$LP" 2>/dev/null; exit 124; fi
          wait "$LP"
      fi ) >"$D/inject.log" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    [ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc"
    [ -z "$why" ] && awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s > l) }' && why="took ${secs}s, bound ${limit}s"
    [ -z "$why" ] && [ "$named" != - ] && ! grep -Eq -- "$named" "$D/out" 2>/dev/null && why="no line matching /$named/"
    if [ -z "$why" ] && [ "$kept" != - ]; then
        ( cd "$D" && eval "$kept" ) >"$D/kept.log" 2>&1 || why="kept check failed: $kept"
    fi
    n=$((n + 1))
    local desc="$id: $fault [$where] -> exit $rc in ${secs}s"
    if [ "$known" != - ]; then
        if [ -n "$why" ]; then verdict=XFAIL; xfails=$((xfails + 1)); echo "not ok $n - $desc # TODO known failing ($known): $why"
        else verdict="XPASS (remove the mark)"; failed=1; echo "not ok $n - $desc: passes although marked known failing ($known): remove the mark"; fi
    elif [ -n "$why" ]; then
        verdict=FAIL; failed=1; echo "not ok $n - $desc: $why"
    else
        verdict=pass; echo "ok $n - $desc"
    fi
    if [ -n "$why" ] || [ "$verdict" != pass ]; then
        tail -n 15 "$D/out" 2>/dev/null | cut -c1-240 | sed 's/^/#   | /'
        [ -s "$D/inject.log" ] && tail -n 5 "$D/inject.log" | sed 's/^/#   inject: /'
        [ -s "$D/kept.log" ] && tail -n 10 "$D/kept.log" | sed 's/^/#   kept: /'
    fi
    rows+=("| $id | $fault | $where | \`$inject\` | $want_rc | ${limit} s | ${named//|/\\|} | \`${kept//|/\\|}\` | $verdict: exit $rc in ${secs} s |")
    # nothing of a case may outlive it (a failed case's leftovers would disturb the next)
    for i in $(case_pids); do kill -KILL "$i" 2>/dev/null; done
    return 0
}

while IFS=$'\t' read -r id fault where inject want_rc bound named kept known; do
    case $id in ''|'#'*|id) continue ;; esac
    [ "$only" = "  " ] || [[ $only == *" $id "* ]] || continue
    run_case "$id" "$fault" "$where" "$inject" "$want_rc" "$bound" "$named" "$kept" "${known:--}"
done <"$(dirname "$0")/matrix.tsv"

if [ -n "$md" ]; then
    { echo "| id | fault | backend / engine | injection | exit | bound | named | kept | result |"
      echo "|---|---|---|---|---|---|---|---|---|"
      printf '%s\n' "${rows[@]}"; } >"$md"
fi
echo "# $n cases, $xfails known failing (TODO)"
t_done_rc=$failed
echo "1..$n"
exit "$t_done_rc"
