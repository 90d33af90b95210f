# commands.bash — the subcommands of accelerate-run: config, env, test, explain, suggest (sourced by the launcher,
# which has already set the layout variables L_* and the helpers die/warn/quote_cmd/gpu_count).
# config writes accelerate-run's saved defaults, or a commented starter policy (checked); env prints what a bug report needs;
# test runs the bundled trainer as 1 rank with batch N*B and as N ranks with batch B on sharded
# data and says whether they agree (or exactly what differed); explain runs a program as one rank
# in explain mode and prints its step and reading; suggest writes that reading as a policy.
# Not executable on its own.
# shellcheck shell=bash

# ---------------------------------------------------------------------------------------------
config_usage() {
  cat <<'EOF'
usage: accelerate-run config --write-policy [--force] [FILE]   (or: config [--force] FILE)
       accelerate-run config [--num_processes N] [--mixed_precision no|fp16|bf16] [--policy FILE]
                             [--launcher L] [--backend B] [--gpu_ids LIST] [--max_restarts N]
                             [--num_cpu_threads_per_process N] [--clear]
       accelerate-run config --show
Saved defaults: with any of the options above (or, at a terminal with no arguments, by asking),
write accelerate-run's own defaults to $XDG_CONFIG_HOME/accelshim/accelerate-run.yaml (default
~/.config/...), keeping the keys not given (--clear: start empty). Every launch reads them beneath
the command line and beneath --config_file / Accelerate's default config. --show prints them.
Starter policy: --write-policy (or a FILE) writes a commented starter policy to FILE (default
./accelshim.yaml; '-' = standard output) and checks it with accelshim-policy; an existing FILE is
kept unless --force is given. It has no rules yet: more than one rank refuses to start with it
until you add them. `config` alone asks for the defaults at a terminal, else shows them.
EOF
}

# The keys of the saved defaults (Accelerate's names where Accelerate has one) and their options.
SAVED_KEYS=(num_processes mixed_precision policy launcher backend gpu_ids max_restarts num_cpu_threads_per_process)

# Quote a value for YAML (single quotes; a quote doubled).
yaml_quote() { printf "'%s'" "${1//\'/\'\'}"; }

# config_defaults KEY=VALUE...: merge into the saved defaults file (values checked as options).
config_defaults() {
  local file dir kv key val tmp k
  declare -A cur=()
  file=$(saved_defaults_file)
  if [ "$CFG_CLEAR" = 0 ] && [ -f "$file" ]; then
    while IFS=$'\t' read -r key val; do
      case $key in ''|IGNORED|NOTUSED) ;; *) cur[${key//-/_}]=$val ;; esac
    done < <(python3 "$L_HELPERS/config-read" "$file") || die "config: the saved defaults $file do not read back; fix or remove it (or --clear)"
  fi
  OPT_WHERE="config: "
  for kv in "$@"; do
    key=${kv%%=*}; val=${kv#*=}
    set_opt_as "${CFG_TYPED[$key]:---$key}" "--${key//_/-}" "$val"   # the command line's checks, named as typed
    if [ "$key" = policy ]; then
      [ -r "$val" ] || die "config: --policy '$val' cannot be read"
      val=$(readlink -f "$val")
      check_policy "$val" || exit 2
    fi
    cur[$key]=$val
  done
  # shellcheck disable=SC2034  # read by set_opt (options.bash)
  OPT_WHERE=''
  dir=$(dirname "$file")
  mkdir -p "$dir" 2>/dev/null || die "config: cannot create $dir"
  tmp=$(mktemp "$dir/.accelerate-run.XXXXXX") || die "config: cannot write in $dir"
  {
    echo "# accelerate-run saved defaults (accelerate-run config); the command line overrides them."
    for k in "${SAVED_KEYS[@]}"; do
      [ -n "${cur[$k]:-}" ] && printf '%s: %s\n' "$k" "$(yaml_quote "${cur[$k]}")"
    done
  } >"$tmp"
  python3 "$L_HELPERS/config-read" "$tmp" >/dev/null || { rm -f "$tmp"; die "config: internal error: the defaults written do not read back"; }
  mv -fT "$tmp" "$file" || die "config: cannot write $file"   # -T: a rename, never into a folder a link names
  echo "$ASR_NAME: saved defaults in $file:"
  grep -v '^#' "$file" | sed 's/^/    /'
}

# At a terminal: ask for each default (Enter keeps the current one, '-' clears it).
config_ask() {
  local k v answers=()
  echo "accelerate-run: saved defaults (Enter: keep or leave unset)"
  for k in num_processes mixed_precision policy launcher; do
    read -r -p "  $k: " v || break
    [ -n "$v" ] && answers+=("$k=$v")
  done
  [ ${#answers[@]} -gt 0 ] || { echo "$ASR_NAME: nothing to save"; return 0; }
  config_defaults "${answers[@]}"
}

starter_policy() {
  cat <<'EOF'
# accelshim policy (version 1) — what the shim does to an unmodified single-GPU trainer.
# Check it:  accelshim-policy check accelshim.yaml        Use it:  accelerate-run --policy accelshim.yaml ...
# Kernel names are fnmatch globs matched against the mangled and the demangled name; find them
# with ACCELSHIM_LOG=debug (every launched kernel is logged) or `cuobjdump -symbols`.
version: 1

# Gradients: averaged across ranks just BEFORE each launch of a kernel whose name matches `at`.
# Pick the first kernel that READS the complete gradients (the norm for clipping, else the optimizer).
gradients:
#  - at: "adamw_kernel2*"             # llm.c train_gpt2_fp32.cu: one launch per step
#    buffer: { arg: 1, count_arg: 4 } # pointer = kernel argument 1, element count = argument 4
#    dtype: f32                       # f32 | f16 | bf16: element type in memory
#    reduce: mean                     # mean | sum
#    wire: same                       # same | f16 | bf16: downcast f32 on the wire (or --mixed-precision)
# Other buffer forms: { arg: 1, count: 4096 }  or  { arg: 1, region: allocation }

# Parameters: made identical on every rank (rank 0's values), once per buffer, before the first
# launch of a kernel that READS them (the forward pass), e.g. when weights come from rand().
parameters:
#  - at: "matmul_a_b_kernel*"
#    buffer: { arg: 1, region: allocation }
#    dtype: f32
#    broadcast: once

# Outputs only rank 0 writes (other ranks' writes to matching paths go nowhere).
outputs:
  main_process_only:
#    - "*.ckpt"
#    - "out/*"

debug:
  check_collectives: false   # exchange a fingerprint (rule, count, dtype, sequence) before each collective
  timeout_s: 600             # a collective stuck longer aborts the job with a report (0 = never)
EOF
}

declare -A CFG_TYPED=()   # saved-default key -> the option as the user typed it
cmd_config() {
  local file='' force=0 tmp sets=() key o write=0
  CFG_CLEAR=0
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) config_usage; return 0 ;;
      -f|--force) force=1 ;;
      --show) file=$(saved_defaults_file); [ -f "$file" ] || { echo "$ASR_NAME: no saved defaults ($file)"; return 0; }
              echo "$ASR_NAME: saved defaults in $file:"; grep -v '^#' "$file" | sed 's/^/    /'; return 0 ;;
      --clear) CFG_CLEAR=1 ;;
      --write-policy) write=1 ;;
      --config-file=*|--config_file=*) file=${1#*=} ;;
      --*)
        o=${1#--}; key=${o%%=*}; key=${key//-/_}
        case " ${SAVED_KEYS[*]} " in
          *" $key "*)
            CFG_TYPED[$key]=--${o%%=*}
            if [[ $o == *=* ]]; then sets+=("$key=${o#*=}")
            else [ $# -ge 2 ] || die "config: --${o%%=*} needs a value"; sets+=("$key=$2"); shift; fi ;;
          *) config_usage >&2; die "config: unknown option '$1'" ;;
        esac ;;
      -) file=- ;;
      -*) config_usage >&2; die "config: unknown option '$1'" ;;
      *) [ -z "$file" ] || die "config: one FILE only"; file=$1 ;;
    esac
    shift
  done
  if [ ${#sets[@]} -gt 0 ] || [ "$CFG_CLEAR" = 1 ]; then
    [ -z "$file" ] || die "config: saved defaults and a starter policy FILE are two commands: run them apart"
    config_defaults "${sets[@]}"; return
  fi
  if [ -z "$file" ] && [ $write = 0 ]; then
    # nothing asked for: ask for the defaults at a terminal; never a starter policy unasked (a
    # ./accelshim.yaml is picked up by every later launch in this folder)
    if [ -t 0 ] && [ -t 1 ]; then config_ask; return; fi
    cmd_config --show
    echo "$ASR_NAME: to save defaults: accelerate-run config --num_processes N ...; a starter policy: accelerate-run config --write-policy [FILE]"
    return 0
  fi
  file=${file:-./accelshim.yaml}
  if [ "$file" = - ]; then starter_policy; return 0; fi
  # a link is never written through, even with --force (it could point anywhere, or nowhere yet)
  [ -L "$file" ] && die "config: '$file' is a symbolic link; refusing to write through it"
  if [ -e "$file" ] && [ $force = 0 ]; then
    die "config: '$file' exists; not overwriting it (use --force)"
  fi
  tmp=$(mktemp "${TMPDIR:-/tmp}/accelshim-policy.XXXXXX.yaml") || die "config: cannot create a temporary file"
  starter_policy >"$tmp"
  if [ -x "$L_POLICY_TOOL" ]; then
    if ! "$L_POLICY_TOOL" check "$tmp" >/dev/null; then
      rm -f "$tmp"
      die "config: internal error: the starter policy does not pass accelshim-policy check"
    fi
  else
    warn "config: accelshim-policy not found at $L_POLICY_TOOL; the policy was not checked"
  fi
  # a new file next to FILE, renamed over it: a rename replaces a name and never follows a link
  local dst
  if ! { mkdir -p "$(dirname "$file")" && dst=$(mktemp "$(dirname "$file")/.accelshim-policy.XXXXXX") \
         && cat "$tmp" >"$dst" && chmod 644 "$dst" && mv -fT "$dst" "$file"; }; then
    rm -f "$tmp" ${dst:+"$dst"}; die "config: cannot write '$file'"
  fi
  rm -f "$tmp"
  echo "$ASR_NAME: wrote a starter policy to $file; edit the commented rules, then: accelerate-run --policy $file -- PROGRAM"
}

# ---------------------------------------------------------------------------------------------
env_usage() {
  cat <<'EOF'
usage: accelerate-run env [--policy FILE]
Print what a bug report needs: accelshim version and files, OS, driver and toolkit, NCCL, MPI,
Slurm, GPUs, container limits, ACCELSHIM_* variables, and the policy in effect (normalised).
EOF
}

# The library's own version string (accelshim_version()), when python3 can call it.
lib_version() {
  [ -f "$L_LIB" ] && command -v python3 >/dev/null 2>&1 || return 1
  ASR_LIB=$L_LIB timeout 10 python3 - <<'EOF' 2>/dev/null
import ctypes, os
lib = ctypes.CDLL(os.environ["ASR_LIB"])
f = lib.accelshim_version
f.restype = ctypes.c_char_p
print(f().decode())
EOF
}

nccl_header_version() {
  local h
  for h in "${CUDA_HOME:-/usr/local/cuda}/include/nccl.h" /usr/include/nccl.h; do
    [ -f "$h" ] || continue
    awk '/#define NCCL_MAJOR/ {M=$3} /#define NCCL_MINOR/ {m=$3} /#define NCCL_PATCH/ {p=$3}
         END { if (M != "") printf "%s.%s.%s", M, m, p }' "$h"
    printf ' (%s)\n' "$h"
    return 0
  done
  return 1
}

cmd_env() {
  local policy='' v out
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) env_usage; return 0 ;;
      --policy) [ $# -ge 2 ] || die "env: --policy needs a FILE"; policy=$2; shift ;;
      --policy=*) policy=${1#*=} ;;
      *) env_usage >&2; die "env: unknown argument '$1'" ;;
    esac
    shift
  done
  echo "accelshim environment"
  echo "- accelshim version:  $(asr_version)"
  v=$(lib_version) && echo "- library release:    $v (accelshim_version() of the library below)"
  echo "- layout:             $L_MODE ($L_TOP)"
  echo "- launcher:           $ASR_SELF"
  printf -- '- library:            %s%s\n' "$L_LIB" "$([ -f "$L_LIB" ] || echo ' (MISSING)')"
  printf -- '- accelshim-policy:   %s%s\n' "$L_POLICY_TOOL" "$([ -x "$L_POLICY_TOOL" ] || echo ' (MISSING)')"
  printf -- '- hostcuda (--cpu):   %s%s\n' "$L_HOSTCUDA/libcuda.so.1" "$([ -f "$L_HOSTCUDA/libcuda.so.1" ] || echo ' (missing)')"
  printf -- '- hostcudart (--cpu): %s%s\n' "$L_HOSTCUDART/libcudart.so.13" "$([ -f "$L_HOSTCUDART/libcudart.so.13" ] || echo ' (missing)')"
  # shellcheck source=/dev/null  # the system's file, read for PRETTY_NAME
  echo "- OS:                 $(uname -srmo 2>/dev/null)$( [ -r /etc/os-release ] && . /etc/os-release && printf ', %s' "${PRETTY_NAME:-}")"
  echo "- bash:               $BASH_VERSION"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- NVIDIA driver:      $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)"
    echo "- GPUs:"
    nvidia-smi -L 2>&1 | sed 's/^/    /'
  else
    echo "- NVIDIA driver:      none (nvidia-smi not found)"
    echo "- GPUs:               none visible"
  fi
  echo "- CUDA_VISIBLE_DEVICES: ${CUDA_VISIBLE_DEVICES-(not set)}"
  if command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    local nvcc=nvcc
    command -v nvcc >/dev/null 2>&1 || nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
    v=$("$nvcc" --version 2>/dev/null | grep -E 'release' | head -n1)
    echo "- CUDA toolkit:       ${v:-unknown}"
  else
    echo "- CUDA toolkit:       nvcc not found"
  fi
  v=$(nccl_header_version) || v='nccl.h not found'
  echo "- NCCL header:        $v"
  v=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / {print $NF; exit}')
  echo "- NCCL library:       ${v:-libnccl.so.2 not in the loader cache}"
  if command -v mpirun >/dev/null 2>&1; then
    echo "- MPI:                $(mpirun --version 2>&1 | head -n1)"
  else
    echo "- MPI:                mpirun not found"
  fi
  if ! command -v srun >/dev/null 2>&1; then echo "- Slurm:              srun not found (not a Slurm machine)"
  elif v=$(timeout 10 srun --version 2>/dev/null) && [ -n "$v" ]; then echo "- Slurm:              ${v%%$'\n'*} (job: ${SLURM_JOB_ID:-none})"
  else echo "- Slurm:              srun is installed but cannot reach a Slurm configuration here (not a Slurm cluster); no job"
  fi
  v=$(cma_blocker)
  echo "- container/CMA:      ${v:-none detected} (yama ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo n/a))"
  echo "- CPUs:               $(nproc 2>/dev/null) usable"
  echo "- ACCELSHIM_* variables:"
  out=$(compgen -e | grep -E '^(ACCELSHIM|HOSTCUDA)_' | while read -r v; do printf '    %s=%s\n' "$v" "${!v}"; done)
  printf '%s\n' "${out:-    (none set)}"
  policy=${policy:-${ACCELSHIM_POLICY:-}}
  [ -z "$policy" ] && [ -f ./accelshim.yaml ] && policy=./accelshim.yaml
  if [ -z "$policy" ]; then
    echo "- policy in effect:   none (no --policy, no ACCELSHIM_POLICY, no ./accelshim.yaml)"
  elif [ -x "$L_POLICY_TOOL" ]; then
    echo "- policy in effect:   $policy, normalised:"
    "$L_POLICY_TOOL" check "$policy" 2>&1 | sed 's/^/    /'
  else
    echo "- policy in effect:   $policy (not checked: accelshim-policy missing)"
  fi
  return 0
}

# ---------------------------------------------------------------------------------------------
test_usage() {
  cat <<'EOF'
usage: accelerate-run test [-n N] [--batch B] [--steps S] [--optimizer sgd|adam] [--cpu]
                           [--init seed|per-process] [--policy FILE] [--keep]
       accelerate-run test [-n N] --batch B --batch-arg '-b {batch}' --policy FILE -- PROGRAM ARGS
                           (your own program: accelerate-run test --help -- x)
Equivalence check with the bundled trainer: 1 rank with batch N*B against N ranks with batch B
on disjoint shards. Passes when every rank ends with bit-identical parameters and the N-rank
parameters equal the 1-rank ones (|n - 1| <= 1e-8 + 1e-5 |1| per parameter); otherwise prints
exactly what differed.
--init per-process: every rank starts from different weights (like a trainer seeded by rand());
the policy's parameter broadcast must make them rank 0's, and the 1-rank run then starts from
rank 0's initial weights (its printed init_seed).
Uses hostcuda (--cpu) when no GPU is visible. Defaults: -n 2, --batch 4, --steps 10, sgd, seed.
EOF
}

# A policy for the bundled trainer and optimizer $1: --policy, else the one installed/checked in
# next to it (mlp.yaml for sgd, mlp-adam.yaml for adam).
trainer_policy() {
  local f b=mlp
  [ "${1:-sgd}" = adam ] && b=mlp-adam
  for f in "$L_EXAMPLES/$b.yaml" "$L_TOP/tests/trainers/$b.yaml" "$L_TOP/lib/accelshim/tests/$b.yaml"; do
    [ -f "$f" ] && { printf '%s\n' "$f"; return 0; }
  done
  return 1
}

# rank_values FILE KEY: "rank value" per rank for lines "[rank R] KEY VALUE" (last one wins).
rank_values() {
  awk -v k="$2" '$1 == "[rank" && $3 == k { sub(/\]$/, "", $2); v[$2] = $4 } END { for (r in v) print r, v[r] }' "$1" | sort -n
}

# shellcheck source=scripts/accelerate-run.d/test-program.bash
. "$L_HELPERS/test-program.bash"

cmd_test() {
  local n=2 b=4 steps=10 opt=sgd cpu='' policy='' keep=0 init=seed tmp rc1 rc2 ok=1 ref r v a
  for a in "$@"; do [ "$a" = -- ] && { test_program "$@"; return; }; done   # the user's own program
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) test_usage; return 0 ;;
      -n|--num-processes|--num_processes) n=${2:-}; shift ;;
      --batch) b=${2:-}; shift ;;
      --steps) steps=${2:-}; shift ;;
      --optimizer) opt=${2:-}; shift ;;
      --init) init=${2:-}; shift ;;
      --policy) policy=${2:-}; shift ;;
      --cpu) cpu=--cpu ;;
      --keep) keep=1 ;;
      *) test_usage >&2; die "test: unknown argument '$1'" ;;
    esac
    shift
  done
  for v in "$n" "$b" "$steps"; do pos_int "$v" || die "test: '$v' is not a positive integer"; done
  case $init in seed|per-process) ;; *) die "test: --init '$init' is not seed or per-process" ;; esac
  [ -x "$L_TRAINER" ] || die "test: the bundled trainer is missing at $L_TRAINER (build it: make)"
  if [ -z "$cpu" ] && [ "$(gpu_count)" -lt "$n" ]; then
    cpu=--cpu
    echo "test: fewer than $n GPUs visible: running on hostcuda (--cpu)"
  fi
  if [ -z "$policy" ]; then policy=$(trainer_policy "$opt") || die "test: no policy for the bundled trainer found (give --policy FILE)"; fi
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelshim-test.XXXXXX") || die "test: cannot create a temporary directory"
  [ $keep = 1 ] || trap 'rm -rf "$tmp"' RETURN

  local common=(--steps "$steps" --seed 1234 --optimizer "$opt") init1=()
  echo "test: 1 rank, batch $((n * b)), $steps steps ($opt, init $init)  vs  $n ranks, batch $b each, sharded; policy $policy"
  # --sync-optional: the comparison below says what differs; the shim's exit 7 for ranks that
  # synchronised nothing would only hide it
  # shellcheck disable=SC2086  # $cpu is empty or one word
  "$ASR_SELF" $cpu -n "$n" --sync-optional --policy "$policy" -- "$L_TRAINER" "${common[@]}" --batch "$b" --init "$init" \
    --shard-rank '{rank}' --shard-count '{world_size}' --save "$tmp/params-rank{rank}.out" >"$tmp/dp.log" 2>&1
  rc2=$?
  if [ "$init" = per-process ]; then   # the reference starts from rank 0's initial weights
    v=$(sed -n 's/^\[rank 0\] .*init_seed=\([0-9]*\).*/\1/p' "$tmp/dp.log" | head -n1)
    [ -n "$v" ] && init1=(--init-seed "$v")
  fi
  # shellcheck disable=SC2086
  "$ASR_SELF" $cpu -n 1 --policy "$policy" -- "$L_TRAINER" "${common[@]}" --batch $((n * b)) "${init1[@]}" \
    --save "$tmp/params-1rank.out" >"$tmp/one.log" 2>&1
  rc1=$?
  if [ $rc1 -ne 0 ]; then echo "test: FAILED: the 1-rank run exited with status $rc1; its output:"; sed 's/^/    /' "$tmp/one.log"; return 1; fi
  if [ $rc2 -ne 0 ]; then echo "test: FAILED: the $n-rank run exited with status $rc2; its output:"; tail -n 40 "$tmp/dp.log" | sed 's/^/    /'; return 1; fi

  ref=$(rank_values "$tmp/one.log" checksum | awk '$1 == 0 {print $2}')
  [ -n "$ref" ] || { echo "test: FAILED: the 1-rank run printed no checksum"; sed 's/^/    /' "$tmp/one.log"; return 1; }
  local got
  got=$(rank_values "$tmp/dp.log" checksum)
  if [ "$(wc -l <<<"$got")" -ne "$n" ] || [ -z "$got" ]; then
    echo "test: FAILED: expected a checksum from each of $n ranks, got:"; printf '%s\n' "${got:-    (none)}"; return 1
  fi
  # 1. Every rank holds the same parameters, bit for bit.
  if [ "$(awk '{print $2}' <<<"$got" | sort -u | wc -l)" -ne 1 ]; then
    ok=0; echo "test: DIFFERS: ranks ended with different parameters (checksums):"; while read -r r v; do echo "    rank $r: $v"; done <<<"$got"
  fi
  # 2. The saved parameters (raw float32), when every run saved them: every rank bit-identical to
  #    rank 0, and rank 0 within |n - 1| <= atol + rtol * |1| (rtol 1e-5, atol 1e-8: numpy.allclose's
  #    rule; the sum order differs, so values near 0 need the atol) of the 1-rank run. One tool
  #    decides, accelshim-equiv, the comparison the equivalence suite uses; it prints both sides of
  #    the first difference. Otherwise the checksums, to rtol 1e-5.
  v=$(awk '$1 == 0 {print $2}' <<<"$got")
  local files=() r have=1
  for ((r = 0; r < n; r++)); do files+=("$tmp/params-rank$r.out"); [ -s "$tmp/params-rank$r.out" ] || have=0; done
  if [ $have = 1 ] && [ -s "$tmp/params-1rank.out" ] && [ -x "$L_EQUIV" ]; then
    local diff line
    if ! diff=$("$L_EQUIV" --ref "$tmp/params-1rank.out" --rtol 1e-5 --atol 1e-8 "${files[@]}" 2>&1); then
      ok=0; echo "test: DIFFERS: the saved parameters (accelshim-equiv):"
      while IFS= read -r line; do echo "    $line"; done <<<"$diff"
    fi
  elif ! awk -v a="$ref" -v b="$v" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); mb = (b < 0 ? -b : b); if (mb > m) m = mb
                                         exit !(d <= 1e-5 * m || d == 0) }'; then
    ok=0; echo "test: DIFFERS: checksum 1 rank (batch $((n * b))) = $ref, $n ranks (batch $b) = $v (rtol 1e-5)"
  fi
  if [ $ok = 0 ]; then
    echo "    checksum: 1 rank $ref, rank 0 $v"
    echo "    1 rank, last losses:  $(grep -E 'step [0-9]+ loss' "$tmp/one.log" | tail -n 3 | awk '{print $NF}' | paste -sd' ' -)"
    echo "    rank 0, last losses:  $(grep -E '^\[rank 0\] step [0-9]+ loss' "$tmp/dp.log" | tail -n 3 | awk '{print $NF}' | paste -sd' ' -)"
  fi
  if [ $ok = 1 ]; then
    echo "test: OK: $n ranks x batch $b == 1 rank x batch $((n * b)) (checksum $ref; ranks bit-identical)"
    return 0
  fi
  echo "test: FAILED (logs: $tmp)"
  [ $keep = 1 ] || { keep=1; trap - RETURN; echo "test: kept $tmp for inspection"; }
  return 1
}

# ---------------------------------------------------------------------------------------------
explain_usage() {
  cat <<'EOF2'
usage: accelerate-run explain [--cpu] [--keep] -- PROGRAM [ARGS...]
Runs PROGRAM once as one rank with the shim in explain mode (ACCELSHIM_EXPLAIN) and prints what
it found: the images it loaded (their PTX, or that an image has none), the step (the launch
sequence that repeats), each launch of one step with its demangled name, every pointer argument's
allocation (bytes, elements of the type the kernel accesses, offset) and whether the kernel reads
or writes it, the integer arguments equal to an allocation's element count; then its reading:
parameters, gradients, optimizer state, the sync point (the first launch that reads the complete
gradients: a norm for clipping when one reads them before the update) and the broadcast point,
one "rule:" line each. Where the evidence does not decide, it says "cannot tell" and why.
PROGRAM's own arguments decide how many steps it runs: a few are enough (two repetitions at least).
--cpu runs on hostcuda (also chosen when no GPU is visible); --keep keeps the run's directory.
Docs: docs/explain.md.
EOF2
}

cmd_explain() {
  local cpu='' keep=0 tmp rc
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) explain_usage; return 0 ;;
      --cpu) cpu=--cpu ;;
      --keep) keep=1 ;;
      --) shift; break ;;
      *) explain_usage >&2; die "explain: unknown argument '$1' (the program comes after --)" ;;
    esac
    shift
  done
  [ $# -ge 1 ] || { explain_usage >&2; die "explain: no program given (accelerate-run explain [--cpu] -- PROGRAM ARGS)"; }
  if [ ! -x "$1" ] && ! command -v -- "$1" >/dev/null 2>&1; then die "explain: '$1' is not an executable program"; fi
  if [ -z "$cpu" ] && [ "$(gpu_count)" -lt 1 ]; then
    cpu=--cpu
    echo "explain: no GPU visible: running on hostcuda (--cpu)"
  fi
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelshim-explain.XXXXXX") || die "explain: cannot create a temporary directory"
  [ $keep = 1 ] || trap 'rm -rf "$tmp"' RETURN
  explain_run "$tmp" "$cpu" "$@"
  rc=$?
  [ -s "$tmp/explain.txt" ] || return 1
  cat "$tmp/explain.txt"
  explain_note "$tmp" $rc || return 1
  [ $keep = 1 ] && echo "explain: kept $tmp (run.log: the program's output)"
  return 0
}

# explain_run DIR CPU PROGRAM ARGS: one rank in explain mode; DIR/explain.txt, DIR/run.log; the
# program's status (a missing explanation is said here, status 1 at least)
explain_run() {
  local dir=$1 cpu=$2 rc; shift 2
  # shellcheck disable=SC2086  # $cpu is empty or one word
  ACCELSHIM_EXPLAIN=$dir/explain.txt "$ASR_SELF" $cpu -n 1 --sync-optional -- "$@" >"$dir/run.log" 2>&1
  rc=$?
  if [ ! -s "$dir/explain.txt" ]; then
    echo "explain: FAILED: the program wrote no explanation (exit status $rc); its last lines:"
    tail -n 30 "$dir/run.log" | sed 's/^/    /'
    [ $rc -eq 0 ] && rc=1
  fi
  return $rc
}

# explain_note DIR STATUS: a program that failed is said (status 1), else nothing
explain_note() {
  [ "$2" -eq 0 ] && return 0
  echo "explain: note: the program exited with status $2; the explanation covers the launches it made. Its last lines:"
  tail -n 10 "$1/run.log" | sed 's/^/    /'
  return 1
}

# ---------------------------------------------------------------------------------------------
suggest_usage() {
  cat <<'EOF2'
usage: accelerate-run suggest [--cpu] [-o FILE] [--force] [-n N --batch B --batch-arg TEMPLATE]
                              -- PROGRAM [ARGS...]
Runs `accelerate-run explain` on PROGRAM and writes its reading as a policy (to FILE, or the
standard output): one gradients rule at each sync point found, one parameters rule with
broadcast: once at the first launch that reads the parameters (always: a program may seed its
weights by rank, pid or time, which one run cannot see), every rule commented with its evidence
and every "cannot tell" of the reading copied as a comment. The policy is checked with
accelshim-policy. A rule whose count or dtype the run could not tell is written commented out,
for you to complete. With --batch-arg (and --batch, -n as for `accelerate-run test`) the policy
is proved at once: `accelerate-run test` runs and its OK or what differed is printed.
An existing FILE is kept unless --force is given. Docs: docs/explain.md.
EOF2
}

# suggest_policy EXPLANATION PROGRAM...: the policy's YAML on stdout; 1 when no gradients rule
suggest_policy() {
  local ex=$1; shift
  echo "# accelshim policy suggested by \`accelerate-run suggest\` from one run of:"
  echo "#   $(quote_cmd "$@")"
  echo "# Each rule says what that run showed (the launch numbers are those of its step, printed by"
  echo "# \`accelerate-run explain\`). Prove it before relying on it: accelerate-run test --batch B"
  echo "# --batch-arg '...' --policy THIS -- PROGRAM ARGS"
  grep -E '^  (cannot tell|note):' "$ex" | sed 's/^  /# /'
  echo "version: 1"
  awk '
    function emit(sec,   at, rest, arg, buffer, dtype, ev, bc, off) {
      at = $0; sub(/^rule: [a-z]+ at: "/, "", at); sub(/".*/, "", at)
      buffer = $0; sub(/.* buffer: /, "", buffer); sub(/ dtype: .*/, "", buffer)
      dtype = $0; sub(/.* dtype: /, "", dtype); sub(/ .*/, "", dtype)
      bc = ($0 ~ / broadcast: once/)
      ev = prev; sub(/^  /, "", ev)
      if (sec != last) { print sec ":"; last = sec }
      off = (buffer ~ /cannot-tell/ || dtype == "cannot-tell") ? "# " : ""
      print "  # evidence: " ev
      if (off != "") print "  # cannot tell the count or the dtype: complete the rule below and uncomment it"
      print "  " off "- at: \"" at "\""
      print "  " off "  buffer: " buffer
      print "  " off "  dtype: " dtype
      if (bc) print "  " off "  broadcast: once"
      if (sec == "gradients" && off == "") g++
    }
    /^rule: gradients / { emit("gradients") }
    /^rule: parameters / { emit("parameters") }
    { prev = $0 }
    END { exit g ? 0 : 1 }
  ' "$ex"
}

cmd_suggest() {
  local cpu='' out=- force=0 n=2 b='' tmpl='' tmp rc file
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) suggest_usage; return 0 ;;
      --cpu) cpu=--cpu ;;
      -o|--output) out=${2:-}; [ -n "$out" ] || die "suggest: -o needs a file"; shift ;;
      --force) force=1 ;;
      -n|--num-processes|--num_processes) n=${2:-}; shift ;;
      --batch) b=${2:-}; shift ;;
      --batch-arg|--batch_arg) tmpl=${2:-}; shift ;;
      --) shift; break ;;
      *) suggest_usage >&2; die "suggest: unknown argument '$1' (the program comes after --)" ;;
    esac
    shift
  done
  [ $# -ge 1 ] || { suggest_usage >&2; die "suggest: no program given (accelerate-run suggest [--cpu] [-o FILE] -- PROGRAM ARGS)"; }
  if [ ! -x "$1" ] && ! command -v -- "$1" >/dev/null 2>&1; then die "suggest: '$1' is not an executable program"; fi
  if [ -n "$tmpl" ]; then
    pos_int "$b" || die "suggest: --batch-arg needs --batch B (the per-rank batch of the proof)"
  fi
  [ "$out" = - ] || [ $force = 1 ] || [ ! -e "$out" ] || die "suggest: $out exists (--force to replace it)"
  if [ -z "$cpu" ] && [ "$(gpu_count)" -lt 1 ]; then
    cpu=--cpu
    echo "suggest: no GPU visible: running on hostcuda (--cpu)" >&2
  fi
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelshim-suggest.XXXXXX") || die "suggest: cannot create a temporary directory"
  trap 'rm -rf "$tmp"' RETURN
  explain_run "$tmp" "$cpu" "$@" >&2
  rc=$?
  [ -s "$tmp/explain.txt" ] || return 1
  explain_note "$tmp" $rc >&2 || return 1
  if ! suggest_policy "$tmp/explain.txt" "$@" > "$tmp/policy.yaml"; then
    echo "suggest: FAILED: the run did not show where the gradients are complete; no policy written. The reading:" >&2
    sed -n '/^reading:/,$p' "$tmp/explain.txt" | sed 's/^/    /' >&2
    return 1
  fi
  check_policy "$tmp/policy.yaml" || { echo "suggest: FAILED: the suggested policy does not check (above):" >&2; sed 's/^/    /' "$tmp/policy.yaml" >&2; return 1; }
  if [ "$out" = - ]; then
    cat "$tmp/policy.yaml"; file=$tmp/policy.yaml
  else
    cp "$tmp/policy.yaml" "$out" || die "suggest: cannot write $out"
    echo "suggest: wrote $out (accelshim-policy check: OK)" >&2; file=$out
  fi
  [ -n "$tmpl" ] || return 0
  # shellcheck disable=SC2086  # $cpu is empty or one word
  "$ASR_SELF" test -n "$n" --batch "$b" --batch-arg "$tmpl" --policy "$file" $cpu -- "$@" >&2
}
