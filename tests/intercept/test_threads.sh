#!/usr/bin/env bash
# Property: 8 threads that start together, before the shim is initialised, and resolve and call
# through every door (dlsym handle/default, cuGetProcAddress_v2 legacy and per-thread,
# cuGetProcAddress) finish (no deadlock in the lazy init, no recursion) with correct data, and the
# race detector is clean: ThreadSanitizer on a TSan build of the shim (tests/intercept/module.mk
# builds one when the compiler can). Without it the test skips (77) after the no-deadlock run.
set -u
# shellcheck source=tests/intercept/lib.sh
source "$(dirname "$0")/lib.sh"
need "$B/threads" "$ITEST_PTX" "$HOSTCUDA_KERNEL_LIBS"
LD_PRELOAD=$SHIM timeout 60 "$B/threads" 8 50 || fail "8 threads through all doors: failed or hung (rc $?)"
if [ -x "$B/tsan/threads" ] && [ -f "$B/tsan/libaccelshim.so" ]; then
    out=$(mktemp); trap 'rm -f "$out"' EXIT
    for i in 1 2 3; do   # fresh processes: the init race is different each time
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0" LD_PRELOAD=$B/tsan/libaccelshim.so \
            timeout 120 "$B/tsan/threads" 8 10 >"$out" 2>&1
        rc=$?
        if [ $rc -ne 0 ] || grep -q 'WARNING: ThreadSanitizer' "$out"; then
            head -60 "$out"; fail "ThreadSanitizer run $i: rc $rc"
        fi
    done
    tail -1 "$out"
    echo "PASS: no deadlock; ThreadSanitizer clean over 3 runs (shim instrumented except doors.c)"
    exit 0
fi
# No TSan build (the compiler cannot -fsanitize=thread): helgrind is no substitute here, it does not
# model C11 acquire/release, so the shim's lock-free publication (ash_hook_ready, the kernel cache)
# shows as ~90 false "possible data race" reports. The deadlock check above passed; the race check
# is skipped, not passed.
echo "SKIP: no ThreadSanitizer build of the shim; race check not run (the no-deadlock run passed)"
exit 77
