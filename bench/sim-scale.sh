#!/usr/bin/env bash
# Scale benchmark of the simulator: a k = 16 fat tree (1,024 hosts) with web-search flows at 50%
# load (scenarios/fat-tree-websearch.toml), timed with GNU time for wall time and peak memory.
#
#   bench/sim-scale.sh                 100,000 flows (the issue's size; minutes)
#   bench/sim-scale.sh 10000 100ms     fewer flows and a shorter run
#   bench/sim-scale.sh --by-size [PAIRS]
#                                      events/s of the whole 100,000-flow run against whole
#                                      2,000-flow runs at the same time (see below); default 2
#   bench/sim-scale.sh --same-traffic [PAIRS] [WINDOW]
#                                      per-event speed with 2,000 and with 100,000 flows on the
#                                      same traffic (see below); default 4 pairs, 5 ms
#
# Prints the run's summary and one line: flows, wall time, peak RSS, events/s, link
# transmissions (packets) per wall second. Outputs go to bench/out/scale-<flows>/.
#
# --same-traffic: the scenario's first flows are the same whatever the count (one arrival
# process from the seed), so up to the 2,000th arrival (about 5.4 ms) the 2,000- and the
# 100,000-flow runs execute the same events; what differs is the state held for flows that
# have not started. Both sizes run to WINDOW (plots off) at the same time, one pinned to each
# core, cores swapped every pair (this VM's speed drifts by 2x over minutes, so only runs side
# by side compare); the script checks that both counted the same events and prints each
# pair's events/s, build times (a 1 us run of each size) and the median ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
# --by-size: issue 24's comparison as it reads, whole runs of the scenario as shipped with
# 100,000 and with 2,000 flows. The 100,000-flow run takes one core; the other runs the
# 2,000-flow scenario again and again while it lasts, so that both sizes meet the same hours of
# this VM (whose speed drifts by 2x over minutes); cores swapped every pair. Prints each
# pair's events/s of the large run, the median and range of the small runs beside it, and the
# ratio large / median small.
if [ "${1:-}" = "--by-size" ]; then
  pairs=${2:-2}
  command -v taskset >/dev/null || { echo "--by-size needs taskset (util-linux)" >&2; exit 2; }
  [ "$(nproc)" -ge 2 ] || { echo "--by-size needs two cores" >&2; exit 2; }
  cargo build --release -q -p tandem-cli
  bin=target/release/tandem
  work=bench/out/scale-by-size
  rm -rf "$work" && mkdir -p "$work"
  # one run: flows, core, tag -> "events wall_s" appended to $work/<tag>
  one() {
    local dir="$work/run-$3"
    rm -rf "$dir"
    taskset -c "$2" /usr/bin/time -f "%e" -o "$dir.time" "$bin" sim run scenarios/fat-tree-websearch.toml \
      --out "$dir" -q --set "flows[0].count=$1" > /dev/null
    echo "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$dir/summary.json") $(cat "$dir.time")"
  }
  for i in $(seq 1 "$pairs"); do
    a=$(( i % 2 )); b=$(( 1 - a ))
    one 100000 "$a" "large" > "$work/large-$i" &
    pid=$!
    : > "$work/small-$i"
    while kill -0 "$pid" 2>/dev/null; do
      one 2000 "$b" "small" >> "$work/small-$i"
    done
    wait "$pid"
  done
  python3 - "$work" "$pairs" <<'PY'
import statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
ratios = []
for i in range(1, pairs + 1):
    el, wl = map(float, open(f"{work}/large-{i}").read().split())
    small = [tuple(map(float, l.split())) for l in open(f"{work}/small-{i}") if l.strip()]
    rates = sorted(e / w for e, w in small)
    m = statistics.median(rates)
    r = (el / wl) / m
    ratios.append(r)
    print(f"pair {i}: 100,000 flows {el:.0f} events in {wl:.1f} s ({el / wl / 1e6:.2f} M/s); "
          f"2,000 flows x {len(rates)} meanwhile: median {m / 1e6:.2f} M/s "
          f"({rates[0] / 1e6:.2f}-{rates[-1] / 1e6:.2f}); ratio {r:.3f}")
print(f"events/s, 100,000 / 2,000 flows (whole runs as shipped, side by side): "
      f"{', '.join(f'{r:.3f}' for r in ratios)}")
PY
  exit 0
fi
if [ "${1:-}" = "--same-traffic" ]; then
  pairs=${2:-4}
  window=${3:-5ms}
  command -v taskset >/dev/null || { echo "--same-traffic needs taskset (util-linux)" >&2; exit 2; }
  [ "$(nproc)" -ge 2 ] || { echo "--same-traffic needs two cores" >&2; exit 2; }
  cargo build --release -q -p tandem-cli
  bin=target/release/tandem
  work=bench/out/scale-same
  rm -rf "$work" && mkdir -p "$work"
  # one run: flows, core, duration -> "events wall_s" (wall time from GNU time: the process)
  one() {
    local dir="$work/run-$1-$2"
    rm -rf "$dir"
    taskset -c "$2" /usr/bin/time -f "%e" -o "$dir.time" "$bin" sim run scenarios/fat-tree-websearch.toml \
      --out "$dir" -q --set "flows[0].count=$1" --set "duration=$3" --set output.plots=false > /dev/null
    echo "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$dir/summary.json") $(cat "$dir.time")"
  }
  small_build=$(one 2000 0 1us | cut -d' ' -f2)
  large_build=$(one 100000 0 1us | cut -d' ' -f2)
  : > "$work/rows"
  for i in $(seq 1 "$pairs"); do
    a=$(( i % 2 )); b=$(( 1 - a ))
    one 2000 "$a" "$window" > "$work/small" &
    pid=$!
    one 100000 "$b" "$window" > "$work/large"
    wait "$pid"
    echo "$(cat "$work/small") $(cat "$work/large")" >> "$work/rows"
  done
  python3 - "$work/rows" "$window" "$small_build" "$large_build" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
window, sb, lb = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
print(f"same traffic: the first {window} of scenarios/fat-tree-websearch.toml with 2,000 and with "
      f"100,000 flows, side by side, cores swapped every pair")
print(f"build and set-up alone (a 1 us run): 2,000 flows {sb:.2f} s, 100,000 flows {lb:.2f} s")
ratios, sim_ratios = [], []
for i, (es, ws, el, wl) in enumerate(rows, 1):
    if es != el:
        sys.exit(f"pair {i}: the two runs counted different events ({es:.0f} and {el:.0f}): "
                 f"the window is past the 2,000th arrival")
    r = (el / wl) / (es / ws)
    ratios.append(r)
    # the same without each size's build and set-up time (the 1 us runs above)
    sim_ratios.append((ws - sb) / max(wl - lb, 1e-9))
    print(f"pair {i}: {es:.0f} events; 2,000 flows {ws:.2f} s ({es / ws / 1e6:.2f} M/s), "
          f"100,000 flows {wl:.2f} s ({el / wl / 1e6:.2f} M/s); 100,000 / 2,000 events/s {r:.3f} "
          f"(without set-up {sim_ratios[-1]:.3f})")
print(f"median ratio (100,000 / 2,000 flows, events/s, whole process): {statistics.median(ratios):.3f} "
      f"over {len(ratios)} pairs; without set-up: {statistics.median(sim_ratios):.3f}")
PY
  exit 0
fi
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
