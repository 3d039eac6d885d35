#!/usr/bin/env bash
# Runs validation scenarios over several seeds in ns-3 3.37 and in Tandem (same run) and
# prints, per judged metric, the mean and standard deviation over the seeds on both sides.
# Single runs of incast and web-search scenarios are chaotic (a sub-microsecond shift decides
# which flow wins a freed slot at the bottleneck), so their verdicts are best read against
# this spread.
#
#   bench/ns3-seeds.sh SEEDS NAME...      e.g. bench/ns3-seeds.sh 1..5 websearch incast-16
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/ns3-seeds.sh FIRST..LAST NAME..." >&2; exit 2; }
range="$1"; shift
first="${range%..*}"; last="${range#*..}"
bench/ns3/build.sh >/dev/null
cargo build --release -q -p tandem-cli --bin tandem
cargo build --release -q -p tandem-sim --example ns3_compare
t="${CARGO_TARGET_DIR:-target}/release"
root=bench/out/seeds
for n in "$@"; do
  for s in $(seq "$first" "$last"); do
    d="$root/$n/seed-$s"; mkdir -p "$d"
    "$t/tandem" sim export-ns3 "scenarios/validation/$n.toml" --seed "$s" --out "$d/$n.spec"
    echo "== $n seed $s" >&2
    bench/ns3/build/scenario "$d/$n.spec" > "$d/ns3-$n.json"
    "$t/examples/ns3_compare" "$n" --seed "$s" > "$d/tandem-$n.json"
    "$t/examples/ns3_compare" --compare "$d" "$n" > "$d/table.md" || true
  done
done
python3 - "$root" "$first" "$last" "$@" <<'PY'
import statistics, sys
root, first, last, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
print("| scenario | metric | tandem mean (sd) | ns-3 mean (sd) | difference of means | seeds |")
print("|---|---|---|---|---|---|")
for n in names:
    rows = {}
    for s in range(first, last + 1):
        for line in open(f"{root}/{n}/seed-{s}/table.md"):
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) != 7 or c[0] != n or c[5] == "None" or c[5] == "target":
                continue
            try:
                t, r = float(c[2]), float(c[3])
            except ValueError:
                continue
            rows.setdefault(c[1], []).append((t, r))
    for m, v in rows.items():
        t = [a for a, _ in v]; r = [b for _, b in v]
        sd = lambda x: statistics.stdev(x) if len(x) > 1 else 0.0
        mt, mr = statistics.mean(t), statistics.mean(r)
        diff = f"{(mt - mr) / mr * 100:+.1f}%" if mr else "-"
        print(f"| {n} | {m} | {mt:.4g} ({sd(t):.3g}) | {mr:.4g} ({sd(r):.3g}) | {diff} | {len(v)} |")
PY
