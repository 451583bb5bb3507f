"""Per-group rates of a positive label, NaN when their denominator is empty.

Thin wrappers over fairlearn and scikit-learn: those return 0 (with a
warning) for a rate whose denominator is empty, which would make a group
with no positive rows look like a group whose positives are all missed.
Here an empty denominator gives NaN, and NaN rates are left out of gaps.

Every function takes ``sample_weight``: the metrics run on distinct
(y_true, y_pred, group, legit) combinations weighted by the summed weight of
their rows (their row counts when no ``sample_weight`` was given; see
:func:`by_group_frame`), which gives the numbers of the rows themselves
(exactly, for counts: sums of integers are exact in floating point) at a
fraction of fairlearn's per-row cost.  ``count`` is always a number of rows.
"""

from __future__ import annotations

import functools
import warnings
from typing import Callable

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame, false_negative_rate, false_positive_rate, selection_rate, true_positive_rate
from sklearn.metrics import accuracy_score, precision_score

from strongtree_core.metrics._inputs import Prepared

Rate = Callable[..., float]


def _quiet(rate: Rate) -> Rate:
    """scikit-learn warns about one-label groups, which are normal here."""

    @functools.wraps(rate)
    def wrapped(y_true, y_pred, sample_weight) -> float:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="A single label was found")
            return rate(y_true, y_pred, sample_weight)

    return wrapped


def rate_functions(pos_label) -> dict[str, Rate]:
    """Rates of one positive label, each ``f(y_true, y_pred, sample_weight) -> float``.

    Keys: ``count``, ``selection_rate``, ``tpr``, ``fpr``, ``fnr``, ``precision``, ``accuracy``.
    Labels are the original ones; the positive label is compared inside.
    """

    def binary(y_true, y_pred):
        return (np.asarray(y_true) == pos_label).astype(int), (np.asarray(y_pred) == pos_label).astype(int)

    def count(y_true, y_pred, sample_weight) -> float:
        return float(np.sum(sample_weight))

    def sel(y_true, y_pred, sample_weight) -> float:
        _, p = binary(y_true, y_pred)
        return float(selection_rate(p, p, pos_label=1, sample_weight=sample_weight)) if len(p) else np.nan

    def tpr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return float(true_positive_rate(t, p, pos_label=1, sample_weight=sample_weight)) if t.any() else np.nan

    def fpr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return float(false_positive_rate(t, p, pos_label=1, sample_weight=sample_weight)) if (t == 0).any() else np.nan

    def fnr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return float(false_negative_rate(t, p, pos_label=1, sample_weight=sample_weight)) if t.any() else np.nan

    def precision(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        if not p.any():
            return np.nan
        return float(precision_score(t, p, pos_label=1, zero_division=np.nan, sample_weight=sample_weight))

    def accuracy(y_true, y_pred, sample_weight) -> float:
        return float(accuracy_score(y_true, y_pred, sample_weight=sample_weight)) if len(y_true) else np.nan

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


def by_group_frame(prep: Prepared, keys, *, conditional: bool) -> MetricFrame:
    """fairlearn's MetricFrame of the rates ``keys`` by group (and legitimate level).

    Rows are first collapsed into distinct (y_true, y_pred, group[, legit])
    combinations, each with its number of rows (for ``count``) and their
    summed weight (for every rate).
    """
    columns = {"y_true": prep.y_true, "y_pred": prep.y_pred, "group": prep.group}
    if conditional:
        columns["legit"] = prep.legit
    rows = pd.DataFrame(columns).assign(_rows=1.0, _weight=1.0 if prep.weight is None else prep.weight)
    combos = rows.groupby(list(columns), dropna=False, sort=False)[["_rows", "_weight"]].sum().reset_index()
    rates = rate_functions(prep.pos_label)
    per_key = {"count": combos["_rows"].to_numpy(dtype=float)}
    weight = combos["_weight"].to_numpy(dtype=float)
    return MetricFrame(
        metrics={k: rates[k] for k in keys},
        y_true=combos["y_true"].to_numpy(),
        y_pred=combos["y_pred"].to_numpy(),
        sensitive_features=combos["group"],
        control_features=combos["legit"] if conditional else None,
        sample_params={k: {"sample_weight": per_key.get(k, weight)} for k in keys},
    )
