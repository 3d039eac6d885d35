#!/usr/bin/env bash
# A partitioned run's speed against threads (issue 24): runs the release binary on the
# scenario without `threads` (one simulation, ties in scheduling order) and with --threads N
# for each N given, REPS times each, alternating, and prints wall time, events/s, delivered
# bytes and peak memory (GNU time's maximum RSS) per run, then the median speed-up of each N
# over --threads 1. The partitioned runs' outputs are byte-compared with --threads 1's (they
# must be identical; a difference fails the script).
#
#   bench/sim-threads.sh [SCENARIO] [REPS] [N...]
#   bench/sim-threads.sh                                  # fat-tree-permutation, 3 reps, N = 1 2
#   bench/sim-threads.sh scenarios/fat-tree-websearch.toml 1 1 2 4
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-scenarios/bench/fat-tree-permutation.toml}
reps=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (Debian's time package)" >&2; exit 2; }
out=bench/out/threads
work=$(mktemp -d /tmp/tandem-threads-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cargo build --release -q -p tandem-cli
cp target/release/tandem "$work/tandem"

run() { # label rep [args...]
  local label=$1 rep=$2; shift 2
  local dir="$out/$label-$rep"
  rm -rf "$dir"
  /usr/bin/time -f "%e %M" -o "$work/time" "$work/tandem" sim run "$scenario" --out "$dir" -q "$@" >/dev/null
  read -r wall rss < "$work/time"
  python3 - "$dir/summary.json" "$label" "$wall" "$rss" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, rss = float(sys.argv[3]), int(sys.argv[4])
print(f"{sys.argv[2]} {wall:.2f} {s['events'] / wall:.0f} {s['delivered_bytes']} {rss / 1024:.1f} {s['events']}")
PY
}
: > "$work/rows"
for i in $(seq 1 "$reps"); do
  run sequential "$i" >> "$work/rows"
  for n in "${threads[@]}"; do
    run "threads-$n" "$i" --threads "$n" >> "$work/rows"
  done
done
same=yes
for n in "${threads[@]}"; do
  for f in flows.csv drops.csv queues.csv summary.json; do
    if [ -f "$out/threads-${threads[0]}-1/$f" ] || [ -f "$out/threads-$n-1/$f" ]; then
      cmp -s "$out/threads-${threads[0]}-1/$f" "$out/threads-$n-1/$f" || { same=no; echo "$f differs: threads ${threads[0]} and $n" >&2; }
    fi
  done
done

python3 - "$work/rows" "$scenario" "$same" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
scenario, same = sys.argv[2:4]
labels = list(dict.fromkeys(r[0] for r in rows))
print(f"{scenario}, {len(rows) // len(labels)} runs each, alternating, on {open('/proc/cpuinfo').read().count('processor')} cores\n")
print("| run | wall (s) | events/s | events | delivered bytes | peak RSS (MiB) |")
print("|---|---|---|---|---|---|")
for label, wall, eps, delivered, rss, events in rows:
    print(f"| {label} | {float(wall):.2f} | {float(eps) / 1e6:.2f} M | {int(events):,} | {int(delivered):,} | {float(rss):.1f} |")
med = {l: statistics.median(float(r[1]) for r in rows if r[0] == l) for l in labels}
one = med.get("threads-1")
for l in labels:
    extra = f", {one / med[l]:.2f}x threads-1's speed" if one else ""
    print(f"median wall {l}: {med[l]:.2f} s{extra}")
print(f"partitioned outputs identical for every N: {same}")
sys.exit(0 if same == "yes" else 1)
PY
