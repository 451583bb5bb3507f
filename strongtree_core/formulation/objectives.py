"""Objectives of formulation (11) (paper, Section 4.2).

With ``correct_k = sum_{i: y_i = k} weight_i * yhat[i, k]`` and ``W_k`` the
total weight of class ``k`` (``W`` of all rows), every objective is expressed
in rows so that the branching penalty ``lambda`` keeps the meaning it has in
eq. (7):

* accuracy:            (1 - lambda) * sum_k correct_k                      - lambda * sum b
* balanced_accuracy:   (1 - lambda) * W / |K| * sum_k correct_k / W_k      - lambda * sum b
* worst_case_accuracy: (1 - lambda) * W * m,  m <= correct_k / W_k  for all k
                                                                          - lambda * sum b
* sensitivity:         (1 - lambda) * W * correct_pos / W_pos              - lambda * sum b

The paper: Sina Aghaei, Andrés Gómez and Phebe Vayanos, *Strong Optimal Classification Trees*,
arXiv:2103.15965 (Operations Research).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.formulation.arrays import ColumnAllocator, RowBuilder
from strongtree_core.formulation.spec import TreeSpec


def add_objective_columns(cols: ColumnAllocator, spec: TreeSpec) -> None:
    """The worst-case accuracy needs m in [0, 1], the smallest class accuracy."""
    if spec.objective == "worst_case_accuracy":
        cols.add("m", (1,), integer=False)


def objective_vector(context, rows: RowBuilder, n_cols: int, spec: TreeSpec) -> np.ndarray:
    """Objective coefficients of formulation (11); adds the rows of m if needed."""
    data = context.data
    zs = context.index["zs"]  # (P, N, K)
    P = data.n_patterns
    K = data.n_classes
    class_weight = np.bincount(data.y, weights=data.weight, minlength=K)
    total = float(data.weight.sum())
    correct_cols = zs[np.arange(P), :, data.y]  # (P, N): yhat[i, y_i] pieces
    c = np.zeros(n_cols)
    scale = 1.0 - spec.lambda_
    per_row = row_objective_weights(data, spec)
    if spec.objective == "worst_case_accuracy":
        m = context.index["m"][0]
        c[m] = scale * total
        for k in np.flatnonzero(class_weight > 0):
            sel = np.flatnonzero(data.y == k)
            cols = np.concatenate([[m], correct_cols[sel].ravel()])
            coefs = np.concatenate([[1.0], -np.repeat(data.weight[sel] / class_weight[k], correct_cols.shape[1])])
            rows.add(f"worst_case_accuracy class {k}", cols[None, :], coefs[None, :], -np.inf, 0.0)
    if per_row is not None:
        np.add.at(c, correct_cols.ravel(), np.repeat(scale * per_row, correct_cols.shape[1]))
    if spec.lambda_ > 0:
        c[context.index["b"].ravel()] -= spec.lambda_
    return c


def row_objective_weights(data, spec: TreeSpec) -> np.ndarray | None:
    """Objective weight of a correctly classified pattern, shape (n_patterns,).

    Accuracy, balanced accuracy and sensitivity are weighted accuracies:
    ``objective = (1 - lambda) * sum_i per_row_i * [pattern i correct] - lambda * sum b``.
    Returns None for the worst-case accuracy, which is not of that form.
    """
    if spec.objective == "accuracy":
        return np.asarray(data.weight, dtype=float)
    K = data.n_classes
    class_weight = np.bincount(data.y, weights=data.weight, minlength=K)
    total = float(data.weight.sum())
    if spec.objective == "balanced_accuracy":
        present = class_weight > 0
        return total / present.sum() * data.weight / np.where(present, class_weight, 1.0)[data.y]
    if spec.objective == "sensitivity":
        pos = _positive(spec)
        if class_weight[pos] <= 0:
            raise ValueError("the positive class has no training rows: sensitivity is undefined")
        return np.where(data.y == pos, total * data.weight / class_weight[pos], 0.0)
    if spec.objective == "worst_case_accuracy":
        return None
    raise ValueError(f"unknown objective {spec.objective!r}")


def tree_objective(data, spec: TreeSpec, tree, predicted=None) -> float:
    """The objective of ``spec`` at ``tree``, measured from its predictions on the
    patterns, in the units of the MIO objective (the independent re-score of any
    tree a solver or the dynamic program returns).  ``predicted``: the tree's class
    per pattern when the caller has it already (else the patterns are routed)."""
    correct = (tree.predict(data.X) if predicted is None else predicted) == data.y
    per_row = row_objective_weights(data, spec)
    if per_row is not None:
        value = float(per_row[correct].sum())
    else:  # worst-case accuracy: W * min_k (correct weight of class k / W_k)
        class_weight = np.bincount(data.y, weights=data.weight, minlength=data.n_classes)
        hit = np.bincount(data.y, weights=data.weight * correct, minlength=data.n_classes)
        present = class_weight > 0
        value = float(data.weight.sum()) * float(np.min(hit[present] / class_weight[present]))
    return (1.0 - spec.lambda_) * value - spec.lambda_ * tree.n_branching


def _positive(spec: TreeSpec) -> int:
    if spec.pos_label is None:
        raise ValueError("this objective needs a positive class (pos_label=...)")
    return int(spec.pos_label)
