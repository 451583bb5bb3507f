"""The exhaustive search of depth-1 and depth-2 trees against brute force:
every objective, side constraint and structural bound, the proven bound of a
stopped search, and its refusals."""

from __future__ import annotations

import threading
from fractions import Fraction
from unittest.mock import patch

import numpy as np
import pytest
from brute_force import all_trees, holds, true_objective
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import BOUNDS, Instance, instances

from strongtree_core.accel import enumeration
from strongtree_core.accel.enumeration import count_trees, enumerate_solve, supported
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS, StatisticalParity
from strongtree_core.formulation.quality_constraints import QUALITY_CONSTRAINTS
from strongtree_core.formulation.spec import TreeSpec

ALL_CONSTRAINTS = {**QUALITY_CONSTRAINTS, **FAIRNESS_NOTIONS}


def brute_force_optimum(inst: Instance, spec: TreeSpec, chosen, pos: int) -> Fraction | None:
    """Best objective over every tree that meets every bound (None: none does)."""
    best = None
    for tree in all_trees(inst.depth, inst.X.shape[1], inst.n_classes):
        if spec.max_branching is not None and tree.n_branching > spec.max_branching:
            continue
        if spec.max_features_used is not None and tree.features_used.size > spec.max_features_used:
            continue
        if spec.min_leaf:
            reached = tree.apply(inst.X)
            if any((reached == leaf).sum() < spec.min_leaf for leaf in tree.leaves):
                continue
        pred = tree.predict(inst.X)
        if not all(holds(k, b, inst.y, pred, inst.group, inst.legit, pos) for k, b in chosen):
            continue
        lam = Fraction(str(spec.lambda_))
        value = (1 - lam) * true_objective(spec.objective, inst.y, pred, pos) - lam * tree.n_branching
        best = value if best is None else max(best, value)
    return best


def check_against_brute_force(inst: Instance, spec: TreeSpec, chosen, pos: int) -> None:
    res = enumerate_solve(inst.data, spec)
    with patch.object(enumeration, "BAND", 7), patch.object(enumeration, "HISTOGRAM_BINS", 5):
        banded = enumerate_solve(inst.data, spec)  # many small bands of values
    assert banded.status == res.status and banded.objective == res.objective
    best = brute_force_optimum(inst, spec, chosen, pos)
    if best is None:
        assert res.status == "infeasible" and res.structure is None
        return
    assert res.status == "optimal" and res.certified
    assert res.objective == pytest.approx(float(best), abs=1e-9)
    pred = res.structure.predict(inst.X)
    for k, b in chosen:
        assert holds(k, b, inst.y, pred, inst.group, inst.legit, pos)
    if spec.max_branching is not None:
        assert res.structure.n_branching <= spec.max_branching
    if spec.max_features_used is not None:
        assert res.structure.features_used.size <= spec.max_features_used
    assert res.structure.is_valid()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(),
    chosen=st.lists(st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), BOUNDS), min_size=0, max_size=2, unique_by=lambda t: t[0]),
    pos=st.integers(0, 1),
    objective=st.sampled_from(["accuracy", "balanced_accuracy", "worst_case_accuracy", "sensitivity"]),
    lambda_=st.sampled_from([0.0, 0.0, 0.1, 0.4]),
    min_leaf=st.sampled_from([0, 0, 2, 4]),
    max_branching=st.sampled_from([None, 1, 2]),
    max_features_used=st.sampled_from([None, 1]),
)
def test_enumeration_equals_brute_force(inst, chosen, pos, objective, lambda_, min_leaf, max_branching, max_features_used) -> None:
    assume(objective != "sensitivity" or (inst.y == pos).any())  # undefined objective: refused by the model builder
    spec = TreeSpec(
        depth=inst.depth, lambda_=lambda_, objective=objective, pos_label=pos, min_leaf=min_leaf,
        max_branching=max_branching, max_features_used=max_features_used,
        side_constraints=tuple(ALL_CONSTRAINTS[k](b, pos) for k, b in chosen),
    )
    check_against_brute_force(inst, spec, chosen, pos)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(n_classes=3, max_columns=2),
    chosen=st.lists(st.tuples(st.sampled_from(sorted(ALL_CONSTRAINTS)), BOUNDS), min_size=1, max_size=2, unique_by=lambda t: t[0]),
    pos=st.integers(0, 2),
    objective=st.sampled_from(["accuracy", "balanced_accuracy", "worst_case_accuracy"]),
)
def test_enumeration_three_classes(inst, chosen, pos, objective) -> None:
    spec = TreeSpec(depth=inst.depth, objective=objective, pos_label=pos,
                    side_constraints=tuple(ALL_CONSTRAINTS[k](b, pos) for k, b in chosen))
    check_against_brute_force(inst, spec, chosen, pos)


def _parity_instance(seed: int = 3, n: int = 300, f: int = 6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, f))
    group = rng.integers(0, 3, size=n)
    y = ((X[:, 0] + X[:, 1] + (group == 0) + rng.random(n)) > 1.8).astype(int)
    return collapse_patterns(X, y, 2, group=group)


def test_tree_count_matches_brute_force() -> None:
    for depth in (1, 2):
        assert count_trees(depth, 3, 2) == sum(1 for _ in all_trees(depth, 3, 2))


def test_stopped_search_keeps_a_proven_bound() -> None:
    data = _parity_instance()
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=(StatisticalParity(0.01, 1),))
    full = enumerate_solve(data, spec)
    assert full.status == "optimal" and full.n_checked > 1
    stop = threading.Event()
    stop.set()
    stopped = enumerate_solve(data, spec, stop=stop)
    assert stopped.status == "stopped" and stopped.structure is None and not stopped.certified
    assert stopped.bound >= full.objective - 1e-9  # the bound is the value of the best unchecked tree
    unconstrained = enumerate_solve(data, TreeSpec(depth=2, pos_label=1))
    assert stopped.bound == pytest.approx(unconstrained.objective)
    # Stopped in a later band of values: the bound is still above the optimum.
    with patch.object(enumeration, "BAND", 3), patch.object(enumeration, "HISTOGRAM_BINS", 4):
        ticks = []
        late = enumerate_solve(data, spec, progress=lambda n, b: ticks.append(b))
        assert late.objective == full.objective
        assert all(b is None or b >= full.objective - 1e-9 for b in ticks)


def test_refuses_deep_or_huge_problems() -> None:
    data = _parity_instance()
    assert "depth 1 and 2 only" in supported(data, TreeSpec(depth=3))
    assert enumerate_solve(data, TreeSpec(depth=3)).status == "unsupported"
    wide = collapse_patterns(np.eye(1000, dtype=int), np.arange(1000) % 2, 2)
    assert "more than the" in supported(wide, TreeSpec(depth=2))


# ------------------------------------------------------------- in the engine
def _four_groups(seed: int = 7, n: int = 80, f: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, f))
    group = rng.integers(0, 4, size=n)
    y = ((X[:, 0] + (group < 2) + rng.random(n)) > 1.5).astype(int)
    return X, y, group


def test_auto_certifies_many_group_parity_like_the_exhaustive_search() -> None:
    """Four groups: the exact search proves the optimum the exhaustive search
    finds, and FlowOCT on HiGHS, run to proof, agrees."""
    from strongtree_core.engine.routes import solve_tree

    X, y, group = _four_groups()
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=(StatisticalParity(0.1, 1),))
    events = []
    auto = solve_tree(data, spec, time_limit=30, progress=events.append)
    assert auto.record.method == "exact" and auto.record.certified and auto.record.status == "optimal"
    assert events[-1].message == "certified optimal"
    assert auto.record.objective == pytest.approx(enumerate_solve(data, spec).objective, abs=1e-9)
    pred = auto.structure.predict(data.X)
    assert all(c.satisfied for c in metrics_checks(spec, data, pred))
    flow = solve_tree(data, spec, formulation="flow", solver="highs", time_limit=120, exact_search=False).record
    assert flow.certified, "FlowOCT did not prove its optimum in time: raise the limit"
    assert flow.objective == pytest.approx(auto.record.objective, abs=1e-6)


def test_forced_mio_starts_from_the_searched_tree_and_must_prove_it() -> None:
    from strongtree_core.engine.routes import solve_tree

    X, y, group = _four_groups(seed=8)
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=(StatisticalParity(0.1, 1),))
    events = []
    forced = solve_tree(data, spec, formulation="flow", solver="highs", time_limit=60, progress=events.append).record
    assert forced.method == "flow"
    optimum = enumerate_solve(data, spec).objective
    starts = [e for e in events if e.message.startswith("warm start")]
    assert starts and starts[0].objective == pytest.approx(optimum)
    assert forced.objective == pytest.approx(optimum)


def test_auto_reports_infeasibility_proven_by_the_search() -> None:
    from strongtree_core.engine.routes import solve_tree
    from strongtree_core.errors import StrongTreeError
    from strongtree_core.formulation.quality_constraints import MinRecall, MinSpecificity

    X = np.zeros((8, 2), dtype=int)  # identical rows, both labels: recall 1 and specificity 1 exclude each other
    y = np.array([1, 0, 1, 0, 1, 0, 1, 1])
    data = collapse_patterns(X, y, 2)
    spec = TreeSpec(depth=2, pos_label=1, side_constraints=(MinRecall(1.0, 1), MinSpecificity(0.5, 1)))
    with pytest.raises(StrongTreeError, match="No tree of depth 2 satisfies"):
        solve_tree(data, spec, time_limit=10)


def metrics_checks(spec, data, pred):
    from strongtree_core.metrics import check_constraints

    return check_constraints(spec, data.y, pred, data.group, data.legit, count=data.count)


def test_depth_three_is_no_worse_than_the_best_depth_two_tree() -> None:
    from dataclasses import replace

    from strongtree_core.engine.routes import solve_tree

    X, y, group = _four_groups(seed=9, n=120, f=5)
    data = collapse_patterns(X, y, 2, group=group)
    spec = TreeSpec(depth=3, pos_label=1, side_constraints=(StatisticalParity(0.05, 1),))
    shallow = enumerate_solve(data, replace(spec, depth=2))
    deep = shallow.structure.with_depth(3)
    assert deep.depth == 3 and deep.is_valid()
    assert np.array_equal(deep.predict(data.X), shallow.structure.predict(data.X))
    res = solve_tree(data, spec, time_limit=20).record
    assert res.certified and res.objective >= shallow.objective - 1e-9
    with pytest.raises(ValueError, match="cannot fit a tree of depth 3 into depth 2"):
        deep.with_depth(2)


@pytest.mark.parametrize("seed", range(6))
def test_bands_partition_the_trees(seed) -> None:
    """Visiting bands of values from the top yields every allowed tree exactly once,
    ties at the band edges included (integer values, bin edges on integers)."""
    rng = np.random.default_rng(seed)
    F, O, K = 3, 4, 2
    table = rng.integers(0, 9, size=(F, O, O)).astype(float)
    table[rng.random(table.shape) < 0.2] = -np.inf  # trees a structural bound rules out
    table[0, 0, 0], table[1, 1, 1] = 0.0, 8.0  # the extremes are present: edges 0, 2, 4, 6, 8
    roots = np.array([4.0, -np.inf])
    expected = {i for i, v in enumerate(roots) if np.isfinite(v)}
    expected |= {K + r * O * O + j for r in range(F) for j in np.flatnonzero(np.isfinite(table[r].ravel()))}
    with patch.object(enumeration, "BAND", 5), patch.object(enumeration, "HISTOGRAM_BINS", 4):
        high, got, last = np.inf, [], np.inf
        while True:
            low, ids, vals = enumeration._next_band(lambda r: table[r], F, O, K, roots, high)
            if ids.size == 0:
                break
            assert vals.max() < high and vals.min() >= low and vals.max() <= last
            got += ids.tolist()
            high, last = low, vals.min()
    assert sorted(got) == sorted(expected)


@pytest.mark.parametrize("kind", ["min_recall", "min_specificity", "min_precision"])
def test_floors_met_exactly_at_the_bound(kind) -> None:
    """The best tree meets its floor with equality (rate 1/2 against 0.5): the
    search's fast screen must not reject it."""
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    x = {
        "min_recall": [1, 1, 0, 0, 0, 0, 0, 0],  # x = 1 -> positive: recall 2/4
        "min_specificity": [1, 1, 1, 1, 1, 1, 0, 0],  # x = 1 -> positive: specificity 2/4
        "min_precision": [1, 1, 1, 1, 1, 1, 1, 1],  # only constant trees: all positive, precision 4/8
    }[kind]
    # Maximizing recall, predicting everything positive is best and has precision exactly 1/2.
    objective = "sensitivity" if kind == "min_precision" else "accuracy"
    inst = Instance(np.array(x)[:, None], y, np.zeros(8, dtype=int), np.zeros(8, dtype=int), depth=1)
    spec = TreeSpec(depth=1, pos_label=1, objective=objective, side_constraints=(ALL_CONSTRAINTS[kind](0.5, 1),))
    check_against_brute_force(inst, spec, [(kind, 0.5)], 1)
    res = enumerate_solve(inst.data, spec)
    pred = res.structure.predict(inst.data.X)
    said, pos = pred == 1, inst.data.y == 1
    rate = {
        "min_recall": (inst.data.count[said & pos].sum(), inst.data.count[pos].sum()),
        "min_specificity": (inst.data.count[~said & ~pos].sum(), inst.data.count[~pos].sum()),
        "min_precision": (inst.data.count[said & pos].sum(), inst.data.count[said].sum()),
    }[kind]
    assert Fraction(int(rate[0]), int(rate[1])) == Fraction(1, 2)
