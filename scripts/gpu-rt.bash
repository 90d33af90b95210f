# shellcheck shell=bash
# gpu-rt.bash — sourced by scripts/gpu-check.sh (and its test): use the runtime bundle that
# scripts/gpu-bundle.sh made (build/gpu-rt) on a GPU machine that lacks some of what the build
# links (libyaml, libunwind, Open MPI and PMIx with their plugins...). Nothing here installs
# anything: the bundle travels inside build/, and only what this machine lacks is taken from it.
#   gpu_rt_mpi_works             0 if this machine's mpirun starts a 1-rank job (--mca plm isolated:
#                                Open MPI 4.1's rsh launcher aborts even local jobs without ssh/rsh)
#   gpu_rt_use_mpi RT            use the bundle's Open MPI (relocated: OPAL_PREFIX, PMIX_PREFIX...)
#   gpu_rt_fill_missing RT F...  for every library that `ldd F` cannot find and RT/lib has, a link
#                                in RT/use/, which goes first on LD_LIBRARY_PATH; sets GPU_RT_USED
#                                (the sonames taken) and GPU_RT_STILL (those the bundle lacks too)
#   gpu_rt_find_lib SONAME MOD   the directory of SONAME: ldconfig, LD_LIBRARY_PATH, below Python
#                                module MOD's directories (any depth; then the `nvidia` namespace),
#                                else a search of GPU_RT_SEARCH_ROOTS (GPU_RT_SEARCH_S, 40 s in
#                                all); sets GPU_RT_LIBDIR, GPU_RT_HOW
#   gpu_rt_routing_summary FILE  one line: the routing recorder's TSV counted per route and per
#                                hand-back (identity|name|none, hook|passthrough); exit 1 when the
#                                file is absent or empty ("not supported by this shim build")
# Every external command runs under `timeout`.
# Threading: none. Exports into the caller's shell (call it directly, not in $(...)).

gpu_rt_mpi_works() {
    command -v mpirun >/dev/null 2>&1 || return 1
    timeout -k 5 30 mpirun --allow-run-as-root --oversubscribe --mca plm isolated -n 1 true >/dev/null 2>&1
}

gpu_rt_use_mpi() {
    local rt=$1 px
    px=$rt/usr/lib/x86_64-linux-gnu/pmix2
    [ -x "$rt/usr/bin/orterun" ] || return 1
    # mpirun is a link to orterun: a carry that drops links loses it
    [ -e "$rt/usr/bin/mpirun" ] || ln -sf orterun "$rt/usr/bin/mpirun" 2>/dev/null ||
        cp "$rt/usr/bin/orterun" "$rt/usr/bin/mpirun" || return 1
    export PATH=$rt/usr/bin:$PATH
    export OPAL_PREFIX=$rt/usr PMIX_PREFIX=$px PMIX_DATADIR=$px/share
    export PMIX_MCA_pcompress_base_silence_warning=1
    # the machine's own Open MPI (if any) does not start: the bundle's libraries go first
    export LD_LIBRARY_PATH=$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

gpu_rt_fill_missing() {
    local rt=$1 f so round added
    shift
    GPU_RT_USED="" GPU_RT_STILL=""
    mkdir -p "$rt/use" || return 1
    case ":${LD_LIBRARY_PATH:-}:" in *":$rt/use:"*) ;; *) export LD_LIBRARY_PATH=$rt/use${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;; esac
    for round in 1 2 3 4; do   # a library taken may itself need another
        added=0 GPU_RT_STILL=""
        for f in "$@"; do
            [ -e "$f" ] || continue
            for so in $(timeout 20 ldd "$f" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
                if [ -e "$rt/lib/$so" ] && [ ! -e "$rt/use/$so" ]; then
                    ln -sf "../lib/$so" "$rt/use/$so" && added=1 && GPU_RT_USED="$GPU_RT_USED $so"
                elif [ ! -e "$rt/lib/$so" ]; then
                    case " $GPU_RT_STILL " in *" $so "*) ;; *) GPU_RT_STILL="$GPU_RT_STILL $so" ;; esac
                fi
            done
        done
        [ $added = 1 ] || break
    done
    : "$round"
    GPU_RT_USED=${GPU_RT_USED# } GPU_RT_STILL=${GPU_RT_STILL# }
}

# shellcheck disable=SC2034  # GPU_RT_LIBDIR, GPU_RT_HOW: for the caller
gpu_rt_find_lib() {
    local so=$1 mod=$2 d p py dirs roots=()
    GPU_RT_LIBDIR="" GPU_RT_HOW=""
    p=$(timeout 10 ldconfig -p 2>/dev/null | awk -v s="$so" '$1 == s { print $NF; exit }')
    if [ -n "$p" ] && [ -e "$p" ]; then GPU_RT_LIBDIR=${p%/*} GPU_RT_HOW=ldconfig; return 0; fi
    local parts=()
    IFS=: read -r -a parts <<<"${LD_LIBRARY_PATH:-}"
    for d in "${parts[@]}"; do
        if [ -n "$d" ] && [ -e "$d/$so" ]; then GPU_RT_LIBDIR=$d GPU_RT_HOW=LD_LIBRARY_PATH; return 0; fi
    done
    # a Python wheel (nvidia-nccl-cu13: nvidia/nccl/lib; CUDA 13 wheels may use nvidia/cu13/lib):
    # ask Python where the module lives, then search below it at any depth
    for py in python3 python; do
        command -v "$py" >/dev/null 2>&1 || continue
        dirs=$(timeout 30 "$py" -c 'import importlib, os, sys
for name in sys.argv[1:]:
    try:
        m = importlib.import_module(name)
    except Exception:
        continue
    for p in list(getattr(m, "__path__", None) or [os.path.dirname(m.__file__ or "")]):
        print(p)' "$mod" nvidia 2>/dev/null)
        while IFS= read -r d; do
            [ -d "$d" ] || continue
            p=$(timeout 30 find "$d" \( -type f -o -type l \) -name "$so" 2>/dev/null | head -1)
            if [ -n "$p" ]; then GPU_RT_LIBDIR=${p%/*} GPU_RT_HOW="python module under $d"; return 0; fi
        done <<<"$dirs"
        break
    done
    # fallback: a search of the usual roots (any depth; one file system each), 40 s in all
    read -r -a roots <<<"${GPU_RT_SEARCH_ROOTS:-/usr/local /opt /usr/lib /root /home}"
    local end=$((SECONDS + ${GPU_RT_SEARCH_S:-40}))
    for d in "${roots[@]}"; do
        [ -d "$d" ] || continue
        [ $((end - SECONDS)) -gt 0 ] || break
        p=$(timeout $((end - SECONDS)) find "$d" -xdev \( -type f -o -type l \) -name "$so" 2>/dev/null | head -1)
        if [ -n "$p" ]; then GPU_RT_LIBDIR=${p%/*} GPU_RT_HOW="search of $d"; return 0; fi
    done
    return 1
}

gpu_rt_routing_summary() {
    local f=$1
    if [ ! -s "$f" ]; then echo "not supported by this shim build (no ACCELSHIM_ROUTING_TABLE output)"; return 1; fi
    # columns are found by value, not position: the route is the last field that is identity,
    # name or none; the hand-back the last that is hook or passthrough
    awk -F'\t' '/^#/ || NF < 2 || $1 == "symbol" { next }
        { n++; r = "?"; h = "?"
          for (i = 1; i <= NF; i++) {
              if ($i == "identity" || $i == "name" || $i == "none") r = $i
              if ($i == "hook" || $i == "passthrough") h = $i }
          route[r]++; back[h]++; if (!(r in seen)) { seen[r] = 1; order = order " " r } }
        END { if (!n) { print "not supported by this shim build (the file has no request lines)"; exit 1 }
              printf "%d request(s): route", n
              split("identity name none ?", k, " ")
              for (i = 1; i <= 4; i++) if (k[i] in route) printf " %s %d", k[i], route[k[i]]
              printf "; handed back hook %d, passthrough %d", back["hook"] + 0, back["passthrough"] + 0
              if ("name" in route) printf "; this driver hands out unexported pointers (routed by name)"
              printf "\n" }' "$f"
}
