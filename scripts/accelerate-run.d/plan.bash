# plan.bash — from the parsed options (O_*) to what will run (P_*): the engine, the world size, the
# wrapper's arguments and environment for every rank, and the engine's command line. Everything
# that can be refused is refused here, before any rank starts (exit 2, one line on stderr); plan
# changes nothing on disk except the directories the user named. Sourced by scripts/accelerate-run;
# callers: launch_main (and --dry-run, which prints the result). Not executable on its own.
# shellcheck shell=bash

# Plan: engine, world, the wrapper command, the environment for ranks.
P_ORIGIN='' P_POLICY_RULES='' P_POLICY_OPTIONAL=0 P_ENGINE='' P_N=0 P_LOCAL_N=0 P_RANK0=0 P_POLICY='' P_RUN_DIR='' P_PORT=''
P_WRAP=()      # wrapper arguments shared by every rank (before --rank ...)
P_ENV=()       # KEY=VALUE set in the engine's environment (printed by --dry-run)
P_CMD=()       # engine command (mpirun/srun)

# A TCP port free on this host now (python3), else one from 29500..30499.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((29500 + RANDOM % 1000))
}

# Is TCP port $1 taken by a listener on this machine? (python3; SO_REUSEADDR as NCCL's bootstrap
# sets it, so only a real listener counts, not connections in TIME_WAIT.) Unknown -> no.
port_in_use() {
  python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("", int(sys.argv[1])))
except OSError: sys.exit(0)
sys.exit(1)' "$1" 2>/dev/null
}

# Options that contradict each other: one line naming both, before anything else is decided.
plan_refuse_contradictions() {
  local machines=${O_MACHINES:-1}
  # --tee without --log-dir: accepted, as torchrun does; the console has all output anyway
  [ "$O_TEE" = 1 ] && [ -n "${O_SET[--tee]:-}" ] && [ "$O_REDIRECTED" = 0 ] && [ -z "$O_LOG_DIR" ] \
    && note "--tee without --log-dir: output goes to the console only (no log files)"
  [ "$O_REDIRECTED" = 1 ] && [ -z "$O_LOG_DIR" ] && die "--redirects sends output to files: it needs --log-dir DIR"
  [ "$O_LOCAL_FILTER" = all ] || [ "$O_FILTER" = all ] \
    || die "--ranks-filter $O_FILTER and --local-ranks-filter $O_LOCAL_FILTER both choose the ranks shown: use one"
  if [ -n "$O_MACHINE_RANK$O_MAIN_IP" ]; then
    { [ -n "$O_MACHINES" ] && [ -n "$O_MACHINE_RANK" ] && [ -n "$O_MAIN_IP" ]; } \
      || die "the per-machine form needs --num-machines M --machine-rank R --main-process-ip IP"
    [ -z "$O_HOSTFILE" ] || die "--hostfile and --machine-rank are two different ways to span machines: use one"
    [ "$O_MACHINE_RANK" -lt "$machines" ] || die "--machine-rank $O_MACHINE_RANK is not below --num-machines $machines"
  fi
  if [ "$machines" -gt 1 ] && [ -z "$O_MACHINE_RANK" ] && [ -z "$O_HOSTFILE" ] && [ "$O_LAUNCHER" != srun ] \
     && [ -z "${SLURM_JOB_ID:-}" ]; then
    die "--num-machines $machines without --machine-rank (run once per machine) or --hostfile (mpirun spreads the ranks) would run every rank here"
  fi
  if [ "$O_CPU" = 1 ] && [ -n "$O_GPU_IDS" ] && [ "$O_GPU_IDS" != all ]; then
    die "--cpu runs on hostcuda (host memory, no GPU) but --gpu-ids $O_GPU_IDS picks GPUs: use one of them"
  fi
  [ -z "$O_HOSTFILE" ] || [ -r "$O_HOSTFILE" ] || die "hostfile '$O_HOSTFILE' cannot be read"
}

# --ranks-filter naming ranks the job does not have would hide output silently.
plan_check_filter() {
  local item hi
  [ "$O_FILTER" = all ] && return 0
  for item in ${O_FILTER//,/ }; do
    hi=${item#*-}
    [ "$hi" -lt "$P_N" ] || die "--ranks-filter $O_FILTER names rank $hi, but -n $P_N has ranks 0-$((P_N - 1))"
  done
}

# The program: found and executable here, resolved on PATH as the shell would (the wrappers start
# it by the same name). Ranks on other hosts (--hostfile) may see other files: a warning there.
plan_check_program() {
  local p=${O_PROG[0]} why=''
  [ "$O_DRY" = 1 ] && return 0
  if [[ $p == */* ]]; then
    if [ ! -e "$p" ]; then why="program '$p' not found"
    elif [ -d "$p" ]; then why="program '$p' is a directory"
    elif [ ! -x "$p" ]; then why="program '$p' is not executable (chmod +x '$p')"
    fi
  elif ! type -P -- "$p" >/dev/null; then
    why="program '$p' not found on PATH"
  fi
  if [ -z "$why" ]; then [ "$O_CPU" = 1 ] && plan_check_static_cudart "$p"; return 0; fi
  if [ -n "$O_HOSTFILE" ]; then warn "warning: $why on this host; the ranks may still find it on theirs"; return 0; fi
  die "$why; no rank was started"
}

# --cpu: a program linked with NVIDIA's static cudart (nvcc's default) cannot run on hostcuda
# (that cudart needs the driver's private tables). Its marks: no NEEDED libcudart.so.*, and the
# static runtime's own strings (its shared-memory name "/cudart.shm.", its internal
# "__cudaRegisterUnifiedTable"), which survive strip; a -cudart shared or Driver API program has neither.
plan_check_static_cudart() {
  local f
  f=$(type -P -- "$1" 2>/dev/null || echo "$1")
  [ -f "$f" ] && [ -r "$f" ] && [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || return 0
  command -v readelf >/dev/null || return 0
  readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*\[libcudart\.so' && return 0
  grep -q -a -F -e '/cudart.shm.' -e '__cudaRegisterUnifiedTable' "$f" 2>/dev/null || return 0
  die "--cpu: '$1' is linked with NVIDIA's static CUDA runtime, which cannot run on hostcuda: rebuild it with 'nvcc -cudart shared' to dry-run on a CPU (on GPUs it runs as it is); no rank was started"
}

# The rendezvous port of the own engine's ranks: 0 picks a free one (printed); a port taken by a
# listener on this machine is refused here rather than by NCCL inside rank 0. Only the machine
# of rank 0 listens, so only there is it checked.
plan_port() {
  local port=$O_MAIN_PORT
  if [ "$port" = 0 ]; then
    port=$(free_port)
    warn "--main-process-port 0: using free port $port"
  fi
  if [ -n "$port" ] && [ "$O_DRY" = 0 ] && { [ -z "$O_MACHINE_RANK" ] || [ "$O_MACHINE_RANK" = 0 ]; } && port_in_use "$port"; then
    die "--main-process-port $port is already in use on this machine (pick another, or 0 for a free one)"
  fi
  P_PORT=$port
}

# The job's identity (ACCELSHIM_JOB_ID on every rank): ranks that meet through NCCL's bootstrap
# swap it after the rendezvous and refuse a rank of another job (two jobs on one port, a
# stranger). --job-id / ACCELSHIM_JOB_ID, else a random one; the per-machine form with the shim
# needs the user's (every machine must give the same; a random one per machine would refuse all).
plan_job_id() {
  P_JOB_ID=${O_JOB_ID:-${ACCELSHIM_JOB_ID:-}}
  if [ -z "$P_JOB_ID" ]; then
    [ -n "$O_MACHINE_RANK" ] && [ -n "$P_NCCL_ID" ] && die "the per-machine form needs a job id, the same on every machine (--job-id ID, or ACCELSHIM_JOB_ID): the ranks check it when they meet, so that another job on port ${P_PORT:-29500} is refused; e.g. --job-id \$(date +%s)-\$RANDOM, shared with the other machines"
    P_JOB_ID=$(od -An -N8 -tx8 /dev/urandom 2>/dev/null | tr -d ' \n')
    [ -n "$P_JOB_ID" ] || die "cannot read /dev/urandom for a job id (give one: --job-id ID)"
  fi
  [[ $P_JOB_ID =~ ^[A-Za-z0-9._:-]{1,64}$ ]] || die "job id '$P_JOB_ID' (--job-id, ACCELSHIM_JOB_ID): expected 1-64 characters of A-Z a-z 0-9 . _ : -"
}

plan() {
  local gpus machines ids_n
  machines=${O_MACHINES:-1}
  plan_refuse_contradictions

  # Number of ranks.
  if [ -n "$O_N" ]; then P_N=$O_N
  elif [ "$O_CPU" = 1 ]; then P_N=$machines
  else
    gpus=$(gpu_count)
    if [ -n "$O_GPU_IDS" ] && [ "$O_GPU_IDS" != all ]; then ids_n=$(tr ',' '\n' <<<"$O_GPU_IDS" | wc -l); gpus=$ids_n; fi
    [ "$gpus" -ge 1 ] 2>/dev/null || gpus=1
    P_N=$((gpus * machines))
  fi

  plan_check_filter
  plan_check_program
  if [ "$O_LIST_KERNELS" = 1 ]; then
    # one rank, the shim's debug listing into a log of our own, read back after the run
    [ "$P_N" -eq 1 ] || die "--list-kernels runs one rank (it lists what the program launches): drop -n $P_N"
    [ "$O_PRELOAD" = 1 ] || die "--list-kernels needs the shim: drop --no-preload"
    [ -z "$O_LOG_DIR" ] || die "--list-kernels keeps its own log: drop --log-dir"
    O_LOG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/accelerate-run-kernels.XXXXXX") || die "cannot create a temporary folder"
    O_TEE=0 O_SYNC_OPT=1
    O_ENVS+=(ACCELSHIM_LOG=debug)
  fi

  # Engine.
  P_NCCL_ID=''
  P_ENGINE=$O_LAUNCHER
  if [ "$P_ENGINE" = auto ]; then
    if [ -n "$O_MACHINE_RANK" ]; then P_ENGINE=local
    elif [ -n "${SLURM_JOB_ID:-}" ] && { [ "$O_DRY" = 1 ] || command -v srun >/dev/null 2>&1; }; then P_ENGINE=srun
    elif [ "$P_N" -eq 1 ] && [ -z "$O_HOSTFILE" ]; then P_ENGINE=local
    else P_ENGINE=mpirun
    fi
  fi
  # Inside a Slurm allocation without -n: the allocation's task count.
  if [ "$P_ENGINE" = srun ] && [ -z "$O_N" ] && pos_int "${SLURM_NTASKS:-}"; then P_N=$SLURM_NTASKS; fi
  if [ "$P_ENGINE" = local ]; then
    [ -z "$O_HOSTFILE" ] || die "--launcher local runs ranks on this machine only: drop --hostfile or use mpirun"
    # Ranks of the launcher's own engine are separate MPI singletons, not one MPI world: with the
    # shim they meet through NCCL's own bootstrap (NCCL_COMM_ID; nccl backend only), at the main
    # process's address in the per-machine form, else on this host (127.0.0.1, a free port).
    { [ -n "$O_MACHINE_RANK$O_MAIN_PORT" ] || { [ "$O_PRELOAD" = 1 ] && [ "$P_N" -gt 1 ]; }; } && plan_port
    if [ "$O_PRELOAD" = 1 ] && [ "$P_N" -gt 1 ]; then
      [ "$O_BACKEND" = mpi ] && die "--backend mpi needs one MPI world (mpirun, srun), and the launcher's own engine's ranks meet through NCCL: drop --backend mpi, or use --launcher mpirun / --hostfile"
      if [ -n "$O_MACHINE_RANK" ]; then P_NCCL_ID=$O_MAIN_IP:${P_PORT:-29500}   # the same on every machine
      else P_NCCL_ID=127.0.0.1:${P_PORT:-$(free_port)}; fi
    fi
    if [ -n "$O_MACHINE_RANK" ]; then
      [ $((P_N % machines)) -eq 0 ] || die "-n $P_N ranks do not divide evenly over $machines machines"
      P_LOCAL_N=$((P_N / machines)); P_RANK0=$((O_MACHINE_RANK * P_LOCAL_N))
    else
      P_LOCAL_N=$P_N; P_RANK0=0
    fi
  elif [ -n "$O_MACHINE_RANK" ]; then
    die "--machine-rank runs each machine's ranks with the launcher's own engine: use --hostfile with mpirun, or srun"
  elif [ -n "$O_MAIN_PORT" ]; then
    warn "note: --main-process-port is not used by the $P_ENGINE engine (its ranks meet through MPI); it applies to --launcher local and the per-machine form"
  fi
  if [ "$O_DRY" = 0 ]; then
    case $P_ENGINE in
      mpirun) command -v mpirun >/dev/null 2>&1 || die "mpirun not found: install Open MPI (openmpi-bin) or use --launcher srun" ;;
      srun) command -v srun >/dev/null 2>&1 || die "srun not found: not a Slurm machine (use --launcher mpirun)" ;;
    esac
  fi

  # Policy: validated before anything starts.
  P_POLICY=${O_POLICY:-${ACCELSHIM_POLICY:-}}
  P_ORIGIN=${O_POLICY:+--policy}; P_ORIGIN=${P_ORIGIN:-ACCELSHIM_POLICY}
  if [ -z "$P_POLICY" ] && [ -f ./accelshim.yaml ]; then
    # picked up, not asked for: say so (a starter policy with no rules synchronises nothing)
    P_POLICY=./accelshim.yaml P_ORIGIN=./accelshim.yaml
    warn "policy ./accelshim.yaml (found in the working directory; --policy to choose another)"
  fi
  [ "$P_POLICY" = auto ] && plan_policy_auto
  if [ -n "$P_POLICY" ]; then
    [ -r "$P_POLICY" ] || die "policy '$P_POLICY' cannot be read"
    P_POLICY=$(readlink -f "$P_POLICY")
    check_policy "$P_POLICY" || exit 2
  fi
  plan_refuse_unsynced

  # The wrapper's arguments, common to every rank.
  [ -x "$L_WRAPPER" ] || die "rank wrapper not found at $L_WRAPPER (broken install?)"
  P_WRAP=("$L_WRAPPER" --show "$O_FILTER")
  [ "$O_LOCAL_FILTER" = all ] || P_WRAP+=(--show-local "$O_LOCAL_FILTER")
  [ "$O_LINEBUF" = 1 ] && P_WRAP+=(--line-buffered)
  P_LOG_DIR='' P_LOG_IDX=''
  if [ -n "$O_LOG_DIR" ]; then
    mkdir -p "$O_LOG_DIR" 2>/dev/null || die "cannot create log directory '$O_LOG_DIR'"
    P_LOG_DIR=$(readlink -f "$O_LOG_DIR")
    # one folder per attempt, DIR/attempt-N/rank-R.log (as torchrun); an earlier run's logs in DIR
    # are moved aside into DIR/run-STAMP/, never overwritten
    local lf old=()
    for lf in "$P_LOG_DIR"/attempt-[0-9]* "$P_LOG_DIR"/rank-*.log; do [ -e "$lf" ] || [ -L "$lf" ] && old+=("$lf"); done
    if [ ${#old[@]} -gt 0 ] && [ "$O_DRY" = 0 ]; then
      lf=$(mktemp -d "$P_LOG_DIR/run-$(date +%Y%m%d-%H%M%S).XXXX") && mv -- "${old[@]}" "$lf/" \
        || die "--log-dir: cannot move the earlier run's logs aside in '$O_LOG_DIR'"
      warn "note: --log-dir: the earlier run's logs were moved to $lf"
    fi
    P_LOG_IDX=${#P_WRAP[@]}
    P_WRAP+=(--log-dir "$P_LOG_DIR/attempt-0")
    [ "$O_TEE" = 1 ] || P_WRAP+=(--quiet)
  fi
  if [ "$O_PRELOAD" = 1 ]; then
    if [ ! -f "$L_LIB" ]; then
      [ "$O_DRY" = 1 ] || die "shim library not found at $L_LIB (build it with 'make', or set ACCELSHIM_LIB)"
      warn "warning: shim library not found at $L_LIB"
    fi
    P_PRELOAD=$(readlink -f "$L_LIB" 2>/dev/null || echo "$L_LIB")
    # + libaccelshim-io.so next to it when built/installed (outputs.main_process_only)
    if [ -f "${L_LIB%/*}/libaccelshim-io.so" ]; then
      P_PRELOAD+=":$(readlink -f "${L_LIB%/*}/libaccelshim-io.so")"
    fi
    P_WRAP+=(--preload "$P_PRELOAD")
  fi
  if [ "$O_CPU" = 1 ]; then
    [ -f "$L_HOSTCUDA/libcuda.so.1" ] || [ "$O_DRY" = 1 ] \
      || die "--cpu: hostcuda not found at $L_HOSTCUDA/libcuda.so.1 (build it: make $L_HOSTCUDA/libcuda.so.1)"
    local ldp=$L_HOSTCUDA kl
    [ -f "$L_HOSTNCCL/libnccl.so.2" ] && ldp=$ldp:$L_HOSTNCCL
    # the CUDA runtime, cuBLAS and cuRAND on hostcuda, for programs built with -cudart shared
    [ -f "$L_HOSTCUDART/libcudart.so.13" ] && ldp=$ldp:$L_HOSTCUDART
    [ -f "$L_HOSTCUBLAS/libcublas.so.13" ] && ldp=$ldp:$L_HOSTCUBLAS
    [ -f "$L_HOSTCURAND/libcurand.so.10" ] && ldp=$ldp:$L_HOSTCURAND
    P_WRAP+=(--ld-path "$ldp")
    kl=$(kernel_libs)
    [ -n "$kl" ] && P_WRAP+=(--kernel-libs "$kl")
  fi
  [ -n "$P_POLICY" ] && P_WRAP+=(--env "ACCELSHIM_POLICY=$P_POLICY" --env "ACCELSHIM_POLICY_ORIGIN=$P_ORIGIN")
  [ "$O_SYNC_OPT" = 1 ] && P_WRAP+=(--env ACCELSHIM_SYNC=optional)
  [ "$O_DEBUG" = 1 ] && P_WRAP+=(--env ACCELSHIM_LOG=debug --env ACCELSHIM_CHECK_COLLECTIVES=1)
  [ -n "$O_TIMEOUT" ] && P_WRAP+=(--env "ACCELSHIM_TIMEOUT_S=$O_TIMEOUT")
  if [ -n "$O_TRACE" ]; then
    if [ "$O_DRY" = 0 ]; then
      mkdir -p "$O_TRACE" 2>/dev/null || die "cannot create trace directory '$O_TRACE'"
      rm -f "$O_TRACE"/trace-[0-9]*.json "$O_TRACE/trace.json"   # no stale ranks in the merge
    fi
    P_TRACE_DIR=$(readlink -f "$O_TRACE" 2>/dev/null || echo "$O_TRACE")
    P_WRAP+=(--env "ACCELSHIM_TRACE=$P_TRACE_DIR/trace-{rank}.json")
  fi
  [ "$O_TRACE_LAUNCHES" = 1 ] && P_WRAP+=(--env ACCELSHIM_TRACE_LAUNCHES=1)
  if [ -n "$O_RECORD" ]; then
    [ "$O_DRY" = 1 ] || mkdir -p "$O_RECORD" 2>/dev/null || die "--record: cannot create directory '$O_RECORD'"
    P_WRAP+=(--env "ACCELSHIM_RECORD=$(readlink -m "$O_RECORD")/")   # the shim writes DIR/rank-R.jsonl
  fi
  [ "$O_NAN_CHECK" = 1 ] && P_WRAP+=(--env ACCELSHIM_NAN_CHECK=1)
  [ -n "$O_BACKEND" ] && P_WRAP+=(--env "ACCELSHIM_BACKEND=$O_BACKEND")
  plan_devices
  case $O_MP in
    fp16) P_WRAP+=(--env ACCELSHIM_WIRE_OVERRIDE=f16 --env ACCELSHIM_MATMUL=f16) ;;
    bf16) P_WRAP+=(--env ACCELSHIM_WIRE_OVERRIDE=bf16 --env ACCELSHIM_MATMUL=bf16) ;;
  esac
  if [ -n "$O_MACHINE_RANK" ]; then
    P_WRAP+=(--env "ACCELSHIM_MAIN_PROCESS_IP=$O_MAIN_IP" --env "ACCELSHIM_MAIN_PROCESS_PORT=${P_PORT:-29500}"
             --env "ACCELSHIM_NUM_MACHINES=$machines" --env "ACCELSHIM_MACHINE_RANK=$O_MACHINE_RANK")
  fi
  # the own engine's ranks with the shim meet without MPI: NCCL's bootstrap, rank 0 listening there
  if [ -n "$P_NCCL_ID" ]; then P_WRAP+=(--env ACCELSHIM_RENDEZVOUS=nccl --env "NCCL_COMM_ID=$P_NCCL_ID"); fi
  plan_job_id
  P_WRAP+=(--env "ACCELSHIM_JOB_ID=$P_JOB_ID")
  # CPU threads per rank: --num-cpu-threads-per-process N, else the user's OMP_NUM_THREADS (passed
  # on, so ranks on other hosts get it too), else 1 when ranks share this machine (as torchrun).
  if [ -n "$O_THREADS" ]; then P_WRAP+=(--env "OMP_NUM_THREADS=$O_THREADS")
  elif [ -n "${OMP_NUM_THREADS:-}" ]; then P_WRAP+=(--env "OMP_NUM_THREADS=$OMP_NUM_THREADS")
  elif [ "$P_N" -gt 1 ]; then P_WRAP+=(--env OMP_NUM_THREADS=1)
  fi
  plan_torchrun_env
  if [ -n "$O_MACHINE_RANK" ]; then   # the per-machine form: say what this machine does and waits for
    local here="rank $P_RANK0 runs"
    [ "$P_LOCAL_N" -gt 1 ] && here="ranks $P_RANK0-$((P_RANK0 + P_LOCAL_N - 1)) run"
    if [ "$O_MACHINE_RANK" = 0 ]; then
      local others="the other machine's"; [ "$machines" -gt 2 ] && others="the other $((machines - 1)) machines'"
      note "machine 0 of $machines: $here here; waiting for $others ranks to meet at $O_MAIN_IP:${P_PORT:-29500} (start the same command with --machine-rank 1$([ "$machines" -gt 2 ] && echo "..$((machines - 1))") there; --timeout S bounds the wait)"
    else
      note "machine $O_MACHINE_RANK of $machines: $here here; meeting machine 0 at $O_MAIN_IP:${P_PORT:-29500}"
    fi
  fi
  local kv
  for kv in "${O_ENVS[@]}"; do P_WRAP+=(--env "$kv"); done

  build_engine_cmd
}

# torchrun's variables for the program (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE come from
# the wrapper, which knows its rank): MASTER_ADDR is the machine of rank 0 (--main-process-ip; the
# first host of --hostfile or of the Slurm allocation; else this host, 127.0.0.1), MASTER_PORT
# --main-process-port (the own engine's rendezvous port), else torchrun's 29500.
plan_torchrun_env() {
  local addr=${O_MAIN_IP:-} port=${P_PORT:-${O_MAIN_PORT:-}}
  if [ -z "$addr" ] && [ -n "$O_HOSTFILE" ] && [ "$P_ENGINE" = mpirun ]; then addr=$(hostfile_hosts "$O_HOSTFILE" | head -n 1); fi
  if [ -z "$addr" ] && [ "$P_ENGINE" = srun ] && [ -n "${SLURM_JOB_NODELIST:-}" ]; then
    addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1)
  fi
  [ "$port" = 0 ] && port=''
  P_WRAP+=(--master "${addr:-127.0.0.1}:${port:-29500}")
  [ "$P_ENGINE" = local ] && P_WRAP+=(--local-world-size "$P_LOCAL_N")
  return 0
}

# One GPU per rank. --visible-devices per-rank (default): each rank's CUDA_VISIBLE_DEVICES is
# narrowed to its own GPU by the wrapper (--gpu-ids' entry for its local rank, else its local rank
# modulo the visible GPUs, counted within an inherited CUDA_VISIBLE_DEVICES list), so the program
# sees one device, ordinal 0, for every call. A rank whose CUDA_VISIBLE_DEVICES already names one
# device (a scheduler bound it) is left alone, as is every rank when the GPU count is unknown;
# the shim's remap (ACCELSHIM_DEVICES, local rank) is then the fallback, as with --visible-devices all.
plan_devices() {
  local ids=$O_GPU_IDS n vis=() i
  [ "$ids" = all ] && ids=''
  if [ "$O_VISIBLE" = all ]; then
    [ -n "$ids" ] && P_WRAP+=(--env "ACCELSHIM_DEVICES=$ids")
    return 0
  fi
  [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && IFS=, read -ra vis <<<"$CUDA_VISIBLE_DEVICES"
  if [ -n "$ids" ]; then
    if [ ${#vis[@]} -gt 0 ]; then
      for i in ${ids//,/ }; do
        [ "$i" -lt ${#vis[@]} ] || die "--gpu-ids $ids counts within CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES, which has no entry $i"
      done
    fi
    P_WRAP+=(--cuda-devices "$ids")
  else
    n=$(gpu_count)
    [ "$n" -gt 0 ] 2>/dev/null && P_WRAP+=(--cuda-devices "auto:$n")
  fi
  return 0
}

# --policy auto: the policy `accelerate-run suggest` makes for this program, cached under
# ${XDG_CACHE_HOME:-~/.cache}/accelshim/policies/ by the sha256 of the program file and of its
# arguments (an option such as --clip moves the sync point); made now, by one rank running the
# program with the same arguments, when not cached. The policy used is printed.
plan_policy_auto() {
  local prog hash ahash dir f tmp cpu=()
  prog=$(command -v -- "${O_PROG[0]}") || die "--policy auto: '${O_PROG[0]}' is not a program"
  hash=$(sha256sum "$prog" 2>/dev/null | cut -c1-64)
  [ -n "$hash" ] || die "--policy auto: cannot read $prog to hash it"
  ahash=$(printf '%s\0' "${O_PROG[@]:1}" | sha256sum | cut -c1-16)
  dir=${XDG_CACHE_HOME:-$HOME/.cache}/accelshim/policies
  f=$dir/$hash-$ahash.yaml
  if [ -f "$f" ]; then
    warn "policy auto: $f (suggested earlier for $prog, sha256 ${hash:0:12}, these arguments)"
  else
    [ "$O_DRY" = 1 ] && die "--policy auto: no suggestion cached for $prog with these arguments, and --dry-run runs nothing (run once without --dry-run, or accelerate-run suggest)"
    mkdir -p "$dir" 2>/dev/null || die "--policy auto: cannot create $dir"
    [ "$O_CPU" = 1 ] && cpu=(--cpu)
    warn "policy auto: none cached for $prog (sha256 ${hash:0:12}) with these arguments: one rank runs it first (accelerate-run suggest)"
    tmp=$f.$$.tmp
    if ! "$ASR_SELF" suggest "${cpu[@]}" -o "$tmp" -- "${O_PROG[@]}" >&2; then
      rm -f "$tmp"
      die "--policy auto: no policy could be suggested (above): write one (docs/explain.md, README 'Writing a policy')"
    fi
    mv -f "$tmp" "$f" || die "--policy auto: cannot write $f"
  fi
  warn "policy auto: the policy used:"
  sed 's/^/    | /' "$f" >&2
  P_POLICY=$f P_ORIGIN="--policy auto"
}

# More than one rank with the shim and sync required: a job without a policy, or with one that
# has no rule (the starter policy `config --write-policy` writes), would train every rank apart
# and fail at exit (7); it is refused here instead, before any rank starts.
plan_refuse_unsynced() {
  local sync=${ACCELSHIM_SYNC:-} kv
  for kv in "${O_ENVS[@]}"; do
    [[ $kv == ACCELSHIM_SYNC=* ]] && sync=${kv#*=}
    [[ $kv == ACCELSHIM_POLICY=* ]] && return 0   # a policy per rank (--env, maybe templated): the shim checks it
  done
  { [ "$O_PRELOAD" = 1 ] && [ "$P_N" -gt 1 ] && [ "$O_SYNC_OPT" = 0 ] && [ "$sync" != optional ]; } || return 0
  [ "$P_POLICY_OPTIONAL" = 1 ] && [ "$sync" != required ] && return 0
  local say=die
  [ "$O_DRY" = 1 ] && say=warn   # --dry-run shows the plan; a real launch stops here
  if [ -z "$P_POLICY" ]; then
    $say "no policy for $P_N ranks: nothing would be synchronised (each rank would train apart); give --policy FILE (README: 'Writing a policy for your binary'), or --sync-optional if the ranks are meant to run apart; no rank was started"
  fi
  [ "$P_POLICY_RULES" = 0 ] \
    && $say "policy $P_POLICY (from $P_ORIGIN) has no gradient or parameter rule: $P_N ranks would train apart; add rules (README: 'Writing a policy for your binary'), or --sync-optional; no rank was started"
  return 0
}

# check_policy FILE: accelshim-policy check; sets P_POLICY_RULES (0: no rule at all, 1, or '' when
# not known) and P_POLICY_OPTIONAL (1: `sync: optional`) from its normalised form.
check_policy() {
  local out norm
  P_POLICY_RULES='' P_POLICY_OPTIONAL=0
  if [ ! -x "$L_POLICY_TOOL" ]; then
    if [ "$O_DRY" = 1 ]; then warn "warning: cannot check '$1': accelshim-policy not found at $L_POLICY_TOOL"; return 0; fi
    warn "cannot check policy '$1': accelshim-policy not found at $L_POLICY_TOOL (build it with 'make')"
    return 1
  fi
  if ! out=$("$L_POLICY_TOOL" check "$1" 2>&1 >/dev/null); then
    printf '%s\n' "$out" >&2
    warn "policy '$1' is invalid; no rank was started"
    return 1
  fi
  norm=$("$L_POLICY_TOOL" check "$1" 2>/dev/null) || return 0
  grep -qx 'sync: optional' <<<"$norm" && P_POLICY_OPTIONAL=1
  if grep -qx 'gradients: \[\]' <<<"$norm" && grep -qx 'parameters: \[\]' <<<"$norm"; then P_POLICY_RULES=0
  else P_POLICY_RULES=1; fi
  return 0
}

build_engine_cmd() {
  local slots why v
  P_TAGGED=0
  P_ENV=()
  P_CMD=()
  case $P_ENGINE in
    mpirun)
      P_CMD=(mpirun -n "$P_N")
      if [ "$(id -u)" -eq 0 ]; then
        P_ENV+=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
        P_CMD+=(--allow-run-as-root)
      fi
      if [ -n "$O_HOSTFILE" ]; then
        P_CMD+=(--hostfile "$(readlink -f "$O_HOSTFILE")")
        slots=$(hostfile_slots "$O_HOSTFILE")
      else
        slots=$(local_slots)
      fi
      if [ -n "$slots" ] && [ "$P_N" -gt "$slots" ]; then P_CMD+=(--oversubscribe); fi
      P_CMD+=(--bind-to none)
      # Output of ranks on other hosts comes through mpirun, cut anywhere: tagged pieces, which
      # engine-filter (perl) joins back into whole lines per rank and stream.
      if command -v perl >/dev/null 2>&1; then P_CMD+=(--tag-output); P_TAGGED=1; fi
      why=$(cma_blocker)
      [ -n "$why" ] && P_CMD+=(--mca btl_vader_single_copy_mechanism none)
      local i
      for ((i = 0; i < ${#O_MCA[@]}; i += 2)); do P_CMD+=(--mca "${O_MCA[i]}" "${O_MCA[i + 1]}"); done
      # Remote ranks only get what -x names: the search paths and our own variables.
      P_CMD+=(-x PATH)
      [ -n "${LD_LIBRARY_PATH:-}" ] && P_CMD+=(-x LD_LIBRARY_PATH)
      for v in $(compgen -e | grep -E '^(ACCELSHIM|HOSTCUDA|HOSTNCCL|NCCL)_' || true); do P_CMD+=(-x "$v"); done
      ;;
    srun)
      P_CMD=(srun --ntasks="$P_N" --kill-on-bad-exit=1)
      # The shim's MPI needs a process-management interface from srun: PMIx when this Slurm has
      # it and the cluster's choice (SLURM_MPI_TYPE) is not set (Open MPI 4.1 has no PMI-1/2).
      if [ "$O_PRELOAD" = 1 ] && [ -z "${SLURM_MPI_TYPE:-}" ] \
         && timeout 10 srun --mpi=list 2>&1 | grep -qw pmix; then
        P_CMD+=(--mpi=pmix)
      fi
      [ -n "$O_MACHINES" ] && P_CMD+=(--nodes="$O_MACHINES")
      if [ -n "$O_HOSTFILE" ]; then
        P_CMD+=(--nodelist="$(hostfile_hosts "$O_HOSTFILE" | sort -u | paste -sd, -)")
      fi
      ;;
  esac
}

