"""Confusion matrices per protected group."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import confusion_matrix

from strongtree_core.metrics._inputs import NEED_SENSITIVE, prepare


def group_confusion_matrices(
    y_true, y_pred, *, sensitive_features, labels=None, sample_weight=None
) -> dict[object, pd.DataFrame]:
    """scikit-learn's confusion matrix within each group.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)
    sensitive_features : array-like or DataFrame, n rows
    labels : sequence, optional
        Row/column order; defaults to every label seen in ``y_true`` or ``y_pred``.
    sample_weight : array-like, shape (n,), optional
        Weight of each row; the entries are then summed weights.

    Returns
    -------
    dict of group to DataFrame
        Index ``true <label>``, columns ``predicted <label>``, entries are row counts
        (summed weights with ``sample_weight``).

    Examples
    --------
    >>> from strongtree_core.metrics import group_confusion_matrices
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> matrices = group_confusion_matrices(y_true, y_pred, sensitive_features=group)
    >>> sorted(matrices)
    ['a', 'b']
    >>> matrices['a'].to_numpy().tolist()
    [[1, 0], [1, 1]]
    """
    prep = prepare(y_true, y_pred, sensitive_features=sensitive_features, need_positive=False, sample_weight=sample_weight)
    if prep.group is None:
        raise ValueError(NEED_SENSITIVE.format(what="group_confusion_matrices"))
    if labels is None:
        labels = pd.unique(np.concatenate([prep.y_true, prep.y_pred])).tolist()
        labels = sorted(labels, key=lambda v: (str(type(v)), v))
    out = {}
    for g in pd.unique(prep.group):
        sel = prep.group == g
        w = None if prep.weight is None else prep.weight[sel]
        m = confusion_matrix(prep.y_true[sel], prep.y_pred[sel], labels=labels, sample_weight=w)
        out[g] = pd.DataFrame(m, index=[f"true {v}" for v in labels], columns=[f"predicted {v}" for v in labels])
    return out
