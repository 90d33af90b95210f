# test-program.bash — `accelerate-run test ... -- PROGRAM ARGS`: proves a policy on the user's own
# program, knowing nothing of its output. Runs it as 1 rank with batch N*B and as N ranks with
# batch B (the batch set through --batch-arg's template), both with --record, and compares the
# records with accelshim-compare: at every sync point the reduced buffers (`post` lines: the
# averaged gradients, the broadcast parameters) and the buffers alive at exit must agree within a
# tolerance that scales with the dtype and wire of the policy's gradient rules. Prints OK, or the
# first rule/step that differs with both values. Sourced by commands.bash; caller: cmd_test.
# shellcheck shell=bash

# Relative tolerance for one policy (and --mixed-precision): the coarsest gradient dtype or wire.
# f32: 1e-5; f16 (10 mantissa bits): 2e-3; bf16 (7): 1e-2. Measured on the bundled trainer
# (docs/record-compare.md): 3e-7, 1e-3 and 1e-2 needed over 25 steps. The kinds are joined by
# spaces on one line (a rule naming both dtype and wire printed two lines, and the match below
# missed its dtype).
policy_rtol() {
  local policy=$1 mp=$2 kinds
  kinds=$mp
  if [ -n "$policy" ] && [ -x "$L_POLICY_TOOL" ]; then
    kinds+=" $("$L_POLICY_TOOL" check "$policy" 2>/dev/null \
      | awk '/^[a-z]/ { sec = $1 } sec == "gradients:" && ($1 == "dtype:" || $1 == "wire:") { printf " %s ", $2 }')"
  fi
  case " $kinds " in
    *" bf16 "*) echo 1e-2 ;;
    *" f16 "*|*" fp16 "*) echo 2e-3 ;;
    *) echo 1e-5 ;;
  esac
}

test_program_usage() {
  cat <<'EOF'
usage: accelerate-run test [-n N] --batch B --batch-arg TEMPLATE [--policy FILE] [--cpu]
                           [--mixed-precision no|fp16|bf16] [--rtol R] [--atol T] [--keep]
                           -- PROGRAM [ARGS...]
Proves a policy on your own program: runs PROGRAM as 1 rank with batch N*B and as N ranks with
batch B, recording every sync point (--record), and compares the records with accelshim-compare:
the reduced buffers at every sync point (averaged gradients, broadcast parameters) and those
alive at exit must agree within atol + rtol * (the buffer's magnitude). Prints OK, or the first
rule and step (seq) that differs with both values. Nothing about the program's output is needed.
  --batch-arg T   how the per-rank batch is set, appended to ARGS; {batch} is replaced, e.g.
                  '-b {batch}' or '--batch={batch}' (several words split on spaces)
  {rank} and {world_size} in ARGS let each rank read its shard (1 rank: rank 0 of 1).
  --rtol R        default from the policy's gradient dtype/wire (or --mixed-precision):
                  f32 1e-5, f16 2e-3, bf16 1e-2; --atol default 0
The program's loss must be a mean over its batch, and shards must together be the 1-rank batch.
Example (llm.c, B = 4 per rank, 2 ranks; rank r reads the file shard{r}.bin, which must hold its
half of every 1-rank batch, and the 1 rank reads shard0.bin of a 1-way split):
  accelerate-run test -n 2 --batch 4 --batch-arg '-b {batch}' --policy examples/llmc-fp32.yaml \
      -- ./train_gpt2fp32cu -i 'split{world_size}/shard{rank}.bin'
EOF
}

# test_program ARGS: the options of `test` up to "--", then the program.
test_program() {
  local n=2 b='' tmpl='' policy='' cpu_opt=() mp=no rtol='' atol=0 keep=0 tmp rc1 rc2 out rc w
  local -a prog=() tail1=() tailn=()
  while [ $# -gt 0 ]; do
    case $1 in
      -h|--help) test_program_usage; return 0 ;;
      -n|--num-processes|--num_processes) n=${2:-}; shift ;;
      --batch) b=${2:-}; shift ;;
      --batch-arg|--batch_arg) tmpl=${2:-}; shift ;;
      --policy) policy=${2:-}; shift ;;
      --cpu) cpu_opt=(--cpu) ;;
      --mixed-precision|--mixed_precision) mp=${2:-}; shift ;;
      --rtol) rtol=${2:-}; shift ;;
      --atol) atol=${2:-}; shift ;;
      --keep) keep=1 ;;
      --) shift; prog=("$@"); break ;;
      *) test_program_usage >&2; die "test: unknown argument '$1'" ;;
    esac
    shift
  done
  [ ${#prog[@]} -ge 1 ] || die "test: no program given after --"
  pos_int "$n" || die "test: -n '$n' is not a positive integer"
  [ "$n" -ge 2 ] || die "test: -n $n: the check compares N ranks with 1 rank, N must be at least 2"
  pos_int "$b" || die "test: --batch '$b' is not a positive integer (the per-rank batch B)"
  [[ $tmpl == *"{batch}"* ]] || die "test: --batch-arg '$tmpl' has no {batch} (e.g. '-b {batch}')"
  case $mp in no|fp16|bf16) ;; *) die "test: --mixed-precision '$mp' is not no, fp16 or bf16" ;; esac
  [[ $atol =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "test: --atol '$atol' is not a number"
  [ -z "$rtol" ] || [[ $rtol =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "test: --rtol '$rtol' is not a number"
  [ -x "$L_COMPARE" ] || die "test: accelshim-compare not found at $L_COMPARE (build it: make)"
  if [ -z "$policy" ]; then
    policy=${ACCELSHIM_POLICY:-}
    [ -z "$policy" ] && [ -f ./accelshim.yaml ] && policy=./accelshim.yaml
    [ -n "$policy" ] || die "test: no policy (give --policy FILE): the check proves a policy"
  fi
  [ -r "$policy" ] || die "test: policy '$policy' cannot be read"
  [ -n "$rtol" ] || rtol=$(policy_rtol "$policy" "$mp")
  # the per-rank batch arguments: 1 rank gets N*B, each of N ranks gets B
  read -ra w <<<"${tmpl//\{batch\}/$((n * b))}"; tail1=("${w[@]}")
  read -ra w <<<"${tmpl//\{batch\}/$b}"; tailn=("${w[@]}")
  if [ ${#cpu_opt[@]} -eq 0 ] && [ "$(gpu_count)" -lt "$n" ]; then
    cpu_opt=(--cpu)
    echo "test: fewer than $n GPUs visible: running on hostcuda (--cpu)"
  fi
  [ ${#cpu_opt[@]} -eq 0 ] || plan_check_static_cudart "${prog[0]}"   # exit 2 before any run
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelshim-test.XXXXXX") || die "test: cannot create a temporary directory"
  echo "test: ${prog[0]}: 1 rank x batch $((n * b))  vs  $n ranks x batch $b; policy $policy; rtol $rtol, atol $atol"
  # the 1-rank run with the shim's debug listing: the kernels in first-launch order, for the advice
  "$ASR_SELF" -q "${cpu_opt[@]}" -n 1 --policy "$policy" --mixed-precision "$mp" --record "$tmp/one" \
    --env ACCELSHIM_LOG=debug -- "${prog[@]}" "${tail1[@]}" >"$tmp/one.log" 2>&1
  rc1=$?
  "$ASR_SELF" -q "${cpu_opt[@]}" -n "$n" --policy "$policy" --mixed-precision "$mp" --record "$tmp/dp" \
    -- "${prog[@]}" "${tailn[@]}" >"$tmp/dp.log" 2>&1
  rc2=$?
  rc=1
  if [ $rc1 -ne 0 ]; then
    echo "test: FAILED: the 1-rank run exited with status $rc1; its last lines:"; grep -v ' DEBUG ' "$tmp/one.log" | tail -n 30 | sed 's/^/    /'
  elif ! grep -qs '"rule":"gradients\[' "$tmp/one/rank-0.jsonl"; then
    echo "test: FAILED: no gradient sync point fired in the 1-rank run: the policy's gradient rules never matched a kernel; the shim's hint:"
    grep -E 'WARN unfired: ' "$tmp/one.log" | sed -E 's/^(\[rank [0-9]+\] )?\[accelshim rank [0-9]+\] WARN unfired: /    /'
    echo "test: all the kernels it launched: accelerate-run ${cpu_opt[*]} --list-kernels -- ${prog[*]}"
  elif [ $rc2 -ne 0 ] && [ $rc2 -ne 8 ]; then
    echo "test: FAILED: the $n-rank run exited with status $rc2; its last lines:"; tail -n 30 "$tmp/dp.log" | sed 's/^/    /'
  else
    # status 8: the shim found at exit that the ranks ended with different parameters; the
    # records below say where they parted. Where every record agrees, the ranks parted after the
    # last sync point: never OK, whatever the tolerance
    [ $rc2 -eq 8 ] && echo "test: the $n-rank run ended with status 8: its ranks ended with different parameters"
    out=$("$L_COMPARE" "$tmp/one" "$tmp/dp" --rtol "$rtol" --atol "$atol" 2>&1); rc=$?
    [ $rc -eq 0 ] && [ $rc2 -eq 8 ] && rc=8
    case $rc in
      0) echo "test: OK: $n ranks x batch $b == 1 rank x batch $((n * b)) at every sync point ($(grep -c '"kind":"post"' "$tmp/one/rank-0.jsonl") reduced buffers, rtol $rtol)" ;;
      8) echo "test: DIFFERS: the $n ranks ended with different parameters (the shim's digest of the broadcast buffers at exit), though every sync point agrees within rtol $rtol:"
         echo "test:   the ranks applied different updates to the same averaged gradients, so the update used something each rank computed from its own gradients before the sync point (a norm, a clip scale, a loss scale): the sync point is too late; pick the first kernel that reads the complete gradients"
         echo "test:   (the kernels the 1-rank run launched, in order: accelerate-run ${cpu_opt[*]} --list-kernels -- ${prog[*]})" ;;
      1) echo "test: DIFFERS (A = 1 rank, B = $n ranks): ${out#differs: }"
         echo "test: (seq counts the rule's sync points from 0: the step, when it fires once per step)"
         python3 "$L_HELPERS/test-evidence" "$tmp/one" "$tmp/dp" "$rtol" "$atol" "$tmp/one.log" ;;
      *) echo "test: FAILED: the records could not be compared: $out" ;;
    esac
  fi
  if [ "$rc" -eq 0 ] && [ $keep = 0 ]; then rm -rf "$tmp"; else echo "test: logs and records kept in $tmp"; fi
  [ "$rc" -eq 0 ]
}
