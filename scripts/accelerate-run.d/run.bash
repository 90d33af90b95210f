# run.bash — starting the planned ranks (run_local: the launcher's own engine; run_engine: mpirun or
# srun), stopping them (signals, teardown after the first failure, leftovers of a dead engine) and
# the root-cause report. Invariant: when a rank fails, every other rank is told to stop and the
# earliest failure is the one reported. Single-threaded bash; signal traps set STOPPING. Sourced by
# scripts/accelerate-run; callers: launch_main. Not executable on its own.
# shellcheck shell=bash

# Running.
ENGINE_PID='' FILTER_PID='' FILTER2_PID='' COLLECTOR_PID='' RANK_PIDS=() STOPPING=0 STOP_SIG=TERM REPORT_CAUSE=''
STALL_BLOCK='' STALL_CAUSE='' STALL_NOTE='' STALL_STUCK=''
WATCH_PID=''

# The job's watcher (job-watch): ends the job and removes the run folder if this launcher is killed
# outright (SIGKILL: no trap runs). Everything started after this carries ACCELERATE_RUN_JOB=RUN_DIR
# in its environment, which is how the watcher finds it. stop_watch: this launcher ends normally.
start_watch() {
  export ACCELERATE_RUN_JOB=$P_RUN_DIR
  command -v perl >/dev/null 2>&1 || return 0
  perl "$L_HELPERS/job-watch" "$P_RUN_DIR" "$ASR_GRACE_S" </dev/null >/dev/null &
  WATCH_PID=$!
}
stop_watch() {
  [ -n "$WATCH_PID" ] || return 0
  kill -TERM "$WATCH_PID" 2>/dev/null
  reap "$WATCH_PID"
  WATCH_PID=''
}

# reap PID...: wait for each PID that still exists (running or a zombie). Never a bare `wait PID`
# on a process that is gone: after a signal trap ran during a wait, bash can keep a reaped child
# as running, and `wait` on it then blocks in wait4(-1) until every other child ends (the job's
# watcher never does: a launcher stopped by SIGTERM was seen waiting so, for good).
reap() {
  local p
  for p in "$@"; do
    while kill -0 "$p" 2>/dev/null; do
      wait "$p" 2>/dev/null && break
      [ -d "/proc/$p" ] || break
      sleep 0.05
    done
  done
}

# Stop the ranks of the launcher's own engine: SIGTERM to each rank's process group, SIGKILL
# after the grace period.
stop_local_ranks() {
  local p i
  for p in "${RANK_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
  for ((i = 0; i < ASR_GRACE_S * 10; i++)); do
    local alive=0
    for p in "${RANK_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return
    sleep 0.1
  done
  for p in "${RANK_PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
}

# Last resort for mpirun/srun: signal the ranks of this host that are still running although the
# engine is gone or hung (their wrappers recorded "host pid pgid"; no .exit file yet). Only a
# process that is still that wrapper (checked in /proc) is signalled; its process group only when
# the wrapper leads it (as under orted).
signal_recorded_ranks() {
  local sig=$1 f h pid pgid me n=0 r
  me=${HOSTNAME:-$(uname -n)}
  for f in "$P_RUN_DIR"/rank-*.pid; do
    [ -f "$f" ] || continue
    r=${f##*/rank-}; r=${r%.pid}
    [ -f "$P_RUN_DIR/rank-$r.exit" ] && continue
    read -r h pid pgid <"$f" || continue
    [ "$h" = "$me" ] || continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "rank-wrapper" || continue
    grep -qF -- "$P_RUN_DIR" "/proc/$pid/cmdline" 2>/dev/null || continue
    n=$((n + 1))
    if [ "$pgid" = "$pid" ]; then kill -s "$sig" -- "-$pgid" 2>/dev/null; else kill -s "$sig" "$pid" 2>/dev/null; fi
  done
  [ "$n" -gt 0 ]
}
reap_leftover_ranks() {
  local i
  signal_recorded_ranks TERM || return 0
  warn "the $P_ENGINE engine ended but some ranks on this host were still running: stopping them"
  for ((i = 0; i < ASR_GRACE_S * 10; i++)); do
    sleep 0.1
    signal_recorded_ranks 0 || return 0
  done
  signal_recorded_ranks KILL
  return 0
}

run_local() {
  local r lr pid n_done=0 rc failed=0 cmd
  if [ "$P_LOCAL_N" -eq 1 ] && [ -t 0 ]; then
    # One rank at a terminal: run it in the foreground, so it can read the terminal and Ctrl-C
    # reaches it directly (a background process group would be stopped by SIGTTIN).
    r=$P_RANK0
    "${P_WRAP[@]}" --run-dir "$P_RUN_DIR" --rank "$r" --local-rank 0 --world-size "$P_N" \
      --env "ACCELSHIM_RANK=$r" --env "ACCELSHIM_LOCAL_RANK=0" --env "ACCELSHIM_WORLD_SIZE=$P_N" -- "${O_PROG[@]}"
    return 0
  fi
  # A second line of defence besides job-watch: each rank wrapper gets SIGTERM when the launcher
  # dies however it dies (PR_SET_PDEATHSIG, util-linux setpriv); the wrapper stops its program.
  local death=()
  setpriv --help 2>/dev/null | grep -q -- --pdeathsig && death=(setpriv --pdeathsig TERM --)
  set -m      # every rank in its own process group, so a stop reaches its children too
  for ((lr = 0; lr < P_LOCAL_N; lr++)); do
    r=$((P_RANK0 + lr))
    cmd=("${death[@]}" "${P_WRAP[@]}" --run-dir "$P_RUN_DIR" --rank "$r" --local-rank "$lr" --world-size "$P_N"
         --env "ACCELSHIM_RANK=$r" --env "ACCELSHIM_LOCAL_RANK=$lr" --env "ACCELSHIM_WORLD_SIZE=$P_N"
         -- "${O_PROG[@]}")
    if [ "$P_LOCAL_N" -eq 1 ]; then "${cmd[@]}" <&0 & else "${cmd[@]}" </dev/null & fi
    RANK_PIDS+=($!)
  done
  set +m
  exec 6>&2 2>/dev/null   # the shell's own job notices ("... Killed") while we wait and stop
  while [ "$n_done" -lt "$P_LOCAL_N" ]; do
    wait -n -p pid "${RANK_PIDS[@]}" 2>/dev/null; rc=$?
    [ -n "${pid:-}" ] || { [ $STOPPING = 1 ] && break; continue; }
    n_done=$((n_done + 1))
    if [ "$rc" -ne 0 ] && [ $failed = 0 ] && [ $STOPPING = 0 ]; then
      failed=1
      stop_local_ranks
      break
    fi
    pid=''
  done
  reap "${RANK_PIDS[@]}"
  jobs >/dev/null         # consume the notices now, while stderr still goes nowhere
  exec 2>&6 6>&-
  return 0
}

# The output collector (output-collector): the one process that writes rank lines to our stdout
# and stderr, whole lines only. Started before any rank; its socket RUN_DIR/io.sock exists once it
# listens (waited for, at most 5 s; without it, ranks write through the engine as before).
start_collector() {
  local sock=$P_RUN_DIR/io.sock i
  command -v perl >/dev/null 2>&1 || return 0
  [ ${#sock} -lt 100 ] || return 0          # sun_path holds 108 bytes
  perl "$L_HELPERS/output-collector" "$sock" </dev/null &
  COLLECTOR_PID=$!
  for ((i = 0; i < 250; i++)); do
    [ -S "$sock" ] && return 0
    kill -0 "$COLLECTOR_PID" 2>/dev/null || break
    sleep 0.02
  done
  warn "warning: the output collector did not start; rank output goes through the $P_ENGINE engine"
}
# Every rank has ended: the collector drains what is still coming (bounded) and exits.
stop_collector() {
  [ -n "$COLLECTOR_PID" ] || return 0
  kill -TERM "$COLLECTOR_PID" 2>/dev/null
  reap "$COLLECTOR_PID"
  COLLECTOR_PID=''
}

# One of the engine's two output streams (ASR_STREAM out or err), line by line as it comes
# (engine-filter in perl, else this bash loop; not awk: mawk holds pipe input back): rank lines
# pass through to the same stream (ranks on hosts that cannot reach the collector); marker lines
# from hosts that do not see the run directory become its files; the engine's own lines go to
# stderr as "[mpirun] ...".
engine_filter() {
  if command -v perl >/dev/null 2>&1; then exec perl "$L_HELPERS/engine-filter"; fi
  local l f r code
  while IFS= read -r l || [ -n "$l" ]; do
    case $l in
      $'\001accelshim-run exit '*)
        l=${l#$'\001accelshim-run exit '}; read -r _ r _ code _ <<<"$l"
        printf '%s\n' "$l" >"$ASR_DIR/rank-$r.exit"; [ "$code" = 0 ] || printf '%s\n' "$l" >"$ASR_DIR/rank-$r.fail" ;;
      $'\001accelshim-run tail '*)
        l=${l#$'\001accelshim-run tail '}; f=${l%% *}; printf '%s\n' "${l#* }" >>"$ASR_DIR/rank-$f.tail" ;;
      '[rank '[0-9]*'] '*) if [ "$ASR_STREAM" = err ]; then printf '%s\n' "$l" >&2; else printf '%s\n' "$l"; fi ;;
      *) printf '[%s] %s\n' "$ASR_ENGINE" "$l" >&2 ;;
    esac
  done
}

run_engine() {
  local t_fail='' t_term='' t_alive=$EPOCHREALTIME now rc
  exec 5> >(ASR_DIR=$P_RUN_DIR ASR_ENGINE=$P_ENGINE ASR_STREAM=out ASR_TAGGED=$P_TAGGED engine_filter)
  FILTER_PID=$!
  exec 8> >(ASR_DIR=$P_RUN_DIR ASR_ENGINE=$P_ENGINE ASR_STREAM=err ASR_TAGGED=$P_TAGGED engine_filter)
  FILTER2_PID=$!
  env "${P_ENV[@]}" "${P_CMD[@]}" "${P_WRAP[@]}" --run-dir "$P_RUN_DIR" -- "${O_PROG[@]}" <&0 >&5 2>&8 &
  ENGINE_PID=$!
  echo "$ENGINE_PID" >"$P_RUN_DIR/engine.pid"   # job-watch: Open MPI's session folder is named by it
  exec 5>&- 8>&-
  while kill -0 "$ENGINE_PID" 2>/dev/null; do
    t_alive=$EPOCHREALTIME
    sleep 0.2
    now=${EPOCHREALTIME%.*}
    if [ -z "$t_fail" ] && compgen -G "$P_RUN_DIR/rank-*.fail" >/dev/null; then t_fail=$now; fi
    [ -n "$t_fail" ] || [ $STOPPING = 1 ] || continue
    [ -n "$t_fail" ] || t_fail=$now
    if [ -z "$t_term" ] && [ $((now - t_fail)) -ge $ASR_ENGINE_GRACE_S ]; then
      kill -TERM "$ENGINE_PID" 2>/dev/null; t_term=$now
    elif [ -n "$t_term" ] && [ $((now - t_term)) -ge $ASR_GRACE_S ]; then
      kill -KILL "$ENGINE_PID" 2>/dev/null
      break
    fi
  done 2>/dev/null     # the shell's job notices ("... Killed") are not ours to show
  { wait "$ENGINE_PID"; rc=$?; jobs >/dev/null; } 2>/dev/null   # no shell notice ("... Killed")
  # Ranks that fail only because we stop them below are not a root cause: set their records aside.
  local before f
  before=$(cd "$P_RUN_DIR" && ls rank-*.fail 2>/dev/null)
  reap_leftover_ranks
  for f in "$P_RUN_DIR"/rank-*.fail; do
    [ -f "$f" ] || continue
    grep -qxF "${f##*/}" <<<"$before" || mv -f "$f" "$f.reaped"
  done
  # The engine killed outright (SIGKILL: never its own status) is the cause; a rank that ended by
  # SIGTERM once the engine was last seen alive was stopped because of it (its record may have
  # come before the snapshot above, seen under load), not a cause of its own.
  if [ "$rc" = 137 ] && [ $STOPPING = 0 ]; then
    local t r h code sig
    for f in "$P_RUN_DIR"/rank-*.fail; do
      [ -f "$f" ] || continue
      read -r t r h code sig <"$f" || continue
      [ "${sig:-}" = SIGTERM ] && awk -v a="$t" -v b="$t_alive" 'BEGIN { exit !(a >= b) }' && mv -f "$f" "$f.reaped"
    done
  fi
  # The filter ends when every writer (engine, ranks' daemons) has closed the pipe.
  local i
  for ((i = 0; i < 30; i++)); do
    kill -0 "$FILTER_PID" 2>/dev/null || kill -0 "$FILTER2_PID" 2>/dev/null || break
    sleep 0.1
  done
  ENGINE_RC=$rc
}

# shellcheck disable=SC2317  # called from traps
on_signal() {
  local s=$1 p
  STOPPING=1
  STOP_SIG=$s
  # mpirun/srun: a Ctrl-C from the terminal reached the engine already (same process group), and a
  # second SIGINT makes mpirun quit at once without stopping its ranks: forward only other signals.
  # The wait loop in run_engine sends SIGTERM 3 s later if the engine is still running.
  if [ -n "$ENGINE_PID" ] && [ "$s" != INT ]; then kill -s "$s" "$ENGINE_PID" 2>/dev/null; fi
  for p in "${RANK_PIDS[@]}"; do kill -s "$s" -- "-$p" 2>/dev/null; done
}

# ", last line: ..." of a rank's tail file, or nothing.
last_line() {
  local l
  [ -s "$1" ] || return 0
  l=$(tail -n 1 "$1")
  printf ', last line: %s' "${l:0:160}"
}

# Between two tries of --max-restarts: nothing of the last one is left running or remembered.
reset_run_state() {
  ENGINE_PID='' FILTER_PID='' FILTER2_PID='' COLLECTOR_PID='' RANK_PIDS=() REPORT_CAUSE=''
  STALL_BLOCK='' STALL_CAUSE='' STALL_NOTE='' STALL_STUCK=''
}

# progress R: rank R's progress record, RUN_DIR/progress-R, which the shim rewrites at every sync
# point it begins ("seq N<TAB>sync point", padded with spaces), in PG_SEQ and PG_WHAT. Status 0:
# read; 1: R ran with this run directory (its rank-R.pid) but has no record: it began no sync
# point (PG_SEQ=-1); 2: not known here (another host, or a record torn or not the shim's).
progress() {
  local f=$P_RUN_DIR/progress-$1 rec=''
  PG_SEQ='' PG_WHAT=''
  if [ -f "$f" ]; then
    IFS= read -r rec <"$f" || [ -n "$rec" ] || return 2
    [[ $rec =~ ^seq\ ([0-9]{1,18})$'\t'(.*)$ ]] || return 2
    PG_SEQ=$((10#${BASH_REMATCH[1]}))
    PG_WHAT=${BASH_REMATCH[2]}
    PG_WHAT=${PG_WHAT%"${PG_WHAT##*[! ]}"}
    return 0
  fi
  [ -f "$P_RUN_DIR/rank-$1.pid" ] && { PG_SEQ=-1; return 1; }
  return 2
}

# rank_list R...: "0-3, 5, 7" (ranks in ascending order)
rank_list() {
  local out='' lo='' prev='' r
  for r in "$@" ''; do
    if [ -n "$prev" ] && [ -n "$r" ] && [ "$r" -eq $((prev + 1)) ]; then prev=$r; continue; fi
    if [ -n "$lo" ]; then
      out+=${out:+, }$lo; [ "$prev" != "$lo" ] && out+=$([ $((prev - lo)) -eq 1 ] && echo ", " || echo -)$prev
    fi
    lo=$r prev=$r
  done
  printf '%s' "$out"
}

# A timeout (exit 4 on rank FIRED: its watchdog, or its deadline at exit): the STUCK rank is the
# one the others waited for, not the rank whose timer fired. At exit, FIRED's own line names the
# ranks that did not reach the end; otherwise the progress records do: the rank last seen at the
# earliest sequence (or that began no sync point). Every other rank with a record was waiting.
# Sets STALL_BLOCK (the lines of the root-cause block, without its frame), STALL_CAUSE and
# STALL_STUCK, status 0, when a stuck rank is found; otherwise status 1, and STALL_NOTE says why
# none is behind when every rank seen is at the same sequence.
stall_analysis() {
  local fired=$1 host=$2 q min='' max='' n_rec=0 unknown=() stuck=() s at what step l exit_list=''
  local -A seq=() whatq=() is_stuck=()
  STALL_BLOCK='' STALL_CAUSE='' STALL_NOTE='' STALL_STUCK=''
  for ((q = 0; q < P_N; q++)); do
    progress "$q"
    case $? in 0) n_rec=$((n_rec + 1)) ;; 1) ;; *) unknown+=("$q"); continue ;; esac
    seq[$q]=$PG_SEQ whatq[$q]=$PG_WHAT
    if [ -z "$min" ] || [ "$PG_SEQ" -lt "$min" ]; then min=$PG_SEQ; fi
    if [ -z "$max" ] || [ "$PG_SEQ" -gt "$max" ]; then max=$PG_SEQ; fi
  done
  # where FIRED waited, from its own last lines: the watchdog's sequence (its record may have moved
  # on after the abort: the program goes on until the process ends), or the end of the job. FIRED
  # may have no watchdog line (its collective failed because another rank's watchdog aborted
  # first): then the line of the first other rank that has one; none: FIRED's record.
  at="sequence ${seq[$fired]:-$max}"
  for ((q = -1; q < P_N; q++)); do
    [ "$q" = "$fired" ] && continue
    l=$P_RUN_DIR/rank-$([ "$q" -lt 0 ] && echo "$fired" || echo "$q").tail
    [ -f "$l" ] || continue
    s=$(sed -n 's/.*ERROR watchdog: .*, sequence number \([0-9]\{1,18\}\), has not completed after .*/\1/p' "$l" | tail -n 1)
    [ -n "$s" ] && { at="sequence $s"; break; }
  done
  l=$P_RUN_DIR/rank-$fired.tail
  if [ -f "$l" ]; then
    grep -q 'ERROR watchdog: at exit:' "$l" && at="the end of the job"
    exit_list=$(sed -n 's/.*ERROR exit: rank(s) \([0-9][0-9, ]*\).* did not reach the end of the job\( within\|:\) .*/\1/p' "$l" | tail -n 1)
  fi
  if [ -n "$exit_list" ]; then
    at="the end of the job"
    for q in ${exit_list//,/ }; do [ "$q" -lt "$P_N" ] 2>/dev/null && stuck+=("$q"); done
  fi
  if [ ${#stuck[@]} -eq 0 ]; then
    [ "$n_rec" -gt 0 ] && [ ${#seq[@]} -ge 2 ] || return 1
    if [ "$min" -eq "$max" ]; then
      STALL_NOTE="every rank$([ ${#unknown[@]} -gt 0 ] && echo " whose record is here") began sequence $max: none is behind (they issued different collectives, or the transport is stuck)"
      return 1
    fi
    for ((q = 0; q < P_N; q++)); do [ "${seq[$q]:-x}" = "$min" ] && stuck+=("$q"); done
  fi
  for q in "${stuck[@]}"; do is_stuck[$q]=1; done
  if [ ${#stuck[@]} -eq 1 ]; then
    STALL_BLOCK="rank ${stuck[0]} is stuck: it did not arrive at $at"
  else
    STALL_BLOCK="ranks $(rank_list "${stuck[@]}") are stuck: they did not arrive at $at"
  fi
  STALL_BLOCK+=$'\n'"the job timed out: rank $fired's $([ -n "$exit_list" ] && echo "deadline at exit" || echo watchdog) fired first: exit code 4 (host $host)"
  local seen
  for q in "${stuck[@]}"; do
    if [ -z "${seq[$q]:-}" ]; then seen="no progress record here (another host?)"
    elif [ "${seq[$q]}" -lt 0 ]; then seen="before any sync point (no progress record)"
    else
      what=${whatq[$q]} step=''
      [[ $what =~ (^|[^[:alnum:]_])step[\ =:]?([0-9]+) ]] && step=" (step ${BASH_REMATCH[2]})"
      seen="at sequence ${seq[$q]}$step: ${what:0:240}"
    fi
    STALL_BLOCK+=$'\n'"rank $q was last seen $seen"
    if [ -z "$STALL_STUCK" ]; then
      if [ ${#stuck[@]} -eq 1 ]; then STALL_CAUSE="rank $q stuck, last seen $seen"
      else STALL_CAUSE="ranks $(rank_list "${stuck[@]}") stuck; rank $q last seen $seen"; fi
    fi
    STALL_STUCK=${STALL_STUCK:-$q}
  done
  # the ranks waiting for it (every other rank with a record), grouped by the sequence they were
  # last seen at
  local waits='' ranks
  for s in $(for q in "${!seq[@]}"; do [ -n "${is_stuck[$q]:-}" ] || echo "${seq[$q]}"; done | sort -nu); do
    ranks=()
    for ((q = 0; q < P_N; q++)); do [ "${seq[$q]:-x}" = "$s" ] && [ -z "${is_stuck[$q]:-}" ] && ranks+=("$q"); done
    if [ "$s" -lt 0 ]; then waits+="${waits:+; }$(rank_list "${ranks[@]}") (before any sync point)"
    else waits+="${waits:+; }$(rank_list "${ranks[@]}") (last at sequence $s)"; fi
  done
  STALL_BLOCK+=$'\n'"ranks waiting for it: ${waits:-$fired}"
  [ ${#unknown[@]} -gt 0 ] && STALL_BLOCK+=$'\n'"no progress record here for ranks $(rank_list "${unknown[@]}") (another host?)"
  STALL_CAUSE="the job timed out at $at: ${STALL_CAUSE:0:300}; waiting: ${waits:-$fired}"
  return 0
}

# The root-cause block: the first rank that failed (earliest timestamp), how, where, its last lines;
# for a timeout (exit 4), the stuck rank its peers waited for (stall_analysis).
report() {
  local f best='' best_t='' t r h code sig status l
  if [ $STOPPING = 1 ]; then      # we were told to stop: the ranks' ends are our doing
    warn "stopped by SIG$STOP_SIG; all ranks were told to stop"
    return $((128 + $(kill -l "$STOP_SIG")))
  fi
  for f in "$P_RUN_DIR"/rank-*.fail; do
    [ -f "$f" ] || continue
    read -r t r h code sig <"$f" || continue
    if [ -z "$best_t" ] || awk -v a="$t" -v b="$best_t" 'BEGIN { exit !(a < b) }'; then
      best_t=$t; best="$r $h $code ${sig:-}"
    fi
  done
  # A crash or a kill is a cause, and a peer's failed collective right after it is its effect (nccl:
  # the survivor sees the closed connection and may end first): a rank that died of a crash signal,
  # or of SIGKILL (from outside: the launcher's own teardown sends SIGTERM first and SIGKILL only
  # after its grace), within 2 s of the earliest failure is the one reported.
  if [ -n "$best" ] && [ -z "$(cut -d' ' -f4 <<<"$best")" ]; then
    for f in "$P_RUN_DIR"/rank-*.fail; do
      [ -f "$f" ] || continue
      read -r t r h code sig <"$f" || continue
      case ${sig:-} in SIGSEGV|SIGBUS|SIGFPE|SIGILL|SIGABRT|SIGKILL) ;; *) continue ;; esac
      if awk -v a="$t" -v b="$best_t" 'BEGIN { exit !(a - b < 2) }'; then best="$r $h $code $sig"; break; fi
    done
  fi
  if [ -z "$best" ]; then
    if [ "${ENGINE_RC:-0}" -ne 0 ]; then
      warn "the $P_ENGINE engine failed with exit status $ENGINE_RC before any rank reported a failure"
      REPORT_CAUSE="the $P_ENGINE engine failed with exit status $ENGINE_RC"
      return "$ENGINE_RC"
    fi
    return 0
  fi
  read -r r h code sig <<<"$best"
  # exit 7 (the shim: no gradient rule fired) is the whole job's state, not one rank's doing: the
  # lowest rank that says so is shown, and the block says how many ranks did.
  local unsynced=0
  if [ -z "$sig" ] && [ "$code" = 7 ]; then
    for f in "$P_RUN_DIR"/rank-*.fail; do
      [ -f "$f" ] || continue
      read -r t r2 h2 code2 sig <"$f" || continue
      [ "$code2" = 7 ] && [ -z "$sig" ] || continue
      unsynced=$((unsynced + 1))
      [ "$r2" -lt "$r" ] && { r=$r2; h=$h2; }
    done
    sig=''
  fi
  if [ -z "$sig" ] && [ "$code" = 4 ] && stall_analysis "$r" "$h"; then
    REPORT_CAUSE=$STALL_CAUSE
    {
      echo "============================================================================"
      while IFS= read -r l; do echo "$ASR_NAME: $l"; done <<<"$STALL_BLOCK"
      if [ -s "$P_RUN_DIR/rank-$STALL_STUCK.tail" ]; then
        echo "$ASR_NAME: last lines of rank $STALL_STUCK:"
        tail -n "$ASR_TAIL_LINES" "$P_RUN_DIR/rank-$STALL_STUCK.tail" | sed 's/^/    | /'
      else
        echo "$ASR_NAME: rank $STALL_STUCK printed nothing"
      fi
      if [ -s "$P_RUN_DIR/rank-$r.tail" ]; then
        echo "$ASR_NAME: last lines of rank $r (its watchdog):"
        tail -n 3 "$P_RUN_DIR/rank-$r.tail" | sed 's/^/    | /'
      fi
      echo "$ASR_NAME: the other ranks were stopped (SIGTERM, then SIGKILL after ${ASR_GRACE_S}s)"
      [ -n "$P_LOG_IDX" ] && echo "$ASR_NAME: full logs: ${P_WRAP[P_LOG_IDX + 1]}/rank-R.log"
      echo "$ASR_NAME: exit status $code"
      echo "============================================================================"
    } >&2
    return "$code"
  fi
  if [ -n "$sig" ]; then status="signal $sig"; else status="exit code $code"; fi
  local head="rank $r failed first: $status (host $h)"
  [ "$unsynced" -gt 0 ] && head="the ranks are not synchronised: no gradient rule fired (exit code 7 on $unsynced of $P_N ranks; rank $r's lines below, host $h)"
  REPORT_CAUSE="$head$(last_line "$P_RUN_DIR/rank-$r.tail")"
  {
    echo "============================================================================"
    echo "$ASR_NAME: $head"
    [ -n "${STALL_NOTE:-}" ] && [ "$code" = 4 ] && echo "$ASR_NAME: $STALL_NOTE"
    if [ -s "$P_RUN_DIR/rank-$r.tail" ]; then
      echo "$ASR_NAME: last lines of rank $r:"
      tail -n "$ASR_TAIL_LINES" "$P_RUN_DIR/rank-$r.tail" | sed 's/^/    | /'
    else
      echo "$ASR_NAME: rank $r printed nothing"
    fi
    [ "$P_N" -gt 1 ] && [ "$unsynced" -lt "$P_N" ] && echo "$ASR_NAME: the other ranks were stopped (SIGTERM, then SIGKILL after ${ASR_GRACE_S}s)"
    [ -n "$P_LOG_IDX" ] && echo "$ASR_NAME: full logs: ${P_WRAP[P_LOG_IDX + 1]}/rank-R.log"
    echo "$ASR_NAME: exit status $code"
    echo "============================================================================"
  } >&2
  return "$code"
}

# --trace DIR: the ranks' DIR/trace-R.json (pid = rank) become DIR/trace.json, one track per
# rank; a rank's file cut short by a crash is read up to its last complete event.
merge_traces() {
  local files=() f out
  for f in "$P_TRACE_DIR"/trace-[0-9]*.json; do [ -f "$f" ] && files+=("$f"); done
  if [ ${#files[@]} -eq 0 ]; then warn "--trace: no rank wrote a trace in $P_TRACE_DIR"; return 0; fi
  if ! command -v python3 >/dev/null 2>&1; then
    warn "--trace: python3 not found; the per-rank traces in $P_TRACE_DIR are not merged"; return 0
  fi
  if out=$(python3 "$L_HELPERS/trace-merge" "$P_TRACE_DIR/trace.json" "${files[@]}" 2>&1); then
    warn "$out"
  else
    warn "--trace: merging failed ($out); the per-rank traces are in $P_TRACE_DIR"
  fi
}

