#!/usr/bin/env bats
# launcher_checks.bats — what accelerate-run refuses before any rank starts, and each rank's GPU.
# Properties: options that contradict each other (--num-machines 2 without --machine-rank,
# --ranks-filter naming a rank the job lacks, --cpu with --gpu-ids) and a program that is missing,
# not executable, a directory or not on PATH are refused with exit 2 and ONE line naming what is
# wrong, no engine output, and no rank started (a marker file stays absent); the controls (the
# same programs and options made consistent) run. A rendezvous port taken by a listener is refused
# naming the port; port 0 picks a free one and says which. Each rank's CUDA_VISIBLE_DEVICES names
# its own GPU (--gpu-ids entry, or local rank within the visible list), is left alone when it
# already names one device, and is untouched with --visible-devices all (ACCELSHIM_DEVICES then);
# the --cpu mode (hostcuda) still runs 2 ranks to identical parameters with it set.

# shellcheck disable=SC2016  # literal $ in single quotes is on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID CUDA_VISIBLE_DEVICES
}
teardown() {
  [ -z "${LISTENER:-}" ] || kill "$LISTENER" 2>/dev/null
  cd / && rm -rf "$T"
}

# refused_in_one_line: status 2, exactly one line, no engine or rank output, nothing started.
refused_in_one_line() {
  status_is 2
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ] || { echo "expected one line"; show; return 1; }
  lacks "[rank"
  lacks "[mpirun]"
  lacks "Open MPI"
  [ ! -e "$T/started" ] || { echo "a rank started"; show; return 1; }
}

@test "contradicting options are refused in one line naming both, before any rank starts" {
  run "$A" --no-preload --num_machines 2 -n 2 -- touch "$T/started"
  refused_in_one_line
  contains "--num-machines 2"
  contains "--machine-rank"
  run "$A" --no-preload --ranks-filter 5 -n 2 -- touch "$T/started"
  refused_in_one_line
  contains "--ranks-filter 5"
  contains "-n 2"
  run "$A" --no-preload --ranks-filter 0,1-4 -n 3 -- touch "$T/started"
  refused_in_one_line
  contains "rank 4"
  run "$A" --no-preload --cpu --gpu_ids 3,5 -- touch "$T/started"
  refused_in_one_line
  contains "--cpu"
  contains "--gpu-ids 3,5"
  # controls: the consistent forms run
  run "$A" --no-preload --ranks-filter 1 -n 2 -- bash -c 'echo hello {rank}'
  status_is 0
  contains "[rank 1] hello 1"
  lacks "[rank 0]"
  run "$A" --no-preload --num-machines 2 --machine-rank 1 --main-process-ip 127.0.0.1 -n 2 -- bash -c 'echo r{rank}'
  status_is 0
  contains "[rank 1] r1"
}

@test "a program that is missing, not executable, a directory or not on PATH is refused in one line" {
  printf '#!/bin/sh\necho hi\n' >notexec
  mkdir adir
  run "$A" --no-preload -n 2 -- ./nosuchtrainer
  refused_in_one_line
  contains "program './nosuchtrainer' not found"
  run "$A" --no-preload -n 2 -- ./notexec
  refused_in_one_line
  contains "program './notexec' is not executable"
  run "$A" --no-preload -n 2 -- ./adir
  refused_in_one_line
  contains "is a directory"
  run "$A" --no-preload -n 2 -- nosuchprogram-asr
  refused_in_one_line
  contains "program 'nosuchprogram-asr' not found on PATH"
  # controls: made executable, and a name found on PATH, both run
  chmod +x notexec
  run "$A" --no-preload -n 2 -- ./notexec
  status_is 0
  contains "[rank 1] hi"
  mkdir bin && cp notexec bin/asr-hello
  PATH=$T/bin:$PATH run "$A" --no-preload -n 2 -- asr-hello
  status_is 0
  contains "[rank 0] hi"
}

@test "rendezvous port: taken by a listener -> refused naming it; 0 -> a free one, printed" {
  need_cmd python3
  python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)' >port.txt &
  LISTENER=$!
  for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
  port=$(cat port.txt)
  run "$A" --no-preload --launcher local -n 2 --main-process-port "$port" -- touch "$T/started"
  refused_in_one_line
  contains "--main-process-port $port is already in use"
  run "$A" --no-preload --launcher local -n 2 --main-process-port 0 -- bash -c 'echo r{rank}'
  status_is 0
  contains "--main-process-port 0: using free port"
  contains "[rank 1] r1"
  # control: the listener gone, the same port is accepted
  kill "$LISTENER"; wait "$LISTENER" 2>/dev/null || true; LISTENER=''
  run "$A" --no-preload --launcher local -n 2 --main-process-port "$port" -- bash -c 'echo r{rank}'
  status_is 0
  contains "[rank 0] r0"
}

# cvd_of_ranks ARGS...: "rank=CVD" per rank, sorted.
cvd_of_ranks() {
  "$A" --no-preload "$@" -- bash -c 'echo "cvd={rank}=${CUDA_VISIBLE_DEVICES-unset}/${ACCELSHIM_DEVICES-unset}"' \
    | sed -n 's/^\[rank [0-9]*\] cvd=//p' | sort | paste -sd' ' -
}

@test "each rank's CUDA_VISIBLE_DEVICES is its own GPU (own engine and mpirun)" {
  [ "$(CUDA_VISIBLE_DEVICES=2,5 cvd_of_ranks --launcher local -n 3)" = "0=2/unset 1=5/unset 2=2/unset" ]
  [ "$(cvd_of_ranks --launcher local -n 2 --gpu-ids 3,5)" = "0=3/unset 1=5/unset" ]
  [ "$(CUDA_VISIBLE_DEVICES=4,6,7 cvd_of_ranks --launcher local -n 2 --gpu-ids 2,0)" = "0=7/unset 1=4/unset" ]
  # a scheduler already bound the rank to one device: left alone
  [ "$(CUDA_VISIBLE_DEVICES=4 cvd_of_ranks --launcher local -n 2)" = "0=4/unset 1=4/unset" ]
  # control: --visible-devices all leaves CUDA_VISIBLE_DEVICES alone, the shim's remap picks
  [ "$(cvd_of_ranks --launcher local -n 2 --visible-devices all --gpu-ids 3,5)" = "0=unset/3,5 1=unset/3,5" ]
  run "$A" --no-preload -n 2 --gpu-ids 0,9 -- true
  status_is 0
  CUDA_VISIBLE_DEVICES=1,2 run "$A" --no-preload -n 2 --gpu-ids 0,2 -- true
  status_is 2
  contains "no entry 2"
  if command -v mpirun >/dev/null 2>&1; then
    [ "$(CUDA_VISIBLE_DEVICES=2,5 cvd_of_ranks --launcher mpirun -n 2)" = "0=2/unset 1=5/unset" ]
  fi
}

@test "--cpu (hostcuda) still trains 2 equal ranks with CUDA_VISIBLE_DEVICES narrowed per rank" {
  need_trainer
  need_shim
  need_policy_tool
  CUDA_VISIBLE_DEVICES=0,1 run "$A" --dry-run --cpu -n 2 --policy "$TOP/examples/mlp.yaml" -- "$TRAINER"
  contains "--cuda-devices auto:2"
  CUDA_VISIBLE_DEVICES=0,1 run "$A" --cpu -n 2 --policy "$TOP/examples/mlp.yaml" -- "$TRAINER" --steps 5 \
      --shard-rank '{rank}' --shard-count '{world_size}'
  status_is 0
  c0=$(sed -n 's/^\[rank 0\] checksum //p' <<<"$output")
  c1=$(sed -n 's/^\[rank 1\] checksum //p' <<<"$output")
  [ -n "$c0" ] && [ "$c0" = "$c1" ] || { echo "checksums: rank 0 '$c0', rank 1 '$c1'"; show; false; }
}
