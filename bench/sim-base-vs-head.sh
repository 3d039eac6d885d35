#!/usr/bin/env bash
# The simulator's speed at a base commit against HEAD, in one run on one machine (issue 24):
# builds both release binaries (the base in a temporary git worktree with its own target
# folder, kept in bench/out/base-target between runs), runs each on the scenario REPS times,
# alternating, and prints wall time, events/s, delivered bytes and peak memory (GNU time's
# maximum RSS) per run, then the median ratio. Outputs are byte-compared: a speed-up that
# changes results is reported as such.
#
#   bench/sim-base-vs-head.sh BASE [SCENARIO] [REPS]
#   bench/sim-base-vs-head.sh a982620                      # scenarios/bench/fat-tree-permutation.toml, 3 reps
#
# The base must understand the scenario (`tandem sim check` is run with it first): the
# permutation workload exists from the commit that added this script on.
#
# PAIRED=1 runs each base/HEAD pair at the same time instead, one binary pinned to each of
# the first two cores (swapped from pair to pair), and prints each pair's ratio too: on a
# shared VM whose speed drifts within minutes both binaries then see the same machine (each
# with half the memory bandwidth, so the times are longer than single runs).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/sim-base-vs-head.sh BASE [SCENARIO] [REPS]}
scenario=${2:-scenarios/bench/fat-tree-permutation.toml}
reps=${3:-3}
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (Debian's time package)" >&2; exit 2; }
base_rev=$(git rev-parse --short "$base^{commit}")
head_rev=$(git rev-parse --short HEAD)
out=bench/out/base-vs-head
work=$(mktemp -d /tmp/tandem-base-XXXXXX)
cleanup() { git worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$out" bench/out/base-target

echo "== building HEAD ($head_rev) and $base_rev (release)" >&2
cargo build --release -q -p tandem-cli
cp target/release/tandem "$work/tandem-head"
git worktree add -q --detach "$work/tree" "$base_rev"
(cd "$work/tree" && CARGO_TARGET_DIR="$OLDPWD/bench/out/base-target" cargo build --release -q -p tandem-cli)
cp bench/out/base-target/release/tandem "$work/tandem-base"
"$work/tandem-base" sim check "$scenario" >/dev/null \
  || { echo "$base_rev cannot read $scenario (above); pick a later base" >&2; exit 2; }

run() { # label binary rep [core]
  local dir="$out/$1-$3" pin=()
  [ -n "${4:-}" ] && pin=(taskset -c "$4")
  rm -rf "$dir"
  "${pin[@]}" /usr/bin/time -f "%e %M" -o "$work/time-$1" "$2" sim run "$scenario" --out "$dir" -q >/dev/null
  read -r wall rss < "$work/time-$1"
  python3 - "$dir/summary.json" "$1" "$wall" "$rss" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, rss = float(sys.argv[3]), int(sys.argv[4])
print(f"{sys.argv[2]} {wall:.2f} {s['events'] / wall:.0f} {s['delivered_bytes']} {rss / 1024:.1f} {s['events']}")
PY
}
: > "$work/rows"
paired=${PAIRED:-0}
if [ "$paired" = 1 ]; then
  command -v taskset >/dev/null || { echo "PAIRED=1 needs taskset (util-linux)" >&2; exit 2; }
  [ "$(nproc)" -ge 2 ] || { echo "PAIRED=1 needs two cores" >&2; exit 2; }
fi
for i in $(seq 1 "$reps"); do
  if [ "$paired" = 1 ]; then
    a=$(( i % 2 )); b=$(( 1 - a ))
    run base "$work/tandem-base" "$i" "$a" > "$work/row-base" &
    pid=$!
    run head "$work/tandem-head" "$i" "$b" > "$work/row-head"
    wait "$pid" # a failed base run stops the script, as in the alternating mode
    cat "$work/row-base" "$work/row-head" >> "$work/rows"
  else
    run base "$work/tandem-base" "$i" >> "$work/rows"
    run head "$work/tandem-head" "$i" >> "$work/rows"
  fi
done
same=yes
cmp -s "$out/base-1/summary.json" "$out/head-1/summary.json" || same=no

python3 - "$work/rows" "$base_rev" "$head_rev" "$scenario" "$same" "$paired" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
base, head, scenario, same, paired = sys.argv[2:7]
how = "in pairs at the same time, one per core" if paired == "1" else "alternating"
print(f"{scenario}, {len(rows) // 2} runs each, {how}, on {open('/proc/cpuinfo').read().count('processor')} cores\n")
print("| commit | wall (s) | events/s | delivered bytes | peak RSS (MiB) |")
print("|---|---|---|---|---|")
for label, wall, eps, delivered, rss, _ in rows:
    rev = base if label == "base" else head
    print(f"| {rev} ({label}) | {float(wall):.2f} | {float(eps) / 1e6:.2f} M | {int(delivered):,} | {float(rss):.1f} |")
med = lambda label: statistics.median(float(r[1]) for r in rows if r[0] == label)
print(f"\nmedian wall: {base} {med('base'):.2f} s, {head} {med('head'):.2f} s: HEAD is {med('base') / med('head'):.2f}x the base's speed")
if paired == "1":
    ratios = [float(b[1]) / float(h[1]) for b, h in zip(rows[0::2], rows[1::2])]
    print("per pair: " + ", ".join(f"{r:.2f}x" for r in ratios) + f" (median {statistics.median(ratios):.2f}x)")
print(f"summary.json identical: {same}")
PY
