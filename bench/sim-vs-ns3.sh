#!/usr/bin/env bash
# Tandem's simulator against ns-3 3.37 on the three validation scenarios of bench/ns3/, in the
# same run on the same machine, with the same parameters. Prints one side-by-side markdown table
# and writes it to bench/out/sim-vs-ns3.md.
#
#   bench/sim-vs-ns3.sh            full: bulk 10 s, incast 100 rounds, dctcp/newreno 10 s
#   bench/sim-vs-ns3.sh --quick    short versions of the same
#
# SKIP_NS3=1 reuses the ns-3 results already in bench/ns3/out/ (they do not change between
# runs; only the wall times do).
#
# ns-3 runs with TcpLinuxReno (--linux-reno=1): slow start counts bytes as Linux and Tandem do;
# ns-3's TcpNewReno grows one MSS per ACK instead. Needs libns3-dev (see bench/ns3/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
q=""; [ "$mode" = "--quick" ] && q="--quick"
mkdir -p bench/out
if [ "${SKIP_NS3:-0}" = 1 ]; then
  echo "sim-vs-ns3: SKIP_NS3=1, reusing bench/ns3/out/" >&2
else
  bench/ns3/run.sh $q --linux-reno=1 >&2
fi
cargo build --release -q -p tandem-sim --example ns3_compare
t="${CARGO_TARGET_DIR:-target}/release/examples/ns3_compare"
suffix=""; [ -n "$q" ] && suffix="-quick"
for s in bulk incast dctcp dctcp-newreno; do
  "$t" "$s" $q > "bench/out/tandem-$s$suffix.json"
done
python3 - "$suffix" <<'PY' | tee bench/out/sim-vs-ns3.md
import json, sys
suffix = sys.argv[1]
def load(p):
    with open(p) as f:
        return json.load(f)
def pct(a, b):
    return "n/a" if not b else f"{(a - b) / b * 100:+.1f}%"
rows = []
def row(scn, metric, ours, theirs, fmt="{:.4g}"):
    rows.append(f"| {scn} | {metric} | {fmt.format(ours)} | {fmt.format(theirs)} | {pct(ours, theirs)} |")
b, nb = load(f"bench/out/tandem-bulk{suffix}.json"), load(f"bench/ns3/out/bulk{suffix}.json")
row("bulk", "goodput (Mb/s)", b["goodput_bps"] / 1e6, nb["goodput_bps"] / 1e6)
row("bulk", "drops", b["drops"], nb["drops"], "{}")
row("bulk", "retransmits", b["retransmits"], nb["retransmits"], "{}")
row("bulk", "timeouts", b["timeouts"], nb["timeouts"], "{}")
row("bulk", "wall (s)", b["wall_s"], nb["wall_s"], "{:.3f}")
i, ni = load(f"bench/out/tandem-incast{suffix}.json"), load(f"bench/ns3/out/incast{suffix}.json")
row("incast", "goodput (Mb/s)", i["goodput_bps"] / 1e6, ni["goodput_bps"] / 1e6)
row("incast", "mean FCT (ms)", i["flow_completion"]["mean_s"] * 1e3, ni["flow_completion"]["mean_s"] * 1e3)
row("incast", "p99 FCT (ms)", i["flow_completion"]["p99_s"] * 1e3, ni["flow_completion"]["p99_s"] * 1e3)
row("incast", "mean round (ms)", i["round_completion"]["mean_s"] * 1e3, ni["round_completion"]["mean_s"] * 1e3)
row("incast", "drops", i["drops"], ni["drops"], "{}")
row("incast", "retransmits", i["retransmits"], ni["retransmits"], "{}")
row("incast", "timeouts", i["timeouts"], ni["timeouts"], "{}")
row("incast", "wall (s)", i["wall_s"], ni["wall_s"], "{:.3f}")
for name in ["dctcp", "dctcp-newreno"]:
    d, nd = load(f"bench/out/tandem-{name}{suffix}.json"), load(f"bench/ns3/out/{name}{suffix}.json")
    row(name, "goodput (Mb/s)", d["goodput_bps"] / 1e6, nd["goodput_bps"] / 1e6)
    row(name, "Jain fairness", d["jain_fairness"], nd["jain_fairness"], "{:.3f}")
    row(name, "queue mean (pkts)", d["queue_mean_pkts"], nd["queue_mean_pkts"], "{:.1f}")
    row(name, "queue p99 (pkts)", d["queue_p99_pkts"], nd["queue_p99_pkts"], "{:.0f}")
    row(name, "drops", d["drops"], nd["drops"], "{}")
    row(name, "marks", d["marks"], nd["marks"], "{}")
    row(name, "retransmits", d["retransmits"], nd["retransmits"], "{}")
    row(name, "timeouts", d["timeouts"], nd["timeouts"], "{}")
    row(name, "wall (s)", d["wall_s"], nd["wall_s"], "{:.3f}")
print("| scenario | metric | tandem | ns-3 3.37 | difference |")
print("|---|---|---|---|---|")
print("\n".join(rows))
for scn, a, n in [("bulk", b, nb), ("incast", i, ni)] + [(x, load(f"bench/out/tandem-{x}{suffix}.json"), load(f"bench/ns3/out/{x}{suffix}.json")) for x in ["dctcp", "dctcp-newreno"]]:
    print(f"\n{scn}: tandem is {n['wall_s'] / max(a['wall_s'], 1e-9):.0f}x faster than ns-3", end="")
print()
PY
