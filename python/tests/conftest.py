"""Shared fixtures: the repository root and the `tandem` binary the results are compared with."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    env = os.environ.get("TANDEM_BIN")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "tandem"
        if p.is_file():
            return p
    found = shutil.which("tandem")
    if found:
        return Path(found)
    pytest.exit("no tandem binary: build it (cargo build -p tandem-cli) or set TANDEM_BIN", 2)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the `tandem` binary from the repository root; returns the CompletedProcess."""
    binary = _binary()

    def run(*args, check=True):
        p = subprocess.run(
            [str(binary), *map(str, args)], cwd=ROOT, capture_output=True, text=True
        )
        if check and p.returncode != 0:
            raise AssertionError(f"tandem {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}")
        return p

    return run


@pytest.fixture(autouse=True)
def _in_repository_root(monkeypatch):
    """Scenario paths in the tests are relative to the repository root, as in the docs."""
    monkeypatch.chdir(ROOT)


def require_module(name: str, why: str):
    """Imports `name`, or skips the test saying why (a failure when TANDEM_REQUIRE_SYSTEM=1)."""
    try:
        return __import__(name)
    except ImportError:
        if os.environ.get("TANDEM_REQUIRE_SYSTEM") == "1":
            raise
        pytest.skip(f"{name} not installed ({why}); .ci/run installs it")


def pytest_runtest_logreport(report):
    """Lists skips in TANDEM_SKIP_LOG, which scripts/test prints at its end."""
    log = os.environ.get("TANDEM_SKIP_LOG")
    if log and report.skipped and report.when in ("setup", "call"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        with open(log, "a") as f:
            f.write(f"{report.nodeid}: {reason}\n")
