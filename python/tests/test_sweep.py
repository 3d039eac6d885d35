"""sweep: the campaign table equals the CLI's, resumes, shards, and runs on a local Ray cluster."""

from __future__ import annotations

import os

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import tandem
from conftest import require_module

SCENARIO = "scenarios/incast.toml"
FIXED = {"duration": "20ms"}
GRID = {"tcp.min_rto": ["1ms", "10ms"], "switch.queue.limit_packets": [50, 100]}
SEEDS = range(1, 3)


def _run(out, **kw):
    return tandem.sweep(SCENARIO, GRID, SEEDS, out, set=FIXED, **kw)


def _meta(t, key):
    return int(t.schema.metadata[f"tandem.{key}".encode()])


def test_sweep_matches_the_cli_and_resumes(tmp_path, cli):
    cli(
        "sweep", SCENARIO,
        "--grid", "tcp.min_rto=1ms,10ms", "--grid", "switch.queue.limit_packets=50,100",
        "--seeds", "1..2", "--set", "duration=20ms", "--out", tmp_path / "cli", "--quiet",
    )
    t = _run(tmp_path / "py", jobs=2)
    assert t.num_rows == 8 and _meta(t, "ran") == 8 and _meta(t, "skipped") == 0
    want = pq.read_table(tmp_path / "cli" / "campaign.parquet")
    assert t.replace_schema_metadata(None).equals(want.replace_schema_metadata(None))
    assert (tmp_path / "py" / "campaign.csv").read_bytes() == (tmp_path / "cli" / "campaign.csv").read_bytes()
    # Typed columns: integers stay integers, durations stay text.
    assert str(t.schema.field("switch.queue.limit_packets").type) == "int64"
    assert str(t.schema.field("tcp.min_rto").type) == "string"
    assert str(t.schema.field("timeouts").type) == "uint64"
    again = _run(tmp_path / "py")
    assert _meta(again, "ran") == 0 and _meta(again, "skipped") == 8
    assert again.replace_schema_metadata(None).equals(t.replace_schema_metadata(None))
    # The CLI resumes a campaign Python started, and says so.
    p = cli(
        "sweep", SCENARIO,
        "--grid", "tcp.min_rto=1ms,10ms", "--grid", "switch.queue.limit_packets=50,100",
        "--seeds", "1..2", "--set", "duration=20ms", "--out", tmp_path / "py", "--quiet",
    )
    assert "skipped 8 finished runs" in p.stdout


def test_shards_add_up_to_the_campaign(tmp_path):
    a = _run(tmp_path / "c", shard="0/2")
    b = _run(tmp_path / "c", shard=(1, 2))
    assert _meta(a, "ran") == 4 and _meta(b, "ran") == 4
    assert b.num_rows == 8
    assert len(os.listdir(tmp_path / "c" / "runs")) == 8


def test_bad_grid_fails_before_anything_runs(tmp_path, cli):
    out = tmp_path / "bad"
    with pytest.raises(ValueError) as e:
        tandem.sweep(SCENARIO, {"tcp.min_rto": ["1ms", "abc"]}, [1], out)
    p = cli("sweep", SCENARIO, "--grid", "tcp.min_rto=1ms,abc", "--seeds", "1", "--out", out, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == f"tandem: {e.value}"
    assert not out.exists()
    with pytest.raises(ValueError):
        tandem.sweep(SCENARIO, {"tcp.min_rto": "1ms"}, [1], out)
    with pytest.raises(ValueError):
        tandem.sweep(SCENARIO, GRID, [1], out, backend="slurm")
    with pytest.raises(ValueError):
        tandem.sweep(SCENARIO, GRID, "3..1", out)
    assert not out.exists()


def test_plan_names_every_run(tmp_path):
    runs = tandem.plan(SCENARIO, GRID, SEEDS, tmp_path, set=FIXED)
    assert len(runs) == 8 and len({r["id"] for r in runs}) == 8
    assert runs[0]["params"] == {"tcp.min_rto": "1ms", "switch.queue.limit_packets": "50"}
    assert not any(r["done"] for r in runs)


def test_ray_backend_gives_the_same_campaign(tmp_path):
    ray = require_module("ray", "the Ray backend runs on it")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        local = _run(tmp_path / "local")
        # Half the runs first (as a Slurm array task would), then the rest resumed on Ray.
        first = _run(tmp_path / "ray", backend="ray", shard="0/2")
        assert _meta(first, "ran") == 4 and first.num_rows == 4
        t = _run(tmp_path / "ray", backend="ray")
        assert _meta(t, "ran") == 4 and _meta(t, "skipped") == 4
        assert t.replace_schema_metadata(None).equals(local.replace_schema_metadata(None))
        again = _run(tmp_path / "ray", backend="ray")
        assert _meta(again, "ran") == 0 and _meta(again, "skipped") == 8
    finally:
        ray.shutdown()
