"""Formulations (1), (7), (11) and the Benders master against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from brute_force import all_trees, milp_solve

from strongtree_core.encoding.patterns import collapse_patterns
from strongtree_core.formulation import TreeSpec, build_model
from strongtree_core.formulation.benders import benders_cuts
from strongtree_core.structure import TreeGraph


def _instance(seed: int, n: int = 14, F: int = 3, K: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, F))
    y = rng.integers(0, K, n)
    return X, y, collapse_patterns(X, y, K)


def _brute(X, y, spec: TreeSpec, K: int) -> float | None:
    best = None
    for t in all_trees(spec.depth, X.shape[1], K):
        if spec.max_branching is not None and t.n_branching > spec.max_branching:
            continue
        if spec.max_features_used is not None and t.features_used.size > spec.max_features_used:
            continue
        if spec.min_leaf:
            sizes = np.bincount(t.apply(X), minlength=t.feature.size + 1)[t.leaves]
            if sizes.min() < spec.min_leaf:
                continue
        value = (1 - spec.lambda_) * (t.predict(X) == y).sum() - spec.lambda_ * t.n_branching
        best = value if best is None else max(best, value)
    return best


def _benders_loop(built):
    """Solve the master by re-solving with the separator's cuts until none is violated."""
    m = built.arrays
    A, lo, up = m.A, m.row_lower, m.row_upper
    for _ in range(300):
        x = milp_solve(type(m)(**{**m.__dict__, "A": A, "row_lower": lo, "row_upper": up}))
        if x is None:
            return None
        cuts, cl, cu = m.separator(x)
        if cuts.shape[0] == 0:
            return x
        A, lo, up = sp.vstack([A, cuts]).tocsr(), np.concatenate([lo, cl]), np.concatenate([up, cu])
    raise AssertionError("Benders loop did not converge")


SPECS = [
    dict(),
    dict(lambda_=0.15),
    dict(max_branching=1),
    dict(max_features_used=1),
    dict(min_leaf=4),
    dict(lambda_=0.05, max_features_used=2, max_branching=2),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("extra", SPECS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "plain")
@pytest.mark.parametrize("depth", [1, 2])
def test_flow_and_benders_match_brute_force(seed, extra, depth):
    K = 2 + seed % 2
    X, y, data = _instance(seed, K=K)
    spec = TreeSpec(depth=depth, **extra)
    truth = _brute(X, y, spec, K)
    methods = ["flow"] if spec.needs_all_datapoints else ["flow", "benders"]
    for method in methods:
        built = build_model(data, spec, method)
        x = milp_solve(built.arrays) if method == "flow" else _benders_loop(built)
        assert x is not None
        assert built.arrays.objective(x) == pytest.approx(truth, abs=1e-6), method
        tree = built.decode(x)
        rescored = (1 - spec.lambda_) * (tree.predict(X) == y).sum() - spec.lambda_ * tree.n_branching
        assert rescored == pytest.approx(truth, abs=1e-6), method
        # The tree written back as a solution is feasible and scores the same.
        x0 = built.start(tree, data)
        assert built.arrays.max_violation(x0) <= 1e-9
        assert built.arrays.objective(x0) == pytest.approx(truth, abs=1e-6)


def test_min_leaf_larger_than_data_is_infeasible():
    X, y, data = _instance(0)
    built = build_model(data, TreeSpec(depth=1, min_leaf=len(y) + 1))
    assert milp_solve(built.arrays) is None


def test_balanced_flow_has_the_documented_size():
    # rows = (|B| + |L|) + P (3|B| + |L|)   (balanced FlowOCT, leaf arcs merged)
    X, y, data = _instance(1, n=30, F=5)
    for d in (1, 2, 3):
        g = TreeGraph(d)
        m = build_model(data, TreeSpec(depth=d)).arrays
        P = data.n_patterns
        assert m.n_rows == g.n_branching + g.n_terminal + P * (3 * g.n_branching + g.n_terminal)


@pytest.mark.parametrize("balanced", [True, False])
def test_benders_cuts_are_valid_for_every_tree_and_cut_off_the_incumbent(balanced):
    """Each cut of Algorithms 1-2 holds at every tree with g = correct, and is
    violated by the incumbent (g = 1 for misclassified patterns)."""
    X, y, data = _instance(3, n=12, F=3, K=2)
    spec = TreeSpec(depth=2) if balanced else TreeSpec(depth=2, lambda_=0.1)
    built = build_model(data, spec, "benders", single_class_rows=False)  # the cuts alone
    idx = built.arrays.index
    trees = list(all_trees(2, 3, 2))
    if balanced:
        trees = [t for t in trees if t.n_branching == 3]
    rng = np.random.default_rng(0)
    for incumbent in rng.choice(len(trees), size=25, replace=False):
        tree = trees[incumbent]
        g = np.ones(data.n_patterns)
        cuts, lo, up = benders_cuts(tree, data, idx, g, built.arrays.n_cols, balanced=balanced)
        wrong = tree.predict(data.X) != data.y
        assert cuts.shape[0] == wrong.sum()
        x_inc = built.start(tree, data)
        x_inc[idx["g"]] = 1.0
        assert np.all(cuts @ x_inc > up + 0.5)  # violated by one full unit
        for other in trees:
            x = built.start(other, data)
            assert np.all(cuts @ x <= up + 1e-9)


@pytest.mark.parametrize("method", ["flow", "benders"])
@pytest.mark.parametrize("depth, K", [(1, 3), (2, 2)])
def test_single_class_subtree_rows_keep_every_classifier(method, depth, K):
    """Every tree, written with canonical splits, satisfies the symmetry-breaking
    rows with its own predictions and value; trees written as given that split
    inside a single-class subtree on another feature violate them."""
    from strongtree_core.formulation.decode import start_vector

    X, y, data = _instance(5, n=12, F=3, K=K)
    built = build_model(data, TreeSpec(depth=depth), method, single_class_rows=True)
    plain = build_model(data, TreeSpec(depth=depth), method, single_class_rows=False)
    assert built.arrays.n_rows > plain.arrays.n_rows
    cut_off = 0
    for tree in all_trees(depth, 3, K):
        x = built.start(tree, data)
        assert built.arrays.max_violation(x) <= 1e-9
        assert np.array_equal(built.decode(x).predict(X), tree.predict(X))
        assert built.arrays.objective(x) == pytest.approx((tree.predict(X) == y).sum())
        cut_off += built.arrays.max_violation(start_vector(built.arrays, tree, data)) > 0.5
    assert cut_off > 0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method", ["flow", "benders"])
def test_single_class_subtree_rows_keep_the_optimum(seed, method):
    K = 2 + seed % 2
    X, y, data = _instance(seed, n=16, K=K)
    for depth in (1, 2):
        spec = TreeSpec(depth=depth)
        built = build_model(data, spec, method, single_class_rows=True)
        x = milp_solve(built.arrays) if method == "flow" else _benders_loop(built)
        assert built.arrays.objective(x) == pytest.approx(_brute(X, y, spec, K), abs=1e-6)
        assert (built.decode(x).predict(X) == y).sum() == pytest.approx(_brute(X, y, spec, K))
