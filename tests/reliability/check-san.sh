#!/usr/bin/env bash
# check-san.sh — `make check-san`: the unit, routing and equivalence tests under ASan + UBSan.
# Builds a COPY of the tree (build/san/tree, so the normal build/ is untouched) with
# SAN=address,undefined and runs there: the policy/alloc/collectives unit tests, the intercept
# (routing) tests, the trainer tests, the equivalence suite (mpi) and the reliability tests. The
# ThreadSanitizer build of the shim and of the routing threads test is part of plain `make test`
# (tests/intercept/test_threads.sh). A preloaded ASan library does not come first in the initial
# library list, so the runtime is preloaded into the test processes' environment through
# ASAN_OPTIONS=verify_asan_link_order=0 (leak checking off: MPI and the driver keep memory).
# Not here: test_crash.sh (UBSan rightly stops the trainer's deliberate NULL store first),
# test_no_constructor.sh (instrumentation adds module constructors), fuzz (its own ASan build).
# intercept/doors.c stays uninstrumented (tests/reliability/module.mk): sanitizer runtimes call
# dlsym, ours, before they are initialised. Exit: the test runner's.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tree=$top/build/san/tree
san=${SAN:-address,undefined}
mkdir -p "$tree"
echo "check-san: copying the tree to $tree"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^build' |
        tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$tree" -xf -)
else
    (cd "$top" && tar --exclude=./build --exclude=./.git -cf - . | tar -C "$tree" -xf -)
fi || { echo "check-san: copy failed"; exit 1; }
mkdir -p "$tree/build" && touch "$tree/build/.deps-installed"
echo "check-san: building with SAN=$san (this takes a few minutes on 2 cores)"
make -C "$tree" -j2 -o build/.deps-installed SAN="$san" ITEST_TSAN_OK=no FUZZ_OK=no all >"$top/build/san/build.log" 2>&1 \
    || { tail -n 30 "$top/build/san/build.log"; echo "check-san: build failed"; exit 1; }
# handle_segv=0 etc.: tests that expect a real SIGSEGV (hostcuda's strict mode, crash reports)
export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:exitcode=86:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87
cd "$tree" || exit 1
tests=(build/tests/policy/test_policy build/tests/collectives/test_cast)
for t in build/tests/hostcuda/test_hc_basic build/tests/hostcuda/test_hc_memory \
         build/tests/hostcuda/test_hc_streams build/tests/hostcuda/test_hc_kernels \
         tests/intercept/test_*.sh tests/trainers/test_mlp_*.sh; do
    case $t in *no_constructor*|*threads*) continue ;; esac  # constructors added; TSan: make test
    tests+=("$t")
done
tests+=(tests/equivalence/test_equivalence_mpi.sh tests/equivalence/test_overlap.sh
        tests/reliability/test_fingerprint.sh tests/reliability/test_checkpoint.sh
        tests/reliability/test_env_garbage.sh build/tests/reliability/test_file_create
        tests/reliability/test_unsynced.sh tests/reliability/test_param_digest.sh
        tests/reliability/test_torchrun_env.sh tests/reliability/test_exit_exchange.sh
        tests/reliability/test_watchdog.sh)
exec bash scripts/run-tests.sh "${tests[@]}"
