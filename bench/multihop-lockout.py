#!/usr/bin/env python3
"""Drop-tail lock-out in the `multihop` validation scenario, seed by seed, in both tools.

Reads the seed folders `bench/ns3-seeds.sh FIRST..LAST multihop` leaves in
bench/out/seeds/multihop/ (ns-3's result with `queue_full_run_max_samples`, written by
bench/ns3/scenario.cc since 2026-11-29), runs Tandem's release binary on the same scenario and
seed, and prints per seed: completed short flows, their FCT mean (completed flows only; the
validation table's FCT mean also counts unfinished flows with the time they had), how many had a SYN or SYN-ACK
retransmitted, and the longest run of consecutive 100 us queue samples at s1:1 (the second
bottleneck) with the queue full (>= limit - 1 packets), i.e. how long one input held every
freed slot.

    cargo build --release -p tandem-cli && python3 bench/multihop-lockout.py
"""
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "bench/out/seeds/multihop"
TANDEM = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "tandem")
SCENARIO = "scenarios/validation/multihop.toml"
SAMPLE_MS = 0.1


def ns3_row(path):
    d = json.load(open(path))
    done = [f for f in d["flows"] if f["fct_s"] is not None]
    port = next(p for p in d["ports"] if p["node"] == "s1" and p["port"] == 1)
    run = port.get("queue_full_run_max_samples")
    return (
        len(done),
        statistics.mean(f["fct_s"] for f in done) * 1e3,
        sum(1 for f in done if f["tcp_stats"]["syn_retransmits"] > 0),
        None if run is None else run * SAMPLE_MS,
    ), port["limit_pkts"]


def tandem_row(seed, out, limit):
    if not os.path.exists(os.path.join(out, "flows.csv")):
        subprocess.run(
            [TANDEM, "sim", "run", SCENARIO, "--seed", str(seed), "--out", out, "-q"],
            stdout=subprocess.DEVNULL, check=True)
    done = [f for f in csv.DictReader(open(os.path.join(out, "flows.csv"))) if f["end_s"]]
    best = cur = 0
    for r in csv.DictReader(open(os.path.join(out, "queues.csv"))):
        if r["node"] == "s1" and r["port"] == "1":
            cur = cur + 1 if int(r["packets"]) >= limit - 1 else 0
            best = max(best, cur)
    return (
        len(done),
        statistics.mean(float(f["end_s"]) - float(f["start_s"]) for f in done) * 1e3,
        sum(1 for f in done if int(f["syn_timeouts"]) > 0),
        best * SAMPLE_MS,
    )


rows = []
for name in sorted(os.listdir(ROOT), key=lambda n: int(n.split("-")[1])):
    seed = int(name.split("-")[1])
    path = os.path.join(ROOT, name, "ns3-multihop.json")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        continue
    ns3, limit = ns3_row(path)
    rows.append((seed, ns3, tandem_row(seed, os.path.join(ROOT, name, "tandem-run"), limit)))

print("| seed | short flows | FCT mean of completed flows (ms), ns-3 / Tandem | flows with SYN retransmitted, ns-3 / Tandem "
      "| longest full-queue run at s1:1 (ms), ns-3 / Tandem |")
print("|---|---|---|---|---|")
fmt = lambda x: "-" if x is None else f"{x:.1f}"
for seed, n, t in rows:
    print(f"| {seed} | {n[0]} | {n[1]:.1f} / {t[1]:.1f} | {n[2]} / {t[2]} | {fmt(n[3])} / {fmt(t[3])} |")
if len(rows) > 1:
    m = lambda side, i: statistics.mean(r[side][i] for r in rows if r[side][i] is not None)
    locked = lambda side: sum(1 for r in rows if r[side][3] is not None and r[side][3] >= 20)
    print(f"| mean over {len(rows)} | | {m(1, 1):.1f} / {m(2, 1):.1f} | {m(1, 2):.2f} / {m(2, 2):.2f} "
          f"| runs of 20 ms or more: {locked(1)} / {locked(2)} seeds |")
