#!/usr/bin/env bash
# Two nodes in two network namespaces joined by a veth pair (10.77.0.1 and 10.77.0.2), each
# running the trainer's own launcher with distributed.nnodes=2:
#   1. the two nodes train as one process with the whole batch does (losses to 1e-5);
#   2. node 0's rendezvous store listens on distributed.master_addr only, and says so;
#   3. the link is cut mid-run: both nodes end within distributed.timeout_s + a few seconds,
#      node 0 naming rank 1, node 1 saying it cannot reach node 0 at the store's address.
# Usage: multinode_netns.sh TRAINER WORKDIR. Needs root and `ip netns`; skipped (77) elsewhere.
set -uo pipefail
trainer=$(realpath "$1")
work=$2

command -v jq >/dev/null || { echo "skipping: jq is not installed"; exit 77; }
command -v ip >/dev/null || { echo "skipping: ip (iproute2) is not installed"; exit 77; }
ns0=tb-node0-$$
ns1=tb-node1-$$
veth0=tbv$$a
veth1=tbv$$b
cleanup() {
  ip netns del "$ns0" 2>/dev/null
  ip netns del "$ns1" 2>/dev/null
}
trap cleanup EXIT
if ! ip netns add "$ns0" 2>/dev/null || ! ip netns add "$ns1" 2>/dev/null; then
  echo "skipping: cannot create network namespaces here (needs root and CAP_SYS_ADMIN)"
  exit 77
fi
if ! { ip link add "$veth0" type veth peer name "$veth1" &&
       ip link set "$veth0" netns "$ns0" && ip link set "$veth1" netns "$ns1" &&
       ip -n "$ns0" addr add 10.77.0.1/24 dev "$veth0" && ip -n "$ns1" addr add 10.77.0.2/24 dev "$veth1" &&
       ip -n "$ns0" link set "$veth0" up && ip -n "$ns1" link set "$veth1" up &&
       ip -n "$ns0" link set lo up && ip -n "$ns1" link set lo up; } 2>/dev/null; then
  echo "skipping: cannot join the namespaces with a veth pair here"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
timeout_s=10
tiny=(--preset demo --set data.image_size=16 --set model.init_dim=8 --set model.max_dim=16
      --set train.log_every=1 --set train.valid_every=0 --set train.sample_every=0 --set train.threads=1
      --set train.ema_start_step=0 --set train.checkpoint_every=0 --set train.reference_codec=false)
# node N PORT STEPS NAME: starts node N's launcher in its namespace, in the background.
node() {
  local n=$1 port=$2 steps=$3 name=$4 ns veth
  if [[ $n == 0 ]]; then ns=$ns0 veth=$veth0; else ns=$ns1 veth=$veth1; fi
  GLOO_SOCKET_IFNAME=$veth ip netns exec "$ns" "$trainer" train "${tiny[@]}" \
    --set distributed.strategy=ddp --set distributed.nnodes=2 --set distributed.nproc_per_node=1 \
    --set distributed.node_rank="$n" --set distributed.master_addr=10.77.0.1 \
    --set distributed.master_port="$port" --set distributed.timeout_s=$timeout_s \
    --set train.batch_size=2 --set train.max_steps="$steps" --run-dir "$name" >"$name.out" 2>"$name.err" &
}
seconds_since() { echo "$(date +%s.%N) - $1" | bc; }

# 1. Two nodes with half the batch each against one process with the whole batch.
"$trainer" train "${tiny[@]}" --set train.batch_size=4 --set train.max_steps=4 --run-dir one \
  >one.out 2>one.err
check "one process trains" "[ $? -eq 0 ]"
node 0 29631 4 two0; p0=$!
node 1 29631 4 two1; p1=$!
wait $p0; code0=$?
wait $p1; code1=$?
check "node 0 completes" "[ $code0 -eq 0 ]"
check "node 1 completes" "[ $code1 -eq 0 ]"
worst=$(paste <(jq -r '."train/loss"' one/metrics.jsonl) <(jq -r '."train/loss"' two0/metrics.jsonl) |
        awk 'NF == 2 { d = ($1 - $2) / $1; if (d < 0) d = -d; if (d > w) w = d; n++ }
             END { if (n != 4) print "missing"; else printf "%.3g", w }')
echo "  largest relative difference of the 4 losses: $worst"
check "the losses of two nodes equal one process's (relative 1e-5)" \
  "[[ $worst != missing ]] && awk 'BEGIN { exit !($worst < 1e-5) }'"

# 2 and 3. A long run: where the store listens, then the link cut.
node 0 29632 100000 cut0; p0=$!
node 1 29632 100000 cut1; p1=$!
for _ in $(seq 240); do
  [[ -s cut0/metrics.jsonl && $(wc -l <cut0/metrics.jsonl) -ge 3 ]] && break
  sleep 0.5
done
check "the two nodes train" "[[ -s cut0/metrics.jsonl ]]"
# /proc/net/tcp as node 0 sees it: local address 10.77.0.1 is 01004D0A, port 29632 is 73C0.
listening=$(ip netns exec "$ns0" cat /proc/net/tcp /proc/net/tcp6 | awk '$4 == "0A" { print $2 }' | grep ':73C0$')
echo "  listening on port 29632 in node 0: $listening"
check "node 0's store listens on 10.77.0.1 only" "[[ '$listening' == 01004D0A:73C0 ]]"
check "node 0's log says where the store listens" \
  "grep -q 'the rendezvous store listens on 10.77.0.1:29632' cut0.err"
cut=$(date +%s.%N)
ip -n "$ns0" link set "$veth0" down
wait $p0; code0=$?; took0=$(seconds_since "$cut")
wait $p1; code1=$?; took1=$(seconds_since "$cut")
echo "  after the cut: node 0 ended in $took0 s, node 1 in $took1 s (timeout_s $timeout_s)"
grep -h 'error' cut0.out cut1.err | sed 's/^/  /'
check "node 0 fails" "[ $code0 -eq 1 ]"
check "node 1 fails" "[ $code1 -eq 1 ]"
check "node 0 ends within timeout_s + 6 s" "awk 'BEGIN { exit !($took0 < $timeout_s + 6) }'"
check "node 1 ends within timeout_s + 6 s" "awk 'BEGIN { exit !($took1 < $timeout_s + 6) }'"
check "node 0 names rank 1" \
  "grep '\"type\":\"error\"' cut0.out | jq -e '.code == \"rank_failed\" and (.message | contains(\"rank 1 stopped responding\"))' >/dev/null"
check "node 1 says it cannot reach node 0 at the store's address" \
  "grep -q 'cannot reach node 0 at 10.77.0.1:29632' cut1.err"
check "node 1 does not call the live store gone" "! grep -q 'is gone\\|is unreachable' cut1.err"
exit $fail
