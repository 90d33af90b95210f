# slurm_cluster.bash — a one-node Slurm cluster in a temporary folder, for launcher_slurm.bats.
# slurm_up DIR: writes a munge key, slurm.conf (free ports, this host as the only node, CPUs as
# nproc, proctrack/linuxproc, no accounting, no cgroups) into DIR, starts munged, slurmctld and
# slurmd as root in the foreground mode (-D) in the background, and waits (bounded, 30 s) until
# the node is idle. Returns 0, or 77 with the reason in SLURM_WHY when the daemons cannot run
# here. slurm_down: stops them (SIGTERM, then SIGKILL) by their recorded pids only.
# Exports SLURM_CONF for srun/salloc/sbatch. Callers: tests/cli/launcher_slurm.bats.
# shellcheck shell=bash disable=SC2034  # SLURM_WHY and SLURM_PIDS are read by the test file

SLURM_PIDS=()
SLURM_WHY=''

slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

slurm_up() {
  local d=$1 host cpus p1 p2 pid c
  for c in munged slurmctld slurmd srun salloc sinfo scancel python3; do
    command -v "$c" >/dev/null 2>&1 || { SLURM_WHY="$c not installed (scripts/install-deps.sh installs slurmctld, slurmd, munge)"; return 77; }
  done
  [ "$(id -u)" = 0 ] || { SLURM_WHY="the daemons need root here (slurmd starts jobs as their user)"; return 77; }
  host=$(hostname -s)
  cpus=$(nproc)
  if ! p1=$(slurm_free_port) || ! p2=$(slurm_free_port); then SLURM_WHY="no free TCP port"; return 77; fi
  mkdir -p "$d/state" "$d/spool" "$d/munge" "$d/log" && chmod 700 "$d/munge"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none && chmod 600 "$d/munge/munge.key"
  cat >"$d/slurm.conf" <<CONF
ClusterName=asrtest
SlurmctldHost=$host
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
KillWait=3
MinJobAge=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  export SLURM_CONF=$d/slurm.conf
  munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" \
    --pid-file="$d/munge/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/seed" \
    >"$d/log/munged.out" 2>&1 || { SLURM_WHY="munged did not start: $(tail -n 2 "$d/log/munged.out" "$d/log/munged.log" 2>/dev/null | tr '\n' ' ')"; return 77; }
  for _ in $(seq 50); do [ -s "$d/munge/munged.pid" ] && break; sleep 0.1; done
  pid=$(cat "$d/munge/munged.pid" 2>/dev/null) && SLURM_PIDS+=("$pid")
  slurmctld -D -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$host" >"$d/log/slurmd.out" 2>&1 &
  SLURM_PIDS+=($!)
  for _ in $(seq 300); do
    if [ "$(timeout 5 sinfo -h -N -o %t 2>/dev/null)" = idle ]; then return 0; fi
    for pid in "${SLURM_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || break 2; done
    sleep 0.1
  done
  SLURM_WHY="the node did not become idle within 30 s: $(tail -n 3 "$d/log/slurmctld.log" "$d/log/slurmd.log" "$d/log/slurmctld.out" "$d/log/slurmd.out" 2>/dev/null | tr '\n' ' ' | cut -c1-600)"
  slurm_down
  return 77
}

slurm_down() {
  local pid alive
  for pid in "${SLURM_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for pid in "${SLURM_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${SLURM_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  SLURM_PIDS=()
}
