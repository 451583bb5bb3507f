"""Fairness gaps measured exactly as the constraints of Section 4.3 bound them.

Each gap is the largest difference of a rate between two protected groups
(``max - min`` over the groups where the rate is defined):

* statistical parity: share predicted positive;
* conditional statistical parity: the same within each legitimate level, then
  the largest over levels;
* predictive equality: false positive rate;  equal opportunity: true positive rate;
* equalized odds: the larger of the true- and false-positive-rate gaps.

Per-group rates and differences come from fairlearn's ``MetricFrame``. A rate
with an empty denominator (a group with no negatives has no false positive
rate) is NaN and left out, and the gap of a comparison with fewer than two
defined groups is NaN, as the constraints skip such comparisons too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame

from strongtree_core.metrics._inputs import NEED_LEGITIMATE, NEED_SENSITIVE, Prepared, prepare
from strongtree_core.metrics.rates import by_group_frame

#: Error text (tests assert it).
UNKNOWN_NOTION = "unknown fairness notion {name!r}: choose one of {choices}"

#: Rates compared by each notion.
NOTION_RATES: dict[str, tuple[str, ...]] = {
    "statistical_parity": ("selection_rate",),
    "conditional_statistical_parity": ("selection_rate",),
    "predictive_equality": ("fpr",),
    "equal_opportunity": ("tpr",),
    "equalized_odds": ("tpr", "fpr"),
}

RATE_NAMES = {
    "selection_rate": "share predicted positive",
    "tpr": "true positive rate",
    "fpr": "false positive rate",
}

_DENOMINATOR = {
    "selection_rate": "no rows",
    "tpr": "no rows of the positive class",
    "fpr": "no rows outside the positive class",
}


@dataclass(frozen=True)
class FairnessGap:
    """A measured fairness gap.

    Attributes
    ----------
    notion : str
        One of :data:`NOTION_RATES`.
    difference : float
        Largest gap over the comparisons; NaN when no comparison has two defined groups.
    parts : mapping of str to float
        Gap of each comparison ("true positive rate", "share predicted positive | level 'x'", ...).
    excluded : tuple of str
        Groups left out of a comparison because their rate is undefined there.
    """

    notion: str
    difference: float
    parts: Mapping[str, float] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()


def _gap_of(by_group: pd.Series, difference: float, groups, label: str, key: str) -> tuple[float, list[str]]:
    """fairlearn's difference, NaN when fewer than two groups have the rate; the left-out groups."""
    defined = by_group.dropna()
    missing = [g for g in groups if g not in defined.index]
    where = f" {label}" if label else ""
    notes = [f"group {g!r} has {_DENOMINATOR[key]}{where}: its {RATE_NAMES[key]} is undefined and left out" for g in missing]
    return (float(difference) if len(defined) >= 2 else float("nan")), notes


def _check(notion: str, prep: Prepared) -> bool:
    """Validate the notion and its inputs; True when it is conditional."""
    if notion not in NOTION_RATES:
        raise ValueError(UNKNOWN_NOTION.format(name=notion, choices=sorted(NOTION_RATES)))
    if prep.group is None:
        raise ValueError(NEED_SENSITIVE.format(what=notion.replace("_", " ")))
    conditional = notion == "conditional_statistical_parity"
    if conditional and prep.legit is None:
        raise ValueError(NEED_LEGITIMATE)
    return conditional


def _measure(notion: str, prep: Prepared, frame: MetricFrame) -> FairnessGap:
    """The gap of ``notion`` from a frame holding (at least) its rates."""
    conditional = _check(notion, prep)
    by_group = frame.by_group
    difference = frame.difference()
    groups = pd.unique(prep.group)
    parts: dict[str, float] = {}
    excluded: list[str] = []
    for key in NOTION_RATES[notion]:
        if conditional:
            for level in pd.unique(prep.legit):
                gap, notes = _gap_of(by_group[key].xs(level, level="legit"), difference.loc[level, key], groups, f"at legitimate level {level!r}", key)
                parts[f"{RATE_NAMES[key]} | legitimate level {level!r}"] = gap
                excluded += notes
        else:
            gap, notes = _gap_of(by_group[key], difference[key], groups, "", key)
            parts[RATE_NAMES[key]] = gap
            excluded += notes
    values = [v for v in parts.values() if not np.isnan(v)]
    return FairnessGap(notion, max(values) if values else float("nan"), parts, tuple(excluded))


def fairness_gap(notion: str, y_true, y_pred, *, sensitive_features, legitimate_features=None, positive_label) -> FairnessGap:
    """Measure one notion (see the module docstring).

    Parameters
    ----------
    notion : {"statistical_parity", "conditional_statistical_parity",
        "predictive_equality", "equal_opportunity", "equalized_odds"}
    y_true, y_pred : array-like, shape (n,)
        Labels, any type.
    sensitive_features : array-like or DataFrame, n rows
        Protected attribute(s); several columns form one group per combination.
    legitimate_features : array-like or DataFrame, n rows, optional
        Needed by conditional statistical parity.
    positive_label : object
        The label of the positive outcome.
    """
    prep = prepare(
        y_true, y_pred, positive_label=positive_label, sensitive_features=sensitive_features, legitimate_features=legitimate_features
    )
    conditional = _check(notion, prep)
    return _measure(notion, prep, by_group_frame(prep, NOTION_RATES[notion], conditional=conditional))


def fairness_report(y_true, y_pred, *, sensitive_features, legitimate_features=None, positive_label, notions=None) -> pd.DataFrame:
    """Every notion's gap in one table: columns ``notion``, ``difference``, ``excluded``.

    ``notions`` defaults to all of them (conditional statistical parity only
    when ``legitimate_features`` is given).
    """
    prep = prepare(
        y_true, y_pred, positive_label=positive_label, sensitive_features=sensitive_features, legitimate_features=legitimate_features
    )
    if notions is None:
        notions = [n for n in NOTION_RATES if n != "conditional_statistical_parity" or prep.legit is not None]
    frames: dict[bool, MetricFrame] = {}
    rows = []
    for notion in notions:
        conditional = _check(notion, prep)
        if conditional not in frames:  # one fairlearn frame for all unconditioned rates
            frames[conditional] = by_group_frame(
                prep, ("selection_rate",) if conditional else ("selection_rate", "tpr", "fpr"), conditional=conditional
            )
        gap = _measure(notion, prep, frames[conditional])
        rows.append({"notion": notion, "difference": gap.difference, "excluded": "; ".join(gap.excluded)})
    return pd.DataFrame(rows, columns=["notion", "difference", "excluded"])


def _difference(notion: str):
    def measure(y_true, y_pred, *, sensitive_features, legitimate_features=None, positive_label) -> float:
        return fairness_gap(
            notion,
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            legitimate_features=legitimate_features,
            positive_label=positive_label,
        ).difference

    measure.__name__ = f"{notion}_difference"
    measure.__doc__ = (
        f"Largest pairwise {notion.replace('_', ' ')} gap between protected groups (NaN if undefined).\n\n"
        "Same parameters as :func:`fairness_gap` without ``notion``."
    )
    return measure


statistical_parity_difference = _difference("statistical_parity")
conditional_statistical_parity_difference = _difference("conditional_statistical_parity")
predictive_equality_difference = _difference("predictive_equality")
equal_opportunity_difference = _difference("equal_opportunity")
equalized_odds_difference = _difference("equalized_odds")
