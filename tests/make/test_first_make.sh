#!/usr/bin/env bash
# test_first_make.sh — property: on a machine where Open MPI is not installed yet, the README's
# first command, `make demo`, succeeds on its FIRST run from a clean copy of the tree (make reads
# nothing at parse time that scripts/install-deps.sh installs later in the same run).
# How: a private mount namespace hides Open MPI (headers, libraries, mpicc, mpirun, pkg-config
# files) by bind-mounting empty files/dirs over them; a fake apt-get (and dpkg-query) on PATH
# un-hides them when install-deps asks for Open MPI's packages. The test checks that the
# precondition held (mpicc unusable before, apt-get asked for Open MPI) so it cannot pass vacuously.
# Needs root (unshare -m); skips (77) otherwise. Takes a full build (minutes).
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
t_need_root_ns
git -C "$T_TOP" rev-parse --git-dir >/dev/null 2>&1 || t_skip "not a git checkout (the tree is copied with git ls-files)"
t_need_cmd git mpicc
t_tmp

# the tree as a fresh clone would have it: tracked + untracked-not-ignored files, no build/
src=$T_TMP/src
mkdir -p "$src"
(cd "$T_TOP" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar --ignore-failed-read -cf - 2>/dev/null) \
    | tar xf - -C "$src" || t_fail "cannot copy the tree"
[ -f "$src/Makefile" ] || t_fail "copy of the tree has no Makefile"

# what Open MPI puts on the machine (Debian 12's libopenmpi-dev, libopenmpi3, openmpi-bin)
hide=()
for p in /usr/lib/x86_64-linux-gnu/openmpi /usr/bin/mpicc /usr/bin/mpirun /usr/bin/mpiexec \
         /usr/bin/orterun /usr/bin/ompi_info /usr/lib/x86_64-linux-gnu/libmpi.so.40 \
         /usr/lib/x86_64-linux-gnu/libopen-pal.so.40 /usr/lib/x86_64-linux-gnu/libopen-rte.so.40; do
    [ -e "$p" ] && hide+=("$(readlink -f "$p")")
done
printf '%s\n' "${hide[@]}" | sort -u >"$T_TMP/hidden"

mkdir -p "$T_TMP/fake" "$T_TMP/empty"
: >"$T_TMP/emptyfile"
# fake apt-get: `install` of an Open MPI package un-hides everything; other packages are refused
cat >"$T_TMP/fake/apt-get" <<EOF
#!/bin/bash
echo "apt-get \$*" >>"$T_TMP/apt.log"
[ "\$1" = update ] && exit 0
for a in "\$@"; do
  case \$a in
    install|-y|-qq|--no-install-recommends) ;;
    libopenmpi-dev|openmpi-bin) rm -f "$T_TMP/hiding"; while read -r p; do umount "\$p"; done <"$T_TMP/hidden" ;;
    *) echo "fake apt-get: \$a is not a package this test provides" >&2; exit 100 ;;
  esac
done
exit 0
EOF
# fake dpkg-query: Open MPI's packages are "not installed" while hidden
cat >"$T_TMP/fake/dpkg-query" <<EOF
#!/bin/bash
for a in "\$@"; do
  case \$a in libopenmpi-dev|openmpi-bin) [ -e "$T_TMP/hiding" ] && { echo "unknown ok not-installed"; exit 1; } ;; esac
done
exec /usr/bin/dpkg-query "\$@"
EOF
chmod +x "$T_TMP/fake/apt-get" "$T_TMP/fake/dpkg-query"
: >"$T_TMP/hiding"

# shellcheck disable=SC2016  # expanded by the namespace's shell
T=$T_TMP unshare -m --propagation private bash -c '
    set -u
    while read -r p; do
        if [ -d "$p" ]; then mount --bind "$T/empty" "$p"; else mount --bind "$T/emptyfile" "$p"; fi || exit 90
    done <"$T/hidden"
    # the precondition: Open MPI is unusable now
    if mpicc --showme:compile >/dev/null 2>&1 || [ -s /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ]; then
        echo "precondition: Open MPI still visible"; exit 91
    fi
    cd "$T/src" && PATH=$T/fake:$PATH make demo </dev/null
' _ >"$T_TMP/make.log" 2>&1
rc=$?
if [ "$rc" -eq 90 ] || [ "$rc" -eq 91 ]; then
    cat "$T_TMP/make.log"; t_fail "could not hide Open MPI (status $rc)"
fi
if ! grep -q 'libopenmpi-dev\|openmpi-bin' "$T_TMP/apt.log" 2>/dev/null; then
    tail -n 30 "$T_TMP/make.log"; t_fail "install-deps never asked apt-get for Open MPI: the precondition did not hold"
fi
if [ "$rc" -ne 0 ]; then
    echo "--- last lines of the first \`make demo\` (status $rc) ---"; tail -n 40 "$T_TMP/make.log"
    t_fail "the first \`make demo\` on a machine without Open MPI failed (status $rc)"
fi
grep -q '^EQUAL' "$T_TMP/make.log" || { tail -n 30 "$T_TMP/make.log"; t_fail "make demo succeeded but printed no EQUAL verdict"; }
echo "# the first make compiled $(grep -Ec '^(cc|gcc|clang|/[^ ]*nvcc) ' "$T_TMP/make.log") programs/objects; its verdict: $(grep -m1 '^EQUAL' "$T_TMP/make.log")"
echo "ok: first \`make demo\` succeeded; apt-get asked for: $(grep -o 'libopenmpi-dev\|openmpi-bin' "$T_TMP/apt.log" | sort -u | tr '\n' ' ')"
