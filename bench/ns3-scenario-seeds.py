#!/usr/bin/env python3
"""Any scenario that `tandem sim export-ns3` accepts, in ns-3 3.37 and in Tandem, seed by seed.

For scenarios outside the validation suite (variants of it, your own): per seed, both tools'
aggregate goodput, Jain's index over the flows' goodputs, timeouts after the handshake, drops
(switches and host queues), ECN marks at the switches, and the first sampled port's queue
mean, then the means over the seeds.

    bench/ns3/build.sh && cargo build --release -p tandem-cli
    python3 bench/ns3-scenario-seeds.py scenarios/validation/variants/dctcp-32-jitter.toml 1..8
    python3 bench/ns3-scenario-seeds.py scenarios/validation/variants/fat-tree-k4.toml 1..8 \
        --name fat-tree-k4-dctcp --set tcp.cc=dctcp --set switch.queue.limit_packets=15 \
        --set 'switch.queue.marking={kind="threshold",k_packets=10}'

`--set K=V` (repeatable) overrides a key in both tools, as `tandem sim run --set` does; give
such a run its own `--name`. Outputs stay in bench/out/scenario-seeds/NAME/seed-N/.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ap = argparse.ArgumentParser(usage="bench/ns3-scenario-seeds.py SCENARIO FIRST..LAST [--set K=V ...] [--name NAME]")
ap.add_argument("scenario")
ap.add_argument("seeds")
ap.add_argument("--set", action="append", default=[], metavar="K=V")
ap.add_argument("--name", help="output folder's name (default: the scenario file's; required with --set)")
a = ap.parse_args()
if ".." not in a.seeds:
    ap.error("seeds are FIRST..LAST")
if a.set and not a.name:
    ap.error("--set needs --name, so that runs with other settings keep their own outputs")
scenario = a.scenario
first, last = (int(x) for x in a.seeds.split(".."))
sets = [x for s in a.set for x in ("--set", s)]
tandem = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "tandem")
ns3 = "bench/ns3/build/scenario"
name = a.name or os.path.splitext(os.path.basename(scenario))[0]


def jain(x):
    s = sum(v * v for v in x)
    return sum(x) ** 2 / (len(x) * s) if s else 1.0


def ns3_side(path):
    d = json.load(open(path))
    dur = d["duration_s"]
    rates = [f["rx_bytes"] * 8 / (dur - f["start_s"]) / 1e6 for f in d["flows"]]
    return dict(goodput=sum(f["rx_bytes"] for f in d["flows"]) * 8 / dur / 1e6, jain=jain(rates),
                timeouts=sum(f["tcp_stats"]["data_timeouts"] if "tcp_stats" in f else f["timeouts"] for f in d["flows"]),
                drops=d["switch_drops_total"] + d.get("host_drops", 0),
                marks=d["marks_total"], queue=d["ports"][0]["queue_mean_pkts"] if d["ports"] else None)


def tandem_side(out):
    s = json.load(open(os.path.join(out, "summary.json")))
    dur = s["duration_s"]
    flows = list(csv.DictReader(open(os.path.join(out, "flows.csv"))))
    rates = [int(f["delivered"]) * 8 / (dur - float(f["start_s"])) / 1e6 for f in flows]
    rows = list(csv.DictReader(open(os.path.join(out, "queues.csv"))))
    # Samples before the end, as ns-3's (Tandem's queues.csv also has the one at the end).
    q = [int(r["packets"]) for r in rows
         if (r["node"], r["port"]) == (rows[0]["node"], rows[0]["port"]) and float(r["time_s"]) < dur]
    return dict(goodput=s["delivered_bytes"] * 8 / dur / 1e6, jain=jain(rates), timeouts=s["timeouts"],
                drops=s["drops"], marks=s["ecn_marked"], queue=statistics.mean(q) if q else None)


rows = []
for seed in range(first, last + 1):
    d = f"bench/out/scenario-seeds/{name}/seed-{seed}"
    os.makedirs(d, exist_ok=True)
    spec = os.path.join(d, "spec")
    subprocess.run([tandem, "sim", "export-ns3", scenario, "--seed", str(seed), "--out", spec] + sets, check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "ns3.json"), "w") as f:
        subprocess.run([ns3, spec], check=True, stdout=f)
    subprocess.run([tandem, "sim", "run", scenario, "--seed", str(seed), "--out", os.path.join(d, "tandem"), "-q"] + sets,
                   check=True, stdout=subprocess.DEVNULL)
    rows.append((seed, ns3_side(os.path.join(d, "ns3.json")), tandem_side(os.path.join(d, "tandem"))))
    print(f"seed {seed} done", file=sys.stderr)

keys = [("goodput", "goodput (Mb/s)", "{:.1f}"), ("jain", "Jain", "{:.3f}"), ("timeouts", "timeouts", "{}"),
        ("drops", "drops (switches and hosts)", "{}"), ("marks", "ECN marks", "{}"), ("queue", "queue mean (pkts)", "{:.2f}")]
fmt = lambda f, v: "-" if v is None else f.format(v)
print("| seed | " + " | ".join(f"{label}, ns-3 / Tandem" for _, label, _ in keys) + " |")
print("|---" * (len(keys) + 1) + "|")
for seed, n, t in rows:
    print(f"| {seed} | " + " | ".join(f"{fmt(f, n[k])} / {fmt(f, t[k])}" for k, _, f in keys) + " |")
mean = lambda side, k: statistics.mean(r[side][k] for r in rows if r[side][k] is not None)
print(f"| mean over {len(rows)} | " + " | ".join(f"{mean(1, k):.4g} / {mean(2, k):.4g}" for k, _, _ in keys) + " |")
