#!/usr/bin/env bats
# launcher_output.bats — rank output never tears, on every engine that runs here.
# Property: with 3 ranks each writing 20,000 lines of ~300 bytes to stdout (in 8 KiB stdio blocks,
# so the writes cut lines anywhere) plus every tenth line to stderr, the launcher's stdout holds
# exactly each rank's stdout lines, whole and prefixed "[rank R] ", in each rank's order; its
# stderr holds exactly the stderr lines; a last line without a newline arrives whole. Checked on
# mpirun and the launcher's own engine (srun: launcher_slurm.bats, on a Slurm cluster it starts). The control is the
# checker itself: fed a torn copy, it must complain. Also: ranks' stdout is line-buffered by
# default (a C program killed by SIGKILL right after printf keeps its line), and
# --no-line-buffered gives the program's own buffering back (the line is lost: the control).

# shellcheck disable=SC2016  # literal $ in single quotes is on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID
  write_printer printer.py
}
teardown() { cd / && rm -rf "$T"; }

# run_printer ENGINE-OPTIONS...: 3 ranks print; stdout and stderr kept apart.
run_printer() {
  "$A" --no-preload -n 3 "$@" -- python3 "$T/printer.py" '{rank}' 20000 300 >out.txt 2>err.txt
}

@test "the checker fails on a torn stream (control)" {
  need_cmd python3
  for r in 0 1; do python3 printer.py "$r" 200 300 2>/dev/null | sed "s/^/[rank $r] /"; echo; done >good.txt
  check_stream good.txt out 2 200
  # tear one line in two, as the engines did
  awk 'NR == 57 { print substr($0, 1, 100); print "[rank 1] " substr($0, 101); next } { print }' good.txt >torn.txt
  run check_stream torn.txt out 2 200
  [ "$status" -ne 0 ] || { echo "a torn stream passed the check"; false; }
  contains "expected line"
}

@test "mpirun: 3 ranks x 20,000 long lines arrive whole, stdout on stdout, stderr on stderr" {
  need_cmd mpirun
  need_cmd python3
  run_printer --launcher mpirun
  check_stream out.txt out 3 20000
  check_stream err.txt err 3 20000
}

@test "own engine: 3 ranks x 20,000 long lines arrive whole, stdout on stdout, stderr on stderr" {
  need_cmd python3
  run_printer --launcher local
  check_stream out.txt out 3 20000
  check_stream err.txt err 3 20000
}

# A fake mpirun that runs the real one in a private mount namespace where the launcher's TMPDIR
# (and so its run directory) is an empty tmpfs: its ranks are as if on another host.
remote_mpirun() {
  need_cmd unshare
  [ "$(id -u)" = 0 ] || skip "needs root for a private mount namespace"
  unshare -m true 2>/dev/null || skip "cannot create a mount namespace here"
  mkdir -p "$T/bin" "$T/tmp"
  cat >"$T/bin/mpirun" <<EOF
#!/bin/bash
exec unshare -m bash -c 'mount -t tmpfs none "\$0" && exec "\$@"' "$T/tmp" "$(command -v mpirun)" "\$@"
EOF
  chmod +x "$T/bin/mpirun"
}

@test "mpirun, ranks that cannot see the run directory (as on another host): lines arrive whole" {
  need_cmd mpirun
  need_cmd python3
  remote_mpirun
  PATH=$T/bin:$PATH TMPDIR=$T/tmp run_printer --launcher mpirun
  check_stream out.txt out 3 20000
  check_stream err.txt err 3 20000
  # the failure records travel as marker lines too: the failing rank is named with its last line
  PATH=$T/bin:$PATH TMPDIR=$T/tmp run "$A" --no-preload -n 2 --launcher mpirun -- \
    bash -c 'if [ {rank} = 1 ]; then echo "last words of {rank}"; exit 3; fi; sleep 30'
  status_is 3
  contains "rank 1 failed first: exit code 3"
  contains "    | last words of 1"
}

# A C program that prints a line and is then killed before it could flush a full stdio buffer.
build_killer() {
  need_cmd cc
  cat >killer.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("printed before SIGKILL\n"); kill(getpid(), SIGKILL); return 0; }
EOF
  cc -o killer killer.c || skip "cannot build a C program here"
}

@test "ranks' stdout is line-buffered by default: a line printed before SIGKILL is kept" {
  build_killer
  run "$A" --no-preload -n 1 -- ./killer
  status_is 137
  contains "[rank 0] printed before SIGKILL"
  # two ranks: the one that failed first printed its line before it died (the other may be
  # stopped by the teardown before it prints)
  run "$A" --no-preload -n 2 --launcher local -- ./killer
  r=$(sed -n 's/^accelerate-run: rank \([0-9]*\) failed first: signal SIGKILL.*/\1/p' <<<"$output")
  [ -n "$r" ] || { echo "no rank failed by SIGKILL"; show; false; }
  contains "[rank $r] printed before SIGKILL"
}

@test "--no-line-buffered keeps the program's own buffering (the line is lost: control)" {
  build_killer
  run "$A" --no-preload --no-line-buffered -n 1 -- ./killer
  status_is 137
  lacks "printed before SIGKILL"
}
