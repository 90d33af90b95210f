#!/usr/bin/env bash
# Property: hostnccl, the NCCL test double, is as strict as NCCL about pairing: the k-th
# collective of every rank must be the same kind, count and type. Ranks that differ get
# ncclInvalidUsage (ncclCommGetAsyncError) with one line naming both sides, and their buffers are
# untouched — before, the TCP mode paired calls of different counts whenever the bytes added up
# (2 x 2 floats on rank 0 against 1 x 4 floats on rank 1 "reduced" fine). Control: the same calls
# on both ranks reduce correctly (sum 3 then 6). Two processes, NCCL_COMM_ID (TCP mode).
. "$(dirname "$0")/../lib.sh"
B=$T_BUILD/tests/hostnccl
t_need "$B/test_strict" "$B/libnccl.so.2" "$T_HOSTCUDA_DIR/libcuda.so.1"
t_tmp

# pair MODE: both ranks; their "result" lines in $T_TMP/r0 and r1, stderr in e0 and e1
pair() {
    local port=$(t_free_port 2) r pids=()
    for r in 0 1; do
        NCCL_COMM_ID=127.0.0.1:$port LD_LIBRARY_PATH="$B:$T_HOSTCUDA_DIR" timeout -k 5 60 \
            "$B/test_strict" "$r" "$1" >"$T_TMP/r$r" 2>"$T_TMP/e$r" &
        pids[r]=$!
    done
    for r in 0 1; do wait "${pids[r]}" || echo "# rank $r exited $?"; done
}
pair same
got="$(cat "$T_TMP/r0" "$T_TMP/r1" | tr '\n' ';')"
[ "$got" = "result 0 0 6;result 1 0 6;" ]
t_case $? "same calls on both ranks: reduced (got '$got', want 'result 0 0 6;result 1 0 6;')"
[ "$T_FAILED" -eq 0 ] || t_show "$T_TMP/e0" "$T_TMP/e1"

for mode in count type; do
    pair "$mode"
    ok=0
    for r in 0 1; do
        read -r _ _ async v <"$T_TMP/r$r" || { ok=1; continue; }
        # ncclInvalidUsage = 5; the buffer still holds the rank's own value (r + 1)
        [ "$async" = 5 ] && [ "$v" = $((r + 1)) ] || ok=1
    done
    grep -q "hostnccl: rank 0: collective 0 does not match across ranks" "$T_TMP/e0" || ok=1
    t_case $ok "$mode differs: both ranks get ncclInvalidUsage, buffers untouched (rank 0: $(cat "$T_TMP/r0"); rank 1: $(cat "$T_TMP/r1"); $(head -n 1 "$T_TMP/e0"))"
    [ $ok -eq 0 ] || t_show "$T_TMP/r0" "$T_TMP/r1" "$T_TMP/e0" "$T_TMP/e1"
done
t_done
