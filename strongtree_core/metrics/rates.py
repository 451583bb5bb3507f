"""Per-group rates of a positive label, NaN when their denominator is empty.

The rates are grouped by fairlearn's ``MetricFrame`` (its differences and
ratios between groups); each rate is a ratio of weighted counts.  fairlearn's
and scikit-learn's own rate functions return 0 (with a warning) for a rate
whose denominator is empty, which would make a group with no positive rows
look like a group whose positives are all missed.  Here an empty denominator
gives NaN, and NaN rates are left out of gaps.

Every function takes ``sample_weight``: the metrics run on distinct
(y_true, y_pred, group, legit) combinations weighted by the summed weight of
their rows (their row counts when no ``sample_weight`` was given; see
:func:`by_group_frame`), which gives the numbers of the rows themselves
(exactly, for counts: sums of integers are exact in floating point) at a
fraction of fairlearn's per-row cost.  ``count`` is always a number of rows.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame

from strongtree_core.encoding.features import equals_label
from strongtree_core.metrics._inputs import Prepared

Rate = Callable[..., float]


def rate_functions(pos_label) -> dict[str, Rate]:
    """Rates of one positive label, each ``f(y_true, y_pred, sample_weight) -> float``.

    Keys: ``count``, ``selection_rate``, ``tpr``, ``fpr``, ``fnr``, ``precision``, ``accuracy``.
    Labels are the original ones; the positive label is compared inside.  Each rate is its
    textbook ratio of weighted counts (the same numbers as fairlearn's and scikit-learn's
    functions, ``tests/test_metrics.py`` checks them against those), NaN when its denominator
    has no row, computed directly: the sweep measures every point's tree with them, and
    scikit-learn's argument checks cost more than the counts.
    """

    def binary(y_true, y_pred):
        return equals_label(y_true, pos_label), equals_label(y_pred, pos_label)

    def ratio(numerator, denominator, weight) -> float:
        below = float(np.sum(weight[denominator]))
        return float(np.sum(weight[numerator & denominator])) / below if below > 0 else np.nan

    def count(y_true, y_pred, sample_weight) -> float:
        return float(np.sum(sample_weight))

    def sel(y_true, y_pred, sample_weight) -> float:
        _, p = binary(y_true, y_pred)
        return ratio(p, np.ones_like(p), np.asarray(sample_weight, dtype=float)) if len(p) else np.nan

    def tpr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return ratio(p, t, np.asarray(sample_weight, dtype=float)) if t.any() else np.nan

    def fpr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return ratio(p, ~t, np.asarray(sample_weight, dtype=float)) if (~t).any() else np.nan

    def fnr(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return ratio(~p, t, np.asarray(sample_weight, dtype=float)) if t.any() else np.nan

    def precision(y_true, y_pred, sample_weight) -> float:
        t, p = binary(y_true, y_pred)
        return ratio(t, p, np.asarray(sample_weight, dtype=float)) if p.any() else np.nan

    def accuracy(y_true, y_pred, sample_weight) -> float:
        same = np.asarray(y_true) == np.asarray(y_pred)
        return ratio(same, np.ones_like(same), np.asarray(sample_weight, dtype=float)) if len(same) else np.nan

    return {
        "count": count,
        "selection_rate": sel,
        "tpr": tpr,
        "fpr": fpr,
        "fnr": fnr,
        "precision": precision,
        "accuracy": accuracy,
    }


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
