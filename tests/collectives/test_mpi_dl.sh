#!/usr/bin/env bash
# test_mpi_dl.sh — property: Open MPI is opened only by a job that uses it.
#   1. libaccelshim.so NEEDs only libc, libdl/pthread, libyaml, libunwind, libm (no libmpi, no
#      libcuda); the hostnccl test double NEEDs no libmpi either (else case 3 proves nothing)
#   2. a world-1 run of the bundled trainer under the shim (policy on) never maps libmpi
#   3. ranks meeting through NCCL (accelerate-run --cpu --launcher local -n 2) never map libmpi
#   4. control: 2 ranks under mpirun with the mpi backend do map it, opened by libaccelshim.so
#   5. with libmpi.so.40 hidden (a private mount namespace), a job that needs MPI stops with one
#      clear line naming the library, a non-zero exit and no crash
# Mapped libraries are read from the loader's own log (LD_DEBUG=files, one file per process).
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_need "$T_SHIM" "$T_MLP" "$T_HOSTCUDA_DIR/libcuda.so.1" "$T_HOSTNCCL_DIR/libnccl.so.2"
t_need_cmd readelf
t_tmp
policy=$T_TOP/tests/equivalence/policies/sgd-fused.yaml
[ -f "$policy" ] || t_fail "$policy missing"

# loaded LOGDIR: the libraries mapped by the processes that loaded libaccelshim.so, one line each
# "PID LIBRARY"; prints nothing when no such process left a log
loaded() {
    local f
    for f in "$1"/ld.*; do
        [ -e "$f" ] || continue
        grep -q 'file=.*libaccelshim\.so' "$f" || continue
        sed -n 's/.*file=\([^ ]*\) \[0\];  *\(generating link map\|dynamically loaded by\).*/\1/p' "$f" \
            | sort -u | sed "s|^|${f##*.} |"
    done
}

# 1. NEEDED
needed=$(readelf -d "$T_SHIM" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
extra=$(echo "$needed" | grep -Ev '^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|libyaml-0\.so\.2|libunwind\.so\.8|libm\.so\.6|ld-linux-x86-64\.so\.2)$')
echo "# libaccelshim.so NEEDED: $(echo "$needed" | tr '\n' ' ')"
[ -z "$extra" ] && ! echo "$needed" | grep -q libmpi
t_case $? "libaccelshim.so NEEDs only libc/libdl/pthread/libyaml/libunwind/libm (beyond them: ${extra:-none})"
! readelf -d "$T_HOSTNCCL_DIR/libnccl.so.2" | grep NEEDED | grep -q libmpi
t_case $? "the hostnccl test double NEEDs no libmpi"

# 2. world 1
mkdir -p "$T_TMP/w1"
LD_DEBUG=files LD_DEBUG_OUTPUT=$T_TMP/w1/ld LD_LIBRARY_PATH=$T_HOSTCUDA_DIR HOSTCUDA_KERNEL_LIBS=$T_KLIBS \
    ACCELSHIM_POLICY=$policy LD_PRELOAD=$T_SHIM timeout -k 5 120 "$T_MLP" --steps 3 --batch 2 \
    >"$T_TMP/w1/out" 2>&1
rc=$?
libs=$(loaded "$T_TMP/w1")
[ "$rc" -eq 0 ] && [ -n "$libs" ] && ! echo "$libs" | grep -q libmpi
t_case $? "world 1 under the shim: ran (status $rc), libaccelshim.so loaded, no libmpi mapped"
[ "$T_FAILED" -eq 0 ] || { t_show "$T_TMP/w1/out"; printf '# mapped: %s\n' "$libs"; }

# 3. NCCL rendezvous (the launcher's own engine: no mpirun, no MPI world)
mkdir -p "$T_TMP/nc"
LD_DEBUG=files LD_DEBUG_OUTPUT=$T_TMP/nc/ld timeout -k 5 180 "$T_LAUNCHER" --cpu --launcher local -n 2 \
    --policy "$policy" -- "$T_MLP" --steps 3 --batch 2 --shard-rank '{rank}' --shard-count '{world_size}' \
    >"$T_TMP/nc/out" 2>&1
rc=$?
libs=$(loaded "$T_TMP/nc")
ranks=$(echo "$libs" | awk 'NF { print $1 }' | sort -u | grep -c .)
[ "$rc" -eq 0 ] && [ "$ranks" -ge 2 ] && echo "$libs" | grep -q 'libnccl\.so\.2' && ! echo "$libs" | grep -q libmpi
ok=$?
t_case $ok "2 ranks through NCCL_COMM_ID (--launcher local): ran (status $rc), $ranks shim processes, libnccl mapped, no libmpi"
[ $ok -eq 0 ] || { t_show "$T_TMP/nc/out"; echo "$libs" | grep -i 'mpi\|nccl' | sed 's/^/# mapped: /'; }

# 4. control: the mpi backend maps it, opened by the shim
if command -v mpirun >/dev/null 2>&1; then
    mkdir -p "$T_TMP/mp"
    T_PRELOAD=$T_SHIM t_mpirun 2 -x LD_DEBUG=files -x LD_DEBUG_OUTPUT="$T_TMP/mp/ld" \
        -x LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" -x HOSTCUDA_KERNEL_LIBS="$T_KLIBS" -x ACCELSHIM_POLICY="$policy" \
        -x ACCELSHIM_BACKEND=mpi -x T_PRELOAD="$T_SHIM" \
        bash -c "$(t_rank_cmd)" "$T_MLP" --steps 3 --batch 2 >"$T_TMP/mp/out" 2>&1
    rc=$?
    n=$(grep -l 'file=libmpi\.so\.40 \[0\];  dynamically loaded by .*libaccelshim\.so' "$T_TMP"/mp/ld.* 2>/dev/null | grep -c .)
    # the detector of cases 2 and 3 sees it too (else their "no libmpi" proves nothing)
    [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && loaded "$T_TMP/mp" | grep -q 'libmpi\.so\.40'
    t_case $? "control: 2 ranks, mpi backend: ran (status $rc), libmpi.so.40 opened by libaccelshim.so in $n of 2 ranks, seen by the detector"
    { [ "$rc" -eq 0 ] && [ "$n" -eq 2 ]; } || t_show "$T_TMP/mp/out"
else
    echo "ok $((T_N += 1)) - # SKIP mpirun not installed"
fi

# 5. libmpi missing where it is needed
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    real=$(readlink -f "$(ldconfig -p | sed -n 's/.*libmpi\.so\.40 (libc6,x86-64) => //p' | head -1)")
    if [ -f "$real" ]; then
        : >"$T_TMP/empty"
        # shellcheck disable=SC2016  # expanded by the namespace's shell
        unshare -m --propagation private bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ \
            "$T_TMP/empty" "$real" env LD_LIBRARY_PATH="$T_HOSTCUDA_DIR" HOSTCUDA_KERNEL_LIBS="$T_KLIBS" \
            ACCELSHIM_POLICY="$policy" ACCELSHIM_WORLD_SIZE=2 ACCELSHIM_RANK=0 ACCELSHIM_BACKEND=mpi \
            LD_PRELOAD="$T_SHIM" timeout -k 5 60 "$T_MLP" --steps 3 --batch 2 >"$T_TMP/missing" 2>&1
        rc=$?
        echo "# status $rc; $(grep -c . "$T_TMP/missing") line(s); the error: $(grep -m1 'libmpi' "$T_TMP/missing")"
        [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q 'libmpi\.so\.40 could not be loaded' "$T_TMP/missing"
        t_case $? "libmpi.so.40 hidden, world 2 over MPI: clear error naming libmpi.so.40, status $rc (non-zero, no crash)"
        [ "$T_FAILED" -eq 0 ] || t_show "$T_TMP/missing"
    else
        echo "ok $((T_N += 1)) - # SKIP libmpi.so.40 not found by ldconfig"
    fi
else
    echo "ok $((T_N += 1)) - # SKIP needs root for a private mount namespace"
fi
t_done
