#!/usr/bin/env python3
"""The validation scenarios with one setting changed, in ns-3 3.37 and in Tandem.

The suite's tolerances hold on the settings it ships; a user changes them. Each line of the
job file (default bench/ns3/sweep.txt) names a case, a scenario and `--set` overrides:

    l4-nosack scenarios/validation/long-4.toml duration=500ms tcp.sack=false

For each case both tools run (`tandem sim export-ns3` then bench/ns3/build/scenario, and
`tandem sim run` with the same overrides) and one Markdown row compares goodput, Jain's index,
retransmissions, timeouts (after the handshake), drops (switches and hosts: a host queue
(`host_queue`) overflows too), ECN marks and, where flows finish, FCT mean and p99
(ns-3 / Tandem, and the difference). No verdicts: these settings have no declared tolerances;
the table shows where the like-for-like mode follows ns-3 and where it does not.

    bench/ns3/build.sh && cargo build --release -p tandem-cli
    python3 bench/ns3-sweep.py [JOBS] [-j N]

Outputs stay in bench/out/sweep/CASE/.
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import statistics
import subprocess

TANDEM = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "tandem")
NS3 = "bench/ns3/build/scenario"


def jain(x):
    s = sum(v * v for v in x)
    return sum(x) ** 2 / (len(x) * s) if s else 1.0


def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, -(-99 * len(v) // 100) - 1))] if v else None


def summary(goodput, rates, rtx, timeouts, drops, marks, fct):
    return dict(goodput=goodput, jain=jain(rates), rtx=rtx, timeouts=timeouts, drops=drops, marks=marks,
                fct_mean=statistics.mean(fct) * 1e3 if fct else None, fct_p99=p99(fct) * 1e3 if fct else None)


def ns3_side(path):
    d = json.load(open(path))
    dur = d["duration_s"]
    fl = d["flows"]
    rates = [f["rx_bytes"] * 8 / (dur - f["start_s"]) / 1e6 for f in fl if f["start_s"] < dur]
    fct = [f["fct_s"] for f in fl if f.get("fct_s") is not None and f["bytes"] > 0]
    # Data timeouts only: Tandem's `timeouts` leaves SYN retries out (its `syn_timeouts` also
    # counts the passive side's SYN-ACK retries, which ns-3's monitor does not see).
    timeouts = sum(f["tcp_stats"]["data_timeouts"] if "tcp_stats" in f else f["timeouts"] for f in fl)
    return summary(sum(f["rx_bytes"] for f in fl) * 8 / dur / 1e6, rates, sum(f["retransmits"] for f in fl),
                   timeouts, d["switch_drops_total"] + d.get("host_drops", 0), d["marks_total"],
                   fct)


def tandem_side(out):
    s = json.load(open(os.path.join(out, "summary.json")))
    dur = s["duration_s"]
    fl = list(csv.DictReader(open(os.path.join(out, "flows.csv"))))
    rates = [int(f["delivered"]) * 8 / (dur - float(f["start_s"])) / 1e6 for f in fl if float(f["start_s"]) < dur]
    fct = [float(f["fct_us"]) / 1e6 for f in fl if f["fct_us"]]
    return summary(s["delivered_bytes"] * 8 / dur / 1e6, rates, s["retransmits"], s["timeouts"], s["drops"],
                   s["ecn_marked"], fct)


def run_case(job):
    name, scenario, sets = job
    d = os.path.join("bench", "out", "sweep", name)
    os.makedirs(d, exist_ok=True)
    args = [a for s in sets for a in ("--set", s)]
    spec = os.path.join(d, "spec")
    subprocess.run([TANDEM, "sim", "export-ns3", scenario, "--out", spec] + args, check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "ns3.json"), "w") as f:
        subprocess.run([NS3, spec], check=True, stdout=f, stderr=subprocess.DEVNULL)
    subprocess.run([TANDEM, "sim", "run", scenario, "--out", os.path.join(d, "tandem"), "-q"] + args, check=True,
                   stdout=subprocess.DEVNULL)
    return ns3_side(os.path.join(d, "ns3.json")), tandem_side(os.path.join(d, "tandem"))


COLUMNS = [("goodput", "goodput (Mb/s)", "{:.1f}"), ("jain", "Jain", "{:.3f}"), ("rtx", "retransmissions", "{}"),
           ("timeouts", "timeouts", "{}"), ("drops", "drops", "{}"), ("marks", "ECN marks", "{}"),
           ("fct_mean", "FCT mean (ms)", "{:.2f}"), ("fct_p99", "FCT p99 (ms)", "{:.1f}")]


def cell(fmt, a, b):
    if a is None and b is None:
        return "-"
    text = f"{'-' if a is None else fmt.format(a)} / {'-' if b is None else fmt.format(b)}"
    if a and b is not None and fmt.format(a) != fmt.format(b):
        text += f" ({(b - a) / a * 100:+.1f}%)"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jobs", nargs="?", default="bench/ns3/sweep.txt")
    ap.add_argument("-j", type=int, default=2, help="cases run at once")
    a = ap.parse_args()
    jobs = []
    for line in open(a.jobs):
        line = line.split("#", 1)[0].split()
        if line:
            jobs.append((line[0], line[1], line[2:]))
    print("| case | changed | " + " | ".join(f"{label}, ns-3 / Tandem" for _, label, _ in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 2) + "|")
    with cf.ThreadPoolExecutor(a.j) as ex:
        for (name, _, sets), (n, t) in zip(jobs, ex.map(run_case, jobs)):
            changed = ", ".join(f"`{s}`" for s in sets if not s.startswith("duration="))
            print(f"| {name} | {changed} | " + " | ".join(cell(f, n[k], t[k]) for k, _, f in COLUMNS) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
