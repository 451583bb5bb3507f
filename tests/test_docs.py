"""The API reference: built by Sphinx with numpydoc from the docstrings, warnings as errors (every
documented object needs an Examples section: numpydoc's EX01 check), and a few of those examples run."""

from __future__ import annotations

import doctest
import importlib
import inspect
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The modules whose exports the reference documents (docs/api/*.rst), with every export an example.
DOCUMENTED = ["strongtree_core", "strongtree_core.metrics", "strongtree_core.sweep", "strongtree_core.tree",
              "strongtree_core.encoding", "strongtree_core.formulation", "strongtree_core.solvers",
              "strongtree_core.heuristics", "strongtree_core.accel", "strongtree_core.cli", "strongtree_core.datasets"]
#: Modules whose examples are cheap enough to run on every test run (a few tiny fits at most).
RUN_EXAMPLES = [
    "strongtree_core.metrics.quality", "strongtree_core.metrics.disparities", "strongtree_core.metrics.fairness_gaps",
    "strongtree_core.metrics.group_table", "strongtree_core.metrics.intervals", "strongtree_core.renames",
    "strongtree_core.errors", "strongtree_core.limits", "strongtree_core.tree.fitted", "strongtree_core.cli.words",
    "strongtree_core.estimator", "strongtree_core.cli.files", "strongtree_core.encoding.binarize",
    "strongtree_core.formulation.spec", "strongtree_core.solvers.registry", "strongtree_core.datasets",
]


@pytest.mark.timing
def test_the_reference_builds_with_no_warning(tmp_path):
    pytest.importorskip("sphinx", reason="the docs tools are not installed (pip install -r requirements-dev.txt)")
    pytest.importorskip("numpydoc", reason="the docs tools are not installed (pip install -r requirements-dev.txt)")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          str(ROOT / "docs" / "api"), str(tmp_path / "html")], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert not out.stderr.strip(), out.stderr
    assert (tmp_path / "html" / "metrics.html").exists()
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize("module", DOCUMENTED)
def test_every_export_has_an_example(module):
    mod = importlib.import_module(module)
    missing = [n for n in mod.__all__ if hasattr(mod, n) and (inspect.isclass(getattr(mod, n)) or inspect.isfunction(getattr(mod, n)))
               and "Examples\n" not in (getattr(mod, n).__doc__ or "")]
    assert not missing, f"{module}: no Examples section in {missing}"


@pytest.mark.parametrize("module", RUN_EXAMPLES)
def test_the_examples_run_as_written(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module} has no examples"
    assert result.failed == 0
