#!/usr/bin/env bash
# Property: rt_mlp is built the way nvcc builds a trainer by default — cudart linked STATICALLY
# (no DT_NEEDED libcudart*/libcuda*, no rpath), so it reaches the driver only through
# dlopen("libcuda.so.1") + cuGetProcAddress (dynamic symbols: dlopen, dlsym); its fatbinary
# carries every kernel entry of mlp_kernels.ptx under the same (mangled) name, so mlp's policies
# apply; its options are mlp's (minus mlp-only ones) with the same error exit 2. Needs no driver.
# Skips (77) while rt_mlp is not built (no nvcc / libcudart_static.a).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$ROOT/build/tests/trainers
for f in "$T/rt_mlp" "$T/mlp_kernels.ptx" "$T/mlp" "$ROOT/build/tests/hostcuda/libcuda.so.1"; do
    [ -e "$f" ] || { echo "SKIP: $f is not built"; exit 77; }
done
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

needed=$(readelf -d "$T/rt_mlp" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "DT_NEEDED: $needed"
case " $needed" in *" libcudart"* | *" libcuda."*) bad "rt_mlp links the CUDA runtime/driver dynamically: $needed" ;; esac
readelf -d "$T/rt_mlp" | grep -Eq 'RPATH|RUNPATH' && bad "rt_mlp has an rpath/runpath"
dyn=$(nm -D --undefined-only "$T/rt_mlp" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
for s in dlopen dlsym; do
    grep -qx "$s" <<<"$dyn" || bad "rt_mlp does not import $s (static cudart dlopens the driver)"
done
if grep -q '^cu[A-Z]' <<<"$dyn"; then bad "rt_mlp imports driver symbols directly: $(grep '^cu[A-Z]' <<<"$dyn" | head -3 | tr '\n' ' ')"; fi
grep -aq 'libcuda\.so\.1' "$T/rt_mlp" || bad "no \"libcuda.so.1\" string (the name static cudart dlopens)"
grep -aq 'cuGetProcAddress' "$T/rt_mlp" || bad "no \"cuGetProcAddress\" string"
echo "imports: $(grep -E '^(dlopen|dlsym|dlvsym)$' <<<"$dyn" | tr '\n' ' ')(no cu* imports)"

# every kernel of mlp's PTX, by its entry name, is in rt_mlp's fatbinary (PTX or SASS symbol)
n=0
while read -r e; do
    n=$((n + 1))
    grep -aq "$e" "$T/rt_mlp" || bad "kernel $e of mlp_kernels.ptx is not in rt_mlp"
done < <(sed -n 's/^.*\.entry \([A-Za-z0-9_]*\)(.*/\1/p' "$T/mlp_kernels.ptx")
[ "$n" -ge 9 ] || bad "found only $n .entry names in mlp_kernels.ptx"
echo "kernels: all $n entries of mlp_kernels.ptx present by name"

# the shared options (one table, mlp_data.h): each is in both trainers' --help, bad values exit 2
for opt in --steps --batch --lr --seed --shard-rank --shard-count --optimizer --update --clip \
           --init --init-seed --save --dump-samples --help; do
    "$T/rt_mlp" --help | grep -q -- "$opt" || bad "rt_mlp --help lacks $opt"
    LD_LIBRARY_PATH=$ROOT/build/tests/hostcuda "$T/mlp" --help | grep -q -- "$opt" \
        || bad "mlp --help lacks $opt (the help texts drifted apart)"
    grep -q "{\"${opt#--}\"," "$ROOT/tests/trainers/mlp_data.h" || bad "mlp_data.h's common table has no option $opt"
done
for args in "--steps x" "--bogus" "--shard-rank 2 --shard-count 2" "--optimizer rmsprop" "--lr -1"; do
    # shellcheck disable=SC2086  # word splitting wanted
    err=$("$T/rt_mlp" $args 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 2 ] || ! grep -q '^rt_mlp: ' <<<"$err"; then bad "rt_mlp $args: exit $rc, stderr '$err' (want 2, 'rt_mlp: ...')"; fi
done
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS: rt_mlp links cudart statically (driver via dlopen + cuGetProcAddress), carries mlp's kernels, takes mlp's options"
