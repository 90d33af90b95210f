#!/usr/bin/env bash
# Property: tests/gpu/cudart13_queries.txt — the cuGetProcAddress queries gpu-check replays against
# the real driver — is exactly what this toolkit's static cudart asks at start-up (re-recorded
# through the tracing libcuda.so.1 over hostcuda, compared line by line), and it contains the
# launch entry points the shim must see (cuLaunchKernel legacy and per-thread, cuLaunchKernelEx,
# cuLibraryGetKernel, cuMemAlloc). Skips (77) while rt_mlp or the tracer is not built.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
got=$("$ROOT/tests/gpu/gen_cudart_queries.sh"); rc=$?
[ $rc -eq 77 ] && { echo "SKIP: rt_mlp / tracer / hostcuda not built"; exit 77; }
[ $rc -eq 0 ] || { echo "FAIL: recording failed (exit $rc)"; exit 1; }
if ! d=$(diff <(printf '%s\n' "$got") "$ROOT/tests/gpu/cudart13_queries.txt"); then
    head -20 <<<"$d"
    echo "FAIL: cudart's queries changed (< now, > committed): refresh with tests/gpu/gen_cudart_queries.sh > tests/gpu/cudart13_queries.txt"
    exit 1
fi
for q in "cuLaunchKernel 4000 0" "cuLaunchKernel 7000 2" "cuLaunchKernelEx 11060 0" "cuLibraryGetKernel 12000 0" "cuMemAlloc 3020 0"; do
    grep -qx "$q" "$ROOT/tests/gpu/cudart13_queries.txt" || { echo "FAIL: no query '$q'"; exit 1; }
done
echo "PASS: $(grep -vc '^#' "$ROOT/tests/gpu/cudart13_queries.txt") cudart queries recorded = committed list (launch, library and alloc entry points included)"
