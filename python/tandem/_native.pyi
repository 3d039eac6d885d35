"""Type stubs of ``tandem._native``, the Rust half of the package (use ``tandem`` instead).

Every function raises ``ValueError`` on bad input (the CLI's one-line message), ``RuntimeError``
on a failure while running, and ``KeyboardInterrupt`` on Ctrl-C.
"""

from typing import List, Optional, Tuple

def run_scenario(
    path: str, sets: List[Tuple[str, str]], seed: Optional[int], out: str, max_memory: Optional[int] = None
) -> str:
    """Runs a scenario into ``out``; returns summary.json's text."""

def pcap_flows(path: str, timeout_ns: int, out: str) -> None:
    """Writes the flow records of a trace to the Parquet file ``out``."""

def reproduce(name: str, quick: bool, out: str) -> str:
    """Runs a built-in experiment into ``out``; returns its report as JSON text."""

def experiments() -> List[Tuple[str, str]]:
    """(name, description) of every built-in experiment."""

def plan(
    scenario: str,
    sets: List[Tuple[str, str]],
    grid: List[Tuple[str, List[str]]],
    seeds: List[int],
    out: str,
    max_memory: Optional[int] = None,
) -> List[Tuple[int, str, List[Tuple[str, str]], int, bool]]:
    """(index, id, params, seed, finished) of every run of a sweep."""

def run_planned(
    scenario: str,
    sets: List[Tuple[str, str]],
    params: List[Tuple[str, str]],
    seed: int,
    id: str,
    out: str,
    max_memory: Optional[int] = None,
) -> Tuple[str, str]:
    """Runs one planned run into ``out/runs/<id>/``; returns (summary.json, run.json) texts."""

def sweep_local(
    scenario: str,
    sets: List[Tuple[str, str]],
    grid: List[Tuple[str, List[str]]],
    seeds: List[int],
    out: str,
    jobs: Optional[int],
    shard: Optional[Tuple[int, int]],
    max_memory: Optional[int] = None,
) -> Tuple[int, int, int, List[Tuple[str, str]], int]:
    """Runs a sweep on local threads; returns (ran, skipped, other shards, failed, rows)."""

def write_campaign(
    scenario: str,
    sets: List[Tuple[str, str]],
    grid: List[Tuple[str, List[str]]],
    seeds: List[int],
    out: str,
    max_memory: Optional[int] = None,
) -> int:
    """Writes campaign.parquet and campaign.csv from the finished runs; returns rows."""

def parse_duration_ns(text: str) -> int:
    """``"60s"`` -> 60_000_000_000."""

def parse_size(text: str) -> int:
    """``"8GiB"`` -> 8589934592."""

def parse_seeds(text: str) -> List[int]:
    """``"1..3"`` -> [1, 2, 3]."""

def version() -> str:
    """The Tandem version inside."""
