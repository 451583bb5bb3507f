"""The exact search's linear programs through highspy: the optimum scipy's linprog finds, on any
thread, with no banner (the dual's master problem against linprog, and its prices inside their
domain: tests/test_lagrange_domain.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from strongtree_core.highs_lp import minimize

ROOT = Path(__file__).resolve().parents[1]


def _program(seed: int):
    """A random bounded LP with inequality rows and one equality row (feasible: built around a point)."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 12))
    point = rng.random(n)
    A_ub = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.7)
    b_ub = A_ub @ point + rng.random(m)
    A_eq = rng.random((1, n))
    b_eq = A_eq @ point
    lower = np.where(rng.random(n) < 0.3, -np.inf, point - rng.random(n))
    upper = point + rng.random(n)
    return rng.normal(size=n), A_ub, b_ub, A_eq, b_eq, lower, upper


@pytest.mark.parametrize("seed", range(40))
def test_the_optimum_is_scipy_s(seed):
    cost, A_ub, b_ub, A_eq, b_eq, lower, upper = _program(seed)
    x = minimize(cost, A_ub, b_ub, A_eq, b_eq, lower, upper)
    truth = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=list(zip(lower, upper)), method="highs")
    assert truth.status == 0
    assert cost @ x == pytest.approx(truth.fun, rel=1e-7, abs=1e-7)
    assert np.all(A_ub @ x <= b_ub + 1e-7) and np.allclose(A_eq @ x, b_eq, atol=1e-7)
    assert np.all(x >= lower - 1e-7) and np.all(x <= upper + 1e-7)


def test_no_optimum_is_none():
    one = np.ones((1, 1))
    # x <= -1 and x >= 0: infeasible; min -x over x >= 0: unbounded
    assert minimize(np.ones(1), one, -one[0], np.zeros((0, 1)), np.zeros(0), np.zeros(1), np.full(1, np.inf)) is None
    assert minimize(-np.ones(1), np.zeros((0, 1)), np.zeros(0), np.zeros((0, 1)), np.zeros(0), np.zeros(1),
                    np.full(1, np.inf)) is None


def test_a_thread_whose_scheduler_has_another_thread_count_still_solves():
    """HiGHS keeps a scheduler per thread, fixed by the first solve in it: a program of the caller's
    that ran HiGHS on 2 threads first must not leave the dual without its linear programs."""
    import highspy

    cost, A_ub, b_ub, A_eq, b_eq, lower, upper = _program(7)
    expected = minimize(cost, A_ub, b_ub, A_eq, b_eq, lower, upper)
    out: list = []

    def caller():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 2)
        h.addVar(0.0, 1.0)
        h.run()
        try:
            out.append(minimize(cost, A_ub, b_ub, A_eq, b_eq, lower, upper))
        finally:
            highspy.Highs.resetGlobalScheduler(True)  # this thread's scheduler and its worker ends here

    worker = threading.Thread(target=caller)
    worker.start()
    worker.join()
    assert out[0] is not None and cost @ out[0] == pytest.approx(cost @ expected, rel=1e-9, abs=1e-9)


def test_a_fresh_process_prints_nothing():
    """HiGHS prints its banner at a process's first instance: a command's output must not carry it."""
    code = textwrap.dedent("""
        import numpy as np
        from strongtree_core.highs_lp import minimize
        x = minimize(np.ones(2), -np.eye(2), -np.ones(2), np.zeros((0, 2)), np.zeros(0), np.zeros(2), np.full(2, 5.0))
        assert x is not None and np.allclose(x, 1.0)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_programs_in_several_threads_at_once_leave_the_standard_output_alone():
    """The dual's programs run in their callers' threads, several at once (a threaded sweep, the app):
    the banner is swallowed once, and the process's standard output still reaches its reader after."""
    code = textwrap.dedent("""
        import threading
        import numpy as np
        from strongtree_core.highs_lp import minimize

        def solve():
            for _ in range(300):
                minimize(np.ones(2), -np.eye(2), -np.ones(2), np.zeros((0, 2)), np.zeros(0), np.zeros(2), np.full(2, 5.0))

        threads = [threading.Thread(target=solve) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("still here")
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "still here\n", "")


def test_programs_beside_a_mio_solve_of_this_process_keep_their_answers_and_its():
    """The dual's programs take no turn with the MIO backends (a threaded sweep runs an exact search beside
    another point's FlowOCT): two threads solving them while FlowOCT runs on HiGHS with 2 threads, then 1
    (which resets the scheduler between), get every answer to the last bit as alone, and the fits are
    the fits alone (status, objective, bound, nodes, predictions)."""
    import pandas as pd

    from strongtree_core import StrongTreeClassifier

    programs = [_program(seed) for seed in range(40)]
    alone = [minimize(*p) for p in programs]
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.integers(0, 4, (120, 8)), columns=[f"f{j}" for j in range(8)])
    y = pd.Series(np.where(X.sum(axis=1) + rng.normal(0, 2, 120) > 12, "yes", "no"))

    def fit(threads: int):
        clf = StrongTreeClassifier(formulation="flow", exact_search=False, solver="highs", depth=1, threads=threads,
                                   time_limit=120, pos_label="yes").fit(X, y)
        r = clf.record_
        return r.status, r.objective, r.bound, r.nodes, tuple(clf.predict(X))

    fits_alone = [fit(2), fit(1)]
    done = threading.Event()
    solved, differ = [0], []

    def solve() -> None:
        while not done.is_set():
            for k, p in enumerate(programs):
                x = minimize(*p)
                solved[0] += 1
                if not np.array_equal(x, alone[k]):
                    differ.append(k)

    loops = [threading.Thread(target=solve) for _ in range(2)]
    for t in loops:
        t.start()
    try:
        fits_beside = [fit(2), fit(1)]
    finally:
        done.set()
        for t in loops:
            t.join()
    assert fits_beside == fits_alone
    assert solved[0] >= 80 and not differ, (solved[0], differ)
