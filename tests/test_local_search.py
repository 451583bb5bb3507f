"""The local search (``heuristics/local_search.py``): valid trees that keep the
constraints, the optimum where its neighbourhood contains it, never a claim."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from brute_force import all_trees
from hypothesis import given, settings
from hypothesis import strategies as st

from strongtree_core import StrongTreeClassifier, StrongTreeError
from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.engine.routes import NO_FEASIBLE_START, solve_tree
from strongtree_core.formulation import TreeSpec
from strongtree_core.formulation.fairness_constraints import FAIRNESS_NOTIONS
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.heuristics import LOCAL_SEARCH_REFUSED, local_search


def _brute(data, spec: TreeSpec) -> float:
    best = -np.inf
    for t in all_trees(spec.depth, data.n_features, data.n_classes):
        if _keeps(data, spec, t):
            best = max(best, tree_objective(data, spec, t))
    return best


def _keeps(data, spec: TreeSpec, tree) -> bool:
    if spec.max_branching is not None and tree.n_branching > spec.max_branching:
        return False
    if spec.max_features_used is not None and tree.features_used.size > spec.max_features_used:
        return False
    rows = np.bincount(tree.apply(data.X), weights=data.count, minlength=tree.feature.size + 1)[tree.leaves]
    return rows.min() >= spec.min_leaf


@st.composite
def problems(draw):
    n_classes = draw(st.sampled_from([2, 2, 3]))
    depth = draw(st.integers(1, 2))
    n = draw(st.integers(6, 24))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, 2, (n, draw(st.integers(1, 4))))
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    weight = rng.integers(1, 4, n).astype(float) if draw(st.booleans()) else None
    spec = TreeSpec(
        depth=depth,
        lambda_=draw(st.sampled_from([0.0, 0.0, 0.1, 0.3])),
        min_leaf=draw(st.sampled_from([0, 0, 2, 4])),
        max_branching=draw(st.sampled_from([None, None, 1])),
        max_features_used=draw(st.sampled_from([None, None, 1])),
        objective=draw(st.sampled_from(["accuracy", "accuracy", "balanced_accuracy", "sensitivity"])),
        pos_label=1,
    )
    return collapse_patterns(X, y, n_classes, sample_weight=weight), spec


@settings(max_examples=60, deadline=None)
@given(problems())
def test_a_valid_tree_that_keeps_the_constraints_and_never_beats_the_optimum(problem):
    data, spec = problem
    truth = _brute(data, spec)
    found = local_search(data, spec, n_random=5, time_limit=30)
    if found.structure is None:  # only when no tree keeps the minimum leaf size
        assert truth == -np.inf
        return
    tree = found.structure
    assert tree.is_valid() and _keeps(data, spec, tree)
    assert found.objective == pytest.approx(tree_objective(data, spec, tree))
    assert found.objective <= truth + 1e-9
    if spec.depth == 1:
        # Every depth-1 tree is one move from a single leaf (a split into two relabelled
        # leaves, tried best first): the neighbourhood holds the optimum.
        assert found.objective == pytest.approx(truth)


@pytest.mark.parametrize("seed", range(10))
def test_depth_one_from_a_split_with_the_wrong_labels_finds_the_best_split(seed):
    # A random start splits on some feature; changing that split must judge every other
    # feature with its two leaves relabelled (not with the current labels kept), or the
    # best split (feature 1 here: 5 of 6 rows) looks no better than the current one.
    X = np.array([[0, 0, 0, 1], [0, 0, 1, 1], [1, 0, 1, 1], [1, 1, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    y = np.array([0, 1, 0, 1, 1, 0])
    data = collapse_patterns(X, y, 2)
    assert _brute(data, TreeSpec(depth=1)) == 5
    assert local_search(data, TreeSpec(depth=1), n_random=5, seed=seed, time_limit=30).objective == 5


@pytest.mark.parametrize("seed", range(6))
def test_reaches_the_brute_force_optimum_on_tiny_data(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (16, 3))
    y = (X[:, 0] ^ X[:, 1]) | (rng.random(16) < 0.2)
    data = collapse_patterns(X, y.astype(int), 2)
    spec = TreeSpec(depth=2)
    assert local_search(data, spec, time_limit=30).objective == pytest.approx(_brute(data, spec))


def test_the_estimator_records_a_heuristic_never_a_certificate():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (60, 4))
    y = X[:, 0] ^ X[:, 1]  # depth 2 classifies every row: the local search finds it
    clf = StrongTreeClassifier(depth=2, formulation="local_search", time_limit=30).fit(X, y)
    record = clf.record_
    assert (record.status, record.certified, record.bound, record.gap, record.lp_bound) == ("heuristic", False, None, None, None)
    assert record.objective == 60 and clf.score(X, y) == 1.0
    assert record.method == "local_search" and "heuristic" in record.choice and "no optimality claim" in record.choice
    assert clf.tree_.record.status == "heuristic"


def test_stop_and_time_limit_keep_the_best_tree_and_still_claim_nothing():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, (400, 12))
    y = rng.integers(0, 2, 400)
    data = collapse_patterns(X, y, 2)
    stop = threading.Event()
    stop.set()
    solved = solve_tree(data, TreeSpec(depth=3), formulation="local_search", time_limit=30, stop=stop)
    assert solved.record.status == "heuristic" and not solved.record.certified
    assert solved.structure.is_valid()
    assert "stopped by the time limit or Stop" in solved.record.choice


def test_refusals_say_what_and_what_to_use():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 3)
    y = np.array([0, 1, 1, 0] * 3)
    with pytest.raises(StrongTreeError) as err:
        StrongTreeClassifier(depth=1, formulation="local_search", objective="worst_case_accuracy").fit(X, y)
    assert str(err.value) == LOCAL_SEARCH_REFUSED.format(names="the objective worst_case_accuracy")
    data = collapse_patterns(X, y, 2, group=np.array([0, 1] * 6))
    parity = FAIRNESS_NOTIONS["statistical_parity"](0.1, 1)
    with pytest.raises(StrongTreeError) as err:
        solve_tree(data, TreeSpec(depth=1, side_constraints=(parity,)), formulation="local_search")
    assert str(err.value) == LOCAL_SEARCH_REFUSED.format(names=parity.name)
    with pytest.raises(StrongTreeError) as err:
        solve_tree(data, TreeSpec(depth=1, min_leaf=13), formulation="local_search")
    assert str(err.value) == NO_FEASIBLE_START.format(min_leaf=13)
