#!/usr/bin/env bats
# launcher_install.bats — `make install PREFIX=$(mktemp -d)` gives a working launcher.
# Properties: the documented layout is installed; the installed launcher finds its library, rank
# wrapper, accelshim-policy and hostcuda from its own path with no ACCELSHIM_* variable set (also
# when called through a symlink elsewhere); it runs a rank with the shim preloaded (--cpu) and its
# `config` output passes the installed accelshim-policy.

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers

setup_file() {
  [ -f "$SHIM" ] && [ -x "$POLICY_TOOL" ] || return 0
  PREFIX_DIR=$(mktemp -d)
  export PREFIX_DIR
  # A fresh make, not part of an outer `make test` (its jobserver is not ours).
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" install PREFIX="$PREFIX_DIR" >"$PREFIX_DIR.log" 2>&1
  echo $? >"$PREFIX_DIR.rc"
}
teardown_file() {
  [ -n "${PREFIX_DIR:-}" ] && rm -rf "$PREFIX_DIR" "$PREFIX_DIR.log" "$PREFIX_DIR.rc"
  true
}

setup() {
  need_shim
  need_policy_tool
  unset ACCELSHIM_LIB ACCELSHIM_POLICY SLURM_JOB_ID
  T=$(mktemp -d)
  cd "$T" || exit 1
  I=$PREFIX_DIR/bin/accelerate-run
}
teardown() { cd / && rm -rf "$T"; }

@test "make install succeeds and installs the documented layout" {
  rc=$(cat "$PREFIX_DIR.rc")
  [ "$rc" -eq 0 ] || { cat "$PREFIX_DIR.log"; false; }
  for f in bin/accelerate-run bin/accelshim-policy lib/accelshim/libaccelshim.so \
           lib/accelshim/accelerate-run.d/rank-wrapper lib/accelshim/accelerate-run.d/commands.bash \
           lib/accelshim/accelerate-run.d/options.bash lib/accelshim/accelerate-run.d/plan.bash \
           lib/accelshim/accelerate-run.d/run.bash lib/accelshim/accelerate-run.d/test-program.bash \
           lib/accelshim/accelerate-run.d/output-collector lib/accelshim/accelerate-run.d/engine-filter \
           lib/accelshim/accelerate-run.d/config-read lib/accelshim/accelerate-run.d/job-watch \
           share/accelshim/VERSION; do
    [ -e "$PREFIX_DIR/$f" ] || { echo "missing: $f"; find "$PREFIX_DIR"; false; }
  done
  [ -x "$PREFIX_DIR/bin/accelerate-run" ]
  ls "$PREFIX_DIR"/share/accelshim/examples/*.yaml >/dev/null
}

@test "the installed launcher finds its library without environment variables" {
  run env -u ACCELSHIM_LIB "$I" --dry-run -n 2 -- prog
  status_is 0
  contains "--preload $PREFIX_DIR/lib/accelshim/libaccelshim.so"
  contains "$PREFIX_DIR/lib/accelshim/accelerate-run.d/rank-wrapper"
  lacks "$TOP"
  ln -s "$I" "$T/ar-link"
  run "$T/ar-link" --dry-run -n 2 -- prog
  contains "--preload $PREFIX_DIR/lib/accelshim/libaccelshim.so"
}

@test "the installed launcher runs a rank with the shim preloaded" {
  run "$I" -n 1 -- bash -c 'echo "preload=$LD_PRELOAD"'
  status_is 0
  contains "[rank 0] preload=$PREFIX_DIR/lib/accelshim/libaccelshim.so"
}

@test "installed --cpu runs the installed trainer on the installed hostcuda" {
  [ -x "$PREFIX_DIR/lib/accelshim/tests/mlp" ] || skip "trainer not installed (not built)"
  [ -f "$PREFIX_DIR/lib/accelshim/hostcuda/libcuda.so.1" ] || skip "hostcuda not installed (not built)"
  run "$I" --cpu -n 1 -- "$PREFIX_DIR/lib/accelshim/tests/mlp" --steps 3 --batch 4
  status_is 0
  contains "[rank 0] checksum "
}

@test "installed config output passes the installed accelshim-policy" {
  run "$I" config p.yaml
  status_is 0
  run "$PREFIX_DIR/bin/accelshim-policy" check p.yaml
  status_is 0
  run "$I" env
  status_is 0
  contains "layout:             installed ($PREFIX_DIR)"
}

@test "after make install the help's example paths exist, the docs are installed, and --version matches" {
  for f in lib/accelshim/accelerate-run.d/test-evidence share/doc/accelshim/README.md \
           share/doc/accelshim/docs/design.md share/doc/accelshim/accelerate-run.md; do
    [ -e "$PREFIX_DIR/$f" ] || { echo "missing: $f"; find "$PREFIX_DIR/share"; false; }
  done
  run "$I" --help
  status_is 0
  ex=$(sed -n '/^Examples/,/^Checked/p' <<<"$output" | grep -oE "$PREFIX_DIR/[^ ;)]+")
  [ -n "$ex" ] || { echo "no installed path in the help's examples"; show; false; }
  for p in $ex; do [ -e "$p" ] || { echo "help names $p, which the install does not have"; show; false; }; done
  lacks " examples/llmc-fp32.yaml"               # no repository-relative paths
  lacks " build/tests/trainers/mlp"
  [ "$(cat "$PREFIX_DIR/share/accelshim/VERSION")" = "$("$A" --version)" ]
  [ "$("$I" --version)" = "$("$A" --version)" ]
}
