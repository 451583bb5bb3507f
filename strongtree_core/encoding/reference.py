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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure


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
    Z = np.hstack([np.asarray(ranks, dtype=np.float32), np.asarray(others, dtype=np.float32)])
    clf = DecisionTreeClassifier(max_depth=depth, random_state=random_state)
    clf.fit(Z, target, sample_weight=weight)
    return ReferenceTree(clf.tree_, clf.classes_.astype(np.int64), int(ranks.shape[1]), int(depth))
