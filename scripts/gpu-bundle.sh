#!/usr/bin/env bash
# gpu-bundle.sh [OUT] — the runtime libraries that build/ links, gathered into OUT (default
# build/gpu-rt) so that scripts/gpu-check.sh can run on a GPU machine that has no package
# registry and may lack them (the device machine: its image has CUDA but maybe not libyaml,
# libunwind or Open MPI). `make gpu-bundle` runs it after `make all`; carry build/ to the GPU.
# OUT/lib: every shared library in the ldd closure of what gpu-check runs, of Open MPI's and
# PMIx's plugins and of mpirun, except glibc's own, libstdc++/libgcc_s, the CUDA driver and
# toolkit libraries and NCCL (the GPU machine's own). OUT/usr/...: Open MPI's mpirun/orted, its
# plugins and help files, PMIx's plugins and help files, at their Debian paths below OUT/usr so
# that OPAL_PREFIX/PMIX_PREFIX relocate them (scripts/gpu-rt.bash). Nothing is taken unless the
# GPU machine lacks it. Prints the bundle's size; exit 1 if something it needs is missing here.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
OUT=${1:-$B/gpu-rt}
ML=/usr/lib/x86_64-linux-gnu
rm -rf "$OUT"
mkdir -p "$OUT/lib" "$OUT/usr/bin" "$OUT/usr/share" "$OUT/usr/lib/x86_64-linux-gnu/openmpi/lib" || exit 1

fail() { echo "gpu-bundle: $*" >&2; exit 1; }
if [ ! -x /usr/bin/orterun ] || [ ! -d "$ML/openmpi/lib/openmpi3" ]; then
    fail "Open MPI (orterun, $ML/openmpi) not found here"
fi
[ -d "$ML/pmix2/lib/pmix" ] || fail "PMIx ($ML/pmix2) not found here"

# Open MPI and PMIx trees (no headers, no static libraries)
cp -a /usr/bin/orterun /usr/bin/orted "$OUT/usr/bin/" && ln -s orterun "$OUT/usr/bin/mpirun" || exit 1
cp -a "$ML/openmpi/lib/openmpi3" "$OUT/usr/lib/x86_64-linux-gnu/openmpi/lib/" || exit 1
[ -d /usr/share/openmpi ] && cp -a /usr/share/openmpi "$OUT/usr/share/"
mkdir -p "$OUT/usr/lib/x86_64-linux-gnu/pmix2/lib" || exit 1
cp -a "$ML/pmix2/lib/pmix" "$OUT/usr/lib/x86_64-linux-gnu/pmix2/lib/" || exit 1
[ -d "$ML/pmix2/share" ] && cp -a "$ML/pmix2/share" "$OUT/usr/lib/x86_64-linux-gnu/pmix2/"

# what gpu-check runs, and everything those trees load
objs=("$B/libaccelshim.so" "$B/libaccelshim-io.so" "$OUT/usr/bin/orterun" "$OUT/usr/bin/orted")
for f in "$B"/bin/* "$B"/tests/trainers/mlp "$B"/tests/gpu/gpu_probe "$B"/tests/gpu/gpu_routing \
         "$B"/tests/gpu/gemm_bench "$B"/tests/collectives/test_coll "$B"/tests/equivalence/fcompare \
         "$B"/bench/launch_overhead; do
    [ -e "$f" ] && objs+=("$f")
done
while IFS= read -r f; do objs+=("$f"); done < <(find "$OUT/usr" -name '*.so*' -type f)
system='/(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux-x86-64|libgcc_s|libstdc\+\+)\.so'
gpu='(libcuda|libnvidia|libnccl|libcublas|libcublasLt|libcudart)\.so|/usr/local/cuda|/build/'
n=0
while read -r p; do
    cp -L "$p" "$OUT/lib/" && n=$((n + 1))
done < <(for f in "${objs[@]}"; do ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}'; done |
         sort -u | grep -Ev "$system" | grep -Ev "$gpu")
[ "$n" -gt 0 ] || fail "no library found to bundle (is build/ built? run make all)"
{
    echo "# made by scripts/gpu-bundle.sh on $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ); used by scripts/gpu-rt.bash"
    (cd "$OUT" && find . -type f | sort)
} >"$OUT/MANIFEST"
echo "gpu-bundle: $OUT: $n libraries, Open MPI + PMIx trees; $(du -sh "$OUT" | cut -f1) in all"
