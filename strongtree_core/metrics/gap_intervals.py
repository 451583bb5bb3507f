"""Each notion's gap with its simultaneous interval, and every compared rate with its own.

:func:`compared_counts` counts, for one notion, the rows of each cohort and group
(the denominator ``n``) and those predicted positive (``k``), exactly as the
constraints of Section 4.3 compare them; :func:`fairness_intervals` turns them
into one tidy table.  The intervals are those of
:mod:`strongtree_core.metrics.intervals`.

Weights: with ``sample_weight`` a rate is the weighted share, and its interval
uses Kish's effective number of rows ``n_eff = (sum w)^2 / sum w^2`` with
``k_eff = rate * n_eff`` (an approximation; without weights ``n_eff = n``).

Small denominators: a rate measured on fewer than :data:`SMALL_N` rows (effective
rows with weights) is flagged ``small`` (:func:`strongtree_core.metrics.verdict.is_small`, the
one rule of every surface): its interval is wide and the score intervals' coverage
least reliable there; the exact intervals (``method="exact"``) keep their guarantee
at any size.  Few rows of one outcome among many rows is not small: a rate of 0 of
2,371 rows is known to within a fraction of a point, and its Wilson interval says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from strongtree_core.metrics._inputs import prepare
from strongtree_core.metrics.fairness_gaps import NOTION_RATES, RATE_NAMES, _check
from strongtree_core.metrics.intervals import (
    absolute_interval,
    check_confidence,
    difference_interval,
    proportion_interval,
)
from strongtree_core.renames import RENAMED_METRIC_ARGUMENTS, refuses_renamed
from strongtree_core.metrics.verdict import SMALL_ROWS, is_small

#: Rates measured on fewer rows than this are flagged ``small``.
SMALL_N = SMALL_ROWS
#: Rows of a class below which a group's summary flags it (:mod:`strongtree_core.metrics.group_summary`):
#: a rate among the rows of that class rests on them.
SMALL_OUTCOME = 5

#: Columns of :func:`fairness_intervals`, in order.
INTERVAL_COLUMNS = (
    "notion", "gap", "gap_low", "gap_high", "ratio", "n_differences", "confidence", "method",
    "cohort", "rate", "group", "value", "low", "high", "positives", "denominator", "small",
)


@dataclass(frozen=True)
class CohortCounts:
    """Counts of one cohort of one notion.

    Attributes
    ----------
    label : str
        "all rows", "rows of the positive class", "legitimate level 'x'", ...
    rate : str
        The rate's name ("share predicted positive", "true positive rate", ...).
    positives, rows : ndarray of float, shape (n_groups,)
        Rows predicted positive and rows of the cohort, per group (summed weights with weights).
    effective : ndarray of float, shape (n_groups,)
        Kish's effective rows (equal to ``rows`` without weights).
    """

    label: str
    rate: str
    positives: np.ndarray
    rows: np.ndarray
    effective: np.ndarray

    @property
    def values(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.rows > 0, self.positives / np.where(self.rows > 0, self.rows, 1), np.nan)

    def pairs(self) -> list[tuple[int, int]]:
        """Pairs of groups that both have rows in the cohort."""
        return list(combinations(np.flatnonzero(self.rows > 0).tolist(), 2))


_COHORT = {"selection_rate": "all rows", "tpr": "rows of the positive class", "fpr": "rows outside the positive class"}


def compared_counts(notion: str, true_pos, pred_pos, group, n_groups: int, legit=None,
                    legit_names=None, weight=None) -> list[CohortCounts]:
    """Counts behind every rate ``notion`` compares.

    Parameters
    ----------
    notion : str
        A key of :data:`~strongtree_core.metrics.fairness_gaps.NOTION_RATES`.
    true_pos, pred_pos : array of bool, shape (n,)
        Whether each row is truly / predicted of the positive class.
    group : array of int, shape (n,)
        Group code of each row, in ``range(n_groups)``.
    legit : array of int, shape (n,), optional
        Legitimate level code (conditional statistical parity).
    legit_names : sequence of str, optional
        Name of each legitimate code.
    weight : array of float, shape (n,), optional
    """
    true_pos = np.asarray(true_pos, dtype=bool)
    pred_pos = np.asarray(pred_pos, dtype=bool)
    group = np.asarray(group, dtype=np.int64)
    w = np.ones(group.shape[0]) if weight is None else np.asarray(weight, dtype=float)
    masks: list[tuple[str, str, np.ndarray]] = []
    for key in NOTION_RATES[notion]:
        base = {"selection_rate": np.ones_like(true_pos), "tpr": true_pos, "fpr": ~true_pos}[key]
        if notion == "conditional_statistical_parity":
            legit = np.asarray(legit, dtype=np.int64)
            for level in np.unique(legit):
                name = legit_names[level] if legit_names is not None else level
                masks.append((f"legitimate level {name!r}", RATE_NAMES[key], base & (legit == level)))
        else:
            masks.append((_COHORT[key], RATE_NAMES[key], base))
    out = []
    for label, rate, mask in masks:
        rows = np.bincount(group[mask], weights=w[mask], minlength=n_groups)
        hits = np.bincount(group[mask & pred_pos], weights=w[mask & pred_pos], minlength=n_groups)
        squares = np.bincount(group[mask], weights=w[mask] ** 2, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            effective = np.where(squares > 0, rows ** 2 / np.where(squares > 0, squares, 1), 0.0)
        out.append(CohortCounts(label, rate, hits, rows, effective))
    return out


def notion_gap_interval(cohorts: list[CohortCounts], confidence: float, method: str) -> tuple[float, float, float, int]:
    """(gap, gap_low, gap_high, K) of a notion from its cohorts (Bonferroni over the K differences)."""
    a_idx, b_idx, ka, na, kb, nb, gaps = [], [], [], [], [], [], []
    for c in cohorts:
        values = c.values
        for p, q in c.pairs():
            ka.append(values[p] * c.effective[p])
            na.append(c.effective[p])
            kb.append(values[q] * c.effective[q])
            nb.append(c.effective[q])
            gaps.append(abs(values[p] - values[q]))
            a_idx.append(p)
            b_idx.append(q)
    K = len(gaps)
    if K == 0:
        return float("nan"), float("nan"), float("nan"), 0
    level = 1.0 - (1.0 - confidence) / K
    low, high = difference_interval(np.array(ka), np.array(na), np.array(kb), np.array(nb), level, method)
    lo, hi = absolute_interval(low, high)
    return float(max(gaps)), float(lo.max()), float(hi.max()), K


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def fairness_intervals(
    y_true,
    y_pred,
    *,
    sensitive_features,
    legitimate_features=None,
    pos_label,
    notions=None,
    confidence: float = 0.95,
    method: str = "wilson",
    sample_weight=None,
) -> pd.DataFrame:
    """Every notion's gap with a simultaneous interval, and every compared rate with its interval.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)
        Labels, any type.
    sensitive_features : array-like, list, dict or DataFrame, n rows
    legitimate_features : array-like, list, dict or DataFrame, n rows, optional
        Needed by conditional statistical parity.
    pos_label : object
    notions : str or sequence of str, optional
        Default: every notion (conditional statistical parity only with ``legitimate_features``).
    confidence : float in (0, 1), default 0.95
        Of each rate's interval (alone) and of each gap's interval (simultaneous over
        the notion's K differences, each at ``1 - (1 - confidence)/K``).
    method : {"wilson", "exact"}, default "wilson"
        Wilson score / Newcombe hybrid score intervals, or Clopper-Pearson ones.
    sample_weight : array-like, shape (n,), optional

    Returns
    -------
    DataFrame
        One row per notion, cohort and group with a rate, columns :data:`INTERVAL_COLUMNS`:
        ``gap, gap_low, gap_high, ratio, n_differences`` repeat on every row of a notion;
        ``value, low, high`` are the group's rate and interval, ``positives`` and
        ``denominator`` its counts (rows, or summed weights), ``small`` the flag above.
        A group with no rows in a cohort has no row there (its rate is undefined).

    Examples
    --------
    >>> from strongtree_core.metrics import fairness_intervals
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> table = fairness_intervals(y_true, y_pred, sensitive_features=group, pos_label='yes', notions=['statistical_parity'])
    >>> list(table.columns)[:4]
    ['notion', 'gap', 'gap_low', 'gap_high']
    """
    confidence = check_confidence(confidence)
    prep = prepare(
        y_true, y_pred, pos_label=pos_label, sensitive_features=sensitive_features,
        legitimate_features=legitimate_features, sample_weight=sample_weight,
    )
    if isinstance(notions, str):
        notions = [notions]
    if notions is None:
        notions = [n for n in NOTION_RATES if n != "conditional_statistical_parity" or prep.legit is not None]
    group_codes, group_names = pd.factorize(pd.Series(prep.group, dtype=object), sort=True)
    legit_codes, legit_names = (None, None)
    if prep.legit is not None:
        legit_codes, legit_names = pd.factorize(pd.Series(prep.legit, dtype=object), sort=True)
    rows = []
    for notion in notions:
        _check(notion, prep)
        cohorts = compared_counts(
            notion, prep.true_positive, prep.pred_positive, group_codes, len(group_names),
            legit=legit_codes, legit_names=None if legit_names is None else list(legit_names), weight=prep.weight,
        )
        gap, gap_low, gap_high, K = notion_gap_interval(cohorts, confidence, method)
        ratio = _ratio(cohorts)
        for c in cohorts:
            present = np.flatnonzero(c.rows > 0)
            values = c.values
            low, high = proportion_interval(values[present] * c.effective[present], c.effective[present], confidence, method)
            for j, g in enumerate(present):
                hits, n = c.positives[g], c.rows[g]
                rows.append({
                    "notion": notion, "gap": gap, "gap_low": gap_low, "gap_high": gap_high, "ratio": ratio,
                    "n_differences": K, "confidence": confidence, "method": method,
                    "cohort": c.label, "rate": c.rate, "group": group_names[g], "value": float(values[g]),
                    "low": float(low[j]), "high": float(high[j]),
                    "positives": float(hits), "denominator": float(n),
                    "small": is_small(float(c.effective[g])),
                })
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))


def _ratio(cohorts: list[CohortCounts]) -> float:
    """Smallest min-rate / max-rate over cohorts with two groups (the four-fifths rule); NaN if none."""
    ratios = []
    for c in cohorts:
        values = c.values[c.rows > 0]
        if values.size >= 2 and values.max() > 0:
            ratios.append(values.min() / values.max())
    return float(min(ratios)) if ratios else float("nan")
