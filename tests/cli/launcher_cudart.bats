#!/usr/bin/env bats
# launcher_cudart.bats — `accelerate-run --cpu` and the CUDA runtime.
# Properties: with --cpu the ranks' library path holds hostcudart (the CUDA runtime on hostcuda)
# and hostcublas (and hostcurand), from the build tree and after `make install`, so a program built with
# `nvcc -cudart shared` runs with nothing else set, and prints what the Driver-API trainer prints;
# a program linked with NVIDIA's static cudart (nvcc's default), stripped or not, is refused
# before any rank starts: one line saying to rebuild with -cudart shared, exit 2. Controls: the
# Driver-API trainer and the -cudart shared build are not refused.

# shellcheck disable=SC2016,SC2154  # literal $ in single quotes; status/output set by bats
load helpers

RT_STATIC=$BUILD/tests/trainers/rt_mlp
RT_SHARED=$BUILD/tests/gpu/rt_mlp_hostcheck
CUDART=$BUILD/tests/hostcudart/libcudart.so.13

setup_file() {
  [ -f "$SHIM" ] && [ -f "$CUDART" ] || return 0
  PREFIX_DIR=$(mktemp -d)
  export PREFIX_DIR
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" install PREFIX="$PREFIX_DIR" >"$PREFIX_DIR.log" 2>&1
  echo $? >"$PREFIX_DIR.rc"
}
teardown_file() {
  [ -n "${PREFIX_DIR:-}" ] && rm -rf "$PREFIX_DIR" "$PREFIX_DIR.log" "$PREFIX_DIR.rc"
  true
}

setup() {
  need_shim
  need_trainer
  need_file "$CUDART" hostcudart
  unset ACCELSHIM_LIB ACCELSHIM_POLICY SLURM_JOB_ID HOSTCUDA_KERNEL_LIBS
  T=$(mktemp -d)
}
teardown() { rm -rf "$T"; }

@test "--cpu puts hostcudart and hostcublas on the ranks' library path" {
  run "$A" --cpu -n 1 -- sh -c 'echo "LDP=$LD_LIBRARY_PATH"'
  status_is 0
  contains "$BUILD/tests/hostcudart"
  [ ! -f "$BUILD/tests/hostcublas/libcublas.so.13" ] || contains "$BUILD/tests/hostcublas"
}

@test "--cpu runs a -cudart shared program: its output is the Driver-API trainer's" {
  need_file "$RT_SHARED" "rt_mlp built with -cudart shared"
  run "$A" --cpu -n 1 -- "$RT_SHARED" --steps 5
  status_is 0
  rt=$(grep '^\[rank 0\] checksum' <<<"$output")
  run "$A" --cpu -n 1 -- "$TRAINER" --steps 5
  status_is 0
  mlp=$(grep '^\[rank 0\] checksum' <<<"$output")
  [ -n "$rt" ] && [ "$rt" = "$mlp" ] || { echo "rt_mlp: '$rt' / mlp: '$mlp'"; false; }
}

@test "--cpu refuses a static-cudart program before any rank starts: one line, exit 2" {
  need_file "$RT_STATIC" "rt_mlp (static cudart)"
  run "$A" --cpu -n 2 -- "$RT_STATIC" --steps 2
  status_is 2
  contains "NVIDIA's static CUDA runtime"
  contains "nvcc -cudart shared"
  contains "on GPUs it runs as it is"
  lacks "[rank"
  [ "${#lines[@]}" -eq 1 ] || { echo "want one line"; show; false; }
}

@test "--cpu refuses a stripped static-cudart program too" {
  need_file "$RT_STATIC" "rt_mlp (static cudart)"
  need_cmd strip
  strip -o "$T/rt_mlp_stripped" "$RT_STATIC"
  run "$A" --cpu -n 1 -- "$T/rt_mlp_stripped"
  status_is 2
  contains "rebuild it with 'nvcc -cudart shared'"
}

@test "control: the Driver-API trainer and a script are not taken for static cudart" {
  run "$A" --cpu -n 1 -- "$TRAINER" --steps 1
  status_is 0
  lacks "static CUDA runtime"
  printf '#!/bin/sh\necho script ran\n' >"$T/s.sh" && chmod +x "$T/s.sh"
  run "$A" --cpu -n 1 -- "$T/s.sh"
  status_is 0
  contains "script ran"
}

@test "after make install: --cpu finds the installed hostcudart and runs a -cudart shared program" {
  need_file "$RT_SHARED" "rt_mlp built with -cudart shared"
  rc=$(cat "$PREFIX_DIR.rc")
  [ "$rc" -eq 0 ] || { cat "$PREFIX_DIR.log"; false; }
  [ -f "$PREFIX_DIR/lib/accelshim/hostcudart/libcudart.so.13" ]
  run "$PREFIX_DIR/bin/accelerate-run" --cpu -n 1 -- sh -c 'echo "LDP=$LD_LIBRARY_PATH"'
  status_is 0
  contains "$PREFIX_DIR/lib/accelshim/hostcudart"
  run "$PREFIX_DIR/bin/accelerate-run" --cpu -n 1 -- "$RT_SHARED" --steps 3
  status_is 0
  contains "[rank 0] checksum"
}

@test "after make install: --cpu puts the installed hostcurand on the path; a -lcurand program runs on it" {
  P=$BUILD/tests/hostcurand/cr_equiv
  need_file "$P" "hostcurand's cr_equiv (linked -lcurand)"
  rc=$(cat "$PREFIX_DIR.rc")
  [ "$rc" -eq 0 ] || { cat "$PREFIX_DIR.log"; false; }
  [ -f "$PREFIX_DIR/lib/accelshim/hostcurand/libcurand.so.10" ]
  run "$PREFIX_DIR/bin/accelerate-run" --cpu -n 1 -- sh -c 'echo "LDP=$LD_LIBRARY_PATH"'
  status_is 0
  contains "$PREFIX_DIR/lib/accelshim/hostcurand"
  run "$PREFIX_DIR/bin/accelerate-run" --cpu -n 1 -- "$P" status
  status_is 0
  contains "status: 0 failure(s)"
}

@test "--cpu -n 2 with a policy: the -cudart shared trainer trains data-parallel like the Driver-API one" {
  need_file "$RT_SHARED" "rt_mlp built with -cudart shared"
  args=(--steps 8 --batch 4 --shard-rank '{rank}' --shard-count '{world_size}')
  run "$A" --cpu -n 2 --policy "$TOP/examples/mlp.yaml" -- "$RT_SHARED" "${args[@]}"
  status_is 0
  rt=$(grep 'checksum' <<<"$output" | sort)
  run "$A" --cpu -n 2 --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" "${args[@]}"
  status_is 0
  mlp=$(grep 'checksum' <<<"$output" | sort)
  [ "$(wc -l <<<"$rt")" -eq 2 ] && [ "$rt" = "$mlp" ] || { echo "rt_mlp: $rt / mlp: $mlp"; false; }
  # control: one rank alone on its shard ends elsewhere
  run "$A" --cpu -n 1 -- "$RT_SHARED" --steps 8 --batch 4 --shard-rank 0 --shard-count 2
  one=$(grep 'checksum' <<<"$output")
  [ "${one#\[rank 0\] }" != "$(head -1 <<<"$rt" | sed 's/^\[rank [0-9]\] //')" ] || { echo "control: same checksum without the all-reduce"; false; }
}

@test "accelerate-run test --cpu refuses a static-cudart program before its first run" {
  need_file "$RT_STATIC" "rt_mlp (static cudart)"
  run "$A" test --cpu -n 2 --batch 4 --batch-arg '--batch {batch}' --policy "$TOP/examples/mlp.yaml" -- "$RT_STATIC" --steps 2
  status_is 2
  contains "rebuild it with 'nvcc -cudart shared'"
  lacks "1 rank x batch"
}
