"""The example script runs a (small) campaign and plots it; the notebook is valid Python."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import require_module


def test_example_script_runs_a_small_campaign(tmp_path, root):
    require_module("matplotlib", "the example plots with it")
    out = tmp_path / "camp"
    cmd = [sys.executable, "python/examples/campaign.py", "--loads", "20,50", "--seeds", "2",
           "--duration", "5ms", "--out", str(out)]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "4 runs in" in p.stdout
    for ext in ("png", "svg"):
        assert (out / f"fct-p99-vs-load.{ext}").stat().st_size > 1000
    again = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    assert again.returncode == 0 and "(ran 0, skipped 4)" in again.stdout


def test_notebook_cells_are_python(root):
    nb = json.loads((root / "python/examples/campaign.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, "no code cells"
    for c in code:
        ast.parse("".join(c["source"]))
    assert "tandem.sweep(" in "".join(code[0]["source"])
