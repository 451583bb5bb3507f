"""The exact search (``accel/search.py``) is exact: checked against truth from
outside it.

* Every tree of the depth, enumerated (``brute_force.all_trees``), with the
  bounds decided from the paper's definitions in exact fractions
  (``brute_force.holds``): depth 1-2 on up to 3 features, depth 3 on 2.
* scipy's MILP on formulation (11) at depth 3 on 3-4 features.
* A plain recursion over all splits (no bounds, no cache, no counting) for the
  dynamic program with arbitrary gains, depth 1-4.
* The known optima of the paper's datasets (``oracle_optimal.csv``).
* pystreed where it is installed.
"""

from __future__ import annotations

import math
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from brute_force import all_trees, holds, milp_solve, true_objective
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import ALL_CONSTRAINTS, problems

from strongtree_core.accel.dp import GainDP, depth_two, tree_to_structure
from strongtree_core.accel.lagrange import Prices, measure_tree
from strongtree_core.accel.problem import linear_problem
from strongtree_core.accel.search import exact_solve
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import build_model
from strongtree_core.formulation.fairness_constraints import EqualizedOdds, StatisticalParity
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.quality_constraints import MinPrecision, MinRecall, MinSpecificity
from strongtree_core.formulation.spec import TreeSpec

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ truth
def brute_optimum(X, y, group, legit, weight, spec: TreeSpec, kinds_bounds, n_classes: int):
    """Best objective over every tree meeting every bound (None if none does)."""
    best = None
    counts = np.ones(len(y))
    for tree in all_trees(spec.depth, X.shape[1], n_classes):
        if spec.max_branching is not None and tree.n_branching > spec.max_branching:
            continue
        if spec.max_features_used is not None and len(tree.features_used) > spec.max_features_used:
            continue
        leaves = tree.apply(X)
        if spec.min_leaf and any(counts[leaves == n].sum() < spec.min_leaf for n in tree.leaves):
            continue
        pred = tree.predict(X)
        if not all(holds(k, b, y, pred, group, legit, spec.pos_label) for k, b in kinds_bounds):
            continue
        value = _objective(spec, y, pred, weight, tree.n_branching)
        best = value if best is None else max(best, value)
    return best


def _objective(spec: TreeSpec, y, pred, weight, n_branching: int) -> float:
    lam = Fraction(str(spec.lambda_))
    if weight is None:
        core = true_objective(spec.objective, y, pred, spec.pos_label)
    else:  # accuracy with weights
        core = Fraction(str(float(weight[pred == y].sum())))
    return float((1 - lam) * core - lam * n_branching)


def check_against_brute_force(X, y, group, legit, weight, spec, kinds, n_classes) -> None:
    data = collapse_patterns(X, y, n_classes, sample_weight=weight, group=group, legit=legit)
    truth = brute_optimum(X, y, group, legit, weight, spec, kinds, n_classes)
    res = exact_solve(data, spec, time_limit=60)
    if truth is None:
        assert res.status == "infeasible", (res, spec)
        return
    assert res.status == "optimal", (res, spec, truth)
    pred = res.structure.predict(X)
    assert all(holds(k, b, y, pred, group, legit, 1) for k, b in kinds)
    assert _objective(spec, y, pred, weight, res.structure.n_branching) == pytest.approx(truth, abs=1e-9)
    assert res.objective == pytest.approx(truth, abs=1e-9)
    assert res.bound == pytest.approx(truth, abs=1e-9)


# ------------------------------------------------------- exact = brute force
@PROPERTY
@given(problem=problems(max_depth=2))
def test_every_objective_and_constraint_against_brute_force(problem) -> None:
    check_against_brute_force(*problem)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_depth=2), seed=st.integers(0, 2**32 - 1))
def test_depth_three_against_the_milp_with_any_constraints(problem, seed) -> None:
    """Depth 3 on three features: formulation (11) solved by scipy's MILP is the truth
    (brute force over the million trees would take minutes)."""
    X, y, group, legit, weight, spec, kinds, n_classes = problem
    rng = np.random.default_rng(seed)
    X = np.hstack([X, rng.integers(0, 2, (X.shape[0], 3))])[:, :3]
    from dataclasses import replace

    spec = replace(spec, depth=3)
    data = collapse_patterns(X, y, n_classes, sample_weight=weight, group=group, legit=legit)
    model = build_model(data, spec, "flow").arrays
    x = milp_solve(model)
    res = exact_solve(data, spec, time_limit=60)
    if x is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal"
    assert res.objective == pytest.approx(model.objective(x), abs=1e-5)
    pred = res.structure.predict(X)
    assert all(holds(k, b, y, pred, group, legit, 1) for k, b in kinds)


@pytest.mark.parametrize("seed", range(6))
def test_depth_three_against_the_milp(seed) -> None:
    """Formulation (11) solved by scipy's MILP: an independent exact method at depth 3."""
    rng = np.random.default_rng(100 + seed)
    n, F = 16, 3 + seed % 2
    X = rng.integers(0, 2, (n, F))
    group = rng.integers(0, 2 + seed % 2, n)
    y = ((X[:, 0] + X[:, 1] + (group == 0) + rng.random(n)) > 1.8).astype(int)
    constraint = [StatisticalParity(0.1, 1), EqualizedOdds(0.2, 1), MinRecall(0.8, 1), MinPrecision(0.7, 1),
                  MinSpecificity(0.6, 1), StatisticalParity(0.0, 1)][seed]
    spec = TreeSpec(depth=3, pos_label=1, lambda_=0.05 if seed % 3 == 0 else 0.0, side_constraints=(constraint,))
    data = collapse_patterns(X, y, 2, group=group)
    model = build_model(data, spec, "flow").arrays
    x = milp_solve(model)
    res = exact_solve(data, spec, time_limit=60)
    if x is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal"
    assert res.objective == pytest.approx(model.objective(x), abs=1e-6)
    assert tree_objective(data, spec, res.structure) == pytest.approx(res.objective, abs=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_depth=2))
def test_an_incumbent_one_row_below_the_optimum_is_beaten(problem) -> None:
    """Started from a feasible tree one correct row short of the optimum, the search
    must still find the optimum (values are integers: a step of exactly one row)."""
    from dataclasses import replace

    X, y, group, legit, _, spec, kinds, n_classes = problem
    spec = replace(spec, objective="accuracy", lambda_=0.0)
    if not spec.side_constraints:
        spec = replace(spec, side_constraints=(StatisticalParity(0.1, 1),))
        kinds = [("statistical_parity", 0.1)]
    truth = brute_optimum(X, y, group, legit, None, spec, kinds, n_classes)
    if truth is None:
        return
    below = None
    for tree in all_trees(spec.depth, X.shape[1], n_classes):
        pred = tree.predict(X)
        if spec.max_branching is not None and tree.n_branching > spec.max_branching:
            continue
        if spec.max_features_used is not None and len(tree.features_used) > spec.max_features_used:
            continue
        if spec.min_leaf and any((tree.apply(X) == n).sum() < spec.min_leaf for n in tree.leaves):
            continue
        if (pred == y).sum() == truth - 1 and all(holds(k, b, y, pred, group, legit, 1) for k, b in kinds):
            below = tree
            break
    if below is None:
        return
    data = collapse_patterns(X, y, n_classes, group=group, legit=legit)
    res = exact_solve(data, spec, time_limit=60, starts=(below,))
    assert res.status == "optimal" and res.objective == truth


def _random_prices(p, rng) -> Prices:
    """Prices from "barely felt" to "dominates every gain", per row."""
    scale = 1.0 / np.maximum(np.abs(p.U).max(axis=(0, 1)), 1.0) if p.n_rows else np.zeros(0)
    price = lambda: scale * 10.0 ** rng.uniform(-3, 1, p.n_rows)  # noqa: E731
    return Prices(rng.dirichlet(np.ones(p.n_parts)), price() * np.isfinite(p.hi), price() * np.isfinite(p.lo),
                  float(rng.exponential(0.5)) if p.max_branching is not None else 0.0)


def _branch_and_bound(data, spec, prices_seed: int | None, starts=()):
    """One full pass of the branch-and-bound with random prices (any prices must do);
    ``prices_seed=None``: no prices, so the relaxed value of every tree is its value."""
    from strongtree_core.accel.dp import NEG, Deadline, structure_to_tree
    from strongtree_core.accel.search import _BranchAndBound, _Run

    p = linear_problem(data, spec)
    run = _Run(p, Deadline(), None, time.perf_counter())
    for tree in starts:
        run.offer(measure_tree(p, structure_to_tree(tree)))
    if prices_seed is None:
        prices = Prices(np.full(p.n_parts, 1.0 / p.n_parts), np.zeros(p.n_rows), np.zeros(p.n_rows))
    else:
        prices = _random_prices(p, np.random.default_rng(prices_seed))
    _BranchAndBound(run, prices).run(NEG)
    return None if run.best is None else run.best_value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_depth=2), seed=st.integers(0, 2**32 - 1))
def test_branch_and_bound_is_exact_for_any_prices(problem, seed) -> None:
    X, y, group, legit, weight, spec, kinds, n_classes = problem
    data = collapse_patterns(X, y, n_classes, sample_weight=weight, group=group, legit=legit)
    truth = brute_optimum(X, y, group, legit, weight, spec, kinds, n_classes)
    found = _branch_and_bound(data, spec, seed)
    assert (found is None) == (truth is None)
    if truth is not None:
        assert found == pytest.approx(truth, abs=1e-9)


@pytest.mark.parametrize("seed,bound", [(0, 0.2), (1, 0.2), (2, 1.0), (3, 1.0)])
def test_branch_and_bound_at_depth_three_for_any_prices(seed, bound) -> None:
    """Two open depth-2 nodes below the root: the lists of subtrees are combined
    exactly, from a start one row short of the optimum or from nothing.  With a
    bound that never binds (1.0) and no prices, the relaxed value of the optimum
    is exactly one row above the start: a search that cut by more would miss it."""
    rng = np.random.default_rng(seed)
    n = 14
    X, group, y = rng.integers(0, 2, (n, 2)), rng.integers(0, 2, n), rng.integers(0, 2, n)
    kinds = [("statistical_parity", bound), ("min_recall", 0.5)]
    spec = TreeSpec(depth=3, pos_label=1, side_constraints=(StatisticalParity(bound, 1), MinRecall(0.5, 1)))
    feasible = {}
    for tree in all_trees(3, 2, 2):
        pred = tree.predict(X)
        value = int((pred == y).sum())
        if value not in feasible and all(holds(k, b, y, pred, group, None, 1) for k, b in kinds):
            feasible[value] = tree
    optimum = max(feasible)
    data = collapse_patterns(X, y, 2, group=group)
    starts = (feasible[optimum - 1],) if optimum - 1 in feasible else ()
    for prices_seed in (None, 0, 1):
        assert _branch_and_bound(data, spec, prices_seed, starts) == optimum
        assert _branch_and_bound(data, spec, prices_seed) == optimum


@pytest.mark.parametrize("seed", [9, 26, 31, 80, 178, 180])
def test_tight_floors_find_a_feasible_tree_or_prove_there_is_none(seed, monkeypatch) -> None:
    """Recall and precision floors that no tree the objective's prices meet: the search
    turns to the constraints' slack alone, and either finds a feasible tree or proves
    there is none, as brute force says."""
    from strongtree_core.accel import search

    ran = []
    original = search._Run.infeasible
    monkeypatch.setattr(search._Run, "infeasible", lambda self: ran.append(1) or original(self))
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(10, 24)), int(rng.integers(2, 4))
    X, y, group = rng.integers(0, 2, (n, F)), rng.integers(0, 2, n), rng.integers(0, 2, n)
    kinds = [("min_recall", float(rng.choice([0.6, 0.7, 0.8]))), ("min_precision", float(rng.choice([0.6, 0.7, 0.8])))]
    if rng.random() < 0.5:
        kinds.append(("statistical_parity", 0.1))
    spec = TreeSpec(depth=int(rng.integers(1, 3)), pos_label=1,
                    side_constraints=tuple(ALL_CONSTRAINTS[k](b, 1) for k, b in kinds))
    truth = brute_optimum(X, y, group, None, None, spec, kinds, 2)
    res = exact_solve(collapse_patterns(X, y, 2, group=group), spec, time_limit=30)
    assert ran, "the instance no longer needs the search for a feasible tree: pick another seed"
    if truth is None:
        assert res.status == "infeasible"
    else:
        assert res.status == "optimal" and res.objective == truth


# --------------------------------------------- the dynamic program's pruning
def plain_recursion(X, s, count, idx, depth, pen, min_leaf):
    """best(D, d) by trying every split: no bounds, no cache, no counting."""
    sums = s[idx].sum(axis=0)
    best = float(sums.max()) if count[idx].sum() >= min_leaf else -math.inf
    if depth == 0:
        return best
    for f in range(X.shape[1]):
        left, right = idx[X[idx, f] == 0], idx[X[idx, f] == 1]
        if left.size == 0 or right.size == 0:
            continue
        value = plain_recursion(X, s, count, left, depth - 1, pen, min_leaf) + \
            plain_recursion(X, s, count, right, depth - 1, pen, min_leaf) - pen
        best = max(best, value)
    return best


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(1, 4), K=st.integers(2, 3),
       F=st.integers(1, 4), min_leaf=st.sampled_from([0, 0, 2, 5]), pen=st.sampled_from([0.0, 0.3, 2.0]))
def test_dynamic_program_equals_the_plain_recursion(seed, depth, K, F, min_leaf, pen) -> None:
    """Arbitrary gains (negative ones too): the bounds, similarity bounds, cache and the
    counting kernel of depth 2 change nothing in the optimum, and the tree it returns
    is worth what it says."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    X = rng.integers(0, 2, (n, F)).astype(float)
    s = rng.normal(size=(n, K)).round(2)
    count = rng.integers(1, 3, n).astype(float)
    idx = np.arange(n)
    truth = plain_recursion(X, s, count, idx, depth, pen, min_leaf)
    dp = GainDP(X, count, s, pen, min_leaf)
    value, tree = dp.exact(idx, depth)
    assert value == pytest.approx(truth, abs=1e-9)
    if math.isfinite(truth):
        structure = tree_to_structure(tree, depth)
        pred = structure.predict(X)
        assert s[idx, pred].sum() - pen * structure.n_branching == pytest.approx(value, abs=1e-9)
        # a floor below the optimum gives the optimum; at or above it, nothing
        assert dp.best(idx, depth, value - 0.5)[0] == pytest.approx(value)
        assert GainDP(X, count, s, pen, min_leaf).best(idx, depth, value + 1e-6) is None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(2, 3), min_leaf=st.sampled_from([0, 3]))
def test_depth_two_counting_kernel_equals_the_plain_recursion(seed, K, min_leaf) -> None:
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(2, 30)), int(rng.integers(1, 6))
    X = rng.integers(0, 2, (n, F)).astype(float)
    s = rng.normal(size=(n, K))
    count = np.ones(n)
    for depth in (0, 1, 2):
        value, _ = depth_two(X, s, count, depth, 0.2, min_leaf)
        assert value == pytest.approx(plain_recursion(X, s, count, np.arange(n), depth, 0.2, min_leaf), abs=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), min_leaf=st.sampled_from([0, 2, 6]), dense=st.booleans())
def test_compiled_kernel_equals_the_numpy_kernel(seed, min_leaf, dense, monkeypatch) -> None:
    """Both ways of summing pairs (lists of ones, matrix products) give the numpy
    kernel's optimum, and the tree they describe is worth it."""
    from strongtree_core.accel import kernels

    if not kernels.library.usable():  # a direct call compiles here if the built library is not there yet
        pytest.skip("numba is not installed")
    monkeypatch.setattr(kernels, "DENSE_SPEEDUP", 1e-9 if dense else 1e9)
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(2, 40)), int(rng.integers(1, 9))
    X = (rng.random((n, F)) < rng.uniform(0.1, 0.9)).astype(float)
    s = rng.normal(size=(n, 2))
    count = rng.integers(1, 4, n).astype(float)
    rows, cols = np.nonzero(X > 0.5)
    indptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
    sub = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
    value, code = kernels.depth_two_binary(X, indptr, cols.astype(np.int64), sub, s[:, 1] - s[:, 0], s[:, 0].copy(),
                                           count, 0.3, min_leaf)
    expected, _ = depth_two(X[sub], s[sub], count[sub], 2, 0.3, min_leaf)
    assert value == pytest.approx(expected, abs=1e-9)
    if math.isfinite(value):
        structure = tree_to_structure(kernels.tree_of(code), 2)
        pred = structure.predict(X[sub])
        assert s[sub, pred].sum() - 0.3 * structure.n_branching == pytest.approx(value, abs=1e-9)
        leaves = structure.apply(X[sub])
        assert all(count[sub][leaves == leaf].sum() >= min_leaf for leaf in structure.leaves)


# ---------------------------------------------------- the Lagrangian bound
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(max_depth=2), seed=st.integers(0, 2**32 - 1))
def test_lagrangian_value_bounds_every_feasible_tree_for_any_prices(problem, seed) -> None:
    """L(y) >= f(T) for every feasible T and every prices y >= 0 (alpha in the simplex)."""
    X, y, group, legit, weight, spec, kinds, n_classes = problem
    data = collapse_patterns(X, y, n_classes, sample_weight=weight, group=group, legit=legit)
    p = linear_problem(data, spec)
    rng = np.random.default_rng(seed)
    prices = _random_prices(p, rng)
    dp = GainDP(p.X, p.count, prices.scores(p), prices.penalty(p), p.min_leaf)
    value, _ = dp.exact(np.arange(p.n_patterns), spec.depth)
    truth = brute_optimum(X, y, group, legit, weight, spec, kinds, n_classes)
    assert np.isfinite(value)  # the priced program always has a best tree
    if truth is not None:  # (no feasible tree: nothing to bound)
        assert value + prices.constant(p) >= truth - 1e-9


# ----------------------------------------------- stops, limits, infeasibility
def _hard_problem(seed: int = 0, n: int = 3000, F: int = 30, depth: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, F))
    group = rng.integers(0, 4, n)
    y = ((X[:, :6].sum(axis=1) + group + rng.normal(0, 1.5, n)) > 4.5).astype(int)
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=depth, pos_label=1, side_constraints=(EqualizedOdds(0.01, 1),))
    return data, spec


@pytest.mark.timing
def test_time_limit_is_kept_and_the_bound_stays_valid() -> None:
    data, spec = _hard_problem()
    t0 = time.perf_counter()
    res = exact_solve(data, spec, time_limit=2.0)
    wall = time.perf_counter() - t0
    assert wall <= 2.0 + 1.0
    assert res.status == "stopped"
    if res.structure is not None and res.bound is not None:
        assert res.bound >= res.objective
        assert tree_objective(data, spec, res.structure) == pytest.approx(res.objective)


@pytest.mark.timing
def test_stop_request_returns_within_a_second() -> None:
    data, spec = _hard_problem(seed=1)
    stop = threading.Event()
    threading.Timer(0.8, stop.set).start()
    t0 = time.perf_counter()
    res = exact_solve(data, spec, time_limit=60, stop=stop)
    assert time.perf_counter() - t0 <= 0.8 + 1.0
    assert res.status == "stopped"


def test_a_stopped_search_keeps_a_bound_no_feasible_tree_beats() -> None:
    """Stop at several moments; every reported bound is at least the optimum
    the search proves when given time, and every tree meets the constraints."""
    rng = np.random.default_rng(3)
    n, F = 400, 12
    X = rng.integers(0, 2, (n, F))
    group = rng.integers(0, 3, n)
    y = ((X[:, :4].sum(axis=1) + group + rng.normal(0, 1, n)) > 3).astype(int)
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=3, pos_label=1, side_constraints=(EqualizedOdds(0.02, 1), MinRecall(0.6, 1)))
    full = exact_solve(data, spec, time_limit=120)
    assert full.status == "optimal"
    reports = []
    for limit in (0.02, 0.1, 0.3):
        res = exact_solve(data, spec, time_limit=limit,
                          report=lambda o, b, n, t, m: reports.append((o, b)))
        if res.bound is not None:
            assert res.bound >= full.objective - 1e-9
        if res.structure is not None:
            assert res.objective <= full.objective + 1e-9
    assert all(b >= full.objective - 1e-9 for _, b in reports if b is not None)
    assert all(o <= full.objective + 1e-9 for o, _ in reports if o is not None)


def _distinct_rows(seed: int, n: int = 3000, F: int = 60):
    """A table where every row could be right (no two rows alike with different classes)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, F))
    y = ((X[:, :8].sum(axis=1) + rng.normal(0, 1.5, n)) > 4).astype(int)
    return X, y


def test_a_search_stopped_before_it_proves_anything_reports_no_bound() -> None:
    """A bound of every row right says nothing: a search stopped before it proves more
    reports none (in its result and in every report while it runs), not the row count;
    with rows alike of different classes, every pattern at its best class is a real bound
    (below the rows) and is reported."""
    X, y = _distinct_rows(11)
    data = collapse_patterns(X, y, 2)
    assert data.n_patterns == data.n_rows
    reports = []
    res = exact_solve(data, TreeSpec(depth=5), time_limit=0.3, report=lambda o, b, n, t, m: reports.append(b))
    assert res.status == "stopped" and res.structure is not None
    assert res.bound is None and reports and all(b is None for b in reports)
    # half the rows again with the other class: those patterns cannot all be right
    twins = np.arange(0, 3000, 2)
    X2, y2 = np.vstack([X, X[twins]]), np.concatenate([y, 1 - y[twins]])
    data2 = collapse_patterns(X2, y2, 2)
    best_class = data2.count.sum() - twins.size  # each twin pattern: one of its two rows right at most
    res2 = exact_solve(data2, TreeSpec(depth=5), time_limit=0.3)
    assert res2.status == "stopped"
    assert res2.bound == pytest.approx(best_class) and res2.bound < data2.count.sum()


@pytest.mark.parametrize("seed", range(6))
def test_the_alike_rows_bound_is_the_full_trees_optimum_and_above_every_shallower(seed) -> None:
    """Rows alike in every feature, of different classes: the bound from them is the optimum
    of a tree deep enough to separate every distinct row (depth = features), and at least
    the optimum at every depth (by every tree), with weights, balanced accuracy and the worst
    class's accuracy (one part per class: there the bound holds, above the optimum)."""
    from strongtree_core.accel.search import alike_rows_bound

    rng = np.random.default_rng(50 + seed)
    n, F = 30, 2
    X, y = rng.integers(0, 2, (n, F)), rng.integers(0, 2, n)
    weight = rng.integers(1, 4, n).astype(float) if seed % 2 else None
    data = collapse_patterns(X, y, 2, sample_weight=weight)
    for objective in ("accuracy", "balanced_accuracy", "worst_case_accuracy"):
        bound = alike_rows_bound(linear_problem(data, TreeSpec(depth=F, objective=objective)))
        for depth in range(1, F + 1):
            spec = TreeSpec(depth=depth, objective=objective)
            optimum = max(tree_objective(data, spec, t) for t in all_trees(depth, F, 2))
            assert bound >= optimum - 1e-9
            if depth == F and objective != "worst_case_accuracy":  # (one part: each set's best class is a tree's)
                assert bound == pytest.approx(optimum)


def test_the_words_of_a_stopped_fit_say_no_bound_yet() -> None:
    """The record of a fit stopped before a bound: bound None, and the words of the
    dashboard and the report say "none yet" (a heuristic's, "none"), a bound "at most"."""
    import warnings

    from strongtree_core import StrongTreeClassifier
    from strongtree_core.report.build import ReportInput, build_report
    from strongtree_core.words import NO_BOUND_HEURISTIC, NO_BOUND_YET, bound_words

    X, y = _distinct_rows(12)
    table = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])]).assign(target=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StrongTreeClassifier(depth=5, time_limit=0.5).fit(table.drop(columns="target"), table["target"])
        html = build_report(ReportInput(model.tree_, table, None, "t.csv", settings={"objective": "accuracy"}))
    record = model.record_
    assert record.status == "time_limit" and record.bound is None and record.gap is None
    assert bound_words(record.bound, record.status) == NO_BOUND_YET == "none yet"
    assert bound_words(None, "heuristic") == NO_BOUND_HEURISTIC
    assert bound_words(631.0, "time_limit") == "631"
    # a bound says what it caps, no more: "at most" so many rows right
    assert bound_words(700.0, "time_limit", "accuracy", 0.0, 768) == "at most 700 correct rows (91.1%)"
    assert "<dt>Bound</dt><dd>none yet (nothing proven about the distance to the best tree)</dd>" in html
    assert "No bound yet: nothing is proven about how far it is from the best tree." in html


def test_infeasibility_is_proven() -> None:
    X = np.zeros((8, 2), dtype=int)  # identical rows, both labels
    y = np.array([1, 0, 1, 0, 1, 0, 1, 1])
    data = collapse_patterns(X, y, 2)
    spec = TreeSpec(depth=3, pos_label=1, side_constraints=(MinRecall(1.0, 1), MinSpecificity(0.5, 1)))
    res = exact_solve(data, spec, time_limit=10)
    assert res.status == "infeasible" and res.structure is None


def test_min_leaf_larger_than_the_table_is_infeasible() -> None:
    data = collapse_patterns(np.eye(4, dtype=int), np.array([0, 1, 0, 1]), 2)
    res = exact_solve(data, TreeSpec(depth=2, min_leaf=5), time_limit=5)
    assert res.status == "infeasible"


def test_unconstrained_accuracy_is_the_dynamic_program_alone() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (200, 8))
    y = (X[:, 0] ^ X[:, 1]).astype(int)
    data = collapse_patterns(X, y, 2)
    res = exact_solve(data, TreeSpec(depth=2), time_limit=10)
    assert res.status == "optimal" and res.objective == 200
    assert "dynamic programming" in res.reason


def test_constraint_quantities_accept_exactly_the_trees_that_meet_the_bounds() -> None:
    """The rows taken from the side constraints, evaluated on a tree's quantities,
    accept a tree exactly when the definitions say it meets every bound."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (30, 3))
    y = rng.integers(0, 2, 30)
    group = rng.integers(0, 3, 30)
    legit = rng.integers(0, 2, 30)
    data = collapse_patterns(X, y, 2, group=group, legit=legit)
    kinds = [("equalized_odds", 0.2), ("min_precision", 0.5), ("conditional_statistical_parity", 0.25)]
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=tuple(ALL_CONSTRAINTS[k](b, 1) for k, b in kinds))
    p = linear_problem(data, spec)
    seen = set()
    for tree in all_trees(2, 3, 2):
        pred = tree.predict(X)
        m = measure_tree(p, _nested(tree))
        ok = all(holds(k, b, y, pred, group, legit, 1) for k, b in kinds)
        seen.add(ok)
        assert p.feasible(m.q) == ok
    assert seen == {True, False}  # both kinds of tree are met


def _nested(structure):
    from strongtree_core.accel.dp import structure_to_tree

    return structure_to_tree(structure)


# ------------------------------------------------------------ known optima
@pytest.mark.skipif(not (DATA / "oracle_optimal.csv").exists(), reason="the benchmark data is not in ../shared/datasets")
def test_paper_datasets_match_the_oracle_up_to_depth_four() -> None:
    oracle = pd.read_csv(DATA / "oracle_optimal.csv")
    for name, rows in oracle.groupby("dataset", sort=False):
        df = pd.read_csv(DATA / "categorical" / f"{name}.csv")
        labels = df.pop("target").to_numpy()
        classes, y = np.unique(labels, return_inverse=True)
        data = collapse_patterns(df.to_numpy(), y, classes.size)
        for row in rows.itertuples():
            if row.depth > 4:
                continue
            res = exact_solve(data, TreeSpec(depth=int(row.depth)), time_limit=60)
            assert res.status == "optimal"
            assert res.objective == row.n_rows - row.optimal_misclassified, (name, row.depth)


# ---------------------------------------------------------------- pystreed
def test_agrees_with_pystreed_on_statistical_parity_where_installed() -> None:
    pytest.importorskip("pystreed", reason="pystreed is an optional cross-check: pip install -r requirements-crosscheck.txt")
    from strongtree_core.accel import streed_solve

    rng = np.random.default_rng(11)
    n, F = 300, 10
    X = rng.integers(0, 2, (n, F))
    group = rng.integers(0, 2, n)
    y = ((X[:, :3].sum(axis=1) + group + rng.normal(0, 1, n)) > 2).astype(int)
    data = collapse_patterns(X, y, 2, group=group)
    for delta in (0.02, 0.05, 0.1):
        spec = TreeSpec(depth=3, pos_label=1, side_constraints=(StatisticalParity(delta, 1),))
        ours = exact_solve(data, spec, time_limit=60)
        theirs = streed_solve(data, spec, time_limit=60)
        assert ours.status == "optimal"
        if theirs.certified:
            assert ours.objective == pytest.approx(theirs.objective)


def _random_shape(rng, depth: int, n_features: int):
    """A random tree shape (nested ``(feature, left, right)``, leaves 0) of at most ``depth``."""
    if depth == 0 or rng.random() < 0.2:
        return 0
    return (int(rng.integers(n_features)), _random_shape(rng, depth - 1, n_features),
            _random_shape(rng, depth - 1, n_features))


def _first_best_labelling(problem, tree):
    """Every labelling of the leaves, in the order of ``itertools.product`` (leaf 0's class
    changes slowest): the first of the best feasible ones, summed in exact fractions (None when
    none is feasible)."""
    import itertools

    from strongtree_core.accel.relabel import _leaves, _with_labels

    leaves = _leaves(problem, tree)
    G = [[[Fraction(float(v)) for v in problem.G[idx, k].sum(axis=0)] for k in range(problem.n_classes)]
         for idx in leaves]
    U = [[problem.U[idx, k].sum(axis=0) for k in range(problem.n_classes)] for idx in leaves]
    best, best_value = None, None
    for labels in itertools.product(range(problem.n_classes), repeat=len(leaves)):
        parts = [sum(G[leaf][k][j] for leaf, k in enumerate(labels)) for j in range(problem.n_parts)]
        q = sum((U[leaf][k] for leaf, k in enumerate(labels)), np.zeros(problem.n_rows))
        if not problem.feasible(q):
            continue
        if best_value is None or min(parts) > best_value:
            best, best_value = labels, min(parts)
    return None if best is None else _with_labels(tree, list(best))


@pytest.mark.parametrize("seed", range(12))
def test_best_labels_is_the_first_best_labelling_of_all(seed) -> None:
    """The relabelling of a tree's leaves against every labelling, counted exactly: with one
    objective part and no constraint (each leaf its own best class), with several parts, with
    a fairness row; row counts and whole weights, so ties between classes are common (the
    very labelling where the parts are whole numbers, its value where they are fractions)."""
    from strongtree_core.accel.relabel import best_labels

    rng = np.random.default_rng(seed)
    n, F, K = int(rng.integers(6, 30)), 4, int(rng.integers(2, 4))
    X = rng.integers(0, 2, (n, F))
    y = rng.integers(0, K, n)
    weight = rng.integers(1, 4, n).astype(float) if seed % 2 else None
    group = rng.integers(0, 2, n)
    data = collapse_patterns(X, y, K, sample_weight=weight, group=group)
    specs = [TreeSpec(depth=3), TreeSpec(depth=3, objective="worst_case_accuracy")]
    if K == 2:
        specs.append(TreeSpec(depth=3, pos_label=1, side_constraints=(StatisticalParity(0.2, 1),)))
    for spec in specs:
        problem = linear_problem(data, spec)
        whole = bool(np.all(problem.G == np.round(problem.G)))
        for _ in range(6):
            tree = _random_shape(rng, 3, F)
            found, truth = best_labels(problem, tree, 0), _first_best_labelling(problem, tree)
            if whole:  # exact sums: the very labelling
                assert found == truth
            else:  # the worst-case parts are fractions: float sums may break a tie either way
                assert (found is None) == (truth is None)
                if truth is not None:
                    assert math.isclose(measure_tree(problem, found).parts.min(),
                                        measure_tree(problem, truth).parts.min(), rel_tol=1e-9)
