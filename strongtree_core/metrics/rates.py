"""Per-group rates of a positive label, NaN when their denominator is empty.

Thin wrappers over fairlearn and scikit-learn: those return 0 (with a
warning) for a rate whose denominator is empty, which would make a group
with no positive rows look like a group whose positives are all missed.
Here an empty denominator gives NaN, and NaN rates are left out of gaps.
"""

from __future__ import annotations

import functools
import warnings
from typing import Callable

import numpy as np
from fairlearn.metrics import false_negative_rate, false_positive_rate, selection_rate, true_positive_rate
from sklearn.metrics import accuracy_score, precision_score

Rate = Callable[[np.ndarray, np.ndarray], float]


def _quiet(rate: Rate) -> Rate:
    """scikit-learn warns about one-label groups, which are normal here."""

    @functools.wraps(rate)
    def wrapped(y_true, y_pred) -> float:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="A single label was found")
            return rate(y_true, y_pred)

    return wrapped


def rate_functions(positive_label) -> dict[str, Rate]:
    """Rates of one positive label, each ``f(y_true, y_pred) -> float`` on original labels.

    Keys: ``count``, ``selection_rate``, ``tpr``, ``fpr``, ``fnr``, ``precision``, ``accuracy``.
    """

    def binary(y_true, y_pred):
        return (np.asarray(y_true) == positive_label).astype(int), (np.asarray(y_pred) == positive_label).astype(int)

    def count(y_true, y_pred) -> float:
        return float(len(y_true))

    def sel(y_true, y_pred) -> float:
        _, p = binary(y_true, y_pred)
        return float(selection_rate(p, p, pos_label=1)) if len(p) else np.nan

    def tpr(y_true, y_pred) -> float:
        t, p = binary(y_true, y_pred)
        return float(true_positive_rate(t, p, pos_label=1)) if t.any() else np.nan

    def fpr(y_true, y_pred) -> float:
        t, p = binary(y_true, y_pred)
        return float(false_positive_rate(t, p, pos_label=1)) if (t == 0).any() else np.nan

    def fnr(y_true, y_pred) -> float:
        t, p = binary(y_true, y_pred)
        return float(false_negative_rate(t, p, pos_label=1)) if t.any() else np.nan

    def precision(y_true, y_pred) -> float:
        t, p = binary(y_true, y_pred)
        return float(precision_score(t, p, pos_label=1, zero_division=np.nan)) if p.any() else np.nan

    def accuracy(y_true, y_pred) -> float:
        return float(accuracy_score(y_true, y_pred)) if len(y_true) else np.nan

    rates = {
        "count": count,
        "selection_rate": sel,
        "tpr": tpr,
        "fpr": fpr,
        "fnr": fnr,
        "precision": precision,
        "accuracy": accuracy,
    }
    return {name: _quiet(rate) for name, rate in rates.items()}
