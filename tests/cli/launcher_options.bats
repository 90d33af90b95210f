#!/usr/bin/env bats
# launcher_options.bats — every accelerate-run option reaches the engine command as documented.
# Property: `accelerate-run --dry-run ...` prints the exact engine command (mpirun, srun, or the
# launcher's own per-rank commands), shell-quoted so that a shell reads back the same words; each
# option maps to the documented engine flag or ACCELSHIM_* variable; bad values exit 2 with a
# message and start nothing. No rank runs here (fast; no build products needed except where named).

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers

setup() {
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID ACCELSHIM_LIB CUDA_VISIBLE_DEVICES
}
teardown() { cd / && rm -rf "$T"; }

dry() { run "$A" --dry-run "$@"; }

@test "--help names every option and subcommand" {
  run "$A" --help
  status_is 0
  for o in --num-processes --gpu-ids --cpu --policy --mixed-precision --hostfile --num-machines \
           --machine-rank --main-process-ip --main-process-port --launcher --ranks-filter --log-dir \
           --job-id --tee --env --debug --timeout --dry-run --backend --mca --no-preload config env test; do
    contains "$o"
  done
}

@test "the launcher and its helpers are shellcheck-clean (every severity, sources followed)" {
  need_cmd shellcheck
  cd "$TOP" || return 1
  run shellcheck -x scripts/accelerate-run scripts/accelerate-run.d/rank-wrapper \
      scripts/accelerate-run.d/commands.bash
  show
  status_is 0
}

@test "-n / --num-processes / --num_processes=N / -nN give mpirun -n N" {
  for form in "-n 4" "--num-processes 4" "--num_processes=4" "-n4" "--num-processes=4"; do
    # shellcheck disable=SC2086
    dry --no-preload $form -- prog
    status_is 0
    contains "mpirun -n 4 "
  done
}

@test "default -n: visible GPUs from CUDA_VISIBLE_DEVICES; none -> 1 rank on the launcher itself" {
  CUDA_VISIBLE_DEVICES=0,1,2 dry --no-preload -- prog
  status_is 0
  contains "mpirun -n 3 "
  CUDA_VISIBLE_DEVICES= dry --no-preload -- prog
  status_is 0
  lacks mpirun
  contains "--rank 0 --local-rank 0 --world-size 1"
}

@test "--gpu-ids narrows each rank's CUDA_VISIBLE_DEVICES (or, with --visible-devices all, sets ACCELSHIM_DEVICES) and the default rank count" {
  CUDA_VISIBLE_DEVICES= dry --no-preload --gpu-ids 1,3 -- prog
  status_is 0
  contains "mpirun -n 2 "
  contains "--cuda-devices 1,3"
  lacks "ACCELSHIM_DEVICES"
  CUDA_VISIBLE_DEVICES= dry --no-preload --visible-devices all --gpu-ids 1,3 -- prog
  status_is 0
  contains "--env ACCELSHIM_DEVICES=1,3"
  lacks "--cuda-devices"
  dry --no-preload --gpu-ids 'a b' -- prog
  status_is 2
}

@test "--cpu: one rank by default, hostcuda on the program's library path, host kernel libraries" {
  dry --no-preload --cpu -- prog
  status_is 0
  contains "--ld-path $BUILD/tests/hostcuda"
  lacks mpirun
  dry --no-preload --cpu -n 2 -- prog
  contains "mpirun -n 2 "
  if [ -f "$BUILD/tests/trainers/libmlp_kernels_host.so" ]; then
    contains "--kernel-libs $BUILD/tests/trainers/libmlp_kernels_host.so"
  fi
}

@test "the shim is found next to the launcher; ACCELSHIM_LIB overrides; --no-preload drops it" {
  dry -n 2 -- prog
  status_is 0
  contains "--preload $BUILD/libaccelshim.so"
  touch "$T/other.so"
  ACCELSHIM_LIB=$T/other.so dry -n 2 -- prog
  contains "--preload $T/other.so"
  dry --no-preload -n 2 -- prog
  lacks "--preload"
}

@test "--policy FILE is checked and passed as an absolute ACCELSHIM_POLICY; ./accelshim.yaml is the default" {
  need_policy_tool
  printf 'version: 1\n' >p.yaml
  dry --no-preload -n 2 --policy p.yaml -- prog
  status_is 0
  contains "--env ACCELSHIM_POLICY=$T/p.yaml"
  dry --no-preload -n 2 -- prog
  lacks ACCELSHIM_POLICY
  cp p.yaml accelshim.yaml
  dry --no-preload -n 2 -- prog
  contains "--env ACCELSHIM_POLICY=$T/accelshim.yaml"
  dry --no-preload -n 2 --policy missing.yaml -- prog
  status_is 2
  contains "missing.yaml"
}

@test "--mixed-precision fp16|bf16 exports ACCELSHIM_WIRE_OVERRIDE and ACCELSHIM_MATMUL; no exports nothing" {
  dry --no-preload -n 2 --mixed-precision bf16 -- prog
  contains "--env ACCELSHIM_WIRE_OVERRIDE=bf16"
  contains "--env ACCELSHIM_MATMUL=bf16"
  dry --no-preload -n 2 --mixed_precision=fp16 -- prog
  contains "--env ACCELSHIM_WIRE_OVERRIDE=f16"
  contains "--env ACCELSHIM_MATMUL=f16"
  dry --no-preload -n 2 --mixed-precision no -- prog
  lacks WIRE_OVERRIDE
  dry --no-preload -n 2 --mixed-precision fp8 -- prog
  status_is 2
}

@test "--hostfile: mpirun --hostfile ABS; --oversubscribe only when ranks exceed its slots" {
  printf '# two hosts\nhosta slots=2\nhostb slots=2 # comment\n' >hf
  dry --no-preload --hostfile hf -n 4 -- prog
  status_is 0
  contains "--hostfile $T/hf"
  lacks oversubscribe
  dry --no-preload --hostfile hf -n 5 -- prog
  contains "--oversubscribe"
  dry --no-preload --hostfile nothere -n 2 -- prog
  status_is 2
}

@test "one node: --oversubscribe when ranks exceed the cores; --bind-to none always" {
  n=$(nproc)
  dry --no-preload -n $((n * 4)) -- prog
  contains "--oversubscribe"
  contains "--bind-to none"
  dry --no-preload -n 2 -- prog
  contains "--bind-to none"
}

@test "as root: --allow-run-as-root and OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1" {
  [ "$(id -u)" -eq 0 ] || skip "not root"
  dry --no-preload -n 2 -- prog
  contains "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun"
  contains "--allow-run-as-root"
}

@test "in a container: --mca btl_vader_single_copy_mechanism none (CMA is not permitted there)" {
  [ -f /.dockerenv ] || [ -f /run/.containerenv ] || skip "not in a detectable container"
  dry --no-preload -n 2 -- prog
  contains "--mca btl_vader_single_copy_mechanism none"
}

@test "--mca KEY VALUE is passed to mpirun; ACCELSHIM_* variables are exported with -x" {
  ACCELSHIM_LOG=info dry --no-preload -n 2 --mca btl_tcp_if_include lo -- prog
  contains "--mca btl_tcp_if_include lo"
  contains "-x ACCELSHIM_LOG"
  contains "-x PATH"
}

@test "--launcher auto inside a Slurm job: srun --ntasks=N --kill-on-bad-exit=1" {
  SLURM_JOB_ID=42 dry --no-preload -n 4 -- prog
  status_is 0
  contains "srun --ntasks=4 --kill-on-bad-exit=1 "
  SLURM_JOB_ID=42 SLURM_NTASKS=6 dry --no-preload -- prog
  contains "srun --ntasks=6 "
  SLURM_JOB_ID=42 dry --no-preload -n 4 --launcher mpirun -- prog
  contains "mpirun -n 4"
  dry --no-preload -n 8 --launcher srun --num-machines 2 -- prog
  contains "srun --ntasks=8 --kill-on-bad-exit=1 --nodes=2 "
  printf 'n1 slots=4\nn2 slots=4\n' >hf
  dry --no-preload -n 8 --launcher srun --hostfile hf -- prog
  contains "--nodelist=n1,n2"
}

@test "--num-machines M --machine-rank R --main-process-ip IP: this machine's ranks, rendezvous in env" {
  dry --no-preload -n 4 --num-machines 2 --machine-rank 1 --main-process-ip 10.1.2.3 --main-process-port 7000 -- prog
  status_is 0
  lacks mpirun
  contains "--rank 2 --local-rank 0 --world-size 4"
  contains "--rank 3 --local-rank 1 --world-size 4"
  lacks "--rank 0 "
  contains "--env ACCELSHIM_MAIN_PROCESS_IP=10.1.2.3 --env ACCELSHIM_MAIN_PROCESS_PORT=7000"
  contains "--env ACCELSHIM_RANK=3"
  dry --no-preload -n 4 --num-machines 2 --machine-rank 1 -- prog
  status_is 2
  dry --no-preload -n 4 --num-machines 2 --machine-rank 2 --main-process-ip 10.1.2.3 -- prog
  status_is 2
  dry --no-preload -n 3 --num-machines 2 --machine-rank 0 --main-process-ip 10.1.2.3 -- prog
  status_is 2
}

@test "the own engine with the shim: ranks meet through NCCL (per-machine form at the main address, else 127.0.0.1); --backend mpi is refused" {
  # the ranks are separate MPI singletons: with the shim they meet through NCCL_COMM_ID
  dry -n 4 --num-machines 2 --machine-rank 1 --main-process-ip 10.1.2.3 --main-process-port 7000 --job-id j7 -- prog
  status_is 0
  contains "--env ACCELSHIM_RENDEZVOUS=nccl --env NCCL_COMM_ID=10.1.2.3:7000"
  dry -n 4 --num-machines 2 --machine-rank 0 --main-process-ip 10.1.2.3 --job-id j7 -- prog
  contains "NCCL_COMM_ID=10.1.2.3:29500"   # no port given: the same default on every machine
  dry --launcher local -n 2 -- prog
  status_is 0
  [[ $output =~ NCCL_COMM_ID=127\.0\.0\.1:[0-9]+ ]] || { echo "no local rendezvous"; show; false; }
  dry --no-preload -n 4 --num-machines 2 --machine-rank 1 --main-process-ip 10.1.2.3 -- prog
  lacks NCCL_COMM_ID
  dry --launcher local -n 1 -- prog
  lacks NCCL_COMM_ID
  for form in "-n 4 --num-machines 2 --machine-rank 0 --main-process-ip 127.0.0.1 --job-id j7" "--launcher local -n 2"; do
    # shellcheck disable=SC2086  # word splitting wanted
    run "$A" $form --backend mpi -- bash -c 'echo RANK-RAN'
    status_is 2
    lacks RANK-RAN
    contains "--backend mpi needs one MPI world"
  done
  # controls: one rank with the shim, and several with --no-preload, run
  run "$A" --launcher local -n 1 -- bash -c 'echo RANK-RAN'
  status_is 0
  contains RANK-RAN
  run "$A" --no-preload --launcher local -n 2 -- bash -c 'echo RANK-RAN'
  status_is 0
  contains "[rank 1] RANK-RAN"
}

@test "--env KEY=VALUE (repeatable); --debug; --timeout; --backend" {
  dry --no-preload -n 2 --env A=1 --env 'B=x y' --debug --timeout 30 --backend mpi -- prog
  status_is 0
  contains "--env A=1 --env 'B=x y'"
  contains "--env ACCELSHIM_LOG=debug --env ACCELSHIM_CHECK_COLLECTIVES=1"
  contains "--env ACCELSHIM_TIMEOUT_S=30"
  contains "--env ACCELSHIM_BACKEND=mpi"
  dry --no-preload -n 2 --env NOEQUALS -- prog
  status_is 2
  dry --no-preload -n 2 --timeout soon -- prog
  status_is 2
}

@test "--ranks-filter, --log-dir, --tee reach the rank wrapper" {
  dry --no-preload -n 4 --ranks-filter 0,2-3 -- prog
  contains "--show 0,2-3"
  dry --no-preload -n 4 --log-dir logs -- prog
  contains "--log-dir $T/logs/attempt-0 --quiet"
  dry --no-preload -n 4 --log-dir logs --tee -- prog
  contains "--log-dir $T/logs/attempt-0 "
  lacks "--quiet"
  dry --no-preload -n 4 --tee -- prog          # as torchrun: accepted without --log-dir
  status_is 0
  contains "--tee without --log-dir: output goes to the console only"
  dry --no-preload -n 4 --ranks-filter 'x' -- prog
  status_is 2
}

@test "the printed command reads back as the same words (spaces, quotes, globs, \$(...))" {
  args=('a b' "it's" '"dq"' '*' '$(touch pwned)' '{rank}' '' 'x;y' $'tab\there')
  dry --no-preload -n 2 -- prog "${args[@]}"
  status_is 0
  eval "words=($output)"
  n=${#words[@]}
  got=("${words[@]:n-${#args[@]}}")
  for i in "${!args[@]}"; do
    [ "${got[i]}" = "${args[i]}" ] || { echo "word $i: expected [${args[i]}] got [${got[i]}]"; show; false; }
  done
  [ ! -e pwned ]
}

@test "unknown options, missing program and bad values exit 2 without running anything" {
  run "$A" --no-preload --bogus -- true
  status_is 2
  contains "unknown option"
  run "$A" --no-preload -n 2
  status_is 2
  contains "no program"
  run "$A" --no-preload -n 0 -- true
  status_is 2
  run "$A" --no-preload --launcher pbs -- true
  status_is 2
}

@test "--job-id ID (or ACCELSHIM_JOB_ID, torchrun's --rdzv-id) reaches every rank; else a random one; the per-machine form needs one" {
  dry --launcher local -n 2 --job-id run-7 -- prog
  status_is 0
  contains "--env ACCELSHIM_JOB_ID=run-7"
  dry --launcher local -n 2 --rdzv-id run-8 -- prog
  contains "--env ACCELSHIM_JOB_ID=run-8"
  ACCELSHIM_JOB_ID=from-env dry -n 2 -- prog
  contains "ACCELSHIM_JOB_ID=from-env"
  # no id given: a random one (16 hex digits), a new one for every job
  dry --launcher local -n 2 -- prog
  [[ $output =~ ACCELSHIM_JOB_ID=([0-9a-f]{16}) ]] || { echo "no random job id"; show; false; }
  first=${BASH_REMATCH[1]}
  dry --launcher local -n 2 -- prog
  [[ $output =~ ACCELSHIM_JOB_ID=([0-9a-f]{16}) ]] && [ "${BASH_REMATCH[1]}" != "$first" ] \
    || { echo "the same random id twice: $first"; show; false; }
  dry --launcher local -n 2 --job-id 'a b' -- prog
  status_is 2
  contains "--job-id: 'a b' is not 1-64 characters"
  ACCELSHIM_JOB_ID='x;y' dry -n 2 -- prog
  status_is 2
  contains "job id 'x;y'"
  # the per-machine form with the shim: the id must come from the user (the same on every machine)
  env -u ACCELSHIM_JOB_ID "$A" --dry-run -n 4 --num-machines 2 --machine-rank 0 --main-process-ip 10.1.2.3 -- prog >out 2>&1 && false
  grep -q -- "the per-machine form needs a job id" out || { cat out; false; }
  dry -n 4 --num-machines 2 --machine-rank 0 --main-process-ip 10.1.2.3 --job-id j1 -- prog
  status_is 0
  contains "--env ACCELSHIM_JOB_ID=j1"
}
