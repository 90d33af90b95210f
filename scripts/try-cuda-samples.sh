#!/usr/bin/env bash
# scripts/try-cuda-samples.sh SRC_DIR [SECONDS] [NAME...] — build NVIDIA cuda-samples from a
# checkout you have (github.com/NVIDIA/cuda-samples; nothing is fetched) the way a user dry-runs
# a program on a CPU, and run each on hostcuda: every .cu/.cpp of Samples/*/NAME/ compiled with
# `nvcc -cudart shared` (nvcc's default code; -lcuda, and -lcublas for the cuBLAS samples), run
# from its own folder (for its data files) by `accelerate-run --cpu -n 1` for at most SECONDS
# (default 300; OpenMP samples also get -fopenmp). A sample's own check decides: its exit status,
# and its words where it exits 0 after a failed check ("Test failed!", "&&&& NAME FAILED"). Prints
# one line per sample (PASS, FAIL with its status and last line, TIMEOUT, BUILD FAILED, or NOT
# FOUND) and a summary; the builds and logs are left in the folder it prints. NAMEs default to the
# 50 samples docs/hostcuda.md reports passing ("Programs no one here wrote"). Exit: 0 when every sample passed,
# 1 when one did not, 2 on bad usage.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-}
secs=${2:-300}
if [ -z "$src" ] || [ ! -d "$src/Samples" ] || [ ! -d "$src/Common" ]; then
    echo "usage: $0 SRC_DIR [SECONDS] [NAME...]: SRC_DIR must be a cuda-samples checkout (Samples/, Common/)" >&2
    exit 2
fi
case $secs in '' | *[!0-9]* | 0) echo "$0: SECONDS must be a positive whole number, not '$secs'" >&2; exit 2 ;; esac
shift $(($# >= 2 ? 2 : $#))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(vectorAdd asyncAPI clock cudaOpenMP fp16ScalarProduct mergeSort simpleAssert
    simpleAtomicIntrinsics simpleAWBarrier simpleCallback simpleCooperativeGroups simpleHyperQ simpleMultiCopy
    simpleMultiGPU simpleOccupancy simplePrintf simpleTemplates simpleVoteIntrinsics simpleZeroCopy
    systemWideAtomics template UnifiedMemoryStreams deviceQuery deviceQueryDrv topologyQuery convolutionSeparable
    histogram inlinePTX interval reduction reductionMultiBlockCG scalarProd shfl_scan sortingNetworks
    streamOrderedAllocation threadFenceReduction radixSortThrust binaryPartitionCG warpAggregatedAtomicsCG
    newdelete simpleCudaGraphs jacobiCudaGraphs graphMemoryNodes StreamPriorities LargeKernelParameter
    alignedTypes transpose simpleCUBLAS matrixMulCUBLAS batchCUBLAS)
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || { echo "$0: no nvcc at $nvcc (set NVCC or CUDA_HOME)" >&2; exit 2; }
ar=$top/scripts/accelerate-run
w=$(mktemp -d "${TMPDIR:-/tmp}/try-cuda-samples.XXXXXX")
echo "try-cuda-samples: working in $w"
pass=0 total=0
for n in "${names[@]}"; do
    total=$((total + 1))
    d=$(find "$src/Samples" -mindepth 2 -maxdepth 2 -type d -name "$n" | head -n 1)
    if [ -z "$d" ]; then
        printf '%-28s NOT FOUND in %s/Samples\n' "$n" "$src"
        continue
    fi
    libs=(-L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda)
    case $n in *CUBLAS* | UnifiedMemoryStreams) libs+=(-lcublas) ;; esac
    case $n in cudaOpenMP | UnifiedMemoryStreams) libs+=(-Xcompiler -fopenmp -lgomp) ;; esac
    mapfile -t srcs < <(find "$d" -maxdepth 1 \( -name '*.cu' -o -name '*.cpp' \) | sort)
    if ! "$nvcc" -std=c++17 -O2 -cudart shared -Wno-deprecated-gpu-targets -I"$src/Common" -I"$d" \
        -o "$w/$n" "${srcs[@]}" "${libs[@]}" > "$w/$n.build.log" 2>&1; then
        printf '%-28s BUILD FAILED: %s\n' "$n" "$(grep -m1 -i error "$w/$n.build.log" | cut -c1-100)"
        continue
    fi
    start=$(date +%s)
    (cd "$d" && timeout "$secs" "$ar" -q --cpu -n 1 -- "$w/$n") > "$w/$n.log" 2>&1
    rc=$? t=$(($(date +%s) - start))
    last=$(grep -v '^[[:space:]]*$' "$w/$n.log" | tail -n 1 | cut -c1-90)
    # some samples exit 0 after a failed check (reduction prints "Test failed!"): their words count too
    if [ $rc -eq 0 ] && grep -Eiq 'test failed|failed!|&&&& .* failed|result = fail' "$w/$n.log"; then
        printf '%-28s FAIL (exit 0, %ds, but it says so): %s\n' "$n" "$t" \
            "$(grep -Ei -m1 'test failed|failed!|&&&& .* failed|result = fail' "$w/$n.log" | cut -c1-80)"
    elif [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        printf '%-28s PASS (%ds): %s\n' "$n" "$t" "$last"
    elif [ $rc -eq 124 ]; then
        printf '%-28s TIMEOUT after %ds\n' "$n" "$secs"
    else
        printf '%-28s FAIL (exit %d, %ds): %s\n' "$n" "$rc" "$t" "$last"
    fi
done
echo "try-cuda-samples: $pass of $total passed (logs in $w)"
[ "$pass" -eq "$total" ]
