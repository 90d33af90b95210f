#!/usr/bin/env bash
# scripts/try-mnist-cuda.sh SRC_DIR [SECONDS] — run mnist-cuda's cuda/naive-gpu/1layer.cu (a
# clone of github.com/Infatoshi/mnist-cuda that you have; nothing is fetched) on hostcuda, as
# docs/mnist-cuda.md describes: build it with `nvcc -cudart shared` in a temporary folder, write
# synthetic data in its formats where it reads it (../../mnist_data/), or use SRC_DIR/mnist_data
# when that holds the real files, then run `accelerate-run explain --cpu` on a copy shrunk to 3
# steps (its TRAIN_SIZE, TEST_SIZE and EPOCHS #defines; the kernels are the same) and 2 ranks with
# examples/mnist-1layer.yaml, on that copy and, for SECONDS (default 300), on the unmodified one.
# Everything is left in the folder it prints. Exit: 0 when the runs ended as expected (the
# unmodified one stopped by its time limit), 1 when one failed, 2 on bad usage.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-}
secs=${2:-300}
if [ -z "$src" ] || [ ! -f "$src/cuda/naive-gpu/1layer.cu" ]; then
    echo "usage: $0 SRC_DIR [SECONDS]: SRC_DIR must hold cuda/naive-gpu/1layer.cu (a clone of mnist-cuda)" >&2
    exit 2
fi
case $secs in '' | *[!0-9]*) echo "$0: SECONDS must be a whole number, not '$secs'" >&2; exit 2 ;; esac
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || { echo "$0: no nvcc at $nvcc (set NVCC or CUDA_HOME)" >&2; exit 2; }
ar=$top/scripts/accelerate-run
pol=$top/examples/mnist-1layer.yaml
w=$(mktemp -d "${TMPDIR:-/tmp}/try-mnist-cuda.XXXXXX")
echo "try-mnist-cuda: working in $w"
mkdir -p "$w/full/cuda/naive-gpu" "$w/small/cuda/naive-gpu" "$w/mnist_data"
ln -s ../mnist_data "$w/full/mnist_data"
ln -s ../mnist_data "$w/small/mnist_data"
cp "$src/cuda/naive-gpu/1layer.cu" "$w/full/cuda/naive-gpu/"
sed -e 's/^#define TRAIN_SIZE .*/#define TRAIN_SIZE 96/' -e 's/^#define TEST_SIZE .*/#define TEST_SIZE 64/' \
    -e 's/^#define EPOCHS .*/#define EPOCHS 1/' "$src/cuda/naive-gpu/1layer.cu" > "$w/small/cuda/naive-gpu/1layer.cu"
for v in full small; do
    (cd "$w/$v/cuda/naive-gpu" && "$nvcc" -cudart shared -o 1layer 1layer.cu) > "$w/$v-nvcc.log" 2>&1 ||
        { echo "try-mnist-cuda: nvcc failed on the $v copy: $(tail -n 3 "$w/$v-nvcc.log")" >&2; exit 1; }
done
if [ -f "$src/mnist_data/X_train.bin" ]; then
    cp "$src"/mnist_data/{X_train,y_train,X_test,y_test}.bin "$w/mnist_data/" || exit 1
    echo "try-mnist-cuda: the data of $src/mnist_data"
else
    python3 - "$w/mnist_data" <<'PY' || exit 1
import array, random, sys
r = random.Random(1)
for name, n in (("train", 10000), ("test", 1000)):
    y = array.array('i', [r.randrange(10) for _ in range(n)])
    x = array.array('f', [0.0]) * (n * 784)
    for i in range(n):
        for j in range(784):
            x[i * 784 + j] = r.random() * 0.2
        for j in range(y[i] * 78, (y[i] + 1) * 78):
            x[i * 784 + j] += 0.8
    open(f"{sys.argv[1]}/X_{name}.bin", "wb").write(x.tobytes())
    open(f"{sys.argv[1]}/y_{name}.bin", "wb").write(y.tobytes())
PY
    echo "try-mnist-cuda: synthetic data (10000 + 1000 images, each class lighting its own pixels)"
fi
fail=0
run() { # NAME DIR ARGS...: one command in DIR, its output in $w/NAME.log, its status printed
    local name=$1 dir=$2; shift 2
    (cd "$dir" && "$@") > "$w/$name.log" 2>&1
    local rc=$?
    echo "try-mnist-cuda: $name: exit $rc ($w/$name.log)"
    return $rc
}
s=$w/small/cuda/naive-gpu
run explain "$s" "$ar" explain --cpu -- ./1layer || fail=1
grep '^step:\|sync point:\|^rule:' "$w/explain.log" | cut -c1-160
run suggest "$s" "$ar" suggest --cpu -o "$w/suggested.yaml" -- ./1layer || fail=1
run small-2ranks "$s" env ACCELSHIM_LOG=info "$ar" --cpu -n 2 --policy "$pol" -- ./1layer || fail=1
grep 'Loss\|hit(s)' "$w/small-2ranks.log" | cut -c1-160
run full-2ranks "$w/full/cuda/naive-gpu" timeout "$secs" "$ar" --cpu -n 2 --policy "$pol" -- ./1layer
rc=$?
[ $rc -eq 124 ] || [ $rc -eq 0 ] || fail=1
grep 'Loss' "$w/full-2ranks.log" | cut -c1-160
exit $fail
