#!/usr/bin/env bash
# Property: every launch hook accepts a CUfunction or a CUkernel (the kernel runs), and the kernel
# cache learns each handle's name, parameter count, kind and launch count on its first launch.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/kernel_handles"
LD_PRELOAD=$SHIM "$B/kernel_handles" || fail "kernel handles"
echo "PASS: CUfunction and CUkernel launches through every launch hook; cache learned them"
