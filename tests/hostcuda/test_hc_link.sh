#!/usr/bin/env bash
# Property: hostcuda's JIT linker (cuLinkCreate/AddData/AddFile/Complete/Destroy) links PTX units
# as a device link does: declarations take another unit's .visible definition, each unit keeps its
# internal names (two `bias` functions with other bodies give other numbers, so the run's values
# show which one each call reached), the linked image loads and runs; an undefined variable, a
# name defined .visible twice and a unit that does not parse are CUDA_ERROR_INVALID_PTX with the
# reason in the error log (unit and line); a cubin is NOT_SUPPORTED; stale handles are refused.
# Control: unit A alone must fail to link (the run's success is not the linker ignoring A's needs).
. "$(dirname "$0")/../lib.sh"
H=$T_HOSTCUDA_DIR
t_need "$H/test_hc_link" "$H/libcuda.so.1"
t_tmp
LD_LIBRARY_PATH=$H HOSTCUDA_EXEC=ptx timeout 60 "$H/test_hc_link" >"$T_TMP/out" 2>&1
rc=$?
grep -q "^test_hc_link: all checks passed$" "$T_TMP/out"
t_case $(( rc == 0 && $? == 0 ? 0 : 1 )) "cuLink*: two units link, load and run; link errors named; bad input refused" ||
    t_show "$T_TMP/out"
grep -q "^hostcuda: cuLink: ptx: undefined reference to variable counter (declared .extern in unit 1; no unit defines it)$" "$T_TMP/out"
t_case $? "an undefined reference is one hostcuda: line naming the variable and its unit" || t_show "$T_TMP/out"
t_done
