#!/usr/bin/env bash
# Two Linux hosts in network namespaces joined by one forwarding element, three ways, on the
# same veth setup (checksum/segmentation offloads off on every veth, as `tandem lab` sets them):
#   - a live Axon (`tandem lab up labs/pair.toml`: AF_PACKET, its own DHCP and ARP);
#   - a Linux bridge;
#   - Open vSwitch with the userspace datapath (datapath_type=netdev, ports read with AF_PACKET,
#     the NORMAL action), from private run/db directories.
# Measures iperf3 TCP throughput (host 2 -> host 1), 64-byte UDP frames per second delivered
# (iperf3 -u -l 18 -b 0), and ping RTT; prints a markdown table. Needs root, iproute2, iperf3,
# ethtool, iputils-ping, isc-dhcp-client and openvswitch-switch. Removes what it made on exit.
#
# Usage: bench/axon-vs-bridge.sh [SECONDS per measurement, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-5}
cargo build --release -q -p tandem-cli
TANDEM=$PWD/target/release/tandem
RUN=$(mktemp -d /tmp/tandem-axon-bench-XXXXXX)
NS=(tb-h1 tb-h2 tb-sw)
cleanup() {
  "$TANDEM" lab down labs/pair.toml --state "$RUN/lab" 2>/dev/null || true
  for p in "$RUN"/ovs/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
  for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$RUN"
}
trap cleanup EXIT

offloads_off() { ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null; }

# host namespaces tb-h1/tb-h2 wired to tb-sw (ports s1, s2), static 10.9.0.1/.2
two_hosts() {
  for n in "${NS[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
  for i in 1 2; do
    ip link add tbh$i type veth peer name tbs$i
    ip link set tbh$i netns tb-h$i; ip -n tb-h$i link set tbh$i name eth0
    ip link set tbs$i netns tb-sw; ip -n tb-sw link set tbs$i name s$i
    offloads_off tb-h$i eth0; offloads_off tb-sw s$i
    ip -n tb-h$i addr add 10.9.0.$i/24 dev eth0
    ip -n tb-h$i link set eth0 up; ip -n tb-sw link set s$i up
  done
}

declare -A TCP UDP RTT
measure() { # name host1-ns host2-ns ip-of-host1
  local name=$1 h1=$2 h2=$3 ip1=$4
  ip netns exec "$h2" ping -c 3 -W 1 "$ip1" >/dev/null  # ARP, routes
  ip netns exec "$h1" iperf3 -s -D -p 5301 --pidfile "$RUN/iperf.pid" >/dev/null
  sleep 0.3
  TCP[$name]=$(ip netns exec "$h2" iperf3 -c "$ip1" -p 5301 -t "$SECS" -J | python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))')
  UDP[$name]=$(ip netns exec "$h2" iperf3 -c "$ip1" -p 5301 -t "$SECS" -u -l 18 -b 0 -J | python3 -c '
import json, sys
s = json.load(sys.stdin)["end"]["sum"]
print("%.0f" % ((s["packets"] - s["lost_packets"]) / s["seconds"]))')
  kill "$(cat "$RUN/iperf.pid")" 2>/dev/null || true
  RTT[$name]=$(ip netns exec "$h2" ping -q -c 200 -i 0.005 "$ip1" | awk -F'/' '/^rtt/ { print $5 }')
  NAMES+=("$name")
}
NAMES=()

# 1. Axon
"$TANDEM" lab up labs/pair.toml --state "$RUN/lab" >"$RUN/lab.ips"
ip1=$(awk 'NR == 1 { print $2 }' "$RUN/lab.ips")
measure "Axon (tandem axon run, AF_PACKET)" tp-h1 tp-h2 "$ip1"
"$TANDEM" lab down labs/pair.toml --state "$RUN/lab"

# 2. Linux bridge
two_hosts
ip -n tb-sw link add br0 type bridge
for i in 1 2; do ip -n tb-sw link set s$i master br0; done
ip -n tb-sw link set br0 up
measure "Linux bridge" tb-h1 tb-h2 10.9.0.1
for n in "${NS[@]}"; do ip netns del "$n"; done

# 3. Open vSwitch, userspace datapath
if command -v ovs-vswitchd >/dev/null; then
  two_hosts
  O=$RUN/ovs; mkdir -p "$O"
  export OVS_RUNDIR=$O OVS_LOGDIR=$O OVS_DBDIR=$O OVS_SYSCONFDIR=$O
  ovsdb-tool create "$O/conf.db" /usr/share/openvswitch/vswitch.ovsschema
  ip netns exec tb-sw ovsdb-server "$O/conf.db" --remote=punix:"$O/db.sock" --pidfile="$O/ovsdb-server.pid" --detach --log-file="$O/ovsdb.log"
  ovs-vsctl --db=unix:"$O/db.sock" --no-wait init
  ip netns exec tb-sw ovs-vswitchd unix:"$O/db.sock" --pidfile="$O/ovs-vswitchd.pid" --detach --log-file="$O/vswitchd.log" --disable-system --disable-system-route
  ovs-vsctl --db=unix:"$O/db.sock" add-br br0 -- set bridge br0 datapath_type=netdev -- add-port br0 s1 -- add-port br0 s2
  sleep 1
  measure "Open vSwitch 3.1, userspace datapath" tb-h1 tb-h2 10.9.0.1
else
  echo "openvswitch-switch not installed: Open vSwitch skipped" >&2
fi

echo
echo "Two hosts, one forwarding element, veth pairs with offloads off; ${SECS} s per measurement"
echo
echo "| path | iperf3 TCP (Mb/s) | 64-byte UDP delivered (frames/s) | ping RTT (ms) |"
echo "|---|---|---|---|"
for n in "${NAMES[@]}"; do
  echo "| $n | ${TCP[$n]} | ${UDP[$n]} | ${RTT[$n]} |"
done
