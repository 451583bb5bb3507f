"""Exhaustive search over every tree of a small depth: the independent truth
that formulations and solvers are checked against."""

from __future__ import annotations

from fractions import Fraction
from typing import Iterator

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure


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


def holds(kind: str, bound: float, y, pred, group, legit, pos: int) -> bool:
    """Does a tree with predictions ``pred`` meet the bound? (paper, Sections 4.2-4.3)"""
    b = Fraction(str(bound))
    is_pos, said_pos = y == pos, pred == pos

    def share(num_mask, den_mask):
        return Fraction(int(num_mask.sum()), int(den_mask.sum()))

    if kind == "min_recall":
        return not is_pos.any() or share(is_pos & said_pos, is_pos) >= b
    if kind == "min_precision":
        return not said_pos.any() or share(is_pos & said_pos, said_pos) >= b
    if kind == "min_specificity":
        return is_pos.all() or share(~is_pos & ~said_pos, ~is_pos) >= b
    everyone = np.ones_like(is_pos)
    cohorts = {
        "statistical_parity": [everyone],
        "conditional_statistical_parity": [legit == level for level in np.unique(legit)],
        "predictive_equality": [~is_pos],
        "equal_opportunity": [is_pos],
        "equalized_odds": [is_pos, ~is_pos],
    }[kind]
    for cohort in cohorts:
        rates = [share(cohort & (group == g) & said_pos, cohort & (group == g)) for g in np.unique(group) if (cohort & (group == g)).any()]
        if rates and max(rates) - min(rates) > b:
            return False
    return True


def true_objective(objective: str, y, pred, pos: int) -> Fraction:
    """Objective of formulation (11) with unit weights, lambda = 0 (Section 4.2)."""
    n = len(y)
    per_class = {k: Fraction(int(((pred == k) & (y == k)).sum()), int((y == k).sum())) for k in np.unique(y)}
    if objective == "accuracy":
        return Fraction(int((pred == y).sum()))
    if objective == "balanced_accuracy":
        return n * sum(per_class.values()) / len(per_class)
    if objective == "worst_case_accuracy":
        return n * min(per_class.values())
    if objective == "sensitivity":
        return n * per_class[pos]
    raise AssertionError(objective)
