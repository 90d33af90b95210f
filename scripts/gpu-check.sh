#!/usr/bin/env bash
# gpu-check.sh OUTDIR — accelshim's checks against a REAL NVIDIA driver (DESIGN.md §7), unattended,
# on one GPU, in under 8 minutes; writes OUTDIR/report.txt, OUTDIR/report.json and OUTDIR/logs/.
# Checks (each PASS/FAIL/SKIP with a reason): driver facts; the PTX of every kernel set loads;
# routing through every door and variant (table in OUTDIR/routing-table.txt); passthrough identity
# of mlp (Driver API) and rt_mlp (runtime API, static cudart); rt_mlp computes what mlp computes;
# device remap; collectives (NCCL at world 1 with the cast kernels, MPI with 2 ranks on the GPU);
# equivalence of 2 ranks (MPI backend, one GPU) and of 1 rank (NCCL backend) against the 1-rank
# big-batch run, wires same and bf16, both trainers; launch overhead (ns, plain vs shim); matmul:
# fp32 cuBLAS GEMMs under ACCELSHIM_MATMUL=default/tf32/bf16 (ms per GEMM, counts, loss falls).
# Uses what `make all` built (build/ may be carried from a CPU machine; the GPU box needs no
# network); builds only what is missing (GPU_CHECK_REBUILD=1: always `make all`).
# Exit: 0 all passed; 1 a check failed; 3 none failed but some were skipped; 2 usage;
# 77 no GPU/driver (one line). Env: GPU_CHECK_FAKE=hostcuda (dry run of the same checks on
# hostcuda; rt_mlp cannot run there), GPU_CHECK_ONLY=REGEX (checks to run), GPU_CHECK_BUDGET_S
# (400: no check starts after it), GPU_CHECK_HARD_S (450: every command is killed by then),
# GPU_CHECK_JOBS (make -j, 2), GPU_CHECK_SHIM (the preload; tests use a non-shim as a control),
# EQ_STEPS/EQ_BATCH (25/4), GPU_CHECK_GEMM_N/GPU_CHECK_GEMM_ITERS (4096/30), GPU_CHECK_MM_STEPS (50).
# Threading: none; one command at a time (2 ranks under mpirun).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
OUT=${1:-}
FAKE=${GPU_CHECK_FAKE:-}
ONLY=${GPU_CHECK_ONLY:-.}
BUDGET=${GPU_CHECK_BUDGET_S:-400}
HARD=${GPU_CHECK_HARD_S:-450}
if [ -z "$OUT" ] || [ $# -ne 1 ] || [ "$OUT" = --help ]; then
    echo "usage: scripts/gpu-check.sh OUTDIR   (env GPU_CHECK_FAKE=hostcuda, GPU_CHECK_ONLY=REGEX)" >&2
    exit 2
fi
case $FAKE in '' | hostcuda) ;; *) echo "gpu-check: GPU_CHECK_FAKE must be empty or hostcuda" >&2; exit 2 ;; esac

# ---- the environment: the real driver (never hostcuda) or, in the dry run, hostcuda ----
clean_ldp=""
IFS=: read -r -a ldp_parts <<<"${LD_LIBRARY_PATH:-}"
for d in "${ldp_parts[@]}"; do
    case $d in '' | *build/tests/hostcuda* | *build/tests/hostnccl* | *build/bench/fakecuda*) ;;
               *) clean_ldp=${clean_ldp:+$clean_ldp:}$d ;; esac
done
unset HOSTCUDA_KERNEL_LIBS HOSTCUDA_DEVICES HOSTCUDA_STRICT LD_PRELOAD ACCELSHIM_POLICY ACCELSHIM_BACKEND \
      ACCELSHIM_DEVICES ACCELSHIM_LOCAL_RANK ACCELSHIM_RANK ACCELSHIM_WORLD_SIZE ACCELSHIM_LOG
KLIBS=$B/tests/trainers/libmlp_kernels_host.so:$B/collectives/libash_cast_kernels_host.so:$B/tests/intercept/libitest_kernels.so
if [ -n "$FAKE" ]; then
    export LD_LIBRARY_PATH=$B/tests/hostcuda${clean_ldp:+:$clean_ldp}
    export HOSTCUDA_KERNEL_LIBS=$KLIBS
    NCCL_LDP=$B/tests/hostnccl:$LD_LIBRARY_PATH
    MODE="fake-hostcuda"
else
    export LD_LIBRARY_PATH=$clean_ldp
    NCCL_LDP=$LD_LIBRARY_PATH
    MODE="real-driver"
fi

mkdir -p "$OUT/logs" 2>/dev/null || { echo "gpu-check: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
L=$OUT/logs

json_str() { local s=$1; s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; s=${s//$'\n'/ }; printf '"%s"' "$s"; }

# ---- no GPU: one line, exit 77 (and a report saying so) ----
no_gpu() {
    echo "gpu-check: SKIP: no NVIDIA GPU/driver on this machine ($1)"
    printf 'SKIP gpu-check: no NVIDIA GPU/driver (%s)\n' "$1" >"$OUT/report.txt"
    printf '{"tool":"accelshim gpu-check","mode":"%s","status":"skip","reason":%s,"checks":[]}\n' \
        "$MODE" "$(json_str "no NVIDIA GPU/driver: $1")" >"$OUT/report.json"
    exit 77
}
if [ -z "$FAKE" ]; then
    have_lib=""
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && have_lib=yes
    IFS=: read -r -a ldp_parts <<<"$LD_LIBRARY_PATH"
    for d in "${ldp_parts[@]}"; do [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && have_lib=yes; done
    [ -n "$have_lib" ] || no_gpu "libcuda.so.1 is not installed"
    if [ -x "$B/tests/gpu/gpu_probe" ]; then
        msg=$("$B/tests/gpu/gpu_probe" 2>&1); rc=$?
        [ $rc -eq 77 ] && no_gpu "$(tail -1 <<<"$msg")"
    elif command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || no_gpu "nvidia-smi lists no GPU"
    fi
fi

T0=$SECONDS
NAMES=() STATUS=() REASONS=() SECS=() EXPECTED_SKIPS=0
FIG_PLAIN="" FIG_SHIM="" FIG_RULE="" DRV_VER="" DEV_NAME="" DRV_PATH=""
: >"$OUT/report.txt"
record() {   # record NAME PASS|FAIL|SKIP REASON [expected]
    NAMES+=("$1"); STATUS+=("$2"); REASONS+=("$3"); SECS+=($((SECONDS - CHECK_T0)))
    [ "${4:-}" = expected ] && EXPECTED_SKIPS=$((EXPECTED_SKIPS + 1))
    printf '%-4s %-24s (%3ss) %s\n' "$2" "$1" "$((SECONDS - CHECK_T0))" "$3" | tee -a "$OUT/report.txt"
}
# want NAME: run this check? (GPU_CHECK_ONLY, time budget)
want() {
    CHECK_T0=$SECONDS
    [[ $1 =~ $ONLY ]] || return 1
    if [ $((SECONDS - T0)) -ge "$BUDGET" ]; then
        record "$1" SKIP "time budget of ${BUDGET}s spent"; return 1
    fi
    return 0
}
need() {   # need NAME FILE... : SKIP NAME unless every file exists
    local n=$1 f; shift
    for f in "$@"; do
        [ -e "$f" ] || { record "$n" SKIP "${f#"$ROOT"/} is not built"; return 1; }
    done
}
# tmo SECONDS CMD...: timeout, never past the hard deadline (T0 + GPU_CHECK_HARD_S), so a hang
# cannot push the whole run past 8 minutes
tmo() {
    local t=$1 left=$((T0 + HARD - SECONDS)); shift
    if [ "$left" -lt 3 ]; then
        echo "gpu-check: $1 not started: past the ${HARD}s deadline" >&2; return 124
    fi
    [ "$t" -gt "$left" ] && t=$left
    timeout -k 5 "$t" "$@"
}

# ---- build: use what is there; make only what is missing ----
CHECK_T0=$SECONDS
SHIM=${GPU_CHECK_SHIM:-$B/libaccelshim.so} MLP=$B/tests/trainers/mlp RT=$B/tests/trainers/rt_mlp CMP=$B/tests/equivalence/fcompare
PROBE=$B/tests/gpu/gpu_probe ROUTING=$B/tests/gpu/gpu_routing COLL=$B/tests/collectives/test_coll
BENCH=$B/bench/launch_overhead ITEST_PTX=$B/tests/intercept/kernels.ptx
wanted=("$SHIM" "$MLP" "$RT" "$CMP" "$PROBE" "$ROUTING" "$COLL" "$BENCH" "$ITEST_PTX" "$B/tests/gpu/gemm_bench"
        "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx")
[ -n "$FAKE" ] && wanted+=("$B/tests/hostcuda/libcuda.so.1" "$B/tests/hostnccl/libnccl.so.2" "$B/tests/trainers/libmlp_kernels_host.so"
                          "$B/tests/hostcublas/libcublas.so.13")
missing=()
for f in "${wanted[@]}"; do [ -e "$f" ] || missing+=("${f#"$ROOT"/}"); done
if [ ${#missing[@]} -eq 0 ] && [ -z "${GPU_CHECK_REBUILD:-}" ]; then
    record build PASS "using build/ as found (${#wanted[@]} outputs present; not rebuilt)"
else
    tools=()
    for t in make gcc mpicc; do command -v "$t" >/dev/null 2>&1 || tools+=("$t"); done
    [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || tools+=("nvcc")
    [ -e /usr/include/yaml.h ] || tools+=("libyaml-dev")
    if (cd "$ROOT" && tmo 400 make -o build/.deps-installed -j"${GPU_CHECK_JOBS:-2}" all) >"$L/build.log" 2>&1; then
        record build PASS "make all built what was missing: ${missing[*]:-(forced rebuild)}"
    else
        still=()
        for f in "${wanted[@]}"; do [ -e "$f" ] || still+=("${f#"$ROOT"/}"); done
        record build FAIL "make all failed (logs/build.log); missing tools/deps here: ${tools[*]:-none detected}; not built: ${still[*]:-none}"
    fi
fi
# runtime libraries (libyaml, libmpi, libstdc++...) of what was built must exist on this machine too;
# what it lacks is taken from the bundle carried in build/gpu-rt (make gpu-bundle), if there
CHECK_T0=$SECONDS
rt_note=""
if [ -z "$FAKE" ] && [ -d "${CUDA_HOME:-/usr/local/cuda}/lib64" ]; then   # cuBLAS for mlp --gemm cublas
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}${CUDA_HOME:-/usr/local/cuda}/lib64
fi
if [ -d "${GPU_CHECK_RT:-$B/gpu-rt}/lib" ]; then
    RTB=${GPU_CHECK_RT:-$B/gpu-rt}
    # shellcheck source=scripts/gpu-rt.bash
    . "$ROOT/scripts/gpu-rt.bash"
    if ! gpu_rt_mpi_works; then
        gpu_rt_use_mpi "$RTB" && rt_note="Open MPI and PMIx from ${RTB#"$ROOT"/} (this machine's mpirun is missing or does not start);"
    fi
    gpu_rt_fill_missing "$RTB" "$SHIM" "$MLP" "$RT" "$COLL" "$ROUTING" "$BENCH" "$CMP" "$PROBE" "$B/tests/gpu/gemm_bench"
    [ -n "$GPU_RT_USED" ] && rt_note="$rt_note libraries from ${RTB#"$ROOT"/}: $GPU_RT_USED;"
    rt_note=${rt_note%;}
    if [ -n "$FAKE" ]; then NCCL_LDP=$B/tests/hostnccl:$LD_LIBRARY_PATH; else NCCL_LDP=$LD_LIBRARY_PATH; fi
fi
nf=""
for f in "$SHIM" "$MLP" "$RT" "$COLL" "$ROUTING" "$BENCH" "$CMP"; do
    [ -e "$f" ] || continue
    m=$(ldd "$f" 2>&1 | awk '/not found/ {print $1}' | tr '\n' ' ')
    [ -n "$m" ] && nf="$nf ${f#"$B"/}: $m;"
done
if [ -n "$nf" ]; then
    record runtime-libs FAIL "missing on this machine and in the bundle (make gpu-bundle; or install e.g. libyaml-0-2, Open MPI):$nf ${rt_note}"
else
    record runtime-libs PASS "every built program and libaccelshim.so resolves its libraries (ldd)${rt_note:+; $rt_note}"
fi

have_nccl() {
    [ -n "$FAKE" ] && return 0
    ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 ' && return 0
    local d; IFS=: read -r -a ldp_parts <<<"$LD_LIBRARY_PATH"
    for d in "${ldp_parts[@]}"; do [ -n "$d" ] && [ -e "$d/libnccl.so.2" ] && return 0; done
    # NCCL as a Python wheel (nvidia-nccl-cu13: site-packages/nvidia/nccl/lib), as on images that
    # carry PyTorch: use that copy for the NCCL runs
    d=$(find /opt /usr/local/lib /usr/lib/python3* -maxdepth 8 -name libnccl.so.2 -path '*nvidia/nccl/lib/*' \
        2>/dev/null | head -1)
    [ -n "$d" ] || return 1
    NCCL_LDP=${d%/*}:$NCCL_LDP
    echo "gpu-check: NCCL from ${d%/*}" >>"$L/nccl-location.txt"
    return 0
}
HAVE_NCCL=0
have_nccl && HAVE_NCCL=1   # also puts a wheel's NCCL on NCCL_LDP

# ---- 1. driver facts and PTX loads ----
if want driver && need driver "$PROBE"; then
    "$PROBE" >"$L/driver.txt" 2>&1; rc=$?
    DRV_VER=$(sed -n 's/^driver_version=//p' "$L/driver.txt")
    DRV_PATH=$(sed -n 's/^driver_path=//p' "$L/driver.txt")
    DEV_NAME=$(sed -n 's/^device0_name=//p' "$L/driver.txt")
    cc=$(sed -n 's/^device0_cc=//p' "$L/driver.txt"); ndev=$(sed -n 's/^device_count=//p' "$L/driver.txt")
    if [ $rc -ne 0 ]; then
        record driver FAIL "gpu_probe exit $rc: $(tail -1 "$L/driver.txt")"
    elif [ -z "$FAKE" ] && [[ $DRV_PATH == *build/tests/hostcuda* ]]; then
        record driver FAIL "libcuda.so.1 resolved to hostcuda ($DRV_PATH), not the real driver"
    else
        cm=$(sed -n 's/^device0_compute_mode=//p' "$L/driver.txt")
        record driver PASS "$DRV_PATH, driver API $DRV_VER, $ndev device(s); device 0: $DEV_NAME, cc $cc, compute mode $cm"
        [ "$cm" = default ] || echo "     note: compute mode $cm: the 2-ranks-on-one-GPU checks need the default mode"
        [ "${ndev:-1}" -gt 1 ] && echo "     note: $ndev GPUs visible; every check uses device 0 (ACCELSHIM_DEVICES=0)"
    fi
fi
if want ptx-load && need ptx-load "$PROBE"; then
    args=()
    for p in "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx" "$ITEST_PTX"; do args+=(--ptx "$p"); done
    "$PROBE" "${args[@]}" >"$L/ptx-load.txt" 2>&1; rc=$?
    vers=$(grep -h '^\.version' "$B/tests/trainers/mlp_kernels.ptx" "$B/collectives/cast_kernels.ptx" | sort -u | tr '\n' ' ')
    if [ $rc -eq 0 ]; then
        record ptx-load PASS "mlp, cast and itest kernels JIT-load on device 0 (PTX $vers)"
    else
        record ptx-load FAIL "$(grep '^ptx .* fail\|^error' "$L/ptx-load.txt" | sed "s|$ROOT/||g" | tr '\n' ';') (PTX $vers; driver API $DRV_VER: PTX from the CUDA 13 toolkit needs a 13.x driver)"
    fi
fi

# ---- 2. routing through every door, on this driver ----
if want routing && need routing "$ROUTING" "$SHIM" "$ITEST_PTX"; then
    # cudart's own queries: recorded from rt_mlp's static cudart on THIS driver through the tracing
    # libcuda.so.1 (includes queries made after start-up); else the list recorded at build time
    qfile=$ROOT/tests/gpu/cudart13_queries.txt qnote="cudart queries: build-time list"
    if [ -z "$FAKE" ] && [ -n "$DRV_PATH" ] && [ -e "$B/tests/gpu/trace/libcuda.so.1" ] && [ -e "$RT" ]; then
        tmo 60 env TRACE_GPA_DRIVER="$DRV_PATH" LD_LIBRARY_PATH="$B/tests/gpu/trace${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$RT" --steps 2 >"$L/cudart-trace.out" 2>"$L/cudart-trace.txt"; trc=$?
        awk '$1 == "gpa_v2" && $5 == "->" { print $2, $3, $4 }' "$L/cudart-trace.txt" | awk '!seen[$0]++' >"$L/cudart-queries.txt"
        if [ -s "$L/cudart-queries.txt" ]; then
            qfile=$L/cudart-queries.txt
            new=$(grep -cvxFf <(grep -v "^#" "$ROOT/tests/gpu/cudart13_queries.txt") "$qfile")
            qnote="cudart queries recorded on this driver: $(wc -l <"$qfile") ($new not in the build-time list; rt_mlp under the tracer exit $trc)"
        fi
    fi
    tmo 120 env ITEST_PTX="$ITEST_PTX" "$ROUTING" --expect-driver --queries "$qfile" >"$L/routing-driver.txt" 2>&1; rc1=$?
    tmo 120 env ITEST_PTX="$ITEST_PTX" LD_PRELOAD="$SHIM" "$ROUTING" --expect-shim --queries "$qfile" >"$L/routing-shim.txt" 2>&1; rc2=$?
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
fi

# ---- 3. passthrough identity: world 1, no policy, with and without the shim ----
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
if want passthrough-mlp && need passthrough-mlp "$MLP" "$SHIM"; then passthrough passthrough-mlp "$MLP"; fi
if want passthrough-rt_mlp; then
    if [ -n "$FAKE" ]; then
        record passthrough-rt_mlp SKIP "fake mode: rt_mlp (static cudart) cannot run on hostcuda" expected
    elif need passthrough-rt_mlp "$RT" "$SHIM"; then
        passthrough passthrough-rt_mlp "$RT"
    fi
fi

# ---- 4. rt_mlp computes what mlp computes (same model, data, init, kernels) ----
if want rt_mlp-vs-mlp; then
    if [ -n "$FAKE" ]; then
        record rt_mlp-vs-mlp SKIP "fake mode: rt_mlp cannot run on hostcuda" expected
    elif need rt_mlp-vs-mlp "$RT" "$MLP" "$CMP"; then
        ok=0 msg=""
        for args in "--steps 20 --batch 8" "--steps 10 --optimizer adam --update per-tensor --clip 1.0"; do
            read -r -a av <<<"$args"
            if ! tmo 60 "$MLP" "${av[@]}" --save "$L/vs-mlp.bin" >"$L/vs-mlp.out" 2>&1 ||
               ! tmo 60 "$RT" "${av[@]}" --save "$L/vs-rt.bin" >"$L/vs-rt.out" 2>&1; then
                ok=1; msg="$msg [$args] a run failed: $(tail -1 "$L/vs-mlp.out") / $(tail -1 "$L/vs-rt.out");"; continue
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
fi

# ---- 5. device remap: the program sees one device, its memory on the chosen physical one ----
if want remap && need remap "$ROUTING" "$SHIM" "$ITEST_PTX"; then
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
    {
        rcase 0 "" ACCELSHIM_DEVICES=0
        rcase 0 "" ACCELSHIM_DEVICES=0 ACCELSHIM_LOCAL_RANK=1
        rcase 0 "" ACCELSHIM_LOCAL_RANK=0
        if [ -n "$FAKE" ]; then rcase 0 "names a device >= the 1 visible" HOSTCUDA_DEVICES=1 ACCELSHIM_DEVICES=1
        else rcase 0 "names a device >= the" ACCELSHIM_DEVICES=99; fi
    } >"$L/remap.txt" 2>&1
    plain=$(tmo 30 env ITEST_PTX="$ITEST_PTX" "$ROUTING" --remap 2>&1)
    if [ $rfails -eq 0 ]; then
        record remap PASS "ACCELSHIM_DEVICES=0 (also local rank 1, and a bad device -> warning): count=1, device 1 invalid, memory on ordinal 0 (without the shim: $plain)"
    else
        record remap FAIL "$rfails cases (logs/remap.txt): $(grep -m1 '^FAIL' "$L/remap.txt")"
    fi
fi

# ---- 6. collectives: NCCL at world 1 (cast kernels on this GPU), MPI with 2 ranks ----
if want coll-nccl-world1 && need coll-nccl-world1 "$COLL"; then
    if [ $HAVE_NCCL = 0 ]; then
        record coll-nccl-world1 SKIP "libnccl.so.2 is not installed (ldconfig, LD_LIBRARY_PATH, a Python nvidia-nccl wheel)"
    elif tmo 150 env LD_LIBRARY_PATH="$NCCL_LDP" "$COLL" --backend nccl --expect nccl --expect-warnings 0 >"$L/coll-nccl.txt" 2>&1; then
        record coll-nccl-world1 PASS "test_coll on NCCL, world 1: allreduce f32/bf16/f16 x wires (cast kernels' PTX on this GPU), broadcast, barrier: $(grep -m1 '^PASS' "$L/coll-nccl.txt" | cut -c1-100)"
    else
        record coll-nccl-world1 FAIL "test_coll --backend nccl (logs/coll-nccl.txt): $(grep -m2 'FAIL\|error' "$L/coll-nccl.txt" | tr '\n' ';' | cut -c1-300)"
    fi
fi
XKL=()   # mpirun -x for hostcuda's kernel libraries (dry run only)
[ -n "$FAKE" ] && XKL=(-x HOSTCUDA_KERNEL_LIBS="$HOSTCUDA_KERNEL_LIBS")
# shellcheck source=tests/equivalence/lib.sh
. "$ROOT/tests/equivalence/lib.sh"   # eq_policy, EQ_POL (its hostcuda runners are not used)
# mpi_run SECONDS NP ARGS...: mpirun with lib.sh's eq_mpirun flags, but under ONE timeout (this
# script's deadline): eq_mpirun's own timeout sits in its own process group, out of tmo's reach
mpi_run() {
    local t=$1 np=$2 root=(); shift 2
    [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
    tmo "$t" mpirun "${root[@]}" --oversubscribe --bind-to none -np "$np" \
        --mca btl self,tcp,vader --mca btl_vader_single_copy_mechanism none \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}
if want coll-mpi-2ranks && need coll-mpi-2ranks "$COLL"; then
    if ! command -v mpirun >/dev/null 2>&1; then
        record coll-mpi-2ranks SKIP "mpirun is not installed"
    elif mpi_run 120 2 -x LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "${XKL[@]}" "$COLL" --backend mpi --expect mpi --expect-warnings 0 --quick >"$L/coll-mpi.txt" 2>&1; then
        record coll-mpi-2ranks PASS "test_coll on the MPI backend, 2 ranks sharing device 0: $(grep -m1 '^PASS' "$L/coll-mpi.txt" | cut -c1-100)"
    else
        record coll-mpi-2ranks FAIL "test_coll --backend mpi under mpirun -np 2 (logs/coll-mpi.txt): $(grep -m2 'FAIL\|rror' "$L/coll-mpi.txt" | tr '\n' ';' | cut -c1-300)"
    fi
fi

# ---- 7. equivalence: N ranks under the shim vs ONE rank with batch N*B ----
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
    mpi_run 60 "$np" -x LD_LIBRARY_PATH="$ldp" "${XKL[@]}" -x ACCELSHIM_POLICY="$policy" \
        -x ACCELSHIM_SYNC="${GC_SYNC:-}" -x ACCELSHIM_BACKEND="$backend" -x ACCELSHIM_LOG=info -x ACCELSHIM_DEVICES=0 -x GC_SHIM="$SHIM" \
        bash -c 'r=$OMPI_COMM_WORLD_RANK; LD_PRELOAD=$GC_SHIM exec "$0" "$@" --shard-rank "$r" \
                 --shard-count "$OMPI_COMM_WORLD_SIZE" --save "'"$prefix"'.$r" >"'"$prefix"'.$r.log" 2>&1' "$tr" "$@"
}
equivalence() {   # equivalence NAME TRAINER
    local n=$1 tr=$2 d mode wire np=2 failed=0 cases=0 out desc rc
    local dir=$L/$n; mkdir -p "$dir"
    for mode in sgd-fused adam-per-tensor clip-norm init-broadcast; do
        for wire in same bf16; do
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
    done >"$L/$n.txt" 2>&1
    # negative control: without a policy the two ranks diverge (the comparison can fail); sync
    # optional, or the shim ends such a job with exit 7
    cases=$((cases + 1)); d=$dir/nopolicy; mkdir -p "$d"
    if GC_SYNC=optional ranks $np mpi "" "$d/rank" "$tr" --steps "$STEPS" --batch "$BATCH" >>"$L/$n.txt" 2>&1 &&
       ! "$CMP" "$d/rank.1" "$d/rank.0" --identical >/dev/null 2>&1; then
        echo "ok control: without a policy the ranks diverge" >>"$L/$n.txt"
    else
        echo "FAIL control: without a policy the ranks did not diverge (or failed)" >>"$L/$n.txt"; failed=$((failed + 1))
    fi
    if [ $failed -eq 0 ]; then
        record "$n" PASS "2 ranks on device 0 (MPI backend) = 1 rank batch $((np * BATCH)): sgd, adam per-tensor, clip, init broadcast x wire same (rtol 1e-5)/bf16 (max-abs 2e-3, adam 2.5e-2); ranks bit-identical; no-policy control diverges ($cases cases)"
    else
        record "$n" FAIL "$failed of $cases cases (logs/$n.txt): $(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300)"
    fi
}
# world 1, NCCL backend asked for: with a policy the shim changes nothing (DESIGN.md §5: no
# collective at world 1), so the result is bit-identical to the plain 1-rank run
equivalence_world1() {   # equivalence_world1 NAME TRAINER
    local n=$1 tr=$2 wire failed=0 d
    for wire in same bf16; do
        d=$L/$n-$wire; mkdir -p "$d"
        eq_policy "$EQ_POL/sgd-fused.yaml" "$wire" "$d/policy.yaml"
        tmo 60 env LD_LIBRARY_PATH="$NCCL_LDP" ACCELSHIM_POLICY="$d/policy.yaml" ACCELSHIM_BACKEND=nccl \
            ACCELSHIM_DEVICES=0 LD_PRELOAD="$SHIM" "$tr" --steps "$STEPS" --batch "$BATCH" --save "$d/rank.0" >"$d/rank.0.log" 2>"$d/rank.0.err"
        local rc=$?
        tmo 60 "$tr" --steps "$STEPS" --batch "$BATCH" --save "$d/ref" >"$d/ref.log" 2>/dev/null
        if [ $rc -ne 0 ]; then
            echo "FAIL wire=$wire: exit $rc: $(tail -2 "$d/rank.0.err" | tr '\n' ' ')"; failed=$((failed + 1))
        elif ! out=$("$CMP" "$d/rank.0" "$d/ref" --identical 2>&1) || ! cmp -s "$d/rank.0.log" "$d/ref.log"; then
            echo "FAIL wire=$wire: differs from the plain run: $out"; failed=$((failed + 1))
        else
            echo "ok wire=$wire: bit-identical to the plain run"
        fi
    done >"$L/$n.txt" 2>&1
    if [ $failed -eq 0 ]; then
        record "$n" PASS "world 1, ACCELSHIM_BACKEND=nccl, sgd policy, wires same/bf16: bit-identical to the plain 1-rank run"
    else
        record "$n" FAIL "$(grep -m1 '^FAIL' "$L/$n.txt" | cut -c1-300) (logs/$n.txt)"
    fi
}
for t in mlp rt_mlp; do
    tr=$MLP; [ $t = rt_mlp ] && tr=$RT
    if want "equiv-mpi2-$t"; then
        if [ $t = rt_mlp ] && [ -n "$FAKE" ]; then record "equiv-mpi2-$t" SKIP "fake mode: rt_mlp cannot run on hostcuda" expected
        elif ! command -v mpirun >/dev/null 2>&1; then record "equiv-mpi2-$t" SKIP "mpirun is not installed"
        elif need "equiv-mpi2-$t" "$tr" "$SHIM" "$CMP"; then equivalence "equiv-mpi2-$t" "$tr"; fi
    fi
done
for t in mlp rt_mlp; do
    tr=$MLP; [ $t = rt_mlp ] && tr=$RT
    if want "equiv-nccl1-$t"; then
        if [ $t = rt_mlp ] && [ -n "$FAKE" ]; then record "equiv-nccl1-$t" SKIP "fake mode: rt_mlp cannot run on hostcuda" expected
        elif need "equiv-nccl1-$t" "$tr" "$SHIM" "$CMP"; then equivalence_world1 "equiv-nccl1-$t" "$tr"; fi
    fi
done

# ---- 8. launch overhead on this driver: ns per cuLaunchKernel, plain vs shim (a figure) ----
if want launch-overhead && need launch-overhead "$BENCH" "$SHIM" "$ITEST_PTX"; then
    n=${GPU_CHECK_LAUNCHES:-200000}; [ -n "$FAKE" ] && n=20000
    ns_of() { sed -n 's/.*best_ns_per_launch \([0-9.]*\).*/\1/p'; }
    p=() s=() e=()
    pol=$ROOT/bench/rule_elsewhere.yaml   # a policy whose rule matches another kernel: same fast path
    run_bench() { tmo 60 env "$@" "$BENCH" --launches "$n" --repeat 3 --ptx "$ITEST_PTX" --sync-every 1000 2>>"$L/bench.err" | ns_of; }
    for _ in 1 2 3; do
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
        record launch-overhead PASS "cuLaunchKernel of a kernel no rule matches, $n launches x3, best of 3 alternating runs: plain $FIG_PLAIN ns, shim $FIG_SHIM ns (added $added ns; target < 25)$extra; a figure, not asserted"
    else
        record launch-overhead FAIL "the benchmark did not run: $(tail -2 "$L/bench.err" | tr '\n' ' ')"
    fi
fi

# ---- 9. matmul: fp32 cuBLAS GEMMs rewritten by ACCELSHIM_MATMUL (docs/mixed-precision.md) ----
# gemm_bench (cublasSgemm_v2 in a loop) with no shim and under the shim at default/tf32/bf16,
# alternating, best of 3: ms per GEMM (figures), the exit report's counts per compute type,
# default bit-identical to no shim, tf32/bf16 different; then mlp --gemm cublas per mode: loss falls.
have_cublas() {   # the real libcublas.so.13 (dry run: build/tests/hostcublas)
    [ -n "$FAKE" ] && { [ -e "$B/tests/hostcublas/libcublas.so.13" ]; return; }
    ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.13 ' && return 0
    local d; IFS=: read -r -a ldp_parts <<<"$LD_LIBRARY_PATH"
    for d in "${ldp_parts[@]}"; do [ -n "$d" ] && [ -e "$d/libcublas.so.13" ] && return 0; done
    return 1
}
BLAS_LDP=$LD_LIBRARY_PATH
[ -n "$FAKE" ] && BLAS_LDP=$B/tests/hostcublas:$LD_LIBRARY_PATH
MM_MODES="default tf32 bf16"
num_or_null() { if [[ ${1:-} =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then printf '%s' "$1"; else printf null; fi; }
# gemm_counts FILE: the exit report's "32F a, 32F_FAST_TF32 b, ..." part (ACCELSHIM_LOG=info)
gemm_counts() { sed -n 's/.*INFO report: cublas GEMMs (matmul: [a-z0-9]*): \(.*\); kept fp32.*$/\1/p' "$1" | tail -1; }
want_counts() {   # want_counts MODE G: what the report must say for G fp32 GEMMs under MODE
    local t=0 f=0 b=0 d=0
    case $1 in default) d=$2 ;; tf32) t=$2 ;; bf16) b=$2 ;; esac
    echo "32F $d, 32F_FAST_TF32 $t, 32F_FAST_16BF $b, 32F_FAST_16F 0, other 0"
}
GEMM_BENCH=$B/tests/gpu/gemm_bench FIG_GEMM_N="" FIG_GEMM_PLAIN=""
declare -A FIG_GEMM=() FIG_SPEEDUP=() FIG_LOSS0=() FIG_LOSS1=()
if want matmul-gemm && need matmul-gemm "$GEMM_BENCH" "$SHIM"; then
    if ! have_cublas; then
        record matmul-gemm SKIP "libcublas.so.13 is not installed (ldconfig, LD_LIBRARY_PATH)"
    else
        gn=${GPU_CHECK_GEMM_N:-4096} gi=${GPU_CHECK_GEMM_ITERS:-30}
        [ -n "$FAKE" ] && gn=64 gi=5
        d=$L/matmul-gemm; mkdir -p "$d"
        mfails=0
        # gb TAG ENV...: one run of gemm_bench; stdout TAG.out, stderr TAG.err
        gb() {
            local tag=$1; shift
            tmo 120 env LD_LIBRARY_PATH="$BLAS_LDP" "$@" "$GEMM_BENCH" --n "$gn" --iters "$gi" \
                >"$d/$tag.out" 2>"$d/$tag.err"
            local r=$?
            if [ $r -ne 0 ]; then echo "FAIL $tag: exit $r: $(tail -2 "$d/$tag.err" | tr '\n' ' ')"; mfails=$((mfails + 1)); fi
        }
        {
            for i in 1 2 3; do
                gb "plain.$i"
                for m in $MM_MODES; do gb "$m.$i" ACCELSHIM_MATMUL="$m" ACCELSHIM_LOG=info LD_PRELOAD="$SHIM"; done
            done
        } >"$L/matmul-gemm.txt" 2>&1
        ms_of() { sed -n 's/^ms_per_gemm \([0-9.]*\)$/\1/p' "$d/$1.out"; }
        sum_of() { grep -m1 '^checksum ' "$d/$1.out"; }
        bestms() { local i; for i in 1 2 3; do ms_of "$1.$i"; done | grep . | sort -g | head -1; }
        g=$(sed -n 's/.* gemms \([0-9]*\)$/\1/p' "$d/plain.1.out")
        FIG_GEMM_N=$gn FIG_GEMM_PLAIN=$(bestms plain)
        gref=$(sum_of plain.1)
        {
            [ -n "$gref" ] || { echo "FAIL plain: no checksum"; mfails=$((mfails + 1)); }
            for i in 1 2 3; do
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
            record matmul-gemm PASS "cublasSgemm_v2 n=$gn, $gi timed + 2 warm-up calls, best of 3 alternating runs: no shim ${FIG_GEMM_PLAIN:-?} ms, default ${FIG_GEMM[default]:-?} ms, tf32 ${FIG_GEMM[tf32]:-?} ms (x${FIG_SPEEDUP[tf32]:-?}), bf16 ${FIG_GEMM[bf16]:-?} ms (x${FIG_SPEEDUP[bf16]:-?}); reports count $g GEMMs per run in the mode's compute type; default bit-identical to no shim, tf32/bf16 differ (figures, speed not asserted)"
        else
            record matmul-gemm FAIL "$mfails problems (logs/matmul-gemm.txt): $(grep -m1 '^FAIL' "$L/matmul-gemm.txt" | cut -c1-300)"
        fi
    fi
fi
if want matmul-mlp && need matmul-mlp "$MLP" "$SHIM"; then
    if ! have_cublas; then
        record matmul-mlp SKIP "libcublas.so.13 is not installed (ldconfig, LD_LIBRARY_PATH)"
    else
        mm_steps=${GPU_CHECK_MM_STEPS:-50} mfails=0 curves=""
        d=$L/matmul-mlp; mkdir -p "$d"
        first_loss() { awk '/^step /{print $4; exit}' "$1"; }
        last_loss() { awk '/^step /{l = $4} END {print l}' "$1"; }
        {
            tmo 60 env LD_LIBRARY_PATH="$BLAS_LDP" "$MLP" --steps "$mm_steps" --gemm cublas >"$d/plain.out" 2>"$d/plain.err" ||
                { echo "FAIL plain: exit $?: $(tail -2 "$d/plain.err" | tr '\n' ' ')"; mfails=$((mfails + 1)); }
            for m in $MM_MODES; do
                if ! tmo 60 env LD_LIBRARY_PATH="$BLAS_LDP" ACCELSHIM_MATMUL="$m" ACCELSHIM_LOG=info LD_PRELOAD="$SHIM" \
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
fi

# ---- report ----
np=0 nf=0 ns=0
for st in "${STATUS[@]}"; do case $st in PASS) np=$((np + 1)) ;; FAIL) nf=$((nf + 1)) ;; SKIP) ns=$((ns + 1)) ;; esac; done
if [ $nf -gt 0 ]; then rc=1; elif [ $((ns - EXPECTED_SKIPS)) -gt 0 ]; then rc=3; else rc=0; fi
total=$((SECONDS - T0))
summary="$np passed, $nf failed, $ns skipped ($EXPECTED_SKIPS by design in $MODE mode) in ${total}s; exit $rc"
if [ -s "$OUT/routing-table.txt" ]; then
    { echo; sed -n '1,/^$/p' "$OUT/routing-table.txt"; } >>"$OUT/report.txt"
fi
{ echo "# accelshim gpu-check, $MODE, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname)"
  echo "# driver: ${DRV_PATH:-?} version ${DRV_VER:-?}, device 0: ${DEV_NAME:-?}"
  echo "$summary"; } >>"$OUT/report.txt"
{
    printf '{"tool":"accelshim gpu-check","mode":"%s","date":"%s","host":%s,' "$MODE" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(json_str "$(hostname)")"
    printf '"driver":{"path":%s,"version":%s,"device0":%s},' "$(json_str "$DRV_PATH")" \
        "${DRV_VER:-null}" "$(json_str "$DEV_NAME")"
    printf '"figures":{"launch_ns_plain":%s,"launch_ns_shim":%s,"launch_ns_shim_rule_elsewhere":%s' \
        "${FIG_PLAIN:-null}" "${FIG_SHIM:-null}" "${FIG_RULE:-null}"
    printf ',"gemm_n":%s,"gemm_ms_plain":%s' "$(num_or_null "$FIG_GEMM_N")" "$(num_or_null "$FIG_GEMM_PLAIN")"
    for m in $MM_MODES; do printf ',"gemm_ms_%s":%s' "$m" "$(num_or_null "${FIG_GEMM[$m]:-}")"; done
    for m in tf32 bf16; do printf ',"gemm_speedup_%s":%s' "$m" "$(num_or_null "${FIG_SPEEDUP[$m]:-}")"; done
    for m in $MM_MODES; do
        printf ',"mlp_cublas_loss_first_%s":%s,"mlp_cublas_loss_last_%s":%s' "$m" "$(num_or_null "${FIG_LOSS0[$m]:-}")" \
            "$m" "$(num_or_null "${FIG_LOSS1[$m]:-}")"
    done
    printf '},'
    printf '"checks":['
    for i in "${!NAMES[@]}"; do
        [ "$i" -gt 0 ] && printf ','
        printf '{"name":%s,"status":"%s","seconds":%s,"reason":%s}' "$(json_str "${NAMES[$i]}")" \
            "${STATUS[$i]}" "${SECS[$i]}" "$(json_str "${REASONS[$i]}")"
    done
    printf '],"summary":{"pass":%d,"fail":%d,"skip":%d,"expected_skip":%d,"seconds":%d},"exit":%d}\n' \
        "$np" "$nf" "$ns" "$EXPECTED_SKIPS" "$total" "$rc"
} >"$OUT/report.json"
echo "$summary (report: $OUT/report.txt, $OUT/report.json)"
exit $rc
