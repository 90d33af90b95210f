# shellcheck shell=bash
# lib.sh — shared by the bench/*.sh benchmarks. Sourced, not run.
# Paths (BENCH_TOP, BENCH_BUILD), the mpirun command line used on this machine (bench_mpirun), and
# how a benchmark hands its figures to scripts/run-bench.sh: bench_ratio / bench_raw / bench_note
# append lines "ratio KEY VALUE", "raw KEY VALUE", "note TEXT" to $BENCH_RESULTS when it is set
# (run-bench.sh turns them into build/bench/results.json); run by hand, they do nothing.
# Timing helpers: bench_now (seconds, ns resolution), bench_median (of its arguments).

BENCH_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$BENCH_TOP/tests/lib.sh"
# shellcheck disable=SC2034  # used by the scripts that source this file
BENCH_BUILD=$BENCH_TOP/build

bench_ratio() { [ -n "${BENCH_RESULTS:-}" ] && printf 'ratio %s %s\n' "$1" "$2" >>"$BENCH_RESULTS"; return 0; }
bench_raw()   { [ -n "${BENCH_RESULTS:-}" ] && printf 'raw %s %s\n' "$1" "$2" >>"$BENCH_RESULTS"; return 0; }
bench_note()  { [ -n "${BENCH_RESULTS:-}" ] && printf 'note %s\n' "$*" >>"$BENCH_RESULTS"; return 0; }

bench_now() { date +%s.%N; }

bench_median() {   # bench_median X... -> the median (mean of the middle two for an even count)
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) exit 1
        if (NR % 2) printf "%.6f\n", v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_skip_unless_built FILE... : exit 77 (skipped) naming the first missing file
bench_skip_unless_built() {
    local f
    for f in "$@"; do
        [ -e "$f" ] || { echo "SKIP: $f not built (make all)"; exit 77; }
    done
}

# bench_mpirun NP ARGS... : Open MPI on this host only, as the equivalence suite runs it (as root it
# must be told; --oversubscribe lets 4 ranks share 2 cores; shared memory without single-copy).
bench_mpirun() {
    T_MPIRUN_TIMEOUT=${BENCH_MPI_TIMEOUT:-180} t_mpirun "$@"   # tests/lib.sh: one command line for this host
}
