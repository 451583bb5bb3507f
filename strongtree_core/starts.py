"""Cheap trees that give the solver a first incumbent: CART and a single leaf.

A CART tree (scikit-learn, fitted on the same binary features and weights)
is converted to the breadth-first numbering of the flow graph; thresholds on
0/1 features are 0.5, so "x <= 0.5" (left) is ``x = 0`` exactly as in the
formulations.
"""

from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

#: CART, a start, is fitted on at most this many patterns (a seeded sample beyond).
CART_MAX_PATTERNS = 20_000


def cart_structure(data: PatternData, depth: int, *, class_weight=None, random_state: int = 0) -> TreeStructure:
    """CART of maximum depth ``depth`` on the weighted patterns, as a TreeStructure."""
    graph = TreeGraph(depth)
    feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
    if data.n_patterns == 0:
        raise ValueError("no training rows")
    if depth == 0 or data.n_features == 0:
        return majority_leaf(data, depth)
    clf = DecisionTreeClassifier(max_depth=depth, class_weight=class_weight, random_state=random_state)
    rows = np.arange(data.n_patterns)
    if rows.size > CART_MAX_PATTERNS:
        # A start only: a seeded sample keeps CART at a tenth of a second on any table.
        rows = np.sort(np.random.default_rng(random_state).choice(rows, CART_MAX_PATTERNS, replace=False))
    clf.fit(data.X[rows], data.y[rows], sample_weight=np.maximum(data.weight[rows], 1e-12))
    t = clf.tree_
    stack = [(0, 1)]  # (sklearn node id, our node number)
    while stack:
        sk, n = stack.pop()
        if t.children_left[sk] == -1 or 2 * n > graph.n_nodes:
            feature[n - 1] = LEAF
            prediction[n - 1] = int(clf.classes_[int(np.argmax(t.value[sk][0]))])
        else:
            feature[n - 1] = int(t.feature[sk])
            stack += [(t.children_left[sk], 2 * n), (t.children_right[sk], 2 * n + 1)]
    return TreeStructure(depth, feature, prediction)


def majority_leaf(data: PatternData, depth: int, *, class_index: int | None = None) -> TreeStructure:
    """A single leaf predicting the weighted majority class (or ``class_index``)."""
    if class_index is None:
        class_index = int(np.argmax(np.bincount(data.y, weights=data.weight, minlength=data.n_classes)))
    return TreeStructure.single_leaf(depth, class_index)


def candidate_starts(data: PatternData, depth: int) -> list[tuple[str, TreeStructure]]:
    """Trees worth offering as a warm start, best first by training accuracy.

    CART (plain and class-balanced) and one single leaf per class: a single
    leaf satisfies statistical parity and every "gap" constraint trivially,
    so some start is feasible for most constrained problems.
    """
    found: list[tuple[str, TreeStructure]] = []
    for name, cw in (("CART", None), ("CART (balanced classes)", "balanced")):
        try:
            found.append((name, cart_structure(data, depth, class_weight=cw)))
        except ValueError:
            continue
    for k in range(data.n_classes):
        found.append((f"single leaf predicting class {k}", majority_leaf(data, depth, class_index=k)))
    score = [-(data.weight * (t.predict(data.X) == data.y)).sum() for _, t in found]
    order = np.argsort(score, kind="stable")
    return [found[i] for i in order]
