#!/usr/bin/env bash
# TCPU live (issue 19): the CPU path against the Open vSwitch fast path, in one run on this
# machine. Two TCPU labs (labs/tcpu.toml with a private prefix and ports; C raised to 10 Gb/s
# so that the core's pacing does not cap the CPU path below what it can do):
#   fast: k = 16 TCAM entries, so every flow of the measurement is offloaded to the OVS table
#         (the first packets of each flow take the CPU path; the numbers are steady state);
#   cpu:  k = 0, so every packet takes the CPU path (packet_in -> the core -> packet_out).
# For each: ping RTT (200 pings 10 ms apart, the first 10 left out: median and p99), TCP
# throughput (iperf3, 5 s), and packet rate (iperf3 UDP, 64-byte payloads offered at 200k
# packets/s for 5 s: packets received per second and the loss).
# Needs root, Open vSwitch, iperf3, ethtool, iproute2. Every lab is removed on exit.
#
#   bench/tcpu-live-paths.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/live.sh
need_root
build_tandem
work=$(mktemp -d /tmp/tandem-tcpu-paths-XXXXXX)
labs=()
cleanup() {
  for l in "${labs[@]}"; do "$T" lab down "$work/$l.toml" --state "$work/$l" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

lab() { # name k prefix
  sed -e "s/prefix = \"tt\"/prefix = \"$3\"/" -e "s/asic_flow_entries = 16/asic_flow_entries = $2/" \
      -e 's/port_bps = "100Mbps"/port_bps = "10Gbps"/' labs/tcpu.toml > "$work/$1.toml"
  "$T" lab up "$work/$1.toml" --state "$work/$1" >/dev/null
  labs+=("$1")
}

measure() { # name prefix
  local h1="$2-h1" h2="$2-h2"
  # Warm up: ARP learnt, flows seen (and, in the fast lab, offloaded).
  ip netns exec "$h1" ping -c 20 -i 0.01 -q 10.77.0.2 >/dev/null
  local rtt
  rtt=$(ip netns exec "$h1" ping -c 200 -i 0.01 10.77.0.2 | python3 -c '
import re, statistics, sys
v = sorted(float(m.group(1)) for m in re.finditer(r"time=([0-9.]+) ms", sys.stdin.read()))[10:]
v.sort()
print(f"{statistics.median(v) * 1000:.0f} {v[int(0.99 * (len(v) - 1))] * 1000:.0f}")')
  ip netns exec "$h2" iperf3 -s -1 -D -p 5301
  sleep 0.3
  local tcp
  tcp=$(ip netns exec "$h1" iperf3 -c 10.77.0.2 -p 5301 -t 5 -J | python3 -c '
import json, sys
bps = json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]
print("%.0f" % (bps / 1e6))')
  ip netns exec "$h2" iperf3 -s -1 -D -p 5302
  sleep 0.3
  local udp
  udp=$(ip netns exec "$h1" iperf3 -c 10.77.0.2 -p 5302 -u -l 64 -b 102M -t 5 -J | python3 -c '
import json, sys
s = json.load(sys.stdin)["end"]["sum"]
print("%.0f %.1f" % ((s["packets"] - s["lost_packets"]) / s["seconds"], s["lost_percent"]))')
  echo "$1 $rtt $tcp $udp"
}

lab fast 16 tb
lab cpu 0 tc
rows=$(measure "fast path (OVS table)" tb; measure "CPU path (packet_in, core, packet_out)" tc)
status=$("$T" lab status "$work/cpu.toml" --state "$work/cpu" --json | head -1)
echo
echo "TCPU live, $(nproc) cores, $(date -u +%F), commit $(git rev-parse --short HEAD)"
echo
echo "| path | ping RTT median (us) | ping RTT p99 (us) | TCP (Mb/s) | UDP 64 B received (packets/s) | UDP loss (%) |"
echo "|---|---|---|---|---|---|"
echo "$rows" | sed -E 's/^(.*\)) ([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+) ([0-9.]+)$/| \1 | \2 | \3 | \4 | \5 | \6 |/'
echo
echo "cpu lab's switch after the run: $status"
