# options.bash — accelerate-run's command line: the O_* variables, parse_launch_args, and the
# configuration files beneath it (command line > --config_file or Accelerate's default config >
# accelerate-run's saved defaults). Spellings of `accelerate launch`, torchrun and mpirun are
# accepted (--num_processes, --nproc_per_node, -np, --tee 3, ...). Parsing only checks each
# value's form; contradictions between options are refused later, in plan (plan.bash), before any
# rank starts. Callers: scripts/accelerate-run (launch_main). Not executable on its own.
# shellcheck shell=bash

# Options.
O_N='' O_GPU_IDS='' O_CPU=0 O_POLICY='' O_MP=no O_BACKEND='' O_HOSTFILE='' O_MACHINES=''
O_MACHINE_RANK='' O_MAIN_IP='' O_MAIN_PORT='' O_JOB_ID='' O_LAUNCHER=auto O_FILTER=all O_LOG_DIR='' O_TEE=0
O_DEBUG=0 O_LINEBUF=1 O_VISIBLE=per-rank O_TIMEOUT='' O_DRY=0 O_PRELOAD=1 O_RECORD='' O_NAN_CHECK=0 O_SYNC_OPT=0 O_LIST_KERNELS=0
O_ENVS=() O_MCA=() O_PROG=()
O_TRACE='' O_TRACE_LAUNCHES=0 P_TRACE_DIR=''
O_REDIRECTED=0 O_CONFIG='' O_QUIET=0 O_THREADS='' O_RESTARTS=0 O_LOCAL_FILTER=all O_NPROC_PER_NODE=''
declare -A O_SET=()      # options given on the command line (a configuration file does not override them)
OPT_WHERE=''             # prefix of error messages: '' (command line) or "FILE: "
ASR_NOTES=()             # "accepted, not acted on" notes, printed once before the launch

note() { ASR_NOTES+=("$*"); }

# The saved defaults that `accelerate-run config` writes, and Accelerate's default config file.
saved_defaults_file() { printf '%s\n' "${XDG_CONFIG_HOME:-$HOME/.config}/accelshim/accelerate-run.yaml"; }
accelerate_default_config() { printf '%s\n' "${HF_HOME:-$HOME/.cache/huggingface}/accelerate/default_config.yaml"; }

# torchrun's --tee/--redirects value: 0 none, 1 stdout, 2 stderr, 3 both, or per local rank
# "0:1,1:3". Sets STD_VAL to 0 (none) or 1 (some); notes what cannot be followed exactly.
std_streams_value() {
  local opt=$1 v=$2
  [[ $v =~ ^[0-3]$|^[0-9]+:[0-3](,[0-9]+:[0-3])*$ ]] || die "${OPT_WHERE}$opt: '$v' is not 0-3 or a list like 0:1,1:3 (torchrun's forms)"
  STD_VAL=1
  case $v in
    0) STD_VAL=0 ;;
    3) ;;
    1|2) note "$opt $v: stdout and stderr go to the log together (taken as 3)" ;;
    *) note "$opt $v: applies to every rank and both streams (taken as 3)" ;;
  esac
}

# set_opt NAME VALUE: one option, checked; NAME in its canonical --dash-form.
set_opt() {
  local name=$1 val=$2 w=$OPT_WHERE
  case $name in
    -n|--num-processes) pos_int "$val" || die "${w}-n: '$val' is not a positive integer"; O_N=$val ;;
    --nproc-per-node) pos_int "$val" || die "${w}--nproc-per-node: '$val' is not a positive integer"; O_NPROC_PER_NODE=$val ;;
    --gpu-ids) [[ $val =~ ^(all|[0-9]+(,[0-9]+)*)$ ]] || die "${w}--gpu-ids: '$val' is not a list like 0,1,3"; O_GPU_IDS=$val ;;
    --cpu) O_CPU=1 ;;
    --policy) O_POLICY=$val ;;
    --mixed-precision)
      case $val in no|fp16|bf16) O_MP=$val ;; *) die "${w}--mixed-precision: '$val' is not one of no, fp16, bf16" ;; esac ;;
    --backend) case $val in auto|nccl|mpi) O_BACKEND=$val ;; *) die "${w}--backend: '$val' is not one of auto, nccl, mpi" ;; esac ;;
    --hostfile) O_HOSTFILE=$val ;;
    --num-machines) pos_int "$val" || die "${w}--num-machines: '$val' is not a positive integer"; O_MACHINES=$val ;;
    --machine-rank) is_uint "$val" || die "${w}--machine-rank: '$val' is not a non-negative integer"; O_MACHINE_RANK=$val ;;
    --main-process-ip) O_MAIN_IP=$val ;;
    --main-process-port) { is_uint "$val" && [ "$((10#$val))" -le 65535 ]; } || die "${w}--main-process-port: '$val' is not a port (0-65535; 0 picks a free one)"; O_MAIN_PORT=$((10#$val)) ;;
    --job-id) [[ $val =~ ^[A-Za-z0-9._:-]{1,64}$ ]] || die "${w}--job-id: '$val' is not 1-64 characters of A-Z a-z 0-9 . _ : -"; O_JOB_ID=$val ;;
    --launcher) case $val in auto|mpirun|srun|local) O_LAUNCHER=$val ;; *) die "${w}--launcher: '$val' is not one of auto, mpirun, srun, local" ;; esac ;;
    --ranks-filter) [[ $val =~ ^(all|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$ ]] || die "${w}--ranks-filter: '$val' is not a list like 0,2-3"; O_FILTER=$val ;;
    --local-ranks-filter) [[ $val =~ ^(all|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$ ]] || die "${w}--local-ranks-filter: '$val' is not a list like 0,2-3"; O_LOCAL_FILTER=$val ;;
    --log-dir) [ -n "$val" ] || die "${w}--log-dir needs a directory"; O_LOG_DIR=$val ;;
    --tee) O_TEE=$val ;;
    --redirects) O_REDIRECTED=$val; if [ "$val" = 1 ]; then O_TEE=0; else O_TEE=1; fi ;;   # redirected: not on the console
    --env) [[ $val =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "${w}--env: '$val' is not KEY=VALUE"; O_ENVS+=("$val") ;;
    --debug) O_DEBUG=1 ;;
    --record) [ -n "$val" ] || die "${w}--record: needs a directory"; O_RECORD=$val ;;
    --nan-check) O_NAN_CHECK=1 ;;
    --list-kernels) O_LIST_KERNELS=1 ;;
    --sync-optional) O_SYNC_OPT=1 ;;
    --timeout) is_uint "$val" || die "${w}--timeout: '$val' is not a number of seconds"; O_TIMEOUT=$val ;;
    --trace) [ -n "$val" ] || die "${w}--trace needs a directory"; O_TRACE=$val ;;
    --trace-launches) O_TRACE_LAUNCHES=1 ;;
    --dry-run) O_DRY=1 ;;
    --no-preload) O_PRELOAD=0 ;;
    --line-buffered) O_LINEBUF=1 ;;
    --no-line-buffered) O_LINEBUF=0 ;;
    --visible-devices) case $val in per-rank|all) O_VISIBLE=$val ;; *) die "${w}--visible-devices: '$val' is not per-rank or all" ;; esac ;;
    --quiet) O_QUIET=1 ;;
    --num-cpu-threads-per-process) pos_int "$val" || die "${w}--num-cpu-threads-per-process: '$val' is not a positive integer"; O_THREADS=$val ;;
    --max-restarts) is_uint "$val" || die "${w}--max-restarts: '$val' is not a non-negative integer"; O_RESTARTS=$((10#$val)) ;;
    --config-file) O_CONFIG=$val ;;
    *) return 1 ;;
  esac
}

# Options taking a value (from --opt=VALUE or the next word).
takes_value() {
  case $1 in
    -n|--num-processes|--nproc-per-node|--gpu-ids|--policy|--mixed-precision|--backend|--hostfile|\
    --num-machines|--machine-rank|--main-process-ip|--main-process-port|--job-id|--launcher|--ranks-filter|\
    --local-ranks-filter|--log-dir|--env|--trace|--timeout|--record|--visible-devices|\
    --num-cpu-threads-per-process|--max-restarts|--config-file|--redirects|--rdzv-backend|\
    --rdzv-endpoint|--rdzv-id|--rdzv-conf|--monitor-interval|--max-nodes|--dynamo-backend) return 0 ;;
  esac
  return 1
}

parse_launch_args() {
  local a name val='' has_val
  while [ $# -gt 0 ]; do
    a=$1
    case $a in
      --) shift; break ;;
      --*=*) name=${a%%=*}; val=${a#*=}; has_val=1 ;;
      --*) name=$a; val=''; has_val=0 ;;
      -np) name=-n; val=''; has_val=0 ;;                     # mpirun's spelling
      -n|-q|-r|-t) name=$a; val=''; has_val=0 ;;
      -n*) name=-n; val=${a#-n}; has_val=1 ;;
      -h) usage; exit 0 ;;
      -*) die "unknown option '$a' (see --help)" ;;
      *) break ;;
    esac
    name=${name//_/-}
    case $name in                                  # other tools' names for the same options
      -n) name=--num-processes ;;
      -q) name=--quiet ;;
      -r) name=--redirects ;;
      -t) name=--tee ;;
      --config) name=--config-file ;;
      --nnodes) name=--num-machines ;;
      --node-rank) name=--machine-rank ;;
      --master-addr) name=--main-process-ip ;;
      --master-port) name=--main-process-port ;;
      --rdzv-id) name=--job-id ;;                 # torchrun's name for the job's identity
      --no-python|--standalone|--same-network|--multi-gpu|--dynamo-backend) ;;
    esac
    if [ "$name" = --tee ]; then                   # bare flag, or torchrun's value (0-3, 0:1,...)
      if [ "$has_val" = 0 ] && [ $# -ge 2 ] && [[ $2 =~ ^[0-3]$|^[0-9]+:[0-3](,[0-9]+:[0-3])*$ ]]; then
        val=$2; has_val=1; shift
      fi
      if [ "$has_val" = 1 ]; then std_streams_value --tee "$val"; val=$STD_VAL; else val=1; fi
      set_opt --tee "$val"; O_SET[--tee]=1; shift; continue
    fi
    if takes_value "$name"; then
      if [ "$has_val" = 0 ]; then
        [ $# -ge 2 ] || die "option $a needs a value"
        val=$2; shift
      fi
    elif [ "$name" = --mca ]; then
      [ "$has_val" = 0 ] || die "--mca takes two words: --mca KEY VALUE"
      [ $# -ge 3 ] || die "--mca needs KEY VALUE"
      O_MCA+=("$2" "$3"); shift 3; continue
    else
      [ "$has_val" = 0 ] || die "option $name takes no value"
    fi
    case $name in
      --redirects) std_streams_value --redirects "$val"; set_opt --redirects "$STD_VAL"; O_SET[--tee]=1 ;;
      --multi-gpu) ;;     # accelerate launch's flag; several ranks are what accelerate-run does anyway
      --no-python) ;;     # torchrun: run PROGRAM directly, which is all accelerate-run does
      --standalone) note "--standalone: accepted; one machine is what a run without --num-machines is" ;;
      --same-network) note "--same-network: accepted, not used (the per-machine form needs --main-process-ip reachable from every machine either way)" ;;
      --rdzv-backend) [ "$val" = static ] || note "--rdzv-backend $val: accepted, not used (ranks meet through MPI or NCCL's bootstrap, not torch's rendezvous)" ;;
      --rdzv-endpoint|--rdzv-conf|--monitor-interval|--max-nodes)
        note "$name $val: accepted, not used (torch elastic's rendezvous and monitor are not part of accelerate-run)" ;;
      --dynamo-backend) note "--dynamo-backend $val: accepted, not used (a setting of PyTorch programs)" ;;
      --help) usage; exit 0 ;;
      --version) asr_version; exit 0 ;;
      *) set_opt "$name" "$val" || die "unknown option '$a' (see --help)" ;;
    esac
    O_SET[$name]=1
    shift
  done
  [ $# -ge 1 ] || die "no program given (usage: accelerate-run [options] [--] PROGRAM [ARGS...])"
  O_PROG=("$@")
  load_configs
  # torchrun's --nproc-per-node N with --nnodes M: N*M ranks in all (accelerate-run's -n is the total)
  if [ -n "$O_NPROC_PER_NODE" ]; then
    [ -z "${O_SET[--num-processes]:-}" ] || die "-n (ranks in total) and --nproc-per-node (ranks per machine) contradict: give one"
    O_N=$((O_NPROC_PER_NODE * ${O_MACHINES:-1}))
  fi
}

# set_opt_as SHOWN NAME VALUE: set_opt, with an error naming the option as the user wrote it
# (SHOWN: `--num_processes`, a file's key) instead of its canonical name.
set_opt_as() {
  local shown=$1 name=$2 val=$3 err canon
  if ! err=$( (set_opt "$name" "$val") 2>&1 ); then
    canon=$name; [ "$name" = --num-processes ] && canon=-n
    err=${err#"$ASR_NAME: "}
    err=${err/"$OPT_WHERE$canon:"/"$OPT_WHERE$shown:"}
    err=${err/"$OPT_WHERE$canon "/"$OPT_WHERE$shown "}
    die "$err"
  fi
  set_opt "$name" "$val"
}

# apply_config FILE: every key the file sets that the command line did not. CFG_USED: the
# "key=value" pairs it did set.
apply_config() {
  local file=$1 out key val
  CFG_USED=()
  out=$(python3 "$L_HELPERS/config-read" "$file") || exit 2
  OPT_WHERE="$file: "
  while IFS=$'\t' read -r key val; do
    case $key in
      '') ;;
      IGNORED) note "$file: keys not used by accelerate-run, ignored: $val" ;;
      NOTUSED) note "$file: ${val%%:*}: accepted, not used:${val#*:}" ;;
      cpu) [ -n "${O_SET[--cpu]:-}" ] || { O_CPU=1; CFG_USED+=("cpu=true"); } ;;
      *) [ -n "${O_SET[--$key]:-}" ] || [ -n "${O_CFG_SET[--$key]:-}" ] \
           || { set_opt_as "${key//-/_}" "--$key" "$val"; O_CFG_SET[--$key]=1; CFG_USED+=("${key//-/_}=$val"); } ;;
    esac
  done <<<"$out"
  OPT_WHERE=''
}

# The configuration beneath the command line: --config_file FILE (else Accelerate's default
# config, when it exists), then accelerate-run's saved defaults; the first to set a key wins.
declare -A O_CFG_SET=()
load_configs() {
  local acc saved
  if [ -n "$O_CONFIG" ]; then
    [ -r "$O_CONFIG" ] || die "--config-file: '$O_CONFIG' cannot be read"
    apply_config "$O_CONFIG"
  else
    acc=$(accelerate_default_config)
    if [ -f "$acc" ]; then note "using Accelerate's config $acc (--config_file FILE to choose another)"; apply_config "$acc"; fi
  fi
  saved=$(saved_defaults_file)
  if [ -f "$saved" ]; then
    apply_config "$saved"
    # what the saved defaults changed, in one line (as for Accelerate's default config above)
    [ ${#CFG_USED[@]} -gt 0 ] && note "using saved defaults $saved: $(IFS=,; printf '%s' "${CFG_USED[*]}" | sed 's/,/, /g') (accelerate-run config --show; --clear to remove)"
  fi
  return 0
}
