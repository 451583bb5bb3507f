"""Fairness gaps measured exactly as the constraints of Section 4.3 bound them.

Each gap is the largest difference of a rate between two protected groups
(``max - min`` over the groups where the rate is defined), and its ratio the
smallest (``min / max``); with ``method="to_overall"`` each group is compared
with the rate of all rows instead (largest ``|rate - overall|``, smallest
``rate / overall`` written below 1), as fairlearn's ``MetricFrame`` does:

* statistical parity: share predicted positive;
* conditional statistical parity: the same within each legitimate level, then
  the largest over levels;
* predictive equality: false positive rate;  equal opportunity: true positive rate;
* equalized odds: the larger of the true- and false-positive-rate gaps.

Per-group rates, differences and ratios come from fairlearn's ``MetricFrame``,
weighted by ``sample_weight`` when given. A rate with an empty denominator (a
group with no negatives has no false positive rate) is NaN and left out, and
the gap of a comparison with fewer than two defined groups is NaN, as the
constraints skip such comparisons too; a ratio whose denominator is 0 (no group
selected at all) is NaN, and is left out of the smallest ratio as an undefined
difference is left out of the largest (fairlearn's equalized odds ratio is NaN then).  The public functions, one per notion, are in
:mod:`strongtree_core.metrics.disparities`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from fairlearn.metrics import MetricFrame

from strongtree_core.metrics._inputs import NEED_LEGITIMATE, NEED_SENSITIVE, Prepared, prepare
from strongtree_core.metrics.rates import by_group_frame
from strongtree_core.renames import RENAMED_METRIC_ARGUMENTS, refuses_renamed

#: Error texts (tests assert them).
UNKNOWN_NOTION = "unknown fairness notion {name!r}: choose one of {choices}"
UNKNOWN_METHOD = "unknown method {method!r}: choose 'between_groups' or 'to_overall'"

#: How groups are compared: with each other, or each with all rows.
METHODS = ("between_groups", "to_overall")

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
    ratio : float
        Smallest ratio over the comparisons (1: no disparity); NaN when no comparison has it.
    ratio_parts : mapping of str to float
        Ratio of each comparison, keyed as ``parts``.
    method : {"between_groups", "to_overall"}
        Groups compared with each other, or each with all rows.

    Examples
    --------
    >>> from strongtree_core.metrics import fairness_gap
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> gap = fairness_gap('equal_opportunity', y_true, y_pred, sensitive_features=group, pos_label='yes')
    >>> type(gap).__name__, round(gap.difference, 3)
    ('FairnessGap', 0.5)
    """

    notion: str
    difference: float
    parts: Mapping[str, float] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    ratio: float = float("nan")
    ratio_parts: Mapping[str, float] = field(default_factory=dict)
    method: str = "between_groups"


def _defined(by_group: pd.Series, groups, label: str, key: str) -> tuple[bool, list[str]]:
    """Whether two groups have the rate (else the comparison is NaN), and the groups left out."""
    defined = by_group.dropna()
    where = f" {label}" if label else ""
    notes = [f"group {g!r} has {_DENOMINATOR[key]}{where}: its {RATE_NAMES[key]} is undefined and left out"
             for g in groups if g not in defined.index]
    return len(defined) >= 2, notes


def _check(notion: str, prep: Prepared, method: str = "between_groups") -> bool:
    """Validate the notion, the method and the inputs; True when the notion is conditional."""
    if notion not in NOTION_RATES:
        raise ValueError(UNKNOWN_NOTION.format(name=notion, choices=sorted(NOTION_RATES)))
    if method not in METHODS:
        raise ValueError(UNKNOWN_METHOD.format(method=method))
    if prep.group is None:
        raise ValueError(NEED_SENSITIVE.format(what=notion.replace("_", " ")))
    conditional = notion == "conditional_statistical_parity"
    if conditional and prep.legit is None:
        raise ValueError(NEED_LEGITIMATE)
    return conditional


def _worst(values, pick) -> float:
    values = [v for v in values if not np.isnan(v)]
    return pick(values) if values else float("nan")


def _measure(notion: str, prep: Prepared, frame: MetricFrame, method: str = "between_groups") -> FairnessGap:
    """The gap of ``notion`` from a frame holding (at least) its rates."""
    conditional = _check(notion, prep, method)
    by_group = frame.by_group
    difference, ratio = frame.difference(method=method), frame.ratio(method=method)
    groups = pd.unique(prep.group)
    parts: dict[str, float] = {}
    ratio_parts: dict[str, float] = {}
    excluded: list[str] = []
    for key in NOTION_RATES[notion]:
        if conditional:
            comparisons = [(f"{RATE_NAMES[key]} | legitimate level {level!r}", by_group[key].xs(level, level="legit"),
                            difference.loc[level, key], ratio.loc[level, key], f"at legitimate level {level!r}")
                           for level in pd.unique(prep.legit)]
        else:
            comparisons = [(RATE_NAMES[key], by_group[key], difference[key], ratio[key], "")]
        for name, rates, gap, share, where in comparisons:
            two, notes = _defined(rates, groups, where, key)
            parts[name] = float(gap) if two else float("nan")
            ratio_parts[name] = float(share) if two else float("nan")
            excluded += notes
    return FairnessGap(
        notion, _worst(parts.values(), max), parts, tuple(excluded),
        _worst(ratio_parts.values(), min), ratio_parts, method,
    )


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def fairness_gap(
    notion: str,
    y_true,
    y_pred,
    *,
    sensitive_features,
    legitimate_features=None,
    pos_label,
    method: str = "between_groups",
    sample_weight=None,
) -> FairnessGap:
    """Measure one notion (see the module docstring): its difference and its ratio.

    Parameters
    ----------
    notion : {"statistical_parity", "conditional_statistical_parity",
        "predictive_equality", "equal_opportunity", "equalized_odds"}
    y_true, y_pred : array-like, shape (n,)
        Labels, any type.
    sensitive_features : array-like, list, dict or DataFrame, n rows
        Protected attribute(s); several columns form one group per combination.
    legitimate_features : array-like, list, dict or DataFrame, n rows, optional
        Needed by conditional statistical parity.
    pos_label : object
        The label of the positive outcome.
    method : {"between_groups", "to_overall"}, default "between_groups"
        Compare the groups with each other, or each group with all rows.
    sample_weight : array-like, shape (n,), optional
        Weight of each row in every rate (a row of weight 0 is left out).

    Examples
    --------
    >>> from strongtree_core.metrics import fairness_gap
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> gap = fairness_gap('statistical_parity', y_true, y_pred, sensitive_features=group, pos_label='yes')
    >>> round(gap.difference, 3), round(gap.ratio, 3)
    (0.333, 0.5)
    """
    prep = prepare(
        y_true, y_pred, pos_label=pos_label, sensitive_features=sensitive_features,
        legitimate_features=legitimate_features, sample_weight=sample_weight,
    )
    conditional = _check(notion, prep, method)
    return _measure(notion, prep, by_group_frame(prep, NOTION_RATES[notion], conditional=conditional), method)


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def fairness_report(
    y_true,
    y_pred,
    *,
    sensitive_features,
    legitimate_features=None,
    pos_label,
    notions=None,
    method: str = "between_groups",
    sample_weight=None,
) -> pd.DataFrame:
    """Every notion's gap in one table: columns ``notion``, ``difference``, ``ratio``, ``excluded``.

    ``notions`` defaults to all of them (conditional statistical parity only
    when ``legitimate_features`` is given); ``method`` and ``sample_weight`` as
    in :func:`fairness_gap`.

    Examples
    --------
    >>> from strongtree_core.metrics import fairness_report
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> report = fairness_report(y_true, y_pred, sensitive_features=group, pos_label='yes')
    >>> print(report[['notion', 'difference']].round(3).to_string(index=False))
                 notion  difference
     statistical_parity       0.333
    predictive_equality       0.500
      equal_opportunity       0.500
         equalized_odds       0.500
    """
    prep = prepare(
        y_true, y_pred, pos_label=pos_label, sensitive_features=sensitive_features,
        legitimate_features=legitimate_features, sample_weight=sample_weight,
    )
    if notions is None:
        notions = [n for n in NOTION_RATES if n != "conditional_statistical_parity" or prep.legit is not None]
    frames: dict[bool, MetricFrame] = {}
    rows = []
    for notion in notions:
        conditional = _check(notion, prep, method)
        if conditional not in frames:  # one fairlearn frame for all unconditioned rates
            frames[conditional] = by_group_frame(
                prep, ("selection_rate",) if conditional else ("selection_rate", "tpr", "fpr"), conditional=conditional
            )
        gap = _measure(notion, prep, frames[conditional], method)
        rows.append({"notion": notion, "difference": gap.difference, "ratio": gap.ratio, "excluded": "; ".join(gap.excluded)})
    return pd.DataFrame(rows, columns=["notion", "difference", "ratio", "excluded"])
