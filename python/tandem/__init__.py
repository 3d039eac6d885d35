"""Tandem from Python: run scenarios, read traces, reproduce papers and sweep campaigns.

Every function calls the same Rust code as the ``tandem`` command, so a result here is the
CLI's result for the same scenario and seed, and bad input raises ``ValueError`` with the
CLI's one-line message. Tables are :class:`pyarrow.Table`; call ``.to_pandas()`` for pandas.
Long calls release the GIL and stop on Ctrl-C (``KeyboardInterrupt``).

>>> import tandem
>>> r = tandem.run_scenario("scenarios/incast.toml", set={"tcp.min_rto": "10ms"}, seed=2)
>>> r.summary["fct_us"]["p99"], r.flows.num_rows
>>> camp = tandem.sweep("scenarios/incast.toml", grid={"tcp.min_rto": ["1ms", "10ms"]},
...                     seeds=range(1, 6), out="results/rto")
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa
import pyarrow.parquet as pq

from . import _native

__all__ = [
    "RunResult",
    "run_scenario",
    "pcap_flows",
    "reproduce",
    "experiments",
    "sweep",
    "plan",
    "__version__",
]

__version__: str = _native.version()

_log = logging.getLogger("tandem")

PathLike = Union[str, "os.PathLike[str]"]
Value = Union[str, int, float, bool]
Sets = Union[Mapping[str, Value], Iterable[str], Iterable[Tuple[str, Value]], None]


def _value(v: Value) -> str:
    """A Python value as the CLI's ``--set`` text: ``True`` -> ``true``, ``0.5`` -> ``0.5``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise ValueError(f"{v!r}: give values as str, int, float or bool")


def _sets(sets: Sets) -> List[Tuple[str, str]]:
    """``{"tcp.min_rto": "1ms"}``, ``["tcp.min_rto=1ms"]`` or ``[("tcp.min_rto", "1ms")]``."""
    if sets is None:
        return []
    if isinstance(sets, Mapping):
        return [(str(k), _value(v)) for k, v in sets.items()]
    out = []
    for item in sets:
        if isinstance(item, str):
            key, sep, val = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"expected key=value, got `{item}`")
            out.append((key.strip(), val.strip()))
        else:
            key, val = item
            out.append((str(key), _value(val)))
    return out


def _memory(max_memory: Union[int, str, None]) -> Optional[int]:
    """``max_memory`` as bytes: an int, or a size such as ``"8GiB"`` (None: the default, half
    of this machine's memory, as the CLI's ``--max-memory``)."""
    if max_memory is None:
        return None
    if isinstance(max_memory, bool) or not isinstance(max_memory, (int, str)):
        raise ValueError(f"max_memory: expected bytes or a size like 8GiB, got {max_memory!r}")
    if isinstance(max_memory, str):
        return _native.parse_size(max_memory)
    if max_memory <= 0:
        raise ValueError("max_memory: must be above zero")
    return max_memory


def _read(path: Path) -> pa.Table:
    return pq.read_table(path)


@dataclass(frozen=True)
class RunResult:
    """What :func:`run_scenario` returns: the run's tables and summary.

    ``flows``, ``drops`` and ``queues`` hold the rows of ``flows.csv``, ``drops.csv`` and
    ``queues.csv`` (typed as in ``flows.parquet`` etc., see docs/formats.md); ``summary`` is
    ``summary.json``; ``out`` is the output folder, or ``None`` when the run went to a
    temporary folder that is gone.
    """

    flows: pa.Table
    drops: pa.Table
    queues: pa.Table
    summary: Dict[str, Any]
    out: Optional[Path] = field(default=None)


def run_scenario(
    path: PathLike,
    set: Sets = None,  # noqa: A002 - the CLI's name for it
    seed: Optional[int] = None,
    out: Optional[PathLike] = None,
    max_memory: Union[int, str, None] = None,
    threads: Optional[int] = None,
) -> RunResult:
    """Run a scenario file, as ``tandem sim run PATH [--set K=V]... [--seed S] [--threads N]``.

    ``set`` overrides values of the file (a dict, ``"key=value"`` strings or pairs);
    ``seed`` overrides its seed. With ``out`` the outputs (CSV, Parquet, pcaps, plots) stay
    there; without it they go to a temporary folder that is removed. A scenario whose
    estimated memory is above ``max_memory`` (bytes or ``"8GiB"``; default half of this
    machine's memory) is refused with ``ValueError`` before anything is built. ``threads``
    runs it partitioned on that many threads (the file's ``threads``; the same outputs for
    every number, docs/sim/scenarios.md).
    """
    sets, limit = _sets(set), _memory(max_memory)
    if threads is not None:
        sets.append(("threads", _value(threads)))
    tmp = None if out is not None else tempfile.mkdtemp(prefix="tandem-run-")
    dest = Path(out) if out is not None else Path(tmp) / "run"
    try:
        summary = json.loads(_native.run_scenario(os.fspath(path), sets, seed, os.fspath(dest), limit))
        flows, drops, queues = (_read(dest / f"{n}.parquet") for n in ("flows", "drops", "queues"))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return RunResult(flows, drops, queues, summary, Path(out) if out is not None else None)


def pcap_flows(path: PathLike, timeout: Union[str, float, None] = None) -> pa.Table:
    """Per-flow records of a pcap/pcapng trace, as ``tandem pcap flows PATH --parquet``.

    ``timeout`` is the idle gap that ends a flow: seconds as a number, or text such as
    ``"60s"`` or ``"500ms"`` (default 60 s, as the CLI).
    """
    if timeout is None:
        timeout_ns = _native.parse_duration_ns("60s")
    elif isinstance(timeout, str):
        timeout_ns = _native.parse_duration_ns(timeout)
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        timeout_ns = int(round(timeout * 1e9))
    else:
        raise ValueError(f"timeout: expected seconds > 0 or a duration like 60s, got {timeout!r}")
    with tempfile.TemporaryDirectory(prefix="tandem-flows-") as tmp:
        dest = Path(tmp) / "flows.parquet"
        _native.pcap_flows(os.fspath(path), timeout_ns, os.fspath(dest))
        return _read(dest)


def experiments() -> Dict[str, str]:
    """The built-in experiments (``tandem reproduce --list``): name -> description."""
    return dict(_native.experiments())


def reproduce(name: str, quick: bool = False, out: Optional[PathLike] = None) -> Dict[str, Any]:
    """Run a built-in experiment, as ``tandem reproduce NAME [--quick]``, and return its results
    table as a dict: ``rows`` (each with ``setting``, ``metric``, ``kind``, ``reference``,
    ``measured``, ``target``, ``verdict``, as results.csv), ``passes``, ``fails``, ``title``,
    ``reference``, ``notes``, ``files`` and ``out`` (``None`` when run in a temporary folder).
    """
    tmp = None if out is not None else tempfile.mkdtemp(prefix="tandem-reproduce-")
    dest = Path(out) if out is not None else Path(tmp)
    try:
        report = json.loads(_native.reproduce(name, bool(quick), os.fspath(dest)))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report["out"] = os.fspath(out) if out is not None else None
    return report


Grid = Mapping[str, Sequence[Value]]
Seeds = Union[int, str, Iterable[int]]


def _grid(grid: Optional[Grid]) -> List[Tuple[str, List[str]]]:
    if grid is None:
        return []
    if not isinstance(grid, Mapping):
        raise ValueError("grid: expected a dict of key -> list of values")
    out = []
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise ValueError(f"grid: `{key}`: expected a list of values, got {values!r}")
        out.append((str(key), [_value(v) for v in values]))
    return out


def _seeds(seeds: Seeds) -> List[int]:
    if isinstance(seeds, bool):
        raise ValueError(f"seeds: expected seeds, got {seeds!r}")
    if isinstance(seeds, int):
        return [seeds]
    if isinstance(seeds, str):
        return list(_native.parse_seeds(seeds))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: no seeds")
    if any(s < 0 for s in out):
        raise ValueError("seeds: seeds are whole numbers >= 0")
    return out


def _shard(shard: Union[str, Tuple[int, int], None]) -> Optional[Tuple[int, int]]:
    if shard is None:
        return None
    if isinstance(shard, str):
        i, sep, n = shard.partition("/")
        if not sep:
            raise ValueError(f"shard: expected I/N, got `{shard}`")
        try:
            return int(i), int(n)
        except ValueError:
            raise ValueError(f"shard: expected I/N, got `{shard}`") from None
    i, n = shard
    return int(i), int(n)


def plan(
    scenario: PathLike,
    grid: Optional[Grid],
    seeds: Seeds,
    out: PathLike,
    set: Sets = None,  # noqa: A002
    max_memory: Union[int, str, None] = None,
) -> List[Dict[str, Any]]:
    """The runs a :func:`sweep` would do, each validated: dicts with ``index``, ``id``,
    ``params``, ``seed`` and ``done`` (already finished in ``out``)."""
    runs = _native.plan(
        os.fspath(scenario), _sets(set), _grid(grid), _seeds(seeds), os.fspath(out), _memory(max_memory)
    )
    return [
        {"index": i, "id": rid, "params": dict(params), "seed": seed, "done": done}
        for i, rid, params, seed, done in runs
    ]


def sweep(
    scenario: PathLike,
    grid: Optional[Grid],
    seeds: Seeds,
    out: PathLike,
    backend: str = "local",
    shard: Union[str, Tuple[int, int], None] = None,
    set: Sets = None,  # noqa: A002
    jobs: Optional[int] = None,
    max_memory: Union[int, str, None] = None,
) -> pa.Table:
    """Run a campaign, as ``tandem sweep``: every combination of ``grid`` (key -> values, any
    key ``set`` takes) times every seed, each run in ``out/runs/<id>/``; returns the campaign
    table (``out/campaign.parquet``: ``run_id``, ``seed``, one column per grid key, then the
    summary's numbers).

    Finished runs are skipped, so calling it again resumes. ``seeds``: an iterable of ints,
    one int, or ``"A..B"`` (both included). ``backend``: ``"local"`` (threads on this machine,
    ``jobs`` of them, default all cores) or ``"ray"`` (one Ray task per run on the cluster
    ``ray.init()`` finds, i.e. ``RAY_ADDRESS``, else a local one; ``out`` must be on a
    filesystem the workers share). ``shard``: ``"I/N"`` or ``(I, N)`` runs only runs ``i`` with
    ``i % N == I``. The table's schema metadata says how many runs were ``tandem.ran`` and
    ``tandem.skipped``. ``max_memory`` (bytes or ``"8GiB"``) bounds each run's estimated
    memory, as ``--max-memory``; local runs at once are also kept within it together.
    """
    sets, axes, seed_list, shard_t = _sets(set), _grid(grid), _seeds(seeds), _shard(shard)
    limit = _memory(max_memory)
    scenario_s, out_s = os.fspath(scenario), os.fspath(out)
    if backend == "local":
        ran, skipped, _others, failed, _rows = _native.sweep_local(
            scenario_s, sets, axes, seed_list, out_s, jobs, shard_t, limit
        )
    elif backend == "ray":
        from . import _ray

        # Workers may start elsewhere: they get absolute paths.
        scenario_s, out_s = os.path.abspath(scenario_s), os.path.abspath(out_s)
        ran, skipped, failed = _ray.sweep(scenario_s, sets, axes, seed_list, out_s, shard_t, limit)
        _native.write_campaign(scenario_s, sets, axes, seed_list, out_s, limit)
    else:
        raise ValueError(f"backend: expected \"local\" or \"ray\", got {backend!r}")
    _log.info("sweep: ran %d, skipped %d finished runs, %d failed", ran, skipped, len(failed))
    if failed:
        rid, msg = failed[0]
        raise RuntimeError(
            f"{len(failed)} of {ran + len(failed)} runs failed (run {rid}: {msg}); "
            "run the same sweep again to retry them"
        )
    table = _read(Path(out_s) / "campaign.parquet")
    meta = dict(table.schema.metadata or {})
    meta.update({b"tandem.ran": str(ran).encode(), b"tandem.skipped": str(skipped).encode()})
    return table.replace_schema_metadata(meta)
