"""CART on the raw columns: its cuts join the chosen thresholds, and its tree
becomes a start for the search, so no returned tree is worse than CART's on
the training rows.

CART (scikit-learn's ``DecisionTreeClassifier`` of the same depth, same
weights) sees each continuous column as the rank of its value among the
column's distinct training values (missing: one rank above all): a tree is
unchanged by a monotone transform of a column, and ranks are exact in the
float32 arithmetic scikit-learn uses, where nearby values could merge.  A
threshold ``k + 0.5`` of CART is then gap ``k`` of the column (between its
values ``k`` and ``k + 1``), or present / missing when ``k`` is the last value.
Every other column is given to CART as the plan's own binary columns.

Under a time limit CART may be grown on a sample of the rows
(:func:`reference_rows`, :func:`reference_sample`): scikit-learn sorts every
column at every node, about 6 s for a million rows of 8 columns at depth 4,
which alone would overrun a limit of a few seconds.  The sample's cuts are gaps
of the whole column (ranks are of every training row), its tree is a start like
any other, and the fit's record says on how many rows it was grown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure


#: Seconds of scikit-learn's CART per row, level and doubling of a column's distinct values, plus
#: one (it sorts every column at every node, and repeated values sort fast): measured at depth 4 on
#: a million rows and an idle core, 0.75 s per column of distinct values, 0.28 s per column of
#: 50 levels and 0.10 s per 0/1 column (depth 3: 0.78 of that).
CART_SECONDS = 1e-8
#: The share of a fit's time left that CART may take (the thresholds, the patterns, the search
#: and the re-scoring need the rest).
REFERENCE_SHARE = 0.25
#: CART under a time limit is never grown on fewer rows than this (or than the table has).
MIN_REFERENCE_ROWS = 20_000


def cart_seconds(n_rows: int, levels: Sequence[int], depth: int) -> float:
    """An estimate of scikit-learn's CART time on ``n_rows`` rows of columns with ``levels``
    distinct values each (a sample of the rows has at most as many as it has rows) at ``depth``."""
    doublings = sum(1.0 + math.log2(max(2, min(int(k), n_rows))) for k in levels)
    return CART_SECONDS * n_rows * max(depth, 1) * max(doublings, 1.0)


def reference_rows(n_rows: int, levels: Sequence[int], depth: int, seconds: float | None) -> int:
    """Rows to grow CART on so that it takes at most about ``seconds``: every row when None or when
    they fit, else the largest :data:`MIN_REFERENCE_ROWS` x 2^k that fits (never fewer than
    :data:`MIN_REFERENCE_ROWS`).  Doublings, so that the same fit run again on a machine a little
    busier or quieter grows CART on the same sample, and so gets the same cuts, unless its time
    left crosses a doubling."""
    if seconds is None or n_rows <= MIN_REFERENCE_ROWS or cart_seconds(n_rows, levels, depth) <= seconds:
        return int(n_rows)
    rows = MIN_REFERENCE_ROWS
    while 2 * rows < n_rows and cart_seconds(2 * rows, levels, depth) <= seconds:
        rows *= 2
    return rows


def reference_sample(n_rows: int, rows: int, seed: int = 0) -> np.ndarray:
    """The rows CART is grown on when ``rows < n_rows``: a uniform sample, the same for the same
    sizes and seed, in table order (also the sample of patterns a CART start is grown on:
    :func:`strongtree_core.engine.starts.cart_structure`)."""
    if rows >= n_rows:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng(seed).choice(n_rows, size=rows, replace=False))


@dataclass(frozen=True)
class ReferenceTree:
    """CART on ranks of the continuous columns and binary columns of the others.

    Attributes
    ----------
    tree : sklearn Tree
        The fitted tree (``clf.tree_``).
    classes : ndarray of int
        CART's classes (class indices of the target).
    n_ranked : int
        The first ``n_ranked`` of CART's columns are ranks of continuous columns.
    depth : int
    """

    tree: object
    classes: np.ndarray
    n_ranked: int
    depth: int

    def gaps(self, n_distinct: list[int]) -> list[np.ndarray]:
        """For each ranked column, the gaps CART cuts (sorted; present / missing left out)."""
        t = self.tree
        out: list[set] = [set() for _ in range(self.n_ranked)]
        for node in range(t.node_count):
            f = int(t.feature[node])
            if t.children_left[node] != -1 and f < self.n_ranked:
                k = int(np.floor(t.threshold[node]))
                if 0 <= k < n_distinct[f] - 1:
                    out[f].add(k)
        return [np.array(sorted(s), dtype=np.int64) for s in out]

    def structure(self, feature_of) -> TreeStructure:
        """CART's tree on the plan's binary features.

        ``feature_of(column, threshold)`` gives ``(feature index, swap)``: the
        plan's feature for CART's test ``column <= threshold`` and whether the
        plan's feature is 1 on CART's left side (then our right child is
        CART's left one; a feature's 1 goes right in our trees).
        """
        t = self.tree
        graph = TreeGraph(self.depth)
        feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
        prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
        stack = [(0, 1)]
        while stack:
            sk, n = stack.pop()
            if t.children_left[sk] == -1 or 2 * n > graph.n_nodes:
                feature[n - 1] = LEAF
                prediction[n - 1] = int(self.classes[int(np.argmax(t.value[sk][0]))])
                continue
            index, swap = feature_of(int(t.feature[sk]), float(t.threshold[sk]))
            feature[n - 1] = index
            left, right = int(t.children_left[sk]), int(t.children_right[sk])
            if swap:
                left, right = right, left
            stack += [(left, 2 * n), (right, 2 * n + 1)]
        return TreeStructure(self.depth, feature, prediction)


def fit_reference(ranks: np.ndarray, others: np.ndarray, target: np.ndarray, weight: np.ndarray | None,
                  depth: int, random_state: int = 0) -> ReferenceTree:
    """CART of maximum depth ``depth`` on ``[ranks | others]``.

    Parameters
    ----------
    ranks : ndarray, shape (n, C)
        Rank of each row's value in each continuous column (missing: the number of distinct values).
    others : ndarray of 0/1, shape (n, B)
        The plan's binary columns of every other column.
    target : ndarray of int, shape (n,)
    weight : ndarray of float, shape (n,), optional
    """
    from sklearn.tree import DecisionTreeClassifier  # here: the samples alone (a start's rows) need no scikit-learn

    Z = np.hstack([np.asarray(ranks, dtype=np.float32), np.asarray(others, dtype=np.float32)])
    clf = DecisionTreeClassifier(max_depth=depth, random_state=random_state)
    clf.fit(Z, target, sample_weight=weight)
    return ReferenceTree(clf.tree_, clf.classes_.astype(np.int64), int(ranks.shape[1]), int(depth))
