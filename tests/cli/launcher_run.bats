#!/usr/bin/env bats
# launcher_run.bats — accelerate-run really running ranks (mpirun and the launcher's own engine).
# Properties: every output line carries "[rank R] "; {rank} {local_rank} {world_size} are replaced
# as plain text (spaces, quotes, globs, $(...) survive and nothing is evaluated); --ranks-filter,
# --log-dir and --tee route output as documented; when rank 1 fails by exit code 3 or SIGSEGV the
# other ranks are stopped within 10 s, the root-cause block names rank 1 with its last lines, and
# the launcher exits 3 / 139; the FIRST failing rank is named, not one killed in the teardown; a bad
# policy is rejected before any rank starts; output arrives live; SIGTERM / Ctrl-C to the launcher
# and an engine killed outright leave no rank running. Most programs here are plain bash
# (--no-preload: no CUDA); the last cases run the mlp trainer on hostcuda with the shim, checking
# that --mixed-precision, --debug, --timeout, --env, --backend, --policy reach the shim.

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers
bats_require_minimum_version 1.5.0

setup() {
  MARK="asr-test-$$-$RANDOM"     # in the sleepers' command lines, to find leftovers (set first:
                                 # teardown runs even when a need_* below skips)
  need_cmd mpirun
  T=$(mktemp -d)
  cd "$T" || exit 1
  unset SLURM_JOB_ID
}
teardown() {
  local p
  for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done   # only this test's processes carry MARK
  [ -z "${T:-}" ] || { cd / && rm -rf "$T"; }
}

# leftovers: processes of this test still alive (never an empty pattern: that would match all).
leftovers() { [[ ${MARK:-} == asr-test-* ]] && pgrep -f "$MARK"; true; }
# gone_soon: no leftovers within 3 s (a rank told to stop ends in its own time; a slow machine)
gone_soon() {
  for _ in $(seq 30); do [ -z "$(leftovers)" ] && return 0; sleep 0.1; done
  echo "${1:-}ranks still running:"; ps -o pid,cmd -p "$(leftovers | paste -sd, -)"; false
}

@test "mpirun: every line of every rank is prefixed [rank R], stdout and stderr" {
  run "$A" --no-preload -n 3 -- bash -c 'echo "out {rank}/{world_size}"; echo "err {local_rank}" >&2; printf "tail {rank}"'
  status_is 0
  for r in 0 1 2; do
    contains "[rank $r] out $r/3"
    contains "[rank $r] err $r"
    contains "[rank $r] tail $r"
  done
  while IFS= read -r line; do
    [[ $line =~ ^\[rank\ [0-2]\]\  ]] || { echo "unprefixed line: [$line]"; show; false; }
  done <<<"$output"
}

@test "templating keeps spaces, quotes, globs and \$(...) as text; nothing is evaluated" {
  touch a1 a2
  run "$A" --no-preload -n 2 -- bash -c 'printf "<%s>\n" "$@"' prog 'f {rank}.bin' "it's" '"q"' '*' 'a?' \
      '$(touch pwned)' '`touch pwned2`' '${HOME}' 'r{rank}-of-{world_size}' '{rank}{rank}'
  status_is 0
  for r in 0 1; do
    contains "[rank $r] <f $r.bin>"
    contains "[rank $r] <it's>"
    contains "[rank $r] <\"q\">"
    contains "[rank $r] <*>"
    contains "[rank $r] <a?>"
    contains "[rank $r] <\$(touch pwned)>"
    contains "[rank $r] <\`touch pwned2\`>"
    contains "[rank $r] <\${HOME}>"
    contains "[rank $r] <r$r-of-2>"
    contains "[rank $r] <$r$r>"
  done
  [ ! -e pwned ] && [ ! -e pwned2 ]
}

@test "--env values are templated per rank, without evaluation" {
  run "$A" --no-preload -n 2 --env 'MYV=r{rank} $(touch pwned) *' -- bash -c 'echo "v=$MYV"'
  status_is 0
  contains '[rank 0] v=r0 $(touch pwned) *'
  contains '[rank 1] v=r1 $(touch pwned) *'
  [ ! -e pwned ]
}

@test "the launcher's own engine (--launcher local) prefixes and templates the same way" {
  run "$A" --no-preload --launcher local -n 3 -- bash -c 'echo "hi {rank} {local_rank} {world_size} $ACCELSHIM_RANK/$ACCELSHIM_WORLD_SIZE"'
  status_is 0
  for r in 0 1 2; do contains "[rank $r] hi $r $r 3 $r/3"; done
}

@test "--ranks-filter shows only the chosen ranks" {
  run "$A" --no-preload -n 4 --ranks-filter 1,3 -- bash -c 'echo "line {rank}"'
  status_is 0
  contains "[rank 1] line 1"
  contains "[rank 3] line 3"
  lacks "[rank 0]"
  lacks "[rank 2]"
}

@test "--log-dir: full per-rank logs, console quiet; --tee: both" {
  run "$A" --no-preload -n 2 --log-dir logs -- bash -c 'echo "one {rank}"; echo "two {rank}" >&2'
  status_is 0
  lacks "[rank"
  for r in 0 1; do
    [ "$(cat "logs/attempt-0/rank-$r.log")" = "$(printf 'one %s\ntwo %s' "$r" "$r")" ] || { cat "logs/attempt-0/rank-$r.log"; false; }
  done
  run "$A" --no-preload -n 2 --log-dir logs2 --tee -- bash -c 'echo "three {rank}"'
  contains "[rank 0] three 0"
  [ "$(cat logs2/attempt-0/rank-1.log)" = "three 1" ]
}

@test "one rank: stdin reaches the program, exit status passes through" {
  run bash -c "echo from-stdin | '$A' --no-preload -n 1 -- cat"
  status_is 0
  contains "[rank 0] from-stdin"
  run "$A" --no-preload -n 1 -- bash -c 'exit 4'
  status_is 4
}

# fail_test ENGINE-ARGS... : rank 1 fails after 0.5 s (FAIL_CMD), the others sleep 100 s.
run_failing() {
  local start=$SECONDS
  run "$A" --no-preload -n 3 "$@" -- bash -c "echo started {rank}; if [ {rank} = 1 ]; then sleep 0.5; echo 'rank one says bye'; $FAIL_CMD; fi; sleep 100 # $MARK"
  ELAPSED=$((SECONDS - start))
}

check_failure() {   # check_failure STATUS HOW
  status_is "$1"
  contains "rank 1 failed first: $2"
  contains "    | rank one says bye"
  [ "$ELAPSED" -lt 10 ] || { echo "took ${ELAPSED}s (limit 10s)"; show; false; }
  gone_soon
}

@test "mpirun: rank 1 exits 3 -> others stopped within 10 s, root cause, status 3" {
  FAIL_CMD='exit 3' run_failing
  check_failure 3 "exit code 3"
}

@test "mpirun: rank 1 dies of SIGSEGV -> others stopped within 10 s, root cause, status 139" {
  FAIL_CMD='kill -SEGV $$' run_failing
  check_failure 139 "signal SIGSEGV"
}

@test "own engine: rank 1 exits 3 -> others stopped within 10 s, root cause, status 3" {
  FAIL_CMD='exit 3' run_failing --launcher local
  check_failure 3 "exit code 3"
}

@test "own engine: rank 1 SIGSEGV, others ignore SIGTERM -> SIGKILL after the grace, status 139" {
  start=$SECONDS
  run "$A" --no-preload --launcher local -n 3 -- bash -c "trap '' TERM; if [ {rank} = 1 ]; then sleep 0.5; echo 'rank one says bye'; kill -SEGV \$\$; fi; sleep 100 # $MARK"
  ELAPSED=$((SECONDS - start))
  check_failure 139 "signal SIGSEGV"
}

@test "the first failing rank is named, not a rank that failed in the teardown" {
  # rank 2 fails first (exit 5); rank 0 exits 7 when it is told to stop.
  run "$A" --no-preload -n 3 -- bash -c "trap 'echo stopping; exit 7' TERM; if [ {rank} = 2 ]; then sleep 0.5; echo 'rank two fails'; exit 5; fi; sleep 100 & wait # $MARK"
  status_is 5
  contains "rank 2 failed first: exit code 5"
  contains "    | rank two fails"
}

@test "a missing program is refused before any rank starts; one a rank cannot start is its failure (127)" {
  run -2 "$A" --no-preload -n 2 -- ./no-such-program
  contains "program './no-such-program' not found; no rank was started"
  lacks "[rank"
  # a program that only the rank fails to start (here: removed on the way) is the rank's failure
  run -127 "$A" --no-preload -n 2 -- bash -c 'exec ./no-such-program'
  contains "failed first: exit code 127"
  contains "no-such-program"
}

@test "a bad policy is rejected before any rank starts" {
  need_policy_tool
  printf 'version: 1\ngradients:\n  - at: "k*"\n    buffer: { arg: 1, count_arg: 1 }\n    dtype: f32\n' >bad.yaml
  run "$A" --no-preload -n 2 --policy bad.yaml -- bash -c "echo RANK-RAN; touch ran-{rank}"
  status_is 2
  lacks "RANK-RAN"
  lacks "[rank"
  contains "bad.yaml:"
  contains "no rank was started"
  [ ! -e ran-0 ] && [ ! -e ran-1 ]
}

@test "--cpu with the shim: one rank of the trainer through the launcher = the trainer alone" {
  need_trainer
  need_shim
  direct=$(LD_LIBRARY_PATH=$BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$BUILD/tests/trainers/libmlp_kernels_host.so \
           "$TRAINER" --steps 5 --batch 8 2>/dev/null)
  run "$A" --cpu -n 1 -- "$TRAINER" --steps 5 --batch 8
  status_is 0
  launched=$(grep -E '^\[rank 0\] (step|checksum)' <<<"$output" | sed 's/^\[rank 0\] //')
  [ "$launched" = "$direct" ] || { echo "direct:"; echo "$direct"; echo "launched:"; echo "$launched"; false; }
}

# per_machine_run DIR POLICY-ARGS... : machines 0 and 1 (two launchers on this host), 2 ranks each,
# the trainer saving DIR/p{rank}.bin; they meet through NCCL at 127.0.0.1:<a free port> (hostnccl)
per_machine_run() {
  local d=$1 port=$(t_free_port 2) m1; shift
  mkdir -p "$d"
  local common=(--cpu -n 4 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "pm-$port" "$@"
                -- "$TRAINER" --steps 6 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' --save "$d/p{rank}.bin")
  timeout 120 "$A" --machine-rank 1 "${common[@]}" >"$d/m1.out" 2>&1 &
  m1=$!
  timeout 120 "$A" --machine-rank 0 "${common[@]}" >"$d/m0.out" 2>&1 || { cat "$d/m0.out"; return 1; }
  wait "$m1" || { cat "$d/m1.out"; return 1; }
}

@test "per-machine form with the shim: 2 launchers x 2 ranks meet through NCCL (no MPI) = 1 rank with a 4x batch" {
  need_trainer
  need_shim
  need_file "$BUILD/tests/hostnccl/libnccl.so.2" hostnccl
  need_file "$T_EQUIV" accelshim-equiv
  per_machine_run "$PWD/sync" --policy "$TOP/tests/equivalence/policies/sgd-fused.yaml"
  grep -q '^\[rank 3\] checksum' sync/m1.out
  LD_LIBRARY_PATH=$BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$BUILD/tests/trainers/libmlp_kernels_host.so \
    "$TRAINER" --steps 6 --batch 8 --save "$PWD/ref.bin" >/dev/null 2>&1
  "$T_EQUIV" --ref ref.bin --rtol 1e-5 --atol 1e-6 sync/p0.bin sync/p1.bin sync/p2.bin sync/p3.bin
  # control: without a policy nothing is synced, and the ranks' parameters differ (--sync-optional:
  # without it such a job fails, exit 7)
  per_machine_run "$PWD/nosync" --sync-optional
  ! cmp -s nosync/p0.bin nosync/p1.bin || { echo "control: unsynced ranks agree (the test proves nothing)"; false; }
}

@test "--launcher local -n 3 with the shim: the ranks meet through NCCL on this host = 1 rank with a 3x batch" {
  need_trainer
  need_shim
  need_file "$BUILD/tests/hostnccl/libnccl.so.2" hostnccl
  need_file "$T_EQUIV" accelshim-equiv
  run timeout 120 "$A" --cpu --launcher local -n 3 --policy "$TOP/tests/equivalence/policies/sgd-fused.yaml" \
    -- "$TRAINER" --steps 6 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' --save "$PWD/l{rank}.bin"
  status_is 0
  LD_LIBRARY_PATH=$BUILD/tests/hostcuda HOSTCUDA_KERNEL_LIBS=$BUILD/tests/trainers/libmlp_kernels_host.so \
    "$TRAINER" --steps 6 --batch 6 --save "$PWD/ref3.bin" >/dev/null 2>&1
  "$T_EQUIV" --ref ref3.bin --rtol 1e-5 --atol 1e-6 l0.bin l1.bin l2.bin
}

@test "per-machine form with the shim: --debug fingerprints travel through NCCL too (a rank with another count stops the job, exit 3)" {
  need_trainer
  need_shim
  need_file "$BUILD/tests/hostnccl/libnccl.so.2" hostnccl
  port=$(t_free_port 2)
  common=(--cpu -n 2 --num-machines 2 --main-process-ip 127.0.0.1 --main-process-port "$port" --job-id "fp-$port" --debug
          --policy "$TOP/tests/equivalence/policies/sgd-fused.yaml" -- "$TRAINER" --steps 4 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' --bad-count-rank 1)
  timeout 120 "$A" --machine-rank 1 "${common[@]}" >m1.out 2>&1 &
  m1=$!
  run timeout 120 "$A" --machine-rank 0 "${common[@]}"
  rc1=0; wait "$m1" || rc1=$?
  status_is 3
  contains "check_collectives: 1 rank(s) disagree with rank 0"
  [ "$rc1" -eq 3 ] || { echo "machine 1: exit $rc1"; cat m1.out; false; }
}

@test "SIGTERM to the launcher stops every rank (mpirun and own engine) and exits 143" {
  for eng in mpirun local; do
    "$A" --no-preload --launcher "$eng" -n 3 -- bash -c "echo up; sleep 100 # $MARK" >"out-$eng" 2>&1 &
    lp=$!
    for _ in $(seq 50); do [ "$(grep -c 'up$' "out-$eng")" -eq 3 ] && break; sleep 0.1; done
    start=$SECONDS
    kill -TERM "$lp"
    rc=0; wait "$lp" || rc=$?
    [ "$rc" -eq 143 ] || { echo "$eng: status $rc"; cat "out-$eng"; false; }
    [ $((SECONDS - start)) -lt 10 ]
    grep -q "stopped by SIGTERM" "out-$eng"
    gone_soon "$eng: "
  done
}

@test "ACCELSHIM_POLICY in the environment is the default policy, and it is checked too" {
  need_policy_tool
  printf 'version: 2\n' >newer.yaml
  ACCELSHIM_POLICY=newer.yaml run "$A" --no-preload -n 2 -- bash -c 'echo RANK-RAN'
  status_is 2
  lacks RANK-RAN
  contains "newer.yaml"
}

@test "per-machine form: two launchers (machine 0 and 1) run ranks 0-1 and 2-3 with the rendezvous in env" {
  prog='echo "rank={rank} local={local_rank} world={world_size} ip=$ACCELSHIM_MAIN_PROCESS_IP:$ACCELSHIM_MAIN_PROCESS_PORT m=$ACCELSHIM_MACHINE_RANK/$ACCELSHIM_NUM_MACHINES"'
  "$A" --no-preload -n 4 --num-machines 2 --machine-rank 1 --main-process-ip 127.0.0.1 -- bash -c "$prog" >m1.out 2>&1 &
  run "$A" --no-preload -n 4 --num-machines 2 --machine-rank 0 --main-process-ip 127.0.0.1 --main-process-port 29600 -- bash -c "$prog"
  wait $!
  status_is 0
  contains "[rank 0] rank=0 local=0 world=4 ip=127.0.0.1:29600 m=0/2"
  contains "[rank 1] rank=1 local=1 world=4 ip=127.0.0.1:29600 m=0/2"
  run cat m1.out
  contains "[rank 2] rank=2 local=0 world=4 ip=127.0.0.1:29500 m=1/2"
  contains "[rank 3] rank=3 local=1 world=4 ip=127.0.0.1:29500 m=1/2"
}

@test "output reaches the console as it is printed, not when the rank ends (both engines)" {
  for eng in mpirun local; do
    # each rank prints its first line, then waits (up to 30 s) for the file "go-$eng", which
    # the test makes only once both first lines reached the console
    rm -f "go-$eng"
    "$A" --no-preload --launcher "$eng" -n 2 -- bash -c "echo 'first {rank}'; for _ in \$(seq 300); do [ -e '$PWD/go-$eng' ] && break; sleep 0.1; done; echo 'second {rank}'" >"live-$eng" 2>&1 &
    lp=$!
    early=0
    for _ in $(seq 200); do
      if grep -q 'first 0' "live-$eng" && grep -q 'first 1' "live-$eng"; then early=1; break; fi
      sleep 0.1
    done
    : >"go-$eng"
    wait "$lp"
    [ "$early" = 1 ] || { echo "$eng: first lines did not arrive while the ranks waited"; cat "live-$eng"; false; }
    grep -q '\[rank 1\] second 1' "live-$eng"
  done
}

@test "--mixed-precision bf16|fp16 reaches the shim: ranks agree, results move slightly from the f32 wire" {
  need_trainer
  need_shim
  need_policy_tool
  cat >sgd.yaml <<'YAML'
version: 1
gradients:
  - at: "sgd_update"
    buffer: { arg: 1, count_arg: 2 }
    dtype: f32
parameters:
  - at: "linear_forward*"
    buffer: { arg: 1, region: allocation }
    dtype: f32
YAML
  declare -A sum
  for mp in no bf16 fp16; do
    run "$A" --cpu -n 2 --mixed-precision "$mp" --policy sgd.yaml -- "$TRAINER" --steps 5 --batch 4 \
        --shard-rank '{rank}' --shard-count '{world_size}'
    status_is 0
    hashes=$(awk '$3 == "checksum" {print $5}' <<<"$output" | sort -u)
    [ "$(wc -l <<<"$hashes")" -eq 1 ] || { echo "$mp: ranks differ"; show; false; }
    sum[$mp]=$(awk '$3 == "checksum" {print $4; exit}' <<<"$output")
  done
  echo "checksums: f32 wire ${sum[no]}, bf16 ${sum[bf16]}, fp16 ${sum[fp16]}"
  [ "${sum[bf16]}" != "${sum[no]}" ] && [ "${sum[fp16]}" != "${sum[no]}" ]
  for mp in bf16 fp16; do
    awk -v a="${sum[$mp]}" -v b="${sum[no]}" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (b < 0 ? -b : b); exit !(d <= 1e-3 * m) }'
  done
}

@test "options reach the shim: it reports the ACCELSHIM_* values the launcher set (--debug)" {
  need_trainer
  need_shim
  need_policy_tool
  printf 'version: 1\n' >p.yaml
  run "$A" --cpu -n 1 --debug --timeout 30 --env ACCELSHIM_DEVICES=1 --backend mpi --mixed-precision bf16 --policy p.yaml \
      -- "$TRAINER" --steps 1 --batch 2
  status_is 0
  for kv in ACCELSHIM_LOG=debug ACCELSHIM_TIMEOUT_S=30 ACCELSHIM_DEVICES=1 ACCELSHIM_BACKEND=mpi \
            ACCELSHIM_WIRE_OVERRIDE=bf16 "ACCELSHIM_POLICY=$T/p.yaml"; do
    contains "$kv"
  done
}

@test "mpirun killed outright: the launcher stops this host's orphaned ranks itself" {
  "$A" --no-preload -n 3 -- bash -c "echo up; sleep 100 # $MARK" >out 2>&1 &
  lp=$!
  for _ in $(seq 50); do [ "$(grep -c 'up$' out)" -eq 3 ] && break; sleep 0.1; done
  mp=''
  for p in $(leftovers); do
    case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in mpirun*) mp=$p ;; esac
  done
  [ -n "$mp" ] || { echo "no mpirun found"; cat out; false; }
  kill -KILL "$mp"
  rc=0; wait "$lp" || rc=$?
  [ "$rc" -eq 137 ] || { echo "status $rc"; cat out; false; }
  grep -q "still running: stopping them" out
  gone_soon
}

# ctrl_c_at_tty OUT N SHELL-COMMAND: run SHELL-COMMAND under `script` (a terminal of its own, so
# a Ctrl-C goes to the whole foreground process group, as at a terminal), type Ctrl-C once all N
# ranks printed "up" (at most 20 s), then keep the terminal open until the command is done (at
# most 20 s more). "trap : INT": the terminal's shell itself survives the Ctrl-C to say it is
# done, whatever shell script(1) starts ($SHELL: dash dies of SIGINT while it waits, bash not).
ctrl_c_at_tty() {
  local out=$1 n=$2 cmd=$3
  : >"$out"
  { for _ in $(seq 200); do [ "$(grep -c 'up' "$out")" -ge "$n" ] && break; sleep 0.1; done
    printf '\003'
    for _ in $(seq 200); do grep -q 'tty-done' "$out" && break; sleep 0.1; done
  } | timeout 40 script -qec "trap : INT; $cmd; echo tty-done" /dev/null >"$out" 2>&1 || true
}

@test "Ctrl-C at a terminal stops every rank once, cleanly (mpirun, own engine, one rank), status 130" {
  need_cmd script
  for eng in mpirun local one; do
    n=3; l=$eng; [ "$eng" = one ] && { n=1; l=local; }
    ctrl_c_at_tty "tty-$eng" "$n" \
      "'$A' --no-preload --launcher $l -n $n -- bash -c 'echo up; sleep 100 # $MARK'; echo launcher-status=\$?"
    grep -q 'launcher-status=130' "tty-$eng" || { echo "$eng:"; cat "tty-$eng"; false; }
    [ "$(grep -c 'stopped by SIGINT' "tty-$eng")" -eq 1 ] || { echo "$eng:"; cat "tty-$eng"; false; }
    gone_soon "$eng: "
  done
}

@test "Ctrl-C ends the launcher by SIGINT: a shell loop of runs stops at the first Ctrl-C" {
  need_cmd script
  cat >loop.sh <<EOF
for i in 1 2; do echo run-\$i; "$A" --no-preload -n 1 -- bash -c "echo up; sleep 100 # $MARK"; done
echo loop-went-on
EOF
  ctrl_c_at_tty tty-loop 1 "bash loop.sh"
  cat tty-loop
  grep -q 'run-1' tty-loop
  grep -q 'stopped by SIGINT' tty-loop
  ! grep -q 'run-2' tty-loop || { echo "the loop went on after Ctrl-C"; false; }
  ! grep -q 'loop-went-on' tty-loop
  gone_soon
}
