#!/usr/bin/env bash
# gpu-check.sh OUTDIR — accelshim's checks against a REAL NVIDIA driver on one GPU, unattended,
# sized for one call of a 15-minute device window; docs/gpu-check.md says what each check proves,
# the device call, and every GPU_CHECK_* setting (GPU_CHECK_FAKE=hostcuda: the dry run).
# Invariant: OUTDIR gets only report.txt, report.json, routing-table.txt and logs.tar.gz, the
# reports and the archive rewritten after every check (a killed run still returns them); every
# command runs under `timeout` (the check's cap, the run's hard stop); no check starts after the
# budget ("not run: time"). Uses what `make all` built; builds only what is missing.
# Exit: 0 all passed; 1 a check failed; 3 none failed, some skipped; 2 usage; 77 no GPU/driver.
# Threading: none; one command at a time (2 ranks under mpirun). Callers: people, the device tool.
set -u
T0=$SECONDS   # the budget counts from the start, the driver probe included
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
OUT=${1:-}
FAKE=${GPU_CHECK_FAKE:-}
ONLY=${GPU_CHECK_ONLY:-.}
PROFILE=${GPU_CHECK_PROFILE:-first}
if [ -z "$OUT" ] || [ $# -ne 1 ] || [ "$OUT" = --help ]; then
    echo "usage: scripts/gpu-check.sh OUTDIR   (env GPU_CHECK_FAKE=hostcuda, GPU_CHECK_PROFILE=first|full, GPU_CHECK_ONLY=REGEX)" >&2
    exit 2
fi
case $FAKE in '' | hostcuda) ;; *) echo "gpu-check: GPU_CHECK_FAKE must be empty or hostcuda" >&2; exit 2 ;; esac
[[ x =~ $ONLY ]]; [ $? -eq 2 ] && { echo "gpu-check: GPU_CHECK_ONLY is not a valid regular expression: '$ONLY'" >&2; exit 2; }
case $PROFILE in
    first) def_budget=300 def_hard=345 REPS=2 ;;
    full) def_budget=540 def_hard=580 REPS=3 ;;
    *) echo "gpu-check: GPU_CHECK_PROFILE must be first or full" >&2; exit 2 ;;
esac
# the dry run on hostcuda is slow and shares its CPUs: its caps scale, its budget is not the device's
SCALE=1
[ -n "$FAKE" ] && SCALE=6 def_budget=3000 def_hard=3300
BUDGET=${GPU_CHECK_BUDGET_S:-$def_budget}
HARD=${GPU_CHECK_HARD_S:-$def_hard}
for v in "GPU_CHECK_BUDGET_S=$BUDGET" "GPU_CHECK_HARD_S=$HARD" "GPU_CHECK_CAP_S=${GPU_CHECK_CAP_S:-0}"; do
    [[ ${v#*=} =~ ^[0-9]+$ ]] || { echo "gpu-check: ${v%%=*} must be whole seconds, got '${v#*=}'" >&2; exit 2; }
done

# ---- the environment: the real driver (never hostcuda) or, in the dry run, hostcuda ----
clean_ldp=""
IFS=: read -r -a ldp_parts <<<"${LD_LIBRARY_PATH:-}"
for d in "${ldp_parts[@]}"; do
    case $d in '' | *build/tests/hostcuda* | *build/tests/hostnccl* | *build/bench/fakecuda*) ;;
               *) clean_ldp=${clean_ldp:+$clean_ldp:}$d ;; esac
done
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_DEVICES HOSTCUDA_STRICT LD_PRELOAD ACCELSHIM_POLICY ACCELSHIM_BACKEND \
      ACCELSHIM_DEVICES ACCELSHIM_LOCAL_RANK ACCELSHIM_RANK ACCELSHIM_WORLD_SIZE ACCELSHIM_LOG ACCELSHIM_REPORT \
      ACCELSHIM_DEBUG_WORLD1_COLLECTIVES ACCELSHIM_ROUTING_TABLE ACCELSHIM_MATMUL ACCELSHIM_OVERLAP
# Open MPI 4.1's rsh launcher aborts even a local job when no ssh/rsh exists (the GPU machine has
# none): the isolated launcher starts local processes only (mpirun, and MPI singletons' orted)
export OMPI_MCA_plm=isolated
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}   # NCCL says why when it fails (into the logs)
KLIBS=$B/tests/trainers/libmlp_kernels_host.so:$B/collectives/libash_cast_kernels_host.so:$B/tests/intercept/libitest_kernels.so
if [ -n "$FAKE" ]; then
    export LD_LIBRARY_PATH=$B/tests/hostcuda${clean_ldp:+:$clean_ldp}
    export HOSTCUDA_KERNEL_LIBS=$KLIBS
    MODE="fake-hostcuda"
else
    export LD_LIBRARY_PATH=$clean_ldp
    MODE="real-driver"
fi

if ! mkdir -p "$OUT" 2>/dev/null || ! OUT=$(cd "$OUT" && pwd); then echo "gpu-check: cannot create $OUT" >&2; exit 2; fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || { echo "gpu-check: cannot create a work directory" >&2; exit 2; }
L=$WORK/logs
mkdir -p "$L"
trap '[ -n "${GPU_CHECK_KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
# pack: every log into OUTDIR/logs.tar.gz (at most 15 MiB: parameter dumps go first if larger)
pack() {
    timeout 30 tar -czf "$OUT/.logs.tar.gz.part" -C "$WORK" logs 2>/dev/null || return 0
    if [ "$(stat -c %s "$OUT/.logs.tar.gz.part")" -gt 15728640 ]; then
        timeout 30 tar -czf "$OUT/.logs.tar.gz.part" -C "$WORK" --exclude='*.bin' --exclude='rank.[0-9]' \
            --exclude='ref' logs 2>/dev/null || return 0
    fi
    mv -f "$OUT/.logs.tar.gz.part" "$OUT/logs.tar.gz"
}

json_str() { local s=$1; s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//[[:cntrl:]]/ }; printf '"%s"' "$s"; }

# shellcheck source=scripts/gpu-rt.bash
. "$ROOT/scripts/gpu-rt.bash"   # the bundle, library search, routing summary

# ---- no GPU: one line, exit 77 (and a report saying so) ----
PROBE=$B/tests/gpu/gpu_probe
no_gpu() {
    echo "gpu-check: SKIP: no NVIDIA GPU/driver on this machine ($1)"
    printf 'SKIP gpu-check: no NVIDIA GPU/driver (%s)\n' "$1" >"$OUT/report.txt"
    printf '{"tool":"accelshim gpu-check","mode":"%s","status":"skip","reason":%s,"checks":[]}\n' \
        "$MODE" "$(json_str "no NVIDIA GPU/driver: $1")" >"$OUT/report.json"
    exit 77
}
if [ -z "$FAKE" ]; then
    have_lib=""
    timeout 10 ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && have_lib=yes
    IFS=: read -r -a ldp_parts <<<"$LD_LIBRARY_PATH"
    for d in "${ldp_parts[@]}"; do [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && have_lib=yes; done
    [ -n "$have_lib" ] || no_gpu "libcuda.so.1 is not installed"
    if [ -x "$PROBE" ]; then
        msg=$(timeout -k 5 30 "$PROBE" 2>&1); rc=$?
        [ $rc -eq 77 ] && no_gpu "$(tail -1 <<<"$msg")"
    elif command -v nvidia-smi >/dev/null 2>&1; then
        timeout 30 nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || no_gpu "nvidia-smi lists no GPU"
    fi
fi

TMO_PID="" NAMES=() STATUS=() REASONS=() SECS=() EXPECTED_SKIPS=0 DONE=""
FIG_PLAIN="" FIG_SHIM="" FIG_RULE="" DRV_VER="" DEV_NAME="" DRV_PATH="" ROUTE_SUMMARY=""
CHECK_T0=$SECONDS CHECK_END=$((T0 + HARD))
: >"$OUT/report.txt"
echo "gpu-check: $MODE, profile $PROFILE, budget ${BUDGET}s (hard stop ${HARD}s); logs -> $OUT/logs.tar.gz"
record() {   # record NAME PASS|FAIL|SKIP REASON [expected]
    local s=$((SECONDS - CHECK_T0)) r=$3
    NAMES+=("$1"); STATUS+=("$2"); REASONS+=("$r"); SECS+=("$s"); DONE="$DONE $1 "
    [ "${4:-}" = expected ] && EXPECTED_SKIPS=$((EXPECTED_SKIPS + 1))
    printf '%-4s %-26s (%3ss) %s\n' "$2" "$1" "$s" "$r" >>"$OUT/report.txt"
    [ ${#r} -gt 300 ] && r="${r:0:300}... (report.txt)"
    printf '%-4s %-26s %4ss  at +%ss  %s\n' "$2" "$1" "$s" "$((SECONDS - T0))" "$r"
    write_json; pack
}
# begin NAME CAP: the check starts now; its commands are killed CAP seconds (x SCALE) from now at
# the latest, never past the hard deadline
begin() {
    local cap=$(( ${GPU_CHECK_CAP_S:-0} > 0 ? GPU_CHECK_CAP_S : $2 * SCALE ))
    CHECK_T0=$SECONDS CHECK_END=$((SECONDS + cap))
    [ "$CHECK_END" -gt $((T0 + HARD)) ] && CHECK_END=$((T0 + HARD))
    echo "---- $1 (at +$((SECONDS - T0))s, cap ${cap}s)"
}
need() {   # need NAME FILE... : SKIP NAME unless every file exists
    local n=$1 f; shift
    for f in "$@"; do
        [ -e "$f" ] || { record "$n" SKIP "${f#"$ROOT"/} is not built"; return 1; }
    done
}
# tmo SECONDS CMD...: timeout, never past the check's cap or the run's hard deadline (exit 124)
tmo() {
    local t=$1 left=$((CHECK_END - SECONDS)); shift
    if [ "$left" -lt 2 ]; then
        echo "gpu-check: $1 not started: the check's time is spent" >&2; return 124
    fi
    [ "$t" -gt "$left" ] && t=$left
    # in the background and waited for, so a TERM to this script is handled at once (on_signal)
    timeout -k 5 "$t" "$@" &
    TMO_PID=$!
    wait "$TMO_PID"
}
timed_out() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; }

MM_MODES="default tf32 bf16" FIG_GEMM_N="" FIG_GEMM_PLAIN=""
declare -A FIG_GEMM=() FIG_SPEEDUP=() FIG_LOSS0=() FIG_LOSS1=()
num_or_null() { if [[ ${1:-} =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then printf '%s' "$1"; else printf null; fi; }
# counts and the exit status from the records so far
tally() {
    NP=0 NF=0 NS=0
    local st
    for st in "${STATUS[@]}"; do case $st in PASS) NP=$((NP + 1)) ;; FAIL) NF=$((NF + 1)) ;; SKIP) NS=$((NS + 1)) ;; esac; done
    if [ $NF -gt 0 ]; then RC=1; elif [ $((NS - EXPECTED_SKIPS)) -gt 0 ]; then RC=3; else RC=0; fi
}
# write_json [final]: report.json from the records so far ("complete": false until the end)
write_json() {
    local i m
    tally
    {
        printf '{"tool":"accelshim gpu-check","mode":"%s","profile":"%s","complete":%s,"date":"%s","host":%s,' \
            "$MODE" "$PROFILE" "$([ "${1:-}" = final ] && echo true || echo false)" \
            "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(json_str "${HOSTNAME:-$(uname -n)}")"
        printf '"driver":{"path":%s,"version":%s,"device0":%s},' "$(json_str "$DRV_PATH")" \
            "$(num_or_null "$DRV_VER")" "$(json_str "$DEV_NAME")"
        printf '"routing_requests":%s,' "$(json_str "$ROUTE_SUMMARY")"
        printf '"figures":{"launch_ns_plain":%s,"launch_ns_shim":%s,"launch_ns_shim_rule_elsewhere":%s' \
            "$(num_or_null "$FIG_PLAIN")" "$(num_or_null "$FIG_SHIM")" "$(num_or_null "$FIG_RULE")"
        printf ',"gemm_n":%s,"gemm_ms_plain":%s' "$(num_or_null "$FIG_GEMM_N")" "$(num_or_null "$FIG_GEMM_PLAIN")"
        for m in $MM_MODES; do printf ',"gemm_ms_%s":%s' "$m" "$(num_or_null "${FIG_GEMM[$m]:-}")"; done
        for m in tf32 bf16; do printf ',"gemm_speedup_%s":%s' "$m" "$(num_or_null "${FIG_SPEEDUP[$m]:-}")"; done
        for m in $MM_MODES; do
            printf ',"mlp_cublas_loss_first_%s":%s,"mlp_cublas_loss_last_%s":%s' "$m" "$(num_or_null "${FIG_LOSS0[$m]:-}")" \
                "$m" "$(num_or_null "${FIG_LOSS1[$m]:-}")"
        done
        printf '},"checks":['
        for i in "${!NAMES[@]}"; do
            [ "$i" -gt 0 ] && printf ','
            printf '{"name":%s,"status":"%s","seconds":%s,"reason":%s}' "$(json_str "${NAMES[$i]}")" \
                "${STATUS[$i]}" "${SECS[$i]}" "$(json_str "${REASONS[$i]}")"
        done
        printf '],"summary":{"pass":%d,"fail":%d,"skip":%d,"expected_skip":%d,"seconds":%d},"exit":%s}\n' \
            "$NP" "$NF" "$NS" "$EXPECTED_SKIPS" "$((SECONDS - T0))" "$([ "${1:-}" = final ] && echo "$RC" || echo null)"
    } >"$OUT/.report.json.part" && mv -f "$OUT/.report.json.part" "$OUT/report.json"
}

# ---- build: use what is there; make only what is missing ----
SHIM=${GPU_CHECK_SHIM:-$B/libaccelshim.so} MLP=$B/tests/trainers/mlp RT=$B/tests/trainers/rt_mlp CMP=$B/tests/equivalence/fcompare
ROUTING=$B/tests/gpu/gpu_routing COLL=$B/tests/collectives/test_coll GEMM_BENCH=$B/tests/gpu/gemm_bench
BENCH=$B/bench/launch_overhead ITEST_PTX=$B/tests/intercept/kernels.ptx
wanted=("$SHIM" "$MLP" "$RT" "$CMP" "$PROBE" "$ROUTING" "$COLL" "$BENCH" "$ITEST_PTX" "$GEMM_BENCH"
        "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx")
[ -n "$FAKE" ] && wanted+=("$B/tests/hostcuda/libcuda.so.1" "$B/tests/hostnccl/libnccl.so.2" "$B/tests/trainers/libmlp_kernels_host.so"
                          "$B/tests/hostcublas/libcublas.so.13")
missing=()
for f in "${wanted[@]}"; do [ -e "$f" ] || missing+=("${f#"$ROOT"/}"); done
begin build 240
if [ ${#missing[@]} -eq 0 ] && [ -z "${GPU_CHECK_REBUILD:-}" ]; then
    record build PASS "using build/ as found (${#wanted[@]} outputs present; not rebuilt)"
else
    tools=()
    for t in make gcc mpicc; do command -v "$t" >/dev/null 2>&1 || tools+=("$t"); done
    [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || tools+=("nvcc")
    [ -e /usr/include/yaml.h ] || tools+=("libyaml-dev")
    if (cd "$ROOT" && tmo 240 make -o build/.deps-installed -j"${GPU_CHECK_JOBS:-4}" all) >"$L/build.log" 2>&1; then
        record build PASS "make all built what was missing: ${missing[*]:-(forced rebuild)}"
    else
        still=()
        for f in "${wanted[@]}"; do [ -e "$f" ] || still+=("${f#"$ROOT"/}"); done
        record build FAIL "make all failed (logs/build.log); missing tools/deps here: ${tools[*]:-none detected}; not built: ${still[*]:-none}"
    fi
fi

# ---- runtime libraries: the bundle for what this machine lacks; NCCL and cuBLAS wherever they are ----
begin runtime-libs 90
rt_note="" NCCL_NOTE="" BLAS_NOTE="" HAVE_NCCL=0 HAVE_CUBLAS=0
RTB=${GPU_CHECK_RT:-$B/gpu-rt}
if [ -d "$RTB/lib" ]; then
    if ! gpu_rt_mpi_works; then
        gpu_rt_use_mpi "$RTB" && rt_note="Open MPI and PMIx from ${RTB#"$ROOT"/} (this machine's mpirun is missing or does not start);"
    fi
    gpu_rt_fill_missing "$RTB" "$SHIM" "$MLP" "$RT" "$COLL" "$ROUTING" "$BENCH" "$CMP" "$PROBE" "$GEMM_BENCH"
    [ -n "$GPU_RT_USED" ] && rt_note="$rt_note libraries from ${RTB#"$ROOT"/}: $GPU_RT_USED;"
fi
if [ -n "$FAKE" ]; then
    NCCL_LDP=$B/tests/hostnccl:$LD_LIBRARY_PATH BLAS_LDP=$B/tests/hostcublas:$LD_LIBRARY_PATH HAVE_NCCL=1 HAVE_CUBLAS=1
    NCCL_NOTE="NCCL: build/tests/hostnccl" BLAS_NOTE="cuBLAS: build/tests/hostcublas"
else
    # NCCL and cuBLAS: ldconfig, LD_LIBRARY_PATH, a Python wheel (nvidia.nccl, nvidia.cublas, any
    # depth below the module), else a search; only the runs that use them get the directory
    NCCL_LDP=$LD_LIBRARY_PATH BLAS_LDP=$LD_LIBRARY_PATH
    if gpu_rt_find_lib libnccl.so.2 nvidia.nccl; then
        HAVE_NCCL=1 NCCL_NOTE="libnccl.so.2 in $GPU_RT_LIBDIR ($GPU_RT_HOW)"
        [ "$GPU_RT_HOW" = ldconfig ] || NCCL_LDP=$GPU_RT_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    if gpu_rt_find_lib libcublas.so.13 nvidia.cublas; then
        HAVE_CUBLAS=1 BLAS_NOTE="libcublas.so.13 in $GPU_RT_LIBDIR ($GPU_RT_HOW)"
        [ "$GPU_RT_HOW" = ldconfig ] || BLAS_LDP=$GPU_RT_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
fi
rt_note="${rt_note:+$rt_note }${NCCL_NOTE:-libnccl.so.2 not found}; ${BLAS_NOTE:-libcublas.so.13 not found}"
nf=""
for f in "$SHIM" "$MLP" "$RT" "$COLL" "$ROUTING" "$BENCH" "$CMP" "$GEMM_BENCH"; do
    [ -e "$f" ] || continue
    ldp=$LD_LIBRARY_PATH
    [ "$f" = "$GEMM_BENCH" ] && ldp=$BLAS_LDP
    # cuBLAS missing is the matmul checks' SKIP, not a missing runtime library
    m=$(LD_LIBRARY_PATH=$ldp timeout 20 ldd "$f" 2>&1 | awk '/not found/ && $1 !~ /^libcublas/ {print $1}' | tr '\n' ' ')
    [ -n "$m" ] && nf="$nf ${f#"$B"/}: $m;"
done
if [ -n "$nf" ]; then
    record runtime-libs FAIL "missing on this machine and in the bundle (make gpu-bundle; or install e.g. libyaml-0-2, Open MPI):$nf ${rt_note}"
else
    record runtime-libs PASS "every built program and libaccelshim.so resolves its libraries (ldd); $rt_note"
fi

# ---- driver facts and PTX loads ----
chk_driver() {
    need driver "$PROBE" || return
    tmo 60 "$PROBE" >"$L/driver.txt" 2>&1; local rc=$?
    DRV_VER=$(sed -n 's/^driver_version=//p' "$L/driver.txt")
    DRV_PATH=$(sed -n 's/^driver_path=//p' "$L/driver.txt")
    DEV_NAME=$(sed -n 's/^device0_name=//p' "$L/driver.txt")
    local cc ndev cm
    cc=$(sed -n 's/^device0_cc=//p' "$L/driver.txt"); ndev=$(sed -n 's/^device_count=//p' "$L/driver.txt")
    if [ $rc -ne 0 ]; then
        record driver FAIL "gpu_probe exit $rc$(timed_out $rc && echo " (timed out: cuInit hangs?)"): $(tail -1 "$L/driver.txt")"
    elif [ -z "$FAKE" ] && [[ $DRV_PATH == *build/tests/hostcuda* ]]; then
        record driver FAIL "libcuda.so.1 resolved to hostcuda ($DRV_PATH), not the real driver"
    else
        cm=$(sed -n 's/^device0_compute_mode=//p' "$L/driver.txt")
        [ "$cm" = default ] || echo "     note: compute mode $cm: the 2-ranks-on-one-GPU checks need the default mode"
        [ "${ndev:-1}" -gt 1 ] && echo "     note: $ndev GPUs visible; every check uses device 0 (ACCELSHIM_DEVICES=0)"
        record driver PASS "$DRV_PATH, driver API $DRV_VER, $ndev device(s); device 0: $DEV_NAME, cc $cc, compute mode $cm"
    fi
}
chk_ptx_load() {
    need ptx-load "$PROBE" || return
    local args=() p vers rc
    for p in "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx" "$ITEST_PTX"; do args+=(--ptx "$p"); done
    tmo 60 "$PROBE" "${args[@]}" >"$L/ptx-load.txt" 2>&1; rc=$?
    vers=$(grep -h '^\.version' "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx" | sort -u | tr '\n' ' ')
    if [ $rc -eq 0 ]; then
        record ptx-load PASS "mlp, cast and itest kernels JIT-load on device 0 (PTX $vers)"
    else
        record ptx-load FAIL "exit $rc: $(grep '^ptx .* fail\|^error' "$L/ptx-load.txt" | sed "s|$ROOT/||g" | tr '\n' ';') (PTX $vers; driver API $DRV_VER: PTX from the CUDA 13 toolkit needs a 13.x driver)"
    fi
}
# ---- routing through every door, on this driver ----
chk_routing() {
    need routing "$ROUTING" "$SHIM" "$ITEST_PTX" || return
    local qfile qnote trc new rc1 rc2 dv nulls drc hooks lines calls chooks cq
    # cudart's own queries: recorded from rt_mlp's static cudart on THIS driver through the tracing
    # libcuda.so.1 (includes queries made after start-up); else the list recorded at build time
    qfile=$ROOT/tests/gpu/cudart13_queries.txt qnote="cudart queries: build-time list"
    if [ -z "$FAKE" ] && [ -n "$DRV_PATH" ] && [ -e "$B/tests/gpu/trace/libcuda.so.1" ] && [ -e "$RT" ]; then
        tmo 40 env TRACE_GPA_DRIVER="$DRV_PATH" LD_LIBRARY_PATH="$B/tests/gpu/trace${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$RT" --steps 2 >"$L/cudart-trace.out" 2>"$L/cudart-trace.txt"; trc=$?
        awk '$1 == "gpa_v2" && $5 == "->" { print $2, $3, $4 }' "$L/cudart-trace.txt" | awk '!seen[$0]++' >"$L/cudart-queries.txt"
        if [ -s "$L/cudart-queries.txt" ]; then
            qfile=$L/cudart-queries.txt
            new=$(grep -cvxFf <(grep -v "^#" "$ROOT/tests/gpu/cudart13_queries.txt") "$qfile")
            qnote="cudart queries recorded on this driver: $(wc -l <"$qfile") ($new not in the build-time list; rt_mlp under the tracer exit $trc)"
        fi
    fi
    tmo 60 env ITEST_PTX="$ITEST_PTX" "$ROUTING" --expect-driver --queries "$qfile" >"$L/routing-driver.txt" 2>"$L/routing-driver.err"; rc1=$?
    tmo 60 env ITEST_PTX="$ITEST_PTX" LD_PRELOAD="$SHIM" "$ROUTING" --expect-shim --queries "$qfile" >"$L/routing-shim.txt" 2>"$L/routing-shim.err"; rc2=$?
    # the table: what this driver's resolver hands out per base name, version and flag
    dv=$(sed -n 's/^driver .* version \([0-9]*\)$/\1/p' "$L/routing-driver.txt")
    { echo "# What this driver (version ${dv:-?}) hands out: cuGetProcAddress_v2(base, cudaVersion ${dv:-?}, flags)"
      printf '%-30s %-30s %-30s %s\n' "# base name" "DEFAULT" "LEGACY_STREAM" "PER_THREAD_DEFAULT_STREAM"
      awk -v v="$dv" '$1 == "gpa_v2" && $3 == v {
              split($0, a, " sym="); split(a[2], b, " "); split($6, r, "="); s = (r[2] == 0 ? b[1] : "res=" r[2])
              if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
              t[$2, $4] = s }
           END { for (i = 1; i <= n; i++) printf "%-30s %-30s %-30s %s\n", order[i], t[order[i], 0], t[order[i], 1], t[order[i], 2] }' \
          "$L/routing-driver.txt"
      echo
      echo "# Every lookup, every door (direct link, dlsym on the handle, cuGetProcAddress_v2, legacy cuGetProcAddress,"
      echo "# and 'cudart': static cudart's own queries, replayed; $qnote)"
      echo "# door query cudaVersion flags -> CUresult symbolStatus exact-symbol call-result (-3: pointer already called)"
      grep -E '^(gpa_v2|gpa_legacy|dlsym-handle|direct|cudart) ' "$L/routing-driver.txt" | sed 's/ | owner=.*//'
    } >"$OUT/routing-table.txt"
    # with the shim: the same lines except the owner. A symbol this driver lacks (NULL direct link)
    # may be answered by the shim's own hook, so those direct-link lines are left out on both sides.
    nulls=" $(awk '/^direct / && / sym=- /{print $2}' "$L/routing-driver.txt" | tr '\n' ' ')"
    strip() {
        grep -v '^probe done\|^driver \|^FAIL' "$1" | sed 's/ | owner=.*//' |
            awk -v skip="$nulls" '!(/^direct / && index(skip, " " $2 " "))'
    }
    diff <(strip "$L/routing-driver.txt") <(strip "$L/routing-shim.txt") >"$L/routing-diff.txt"; drc=$?
    hooks=$(grep -c 'owner=libaccelshim.so' "$L/routing-shim.txt")
    lines=$(grep -c ' -> ' "$L/routing-shim.txt")
    calls=$(grep -c ' call=0 ' "$L/routing-shim.txt")
    if [ $rc1 -ne 0 ]; then
        record routing FAIL "probe without the shim: exit $rc1: $(grep -m3 '^FAIL' "$L/routing-driver.txt" | tr '\n' ';')$(tail -1 "$L/routing-driver.txt")"
    elif [ $rc2 -ne 0 ]; then
        record routing FAIL "probe with the shim: exit $rc2: $(grep -m3 '^FAIL' "$L/routing-shim.txt" | tr '\n' ';')$(tail -1 "$L/routing-shim.txt")"
    elif [ $drc -ne 0 ]; then
        record routing FAIL "resolution/call results differ with the shim (logs/routing-diff.txt): $(head -2 "$L/routing-diff.txt" | tr '\n' ';')"
    elif [ "$hooks" -eq 0 ]; then
        record routing FAIL "no lookup was routed to a shim hook"
    else
        chooks=$(grep -c '^cudart .*owner=libaccelshim.so' "$L/routing-shim.txt")
        cq=$(grep -c '^cudart ' "$L/routing-shim.txt")
        record routing PASS "$lines lookups (direct, dlsym x2, cuGetProcAddress v2/legacy x versions x flags, and cudart's $cq own queries) resolve as the driver's; $hooks handed out the exact variant's hook ($chooks of cudart's); $calls calls succeeded; $qnote (table: routing-table.txt)"
    fi
}

# ---- what the shim's routing recorder saw (ACCELSHIM_ROUTING_TABLE: one TSV line per
# cuGetProcAddress request; a shim without the recorder writes nothing) ----
chk_routing_requests() {
    need routing-requests "$SHIM" "$ROUTING" "$ITEST_PTX" || return
    local d=$L/routing-requests progs=() p name rc fails=0 sums="" any=0 s
    mkdir -p "$d"
    [ -z "$FAKE" ] && [ -e "$RT" ] && progs+=("$RT")
    for p in "$B"/tests/*/cudart_min*; do [ -f "$p" ] && [ -x "$p" ] && progs+=("$p"); done
    progs+=("$ROUTING")
    for p in "${progs[@]}"; do
        name=${p##*/}
        rm -f "$d/$name.tsv"
        if [ "$p" = "$ROUTING" ]; then
            tmo 60 env ITEST_PTX="$ITEST_PTX" ACCELSHIM_ROUTING_TABLE="$d/$name.tsv" LD_PRELOAD="$SHIM" \
                "$p" --expect-shim --queries "$ROOT/tests/gpu/cudart13_queries.txt" >"$d/$name.out" 2>&1
        else
            tmo 60 env ACCELSHIM_ROUTING_TABLE="$d/$name.tsv" LD_PRELOAD="$SHIM" "$p" --steps 2 >"$d/$name.out" 2>&1
        fi
        rc=$?
        [ $rc -eq 0 ] || { fails=$((fails + 1)); sums="$sums $name: exit $rc ($(tail -1 "$d/$name.out"));"; continue; }
        if s=$(gpu_rt_routing_summary "$d/$name.tsv"); then any=1; fi
        sums="$sums $name: $s;"
    done
    ROUTE_SUMMARY=${sums# }
    if [ $fails -gt 0 ]; then
        record routing-requests FAIL "a program failed under the shim:$sums"
    elif [ $any -eq 0 ]; then
        record routing-requests SKIP "not supported by this shim build (ACCELSHIM_ROUTING_TABLE wrote nothing):$sums" expected
    else
        record routing-requests PASS "per route (files in logs/routing-requests/):$sums"
    fi
}

# ---- static cudart intercepted at world 1: rt_mlp with a policy, under the shim ----
# sgd policy, 10 steps: the exit report (ACCELSHIM_LOG=info) counts the kernel launches through the
# hooks and the log names the matched sync point; then ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 with the
# mpi backend (no MPI, no NCCL needed at world 1) runs the sync point's all-reduce: the JSON report
# (ACCELSHIM_REPORT) counts 10 hits and 10 all-reduces (0 without the switch). Parameters stay
# bit-identical to the plain run throughout.
jfield() {   # jfield REPORT.json NAME: collectives.NAME, or hits / backend of the first rule
    case $2 in
        hits) grep -o '"hits": [0-9]*' "$1" 2>/dev/null | head -1 | grep -o '[0-9]*$' ;;
        backend) sed -n 's/.*"backend": "\([a-z]*\)".*/\1/p' "$1" 2>/dev/null | head -1 ;;
        casts) grep -o '"collectives_with_cast": [0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' ;;
        *) grep -o '"collectives": {.*' "$1" 2>/dev/null | grep -o "\"$2\": [0-9]*" | head -1 | grep -o '[0-9]*$' ;;
    esac
}
intercept_world1() {   # intercept_world1 NAME TRAINER
    local n=$1 tr=$2 d=$L/$1 fails=0 launches sgd a0 a1 h1 b1 t steps=10
    mkdir -p "$d"
    eq_policy "$EQ_POL/sgd-fused.yaml" same "$d/policy.yaml"
    local args=(--steps "$steps" --batch 4)
    {
        tmo 60 "$tr" "${args[@]}" --save "$d/plain.bin" >"$d/plain.out" 2>"$d/plain.err" ||
            { echo "FAIL plain run: exit $?: $(tail -1 "$d/plain.err")"; fails=$((fails + 1)); }
        tmo 60 env ACCELSHIM_POLICY="$d/policy.yaml" ACCELSHIM_LOG=info ACCELSHIM_REPORT="$d/hooks.json" \
            ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" "$tr" "${args[@]}" --save "$d/hooks.bin" >"$d/hooks.out" 2>"$d/hooks.err" ||
            { echo "FAIL under the shim: exit $?: $(tail -2 "$d/hooks.err" | tr '\n' ' ')"; fails=$((fails + 1)); }
        tmo 60 env ACCELSHIM_POLICY="$d/policy.yaml" ACCELSHIM_LOG=info ACCELSHIM_REPORT="$d/coll.json" \
            ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 ACCELSHIM_BACKEND=mpi ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" \
            "$tr" "${args[@]}" --save "$d/coll.bin" >"$d/coll.out" 2>"$d/coll.err" ||
            { echo "FAIL with the world-1 switch: exit $?: $(tail -2 "$d/coll.err" | tr '\n' ' ')"; fails=$((fails + 1)); }
        launches=$(sed -n 's/.*INFO report: \([0-9]*\) kernel launches through the shim.*/\1/p' "$d/hooks.err" | tail -1)
        sgd=$(awk '/INFO report: / && $NF == "sgd_update" { print $(NF - 1) }' "$d/hooks.err" | tail -1)
        a0=$(jfield "$d/hooks.json" allreduces) a1=$(jfield "$d/coll.json" allreduces)
        h1=$(jfield "$d/coll.json" hits) b1=$(jfield "$d/coll.json" backend)
        echo "launches through the hooks: '${launches}' (sgd_update '${sgd}'); report without the switch: all-reduces '$a0';" \
             "with it: backend '$b1', hits '$h1', all-reduces '$a1'"
        [ "${launches:-0}" -gt 0 ] || { echo "FAIL no kernel launch went through the shim's hooks (report: '${launches}')"; fails=$((fails + 1)); }
        [ "${sgd:-0}" = $steps ] || { echo "FAIL sgd_update launches through the hooks: '${sgd}', want $steps"; fails=$((fails + 1)); }
        grep -q 'sync point for gradients\[0\] (at: "sgd_update")' "$d/hooks.err" ||
            { echo "FAIL the policy's sync point did not match (no 'sync point for gradients[0]' line)"; fails=$((fails + 1)); }
        [ "$a0" = 0 ] || { echo "FAIL without the switch the report counts '$a0' all-reduces (world 1: want 0)"; fails=$((fails + 1)); }
        if [ "$h1" != $steps ] || [ "$a1" != $steps ] || [ "$b1" != mpi ]; then
            echo "FAIL with the switch: hits '$h1', all-reduces '$a1', backend '$b1' (want $steps, $steps, mpi)"; fails=$((fails + 1))
        fi
        for t in hooks coll; do
            [ -e "$d/$t.bin" ] && ! cmp -s "$d/plain.bin" "$d/$t.bin" &&
                { echo "FAIL $t: parameters differ from the plain run"; fails=$((fails + 1)); }
        done
    } >"$L/$n.txt" 2>&1
    if [ $fails -eq 0 ]; then
        record "$n" PASS "world 1, sgd policy, $steps steps: $launches launches went through the shim's hooks (sgd_update $sgd), the sync point gradients[0] matched; ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 (mpi backend): $h1 hits, $a1 all-reduces (0 without); parameters bit-identical to the plain run"
    else
        record "$n" FAIL "$fails problems (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}

# ---- the NCCL sync path on one GPU: the world-1 switch with ACCELSHIM_BACKEND=nccl ----
# an all-reduce of one rank through the real NCCL, its scratch and the shim's cast kernels; wire
# same: bit-identical to the run without the switch; bf16: within 2e-3 and different (the casts ran)
world1_nccl() {   # world1_nccl NAME TRAINER
    local n=$1 tr=$2 d wire fails=0 on off a_on a_off b_on c_on out figs=""
    for wire in same bf16; do
        d=$L/$n/$wire; mkdir -p "$d"
        eq_policy "$EQ_POL/sgd-fused.yaml" "$wire" "$d/policy.yaml"
        on=$d/on off=$d/off
        tmo 60 env LD_LIBRARY_PATH="$NCCL_LDP" ACCELSHIM_POLICY="$d/policy.yaml" ACCELSHIM_BACKEND=nccl ACCELSHIM_LOG=info \
            ACCELSHIM_REPORT="$off.json" ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" "$tr" --steps "$STEPS" --batch "$BATCH" \
            --save "$off.bin" >"$off.out" 2>"$off.err" || { echo "FAIL wire=$wire without the switch: exit $?: $(tail -2 "$off.err" | tr '\n' ' ')"; fails=$((fails + 1)); continue; }
        tmo 60 env LD_LIBRARY_PATH="$NCCL_LDP" ACCELSHIM_POLICY="$d/policy.yaml" ACCELSHIM_BACKEND=nccl ACCELSHIM_LOG=info \
            ACCELSHIM_REPORT="$on.json" ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" \
            "$tr" --steps "$STEPS" --batch "$BATCH" --save "$on.bin" >"$on.out" 2>"$on.err" ||
            { echo "FAIL wire=$wire with the switch: exit $?: $(grep -m2 -i 'error\|nccl\|accelshim:' "$on.err" | tr '\n' ' ')"; fails=$((fails + 1)); continue; }
        a_on=$(jfield "$on.json" allreduces) a_off=$(jfield "$off.json" allreduces) b_on=$(jfield "$on.json" backend)
        c_on=$(jfield "$on.json" casts)
        echo "wire=$wire: with the switch backend '$b_on', all-reduces '$a_on', collectives with a cast '$c_on'; without: all-reduces '$a_off'"
        [ "$b_on" = nccl ] || { echo "FAIL wire=$wire: the backend is '$b_on', not nccl: $(grep -m1 -i 'unavailable' "$on.err")"; fails=$((fails + 1)); }
        [ "${a_on:-0}" -gt 0 ] || { echo "FAIL wire=$wire: no all-reduce with the switch"; fails=$((fails + 1)); }
        [ "$a_off" = 0 ] || { echo "FAIL wire=$wire: '$a_off' all-reduces without the switch (want 0)"; fails=$((fails + 1)); }
        if [ "$wire" = same ]; then
            cmp -s "$on.bin" "$off.bin" || { echo "FAIL wire=same: parameters differ from the run without the switch: $("$CMP" "$on.bin" "$off.bin" --identical 2>&1 | head -2 | tr '\n' ' ')"; fails=$((fails + 1)); }
        else
            out=$("$CMP" "$on.bin" "$off.bin" --max-abs 2e-3 2>&1) || { echo "FAIL wire=bf16: beyond 2e-3 of the run without the switch: $out"; fails=$((fails + 1)); }
            cmp -s "$on.bin" "$off.bin" && { echo "FAIL wire=bf16: bit-identical: the casts did not run"; fails=$((fails + 1)); }
            [ "${c_on:-0}" -gt 0 ] || { echo "FAIL wire=bf16: the report counts no collective with a cast"; fails=$((fails + 1)); }
        fi
        figs="$figs $wire: $a_on all-reduces;"
    done >"$L/$n.txt" 2>&1
    if [ $fails -eq 0 ]; then
        record "$n" PASS "ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1, backend nccl (NCCL with 1 rank, scratch, cast kernels), $STEPS steps: $(grep -o 'all-reduces .[0-9]*.' "$L/$n.txt" | head -1 | tr -d "'") per run; wire same bit-identical to the run without the switch, bf16 within 2e-3 and different (casts ran); 0 collectives without the switch"
    else
        record "$n" FAIL "$fails problems (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}

# ---- overlap on one GPU: the communication thread and stream against the real driver ----
# examples/mlp-overlap.yaml with the world-1 switch and NCCL: each ready region's all-reduce on the
# shim's own stream, ordered by events; bit-identical to ACCELSHIM_OVERLAP=off, and the exit report
# counts regions reduced early
overlap_world1() {   # overlap_world1 NAME TRAINER
    local n=$1 tr=$2 d=$L/$1 v early="" fails=0
    mkdir -p "$d"
    {
        for v in off on; do
            tmo 60 env LD_LIBRARY_PATH="$NCCL_LDP" ACCELSHIM_POLICY="$ROOT/examples/mlp-overlap.yaml" ACCELSHIM_BACKEND=nccl \
                ACCELSHIM_LOG=info ACCELSHIM_OVERLAP=$v ACCELSHIM_DEBUG_WORLD1_COLLECTIVES=1 ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" \
                "$tr" --steps "$STEPS" --batch "$BATCH" --save "$d/$v.bin" >"$d/$v.out" 2>"$d/$v.err" ||
                echo "FAIL overlap $v: exit $?: $(grep -m2 -i 'error\|accelshim:' "$d/$v.err" | tr '\n' ' ')"
        done
        early=$(grep -h 'report: overlap:' "$d/on.err" 2>/dev/null | head -1)
        echo "with overlap: ${early:-no overlap report}"
        case $early in *": 0 region(s)"*|"") echo "FAIL: no region was reduced early" ;; esac
        cmp -s "$d/on.bin" "$d/off.bin" ||
            echo "FAIL: parameters differ from ACCELSHIM_OVERLAP=off: $("$CMP" "$d/on.bin" "$d/off.bin" --identical 2>&1 | head -2 | tr '\n' ' ')"
    } >"$L/$n.txt" 2>&1
    fails=$(grep -c '^FAIL' "$L/$n.txt")
    early=$(sed -n 's/^with overlap: .*overlap: //p' "$L/$n.txt" | cut -c1-160)
    if [ "$fails" -eq 0 ]; then
        record "$n" PASS "ready points (examples/mlp-overlap.yaml), world-1 switch, nccl, $STEPS steps: bit-identical to ACCELSHIM_OVERLAP=off; $early"
    else
        record "$n" FAIL "$fails problems (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}

# ---- two ranks on the one GPU with NCCL: does NCCL accept it? ----
# As is, NCCL refuses a second rank on a GPU it already uses ("Duplicate GPU"); with a distinct
# NCCL_HOSTID per rank (and P2P/SHM off, sockets on lo) each rank looks like another host.
chk_nccl_2ranks() {
    need nccl-2ranks-1gpu "$COLL" || return
    if [ $HAVE_NCCL = 0 ]; then record nccl-2ranks-1gpu SKIP "libnccl.so.2 not found (ldconfig, LD_LIBRARY_PATH, a Python nvidia-nccl wheel, a search)"; return; fi
    if ! command -v mpirun >/dev/null 2>&1; then record nccl-2ranks-1gpu SKIP "mpirun is not installed (make gpu-bundle)"; return; fi
    local r1 r2 a b
    mpi_run 50 2 -x LD_LIBRARY_PATH="$NCCL_LDP" "${XKL[@]}" "$COLL" --backend nccl --expect nccl --quick >"$L/nccl-2ranks-plain.txt" 2>&1; r1=$?
    # shellcheck disable=SC2016  # expanded by each rank's shell
    mpi_run 50 2 -x LD_LIBRARY_PATH="$NCCL_LDP" "${XKL[@]}" -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo \
        bash -c 'NCCL_HOSTID=gpucheck-rank$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$COLL" --backend nccl --expect nccl --quick \
        >"$L/nccl-2ranks-hostid.txt" 2>&1; r2=$?
    a="as is: $([ $r1 -eq 0 ] && echo accepted || echo "refused/failed (exit $r1: $(grep -m1 -i 'duplicate\|error\|FAIL' "$L/nccl-2ranks-plain.txt" | cut -c1-120))")"
    b="NCCL_HOSTID per rank + P2P/SHM off: $([ $r2 -eq 0 ] && echo accepted || echo "refused/failed (exit $r2: $(grep -m1 -i 'duplicate\|error\|FAIL' "$L/nccl-2ranks-hostid.txt" | cut -c1-120))")"
    if [ $r1 -eq 0 ] || [ $r2 -eq 0 ]; then
        record nccl-2ranks-1gpu PASS "test_coll --backend nccl, 2 ranks on device 0: $a; $b"
    elif grep -qi 'duplicate gpu\|invalid usage' "$L"/nccl-2ranks-*.txt; then
        record nccl-2ranks-1gpu SKIP "NCCL refuses two ranks on one GPU: $a; $b (NCCL with 2 ranks needs 2 GPUs)" expected
    else
        record nccl-2ranks-1gpu FAIL "$a; $b (logs/nccl-2ranks-*.txt)"
    fi
}
# ---- passthrough identity: world 1, no policy, with and without the shim ----
# pair TRAINER NAME ARGS...: stdout, stderr and --save identical; sets pfails
pair() {
    local tr=$1 tag=$2; shift 2
    mkdir -p "$L/${tag%.*}"
    local a=$L/${tag%.*}/${tag##*.}-plain b=$L/${tag%.*}/${tag##*.}-shim
    tmo 60 "$tr" "$@" --save "$a.bin" >"$a.out" 2>"$a.err"; local r1=$?
    tmo 60 env LD_PRELOAD="$SHIM" "$tr" "$@" --save "$b.bin" >"$b.out" 2>"$b.err"; local r2=$?
    if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
        echo "FAIL [$*]: exit $r1 plain / $r2 shim: $(tail -1 "$a.err") / $(tail -1 "$b.err")"; pfails=$((pfails + 1))
    elif ! cmp -s "$a.out" "$b.out" || ! cmp -s "$a.bin" "$b.bin" || ! cmp -s "$a.err" "$b.err"; then
        echo "FAIL [$*]: output differs under the shim:"; diff "$a.out" "$b.out" | head -4; diff "$a.err" "$b.err" | head -4
        cmp "$a.bin" "$b.bin"; pfails=$((pfails + 1))
    else
        echo "ok [$*]: identical ($(grep -m1 checksum "$b.out"))"
    fi
}
passthrough() {   # passthrough NAME TRAINER
    local n=$1 tr=$2 i=0 args
    pfails=0
    while read -r args; do
        [ "$PROFILE" = first ] && [ $i -ge 3 ] && break   # first profile: the first 3 option sets
        i=$((i + 1))
        # shellcheck disable=SC2086  # option lists, split on purpose
        pair "$tr" "$n.$i" $args
    done >"$L/$n.txt" 2>&1 <<'EOF'
--steps 20 --batch 8
--steps 15 --batch 4 --lr 0.05 --seed 7
--steps 10 --optimizer adam --update per-tensor
--steps 10 --clip 0.5
--steps 10 --optimizer adam --clip 1.0
--steps 10 --shard-rank 1 --shard-count 3
--steps 0
EOF
    if [ $pfails -eq 0 ]; then
        record "$n" PASS "$i option sets: stdout, stderr and --save bit-identical with and without the shim"
    else
        record "$n" FAIL "$pfails of $i option sets differ (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt")"
    fi
}

# ---- rt_mlp computes what mlp computes (same model, data, init, kernels) ----
chk_rt_vs_mlp() {
    local ok msg args av c same
    if [ -n "$FAKE" ]; then
        record rt_mlp-vs-mlp SKIP "fake mode: rt_mlp cannot run on hostcuda" expected
    elif need rt_mlp-vs-mlp "$RT" "$MLP" "$CMP"; then
        ok=0 msg=""
        for args in "--steps 20 --batch 8" "--steps 10 --optimizer adam --update per-tensor --clip 1.0"; do
            read -r -a av <<<"$args"
            if ! tmo 60 "$MLP" "${av[@]}" --save "$L/vs-mlp.bin" >"$L/vs-mlp.out" 2>&1 ||
               ! tmo 60 "$RT" "${av[@]}" --save "$L/vs-rt.bin" >"$L/vs-rt.out" 2>&1; then
                ok=1; msg="$msg [$args] a run failed: $(tail -1 "$L/vs-mlp.out" 2>/dev/null) / $(tail -1 "$L/vs-rt.out" 2>/dev/null);"; continue
            fi
            if ! c=$("$CMP" "$L/vs-rt.bin" "$L/vs-mlp.bin" --rtol 1e-4 --atol 1e-5 2>&1); then
                ok=1; msg="$msg [$args] $(tr '\n' ' ' <<<"$c");"; continue
            fi
            same=differ; cmp -s "$L/vs-rt.bin" "$L/vs-mlp.bin" && same=bit-identical
            msg="$msg [$args] $same, $(head -1 <<<"$c");"
        done
        if [ $ok -eq 0 ]; then record rt_mlp-vs-mlp PASS "final parameters within rtol 1e-4:$msg"
        else record rt_mlp-vs-mlp FAIL "rt_mlp and mlp disagree:$msg"; fi
    fi
}

# ---- device remap: the program sees one device, its memory on the chosen physical one ----
chk_remap() {
    need remap "$ROUTING" "$SHIM" "$ITEST_PTX" || return
    local plain
    rfails=0
    rcase() {   # rcase WANT_ORDINAL WARN_REGEX_OR_EMPTY ENV...
        local want=$1 warn=$2; shift 2
        local got
        got=$(tmo 30 env "$@" ITEST_PTX="$ITEST_PTX" LD_PRELOAD="$SHIM" "$ROUTING" --remap 2>"$L/remap.err")
        if [ "$got" != "count=1 get1=101 ordinal=$want" ]; then
            echo "FAIL [$*]: got '$got', want 'count=1 get1=101 ordinal=$want'"; cat "$L/remap.err"; rfails=$((rfails + 1))
        elif [ -n "$warn" ] && ! grep -Eq "$warn" "$L/remap.err"; then
            echo "FAIL [$*]: no warning /$warn/"; rfails=$((rfails + 1))
        else
            echo "ok [$*] -> $got"
        fi
    }
    rrefuse() {  # rrefuse LINE_REGEX ENV...: a device the machine lacks stops the program, exit 2
        local want=$1 rc=0; shift
        tmo 30 env "$@" ITEST_PTX="$ITEST_PTX" LD_PRELOAD="$SHIM" "$ROUTING" --remap >/dev/null 2>"$L/remap.err" || rc=$?
        if [ "$rc" -ne 2 ] || ! grep -Eq "$want" "$L/remap.err"; then
            echo "FAIL [$*]: exit $rc (want 2), no line /$want/"; cat "$L/remap.err"; rfails=$((rfails + 1))
        else
            echo "ok [$*] -> exit 2: $(cat "$L/remap.err")"
        fi
    }
    {
        rcase 0 "" ACCELSHIM_DEVICES=0
        rcase 0 "" ACCELSHIM_DEVICES=0 ACCELSHIM_LOCAL_RANK=1
        rcase 0 "" ACCELSHIM_LOCAL_RANK=0
        if [ -n "$FAKE" ]; then rrefuse "ACCELSHIM_DEVICES=1: expected device ordinals below 1 " HOSTCUDA_DEVICES=1 ACCELSHIM_DEVICES=1
        else rrefuse "ACCELSHIM_DEVICES=99: expected device ordinals below" ACCELSHIM_DEVICES=99; fi
    } >"$L/remap.txt" 2>&1
    plain=$(tmo 30 env ITEST_PTX="$ITEST_PTX" "$ROUTING" --remap 2>&1)
    if [ $rfails -eq 0 ]; then
        record remap PASS "ACCELSHIM_DEVICES=0 (also local rank 1, and a device the machine lacks -> exit 2): count=1, device 1 invalid, memory on ordinal 0 (without the shim: $plain)"
    else
        record remap FAIL "$rfails cases (logs/remap.txt): $(grep -m1 '^FAIL' "$L/remap.txt")"
    fi
}

# ---- collectives: NCCL at world 1 (cast kernels on this GPU), MPI with 2 ranks ----
chk_coll_nccl() {
    need coll-nccl-world1 "$COLL" || return
    if [ $HAVE_NCCL = 0 ]; then
        record coll-nccl-world1 SKIP "libnccl.so.2 not found (ldconfig, LD_LIBRARY_PATH, a Python nvidia-nccl wheel, a search)"
    elif tmo 60 env LD_LIBRARY_PATH="$NCCL_LDP" "$COLL" --backend nccl --expect nccl --expect-warnings 0 >"$L/coll-nccl.txt" 2>&1; then
        record coll-nccl-world1 PASS "test_coll on NCCL, world 1: allreduce f32/bf16/f16 x wires (cast kernels' PTX on this GPU), broadcast, barrier: $(grep -m1 '^PASS' "$L/coll-nccl.txt" | cut -c1-100)"
    else
        record coll-nccl-world1 FAIL "test_coll --backend nccl (logs/coll-nccl.txt): $(grep -m2 'FAIL\|error' "$L/coll-nccl.txt" | tr '\n' ';' | cut -c1-300)"
    fi
}

XKL=()   # mpirun -x for hostcuda's kernel libraries (dry run only)
[ -n "$FAKE" ] && XKL=(-x HOSTCUDA_KERNEL_LIBS="$HOSTCUDA_KERNEL_LIBS")
# shellcheck source=tests/equivalence/lib.sh
. "$ROOT/tests/equivalence/lib.sh"   # eq_policy, EQ_POL (its hostcuda runners are not used)
# mpi_run SECONDS NP ARGS...: mpirun with lib.sh's eq_mpirun flags, but under ONE timeout (this
# script's deadline): eq_mpirun's own timeout sits in its own process group, out of tmo's reach
mpi_run() {
    local t=$1 np=$2 root=(); shift 2
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    tmo "$t" mpirun "${root[@]}" --mca plm isolated --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}
chk_coll_mpi() {
    need coll-mpi-2ranks "$COLL" || return
    if ! command -v mpirun >/dev/null 2>&1; then
        record coll-mpi-2ranks SKIP "mpirun is not installed"
    elif mpi_run 45 2 -x LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "${XKL[@]}" "$COLL" --backend mpi --expect mpi --expect-warnings 0 --quick >"$L/coll-mpi.txt" 2>&1; then
        record coll-mpi-2ranks PASS "test_coll on the MPI backend, 2 ranks sharing device 0: $(grep -m1 '^PASS' "$L/coll-mpi.txt" | cut -c1-100)"
    else
        record coll-mpi-2ranks FAIL "test_coll --backend mpi under mpirun -np 2 (logs/coll-mpi.txt): $(grep -m2 'FAIL\|rror' "$L/coll-mpi.txt" | tr '\n' ';' | cut -c1-300)"
    fi
}

# ---- equivalence: N ranks under the shim vs ONE rank with batch N*B ----
STEPS=${EQ_STEPS:-25} BATCH=${EQ_BATCH:-4}
bound() { case $1-$2 in bf16-adam*) echo 2.5e-2 ;; bf16-*) echo 2e-3 ;; esac; }   # equiv_suite.sh's
args_for() {
    case $1 in
        sgd-fused)       echo "--optimizer sgd --update fused" ;;
        adam-per-tensor) echo "--optimizer adam --update per-tensor" ;;
        clip-norm)       echo "--optimizer sgd --update fused --clip 0.05" ;;
        init-broadcast)  echo "--optimizer sgd --update fused --init per-process" ;;
    esac
}
# ranks NP BACKEND POLICY PREFIX TRAINER ARGS...: each rank its shard, PREFIX.r and PREFIX.r.log
ranks() {
    local np=$1 backend=$2 policy=$3 prefix=$4 tr=$5; shift 5
    local ldp=$LD_LIBRARY_PATH
    [ "$backend" = nccl ] && ldp=$NCCL_LDP
    # shellcheck disable=SC2016  # expanded by each rank's shell
    mpi_run 45 "$np" -x LD_LIBRARY_PATH="$ldp" "${XKL[@]}" -x ACCELSHIM_POLICY="$policy" \
        -x ACCELSHIM_SYNC="${GC_SYNC:-required}" -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_LOG=info -x ACCELSHIM_DEVICES=0 -x GC_SHIM="$SHIM" \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$GC_SHIM exec "$0" "$@" --shard-rank "$r" \
                 --shard-count "$OMPI_COMM_WORLD_SIZE" --save "'"$prefix"'.$r" >"'"$prefix"'.$r.log" 2>&1' "$tr" "$@"
}
equivalence() {   # equivalence NAME TRAINER
    local n=$1 tr=$2 d mode wire np=2 failed=0 cases=0 out desc rc capped=0
    local dir=$L/$n; mkdir -p "$dir"
    # negative control first: without a policy the two ranks diverge (the comparison can fail);
    # sync optional, or the shim ends such a job with exit 7
    cases=$((cases + 1)); d=$dir/nopolicy; mkdir -p "$d"
    if GC_SYNC=optional ranks $np mpi "" "$d/rank" "$tr" --steps "$STEPS" --batch "$BATCH" >"$L/$n.txt" 2>&1 &&
       ! "$CMP" "$d/rank.1" "$d/rank.0" --identical >/dev/null 2>&1; then
        echo "ok control: without a policy the ranks diverge" >>"$L/$n.txt"
    else
        echo "FAIL control: without a policy the ranks did not diverge (or failed)" >>"$L/$n.txt"; failed=$((failed + 1))
    fi
    for mode in sgd-fused adam-per-tensor clip-norm init-broadcast; do
        for wire in same bf16; do
            if [ $((CHECK_END - SECONDS)) -lt 15 ]; then capped=1; break 2; fi   # too little left for a case
            cases=$((cases + 1)); d=$dir/$mode-$wire; mkdir -p "$d"
            desc="$mode wire=$wire"
            eq_policy "$EQ_POL/$mode.yaml" "$wire" "$d/policy.yaml"
            # shellcheck disable=SC2046
            set -- $(args_for "$mode")
            ranks $np mpi "$d/policy.yaml" "$d/rank" "$tr" --steps "$STEPS" --batch "$BATCH" "$@"; rc=$?
            if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                echo "FAIL $desc: the ranks timed out (hang?); the remaining cases are not run"; failed=$((failed + 1)); break 2
            elif [ $rc -ne 0 ]; then
                echo "FAIL $desc: ranks failed (exit $rc): $(tail -2 "$d"/rank.*.log | tr '\n' ' ')"; failed=$((failed + 1)); continue
            fi
            local ref=("$@")
            if [ "$mode" = init-broadcast ]; then
                ref=(--optimizer sgd --update fused --init-seed "$(sed -n 's/.*init_seed=\([0-9]*\).*/\1/p' "$d/rank.0.log" | head -1)")
            fi
            if ! tmo 60 "$tr" --steps "$STEPS" --batch $((np * BATCH)) "${ref[@]}" --save "$d/ref" >"$d/ref.log" 2>&1; then
                echo "FAIL $desc: reference failed: $(tail -1 "$d/ref.log")"; failed=$((failed + 1)); continue
            fi
            local ok=0
            grep -q 'collectives backend: mpi$' "$d/rank.0.log" || { ok=1; echo "FAIL $desc: rank 0 did not run the mpi backend"; }
            out=$("$CMP" "$d/rank.1" "$d/rank.0" --identical 2>&1) || { ok=1; echo "FAIL $desc: rank 1 vs rank 0: $out"; }
            if [ "$wire" = same ]; then out=$("$CMP" "$d/rank.0" "$d/ref" --rtol 1e-5 --atol 1e-6 2>&1) || ok=1
            else out=$("$CMP" "$d/rank.0" "$d/ref" --max-abs "$(bound "$wire" "$mode")" 2>&1) || ok=1; fi
            echo "$([ $ok -eq 0 ] && echo ok || echo FAIL) $desc: ranks identical; rank 0 vs 1 rank batch $((np * BATCH)): $(tr '\n' ' ' <<<"$out")"
            [ $ok -eq 0 ] || failed=$((failed + 1))
        done
    done >>"$L/$n.txt" 2>&1
    if [ $failed -eq 0 ] && [ $capped = 1 ]; then
        record "$n" SKIP "the check's time cap was spent after $cases of 9 cases (control first), all passed (GPU_CHECK_PROFILE=full or GPU_CHECK_ONLY=$n for all; logs/$n.txt)"
    elif [ $failed -eq 0 ]; then
        record "$n" PASS "2 ranks on device 0 (MPI backend) = 1 rank batch $((np * BATCH)): sgd, adam per-tensor, clip, init broadcast x wire same (rtol 1e-5)/bf16 (max-abs 2e-3, adam 2.5e-2); ranks bit-identical; no-policy control diverges ($cases cases)"
    else
        record "$n" FAIL "$failed of $cases cases (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}
# world 1, NCCL backend asked for: with a policy the shim changes nothing (DESIGN.md §5: no

# ---- launch overhead on this driver: ns per cuLaunchKernel, plain vs shim (a figure) ----
chk_launch_overhead() {
    need launch-overhead "$BENCH" "$SHIM" "$ITEST_PTX" || return
    local n p s e pol added extra
    n=${GPU_CHECK_LAUNCHES:-200000}; [ "$PROFILE" = first ] && n=${GPU_CHECK_LAUNCHES:-100000}; [ -n "$FAKE" ] && n=20000
    ns_of() { sed -n 's/.*best_ns_per_launch \([0-9.]*\).*/\1/p'; }
    p=() s=() e=()
    pol=$ROOT/bench/rule_elsewhere.yaml   # a policy whose rule matches another kernel: same fast path
    run_bench() { tmo 20 env "$@" "$BENCH" --launches "$n" --repeat 3 --ptx "$ITEST_PTX" --sync-every 1000 2>>"$L/bench.err" | ns_of; }
    for _ in $(seq "$REPS"); do
        p+=("$(run_bench)")
        s+=("$(run_bench LD_PRELOAD="$SHIM")")
        [ -e "$pol" ] && e+=("$(run_bench ACCELSHIM_POLICY="$pol" ACCELSHIM_LOG=error LD_PRELOAD="$SHIM")")
    done
    best() { printf '%s\n' "$@" | grep . | sort -g | head -1; }
    FIG_PLAIN=$(best "${p[@]}") FIG_SHIM=$(best "${s[@]}") FIG_RULE=$(best "${e[@]}")
    if [ -n "$FIG_PLAIN" ] && [ -n "$FIG_SHIM" ]; then
        added=$(awk -v a="$FIG_PLAIN" -v b="$FIG_SHIM" 'BEGIN { printf "%.2f", b - a }')
        extra=""
        [ -n "$FIG_RULE" ] && extra=", shim + a rule for another kernel $FIG_RULE ns"
        record launch-overhead PASS "cuLaunchKernel of a kernel no rule matches, $n launches x3, best of $REPS alternating runs: plain $FIG_PLAIN ns, shim $FIG_SHIM ns (added $added ns; target < 25)$extra; a figure, not asserted"
    else
        record launch-overhead FAIL "the benchmark did not run: $(tail -2 "$L/bench.err" | tr '\n' ' ')"
    fi
}

# ---- matmul: fp32 cuBLAS GEMMs rewritten by ACCELSHIM_MATMUL (docs/mixed-precision.md) ----
# gemm_bench (cublasSgemm_v2 in a loop) with no shim and under the shim at default/tf32/bf16,
# alternating, best of 3: ms per GEMM (figures), the exit report's counts per compute type,
# default bit-identical to no shim, tf32/bf16 different; then mlp --gemm cublas per mode: loss falls.
# gemm_counts FILE: the exit report's "32F a, 32F_FAST_TF32 b, ..." part (ACCELSHIM_LOG=info)
gemm_counts() { sed -n 's/.*INFO report: cublas GEMMs (matmul: [a-z0-9]*): \(.*\); kept fp32.*$/\1/p' "$1" | tail -1; }
want_counts() {   # want_counts MODE G: what the report must say for G fp32 GEMMs under MODE
    local t=0 f=0 b=0 d=0
    case $1 in default) d=$2 ;; tf32) t=$2 ;; bf16) b=$2 ;; esac
    echo "32F $d, 32F_FAST_TF32 $t, 32F_FAST_16BF $b, 32F_FAST_16F 0, other 0"
}
chk_matmul_gemm() {
    need matmul-gemm "$GEMM_BENCH" "$SHIM" || return
    local gn gi d mfails g gref i m got exp gs
    if [ $HAVE_CUBLAS = 0 ]; then
        record matmul-gemm SKIP "libcublas.so.13 not found (ldconfig, LD_LIBRARY_PATH, a Python nvidia-cublas wheel, a search)"
    else
        gn=${GPU_CHECK_GEMM_N:-4096} gi=${GPU_CHECK_GEMM_ITERS:-30}
        [ "$PROFILE" = first ] && gi=${GPU_CHECK_GEMM_ITERS:-20}
        [ -n "$FAKE" ] && gn=64 gi=5
        d=$L/matmul-gemm; mkdir -p "$d"
        mfails=0
        # gb TAG ENV...: one run of gemm_bench; stdout TAG.out, stderr TAG.err
        gb() {
            local tag=$1; shift
            tmo 30 env LD_LIBRARY_PATH="$BLAS_LDP" "$@" "$GEMM_BENCH" --n "$gn" --iters "$gi" \
                >"$d/$tag.out" 2>"$d/$tag.err"
            local r=$?
            if [ $r -ne 0 ]; then echo "FAIL $tag: exit $r: $(tail -2 "$d/$tag.err" | tr '\n' ' ')"; mfails=$((mfails + 1)); fi
        }
        {
            for i in $(seq "$REPS"); do
                gb "plain.$i"
                for m in $MM_MODES; do gb "$m.$i" ACCELSHIM_MATMUL="$m" ACCELSHIM_LOG=info LD_PRELOAD="$SHIM"; done
            done
        } >"$L/matmul-gemm.txt" 2>&1
        ms_of() { sed -n 's/^ms_per_gemm \([0-9.]*\)$/\1/p' "$d/$1.out"; }
        sum_of() { grep -m1 '^checksum ' "$d/$1.out"; }
        bestms() { local i; for i in $(seq "$REPS"); do ms_of "$1.$i"; done | grep . | sort -g | head -1; }
        g=$(sed -n 's/.* gemms \([0-9]*\)$/\1/p' "$d/plain.1.out")
        FIG_GEMM_N=$gn FIG_GEMM_PLAIN=$(bestms plain)
        gref=$(sum_of plain.1)
        {
            [ -n "$gref" ] || { echo "FAIL plain: no checksum"; mfails=$((mfails + 1)); }
            for i in $(seq "$REPS"); do
                [ "$(sum_of "plain.$i")" = "$gref" ] || { echo "FAIL plain.$i: checksum '$(sum_of "plain.$i")' != run 1's '$gref' (no shim, not deterministic?)"; mfails=$((mfails + 1)); }
                for m in $MM_MODES; do
                    got=$(gemm_counts "$d/$m.$i.err") exp=$(want_counts "$m" "${g:-?}")
                    [ "$got" = "$exp" ] || { echo "FAIL $m.$i: GEMM report '$got', want '$exp'"; mfails=$((mfails + 1)); }
                    gs=$(sum_of "$m.$i")
                    if [ "$m" = default ]; then
                        [ "$gs" = "$gref" ] || { echo "FAIL $m.$i: '$gs' is not bit-identical to no shim '$gref'"; mfails=$((mfails + 1)); }
                    elif [ -z "$gs" ] || [ "$gs" = "$gref" ]; then
                        echo "FAIL $m.$i: '$gs' is the fp32 result '$gref' (the compute type did not change)"; mfails=$((mfails + 1))
                    fi
                done
            done
            for m in $MM_MODES; do
                FIG_GEMM[$m]=$(bestms "$m")
                echo "$m: best ms/GEMM ${FIG_GEMM[$m]:-?}; $(sum_of "$m.1"); $(gemm_counts "$d/$m.1.err")"
            done
            echo "plain: best ms/GEMM ${FIG_GEMM_PLAIN:-?}; $gref"
        } >>"$L/matmul-gemm.txt" 2>&1
        for m in tf32 bf16; do
            FIG_SPEEDUP[$m]=$(awk -v a="${FIG_GEMM[default]:-}" -v b="${FIG_GEMM[$m]:-}" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b }')
        done
        if [ $mfails -eq 0 ]; then
            record matmul-gemm PASS "cublasSgemm_v2 n=$gn, $gi timed + 2 warm-up calls, best of $REPS alternating runs: no shim ${FIG_GEMM_PLAIN:-?} ms, default ${FIG_GEMM[default]:-?} ms, tf32 ${FIG_GEMM[tf32]:-?} ms (x${FIG_SPEEDUP[tf32]:-?}), bf16 ${FIG_GEMM[bf16]:-?} ms (x${FIG_SPEEDUP[bf16]:-?}); reports count $g GEMMs per run in the mode's compute type; default bit-identical to no shim, tf32/bf16 differ (figures, speed not asserted)"
        else
            record matmul-gemm FAIL "$mfails problems (logs/matmul-gemm.txt): $(grep -m1 '^FAIL' "$L/matmul-gemm.txt" | cut -c1-300)"
        fi
    fi
}
chk_matmul_mlp() {
    need matmul-mlp "$MLP" "$SHIM" || return
    local mm_steps mfails curves d m a z got exp
    if [ $HAVE_CUBLAS = 0 ]; then
        record matmul-mlp SKIP "libcublas.so.13 not found (ldconfig, LD_LIBRARY_PATH, a Python nvidia-cublas wheel, a search)"
    else
        mm_steps=${GPU_CHECK_MM_STEPS:-50} mfails=0 curves=""
        d=$L/matmul-mlp; mkdir -p "$d"
        first_loss() { awk '/^step /{print $4; exit}' "$1"; }
        last_loss() { awk '/^step /{l = $4} END {print l}' "$1"; }
        {
            tmo 30 env LD_LIBRARY_PATH="$BLAS_LDP" "$MLP" --steps "$mm_steps" --gemm cublas >"$d/plain.out" 2>"$d/plain.err" ||
                { echo "FAIL plain: exit $?: $(tail -2 "$d/plain.err" | tr '\n' ' ')"; mfails=$((mfails + 1)); }
            for m in $MM_MODES; do
                if ! tmo 30 env LD_LIBRARY_PATH="$BLAS_LDP" ACCELSHIM_MATMUL="$m" ACCELSHIM_LOG=info LD_PRELOAD="$SHIM" \
                        "$MLP" --steps "$mm_steps" --gemm cublas >"$d/$m.out" 2>"$d/$m.err"; then
                    echo "FAIL $m: exit $?: $(tail -2 "$d/$m.err" | tr '\n' ' ')"; mfails=$((mfails + 1)); continue
                fi
                a=$(first_loss "$d/$m.out") z=$(last_loss "$d/$m.out")
                FIG_LOSS0[$m]=$a FIG_LOSS1[$m]=$z
                curves="$curves $m $a -> $z;"
                got=$(gemm_counts "$d/$m.err") exp=$(want_counts "$m" $((5 * mm_steps)))
                [ "$got" = "$exp" ] || { echo "FAIL $m: GEMM report '$got', want '$exp'"; mfails=$((mfails + 1)); }
                if ! awk -v a="$a" -v z="$z" 'BEGIN { exit !(a != "" && z != "" && z + 0 < a + 0) }'; then
                    echo "FAIL $m: the loss did not fall: first '$a', last '$z'"; mfails=$((mfails + 1))
                fi
                if [ "$m" = default ] && ! cmp -s "$d/plain.out" "$d/default.out"; then
                    echo "FAIL default: stdout differs from the run without the shim"; diff "$d/plain.out" "$d/default.out" | head -4
                    mfails=$((mfails + 1))
                fi
                echo "$m: loss $a -> $z; $got"
            done
        } >"$L/matmul-mlp.txt" 2>&1
        if [ $mfails -eq 0 ]; then
            record matmul-mlp PASS "mlp --gemm cublas, $mm_steps steps (5 cublasSgemm_v2 each): loss falls in every mode:$curves reports count $((5 * mm_steps)) GEMMs in the mode's compute type; default's output bit-identical to no shim"
        else
            record matmul-mlp FAIL "$mfails problems (logs/matmul-mlp.txt): $(grep -m1 '^FAIL' "$L/matmul-mlp.txt" | cut -c1-300)"
        fi
    fi
}

# ---- explain mode on the real driver: the images a program loads (rt_mlp: cudart's fatbin through
# cuLibraryLoadData; mlp: PTX text), their kernel facts, the step and its reading ----
explain_check() {   # explain_check NAME TRAINER
    local n=$1 tr=$2 d=$L/$1 fails=0 args
    mkdir -p "$d"
    {
    for args in "--steps 4" "--steps 4 --clip 1.0"; do
        local tag=${args// /}; tag=${tag//-/}
        rm -f "$d/$tag.txt"
        # shellcheck disable=SC2086  # $args: the trainer's words
        tmo 60 env ACCELSHIM_EXPLAIN="$d/$tag.txt" ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" "$tr" $args \
            >"$d/$tag.out" 2>"$d/$tag.err" || { echo "FAIL [$args] exit $?: $(tail -1 "$d/$tag.err")"; fails=$((fails + 1)); }
        [ -s "$d/$tag.txt" ] || { echo "FAIL [$args] no explanation written"; fails=$((fails + 1)); continue; }
        sed -n '/^images:/,/^launches:/p' "$d/$tag.txt" | sed "s/^/[$args] /"
        grep '^rule:' "$d/$tag.txt" | sed "s/^/[$args] /"
        local g='^rule: gradients at: "sgd_update" buffer: \{ arg: 1, count_arg: 2 \} dtype: f32'
        case $args in *clip*) g='^rule: gradients at: "grad_norm_squared" buffer: \{ arg: 1, count_arg: 2 \} dtype: f32' ;; esac
        grep -Eq "$g" "$d/$tag.txt" || { echo "FAIL [$args] no gradients rule matching '$g'"; fails=$((fails + 1)); }
        grep -Eq '^rule: parameters at: "linear_forward\*" buffer: \{ arg: 1, region: allocation \}' "$d/$tag.txt" ||
            { echo "FAIL [$args] no parameters rule at linear_forward* arg 1"; fails=$((fails + 1)); }
        if [ "$tr" = "$RT" ]; then
            grep -Eq '^  image [0-9]+: cuLibraryLoadData: fatbin: PTX compute_' "$d/$tag.txt" ||
            grep -Eq '^  image [0-9]+: cuModuleLoad[A-Za-z]*: fatbin' "$d/$tag.txt" ||
                { echo "FAIL [$args] cudart's fatbin was not read (no 'image N: ...: fatbin: PTX' line)"; fails=$((fails + 1)); }
        fi
    done
    } >"$L/$n.txt" 2>&1
    if [ $fails -eq 0 ]; then
        record "$n" PASS "explain mode: $(grep -m1 'image 0:' "$L/$n.txt" | cut -c1-160); the readings name sgd_update / grad_norm_squared (--clip) arg 1 count_arg 2 and linear_forward* arg 1, as examples/mlp*.yaml"
    else
        record "$n" FAIL "$fails problems (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}

# ---- the checks, most informative first: name and cap (seconds on a GPU; x SCALE in the dry run) ----
CHECKS=("driver 30" "ptx-load 30" "routing 90" "routing-requests 40"
        "intercept-world1-rt_mlp 45" "intercept-world1-mlp 45" "equiv-mpi2-mlp 100" "equiv-mpi2-rt_mlp 100"
        "world1-nccl-mlp 60" "world1-nccl-rt_mlp 60" "coll-nccl-world1 60" "nccl-2ranks-1gpu 60"
        "passthrough-mlp 40" "passthrough-rt_mlp 40" "rt_mlp-vs-mlp 30" "remap 30" "coll-mpi-2ranks 45"
        "launch-overhead 45" "matmul-gemm 60" "matmul-mlp 40" "overlap-world1-mlp 45"
        "explain-rt_mlp 30" "explain-mlp 20")
rt_only() {   # rt_only NAME: rt_mlp (static cudart) needs the real driver
    [ -z "$FAKE" ] && return 0
    record "$1" SKIP "fake mode: rt_mlp (static cudart) cannot run on hostcuda" expected; return 1
}
trainer_of() { case $1 in *-rt_mlp) echo "$RT" ;; *) echo "$MLP" ;; esac; }
run_check() {
    local c=$1 tr rc
    tr=$(trainer_of "$c")
    if [ "${GPU_CHECK_TEST_HANG:-}" = "$c" ]; then   # tests: a step that never finishes
        tmo 86400 sleep 86400; rc=$?
        record "$c" FAIL "a step did not finish: killed at the check's cap or the hard stop (exit $rc)"; return
    fi
    case $c in
        driver) chk_driver ;;
        ptx-load) chk_ptx_load ;;
        routing) chk_routing ;;
        routing-requests) chk_routing_requests ;;
        intercept-world1-*)
            { [ "$tr" = "$MLP" ] || rt_only "$c"; } && need "$c" "$tr" "$SHIM" && intercept_world1 "$c" "$tr" ;;
        equiv-mpi2-*)
            { [ "$tr" = "$MLP" ] || rt_only "$c"; } || return
            if ! command -v mpirun >/dev/null 2>&1; then record "$c" SKIP "mpirun is not installed (make gpu-bundle)"; return; fi
            need "$c" "$tr" "$SHIM" "$CMP" && equivalence "$c" "$tr" ;;
        world1-nccl-*)
            { [ "$tr" = "$MLP" ] || rt_only "$c"; } || return
            if [ $HAVE_NCCL = 0 ]; then record "$c" SKIP "libnccl.so.2 not found (ldconfig, LD_LIBRARY_PATH, a Python nvidia-nccl wheel, a search)"; return; fi
            need "$c" "$tr" "$SHIM" "$CMP" && world1_nccl "$c" "$tr" ;;
        coll-nccl-world1) chk_coll_nccl ;;
        overlap-world1-*)
            if [ $HAVE_NCCL = 0 ]; then record "$c" SKIP "libnccl.so.2 not found"; return; fi
            need "$c" "$tr" "$SHIM" "$CMP" && overlap_world1 "$c" "$tr" ;;
        nccl-2ranks-1gpu) chk_nccl_2ranks ;;
        passthrough-*)
            { [ "$tr" = "$MLP" ] || rt_only "$c"; } && need "$c" "$tr" "$SHIM" && passthrough "$c" "$tr" ;;
        rt_mlp-vs-mlp) chk_rt_vs_mlp ;;
        explain-*)
            { [ "$tr" = "$MLP" ] || rt_only "$c"; } && need "$c" "$tr" "$SHIM" && explain_check "$c" "$tr" ;;
        remap) chk_remap ;;
        coll-mpi-2ranks) chk_coll_mpi ;;
        launch-overhead) chk_launch_overhead ;;
        matmul-gemm) chk_matmul_gemm ;;
        matmul-mlp) chk_matmul_mlp ;;
    esac
}
finish() {   # the report's tail, the final JSON and archive; prints the summary
    tally
    local summary="$NP passed, $NF failed, $NS skipped ($EXPECTED_SKIPS by design in $MODE mode) in $((SECONDS - T0))s; exit $RC"
    if [ -s "$OUT/routing-table.txt" ]; then
        { echo; sed -n '1,/^$/p' "$OUT/routing-table.txt"; } >>"$OUT/report.txt"
    fi
    { echo "# accelshim gpu-check, $MODE, profile $PROFILE, $(date -u +%Y-%m-%dT%H:%M:%SZ), host ${HOSTNAME:-$(uname -n)}"
      echo "# driver: ${DRV_PATH:-?} version ${DRV_VER:-?}, device 0: ${DEV_NAME:-?}"
      echo "# routing requests (ACCELSHIM_ROUTING_TABLE): ${ROUTE_SUMMARY:-not run}"
      echo "$summary"; } >>"$OUT/report.txt"
    write_json final
    pack
    echo "$summary"
    echo "files in $OUT: $(cd "$OUT" && printf '%s ' *)"
}
# stopped from outside (the device tool's time limit): what was not reached is "not run"
# shellcheck disable=SC2317  # called by the trap
on_signal() {
    trap '' TERM INT   # a second signal (sent to the whole process group, as timeout does) waits
    local e c cap
    [ -n "${TMO_PID:-}" ] && kill -TERM "$TMO_PID" 2>/dev/null   # the step running now
    echo "gpu-check: stopped by a signal at +$((SECONDS - T0))s"
    for e in "${CHECKS[@]}"; do
        read -r c cap <<<"$e"
        [[ $c =~ $ONLY ]] || continue
        case $DONE in
            *" $c "*) ;;
            *) if [ "$c" = "${CUR:-}" ]; then record "$c" SKIP "stopped by a signal while running (after $((SECONDS - CHECK_T0))s)"
               else CHECK_T0=$SECONDS; record "$c" SKIP "not run: stopped by a signal"; fi ;;
        esac
    done
    finish
    exit 143
}
trap on_signal TERM INT

STEPS=${EQ_STEPS:-25} BATCH=${EQ_BATCH:-4}
for e in "${CHECKS[@]}"; do
    read -r c cap <<<"$e"
    [[ $c =~ $ONLY ]] || continue
    if [ $((SECONDS - T0)) -ge "$BUDGET" ] || [ $((T0 + HARD - SECONDS)) -lt 5 ]; then
        CHECK_T0=$SECONDS; record "$c" SKIP "not run: time (budget ${BUDGET}s, hard stop ${HARD}s; spent $((SECONDS - T0))s)"; continue
    fi
    begin "$c" "$cap"
    CUR=$c
    run_check "$c"
    case $DONE in *" $c "*) ;; *) record "$c" FAIL "the check recorded no result" ;; esac
done
finish
exit "$RC"
