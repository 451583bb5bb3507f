"""Ordered columns counted from histograms (strongtree_core.accel.ordered) against the
reference kernel and the plain dynamic program."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strongtree_core import StrongTreeClassifier
from strongtree_core.accel import kernels, ordered
from strongtree_core.accel.dp import NEG, GainDP, NumpyGainDP, depth_two
from strongtree_core.accel.ordered import depth_two_ordered, ordered_columns

# A direct call compiles here when the built library is not there yet.
pytestmark = pytest.mark.skipif(not ordered.library.usable(), reason="numba is not installed")


def chained_table(rng: np.random.Generator, n: int):
    """0/1 features: a few columns' thermometer cuts (shuffled among loose 0/1 features) and their chains."""
    blocks, chains, f = [], [], 0
    for _ in range(int(rng.integers(1, 4))):
        T = int(rng.integers(1, 5))
        value = rng.integers(0, T + 1, n)
        blocks.append(np.stack([value <= j for j in range(T)], axis=1))
        chains.append(list(range(f, f + T)))
        f += T
    blocks.append(rng.integers(0, 2, (n, int(rng.integers(0, 3)))).astype(bool))
    X = np.hstack(blocks).astype(np.float64)
    perm = rng.permutation(X.shape[1])
    where = np.argsort(perm)
    return X[:, perm], [[int(where[j]) for j in chain] for chain in chains]


def value_of(tree, X, S, c, idx, pen, min_leaf):
    """A tree's gain on ``idx``, or None when a leaf holds fewer than ``min_leaf`` rows."""
    if isinstance(tree, tuple):
        right = X[idx, tree[0]] > 0.5
        a = value_of(tree[1], X, S, c, idx[~right], pen, min_leaf)
        b = value_of(tree[2], X, S, c, idx[right], pen, min_leaf)
        return None if a is None or b is None else a + b - pen
    return None if c[idx].sum() < min_leaf else float(S[idx, tree].sum())


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pen=st.sampled_from([0.0, 0.3]), min_leaf=st.sampled_from([0, 2, 3]))
def test_histograms_give_the_reference_kernels_optimum_and_a_tree_worth_it(seed, pen, min_leaf):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    X, chains = chained_table(rng, n)
    S = np.round(rng.normal(size=(n, 2)), 1)
    c = rng.integers(1, 3, n).astype(float)
    rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
    value, code = depth_two_ordered(ordered_columns(X, chains), rows, np.ascontiguousarray(S[:, 1] - S[:, 0]),
                                    np.ascontiguousarray(S[:, 0]), c, pen, min_leaf)
    expected, _ = depth_two(X[rows], S[rows], c[rows], 2, pen, min_leaf)
    if expected == NEG:
        assert value == NEG
        return
    assert value == pytest.approx(expected, abs=1e-9)
    assert value_of(kernels.tree_of(code), X, S, c, rows, pen, min_leaf) == pytest.approx(expected, abs=1e-9)


def test_a_chain_that_is_not_nested_is_refused():
    X = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)
    assert ordered_columns(X, [[0, 1]]) is None
    cols = ordered_columns(X, [[1, 0]][:0])
    assert cols.n_chains == 2 and cols.bins.tolist() == [[0, 1], [1, 0], [0, 0]]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(2, 4))
def test_the_dynamic_program_finds_the_same_optimum_with_histograms(seed, depth):
    with pytest.MonkeyPatch.context() as patch:  # histograms for every depth-2 subproblem, however small
        patch.setattr(ordered, "cheaper_than_lists", lambda *args: True)
        patch.setattr(ordered, "available", lambda: True)  # compiled here if not built yet
        patch.setattr(kernels, "available", lambda: True)
        _same_optimum(seed, depth)


def _same_optimum(seed: int, depth: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    X, chains = chained_table(rng, n)
    S = np.round(rng.normal(size=(n, 2)), 1)
    c = rng.integers(1, 3, n).astype(float)
    # The histograms serve the numpy program (the compiled one counts its own pairs).
    with_histograms = NumpyGainDP(X, c, S, 0.1, 0, ordered=ordered_columns(X, chains))
    assert with_histograms.ordered is not None
    plain = GainDP(X, c, S, 0.1, 0)
    a = with_histograms.exact(np.arange(n), depth)
    b = plain.exact(np.arange(n), depth)
    assert a[0] == pytest.approx(b[0], abs=1e-9)
    assert value_of(a[1], X, S, c, np.arange(n), 0.1, 0) == pytest.approx(b[0], abs=1e-9)


def test_the_estimator_certifies_the_same_tree_value_either_way(monkeypatch):
    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    y = ((X.a > 0.3) ^ (X.b < -0.2) | (X.c > 1.0)).astype(int)
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    fitted = StrongTreeClassifier(depth=3, max_thresholds=24).fit(X, y)
    monkeypatch.setattr(ordered, "available", lambda: False)
    reference = StrongTreeClassifier(depth=3, max_thresholds=24).fit(X, y)
    assert fitted.record_.certified and reference.record_.certified
    assert fitted.record_.objective == reference.record_.objective
