#!/usr/bin/env bash
# Property: under the shim, dlsym(RTLD_NEXT, ...) resolves relative to the calling object (as
# without the shim), dlerror() reports a miss and not a hit, and RTLD_NEXT lookups of driver names
# hand out the shim's hook from the program and from a library loaded after the shim.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/dlsym_next"
echo "--- without the shim"
"$B/dlsym_next" || fail "baseline (no shim) failed: the test itself is wrong"
echo "--- with the shim"
LD_PRELOAD=$SHIM "$B/dlsym_next" --shim || fail "RTLD_NEXT is not caller-relative under the shim"
echo "PASS: RTLD_NEXT is caller-relative under the shim"
