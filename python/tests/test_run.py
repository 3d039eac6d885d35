"""run_scenario, pcap_flows and reproduce give the CLI's values for the same input."""

from __future__ import annotations

import csv
import json

import pyarrow.csv as pacsv
import pytest

import tandem

SCENARIO = "scenarios/incast.toml"
SETS = {"tcp.min_rto": "10ms", "duration": "30ms"}


def _cli_sets(sets):
    return [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]


def _same_values(arrow_table, csv_path):
    """Every column of the CSV has the same values (as pyarrow parses the text) in the table."""
    want = pacsv.read_csv(csv_path)
    assert arrow_table.column_names == want.column_names
    assert arrow_table.num_rows == want.num_rows
    for name in want.column_names:
        got, exp = arrow_table.column(name).to_pylist(), want.column(name).to_pylist()
        for g, e in zip(got, exp):
            if isinstance(g, bool):
                g = int(g)  # the CSV writes flags as 1/0
            if g is None or e is None:
                assert g is None and e is None, name
            elif isinstance(g, (int, float)) and isinstance(e, (int, float)):
                assert g == pytest.approx(e, rel=1e-12, abs=1e-12), name
            else:
                assert str(g) == str(e), name


def test_run_scenario_matches_the_cli(tmp_path, cli):
    out = tmp_path / "cli"
    cli("sim", "run", SCENARIO, "--seed", 3, *_cli_sets(SETS), "--out", out, "--quiet")
    r = tandem.run_scenario(SCENARIO, set=SETS, seed=3)
    assert r.out is None
    assert r.summary == json.loads((out / "summary.json").read_text())
    assert r.summary["seed"] == 3 and r.summary["duration_s"] == pytest.approx(0.03)
    assert r.flows.num_rows == r.summary["flows"] > 0
    _same_values(r.flows, out / "flows.csv")
    _same_values(r.drops, out / "drops.csv")
    _same_values(r.queues, out / "queues.csv")


def test_run_scenario_keeps_outputs_when_asked(tmp_path):
    r = tandem.run_scenario(SCENARIO, set=["duration=10ms"], out=tmp_path / "run")
    assert r.out == tmp_path / "run"
    for name in ("flows.csv", "flows.parquet", "summary.json"):
        assert (tmp_path / "run" / name).is_file()


def test_threads_run_partitioned_with_the_same_outputs(cli, tmp_path):
    cli("sim", "run", SCENARIO, *_cli_sets(SETS), "--threads", 2, "--out", tmp_path / "cli", "--quiet")
    one = tandem.run_scenario(SCENARIO, set=SETS, threads=1)
    two = tandem.run_scenario(SCENARIO, set=SETS, threads=2)
    assert one.summary == two.summary == json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert one.flows.equals(two.flows) and one.drops.equals(two.drops) and one.queues.equals(two.queues)
    with pytest.raises(ValueError, match="threads: must be from 1 to 1024, got 0"):
        tandem.run_scenario(SCENARIO, set=SETS, threads=0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"set": {"tcp.min_rto": "abc"}},
        {"set": {"tcp.no_such_key": 1}},
        {"set": {"duration": "0s"}},
    ],
)
def test_bad_input_raises_value_error_with_the_cli_message(kwargs, cli):
    p = cli("sim", "run", SCENARIO, *_cli_sets(kwargs["set"]), "--out", "/nonexistent/x", check=False)
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[-1]
    with pytest.raises(ValueError) as e:
        tandem.run_scenario(SCENARIO, **kwargs)
    assert f"tandem: {e.value}" == line


def test_missing_scenario_and_folder_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="No such file"):
        tandem.run_scenario(tmp_path / "nope.toml")
    with pytest.raises(ValueError):
        tandem.run_scenario(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        tandem.run_scenario(SCENARIO, out=tmp_path / "file")


def test_pcap_flows_matches_the_cli(tmp_path, cli, root):
    trace = root / "traces" / "sample.pcap"
    cli("pcap", "flows", trace, "--csv", tmp_path / "flows.csv", "--timeout", "5s", "--quiet")
    t = tandem.pcap_flows(trace, timeout="5s")
    assert tandem.pcap_flows(trace, timeout=5.0).equals(t)
    with open(tmp_path / "flows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert t.num_rows == len(rows) > 0
    for col in ("packets", "bytes"):
        assert t.column(col).to_pylist() == [int(r[col]) for r in rows]
    with pytest.raises(ValueError):
        tandem.pcap_flows(tmp_path / "flows.csv")
    with pytest.raises(ValueError):
        tandem.pcap_flows(trace, timeout=-1)


def test_reproduce_matches_the_cli(tmp_path, cli):
    cli("reproduce", "tcpu-forwarding", "--quick", "--out", tmp_path, "--quiet")
    report = tandem.reproduce("tcpu-forwarding", quick=True)
    with open(tmp_path / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(report["rows"]) == len(rows) > 0
    for got, want in zip(report["rows"], rows):
        assert got["metric"] == want["metric"]
        assert got["kind"] == want["kind"]
        assert got["measured"] == pytest.approx(float(want["measured"]), rel=1e-12)
        assert (got["verdict"] or "") == want["verdict"]
    assert report["passes"] == sum(r["verdict"] == "PASS" for r in rows)
    assert "tcpu-forwarding" in tandem.experiments()
    with pytest.raises(ValueError, match="no experiment named"):
        tandem.reproduce("no-such-experiment")


def test_a_scenario_over_the_memory_limit_is_refused_as_the_cli_does(cli):
    p = cli("sim", "run", SCENARIO, "--max-memory", "1MiB", "--out", "/nonexistent/x", check=False)
    assert p.returncode == 2
    with pytest.raises(ValueError) as e:
        tandem.run_scenario(SCENARIO, max_memory="1MiB")
    assert f"tandem: {e.value}" == p.stderr.strip().splitlines()[-1]
    with pytest.raises(ValueError):
        tandem.sweep(SCENARIO, {"tcp.min_rto": ["1ms"]}, [1], "/nonexistent/y", max_memory=1 << 20)
    with pytest.raises(ValueError):
        tandem.run_scenario(SCENARIO, max_memory=-1)
