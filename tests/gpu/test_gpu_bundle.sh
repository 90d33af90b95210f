#!/usr/bin/env bash
# Property: the runtime bundle (scripts/gpu-bundle.sh -> build/gpu-rt, used by gpu-check.sh through
# scripts/gpu-rt.bash) lets gpu-check run on a machine that lacks what the build links and has no
# ssh (the GPU machine). In a private mount namespace this machine's Open MPI plugins, PMIx and
# Open MPI help files are hidden (empty directories bound over them) and so are ssh/rsh (/dev/null
# bound over them): (1) control: the machine's own mpirun no longer starts a job; (2) no-ssh
# control: the bundle's mpirun without the isolated launcher fails (Open MPI 4.1's rsh launcher
# aborts without ssh), with `--mca plm isolated` it runs; (3) with the bundle (relocated by
# OPAL_PREFIX/PMIX_PREFIX) a 2-rank MPI_Allreduce runs; (4) gpu-check (fake mode: runtime-libs,
# coll-mpi-2ranks, equiv-mpi2-mlp) passes and says it used the bundle's Open MPI; (5) a program
# whose library exists only in the bundle does not load (control) until gpu_rt_fill_missing links
# it in, then runs. Skips (77) without root/unshare or Open MPI.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
ML=/usr/lib/x86_64-linux-gnu
for f in "$B/libaccelshim.so" "$B/bench/allreduce_mpi" "$B/tests/collectives/test_coll" "$B/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
if [ ! -d "$ML/openmpi/lib/openmpi3" ] || [ ! -d "$ML/pmix2/lib/pmix" ]; then
    echo "SKIP: Debian's Open MPI/PMIx layout not found"; exit 77
fi
unshare -m true 2>/dev/null || { echo "SKIP: cannot make a mount namespace (unshare -m: needs root)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

bash "$ROOT/scripts/gpu-bundle.sh" "$tmp/rt" || { echo "FAIL: gpu-bundle.sh failed"; exit 1; }
for f in lib/libyaml-0.so.2 lib/libmpi.so.40 lib/libunwind.so.8 usr/bin/orterun usr/bin/mpirun \
         usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 usr/lib/x86_64-linux-gnu/pmix2/lib/pmix MANIFEST; do
    [ -e "$tmp/rt/$f" ] || bad "the bundle lacks $f"
done
for f in "$tmp"/rt/lib/*; do
    case ${f##*/} in libc.so* | libcuda.so* | libnccl.so* | libcublas*) bad "the bundle carries a system/GPU library: ${f##*/}" ;; esac
done

rm -f "$tmp/rt/usr/bin/mpirun"   # as a carry that drops links would: gpu_rt_use_mpi remakes it

# (4) a library only the bundle has: cc builds a program against it, then it leaves the system
mkdir -p "$tmp/probe"
printf 'int ash_rt_probe(void) { return 42; }\n' >"$tmp/probe/p.c"
printf 'int ash_rt_probe(void);\nint main(void) { return ash_rt_probe() == 42 ? 0 : 1; }\n' >"$tmp/probe/m.c"
if cc -shared -fPIC -Wl,-soname,libashrtprobe.so.1 -o "$tmp/probe/libashrtprobe.so.1" "$tmp/probe/p.c" &&
   cc -o "$tmp/probe/m" "$tmp/probe/m.c" "$tmp/probe/libashrtprobe.so.1"; then
    mv "$tmp/probe/libashrtprobe.so.1" "$tmp/rt/lib/"
else
    bad "cannot build the probe program"
fi

# shellcheck disable=SC2016  # expanded inside the namespace's shell
unshare -m env ROOT="$ROOT" B="$B" ML="$ML" RT="$tmp/rt" T="$tmp" bash -c '
    set -u
    mkdir -p "$T/empty"
    for d in "$ML/openmpi" "$ML/pmix2" /usr/share/openmpi; do mount --bind "$T/empty" "$d" || exit 9; done
    . "$ROOT/scripts/gpu-rt.bash"
    IFS=: read -r -a dirs <<<"$PATH"
    for p in ssh rsh; do   # no ssh/rsh, as on the GPU machine: /dev/null (not a program) over each
        for d in "${dirs[@]}"; do [ -e "$d/$p" ] && { mount --bind /dev/null "$d/$p" || exit 9; }; done
    done
    for p in ssh rsh; do
        for d in "${dirs[@]}"; do [ -f "$d/$p" ] && echo "no-ssh: FAIL $d/$p is still a program"; done
    done
    ( gpu_rt_use_mpi "$RT" && unset OMPI_MCA_plm && timeout 60 mpirun --allow-run-as-root --oversubscribe -n 2 true ) >"$T/nossh.txt" 2>&1
    r=$?
    if [ $r -ne 0 ] && grep -q "plm_rsh_agent" "$T/nossh.txt"; then echo "no-ssh-control: ok mpirun without the isolated launcher fails (exit $r, no ssh/rsh agent)"
    else echo "no-ssh-control: FAIL exit $r: $(head -5 "$T/nossh.txt")"; fi
    ( gpu_rt_use_mpi "$RT" && timeout 60 mpirun --allow-run-as-root --oversubscribe --mca plm isolated -n 2 true ) &&
        echo "no-ssh-isolated: ok runs" || echo "no-ssh-isolated: FAIL"
    if gpu_rt_mpi_works; then echo "control: FAIL the hidden mpirun still starts"; else echo "control: ok the hidden mpirun does not start"; fi
    if LD_LIBRARY_PATH= "$T/probe/m" 2>/dev/null; then echo "probe-before: FAIL ran"; else echo "probe-before: ok does not load"; fi
    gpu_rt_fill_missing "$RT" "$T/probe/m"
    if "$T/probe/m"; then echo "probe-after: ok runs (used: $GPU_RT_USED)"; else echo "probe-after: FAIL ($GPU_RT_USED / $GPU_RT_STILL)"; fi
    ( gpu_rt_use_mpi "$RT" && gpu_rt_mpi_works && echo "bundle-mpi: ok starts" ) || echo "bundle-mpi: FAIL"
    ( gpu_rt_use_mpi "$RT" && timeout 60 mpirun --allow-run-as-root --oversubscribe --mca plm isolated -np 2 "$B/bench/allreduce_mpi" --count 1000 --iters 3 ) 2>&1 | sed "s/^/allreduce: /"
    GPU_CHECK_FAKE=hostcuda GPU_CHECK_RT="$RT" GPU_CHECK_ONLY="^(coll-mpi-2ranks|equiv-mpi2-mlp)\$" timeout -k 10 300 \
        "$ROOT/scripts/gpu-check.sh" "$T/out" >"$T/check.out" 2>&1
    echo "gpu-check: exit $?"
' >"$tmp/ns.out" 2>&1
cat "$tmp/ns.out"
grep -q '^control: ok' "$tmp/ns.out" || bad "control: hiding Open MPI did not stop this machine's mpirun (the test would prove nothing)"
grep -q '^probe-before: ok' "$tmp/ns.out" || bad "control: the probe ran without the bundle"
grep -q '^probe-after: ok' "$tmp/ns.out" || bad "gpu_rt_fill_missing did not make the probe load"
grep -q '^bundle-mpi: ok' "$tmp/ns.out" || bad "the bundle's Open MPI does not start"
grep -q '^no-ssh-control: ok' "$tmp/ns.out" || bad "no-ssh control: with ssh/rsh hidden mpirun ran without the isolated launcher (the fix would prove nothing)"
grep -q '^no-ssh-isolated: ok' "$tmp/ns.out" || bad "with ssh/rsh hidden mpirun --mca plm isolated does not run"
grep -q '^no-ssh: FAIL' "$tmp/ns.out" && bad "ssh/rsh could not be hidden"
grep -q '^allreduce: allreduce_mpi: .* ranks 2 ' "$tmp/ns.out" || bad "no 2-rank MPI_Allreduce through the bundle"
[ -f "$tmp/out/report.txt" ] && cat "$tmp/out/report.txt"
grep -Eq '^PASS runtime-libs .*Open MPI and PMIx from' "$tmp/out/report.txt" 2>/dev/null || bad "gpu-check's runtime-libs did not PASS with the bundle's Open MPI"
grep -Eq '^PASS coll-mpi-2ranks ' "$tmp/out/report.txt" 2>/dev/null || { bad "coll-mpi-2ranks did not PASS with the bundle"; tail -20 "$tmp/check.out"; }
grep -Eq '^PASS equiv-mpi2-mlp ' "$tmp/out/report.txt" 2>/dev/null || { bad "equiv-mpi2-mlp did not PASS with the bundle and no ssh"; tail -20 "$tmp/check.out"; }
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS: with this machine's Open MPI and ssh hidden, the carried bundle runs MPI (isolated launcher), gpu-check's MPI checks and a bundle-only library"
