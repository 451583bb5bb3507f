"""Solver backends against independent truth.

Optima are checked against brute force over every balanced tree and against
``scipy.optimize.milp``; every status path (optimal, time limit with and
without a tree, infeasible, interrupted by Stop), progress events, and the
messages for a missing package or a licence that is too small.  Tests are
parametrized over the backends installed here and licensed for the model at
hand (Gurobi's size-limited licence takes only the small models).
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from strongtree_core.encoding.patterns import PatternData, collapse_patterns
from strongtree_core.formulation import BuiltModel, TreeSpec, TreeStructure, build_model
from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers import (
    BACKENDS,
    SolveOptions,
    SolverUnavailableError,
    Status,
    choose_backend,
    gurobi_licence,
    solve,
)
from strongtree_core.solvers.errors import MISSING_PACKAGE, TOO_LARGE, UNKNOWN_SOLVER
from strongtree_core.solvers import highs_run, licence
from strongtree_core.solvers.base import StopOrDeadline, stop_status
from strongtree_core.solvers.licence import gurobi_model_size
from strongtree_core.solvers.outcome import VIOLATES_CUTS, VIOLATES_ROWS, finish
from strongtree_core.solvers.solver_events import ProgressReporter
from strongtree_core.solvers.registry import GUROBI_SKIPPED, WHY_FALLBACK, WHY_RESOLVE
from strongtree_core.engine.starts import cart_structure

INSTALLED = [name for name, backend in BACKENDS.items() if backend.available()[0]]


def takes(name: str, model: ModelArrays) -> bool:
    """The backend is installed and (for Gurobi) its licence accepts ``model``."""
    if name not in INSTALLED:
        return False
    return name != "gurobi" or gurobi_licence().fits(*gurobi_model_size(model))


def random_data(n: int, n_features: int, seed: int, *, weights: bool = False) -> PatternData:
    """Binary features, a label with some structure and 25% noise."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, n_features))
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3])) ^ (rng.random(n) < 0.25)
    w = rng.uniform(0.5, 2.0, n) if weights else None
    return collapse_patterns(X, y.astype(int), 2, sample_weight=w)


def tree_value(tree: TreeStructure, data: PatternData) -> float:
    """Weight of the patterns the tree classifies correctly (re-scored, no solver)."""
    leaf = tree.apply(data.X)
    return float(data.weight[tree.prediction[leaf - 1] == data.y].sum())


def brute_force(data: PatternData, depth: int) -> float:
    """Best weighted accuracy over every balanced tree of this depth."""
    rows = np.arange(data.n_patterns)
    n_leaves = 2**depth
    best = 0.0
    for features in itertools.product(range(data.n_features), repeat=n_leaves - 1):
        features = np.array(features)
        node = np.ones(data.n_patterns, dtype=np.int64)
        for _ in range(depth):
            node = 2 * node + data.X[rows, features[node - 1]]
        cell = (node - n_leaves) * data.n_classes + data.y
        weight = np.bincount(cell, weights=data.weight, minlength=n_leaves * data.n_classes)
        best = max(best, float(weight.reshape(n_leaves, data.n_classes).max(axis=1).sum()))
    return best


# Small instances with known optima (brute force), and a harder one for limits and Stop.
SMALL = {(seed, weights): random_data(20, 5, seed, weights=weights) for seed, weights in [(0, False), (1, True)]}
HARD = random_data(300, 12, 7)
HARD_MODELS = {method: build_model(HARD, TreeSpec(depth=3), method) for method in ("flow", "benders")}


def _small_cases():
    for (seed, weights), data in SMALL.items():
        for depth, method in itertools.product((1, 2), ("flow", "benders")):
            built = build_model(data, TreeSpec(depth=depth), method)
            for name in BACKENDS:
                if takes(name, built.arrays):
                    yield pytest.param(name, built, data, id=f"{name}-{method}-d{depth}-seed{seed}{'-weighted' * weights}")


def _hard_cases():
    for method, built in HARD_MODELS.items():
        for name in BACKENDS:
            if takes(name, built.arrays):
                yield pytest.param(name, built, id=f"{name}-{method}")


SMALL_CASES = list(_small_cases())
HARD_CASES = list(_hard_cases())


@pytest.mark.parametrize("name, built, data", SMALL_CASES)
def test_optimum_matches_brute_force(name: str, built: BuiltModel, data: PatternData) -> None:
    result = BACKENDS[name].solve(built.arrays, SolveOptions(time_limit=30))
    optimum = brute_force(data, built.spec.depth)
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(optimum, abs=1e-6)
    assert tree_value(built.decode(result.x), data) == pytest.approx(optimum, abs=1e-6)
    assert result.bound == pytest.approx(optimum, rel=1e-5)
    assert result.backend == name


def _random_milp(seed: int, sense: str) -> ModelArrays:
    """A small MILP with ranged, equality and one-sided rows, general integers,
    negative bounds and an objective offset; feasible by construction."""
    rng = np.random.default_rng(seed)
    n, m = 8, 7
    integrality = np.arange(n) < 5
    col_lower = np.where(integrality, 0.0, -2.0)
    col_upper = np.where(integrality, 3.0, 5.0)
    A = sp.random(m, n, density=0.6, random_state=seed, data_rvs=lambda k: rng.uniform(-3, 3, k)).tocsr()
    x0 = np.where(integrality, rng.integers(0, 4, n), rng.uniform(-2, 5, n))
    ax = A @ x0
    row_lower = np.array([ax[0] - 1, ax[1], -np.inf, ax[3] - 2, ax[4] - 0.5, -np.inf, ax[6] - 1])
    row_upper = np.array([ax[0] + 1, ax[1], ax[2] + 0.5, np.inf, ax[4] + 3, ax[5] + 1, ax[6] + 1.5])
    return ModelArrays(
        sense=sense, c=rng.uniform(-2, 2, n), A=A, row_lower=row_lower, row_upper=row_upper,
        col_lower=col_lower, col_upper=col_upper, integrality=integrality, index={}, obj_offset=3.25,
    )


MILP_CASES = [
    pytest.param(name, seed, sense, id=f"{name}-{sense}-seed{seed}")
    for seed, sense in itertools.product((0, 1), ("min", "max"))
    for name in INSTALLED
]


@pytest.mark.parametrize("name, seed, sense", MILP_CASES)
def test_general_milp_matches_scipy(name: str, seed: int, sense: str) -> None:
    model = _random_milp(seed, sense)
    sign = 1.0 if sense == "min" else -1.0
    reference = milp(
        sign * model.c,
        constraints=LinearConstraint(model.A, model.row_lower, model.row_upper),
        integrality=model.integrality.astype(int),
        bounds=Bounds(model.col_lower, model.col_upper),
    )
    assert reference.status == 0
    result = BACKENDS[name].solve(model, SolveOptions(time_limit=30))
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(sign * reference.fun + model.obj_offset, abs=1e-6)


def _warm(built: BuiltModel, data: PatternData) -> np.ndarray:
    return built.start(cart_structure(data, built.spec.depth), data)


@pytest.mark.timing
@pytest.mark.parametrize("name, built", HARD_CASES)
def test_time_limit_keeps_a_tree_and_reports_progress(name: str, built: BuiltModel) -> None:
    start = _warm(built, HARD)
    events = []
    t0 = time.perf_counter()
    result = BACKENDS[name].solve(built.arrays, SolveOptions(time_limit=1.5, warm_start=start, progress=events.append))
    wall = time.perf_counter() - t0
    assert result.status == Status.TIME_LIMIT, result.message
    assert wall < 1.5 + 3.0
    assert result.objective >= built.arrays.objective(start) - 1e-6
    # Below the optimum a solution may leave flow (z, g) unused: the tree scores at least its objective.
    assert tree_value(built.decode(result.x), HARD) >= result.objective - 1e-6
    # The root LP of a large model may not have finished: then there is no bound yet.
    if result.bound is not None:
        assert result.bound >= result.objective - 1e-6 and result.gap > 0
    else:
        assert result.gap is None
    # Progress: the warm start first, elapsed never decreasing, every incumbent feasible and improving.
    assert events and events[0].incumbent is not None
    assert events[0].objective == pytest.approx(built.arrays.objective(start))
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)
    incumbents = [e for e in events if e.incumbent is not None]
    values = [e.objective for e in incumbents]
    assert values == sorted(values)
    for event in incumbents:
        assert built.arrays.max_violation(event.incumbent) <= 1e-5
        assert event.objective == pytest.approx(built.arrays.objective(event.incumbent), abs=1e-6)


@pytest.mark.parametrize("name, built", HARD_CASES)
def test_time_limit_without_a_tree(name: str, built: BuiltModel) -> None:
    result = BACKENDS[name].solve(built.arrays, SolveOptions(time_limit=0.0))
    assert result.status == Status.TIME_LIMIT_NO_TREE, result.message
    assert result.x is None and result.objective is None


INFEASIBLE = build_model(SMALL[(0, False)], TreeSpec(depth=1, min_leaf=10**6), "flow")


@pytest.mark.parametrize("name", [n for n in BACKENDS if takes(n, INFEASIBLE.arrays)])
def test_infeasible(name: str) -> None:
    result = BACKENDS[name].solve(INFEASIBLE.arrays, SolveOptions(time_limit=30))
    assert result.status == Status.INFEASIBLE, result.message
    assert result.x is None and result.objective is None


@pytest.mark.timing
@pytest.mark.parametrize("name, built", HARD_CASES)
def test_stop_from_another_thread_keeps_the_best_tree(name: str, built: BuiltModel) -> None:
    start = _warm(built, HARD)
    stop = threading.Event()
    timer = threading.Timer(1.0, stop.set)
    t0 = time.perf_counter()
    timer.start()
    try:
        result = BACKENDS[name].solve(built.arrays, SolveOptions(time_limit=60, warm_start=start, stop=stop))
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    assert result.status == Status.INTERRUPTED, result.message
    assert wall < 1.0 + 3.0
    assert result.x is not None
    assert result.objective >= built.arrays.objective(start) - 1e-6
    # Below the optimum a solution may leave flow (z, g) unused: the tree scores at least its objective.
    assert tree_value(built.decode(result.x), HARD) >= result.objective - 1e-6


# A FlowOCT model over 2,000 constraints, too large for the size-limited licence.
TOO_BIG = build_model(random_data(200, 10, 3), TreeSpec(depth=2), "flow").arrays
SIZE_LIMITED = [
    pytest.param(gurobi_licence(), id="size-limited")
    for _ in [0]
    if "gurobi" in INSTALLED and gurobi_licence().kind == "size_limited"
]


@pytest.mark.parametrize("licence", SIZE_LIMITED)
def test_size_limited_licence_refuses_a_large_model(licence) -> None:
    n_vars, n_cons = gurobi_model_size(TOO_BIG)
    assert not licence.fits(n_vars, n_cons)
    with pytest.raises(SolverUnavailableError) as info:
        choose_backend(TOO_BIG, "gurobi")
    assert str(info.value) == TOO_LARGE.format(n_vars=n_vars, n_cons=n_cons, licence=licence.message)
    assert "2,000 variables and 2,000 constraints" in str(info.value)
    backend, reason = choose_backend(TOO_BIG, "auto")
    assert backend.name != "gurobi"
    assert GUROBI_SKIPPED.format(why=licence.describe_fit(n_vars, n_cons)) in reason
    assert f"this model has {n_vars:,} variables and {n_cons:,} constraints" in reason


def test_auto_prefers_lazy_constraints_for_a_benders_master() -> None:
    master = HARD_MODELS["benders"].arrays
    backend, reason = choose_backend(master, "auto")
    assert backend.capabilities().lazy_constraints, reason
    flow_backend, _ = choose_backend(TOO_BIG, "auto")
    assert flow_backend.name in ("highs", "gurobi")


def test_missing_packages_are_named(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "gurobipy", None)
    monkeypatch.setitem(sys.modules, "pyscipopt", None)
    master = HARD_MODELS["benders"].arrays
    with pytest.raises(SolverUnavailableError) as info:
        choose_backend(master, "gurobi")
    assert str(info.value) == MISSING_PACKAGE.format(solver="Gurobi", package="gurobipy")
    with pytest.raises(SolverUnavailableError) as info:
        choose_backend(master, "scip")
    assert str(info.value) == MISSING_PACKAGE.format(solver="SCIP", package="pyscipopt")
    backend, reason = choose_backend(master, "auto")
    assert backend.name == "highs"
    assert reason.startswith(WHY_FALLBACK.format(solver="HiGHS") + WHY_RESOLVE)
    assert "pip install gurobipy" in reason


def test_unknown_solver_is_refused() -> None:
    with pytest.raises(SolverUnavailableError) as info:
        choose_backend(TOO_BIG, "cplex")
    assert str(info.value) == UNKNOWN_SOLVER.format(name="cplex", choices="auto, highs, scip, gurobi")


def test_solve_says_why_it_chose_the_backend() -> None:
    built = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    backend, reason = choose_backend(built.arrays, "auto")
    result = solve(built.arrays, "auto", SolveOptions(time_limit=30))
    assert result.backend == backend.name
    assert result.extra["choice"] == reason


def test_highs_thread_count_can_change_between_solves() -> None:
    built = build_model(SMALL[(0, False)], TreeSpec(depth=2), "flow")
    optimum = brute_force(SMALL[(0, False)], 2)
    for threads in (2, 1):
        result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=30, threads=threads))
        assert result.status == Status.OPTIMAL, result.message
        assert result.objective == pytest.approx(optimum)


def test_highs_runs_one_solve_at_a_time(monkeypatch) -> None:
    monkeypatch.setattr(highs_run, "HIGHS_WAIT", 0.1)
    built = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    with highs_run.HIGHS_LOCK:
        result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=30))
    assert result.status == Status.ERROR
    assert result.message == highs_run.HIGHS_BUSY


class _SeenByThisThreadOnly(threading.Event):
    """A Stop that only the thread which made it sees as set."""

    def __init__(self) -> None:
        super().__init__()
        self._owner = threading.get_ident()

    def is_set(self) -> bool:
        return threading.get_ident() == self._owner and super().is_set()


def test_highs_stop_inside_an_lp_returns_the_best_tree_at_once(monkeypatch) -> None:
    # With no grace at all, every Stop finds HiGHS busy and the run is abandoned.
    monkeypatch.setattr(highs_run, "STOP_GRACE", -1.0)
    built = HARD_MODELS["flow"]
    start = _warm(built, HARD)
    # HiGHS inside an LP answers no callback. Model that by a Stop its callbacks never see (they run
    # in HiGHS's own thread): on a busy machine a real callback could answer first, and the run would
    # end as an ordinary interruption instead of being abandoned.
    stop = _SeenByThisThreadOnly()
    threading.Timer(0.3, stop.set).start()  # once HiGHS runs
    result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=60, warm_start=start, stop=stop))
    assert result.status == Status.INTERRUPTED
    assert result.message == highs_run.ABANDONED + "."
    assert result.objective == pytest.approx(built.arrays.objective(start))
    # The abandoned run stops at its next callback; the next solve waits for it.
    small = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    after = BACKENDS["highs"].solve(small.arrays, SolveOptions(time_limit=30))
    assert after.status == Status.OPTIMAL


@pytest.mark.parametrize("by_user", [True, False])
def test_a_stop_before_highs_starts_does_not_start_it_and_says_why(by_user) -> None:
    """Stop (or the caller's deadline) already there when the model is handed over: HiGHS is not
    started (its presolve answers no Stop), the start is kept, and the status says who stopped it."""
    built = HARD_MODELS["flow"]
    start = _warm(built, HARD)
    user = threading.Event()
    if by_user:
        user.set()
    stop = StopOrDeadline(user, at=time.perf_counter() + (60.0 if by_user else -1.0))
    result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=60, warm_start=start, stop=stop))
    assert result.status == (Status.INTERRUPTED if by_user else Status.TIME_LIMIT)
    assert result.message == (highs_run.NOT_STARTED if by_user else highs_run.NOT_STARTED_AT_LIMIT) + "."
    assert result.objective == pytest.approx(built.arrays.objective(start))


def test_highs_stopped_by_the_callers_deadline_says_time_limit_not_interrupted(monkeypatch) -> None:
    """The backend reports why it stopped as data: a StopOrDeadline whose deadline passed (the user
    asked nothing) ends the run as TIME_LIMIT in the backend's own words, with no caller rewriting them."""
    monkeypatch.setattr(highs_run, "STOP_GRACE", -1.0)
    built = HARD_MODELS["flow"]
    start = _warm(built, HARD)
    user = threading.Event()
    deadline = StopOrDeadline(user, at=time.perf_counter() + 0.3)  # passes once HiGHS runs
    result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=60, warm_start=start, stop=deadline))
    assert deadline.is_set() and not deadline.by_user() and stop_status(deadline) == Status.TIME_LIMIT
    assert result.status == Status.TIME_LIMIT
    assert result.message == highs_run.ABANDONED_AT_LIMIT.format(grace=-1.0) + "."
    user.set()
    assert stop_status(deadline) == Status.INTERRUPTED and stop_status(user) == Status.INTERRUPTED
    small = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    assert BACKENDS["highs"].solve(small.arrays, SolveOptions(time_limit=30)).status == Status.OPTIMAL


@pytest.mark.timing
def test_highs_past_its_time_limit_is_left_behind_with_the_best_tree(monkeypatch) -> None:
    # HiGHS checks its own limit only between some steps (its root cut loop was seen 35 s
    # past a 60 s limit). A negative grace makes the run "late" before HiGHS's own limit.
    monkeypatch.setattr(highs_run, "STOP_GRACE", -1.0)
    built = HARD_MODELS["flow"]
    start = _warm(built, HARD)
    t0 = time.perf_counter()
    result = BACKENDS["highs"].solve(built.arrays, SolveOptions(time_limit=2.0, warm_start=start))
    assert time.perf_counter() - t0 < 2.0  # returned before HiGHS's own limit
    assert result.status == Status.TIME_LIMIT
    assert result.message == highs_run.ABANDONED_AT_LIMIT.format(grace=-1.0) + "."
    assert result.objective == pytest.approx(built.arrays.objective(start))
    # The run left behind stops at its own limit; the next solve waits for it.
    small = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    after = BACKENDS["highs"].solve(small.arrays, SolveOptions(time_limit=30))
    assert after.status == Status.OPTIMAL


def test_large_models_run_without_the_steps_highs_cannot_interrupt(monkeypatch) -> None:
    built = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    options = SolveOptions(time_limit=30)
    with highs_run.HighsSession():
        small = highs_run.new_highs(built.arrays, options)
        monkeypatch.setattr(highs_run, "UNINTERRUPTIBLE_NONZEROS", built.arrays.A.nnz - 1)
        large = highs_run.new_highs(built.arrays, options)
    def options_of(h):
        values = [h.getOptionValue(k) for k in ("presolve", "mip_heuristic_run_feasibility_jump")]
        return [v[-1] if isinstance(v, tuple) else v for v in values]

    assert options_of(small) == ["choose", True]
    assert options_of(large) == ["off", False]
    result = BACKENDS["highs"].solve(built.arrays, options)  # still solved to optimality without them
    assert result.status == Status.OPTIMAL


def test_a_violating_solution_becomes_an_error() -> None:
    built = build_model(SMALL[(0, False)], TreeSpec(depth=1), "flow")
    x = _warm(built, SMALL[(0, False)])
    x[built.arrays.index["b"][0]] = 1.0  # branch on every feature at once
    reporter = ProgressReporter(None, "max")
    result = finish(built.arrays, "test", Status.OPTIMAL, x, None, reporter)
    violation = built.arrays.max_violation(x)
    assert result.status == Status.ERROR and result.x is None
    assert result.message == VIOLATES_ROWS.format(backend="test", violation=violation)


def test_a_solution_violating_benders_cuts_becomes_an_error() -> None:
    data = SMALL[(0, False)]
    built = build_model(data, TreeSpec(depth=1), "benders")
    x = _warm(built, data)
    x[built.arrays.index["g"]] = 1.0  # claim every pattern is classified correctly
    n_wrong = int(built.arrays.separator(x)[0].shape[0])
    assert n_wrong > 0
    result = finish(built.arrays, "test", Status.OPTIMAL, x, None, ProgressReporter(None, "max"))
    assert result.status == Status.ERROR
    assert result.message == VIOLATES_CUTS.format(backend="test", n=n_wrong)


@pytest.mark.parametrize("status", [Status.INTERRUPTED, Status.TIME_LIMIT])
def test_stopped_on_a_candidate_before_its_cuts_keeps_the_best_checked_solution(status) -> None:
    # A Stop that lands between a candidate solution and its lazy cuts may leave the
    # solver holding the candidate: the best solution that passed the cuts stands.
    data = SMALL[(0, False)]
    built = build_model(data, TreeSpec(depth=1), "benders")
    good = _warm(built, data)
    assert built.arrays.separator(good)[0].shape[0] == 0
    bad = good.copy()
    bad[built.arrays.index["g"]] = 1.0
    reporter = ProgressReporter(None, "max")
    reporter.incumbent(good, built.arrays.objective(good), None, 0)
    result = finish(built.arrays, "test", status, bad, None, reporter)
    assert result.status == status and result.message == ""
    assert np.array_equal(result.x, good) and result.objective == built.arrays.objective(good)
    # Without such a solution, the candidate is still refused.
    empty = finish(built.arrays, "test", status, bad, None, ProgressReporter(None, "max"))
    assert empty.status == Status.ERROR and empty.x is None


def test_scip_benders_adding_one_cut_per_round_reaches_the_same_optimum(monkeypatch) -> None:
    pytest.importorskip("pyscipopt")
    from strongtree_core.solvers import scip_lazy

    data = SMALL[(0, False)]
    optimum = BACKENDS["highs"].solve(build_model(data, TreeSpec(depth=2), "flow").arrays, SolveOptions(time_limit=30))
    monkeypatch.setattr(scip_lazy, "MAX_CUTS_PER_ROUND", 1)
    result = BACKENDS["scip"].solve(build_model(data, TreeSpec(depth=2), "benders").arrays, SolveOptions(time_limit=60))
    assert result.status == Status.OPTIMAL and optimum.status == Status.OPTIMAL
    assert result.objective == pytest.approx(optimum.objective)


@pytest.mark.timing
def test_scip_does_not_start_a_model_it_cannot_read_in_the_time_left(monkeypatch) -> None:
    pytest.importorskip("pyscipopt")
    from strongtree_core.solvers import scip

    built = build_model(SMALL[(0, False)], TreeSpec(depth=2), "flow")
    nnz = built.arrays.A.nnz
    monkeypatch.setattr(scip, "READ_NONZEROS_PER_SECOND", nnz / 100.0)  # 100 s to read
    t0 = time.perf_counter()
    result = BACKENDS["scip"].solve(built.arrays, SolveOptions(time_limit=10))
    assert time.perf_counter() - t0 < 5
    assert result.status == Status.TIME_LIMIT_NO_TREE
    assert result.message.startswith(f"SCIP was not started: reading a model of {nnz:,} non-zeros takes about 100 s, more than the")
    monkeypatch.setattr(scip, "READ_NONZEROS_PER_SECOND", nnz / 1.0)  # 1 s: read and solved
    assert BACKENDS["scip"].solve(built.arrays, SolveOptions(time_limit=10)).status == Status.OPTIMAL


def test_progress_reporter_throttles_and_survives_a_failing_callback() -> None:
    events = []

    def callback(event) -> None:
        events.append(event)
        if len(events) == 2:
            raise RuntimeError("display closed")

    reporter = ProgressReporter(callback, "max", interval=60.0)
    reporter.tick(1.0, 5.0, 0)
    reporter.tick(1.0, 5.0, 1)  # throttled
    reporter.incumbent(np.zeros(2), 2.0, 5.0, 2)
    reporter.incumbent(np.ones(2), 1.5, 5.0, 3)  # not an improvement
    assert [e.nodes for e in events] == [0, 2]
    assert events[1].incumbent is not None and events[1].gap == pytest.approx(1.5)
    assert reporter.callback_error == "the progress callback raised RuntimeError: display closed"
    assert reporter.best_objective == 2.0


@pytest.mark.timing
def test_heartbeat_repeats_the_last_snapshot_while_the_solver_is_silent() -> None:
    events = []
    reporter = ProgressReporter(events.append, "max", interval=0.05)
    reporter.tick(3.0, 7.0, 11)
    with reporter.heartbeat():
        time.sleep(0.5)
    reporter.close()
    reporter.tick(4.0, 6.0, 12)  # after close: nothing is sent
    assert len(events) >= 3
    assert all((e.objective, e.bound, e.nodes) == (3.0, 7.0, 11) for e in events)
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)


def test_licence_keys_come_from_the_environment_or_the_app(monkeypatch) -> None:
    monkeypatch.setenv("WLSACCESSID", "access")
    monkeypatch.setenv("WLSSECRET", "secret")
    monkeypatch.setenv("LICENSEID", "12345")
    assert licence.licence_params() == {"WLSACCESSID": "access", "WLSSECRET": "secret", "LICENSEID": 12345}
    monkeypatch.setattr(licence, "_explicit_params", {})
    monkeypatch.setattr(licence, "_cached", [])
    licence.set_licence_params({"WLSSECRET": "from the app", "LICENSEID": None})
    assert licence.licence_params() == {"WLSACCESSID": "access", "WLSSECRET": "from the app", "LICENSEID": 12345}


def test_gurobi_counts_a_ranged_row_as_two_constraints() -> None:
    model = _random_milp(0, "min")
    # rows 0, 4, 6 are ranged, row 1 an equality, rows 2, 3, 5 one-sided
    assert gurobi_model_size(model) == (8, 10)


SHARED_SOYBEAN = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "categorical" / "soybean-small.csv"


@pytest.mark.skipif(not SHARED_SOYBEAN.exists(), reason="shared datasets not found")
def test_highs_resolve_loop_returns_the_solution_it_reports():
    """Regression: HiGHS reused after a warm start reported the optimum 23 while
    returning a solution worth 3 (soybean-small, paper split 1, depth 2)."""
    from sklearn.model_selection import train_test_split

    df = pd.read_csv(SHARED_SOYBEAN)
    train, _ = train_test_split(df, test_size=0.25, random_state=41)
    train, _ = train_test_split(train, test_size=0.33, random_state=41)
    y_raw = train.pop("target").to_numpy()
    classes, y = np.unique(y_raw, return_inverse=True)
    data = collapse_patterns(train.to_numpy(), y, classes.size)
    built = build_model(data, TreeSpec(depth=2), "benders")
    result = solve(built.arrays, "highs", SolveOptions(time_limit=30))
    assert result.status == Status.OPTIMAL
    tree = built.decode(result.x)
    assert result.objective == pytest.approx(23) and (tree.predict(data.X) == data.y).sum() == 23


PRIORITY_CASES = [case for case in SMALL_CASES if case.values[0] in ("scip", "gurobi")]


@pytest.mark.parametrize("name, built, data", PRIORITY_CASES)
def test_branch_priority_keeps_the_optimum(name: str, built: BuiltModel, data: PatternData) -> None:
    """Branching on the split variables b first changes the search, not the optimum."""
    from dataclasses import replace

    priority = np.zeros(built.arrays.n_cols, dtype=np.int64)
    priority[np.ravel(built.arrays.index["b"])] = 1
    result = BACKENDS[name].solve(replace(built.arrays, branch_priority=priority), SolveOptions(time_limit=30))
    assert result.status == Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(brute_force(data, built.spec.depth), abs=1e-6)
