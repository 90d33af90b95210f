#!/usr/bin/env bats
# launcher_netns.bats — a real two-machine run: two network namespaces joined by a veth pair stand
# in for two hosts (nodea 10.77.N.1, nodeb 10.77.N.2; the addresses exist only inside those
# namespaces, which this file creates and removes; no traffic goes anywhere else). mpirun runs in
# nodea; its remote agent (--mca plm_rsh_agent) enters nodeb's namespace instead of using ssh,
# with its own hostname (and, where asked, a private /tmp view so the run directory is NOT shared).
# Properties: a hostfile spreads 2 ranks per machine with the right rank/local rank/world size;
# a rank failing on the remote machine is named with its host even when that machine cannot see the
# launcher's run directory; the bundled trainer on 4 ranks (2 per machine, batch B, sharded) ends
# with bit-identical parameters on every rank, equal to 1 rank with batch 4B (needs the sync engine);
# the same without mpirun, in the per-machine form (one launcher per machine; the ranks meet
# through NCCL's bootstrap at nodea's address: hostnccl over TCP across the veth pair).
# Skipped where namespaces cannot be made (not root, no CAP_NET_ADMIN, no iproute2/unshare).

# shellcheck disable=SC2016,SC1007,SC2154  # literal \$ in single quotes and VAR= cmd are on purpose
load helpers

setup_file() {
  local id=$(( ($$ % 200) + 20 ))
  export NSA="asr-a-$$" NSB="asr-b-$$" NET="10.77.$id" WORK
  WORK=$(mktemp -d)
  : >"$WORK/skip"
  if ! command -v ip >/dev/null || ! command -v unshare >/dev/null || ! command -v mpirun >/dev/null; then
    echo "ip, unshare or mpirun missing" >"$WORK/skip"; return 0
  fi
  if ! ip netns add "$NSA" 2>"$WORK/err"; then echo "cannot create network namespaces: $(cat "$WORK/err")" >"$WORK/skip"; return 0; fi
  if ! { ip netns add "$NSB" &&
         ip link add "asrv$$a" type veth peer name "asrv$$b" &&
         ip link set "asrv$$a" netns "$NSA" && ip link set "asrv$$b" netns "$NSB" &&
         ip -n "$NSA" addr add "$NET.1/24" dev "asrv$$a" && ip -n "$NSB" addr add "$NET.2/24" dev "asrv$$b" &&
         ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up &&
         ip -n "$NSA" link set "asrv$$a" up && ip -n "$NSB" link set "asrv$$b" up; } 2>"$WORK/err"; then
    echo "cannot set up the veth pair: $(cat "$WORK/err")" >"$WORK/skip"; return 0
  fi
  # The remote agent: "ssh HOST COMMAND..." becomes "enter nodeb's namespace, run COMMAND".
  cat >"$WORK/agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
  $NET.2|nodeb) ns=$NSB ;;
  *) echo "agent: unknown host \$host" >&2; exit 255 ;;
esac
if [ -n "\${ASR_TEST_HIDE:-}" ]; then
  exec ip netns exec "\$ns" unshare --uts --mount sh -c "mount -t tmpfs none '\$ASR_TEST_HIDE' && hostname nodeb && \$*"
fi
exec ip netns exec "\$ns" unshare --uts sh -c "hostname nodeb && \$*"
EOF
  chmod +x "$WORK/agent"
  printf '%s.1 slots=2\n%s.2 slots=2\n' "$NET" "$NET" >"$WORK/hostfile"
}

teardown_file() {
  ip netns del "$NSA" 2>/dev/null
  ip netns del "$NSB" 2>/dev/null
  rm -rf "$WORK"
  true
}

setup() {
  MARK="asr-netns-$$-$RANDOM"    # set first: teardown runs even when the skip below fires
  [ ! -s "$WORK/skip" ] || skip "$(cat "$WORK/skip")"
  unset SLURM_JOB_ID
}
teardown() {
  local p
  [[ ${MARK:-} == asr-netns-* ]] || return 0    # never pgrep an empty pattern (it matches all)
  for p in $(pgrep -f "$MARK" || true); do kill -KILL "$p" 2>/dev/null; done
  true
}

# on_nodea ARGS...: accelerate-run on "machine" nodea with the two-machine hostfile.
on_nodea() {
  run ip netns exec "$NSA" unshare --uts sh -c 'hostname nodea && exec "$@"' sh \
    "$A" --hostfile "$WORK/hostfile" --mca plm_rsh_agent "$WORK/agent" \
    --mca oob_tcp_if_include "$NET.0/24" --mca btl_tcp_if_include "$NET.0/24" "$@"
}

@test "hostfile: 2 ranks per machine, ranks 0-1 on nodea and 2-3 on nodeb" {
  on_nodea --no-preload -n 4 -- bash -c 'echo "host=$(hostname) rank={rank} local={local_rank} world={world_size}"'
  status_is 0
  contains "[rank 0] host=nodea rank=0 local=0 world=4"
  contains "[rank 1] host=nodea rank=1 local=1 world=4"
  contains "[rank 2] host=nodeb rank=2 local=0 world=4"
  contains "[rank 3] host=nodeb rank=3 local=1 world=4"
}

@test "a rank failing on the remote machine is named with its host (run directory not shared there)" {
  mkdir -p "$WORK/tmp"
  start=$SECONDS
  TMPDIR=$WORK/tmp ASR_TEST_HIDE=$WORK/tmp on_nodea --no-preload -n 4 -- bash -c \
    "echo up {rank}; if [ {rank} = 3 ]; then sleep 0.5; echo 'rank three fails'; kill -SEGV \$\$; fi; sleep 100 # $MARK"
  elapsed=$((SECONDS - start))
  status_is 139
  contains "rank 3 failed first: signal SIGSEGV (host nodeb)"
  contains "    | rank three fails"
  [ "$elapsed" -lt 10 ] || { echo "took ${elapsed}s"; show; false; }
}

@test "trainer: 4 ranks on 2 machines (batch B, sharded) == 1 rank (batch 4B); ranks bit-identical" {
  need_trainer
  need_shim
  need_policy_tool
  local policy=$TOP/examples/mlp.yaml steps=5 b=4
  cd "$WORK" || return 1
  run "$A" --cpu -n 1 --policy "$policy" -- "$TRAINER" --steps $steps --batch $((4 * b)) --seed 5
  status_is 0
  ref=$(awk '$2 == "0]" && $3 == "checksum" {print $4}' <<<"$output")
  [ -n "$ref" ] || { echo "1-rank run printed no checksum"; show; false; }

  on_nodea --cpu -n 4 --policy "$policy" -- "$TRAINER" --steps $steps --batch $b --seed 5 \
    --shard-rank '{rank}' --shard-count '{world_size}'
  status_is 0
  sums=$(awk '$3 == "checksum" {sub(/\]$/, "", $2); print "rank", $2, $4, $5}' <<<"$output" | sort)
  echo "1 rank (batch $((4 * b))): $ref"
  echo "4 ranks (batch $b each):"; echo "$sums"
  [ "$(wc -l <<<"$sums")" -eq 4 ] || { echo "expected 4 checksums"; show; false; }
  [ "$(awk '{print $4}' <<<"$sums" | sort -u | wc -l)" -eq 1 ] || { echo "ranks hold different parameters (hashes differ)"; false; }
  v=$(awk 'NR == 1 {print $3}' <<<"$sums")
  awk -v a="$ref" -v b="$v" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); if ((b < 0 ? -b : b) > m) m = (b < 0 ? -b : b)
                                     exit !(d <= 1e-5 * m) }' \
    || { echo "4 ranks differ from 1 rank beyond rtol 1e-5: $v vs $ref"; false; }
}

@test "per-machine form across the two machines (no mpirun): 2 ranks each meet through NCCL at nodea's address" {
  need_trainer
  need_shim
  need_file "$BUILD/tests/hostnccl/libnccl.so.2" hostnccl
  local policy=$TOP/examples/mlp.yaml steps=5 b=4 port=$(t_free_port 2)
  cd "$WORK" || return 1
  run "$A" --cpu -n 1 --policy "$policy" -- "$TRAINER" --steps $steps --batch $((4 * b)) --seed 5
  status_is 0
  ref=$(awk '$2 == "0]" && $3 == "checksum" {print $4}' <<<"$output")
  common=(--cpu -n 4 --num-machines 2 --main-process-ip "$NET.1" --main-process-port "$port" --job-id "ns-$port" --policy "$policy"
          -- "$TRAINER" --steps $steps --batch $b --seed 5 --shard-rank '{rank}' --shard-count '{world_size}')
  timeout 120 ip netns exec "$NSB" "$A" --machine-rank 1 "${common[@]}" >nodeb.out 2>&1 &
  nb=$!
  run timeout 120 ip netns exec "$NSA" "$A" --machine-rank 0 "${common[@]}"
  rcb=0; wait "$nb" || rcb=$?
  status_is 0
  [ "$rcb" -eq 0 ] || { echo "machine 1 (nodeb): exit $rcb"; cat nodeb.out; false; }
  sums=$( { printf '%s\n' "$output"; cat nodeb.out; } | awk '$3 == "checksum" {sub(/\]$/, "", $2); print "rank", $2, $4, $5}' | sort)
  echo "1 rank (batch $((4 * b))): $ref"; echo "4 ranks on 2 machines:"; echo "$sums"
  [ "$(wc -l <<<"$sums")" -eq 4 ] || { echo "expected 4 checksums"; show; cat nodeb.out; false; }
  [ "$(awk '{print $4}' <<<"$sums" | sort -u | wc -l)" -eq 1 ] || { echo "ranks hold different parameters"; false; }
  v=$(awk 'NR == 1 {print $3}' <<<"$sums")
  awk -v a="$ref" -v b="$v" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); if ((b < 0 ? -b : b) > m) m = (b < 0 ? -b : b)
                                     exit !(d <= 1e-5 * m) }' \
    || { echo "4 ranks differ from 1 rank beyond rtol 1e-5: $v vs $ref"; false; }
}
