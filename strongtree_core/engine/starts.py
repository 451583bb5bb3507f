"""Cheap trees that give the solver a first incumbent: CART and a single leaf.

CART (Breiman et al. 1984) is grown here on the weighted binary patterns:
greedy splits that most reduce the weighted Gini impurity, ``x_f = 0`` to the
left (the formulations' convention, a threshold of 0.5 on a 0/1 feature), a
node split while it holds two classes and some feature separates its patterns,
each leaf predicting its heaviest class.  This is scikit-learn's
``DecisionTreeClassifier(max_depth=depth)`` on the same features and weights
up to ties between equally good splits (the lowest feature number wins here),
for about 0.2 ms instead of 2-3 ms of its input checks per fit.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.encoding.reference import reference_sample
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

#: CART, a start, is grown on at most this many patterns (a seeded sample beyond).
CART_MAX_PATTERNS = 20_000
#: Features converted to float once when the table has at most this many cells (32 MB).
CART_FLOAT_CELLS = 4_000_000
FLOAT_MAX = float(np.finfo(np.float64).max)


def cart_structure(data: PatternData, depth: int, *, class_weight=None, random_state: int = 0) -> TreeStructure:
    """CART of maximum depth ``depth`` on the weighted patterns, as a TreeStructure.

    ``class_weight="balanced"`` weighs each class by ``total / (n_classes * its total)``
    (weights, not rows), so every class counts as much in the splits and the leaves.
    """
    graph = TreeGraph(depth)
    feature = np.full(graph.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(graph.n_nodes, -1, dtype=np.int64)
    if data.n_patterns == 0:
        raise ValueError("no training rows")
    if depth == 0 or data.n_features == 0:
        return majority_leaf(data, depth)
    # A start only: a seeded sample keeps CART fast on any table.
    rows = reference_sample(data.n_patterns, CART_MAX_PATTERNS, random_state)
    K = data.n_classes
    w = np.maximum(data.weight[rows], 1e-12)
    y = data.y[rows]
    if class_weight == "balanced":
        per_class = np.bincount(y, weights=w, minlength=K)
        w = w * (w.sum() / (K * np.maximum(per_class, 1e-300)))[y]
    elif class_weight is not None:
        raise ValueError(f"class_weight must be None or 'balanced', got {class_weight!r}")
    # each pattern's weight in its class's column, and a last column of ones (pattern counts)
    Y = np.zeros((rows.size, K + 1))
    Y[np.arange(rows.size), y] = w
    Y[:, K] = 1.0
    X = data.X[rows]
    if X.size <= CART_FLOAT_CELLS:
        X = X.astype(np.float64)  # one conversion instead of one per node
    n_nodes = graph.n_nodes
    stack = [(1, np.arange(rows.size))]
    # Gini: minimizing the weighted impurity of the children is maximizing sum_k c_k^2 / w
    # per child.  A feature that leaves one side empty divides 0 by 0 (it is no candidate);
    # the warnings are silenced once for the whole tree.
    total = np.add.reduce  # ndarray.sum's own reduction, without its Python wrapper (per node, it counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        while stack:
            n, idx = stack.pop()
            Yn = Y.take(idx, axis=0)
            counts = total(Yn[:, :K], axis=0)
            prediction[n - 1] = counts.argmax()
            feature[n - 1] = LEAF
            if 2 * n > n_nodes or np.count_nonzero(counts) < 2:
                continue
            Xn = X.take(idx, axis=0)
            sums = Xn.T @ Yn  # (F, K + 1): class weights and patterns with x_f = 1
            right, n_right = sums[:, :K], sums[:, K]
            left = counts - right
            ok = (n_right >= 0.5) & (n_right <= idx.size - 0.5)  # patterns on both sides
            if not ok.any():
                continue
            score = (total(left**2, axis=1) / total(left, axis=1)) + (total(right**2, axis=1) / total(right, axis=1))
            gain = np.where(ok, score, -np.inf)
            f = int(gain.argmax())
            if not -FLOAT_MAX < gain[f] < np.inf:
                # A candidate scored nan or +-inf (a side whose weights cancel to 0): read nan as 0 and
                # +-inf as the largest floats.  Otherwise the finite best is the same first best either way.
                f = int(np.where(ok, np.nan_to_num(score, nan=0.0), -np.inf).argmax())
            feature[n - 1] = f
            prediction[n - 1] = -1
            goes_right = Xn[:, f] > 0.5
            stack += [(2 * n, idx[~goes_right]), (2 * n + 1, idx[goes_right])]
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
    return [(name, tree) for name, tree, _ in predicted_starts(data, depth)]


def predicted_starts(data: PatternData, depth: int) -> list[tuple[str, TreeStructure, np.ndarray]]:
    """:func:`candidate_starts`, each with the class it predicts for every pattern (each tree routed once,
    a single leaf not at all), so that a caller scores them without routing them again."""
    found: list[tuple[str, TreeStructure]] = []
    for name, cw in (("CART", None), ("CART (balanced classes)", "balanced")):
        try:
            found.append((name, cart_structure(data, depth, class_weight=cw)))
        except ValueError:
            continue
    for k in range(data.n_classes):
        found.append((f"single leaf predicting class {k}", majority_leaf(data, depth, class_index=k)))
    predicted = [predictions(t, data) for _, t in found]
    score = [-(data.weight * (p == data.y)).sum() for p in predicted]
    order = np.argsort(score, kind="stable")
    return [(*found[i], predicted[i]) for i in order]


def predictions(tree: TreeStructure, data: PatternData) -> np.ndarray:
    """The class ``tree`` predicts for each pattern (a single leaf without routing the patterns: a
    read-only view of one number)."""
    if tree.feature[0] == LEAF:
        return np.broadcast_to(np.int64(tree.prediction[0]), data.y.shape)
    return tree.predict(data.X)
