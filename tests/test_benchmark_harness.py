"""The benchmark harness's handling of ODTlearn runs (no ODTlearn needed: a
stand-in interpreter prints what the worker would)."""

from __future__ import annotations

import json
import stat
import sys

import pandas as pd

from benchmarks.common import run_odtlearn
from strongtree_core.formulation import TreeSpec

PART = pd.DataFrame({"a": [0, 0, 1, 1, 1], "b": [0, 1, 0, 1, 1], "target": [0, 0, 1, 1, 0]})


def fake_python(tmp_path, result: dict | None, *, sleep: float = 0.0):
    """An executable that ignores its arguments and answers like odtlearn_worker.py."""
    script = tmp_path / "fake_python"
    line = "" if result is None else "ODTLEARN_RESULT " + json.dumps(result)
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep({sleep})\nprint('CBC banner')\nprint({line!r})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_odtlearn_tree_is_rescored_from_its_predictions(tmp_path) -> None:
    res = {"status": "optimal", "objective": 4.0, "bound": 4.0, "predictions": [0, 0, 1, 1, 1],
           "n_branching": 1, "build_seconds": 0.5, "solve_seconds": 2.0}
    out = run_odtlearn(PART, TreeSpec(depth=1), "odtlearn-flow", 10, python=fake_python(tmp_path, res))
    assert (out.status, out.certified, out.objective, out.misclassified) == ("optimal", True, 4.0, 1)
    assert (out.seconds, out.build_seconds, out.gap) == (2.0, 0.5, 0.0)


def test_a_claimed_value_the_tree_does_not_have_is_not_a_certificate(tmp_path) -> None:
    res = {"status": "optimal", "objective": 5.0, "bound": 5.0, "predictions": [0, 0, 1, 1, 1],
           "build_seconds": 0.1, "solve_seconds": 0.1}
    out = run_odtlearn(PART, TreeSpec(depth=1), "odtlearn-flow", 10, python=fake_python(tmp_path, res))
    assert out.objective == 4.0 and not out.certified and "re-scores to 4" in out.note


def test_time_limit_and_missing_tree(tmp_path) -> None:
    res = {"status": "no_solution_found", "objective": None, "bound": 5.0, "build_seconds": 0.1, "solve_seconds": 10.0}
    out = run_odtlearn(PART, TreeSpec(depth=1), "odtlearn-benders", 10, python=fake_python(tmp_path, res))
    assert out.status == "time_limit_no_tree" and not out.certified and out.objective is None


def test_a_run_that_does_not_return_is_killed(tmp_path) -> None:
    out = run_odtlearn(PART, TreeSpec(depth=1), "odtlearn-benders", 0.1,
                       python=fake_python(tmp_path, None, sleep=30), grace=1.0)
    assert out.status == "killed" and not out.certified and "killed" in out.note


def test_a_crash_is_reported_with_its_reason(tmp_path) -> None:
    script = tmp_path / "crash"
    script.write_text("#!/bin/sh\necho 'ERROR while running Cbc. Signal SIGSEGV caught.' >&2\nexit 3\n")
    script.chmod(0o755)
    out = run_odtlearn(PART, TreeSpec(depth=1), "odtlearn-flow", 10, python=str(script))
    assert out.status == "error" and "SIGSEGV" in out.note and "exit 3" in out.note
