#!/usr/bin/env bash
# Property: scripts/gpu-check.sh's logic works end to end. GPU_CHECK_FAKE=hostcuda runs the same
# checks on hostcuda: every check passes except the rt_mlp ones (static cudart cannot run on
# hostcuda) and the routing recorder's (not in this shim build), which are skipped BY DESIGN, so it
# exits 0; report.txt has one line per check and report.json parses with the same statuses. The
# output folder is what the device tool returns: at most 8 files, none more than 2 folders down
# (here: 4 files, no folder), every log inside logs.tar.gz. Negative control: with a preload that
# is not the shim (GPU_CHECK_SHIM=a kernels library), routing, world-1 interception, the NCCL
# sync path, remap, the 2-rank equivalence and the matmul checks FAIL and the script exits 1 — the
# checks can fail. Skips (77) while hostcuda, the shim or mpirun is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
for f in "$B/tests/hostcuda/libcuda.so.1" "$B/libaccelshim.so" "$B/tests/gpu/gpu_routing" "$B/tests/gpu/gpu_probe" \
         "$B/tests/hostcublas/libcublas.so.13"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
command -v mpirun >/dev/null || { echo "SKIP: mpirun is not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

GPU_CHECK_FAKE=hostcuda timeout -k 10 500 "$ROOT/scripts/gpu-check.sh" "$tmp/ok" >"$tmp/ok.out" 2>&1; rc=$?
cat "$tmp/ok.out"
[ $rc -eq 0 ] || bad "fake run exited $rc, want 0"
for c in build runtime-libs driver ptx-load routing intercept-world1-mlp equiv-mpi2-mlp world1-nccl-mlp \
         coll-nccl-world1 nccl-2ranks-1gpu passthrough-mlp remap coll-mpi-2ranks launch-overhead matmul-gemm matmul-mlp \
         overlap-world1-mlp explain-mlp; do
    grep -Eq "^PASS $c " "$tmp/ok/report.txt" || bad "check $c did not PASS"
done
for c in intercept-world1-rt_mlp equiv-mpi2-rt_mlp world1-nccl-rt_mlp passthrough-rt_mlp rt_mlp-vs-mlp explain-rt_mlp; do
    grep -Eq "^SKIP $c .*fake mode" "$tmp/ok/report.txt" || bad "check $c was not skipped by design"
done
# the shim's request recorder (ACCELSHIM_ROUTING_TABLE): requests counted, some routed to hooks
grep -Eq "^PASS routing-requests .*route identity [1-9]" "$tmp/ok/report.txt" ||
    bad "routing-requests did not summarise the recorder's table (no request routed by identity)"
grep -q "^cuLaunchKernel " "$tmp/ok/routing-table.txt" 2>/dev/null || bad "no routing table"
# what comes back from the device: at most 8 files, at most 2 folders down; the logs in one archive
nfiles=$(find "$tmp/ok" -type f | wc -l) deep=$(find "$tmp/ok" -mindepth 3 | wc -l)
echo "output folder: $nfiles files ($(cd "$tmp/ok" && find . -type f | sort | tr '\n' ' ')), $deep entries 3+ levels down"
[ "$nfiles" -le 8 ] || bad "$nfiles files in the output folder (the device returns at most 8)"
[ "$deep" -eq 0 ] || bad "entries more than 2 folders down: $(find "$tmp/ok" -mindepth 3 | head -3)"
for f in report.txt report.json logs.tar.gz routing-table.txt; do
    [ -f "$tmp/ok/$f" ] || bad "$f is not directly in the output folder"
done
[ -z "$(find "$tmp/ok" -mindepth 1 -type d)" ] || bad "a folder in the output folder: $(find "$tmp/ok" -mindepth 1 -type d | head -3)"
big=$(find "$tmp/ok" -type f -size +16M)
[ -z "$big" ] || bad "files over 16 MiB: $big"
if tar -tzf "$tmp/ok/logs.tar.gz" >"$tmp/tar.list" 2>&1; then
    for f in logs/driver.txt logs/routing-driver.txt logs/routing-shim.txt logs/intercept-world1-mlp.txt \
             logs/equiv-mpi2-mlp.txt logs/world1-nccl-mlp.txt logs/coll-nccl.txt logs/remap.txt logs/matmul-mlp.txt; do
        grep -qx "$f" "$tmp/tar.list" || bad "logs.tar.gz lacks $f"
    done
    echo "logs.tar.gz: $(wc -l <"$tmp/tar.list") entries"
else
    bad "logs.tar.gz is not a readable archive: $(head -2 "$tmp/tar.list")"
fi
# the live output says each check's seconds (a partial run's output tail tells what passed)
grep -Eq '^PASS routing +[0-9]+s  at \+[0-9]+s ' "$tmp/ok.out" || bad "no live per-check time line for routing"
if command -v python3 >/dev/null; then
    python3 - "$tmp/ok/report.json" "$tmp/ok/report.txt" <<'PY' || bad "report.json does not match report.txt"
import json, sys
r = json.load(open(sys.argv[1]))
txt = [l.split()[:2] for l in open(sys.argv[2]) if l[:4] in ("PASS", "FAIL", "SKIP")]
got = [[c["status"], c["name"]] for c in r["checks"]]
assert got == txt, (got, txt)
assert r["exit"] == 0 and r["summary"]["fail"] == 0 and r["complete"] is True, r["summary"]
assert r["figures"]["launch_ns_plain"] is not None
f = r["figures"]
assert f["gemm_n"] == 64 and all(f["gemm_ms_" + m] is not None for m in ("plain", "default", "tf32", "bf16")), f
assert f["gemm_speedup_tf32"] is not None and f["gemm_speedup_bf16"] is not None, f
for m in ("default", "tf32", "bf16"):
    assert f["mlp_cublas_loss_last_" + m] < f["mlp_cublas_loss_first_" + m], (m, f)
print("report.json: %d checks, same as report.txt" % len(got))
PY
fi

# negative control: not the shim -> the checks must fail
NEG="routing intercept-world1-mlp world1-nccl-mlp remap equiv-mpi2-mlp matmul-gemm matmul-mlp overlap-world1-mlp"
GPU_CHECK_FAKE=hostcuda GPU_CHECK_SHIM=$B/tests/trainers/libmlp_kernels_host.so \
    GPU_CHECK_ONLY="^($(tr ' ' '|' <<<"$NEG"))\$" timeout -k 10 300 "$ROOT/scripts/gpu-check.sh" "$tmp/neg" >"$tmp/neg.out" 2>&1
rc=$?
sed 's/^/  control: /' "$tmp/neg.out"
[ $rc -eq 1 ] || bad "negative control exited $rc, want 1"
for c in $NEG; do
    grep -Eq "^FAIL $c " "$tmp/neg/report.txt" || bad "negative control: $c did not FAIL without the shim"
done
[ $fails -eq 0 ] || { echo "FAIL: $fails problems"; exit 1; }
echo "PASS: gpu-check's checks pass on hostcuda (rt_mlp skipped by design), its output fits what the device returns, and the checks fail without the shim"
