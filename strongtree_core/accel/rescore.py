"""Score a decoded tree on the training patterns, independently of any solver.

Every tree the dynamic program returns is re-scored here before its value is
reported: the objective in the units of the MIO objective of the same
:class:`TreeSpec` (eq. 7 / 11), and each constraint the exact search enforces
(eq. 8 branching bound, eq. 10 minimum leaf size, fairness gaps) measured
from the tree's predictions.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.accel.fairness_task import FairnessRequest, exact_gap, satisfies
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.objectives import tree_objective  # noqa: F401  (re-exported)
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import TreeStructure


def leaf_row_counts(data: PatternData, tree: TreeStructure) -> dict[int, int]:
    """Training rows reaching every leaf of ``tree`` (leaves no row reaches included, with 0)."""
    reached = np.bincount(tree.apply(data.X), weights=data.count, minlength=tree.feature.shape[0] + 1)
    return {int(n): int(round(reached[n])) for n in tree.leaves}


def violations(
    data: PatternData,
    spec: TreeSpec,
    tree: TreeStructure,
    fairness: FairnessRequest | None = None,
) -> list[str]:
    """Constraints of ``spec`` that ``tree`` breaks, in words (empty when feasible).

    ``fairness`` is the fairness constraint enforced, if any; its gap is
    compared with the bound exactly on row counts.
    """
    out = []
    if not tree.is_valid():
        out.append("the tree is not a valid tree")
    if tree.depth != spec.depth:
        out.append(f"depth {tree.depth} differs from the requested {spec.depth}")
    if spec.max_branching is not None and tree.n_branching > spec.max_branching:
        out.append(f"{tree.n_branching} branching nodes > {spec.max_branching} (eq. 8)")
    if spec.min_leaf > 0:
        small = {n: c for n, c in leaf_row_counts(data, tree).items() if c < spec.min_leaf}
        if small:
            out.append(f"leaves {sorted(small)} hold fewer than {spec.min_leaf} rows (eq. 10)")
    if fairness is not None and not satisfies(data, tree, fairness):
        gap = float(exact_gap(data, tree, fairness))
        out.append(f"{fairness.kind} gap {gap:.6g} > {fairness.bound:g}")
    return out
