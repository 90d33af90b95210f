#!/usr/bin/env bash
# install-deps.sh — install what accelshim needs to build and test, with apt-get, only if missing.
# Idempotent: a second run installs nothing. The Makefile runs it before any compile and reads no
# flag of these packages before (MPI_CFLAGS is computed at recipe time; tests/make checks). Uses sudo when not root. Says clearly what it could not
# install and exits non-zero then. The CUDA toolkit (nvcc, cuda.h, NCCL) is not a Debian package
# here: it is checked, not installed.
set -u

# package -> a file that proves it is installed (checked before asking apt)
declare -A want=(
  [libyaml-dev]=/usr/include/yaml.h
  [libunwind-dev]=/usr/include/libunwind.h
  [libopenmpi-dev]=/usr/include/x86_64-linux-gnu/openmpi/mpi.h   # mpi.h; the shim dlopens libmpi.so.40
  [openmpi-bin]=/usr/bin/mpirun
  [libcmocka-dev]=/usr/include/cmocka.h
  [bats]=/usr/bin/bats
  [valgrind]=/usr/bin/valgrind
  [iproute2]=/usr/sbin/ip
  [shellcheck]=/usr/bin/shellcheck
  [binutils]=/usr/bin/readelf
  [xxd]=/usr/bin/xxd
  [python3]=/usr/bin/python3
  [python3-yaml]=/usr/lib/python3/dist-packages/yaml/__init__.py   # accelerate-run --config_file
  [slurmctld]=/usr/sbin/slurmctld                         # tests/cli/launcher_slurm.bats (a one-node
  [slurmd]=/usr/sbin/slurmd                               #   cluster the test starts and stops)
  [slurm-client]=/usr/bin/salloc
  [munge]=/usr/sbin/munged
  [libxxhash-dev]=/usr/include/xxhash.h                   # shim/observe/record.c (header-only xxHash)
  [libjansson-dev]=/usr/include/jansson.h                 # tools/accelshim-compare
  [clang]=/usr/bin/clang                                  # tests/fuzz (libFuzzer target)
  [libclang-rt-14-dev]=/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
  [libzstd1]=/usr/lib/x86_64-linux-gnu/libzstd.so.1       # hostcuda: zstd-compressed fatbins (dlopen)
  [liblz4-1]=/usr/lib/x86_64-linux-gnu/liblz4.so.1        # hostcuda: LZ4-compressed fatbins (dlopen)
)

missing=()
for pkg in "${!want[@]}"; do
  if [ ! -e "${want[$pkg]}" ] && ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
    missing+=("$pkg")
  fi
done

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo -n); else
    [ ${#missing[@]} -eq 0 ] || { echo "install-deps: not root and no sudo; install by hand: ${missing[*]}" >&2; exit 1; }
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 || echo "install-deps: apt-get update failed (continuing with the cached lists)" >&2
  log=$(mktemp --suffix=.log "${TMPDIR:-/tmp}/accelshim-apt.XXXXXX")
  if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    # one by one, to name exactly what failed
    failed=()
    for pkg in "${missing[@]}"; do
      "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$pkg" >>"$log" 2>&1 || failed+=("$pkg")
    done
    if [ ${#failed[@]} -gt 0 ]; then
      echo "install-deps: could not install: ${failed[*]} (see $log)" >&2
      exit 1
    fi
  fi
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
for f in "$cuda/include/cuda.h" "$cuda/include/cudaTypedefs.h" "$cuda/bin/nvcc"; do
  [ -e "$f" ] || { echo "install-deps: $f not found: install the CUDA toolkit (13.x) or set CUDA_HOME" >&2; exit 1; }
done
[ -e "$cuda/include/nccl.h" ] || echo "install-deps: note: $cuda/include/nccl.h not found; the NCCL backend uses its own declarations" >&2
exit 0
