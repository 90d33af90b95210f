#!/usr/bin/env bash
# Property: scripts/gpu-check.sh's logic works end to end. GPU_CHECK_FAKE=hostcuda runs the same
# checks on hostcuda: every check passes except the rt_mlp ones (static cudart cannot run on
# hostcuda), which are skipped BY DESIGN, so it exits 0; report.txt has one line per check and
# report.json parses with the same statuses. Negative control: with a preload that is not the shim
# (GPU_CHECK_SHIM=a kernels library), routing, remap, the 2-rank equivalence and the matmul
# checks (GEMM counts, tf32/bf16 results; on hostcublas) FAIL and the script exits 1 — the checks
# can fail. Skips (77) while hostcuda, the shim or mpirun is missing.
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
for c in build runtime-libs driver ptx-load routing passthrough-mlp remap coll-nccl-world1 coll-mpi-2ranks \
         equiv-mpi2-mlp equiv-nccl1-mlp launch-overhead matmul-gemm matmul-mlp; do
    grep -Eq "^PASS $c " "$tmp/ok/report.txt" || bad "check $c did not PASS"
done
for c in passthrough-rt_mlp rt_mlp-vs-mlp equiv-mpi2-rt_mlp equiv-nccl1-rt_mlp; do
    grep -Eq "^SKIP $c .*fake mode" "$tmp/ok/report.txt" || bad "check $c was not skipped by design"
done
grep -q "^cuLaunchKernel " "$tmp/ok/routing-table.txt" 2>/dev/null || bad "no routing table"
if command -v python3 >/dev/null; then
    python3 - "$tmp/ok/report.json" "$tmp/ok/report.txt" <<'PY' || bad "report.json does not match report.txt"
import json, sys
r = json.load(open(sys.argv[1]))
txt = [l.split()[:2] for l in open(sys.argv[2]) if l[:4] in ("PASS", "FAIL", "SKIP")]
got = [[c["status"], c["name"]] for c in r["checks"]]
assert got == txt, (got, txt)
assert r["exit"] == 0 and r["summary"]["fail"] == 0, r["summary"]
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
GPU_CHECK_FAKE=hostcuda GPU_CHECK_SHIM=$B/tests/trainers/libmlp_kernels_host.so \
    GPU_CHECK_ONLY='^(routing|remap|equiv-mpi2-mlp|matmul-gemm|matmul-mlp)$' timeout -k 10 300 "$ROOT/scripts/gpu-check.sh" "$tmp/neg" >"$tmp/neg.out" 2>&1
rc=$?
sed 's/^/  control: /' "$tmp/neg.out"
[ $rc -eq 1 ] || bad "negative control exited $rc, want 1"
for c in routing remap equiv-mpi2-mlp matmul-gemm matmul-mlp; do
    grep -Eq "^FAIL $c " "$tmp/neg/report.txt" || bad "negative control: $c did not FAIL without the shim"
done
[ $fails -eq 0 ] || { echo "FAIL: $fails problems"; exit 1; }
echo "PASS: gpu-check's checks pass on hostcuda (rt_mlp skipped by design) and fail without the shim"
