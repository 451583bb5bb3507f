"""Re-measure every constrained quantity on a tree's predictions.

A solver returns a vector that meets its rows up to tolerances; the tree read
from it is a function of b, p and w only. :func:`check_constraints` counts,
on the tree's actual predictions, every quantity a side constraint bounds and
decides each bound in exact rational arithmetic (the same integer counts and
the same skipped comparisons as the rows of the model).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from strongtree_core.formulation.quality_constraints import ConstraintCheck
from strongtree_core.formulation.spec import TreeSpec

#: Error text (tests assert it).
NOT_MEASURABLE = (
    "side constraint {name!r} has no measure(...) method, so its bound cannot be re-checked on predictions: "
    "give it one that returns a list of ConstraintCheck"
)


def check_constraints(
    spec_or_constraints: TreeSpec | Iterable,
    y_true_idx,
    y_pred_idx,
    group=None,
    legit=None,
    positive: int | None = None,
    *,
    count=None,
) -> list[ConstraintCheck]:
    """Measure every side constraint on predictions.

    Parameters
    ----------
    spec_or_constraints : TreeSpec or iterable of side constraints
        A TreeSpec contributes its ``side_constraints`` and, when ``positive``
        is None, its ``pos_label``.
    y_true_idx, y_pred_idx : array of int, shape (n,)
        Class indices of the true and predicted labels.
    group, legit : array of int, shape (n,), optional
        Protected-group and legitimate-factor codes (needed by fairness constraints).
    positive : int, optional
        Positive class index for constraints that have none of their own.
    count : array of int, shape (n,), optional
        Rows behind each entry when the inputs are patterns (1 by default).

    Returns
    -------
    list of ConstraintCheck
        Each unpacks as ``(name, measured, bound, satisfied)``.

    Examples
    --------
    >>> import numpy as np
    >>> from strongtree_core.metrics import check_constraints
    >>> from strongtree_core.formulation.fairness_constraints import StatisticalParity
    >>> y = np.array([1, 0, 1, 0]); pred = np.array([1, 0, 0, 0]); g = np.array([0, 0, 1, 1])
    >>> (check,) = check_constraints([StatisticalParity(0.6, pos_label=1)], y, pred, group=g, positive=1)
    >>> check.name, round(check.measured, 3), check.satisfied
    ('statistical parity difference', 0.5, True)
    """
    if isinstance(spec_or_constraints, TreeSpec):
        constraints = tuple(spec_or_constraints.side_constraints)
        if positive is None:
            positive = spec_or_constraints.pos_label
    else:
        constraints = tuple(spec_or_constraints)
    y_true = np.asarray(y_true_idx)
    y_pred = np.asarray(y_pred_idx)
    out: list[ConstraintCheck] = []
    for constraint in constraints:
        measure = getattr(constraint, "measure", None)
        if measure is None:
            raise ValueError(NOT_MEASURABLE.format(name=getattr(constraint, "name", type(constraint).__name__)))
        out += measure(y_true, y_pred, group=group, legit=legit, positive=positive, count=count)
    return out
