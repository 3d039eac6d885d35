#!/usr/bin/env bash
# Scale benchmark of the simulator: a k = 16 fat tree (1,024 hosts) with web-search flows at 50%
# load (scenarios/fat-tree-websearch.toml), timed with GNU time for wall time and peak memory.
#
#   bench/sim-scale.sh                 100,000 flows (the issue's size; minutes)
#   bench/sim-scale.sh 10000 100ms     fewer flows and a shorter run
#
# Prints the run's summary and one line: flows, wall time, peak RSS, events/s, link
# transmissions (packets) per wall second. Outputs go to bench/out/scale-<flows>/.
set -euo pipefail
cd "$(dirname "$0")/.."
flows=${1:-100000}
duration=${2:-500ms}
out="bench/out/scale-$flows"
mkdir -p bench/out
cargo build --release -q -p tandem-cli
/usr/bin/time -f "%e %M" -o bench/out/scale.time \
  target/release/tandem sim run scenarios/fat-tree-websearch.toml --out "$out" -q \
  --set "flows[0].count=$flows" --set "duration=$duration" | tee bench/out/scale.txt
read -r wall rss_kib < bench/out/scale.time
python3 - "$out/summary.json" "$wall" "$rss_kib" "$flows" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, rss, flows = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"scale: {flows} flows ({s['completed']} completed in {s['duration_s']} s simulated), "
      f"wall {wall:.1f} s, peak RSS {rss / 1024:.0f} MiB, {s['events'] / wall / 1e6:.2f} M events/s, "
      f"{s['link_transmissions'] / wall / 1e6:.2f} M link transmissions/s, "
      f"peak {s['peak_packets_in_flight']} packets in flight")
PY
