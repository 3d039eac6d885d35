"""The Ray backend of :func:`tandem.sweep`: one Ray task per unfinished run.

Each task runs on a worker with the ``tandem`` package installed and writes its run into
``out/runs/<id>/``, which should be on a filesystem every node shares (NFS, Lustre, a local
disk for a one-machine cluster). The task also returns the run's ``summary.json`` and
``run.json``; the driver writes them under ``out/runs/<id>/`` when that folder is not there,
so resuming and the campaign table work even where the folder is not shared (the other
outputs then stay on the workers).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from . import _native


def _task(scenario, sets, params, seed, rid, out, max_memory=None):
    """Runs one planned run on a Ray worker; returns (id, summary text, run.json text)."""
    summary, meta = _native.run_planned(scenario, sets, params, seed, rid, out, max_memory)
    return rid, summary, meta


def _keep(out: str, rid: str, summary: str, meta: str) -> None:
    """Writes a run's summary and run.json on the driver when its folder is missing."""
    runs = Path(out) / "runs"
    if (runs / rid / "run.json").is_file():
        return
    partial = runs / f".{rid}.partial-driver-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "summary.json").write_text(summary)
    (partial / "run.json").write_text(meta)
    dest = runs / rid
    if dest.exists():
        shutil.rmtree(dest)
    partial.rename(dest)


def sweep(
    scenario: str,
    sets: Sequence[Tuple[str, str]],
    grid: Sequence[Tuple[str, List[str]]],
    seeds: Sequence[int],
    out: str,
    shard: Optional[Tuple[int, int]],
    max_memory: Optional[int] = None,
) -> Tuple[int, int, List[Tuple[str, str]]]:
    """Runs the unfinished runs of the plan (of ``shard``) as Ray tasks; returns (ran,
    skipped, failed as (id, message))."""
    try:
        import ray
    except ImportError:
        raise ValueError('backend="ray" needs Ray: pip install "ray>=2.9"') from None
    if shard is not None and not (0 <= shard[0] < shard[1]):
        raise ValueError(f"shard: expected I/N with 0 <= I < N, got {shard[0]}/{shard[1]}")
    runs = _native.plan(scenario, list(sets), list(grid), list(seeds), out, max_memory)
    mine = [r for r in runs if shard is None or r[0] % shard[1] == shard[0]]
    todo = [r for r in mine if not r[4]]
    skipped = len(mine) - len(todo)
    if not ray.is_initialized():
        ray.init()
    remote = ray.remote(num_cpus=1, max_retries=1)(_task)
    pending = {
        remote.remote(scenario, list(sets), params, seed, rid, out, max_memory): rid
        for _, rid, params, seed, _ in todo
    }
    ran, failed = 0, []
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                rid = pending.pop(ref)
                try:
                    _, summary, meta = ray.get(ref)
                except ray.exceptions.RayError as e:
                    cause = getattr(e, "cause", None)
                    failed.append((rid, str(cause) if cause is not None else str(e).splitlines()[0]))
                    continue
                _keep(out, rid, summary, meta)
                ran += 1
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return ran, skipped, sorted(failed)
