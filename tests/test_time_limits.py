"""The time limit and Stop are contracts on every route: ``fit`` returns within
a second of either, with its best tree, whatever phase it is in (reading the
table, warm starts, the exact search, building the model, the solve)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.solvers import BACKENDS

#: How late fit may return after its time limit or a stop request.
SLACK = 1.0
LIMIT = 3.0

ROUTES = [("auto", "auto")] + [
    (formulation, solver)
    for formulation, solver in (("flow", "highs"), ("flow", "scip"), ("benders", "scip"))
    if BACKENDS[solver].available()[0]
]


def hard_table(n: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Noisy rows, four groups: no route proves depth 4 with equalized odds 0.01 in seconds."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"x{j}" for j in range(10)])
    group = pd.Series(rng.integers(0, 4, n).astype(str), name="group")
    score = X["x0"] + X["x1"] * X["x2"] - X["x3"] + 0.3 * group.astype(int) + rng.normal(0, 1.5, n)
    return X, pd.Series((score > 0.4).astype(int), name="y"), group


@pytest.mark.parametrize("formulation,solver", ROUTES)
def test_fit_returns_within_a_second_of_its_time_limit(formulation, solver) -> None:
    X, y, group = hard_table()
    fairness = {} if formulation == "benders" else dict(fairness="equalized_odds", fairness_bound=0.01)
    clf = StrongTreeClassifier(depth=4, formulation=formulation, solver=solver, time_limit=LIMIT, positive_class=1,
                               **fairness)
    t0 = time.perf_counter()
    clf.fit(X, y, sensitive_features=group if fairness else None)
    wall = time.perf_counter() - t0
    assert wall <= LIMIT + SLACK, f"{formulation}/{solver}: fit took {wall:.2f} s with a {LIMIT} s limit"
    assert clf.record_.status in ("time_limit", "optimal")
    assert clf.record_.bound is None or clf.record_.bound >= clf.record_.objective - 1e-6


@pytest.mark.parametrize("formulation,solver", ROUTES)
def test_stop_returns_within_a_second_with_the_best_tree(formulation, solver) -> None:
    X, y, group = hard_table(seed=1)
    fairness = {} if formulation == "benders" else dict(fairness="equalized_odds", fairness_bound=0.01)
    clf = StrongTreeClassifier(depth=4, formulation=formulation, solver=solver, time_limit=60, positive_class=1,
                               **fairness)
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    t0 = time.perf_counter()
    clf.fit(X, y, sensitive_features=group if fairness else None, stop=stop)
    wall = time.perf_counter() - t0
    assert wall <= 1.5 + SLACK, f"{formulation}/{solver}: fit took {wall:.2f} s after a stop at 1.5 s"
    assert clf.record_.status in ("interrupted", "optimal")
    assert clf.tree_ is not None
