"""The root LPs read back in the paper's terms: Theorem 1 on the values, every read-back
part satisfying the rows it comes from (1b, 1c, 1e, 1h; OCT h, i, j; BinOCT 2, 4), and the
bounds above the optimum the exact search certifies."""

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier
from strongtree_core.datasets import make_balance_scale
from strongtree_core.compare.root_lp import RootLP, root_relaxations

TOL = 1e-6


@pytest.fixture(scope="module")
def balance():
    frame = make_balance_scale().sample(60, random_state=0).reset_index(drop=True)
    X, y = frame.drop(columns="tips"), frame["tips"]
    return X, y, root_relaxations(X, y, depth=2, time_limit=20)


def test_theorem_1_and_the_bounds_hold_above_the_certified_optimum(balance):
    X, y, root = balance
    lp = {r.formulation: r.value for r in root.relaxations}
    assert set(lp) == {"oct", "binoct", "flow", "benders"} and None not in lp.values()
    optimum = StrongTreeClassifier(depth=2, time_limit=20).fit(X, y).record_.objective
    assert all(value >= optimum - TOL for value in lp.values())
    assert lp["flow"] <= min(lp["oct"], lp["binoct"]) + TOL
    assert lp["flow"] < lp["oct"] - 1  # this table: FlowOCT's is strictly tighter, by more than a row
    assert lp["benders"] == pytest.approx(lp["flow"])  # problem (6) with every cut (4b) is FlowOCT's relaxation
    assert RootLP.from_dict(root.to_dict()) == root


def test_every_part_read_back_satisfies_the_rows_it_comes_from(balance):
    X, y, root = balance
    by = {r.formulation: r for r in root.relaxations}
    n_leaves = 2 ** root.depth
    for word in ("oct", "binoct", "flow"):
        splits = np.asarray(by[word].splits)
        assert splits.shape == (n_leaves - 1, len(root.features))
        assert np.allclose(splits.sum(axis=1), 1.0) and (splits >= -TOL).all()  # (1b), OCT (k), BinOCT (2)
        assert len(by[word].leaf_share) == len(by[word].leaf_class) == n_leaves
    assert by["flow"].fractional_splits > 0  # the root LP is fractional: branching has work to do
    # FlowOCT: the traced row's flow is conserved at every branching node (1c), at most 1 leaves the
    # source (1e), and a leaf passes on no more than its share of the row's class (1h).
    arcs = dict(by["flow"].arcs)
    assert 0 <= arcs["source → 1"] <= 1 + TOL
    for n in range(1, n_leaves):
        into = arcs["source → 1"] if n == 1 else arcs[f"{n // 2} → {n}"]
        assert into == pytest.approx(arcs[f"{n} → {2 * n}"] + arcs[f"{n} → {2 * n + 1}"], abs=TOL)
    for position, leaf in enumerate(range(n_leaves, 2 * n_leaves)):
        assert arcs[f"{leaf} → sink"] <= by["flow"].leaf_class[position] + TOL
    assert sum(arcs[f"{leaf} → sink"] for leaf in range(n_leaves, 2 * n_leaves)) == pytest.approx(arcs["source → 1"])
    # The traced row is the one FlowOCT counts least correct; the row's features are the table's.
    assert arcs["source → 1"] < 1 - TOL and root.row_class in set(y)
    row = X.iloc[root.row]
    assert sorted(root.row_features) == sorted(f"{c} = {row[c]}" for c in X.columns)
    # OCT: the row sits in one leaf in all (h), and every routing row (i, j) holds, depth rows per leaf.
    assert sum(by["oct"].leaf_share) == pytest.approx(1.0)
    routes = by["oct"].routes
    assert len(routes) == n_leaves * root.depth and all(r.slack >= -TOL for r in routes)
    assert all(r.slack == pytest.approx(r.activity - r.rhs) for r in routes)
    # OCT (b) at every leaf: it holds, and on this table the big-M term lets no row count misclassified.
    leaves = by["oct"].leaves
    assert len(leaves) == n_leaves and all(leaf.slack >= -TOL for leaf in leaves)
    assert sum(leaf.held for leaf in leaves) == pytest.approx(len(y)) and sum(leaf.misclassified for leaf in leaves) < TOL
    assert sum(by["binoct"].leaf_share) == pytest.approx(1.0)  # BinOCT (4)


def test_a_split_penalty_keeps_the_values_and_drops_binoct():
    frame = make_balance_scale().sample(40, random_state=1).reset_index(drop=True)
    root = root_relaxations(frame.drop(columns="tips"), frame["tips"], depth=2, regularization=0.1, time_limit=20)
    lp = {r.formulation: r.value for r in root.relaxations}
    assert set(lp) == {"oct", "flow", "benders"}  # BinOCT cannot take λ
    assert lp["flow"] <= lp["oct"] + TOL
