#!/usr/bin/env bash
# gen_cudart_queries.sh [DRIVER] — print the cuGetProcAddress queries ("NAME VERSION FLAGS", in
# order, first occurrence) that rt_mlp's static cudart makes, recorded by the tracing libcuda.so.1
# (build/tests/gpu/trace) over DRIVER (a libcuda.so.1 path; default hostcuda, where cudart stops
# after initialising: it needs export tables hostcuda lacks, so only the init-time queries appear).
# `tests/gpu/gen_cudart_queries.sh > tests/gpu/cudart13_queries.txt` refreshes the list after a
# toolkit update (the header lines are written too). Exit 1 if nothing was recorded.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
drv=${1:-$B/tests/hostcuda/libcuda.so.1}
for f in "$B/tests/gpu/trace/libcuda.so.1" "$B/tests/trainers/rt_mlp" "$drv"; do
    [ -e "$f" ] || { echo "gen_cudart_queries: $f is not built" >&2; exit 77; }
done
log=$(TRACE_GPA_DRIVER=$drv LD_LIBRARY_PATH=$B/tests/gpu/trace${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
      "$B/tests/trainers/rt_mlp" --steps 2 2>&1 >/dev/null)
q=$(awk '$1 == "gpa_v2" && $5 == "->" { print $2, $3, $4 }' <<<"$log" | awk '!seen[$0]++')
[ -n "$q" ] || { echo "gen_cudart_queries: no query recorded; rt_mlp said: $(tail -2 <<<"$log")" >&2; exit 1; }
cat <<'HDR'
# cudart13_queries.txt — every cuGetProcAddress_v2 query (symbol cudaVersion flags) that the CUDA 13.0
# static runtime (nvcc 13.0.88, libcudart_static.a) makes while it initialises, in order; '-' = the empty
# name it probes first. Recorded by tests/gpu/gen_cudart_queries.sh; replayed against the real driver by
# gpu_routing --queries (scripts/gpu-check.sh, check 'routing').
HDR
printf '%s\n' "$q"
