# options.bash — accelerate-run's command line: the O_* variables and parse_launch_args (sourced by
# the launcher after its helpers die/warn/is_uint/pos_int/usage). Parsing only checks each value's
# form; contradictions between options are refused later, in plan (plan.bash), before any rank
# starts. Callers: scripts/accelerate-run (launch_main). Not executable on its own.
# shellcheck shell=bash

# Options.
O_N='' O_GPU_IDS='' O_CPU=0 O_POLICY='' O_MP=no O_BACKEND='' O_HOSTFILE='' O_MACHINES=''
O_MACHINE_RANK='' O_MAIN_IP='' O_MAIN_PORT='' O_LAUNCHER=auto O_FILTER=all O_LOG_DIR='' O_TEE=0
O_DEBUG=0 O_LINEBUF=1 O_VISIBLE=per-rank O_TIMEOUT='' O_DRY=0 O_PRELOAD=1 O_RECORD='' O_NAN_CHECK=0
O_ENVS=() O_MCA=() O_PROG=()
O_TRACE='' O_TRACE_LAUNCHES=0 P_TRACE_DIR=''

parse_launch_args() {
  local a name val has_val
  while [ $# -gt 0 ]; do
    a=$1
    case $a in
      --) shift; break ;;
      --*=*) name=${a%%=*}; val=${a#*=}; has_val=1 ;;
      --*) name=$a; val=''; has_val=0 ;;
      -n) name=$a; has_val=0 ;;
      -n*) name=-n; val=${a#-n}; has_val=1 ;;
      -h) usage; exit 0 ;;
      -*) die "unknown option '$a' (see --help)" ;;
      *) break ;;
    esac
    name=${name//_/-}
    # take_value: the option's value (from --opt=VALUE or the next word)
    case $name in
      -n|--num-processes|--gpu-ids|--policy|--mixed-precision|--backend|--hostfile|--num-machines|\
      --machine-rank|--main-process-ip|--main-process-port|--launcher|--ranks-filter|--log-dir|\
      --env|--trace|--timeout|--record|--visible-devices)
        if [ "$has_val" = 0 ]; then
          [ $# -ge 2 ] || die "option $a needs a value"
          val=$2; shift
        fi ;;
      --mca)
        [ "$has_val" = 0 ] || die "--mca takes two words: --mca KEY VALUE"
        [ $# -ge 3 ] || die "--mca needs KEY VALUE"
        O_MCA+=("$2" "$3"); shift 3; continue ;;
      --tee) [ "$has_val" = 1 ] && [ "$val" = 0 ] && { O_TEE=0; shift; continue; } ;;
      *) [ "$has_val" = 0 ] || die "option $name takes no value" ;;
    esac
    case $name in
      -n|--num-processes) pos_int "$val" || die "-n: '$val' is not a positive integer"; O_N=$val ;;
      --gpu-ids) [[ $val =~ ^(all|[0-9]+(,[0-9]+)*)$ ]] || die "--gpu-ids: '$val' is not a list like 0,1,3"; O_GPU_IDS=$val ;;
      --cpu) O_CPU=1 ;;
      --policy) O_POLICY=$val ;;
      --mixed-precision)
        case $val in no|fp16|bf16) O_MP=$val ;; *) die "--mixed-precision: '$val' is not one of no, fp16, bf16" ;; esac ;;
      --backend) case $val in auto|nccl|mpi) O_BACKEND=$val ;; *) die "--backend: '$val' is not one of auto, nccl, mpi" ;; esac ;;
      --hostfile) O_HOSTFILE=$val ;;
      --num-machines) pos_int "$val" || die "--num-machines: '$val' is not a positive integer"; O_MACHINES=$val ;;
      --machine-rank) is_uint "$val" || die "--machine-rank: '$val' is not a non-negative integer"; O_MACHINE_RANK=$val ;;
      --main-process-ip) O_MAIN_IP=$val ;;
      --main-process-port) { is_uint "$val" && [ "$((10#$val))" -le 65535 ]; } || die "--main-process-port: '$val' is not a port"; O_MAIN_PORT=$val ;;
      --launcher) case $val in auto|mpirun|srun|local) O_LAUNCHER=$val ;; *) die "--launcher: '$val' is not one of auto, mpirun, srun, local" ;; esac ;;
      --ranks-filter) [[ $val =~ ^(all|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$ ]] || die "--ranks-filter: '$val' is not a list like 0,2-3"; O_FILTER=$val ;;
      --log-dir) O_LOG_DIR=$val ;;
      --tee) O_TEE=1 ;;
      --env) [[ $val =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env: '$val' is not KEY=VALUE"; O_ENVS+=("$val") ;;
      --debug) O_DEBUG=1 ;;
      --record) [ -n "$val" ] || die "--record: needs a directory"; O_RECORD=$val ;;
      --nan-check) O_NAN_CHECK=1 ;;
      --timeout) is_uint "$val" || die "--timeout: '$val' is not a number of seconds"; O_TIMEOUT=$val ;;
      --trace) [ -n "$val" ] || die "--trace needs a directory"; O_TRACE=$val ;;
      --trace-launches) O_TRACE_LAUNCHES=1 ;;
      --dry-run) O_DRY=1 ;;
      --no-preload) O_PRELOAD=0 ;;
      --line-buffered) O_LINEBUF=1 ;;
      --visible-devices) case $val in per-rank|all) O_VISIBLE=$val ;; *) die "--visible-devices: '$val' is not per-rank or all" ;; esac ;;
      --no-line-buffered) O_LINEBUF=0 ;;
      --multi-gpu) ;;    # accelerate launch's flag; several ranks are what accelerate-run does anyway
      --help) usage; exit 0 ;;
      --version) asr_version; exit 0 ;;
      *) die "unknown option '$a' (see --help)" ;;
    esac
    shift
  done
  [ $# -ge 1 ] || die "no program given (usage: accelerate-run [options] [--] PROGRAM [ARGS...])"
  O_PROG=("$@")
}

