"""Ctrl-C stops long calls: KeyboardInterrupt, and nothing half-written is left."""

from __future__ import annotations

import _thread
import os
import signal
import threading

import pytest

import tandem

LONG = "scenarios/websearch-leafspine.toml"


@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    """Python's own Ctrl-C handler, whatever the test runner inherited (a shell starts
    background jobs with SIGINT ignored, and then interrupt_main does nothing)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _interrupt_after(seconds: float) -> threading.Timer:
    t = threading.Timer(seconds, _thread.interrupt_main)
    t.start()
    return t


def test_ctrl_c_stops_a_run_and_leaves_no_folder(tmp_path):
    out = tmp_path / "run"
    timer = _interrupt_after(0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            # Seconds of simulated web-search traffic: minutes of work if not stopped.
            tandem.run_scenario(LONG, set={"duration": "5s"}, out=out)
    finally:
        timer.cancel()
    assert not out.exists()


def test_ctrl_c_stops_a_sweep_and_the_next_call_resumes(tmp_path):
    out = tmp_path / "camp"
    grid = {"flows[0].load": ["20%", "30%", "40%", "50%", "60%", "70%"]}
    timer = _interrupt_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            tandem.sweep(LONG, grid, range(1, 5), out, set={"duration": "30ms"}, jobs=2)
    finally:
        timer.cancel()
    names = os.listdir(out / "runs")
    assert not [n for n in names if n.startswith(".")], f"partial runs left: {names}"
    for n in names:
        assert (out / "runs" / n / "run.json").is_file()
    small = tandem.sweep(LONG, {"flows[0].load": ["20%"]}, [1], out, set={"duration": "30ms"})
    assert small.num_rows == 1
