"""Exhaustive search over every tree of a small depth: the independent truth
that formulations and solvers are checked against."""

from __future__ import annotations

from typing import Iterator

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.formulation.tree_graph import LEAF, PRUNED, TreeGraph, TreeStructure


def all_trees(depth: int, n_features: int, n_classes: int) -> Iterator[TreeStructure]:
    """Every imbalanced tree of maximum depth ``depth``: each node is a leaf with
    a class or a split on a feature with two subtrees."""

    def grow(n: int, d: int):
        for k in range(n_classes):
            yield {n: (LEAF, k)}
        if d < depth:
            for f in range(n_features):
                for left in grow(2 * n, d + 1):
                    for right in grow(2 * n + 1, d + 1):
                        yield {n: (f, -1), **left, **right}

    g = TreeGraph(depth)
    for nodes in grow(1, 0):
        feature = np.full(g.n_nodes, PRUNED, dtype=np.int64)
        prediction = np.full(g.n_nodes, -1, dtype=np.int64)
        for n, (f, k) in nodes.items():
            feature[n - 1] = f
            prediction[n - 1] = k
        yield TreeStructure(depth, feature, prediction)


def milp_solve(model: ModelArrays) -> np.ndarray | None:
    """Solve ``model`` with scipy's MILP (no lazy cuts); None when infeasible."""
    sign = -1.0 if model.sense == "max" else 1.0
    res = milp(
        sign * model.c,
        constraints=LinearConstraint(model.A, model.row_lower, model.row_upper),
        integrality=model.integrality.astype(int),
        bounds=Bounds(model.col_lower, model.col_upper),
    )
    return res.x if res.status == 0 else None
