# shellcheck shell=bash
# shellcheck disable=SC2034  # read by the tests that source this file
# lib.sh — sourced by the intercept tests, on the shared library tests/lib.sh: the build outputs
# they run, skip (77) when one is missing. Sets ROOT, B (build/tests/intercept), SHIM,
# HOSTCUDA_DIR and the environment a test program needs on hostcuda (LD_LIBRARY_PATH,
# HOSTCUDA_KERNEL_LIBS, ITEST_PTX); skip/fail/need/no/show are the shared t_skip/t_fail/t_need/
# t_no/t_tails (a test of several cases counts its failures in T_FAILS).
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ROOT=$T_TOP
B=$T_BUILD/tests/intercept
SHIM=$T_SHIM
HOSTCUDA_DIR=$T_HOSTCUDA_DIR

skip() { t_skip "$@"; }
fail() { t_fail "$@"; }
need() { t_need "$@"; }
no() { t_no "$@"; }
show() { t_tails "$@"; }

t_need "$SHIM" "$HOSTCUDA_DIR/libcuda.so.1"
export LD_LIBRARY_PATH=$HOSTCUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HOSTCUDA_KERNEL_LIBS=$B/libitest_kernels.so
export ITEST_PTX=$B/kernels.ptx
