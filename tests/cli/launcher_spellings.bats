#!/usr/bin/env bats
# launcher_spellings.bats — accelerate-run for people who type `accelerate launch` and torchrun.
# Properties: --config_file reads the YAML `accelerate config` writes (num_processes,
# mixed_precision, ... applied; unknown keys named once; nonsense such as distributed_type:
# DEEPSPEED refused with the reason, nothing run) and the command line overrides it; Accelerate's
# default config ($HF_HOME/accelerate/default_config.yaml) and accelerate-run's saved defaults
# (`accelerate-run config --num_processes ...`) are read beneath it, in that order; `launch` is a
# subcommand; -np N; torchrun's --nproc_per_node/--nnodes, --tee/--redirects values, -r/-t,
# --log_dir, --local_ranks_filter; OMP_NUM_THREADS per rank (1 when ranks share the machine, the
# user's value, or --num_cpu_threads_per_process); options accepted but not acted on say so and
# -q silences that; --max_restarts N relaunches a failed job, keeping each try's root cause.

# shellcheck disable=SC2016  # literal $ in single quotes is on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID CUDA_VISIBLE_DEVICES OMP_NUM_THREADS
  export HF_HOME=$T/hf XDG_CONFIG_HOME=$T/xdg
  need_cmd python3
  python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml not installed (scripts/install-deps.sh)"
  # what `accelerate config` writes for one machine with 2 GPUs and bf16
  cat >acc.yaml <<'EOF'
compute_environment: LOCAL_MACHINE
debug: false
distributed_type: MULTI_GPU
downcast_bf16: 'no'
enable_cpu_affinity: false
gpu_ids: all
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 2
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
EOF
}
teardown() { cd / && rm -rf "$T"; }

@test "--config_file: Accelerate's YAML applies, unknown keys named once, the command line overrides" {
  run "$A" --dry-run --no-preload --config_file acc.yaml -- prog
  status_is 0
  contains "mpirun -n 2 "
  contains "ACCELSHIM_WIRE_OVERRIDE=bf16"
  [ "$(grep -c 'ignored: debug, downcast_bf16, enable_cpu_affinity, main_training_function' <<<"$output")" -eq 1 ] \
    || { echo "unknown keys not named exactly once"; show; false; }
  run "$A" --dry-run --no-preload --config-file=acc.yaml -n 3 --mixed_precision no -- prog
  status_is 0
  contains "mpirun -n 3 "
  lacks "ACCELSHIM_WIRE_OVERRIDE"
}

@test "--config_file: keys that make no sense here are refused with the reason; nothing runs" {
  sed 's/^distributed_type: .*/distributed_type: DEEPSPEED/' acc.yaml >ds.yaml
  run "$A" --no-preload --config_file ds.yaml -- touch started
  status_is 2
  contains "ds.yaml: distributed_type: DEEPSPEED:"
  contains "data parallel only"
  [ ! -e started ]
  sed 's/^mixed_precision: .*/mixed_precision: fp8/' acc.yaml >fp8.yaml
  run "$A" --no-preload --config_file fp8.yaml -- touch started
  status_is 2
  contains "fp8.yaml: mixed_precision: fp8:"
  printf 'num_processes: [1\n' >bad.yaml
  run "$A" --no-preload --config_file bad.yaml -- touch started
  status_is 2
  contains "bad.yaml:"
  contains "not valid YAML"
  sed 's/^num_processes: .*/num_processes: two/' acc.yaml >two.yaml
  run "$A" --no-preload --config_file two.yaml -- touch started
  status_is 2
  contains "two.yaml: num_processes: 'two' is not a positive integer"
  [ ! -e started ]
}

@test "Accelerate's default config and accelerate-run's saved defaults are read beneath the command line" {
  run "$A" --dry-run --no-preload -- prog
  contains "--world-size 1"                      # control: nothing configured -> 1 rank
  run "$A" config --num_processes 4 --launcher mpirun
  status_is 0
  contains "$T/xdg/accelshim/accelerate-run.yaml"
  run "$A" --dry-run --no-preload -- prog
  contains "mpirun -n 4 "
  # one line names the saved defaults and what they set (issue: they changed a job silently)
  contains "note: using saved defaults $T/xdg/accelshim/accelerate-run.yaml: num_processes=4, launcher=mpirun"
  mkdir -p hf/accelerate && cp acc.yaml hf/accelerate/default_config.yaml
  run "$A" --dry-run --no-preload -- prog
  contains "using Accelerate's config $T/hf/accelerate/default_config.yaml"
  contains "mpirun -n 2 "                        # Accelerate's config above the saved defaults
  contains "note: using saved defaults $T/xdg/accelshim/accelerate-run.yaml: launcher=mpirun"
  run "$A" --dry-run --no-preload -n 5 --launcher mpirun -- prog
  contains "mpirun -n 5 "                        # the command line above both
  lacks "using saved defaults"                   # nothing of them was used
  run "$A" config --show
  contains "num_processes: '4'"
  # errors name the flag as it was typed
  run "$A" config --mixed_precision fp8
  status_is 2
  contains "config: --mixed_precision: 'fp8'"
  run "$A" config --num_processes two
  status_is 2
  contains "config: --num_processes: 'two' is not a positive integer"
  run "$A" config --num-processes=0
  status_is 2
  contains "config: --num-processes: '0' is not a positive integer"
}

@test "launch subcommand, -np, torchrun's --nproc_per_node/--nnodes" {
  run "$A" launch --no-preload -np 2 -- bash -c 'echo hi {rank}/{world_size}'
  status_is 0
  contains "[rank 1] hi 1/2"
  run "$A" --dry-run --no-preload --nproc_per_node 3 --nnodes 1 -- prog
  contains "mpirun -n 3 "
  run "$A" --dry-run --no-preload --nproc_per_node 3 -n 2 -- prog
  status_is 2
  contains "--nproc-per-node"
}

@test "OMP_NUM_THREADS per rank: 1 when ranks share the machine, the user's, or --num_cpu_threads_per_process" {
  prog=(bash -c 'echo "omp=${OMP_NUM_THREADS-unset}"')
  run "$A" --no-preload -n 2 -- "${prog[@]}"
  contains "[rank 1] omp=1"
  run "$A" --no-preload -n 1 -- "${prog[@]}"
  contains "[rank 0] omp=unset"
  OMP_NUM_THREADS=3 run "$A" --no-preload -n 2 -- "${prog[@]}"
  contains "[rank 1] omp=3"
  run "$A" --no-preload -n 2 --num_cpu_threads_per_process 4 -- "${prog[@]}"
  contains "[rank 0] omp=4"
}

@test "torchrun's --log_dir/--tee/--redirects values, -r/-t, --local_ranks_filter" {
  run "$A" --no-preload --log_dir logs --tee 3 -n 2 -- bash -c 'echo out {rank}'
  status_is 0
  contains "[rank 1] out 1"                      # --tee 3 took its value: the program ran
  [ "$(cat logs/attempt-0/rank-1.log)" = "out 1" ]
  run "$A" --no-preload --log_dir logs2 -r 3 -n 2 -- bash -c 'echo out {rank}'
  status_is 0
  lacks "[rank"                                  # redirected: files only
  [ "$(cat logs2/attempt-0/rank-0.log)" = "out 0" ]
  run "$A" --no-preload --log_dir logs3 -t 1 -n 2 -- bash -c 'echo out {rank}'
  contains "--tee 1: stdout and stderr go to the log together"
  contains "[rank 0] out 0"
  run "$A" --no-preload --redirects 3 -n 2 -- true
  status_is 2
  contains "--redirects sends output to files: it needs --log-dir"
  run "$A" --no-preload --local_ranks_filter 1 -n 3 -- bash -c 'echo out {rank}'
  contains "[rank 1] out 1"
  lacks "[rank 0]"
  lacks "[rank 2]"
}

@test "accepted but not acted on: says so; -q / --quiet silences the notes" {
  run "$A" --no-preload --rdzv_backend c10d --same_network --standalone -n 2 -- true
  status_is 0
  contains "--rdzv-backend c10d: accepted, not used"
  contains "--same-network: accepted, not used"
  run "$A" --no-preload -q --rdzv_backend c10d -n 2 -- true
  status_is 0
  lacks "note:"
  run "$A" --no-preload --quiet --config_file acc.yaml -- true
  lacks "note:"
}

@test "--max_restarts N: a failed job starts again from the start; each try's root cause is kept" {
  # fails on the first two tries (rank 1, exit 3), succeeds on the third
  prog=(bash -c 'n=$(cat tries 2>/dev/null || echo 0); if [ {rank} = 1 ]; then echo $((n + 1)) >tries; fi
                 if [ "$n" -lt 2 ] && [ {rank} = 1 ]; then echo "failing try $((n + 1))"; exit 3; fi; sleep 0.2; echo ok')
  run "$A" --no-preload --launcher local --max_restarts 2 -n 2 -- "${prog[@]}"
  status_is 0
  contains "try 1 of 3 failed (exit status 3); restarting every rank from the start"
  contains "try 1: rank 1 failed first: exit code 3 (host"
  contains "last line: failing try 1"
  contains "try 2: rank 1 failed first: exit code 3"
  contains "last line: failing try 2"
  contains "try 3: succeeded"
  # control: one restart is not enough; the job fails with the last try's status
  rm -f tries
  run "$A" --no-preload --launcher local --max_restarts 1 -n 2 -- "${prog[@]}"
  status_is 3
  contains "try 2: rank 1 failed first: exit code 3"
  lacks "succeeded"
}
