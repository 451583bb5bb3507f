"""Why a leaf predicts a class other than its training rows' majority.

With accuracy and no side constraint every leaf of an optimal tree predicts its
majority class (or a tied one).  Under a constraint or another objective a leaf may
predict otherwise; :func:`changed_leaves` gives the reason by relabelling that leaf
alone to its majority class and re-measuring, on the training predictions, every
side constraint (with the exact checks of :func:`~strongtree_core.metrics.check_constraints`)
and the objective (:func:`~strongtree_core.formulation.objectives.tree_objective`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.metrics.constraints import check_constraints
from strongtree_core.structure import TreeStructure
from strongtree_core.tree.fitted import ChangedLeaf

BREAKS = "relabelling this leaf to {label!r} breaks {what}"
GAP_BROKEN = "{name}: gap {measured:.1f} pp > {bound:.1f} pp"
MIN_BROKEN = "{name}: {measured:.3f} < {bound:.3f}"
OBJECTIVE_LOWER = (
    "no constraint forces it: relabelling this leaf to {label!r} lowers the objective ({objective}) "
    "from {before:.4g} to {after:.4g}"
)
OBJECTIVE_TIE = "a tie: relabelling this leaf to {label!r} leaves the objective ({objective}) at {before:.4g}"
NOT_OPTIMAL = (
    "relabelling this leaf to {label!r} would raise the objective ({objective}) from {before:.4g} to {after:.4g} "
    "and break no constraint: the solve stopped before it found that (status {status!r})"
)
OBJECTIVE_NAMES = {
    "accuracy": "correctly classified rows",
    "balanced_accuracy": "balanced accuracy",
    "worst_case_accuracy": "worst-case accuracy",
    "sensitivity": "sensitivity",
}


def _objective_name(spec: TreeSpec) -> str:
    name = OBJECTIVE_NAMES.get(spec.objective, spec.objective)
    return f"{name}, lambda = {spec.lambda_:g}" if spec.lambda_ else name


def _broken_text(check) -> str:
    name, measured, bound, _ = check
    if "difference" in name:
        return GAP_BROKEN.format(name=name.replace(" difference", ""), measured=100 * measured, bound=100 * bound)
    return MIN_BROKEN.format(name=name, measured=measured, bound=bound)


def changed_leaves(structure: TreeStructure, data: PatternData, spec: TreeSpec, classes, leaf_weights: np.ndarray,
                   status: str = "optimal") -> tuple[ChangedLeaf, ...]:
    """Every reachable leaf whose prediction is not a majority class of its training rows, with the reason.

    Parameters
    ----------
    structure : TreeStructure
    data : PatternData
        The training patterns the tree was fitted on.
    spec : TreeSpec
        Its objective and side constraints.
    classes : sequence of labels
    leaf_weights : ndarray, shape (n_nodes, n_classes)
        Training rows (or summed weights) reaching each node, by class.
    status : str
        How the solve ended (named when a relabelling would have improved the tree).
    """
    out = []
    before = None  # the tree's objective, computed at the first leaf that needs it
    leaves = structure.leaves
    every = np.asarray(leaf_weights, dtype=float)[leaves - 1]  # (leaves, classes), weights >= 0
    top = every.max(axis=1)
    said = every[np.arange(leaves.size), structure.prediction[leaves - 1]]
    # The leaves with rows whose predicted class weighs less than their heaviest, found at once (weights
    # >= 0 sum to more than 0 exactly when the largest is more than 0); each is examined below.
    for leaf in leaves[(top > 0) & (said < top)]:
        weights = np.asarray(leaf_weights[leaf - 1], dtype=float)
        predicted = int(structure.prediction[leaf - 1])
        if weights.sum() <= 0 or weights[predicted] >= weights.max():
            continue
        majority = int(np.argmax(weights))
        prediction = structure.prediction.copy()
        prediction[leaf - 1] = majority
        relabelled = replace(structure, prediction=prediction)
        label = _plain(classes[majority])
        checks = check_constraints(spec, data.y, relabelled.predict(data.X), group=data.group, legit=data.legit,
                                   count=data.count) if spec.side_constraints else []
        broken = [c for c in checks if not c.satisfied]
        if broken:
            reason = BREAKS.format(label=label, what="; ".join(_broken_text(c) for c in broken))
        else:
            if before is None:
                before = tree_objective(data, spec, structure)
            after = tree_objective(data, spec, relabelled)
            objective = _objective_name(spec)
            if after < before - 1e-9:
                reason = OBJECTIVE_LOWER.format(label=label, objective=objective, before=before, after=after)
            elif after <= before + 1e-9:
                reason = OBJECTIVE_TIE.format(label=label, objective=objective, before=before)
            else:
                reason = NOT_OPTIMAL.format(label=label, objective=objective, before=before, after=after, status=status)
        out.append(ChangedLeaf(int(leaf), label, _plain(classes[predicted]), reason,
                               tuple(c.name for c in broken)))
    return tuple(out)


def _plain(value):
    return value.item() if hasattr(value, "item") else value
