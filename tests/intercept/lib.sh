# shellcheck shell=bash
# lib.sh — sourced by the intercept tests: locate the repo and build outputs, skip (77) when a
# precondition is missing. Sets ROOT, B (build/tests/intercept), SHIM, HOSTCUDA_DIR and the
# environment a test program needs on hostcuda (LD_LIBRARY_PATH, HOSTCUDA_KERNEL_LIBS, ITEST_PTX).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$ROOT/build/tests/intercept
SHIM=$ROOT/build/libaccelshim.so
HOSTCUDA_DIR=$ROOT/build/tests/hostcuda

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need() { for f in "$@"; do [ -e "$f" ] || skip "$f is not built"; done; }

need "$SHIM" "$HOSTCUDA_DIR/libcuda.so.1"
export LD_LIBRARY_PATH=$HOSTCUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HOSTCUDA_KERNEL_LIBS=$B/libitest_kernels.so
export ITEST_PTX=$B/kernels.ptx
