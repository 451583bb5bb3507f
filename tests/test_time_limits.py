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

#: How late fit may return after its time limit or a stop request.  The contract is
#: one second, measured by benchmarks/time_limits.py; a shared test runner gets half
#: a second more so that a busy machine does not fail the suite.
SLACK = 1.5
LIMIT = 3.0

#: The exact search (harder: depth 4) and the MIO alone (no exact start, which could finish it early).
ROUTES = [("auto", "auto")] + [
    (formulation, solver)
    for formulation, solver in (("flow", "highs"), ("flow", "scip"), ("benders", "scip"))
    if BACKENDS[solver].available()[0]
]


def hard_table(n: int = 1500, seed: int = 0) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Noisy rows, four groups: no route proves depth 3 with equalized odds 0.01 in seconds
    (nor depth 3 without it on the MIO)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"x{j}" for j in range(10)])
    group = pd.Series(rng.integers(0, 4, n).astype(str), name="group")
    score = X["x0"] + X["x1"] * X["x2"] - X["x3"] + 0.3 * group.astype(int) + rng.normal(0, 1.5, n)
    return X, pd.Series((score > 0.4).astype(int), name="y"), group


def _settings(formulation: str, solver: str) -> dict:
    fairness = {} if formulation == "benders" else dict(fairness="equalized_odds", fairness_bound=0.01)
    return dict(depth=4 if formulation == "auto" else 3, formulation=formulation, solver=solver, pos_label=1,
                exact_search=formulation == "auto", **fairness)


@pytest.mark.parametrize("formulation,solver", ROUTES)
def test_fit_returns_within_a_second_of_its_time_limit(formulation, solver) -> None:
    X, y, group = hard_table()
    clf = StrongTreeClassifier(time_limit=LIMIT, **_settings(formulation, solver))
    fairness = clf.fairness
    t0 = time.perf_counter()
    clf.fit(X, y, sensitive_features=group if fairness else None)
    wall = time.perf_counter() - t0
    assert wall <= LIMIT + SLACK, f"{formulation}/{solver}: fit took {wall:.2f} s with a {LIMIT} s limit"
    assert clf.record_.status == "time_limit", "the route finished early: the test needs a harder problem"
    assert clf.record_.bound is None or clf.record_.bound >= clf.record_.objective - 1e-6


@pytest.mark.parametrize("formulation,solver", ROUTES)
def test_stop_returns_within_a_second_with_the_best_tree(formulation, solver) -> None:
    X, y, group = hard_table(seed=1)
    clf = StrongTreeClassifier(time_limit=60, **_settings(formulation, solver))
    fairness = clf.fairness
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    t0 = time.perf_counter()
    clf.fit(X, y, sensitive_features=group if fairness else None, stop=stop)
    wall = time.perf_counter() - t0
    assert wall <= 1.5 + SLACK, f"{formulation}/{solver}: fit took {wall:.2f} s after a stop at 1.5 s"
    assert clf.record_.status == "interrupted", "the route finished early: the test needs a harder problem"
    assert clf.tree_ is not None


def test_a_mio_larger_than_the_memory_limit_is_refused_before_it_is_built() -> None:
    from strongtree_core import StrongTreeError
    from strongtree_core.limits import human_bytes

    X, y, group = hard_table(n=800)
    clf = StrongTreeClassifier(depth=3, formulation="flow", solver="highs", time_limit=30, memory_limit=50 * 2**20)
    t0 = time.perf_counter()
    with pytest.raises(StrongTreeError) as err:
        clf.fit(X, y)
    assert time.perf_counter() - t0 < 5
    message = str(err.value)
    assert message.startswith("This solve would need about ")
    assert f"more than the {human_bytes(50 * 2**20)} allowed (memory_limit). FlowOCT for " in message
    assert message.endswith("Use formulation='auto' (the exact search needs far less), a smaller depth, fewer rows, "
                            "or raise memory_limit.")
    # the same table with the exact search fits easily
    assert StrongTreeClassifier(depth=3, time_limit=30, memory_limit=50 * 2**20).fit(X, y).record_.status


def test_the_memory_limit_is_a_number_of_bytes() -> None:
    from strongtree_core import StrongTreeError

    with pytest.raises(StrongTreeError, match="memory_limit"):
        StrongTreeClassifier(memory_limit=0).fit(*hard_table(n=50)[:2])
    with pytest.raises(StrongTreeError, match="memory_limit"):
        StrongTreeClassifier(memory_limit=True).fit(*hard_table(n=50)[:2])
