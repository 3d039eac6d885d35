#!/usr/bin/env bash
# CoSwitch live (issue 20): the `coswitch-adapt` step (the mouse rate doubles) reproduced in the
# CoSwitch lab, its threshold trajectory drawn beside the simulated one.
#
#   simulated: `tandem reproduce coswitch-adapt` (one server at 60 kpps, mice double at 40 s,
#              100 s, the model's calibrated costs);
#   live:      labs/coswitch.toml (prefix "ca"), a 200 Mb/s iperf3 elephant throughout and a
#              heavy-tailed mix of paced UDP flows between the servers (bench/lib/live.sh's
#              FLOW_MIX: mean about 16 packets, 100 packets/s each) arriving at 60 a second for
#              30 s, then 120 a second for 30 s; the trajectory is read from the controller's log
#              of its cores (every Flow-Prediction report, `R` lines).
#
# Writes OUT/adapt-live.csv (t_s, threshold, server, switch: the live run, one row a report,
# with the busiest vswitch's load and the ToR side's, max of its CPU and table fill),
# OUT/adapt-sim.csv (the simulated run's adapt.csv) and OUT/coswitch-adapt-live.svg (two panels,
# the same axes' meaning, each with its step marked), and prints both trajectories' summary.
# Needs root, Open vSwitch, iperf3, python3, ethtool, iproute2.
#
#   bench/coswitch-live-adapt.sh [OUT (default bench/out/coswitch-adapt)]
#
# TOR_IDLE=10s (say) runs the lab with that ToR idle timeout instead of the lab file's 3 s.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/live.sh
need_root
out=${1:-bench/out/coswitch-adapt}
mkdir -p "$out"
build_tandem
lab_workdir coswitch-adapt

echo "== simulated: tandem reproduce coswitch-adapt" >&2
"$T" reproduce coswitch-adapt --out "$work/sim" -q >/dev/null
cp "$work/sim/adapt.csv" "$out/adapt-sim.csv"

step=30 end=60
echo "== live: the CoSwitch lab, mice double at ${step} s" >&2
sed -e 's/prefix = "cs"/prefix = "ca"/' -e "s/^tor_idle_timeout = .*/tor_idle_timeout = \"${TOR_IDLE:-3s}\"/" \
  labs/coswitch.toml > "$work/lab.toml"
"$T" lab up "$work/lab.toml" --state "$work/state" >/dev/null 2>&1
bg_in ca 3 iperf3 -s -1 -p 5201
bg_in ca 4 python3 -c "$UDP_SINK" 10.78.0.4 9000
sleep 1
bg_in ca 1 iperf3 -c 10.78.0.3 -p 5201 -t "$end" -b 200M
ip netns exec ca-h2 python3 -c "$FLOW_MIX" 10.78.0.4 9000 "$end" 60 "$step" 120 >/dev/null 2>&1
sleep 2
status=$("$T" lab status "$work/lab.toml" --state "$work/state" --json | head -1)
replay=$("$T" lab replay "$work/lab.toml" --state "$work/state")
python3 - "$work/state/coswitch-log.txt" "$out" "$status" "$replay" "$(git rev-parse --short HEAD)" "$step" "$end" <<'PY'
import csv, json, sys
log, out, status, replay, rev, step, end = sys.argv[1:8]
step, end = float(step), float(end)
# Live: the threshold in force after each Flow-Prediction report (R lines: `0 NOW R .. #T|-`).
rows, t0, thr = [], None, 18
for line in open(log):
    w = line.split()
    if len(w) < 3 or w[2] != "R" or " #" not in line:
        continue
    now = int(w[1]) / 1e12
    t0 = now if t0 is None else t0
    ans = line.rsplit(" #", 1)[1].strip()
    thr = thr if ans == "-" else int(ans)
    clamp = lambda x: min(1.0, max(0.0, float(x)))
    server = max(clamp(x) for x in w[3].split(",")) if w[3] else 0.0
    switch = max(clamp(w[4]), clamp(w[5]))
    rows.append((round(now - t0 + 1, 3), thr, server, switch))
with open(f"{out}/adapt-live.csv", "w") as f:
    f.write("t_s,threshold,server,switch\n")
    for t, v, a, b in rows:
        f.write(f"{t},{v},{a:.4f},{b:.4f}\n")
# The reports while the traffic ran (the first comes about when it starts).
rows = [r for r in rows if r[0] <= end + 1]
loads = [(t, a, b) for t, _, a, b in rows]
rows = [(t, v) for t, v, _, _ in rows]
sim = [(float(r["t_s"]), int(r["threshold"])) for r in csv.DictReader(open(f"{out}/adapt-sim.csv"))]

def panel(x0, title, pts, step, xmax):
    w, h, l, b, top = 420, 300, 50, 40, 30
    ymax = max(v for _, v in pts) * 1.15
    X = lambda t: x0 + l + (w - l - 10) * t / xmax
    Y = lambda v: top + (h - b - top) * (1 - v / ymax)
    s = [f'<text x="{x0 + w / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>',
         f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(xmax)}" y2="{Y(0)}" stroke="black"/>',
         f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(0)}" y2="{Y(ymax)}" stroke="black"/>',
         f'<line x1="{X(step)}" y1="{Y(0)}" x2="{X(step)}" y2="{Y(ymax)}" stroke="grey" stroke-dasharray="4 3"/>',
         f'<text x="{X(step) + 3}" y="{Y(ymax) + 12}" font-size="10" fill="grey">mice x2</text>',
         f'<text x="{x0 + w / 2}" y="{h - 5}" text-anchor="middle" font-size="11">time (s)</text>',
         f'<text x="{x0 + 12}" y="{top + (h - b - top) / 2}" font-size="11" transform="rotate(-90 {x0 + 12} {top + (h - b - top) / 2})" text-anchor="middle">threshold (packets)</text>']
    for k in range(5):
        v = ymax * k / 4
        s.append(f'<text x="{X(0) - 4}" y="{Y(v) + 4}" font-size="9" text-anchor="end">{v:.0f}</text>')
        t = xmax * k / 4
        s.append(f'<text x="{X(t)}" y="{Y(0) + 13}" font-size="9" text-anchor="middle">{t:.0f}</text>')
    # Staircase: a threshold holds until the next report changes it.
    path, last = [], None
    for t, v in pts:
        if last is not None:
            path.append(f"{X(t):.1f},{Y(last):.1f}")
        path.append(f"{X(t):.1f},{Y(v):.1f}")
        last = v
    s.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.6" points="{" ".join(path)}"/>')
    return s

svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="860" height="300" font-family="sans-serif">',
       '<rect width="860" height="300" fill="white"/>']
svg += panel(0, "simulated: coswitch-adapt (60 kpps model)", sim, 40, 100)
svg += panel(440, "live: CoSwitch lab (Open vSwitch, 2 servers)", rows, step, max(2 * step, rows[-1][0]) if rows else 2 * step)
svg.append("</svg>")
open(f"{out}/coswitch-adapt-live.svg", "w").write("\n".join(svg))

def summary(name, pts, step):
    before = [v for t, v in pts if t <= step]
    after = [v for t, v in pts if t > step]
    late = [v for t, v in pts if t > step + 15]
    changes = lambda p: sum(1 for a, b in zip(p, p[1:]) if a != b)
    rng = lambda p: f"{min(p)}-{max(p)}" if p else "-"
    print(f"| {name} | {pts[0][1] if pts else '-'} | {before[-1] if before else '-'} | {after[-1] if after else '-'} | {rng(after)} | {rng(late)} | {changes([v for _, v in pts])} | {changes(late)} |")
print(f"CoSwitch adapt, simulated and live, commit {rev}")
print()
print("| run | threshold after the first report | at the step | at the end | range after the step | range from 15 s after the step | changes | changes from 15 s after the step |")
print("|---|---|---|---|---|---|---|---|")
summary("simulated (step at 40 s of 100)", sim, 40)
summary(f"live (step at {step:.0f} s of {2 * step:.0f})", rows, step)
mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
last = [(a, b) for t, a, b in loads if t > end - 9]
print(f"live, last 10 s: busiest vswitch {100 * mean([a for a, _ in last]):.1f}% of its budget, ToR side {100 * mean([b for _, b in last]):.1f}%")
print()
s = json.loads(status)
print(f"live ToR at the end: {s['table_entries']} entries (peak capacity {s['table_capacity']}), {s['marked_flows']} flows marked, {s['reports']} reports")
print(replay)
PY
