"""The lists of subtrees of depth <= 2 that end every path of the branch-and-bound
(``accel/subtrees.py``): every subtree scoring at least the threshold is listed (one
per constraint quantities and branchings, the best), its score and quantities those
of its leaves, whether the patterns' sums come from matrix products or from the
compiled pass over each pattern's list of ones (``kernels.pattern_pair_sums``)."""

from __future__ import annotations

import numpy as np
import pytest

from strongtree_core.accel import kernels
from strongtree_core.accel.subtrees import subtree_list

pytestmark = pytest.mark.skipif(not kernels.library.usable(), reason="numba is not installed")


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels():
    kernels.library.implementation("_pattern_pair_sums")


def _instance(rng, n: int, F: int, K: int, D: int):
    X = (rng.random((n, F)) < rng.uniform(0.1, 0.9, F)).astype(float)
    V = rng.integers(-2, 4, (n, K, D)).astype(float)
    count = rng.integers(1, 4, n).astype(float)
    theta = rng.normal(size=D).round(2)
    return X, V, count, theta


def _every_subtree(K: int, F: int):
    """(code, branchings) of every subtree of depth <= 2: a leaf, a split whose children
    are each a leaf or a split with two leaves; never a split with two leaves of one class
    (the leaf does as well with fewer branchings)."""
    out = [((-1, -1, k, -1, -1, -1, -1), 0) for k in range(K)]
    children = [(-1, k, -1) for k in range(K)] + [(b, k1, k2) for b in range(F) for k1 in range(K) for k2 in range(K)
                                                  if k1 != k2]
    for a in range(F):
        for left in children:
            for right in children:
                if left[0] < 0 and right[0] < 0 and left[1] == right[1]:
                    continue
                out.append(((a, *left, *right), 1 + (left[0] >= 0) + (right[0] >= 0)))
    return out


def _canonical(code) -> tuple:
    """A listed code with a leaf child's second class (unused) as -1."""
    a, lb, lk1, lk2, rb, rk1, rk2 = (int(v) for v in code)
    return a, lb, lk1, lk2 if lb >= 0 else -1, rb, rk1, rk2 if rb >= 0 else -1


def _leaves(code, X):
    """Each leaf of the subtree ``code`` as (mask of its patterns, class)."""
    a, lb, lk1, lk2, rb, rk1, rk2 = code
    every = np.ones(X.shape[0], dtype=bool)
    if a < 0:
        return [(every, lk1)]
    out = []
    for side, (b, k1, k2) in ((X[:, a] < 0.5, (lb, lk1, lk2)), (X[:, a] > 0.5, (rb, rk1, rk2))):
        if b < 0:
            out.append((side, k1))
        else:
            out += [(side & (X[:, b] < 0.5), k1), (side & (X[:, b] > 0.5), k2)]
    return out


def _measured(code, nb, X, V, count, theta, pen, min_leaf):
    """(score, quantities) of a subtree from its leaves, or None when a leaf is below
    ``min_leaf`` rows or a split leaves a side empty."""
    need = max(1, min_leaf)
    a, lb, _, _, rb, _, _ = code
    if a >= 0:
        for mask in (X[:, a] < 0.5, X[:, a] > 0.5):
            if count[mask].sum() < need:
                return None
        for b, side in ((lb, X[:, a] < 0.5), (rb, X[:, a] > 0.5)):
            if b >= 0 and (count[side & (X[:, b] < 0.5)].sum() < need or count[side & (X[:, b] > 0.5)].sum() < need):
                return None
    total = np.zeros(V.shape[2])
    for mask, k in _leaves(code, X):
        if count[mask].sum() < min_leaf:
            return None
        total += V[mask, k].sum(axis=0)
    return float(total @ theta - pen * nb), total


@pytest.mark.parametrize("seed", range(8))
def test_every_subtree_reaching_the_threshold_is_listed_from_either_sums(seed) -> None:
    rng = np.random.default_rng(seed)
    K = 2 + seed % 2
    n_parts, D = 1, 3
    X, V, count, theta = _instance(rng, int(rng.integers(20, 50)), int(rng.integers(2, 5)), K, D)
    pen, min_leaf = [(0.0, 0), (0.7, 0), (0.0, 4), (1.5, 2)][seed % 4]
    indptr, indices = kernels.ones_of(X)
    W = np.concatenate([V.reshape(X.shape[0], -1), count[:, None]], axis=1)
    truth = {}
    for code, nb in _every_subtree(K, X.shape[1]):
        got = _measured(code, nb, X, V, count, theta, pen, min_leaf)
        if got is not None:
            truth[code] = (got[0], got[1], nb)
    scores = sorted(s for s, _, _ in truth.values())
    tau = scores[len(scores) // 2]  # half the subtrees reach it
    lists = []
    for depth in (1, 2):
        from_rows = subtree_list(X, V, count, depth, theta, pen, min_leaf, n_parts, tau)
        M, T = kernels.pattern_pair_sums(np.arange(X.shape[0]), indptr, indices, W, X.shape[1])
        from_sums = subtree_list(None, None, None, depth, theta, pen, min_leaf, n_parts, tau, sums=(M, T, K))
        for got in (from_rows, from_sums):
            listed = {_canonical(got.code[j]): j for j in range(len(got))}
            for code, j in listed.items():  # each listed subtree is what it says
                score, total, nb = truth[code]
                assert got.score[j] == pytest.approx(score, abs=1e-9)
                assert np.allclose(got.q[j], total[n_parts:]) and np.allclose(got.parts[j], total[:n_parts])
                assert got.nb[j] == nb
            for code, (score, total, nb) in truth.items():  # and none that reaches tau is missing
                if score < tau + 1e-9 or (depth == 1 and nb > 1):
                    continue
                same = [j for c, j in listed.items() if got.nb[j] == nb and np.allclose(got.q[j], total[n_parts:])]
                assert same and max(got.score[j] for j in same) >= score - 1e-9, code
        np.testing.assert_allclose(from_sums.score, from_rows.score, atol=1e-9)
        np.testing.assert_array_equal(from_sums.code, from_rows.code)
        lists.append(len(from_rows))
    assert lists[1] > lists[0] > 0


def test_the_counted_pair_sums_are_the_sums_over_both_features() -> None:
    rng = np.random.default_rng(3)
    X, V, count, _ = _instance(rng, 200, 7, 2, 2)
    W = np.concatenate([V.reshape(200, -1), count[:, None]], axis=1)
    rows = np.flatnonzero(rng.random(200) < 0.6)
    M, T = kernels.pattern_pair_sums(rows, *kernels.ones_of(X), W, 7)
    Xs, Ws = X[rows], W[rows]
    for a in range(7):
        for b in range(7):
            both = (Xs[:, a] > 0.5) & (Xs[:, b] > 0.5)
            np.testing.assert_allclose(M[a, b], Ws[both].sum(axis=0), atol=1e-9)
    np.testing.assert_allclose(T, Ws.sum(axis=0), atol=1e-9)
