#!/usr/bin/env bash
# test_coll.sh — runs build/tests/collectives/test_coll under mpirun on hostcuda and reports TAP.
# Proves: allreduce (all dtype/wire combos, sum and mean, sizes 1/1000/1M+1) equals the host
# reference and is bit-identical on every rank; broadcast; barrier; fingerprint exchange (every
# rank gets every rank's words in rank order); for the mpi backend and the
# nccl backend (over the hostnccl test double, with and without ncclAvg) at N = 2, 3, 4 (and 1,
# without mpirun). Auto selection: hostnccl on the path -> nccl, no warning; hostnccl off the path
# (real NCCL absent, or present but unable to initialise without a GPU) -> mpi with exactly one
# warning per rank; NCCL missing on one rank only -> all ranks agree on mpi; a missing or broken
# library file -> mpi, one warning, MPI left to the program that initialised it. A late peer
# makes a bounded wait fail with one report. Skips (77) only when mpirun is missing.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/tests/collectives/test_coll
hostcuda=$top/build/tests/hostcuda
hostnccl=$top/build/tests/hostnccl
per_case_timeout=${TEST_COLL_TIMEOUT:-300}

if ! command -v mpirun >/dev/null 2>&1; then
  echo "# skip: mpirun not found (install openmpi-bin)"; exit 77
fi
for f in "$bin" "$hostcuda/libcuda.so.1" "$hostnccl/libnccl.so.2" \
         "$top/build/collectives/libash_cast_kernels_host.so"; do
  [ -e "$f" ] || { echo "not built: $f (run make all)"; exit 1; }
done
export HOSTCUDA_KERNEL_LIBS=$top/build/collectives/libash_cast_kernels_host.so
unset NCCL_DEBUG
mpirun_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)

n=0 failed=0
echo "1..17"
# case DESCRIPTION NP(0 = no mpirun) LD_LIBRARY_PATH ARGS...
case_() {
  local what=$1 np=$2 ldp=$3; shift 3
  local out rc
  n=$((n + 1))
  if [ "$np" -eq 0 ]; then
    out=$(LD_LIBRARY_PATH=$ldp timeout --kill-after=10 "$per_case_timeout" "$bin" "$@" 2>&1)
  else
    out=$(timeout --kill-after=10 "$per_case_timeout" mpirun "${mpirun_flags[@]}" -np "$np" \
          -x LD_LIBRARY_PATH="$ldp" -x HOSTCUDA_KERNEL_LIBS -x HOSTNCCL_VERSION "$bin" "$@" 2>&1)
  fi
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "ok $n - $what"
    echo "$out" | grep -E '^PASS' | sed 's/^/# /'
  else
    echo "not ok $n - $what (exit $rc)"
    echo "$out" | grep -vE '^\[rank [0-9]+\] (info|debug):' | tail -40 | sed 's/^/# /'
    failed=$((failed + 1))
  fi
}

both=$hostnccl:$hostcuda
export HOSTNCCL_VERSION=22809
case_ "mpi backend, N=2"  2 "$hostcuda" --backend mpi --expect mpi --expect-warnings 0
case_ "mpi backend, N=4"  4 "$hostcuda" --backend mpi --expect mpi --expect-warnings 0
case_ "nccl backend over hostnccl (ncclAvg), N=2" 2 "$both" --backend nccl --expect nccl --expect-warnings 0 \
  --expect-log "mean via ncclAvg"
case_ "nccl backend over hostnccl (ncclAvg), N=4" 4 "$both" --backend nccl --expect nccl --expect-warnings 0
case_ "mpi backend, 64 KiB staging (many chunks per allreduce/broadcast), N=2" 2 "$hostcuda" \
  --backend mpi --expect mpi --staging-bytes 65536
case_ "mpi backend, N=3 (not a power of two: bounded comparisons)" 3 "$hostcuda" --backend mpi --expect mpi --quick
case_ "nccl backend, N=3" 3 "$both" --backend nccl --expect nccl --quick
HOSTNCCL_VERSION=2708 \
case_ "nccl backend, NCCL 2.7 (sum + scale kernels), N=4" 4 "$both" --backend nccl --expect nccl --expect-warnings 0 --quick \
  --expect-log "mean via sum + scale kernel"
case_ "auto with hostnccl on the path -> nccl, no warning, N=2" 2 "$both" --backend auto --expect nccl --expect-warnings 0 --quick
case_ "auto without hostnccl (real NCCL absent or failing without a GPU) -> mpi, one warning, N=2" \
  2 "$hostcuda" --backend auto --expect mpi --expect-warnings 1 --quick
case_ "auto with the NCCL file missing -> mpi, one warning; program-owned MPI left alone, N=2" \
  2 "$both" --backend auto --nccl-library libnccl-missing.so.2 --expect mpi --expect-warnings 1 --mpi-init-first --quick
case_ "nccl requested, unavailable -> mpi with one warning, N=4" \
  4 "$hostcuda" --backend nccl --nccl-library libnccl-missing.so.2 --expect mpi --expect-warnings 1 --quick
case_ "mpi backend, world 1 (no MPI)" 0 "$hostcuda" --backend mpi --expect mpi --expect-warnings 0 --quick
case_ "auto, world 1 with hostnccl -> nccl" 0 "$both" --backend auto --expect nccl --expect-warnings 0 --quick
case_ "NCCL missing on rank 1 only -> every rank agrees on mpi (no hang), one warning each; N=4" \
  4 "$both" --backend auto --nccl-missing-on-rank 1 --expect mpi --expect-warnings 1 --quick
case_ "NCCL library file not loadable (not ELF) -> mpi, the dlerror shown in the one warning; N=2" \
  2 "$both" --backend auto --nccl-library "$top/tests/collectives/test_coll.sh" --expect mpi \
  --expect-warnings 1 --expect-log "invalid ELF header" --quick
case_ "a peer 5 s late, timeout 2 s -> ETIMEDOUT once, then ESTATE; N=3" 3 "$hostcuda" --backend mpi --timeout-case

echo "# $((n - failed)) of $n passed"
[ "$failed" -eq 0 ]
