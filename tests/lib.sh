# shellcheck shell=bash
# shellcheck disable=SC2034  # T_* paths are read by the tests that source this file
# tests/lib.sh — the one shared test library (sourced, never run): repository paths, skip / fail
# helpers (a skip exits 77 with its reason, never passes), TAP cases, a scratch directory removed
# at exit, Open MPI's command line for this host (t_mpirun), {rank} templating (t_template) and
# the "N ranks equal one rank with N x batch" comparison (t_equiv: tools/accelshim-equiv.c).
# Every suite's own lib.sh (tests/*/lib.sh, tests/cli/helpers.bash, tests/trainers/mlp_test_lib.sh)
# sources this file first and adds only what is particular to it. Names: t_* / T_* only, so a
# script that sources it keeps its own functions (scripts/gpu-check.sh has a need()). Works under
# `set -u`; changes no shell option itself.

T_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_BUILD=$T_TOP/build
T_SHIM=$T_BUILD/libaccelshim.so
T_IO=$T_BUILD/libaccelshim-io.so
T_HOSTCUDA_DIR=$T_BUILD/tests/hostcuda
T_HOSTNCCL_DIR=$T_BUILD/tests/hostnccl
T_MLP=$T_BUILD/tests/trainers/mlp
T_LAUNCHER=$T_TOP/scripts/accelerate-run
T_EQUIV=$T_BUILD/bin/accelshim-equiv
# the host builds of every kernel the bundled trainer and the shim launch (hostcuda's
# HOSTCUDA_KERNEL_LIBS): the trainer's, the collectives' casts, the NaN sentinel's scans
T_KLIBS=$T_BUILD/tests/trainers/libmlp_kernels_host.so:$T_BUILD/collectives/libash_cast_kernels_host.so
T_KLIBS=$T_KLIBS:$T_BUILD/shim/libash_inspect_kernels_host.so

# ---- verdicts --------------------------------------------------------------------------------
# t_skip REASON: the property cannot be checked here (exit 77, counted apart from a pass)
t_skip() { echo "SKIP: $*"; exit 77; }
# t_fail REASON: the property does not hold (exit 1)
t_fail() { echo "FAIL: $*"; exit 1; }
# t_need FILE...: skip unless every FILE exists (a build product this test runs)
t_need() { local f; for f in "$@"; do [ -e "$f" ] || t_skip "$f is not built (make all)"; done; }
# t_need_cmd CMD...: skip unless every command is installed
t_need_cmd() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 || t_skip "$c is not installed (scripts/install-deps.sh)"; done; }
t_need_mpirun() { t_need_cmd mpirun; }
# t_need_root_ns: skip unless this process may make a private mount namespace (unshare -m as root)
t_need_root_ns() {
    [ "$(id -u)" -eq 0 ] || t_skip "needs root for a private mount namespace (unshare -m)"
    unshare -m true 2>/dev/null || t_skip "unshare -m is not permitted here"
}

# TAP: t_case STATUS DESCRIPTION (STATUS 0 = ok); t_done ends the plan and exits 1 on any failure.
T_N=0
T_FAILED=0
t_case() {
    T_N=$((T_N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $T_N - $2"; else echo "not ok $T_N - $2"; T_FAILED=1; fi
}
t_done() { echo "1..$T_N"; [ "$T_FAILED" -eq 0 ]; exit $?; }
# t_show FILE...: evidence of a failed case, as TAP comments (last 20 lines)
t_show() { sed 's/^/# /' "$@" | tail -n 20; }

# Several cases, one verdict: t_no REASON prints "FAIL: REASON" and counts it in T_FAILS; the test
# goes on and ends with [ "$T_FAILS" -eq 0 ] || t_fail .... t_tails FILE...: the evidence of a
# failed case, each FILE's last 5 lines under a "--- FILE" header.
T_FAILS=0
t_no() { echo "FAIL: $*"; T_FAILS=$((T_FAILS + 1)); }
t_tails() { local f; for f in "$@"; do echo "--- $f"; tail -n 5 "$f"; done; }

# t_tmp: a private scratch directory in T_TMP, removed when the test exits
t_tmp() {
    T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/accelshim-test.XXXXXX")
    trap 'rm -rf "$T_TMP"' EXIT
}

# t_free_port [N]: a TCP port P with P .. P+N-1 (default N = 1) free on every address now, drawn
# from 20000..31999, below Linux's ephemeral range (32768..60999), so that no outgoing connection
# of another test takes it meanwhile; each port is checked by binding it (python3, no SO_REUSEADDR,
# so a socket in TIME_WAIT counts as taken). A random port could collide with a listener: rank 0
# then cannot listen, and the test fails for a reason that is not the product's. None free: a line
# on stderr, status 1, nothing on stdout.
t_free_port() {
    python3 - "${1:-1}" <<'PY' || { echo "t_free_port: no run of ${1:-1} free TCP port(s) in 20000..31999" >&2; return 1; }
import random, socket, sys
n = int(sys.argv[1])
for _ in range(500):
    p = random.randrange(20000, 32000 - n)
    held = []
    try:
        for q in range(p, p + n):
            s = socket.socket()
            held.append(s)
            s.bind(("", q))
    except OSError:
        continue
    finally:
        for s in held:
            s.close()
    print(p)
    sys.exit(0)
sys.exit(1)
PY
}

# ---- running ranks -------------------------------------------------------------------------
# t_mpirun NP ARGS...: Open MPI on this host only: as root it must be told; --oversubscribe lets
# 4 ranks share 2 cores; TCP and shared memory on loopback (no single-copy: containers forbid it).
# T_MPIRUN_TIMEOUT (default 120 s) bounds the whole run.
t_mpirun() {
    local np=$1; shift
    local root=()
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    timeout -k 5 "${T_MPIRUN_TIMEOUT:-120}" mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}

# t_template RANK WORLD ARG...: print each ARG (one per line, NUL-free) with {rank} and
# {world_size} replaced, as accelerate-run substitutes them. Use: mapfile -t a < <(t_template ...)
t_template() {
    local r=$1 w=$2 x; shift 2
    for x in "$@"; do x=${x//\{rank\}/$r}; printf '%s\n' "${x//\{world_size\}/$w}"; done
}

# t_rank_cmd: the bash program each mpirun rank runs: exec "$0" "$@" with {rank} and
# {world_size} templated (Open MPI's rank variables), LD_PRELOAD=$T_PRELOAD, sharded by rank
# (--shard-rank R --shard-count W appended), output to $T_RANK_LOG templated when that is set.
# Use: t_mpirun NP -x T_PRELOAD=... [-x T_RANK_LOG=...] bash -c "$(t_rank_cmd)" PROGRAM ARGS...
# shellcheck disable=SC2016  # expanded by the rank shell, on purpose
t_rank_cmd() {
    printf '%s' 'r=$OMPI_COMM_WORLD_RANK w=$OMPI_COMM_WORLD_SIZE; a=()
        for x in "$@"; do x=${x//\{rank\}/$r}; a+=("${x//\{world_size\}/$w}"); done
        if [ -n "${T_RANK_LOG:-}" ]; then x=${T_RANK_LOG//\{rank\}/$r}; exec >"$x" 2>&1; fi
        LD_PRELOAD=$T_PRELOAD exec "$0" "${a[@]}" --shard-rank "$r" --shard-count "$w"'
}

# ---- the equivalence comparison --------------------------------------------------------------
# t_equiv OUT [accelshim-equiv options] --ref REFERENCE RANKFILE...: every rank's parameters equal
# rank 0's bit for bit and rank 0's equal the reference within the tolerance (default rtol 1e-5,
# atol 1e-6); the tool's report (both sides of any mismatch) in OUT; returns its status (0 equal,
# 1 not, 2 a file missing or unreadable).
t_equiv() {
    local out=$1; shift
    "$T_EQUIV" "$@" >"$out" 2>&1
}
