# shellcheck shell=bash
# gpu-rt.bash — sourced by scripts/gpu-check.sh (and its test): use the runtime bundle that
# scripts/gpu-bundle.sh made (build/gpu-rt) on a GPU machine that lacks some of what the build
# links (libyaml, libunwind, Open MPI and PMIx with their plugins...). Nothing here installs
# anything: the bundle travels inside build/, and only what this machine lacks is taken from it.
#   gpu_rt_mpi_works             0 if this machine's mpirun starts a 1-rank job
#   gpu_rt_use_mpi RT            use the bundle's Open MPI (relocated: OPAL_PREFIX, PMIX_PREFIX...)
#   gpu_rt_fill_missing RT F...  for every library that `ldd F` cannot find and RT/lib has, a link
#                                in RT/use/, which goes first on LD_LIBRARY_PATH; sets GPU_RT_USED
#                                (the sonames taken) and GPU_RT_STILL (those the bundle lacks too)
# Threading: none. Exports into the caller's shell (call it directly, not in $(...)).

gpu_rt_mpi_works() {
    command -v mpirun >/dev/null 2>&1 || return 1
    timeout 30 mpirun --allow-run-as-root --oversubscribe -n 1 true >/dev/null 2>&1
}

gpu_rt_use_mpi() {
    local rt=$1 px
    px=$rt/usr/lib/x86_64-linux-gnu/pmix2
    [ -x "$rt/usr/bin/orterun" ] || return 1
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
            for so in $(ldd "$f" 2>/dev/null | awk '/not found/ {print $1}' | sort -u); do
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
