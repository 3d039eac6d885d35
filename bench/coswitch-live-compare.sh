#!/usr/bin/env bash
# CoSwitch live (issue 20): the paper's comparison (Figs. 8 and 9) at lab scale, in one run on
# this machine. The same traffic through the CoSwitch lab (labs/coswitch.toml, prefix "cb")
# under three policies:
#   vswitch only:  the threshold pinned at 65,536 packets, so no flow is ever an elephant;
#   physical only: the threshold pinned at 1, so every flow gets a ToR entry;
#   CoSwitch:      Flow-Prediction moves the threshold (the lab's settings).
# Traffic, 10 s: an iperf3 elephant (200 Mb/s) from a host of server 1 to one of server 2, and
# 100 short TCP connections a second (200 bytes each way) from another host of server 1 to one
# of server 2. Every second `tandem lab status --json` is read. Printed per policy: the busiest
# server's load (packets its vswitch's unmarked entries carried per second, over the lab's
# nominal budget of 2,000 packets/s: the analogue of Fig. 8's server core), the peak and final
# ToR entries (Fig. 9), the marked flows, the ToR's refusals, and the threshold at the end.
# Needs root, Open vSwitch, iperf3, python3, ethtool, iproute2. Every lab is removed on exit.
#
#   bench/coswitch-live-compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/live.sh
need_root
build_tandem
lab_workdir coswitch-compare
run() { # name extra-[coswitch]-lines
  # A pinned threshold replaces the lab's first one (the [coswitch] table ends the file).
  if [ -n "$2" ]; then
    sed -e 's/prefix = "cs"/prefix = "cb"/' -e '/^threshold = /d' labs/coswitch.toml > "$work/lab.toml"
  else
    sed -e 's/prefix = "cs"/prefix = "cb"/' labs/coswitch.toml > "$work/lab.toml"
  fi
  printf '%b' "$2" >> "$work/lab.toml"
  "$T" lab up "$work/lab.toml" --state "$work/state" >/dev/null 2>&1
  bg_in cb 3 iperf3 -s -1 -p 5201
  bg_in cb 4 python3 -c "$ECHO_SERVER" 10.78.0.4 9000 200
  sleep 1
  ip netns exec cb-h1 iperf3 -c 10.78.0.3 -p 5201 -t 10 -b 200M >/dev/null 2>&1 & local e=$!
  ip netns exec cb-h2 python3 -c "$SHORT_CONNECTIONS" 10.78.0.4 9000 200 10 100 >/dev/null 2>&1 & local m=$!
  : > "$work/samples"
  for _ in $(seq 1 11); do
    sleep 1
    "$T" lab status "$work/lab.toml" --state "$work/state" --json > "$work/status" 2>/dev/null || continue
    { date +%s.%N; cat "$work/status"; } >> "$work/samples"
  done
  wait "$e" "$m" || true
  stop_bg
  "$T" lab down "$work/lab.toml" --state "$work/state" >/dev/null 2>&1
  python3 - "$1" "$work/samples" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
samples, t = [], None
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        t = float(line); samples.append((t, {})); continue
    o = json.loads(line)
    samples[-1][1][o["element"]] = o
first, last = samples[0], samples[-1]
secs = last[0] - first[0]
load = max((last[1][v]["packets"] - first[1][v]["packets"]) / secs / 2000 for v in ("cbv1", "cbv2"))
tor = [s[1]["cbtor"]["table_entries"] for s in samples]
end = last[1]["cbtor"]
print(f"| {name} | {load:.0%} | {max(tor)} | {end['table_entries']} | {end['marked_flows']} | {end['tor_full']} | {end['threshold_packets']} |")
PY
}

rows=$(
  run "vswitch only (threshold pinned at 65,536)" 'threshold = 65536\nmin_threshold = 65536\nmax_threshold = 65536\n'
  run "physical only (threshold pinned at 1)" 'threshold = 1\nmin_threshold = 1\nmax_threshold = 1\n'
  run "CoSwitch (Flow-Prediction)" ''
)
echo
echo "CoSwitch live, 2 servers x 2 hosts, ToR of 200 entries, 10 s of traffic per policy, commit $(git rev-parse --short HEAD)"
echo
echo "| policy | busiest server's load (unmarked packets/s over 2,000) | ToR entries, peak | ToR entries, end | flows marked | refused by the full ToR | threshold at the end |"
echo "|---|---|---|---|---|---|---|"
echo "$rows"
