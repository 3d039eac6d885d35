"""A first campaign: web-search FCT p99 against load, with error bars over seeds.

Runs scenarios/websearch-leafspine.toml (DCTCP on a 64-host leaf-spine) at several loads, five
seeds each, then plots the 99th-percentile flow completion time (mean over seeds, error bars
one standard deviation) as PNG and SVG. Run it from the repository root:

    python python/examples/campaign.py                      # local cores
    python python/examples/campaign.py --backend ray        # a Ray cluster (RAY_ADDRESS) or a local one
    python python/examples/campaign.py --loads 20,50 --seeds 2 --duration 10ms   # a small one

A second run skips the finished runs (the campaign folder is resumable), so it only replots.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pyarrow.compute as pc

import tandem

SCENARIO = "scenarios/websearch-leafspine.toml"
KEY = "flows[0].load"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", default="20,35,50,65", help="loads in percent, comma-separated")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per load (1..N)")
    ap.add_argument("--duration", default="50ms", help="simulated time per run")
    ap.add_argument("--backend", default="local", choices=["local", "ray"])
    ap.add_argument("--out", default="results/example-campaign", help="campaign folder")
    args = ap.parse_args()

    loads = [f"{int(x)}%" for x in args.loads.split(",")]
    table = tandem.sweep(
        SCENARIO,
        grid={KEY: loads},
        seeds=range(1, args.seeds + 1),
        out=args.out,
        set={"duration": args.duration},
        backend=args.backend,
    )
    print(f"{table.num_rows} runs in {args.out}/campaign.parquet "
          f"(ran {table.schema.metadata[b'tandem.ran'].decode()}, "
          f"skipped {table.schema.metadata[b'tandem.skipped'].decode()})")

    # Mean and standard deviation of FCT p99 over seeds, per load.
    stats = table.group_by(KEY).aggregate(
        [("fct_us_p99", "mean"), ("fct_us_p99", "stddev"), ("fct_us_p99", "count")]
    )
    rows = sorted(
        (float(load.rstrip("%")), mean / 1000.0, (sd or 0.0) / 1000.0, n)
        for load, mean, sd, n in zip(
            stats[KEY].to_pylist(),
            stats["fct_us_p99_mean"].to_pylist(),
            stats["fct_us_p99_stddev"].to_pylist(),
            stats["fct_us_p99_count"].to_pylist(),
        )
    )
    for load, mean, sd, n in rows:
        print(f"load {load:4.0f}%  FCT p99 {mean:8.3f} ms +- {sd:.3f} (n={n})")
    completed = pc.sum(table["completed"]).as_py()
    print(f"{completed} flows completed in all")
    plot(rows, args.seeds, Path(args.out) / "fct-p99-vs-load")


def plot(rows, seeds: int, stem: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r[0] for r in rows]
    y = [r[1] for r in rows]
    err = [r[2] for r in rows]
    fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=150)
    ax.errorbar(x, y, yerr=err, marker="o", markersize=5, capsize=3, linewidth=1.5,
                label=f"Tandem, DCTCP (mean ± s.d., {seeds} seeds)")
    ax.set_xlabel("offered load (%)")
    ax.set_ylabel("FCT p99 (ms)")
    ax.set_xticks(x)
    ax.set_ylim(bottom=0, top=max(v + e for v, e in zip(y, err)) * 1.15 if y else 1)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), frameon=False)
    ax.set_title("Web-search flows on a 64-host leaf-spine")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{stem}.{ext}", bbox_inches="tight")
    print(f"plot: {stem}.png and .svg")
    if any(math.isnan(v) for v in y):
        raise SystemExit("no flow completed at some load: run longer (--duration)")


if __name__ == "__main__":
    main()
