"""The process workers' plain path: the parent reads, encodes and measures, a worker only solves.

Its rows are the serial run's, point by point (trees, objectives, bounds, certificates, every
measure); a worker that runs a task loads neither pandas, scikit-learn nor scipy; and the
sweep's gaps and intervals, now counted without fairlearn's tables, are the metrics package's own.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.metrics import fairness_intervals, fairness_report
from strongtree_core.relays import FileRelay, LocalRelay
from strongtree_core.engine.worker import solve_task
from strongtree_core.sweep import sweep
from strongtree_core.sweep.point import _measure, finish_point, plan_point, run_point
from strongtree_core.sweep.run import plan

ROOT = Path(__file__).resolve().parents[1]
NOTIONS = ("statistical_parity", "conditional_statistical_parity", "predictive_equality", "equal_opportunity",
           "equalized_odds")


def _data(n: int = 120, seed: int = 3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 3, n), "c": rng.normal(size=n).round(2),
                      "level": rng.choice(["lo", "hi"], n)})
    group = pd.Series(rng.choice(["f", "m", "x"], n, p=[0.45, 0.45, 0.1]), name="group")
    score = X["a"] + (group == "m") + 0.5 * X["c"] + rng.random(n)
    y = pd.Series(np.where(score > 1.2, "yes", "no"), name="hired")
    return X, y, group


GRID = [
    {"fairness": ["statistical_parity", "equalized_odds", "conditional_statistical_parity"],
     "fairness_bound": [0.02, 0.2], "depth": [1, 2]},
    {"min_recall": [0.99], "min_specificity": [0.99], "depth": [1]},  # no tree meets both: infeasible
    {"depth": [2], "regularization": [0.01]},
]


def _comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table without what measures the clock: each fit's time and the record's runtime in its tree, and
    the path of its search (its nodes, in its ``choice``): the Lagrangian multipliers get a share of the time
    limit, so a point run beside another on a busy machine may reach the same certified tree through a weaker
    bound and more nodes (seen: 45 nodes serially, 3,436 in a worker)."""
    out = table.drop(columns="time").copy()

    def strip(text):
        if not isinstance(text, str):  # no tree (NaN in the table)
            return text
        tree = json.loads(text)
        for clocked in ("runtime", "nodes", "choice"):
            tree["record"].pop(clocked)
        return json.dumps(tree, sort_keys=True)

    out["tree"] = out["tree"].map(strip)
    return out


def test_process_workers_give_the_serial_rows_point_by_point():
    X, y, group = _data()
    est = StrongTreeClassifier(pos_label="yes", time_limit=30)
    kwargs = dict(sensitive_features=group, legitimate_features=X["level"], grid=GRID, cv=2)
    serial = _comparable(sweep(est, X, y, **kwargs))
    processes = _comparable(sweep(est, X, y, backend="processes", n_jobs=2, **kwargs))
    assert len(serial) == 2 * (12 + 1 + 1)
    assert set(serial["status"]) >= {"optimal", "infeasible"}  # fair trees, refusals and a plain one alike
    assert serial["certified"].sum() >= 24
    for (_, a), (_, b) in zip(serial.iterrows(), processes.iterrows()):
        assert a.index.equals(b.index)
        for column in a.index:
            same = (a[column] == b[column]) or (isinstance(a[column], float) and math.isnan(a[column])
                                                 and math.isnan(b[column]))
            assert same, (int(a["point"]), column, a[column], b[column])


def test_a_planned_point_solved_here_is_the_fitted_point():
    """plan_point, the worker's solve_task and finish_point, all in this process: the row of run_point."""
    X, y, group = _data()
    problem, points = plan(StrongTreeClassifier(pos_label="yes", time_limit=30), X, y, sensitive_features=group,
                           legitimate_features=X["level"], grid=GRID, cv=2)
    for point in points:
        whole = run_point(problem, point)
        step = plan_point(problem, point)
        if isinstance(step, dict):  # refused before its solve
            row = step
        else:
            row = finish_point(problem, point, step, solve_task(step.task, LocalRelay(), 1))
        a, b = _comparable(pd.DataFrame([whole])).iloc[0], _comparable(pd.DataFrame([row])).iloc[0]
        for column in a.index:
            assert (a[column] == b[column]) or (a[column] != a[column] and b[column] != b[column]), (point, column)


def test_a_promise_runs_whole_in_its_worker():
    X, y, group = _data()
    problem, points = plan(StrongTreeClassifier(pos_label="yes", time_limit=30, fairness="statistical_parity",
                                                fairness_bound=0.1), X, y, sensitive_features=group,
                           grid={"fairness_confidence": [None, 0.9]})
    assert [plan_point(problem, p) is None for p in points] == [False, True]


WORKER_PROBE = """
    import pickle, sys
    import strongtree_core.engine.worker as worker
    with open(sys.argv[1], "rb") as f:
        task, relay = pickle.load(f)
    answer = worker.solve_task(task, relay, 1)
    heavy = [m for m in ("pandas", "sklearn", "scipy", "fairlearn", "strongtree_core.sweep", "highspy")
             if m in sys.modules]
    print(answer.solved.record.status, answer.solved.record.certified, ",".join(heavy) or "-")
    print(answer.solved.record.choice)
"""


@pytest.mark.parametrize("fairness", [None, "statistical_parity"])
def test_a_worker_solves_without_pandas_scikit_learn_or_scipy(tmp_path, fairness):
    """A new interpreter that unpickles a task and its relay and solves it, as a process worker does.
    It loads no scipy at all: a fair tree's Lagrangian bound (its cutting planes are linear programs)
    loads HiGHS (``highspy``), never ``scipy.optimize``; an unconstrained tree not even HiGHS."""
    X, y, group = _data()
    problem, points = plan(StrongTreeClassifier(pos_label="yes", time_limit=30, depth=2), X, y,
                           sensitive_features=group, grid={"fairness": [fairness], "fairness_bound": [0.02]})
    step = plan_point(problem, points[0])
    path = tmp_path / "task.pickle"
    path.write_bytes(pickle.dumps((step.task, FileRelay(str(tmp_path / "stop")))))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(WORKER_PROBE), str(path)], cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    first, choice = done.stdout.splitlines()
    status, certified, heavy = first.split()
    assert (status, certified) == ("optimal", "True")
    loaded = set(heavy.split(",")) - {"-"}
    assert not loaded & {"pandas", "sklearn", "scipy", "fairlearn", "strongtree_core.sweep"}, loaded
    # an unconstrained tree needs no linear program; a fair one's bound came from the dual's cutting planes
    assert ("Lagrangian bound from" in choice, "highspy" in loaded) == (fairness is not None,) * 2, (choice, loaded)


def test_the_sweep_s_gaps_and_intervals_are_the_metrics_packages():
    """Every notion's gap equals fairness_report's difference, and the point's interval fairness_intervals'
    (on three parts of different sizes, three groups, two legitimate levels)."""
    X, y, group = _data(n=300, seed=5)
    est = StrongTreeClassifier(pos_label="yes", time_limit=30, depth=2, fairness=["equalized_odds",
                                                                                   "conditional_statistical_parity"],
                               fairness_bound=0.3)
    problem, points = plan(est, X, y, sensitive_features=group, legitimate_features=X["level"])
    clf = StrongTreeClassifier(pos_label="yes", depth=2).fit(X.iloc[:200], y.iloc[:200])  # any tree: its predictions
    clf.fairness_bound = 0.3
    own = ["equalized_odds", "conditional_statistical_parity"]
    checked = 0
    for rows in (np.arange(300), np.arange(0, 300, 7), np.arange(40)):
        out = _measure(problem, clf, rows, own, "test")
        truth, pred = y.to_numpy()[rows], clf.predict(X.iloc[rows])
        report = fairness_report(truth, pred, sensitive_features=group.to_numpy()[rows],
                                 legitimate_features=X["level"].to_numpy()[rows], pos_label="yes", notions=NOTIONS)
        for notion, difference in zip(report["notion"], report["difference"]):
            assert out[f"test_{notion}"] == difference or (math.isnan(difference) and math.isnan(out[f"test_{notion}"]))
            checked += not math.isnan(difference)
        spans = fairness_intervals(truth, pred, sensitive_features=group.to_numpy()[rows],
                                   legitimate_features=X["level"].to_numpy()[rows], pos_label="yes", notions=own)
        assert out["test_gap_low"] == spans["gap_low"].max() and out["test_gap_high"] == spans["gap_high"].max()
        assert out["test_gap"] == max(out["test_equalized_odds"], out["test_conditional_statistical_parity"])
    assert checked >= 12
