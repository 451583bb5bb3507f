"""One function per fairness disparity: a difference and a ratio for each notion.

Every function takes ``y_true, y_pred`` (any labels) and the keyword-only
``sensitive_features``, ``pos_label``, ``method`` ("between_groups", the
default, or "to_overall") and ``sample_weight``; conditional statistical parity
also ``legitimate_features``.  With ``method="to_overall"`` each group's rate is
compared with the rate of all rows, :math:`r_{all}`, instead of with the other
groups.  Groups whose rate is undefined (an empty denominator) are left out, and
fewer than two defined groups give NaN; see :func:`~strongtree_core.metrics.fairness_gap`
for the groups left out and the gap of each comparison.

Notation: :math:`r_g` is a rate of group :math:`g`; ``between_groups`` differences
are :math:`\\max_g r_g - \\min_g r_g` and ratios :math:`\\min_g r_g / \\max_g r_g`.

Against fairlearn: ``equal_opportunity_*`` and ``equalized_odds_*`` share their names
with fairlearn's functions, and ``statistical_parity_*`` and ``predictive_equality_*``
measure what fairlearn's ``demographic_parity_*`` and ``false_positive_rate_*`` do.  They
give fairlearn's numbers whenever every group has a defined rate and at least two groups
are compared (``tests/test_metrics.py`` and ``tests/test_metrics_disparities.py`` check
this), and differ, on purpose, where a rate is undefined; each function's Notes say how.
The reason is the same everywhere: these numbers are the ones the fairness constraints
of the fit bound (Section 4.3 of the paper), and a constraint leaves out a group whose
rate has an empty denominator instead of counting the rate as 0.
"""

from __future__ import annotations

from strongtree_core.metrics.fairness_gaps import fairness_gap
from strongtree_core.renames import RENAMED_METRIC_ARGUMENTS, refuses_renamed


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def statistical_parity_difference(y_true, y_pred, *, sensitive_features, pos_label,
                                  method: str = "between_groups", sample_weight=None) -> float:
    """Largest gap in the share predicted positive between protected groups.

    :math:`\\max_g P(\\hat y = + \\mid g) - \\min_g P(\\hat y = + \\mid g)`
    (``to_overall``: :math:`\\max_g |P(\\hat y = + \\mid g) - P(\\hat y = +)|`).

    Notes
    -----
    fairlearn's ``demographic_parity_difference`` measures the same gap and gives the
    same number with two groups or more; with a single group it gives 0.0, and NaN here
    (nothing is compared).  ``pos_label`` names the positive label among any labels;
    fairlearn reads 1 as the positive label.

    Examples
    --------
    >>> from strongtree_core.metrics import statistical_parity_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(statistical_parity_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.333
    """
    return fairness_gap("statistical_parity", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def statistical_parity_ratio(y_true, y_pred, *, sensitive_features, pos_label,
                             method: str = "between_groups", sample_weight=None) -> float:
    """Smallest ratio of the shares predicted positive of two protected groups (1: parity).

    :math:`\\min_g P(\\hat y = + \\mid g) / \\max_g P(\\hat y = + \\mid g)`
    (``to_overall``: the smallest of :math:`P(\\hat y = + \\mid g) / P(\\hat y = +)` and its inverse).

    Notes
    -----
    fairlearn's ``demographic_parity_ratio`` measures the same ratio and gives the same
    number with two groups or more; with a single group it gives 1.0, and NaN here.

    Examples
    --------
    >>> from strongtree_core.metrics import statistical_parity_ratio
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(statistical_parity_ratio(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("statistical_parity", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).ratio


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def conditional_statistical_parity_difference(y_true, y_pred, *, sensitive_features, legitimate_features=None,
                                              pos_label, method: str = "between_groups",
                                              sample_weight=None) -> float:
    """Statistical parity difference within each legitimate level, the largest over levels.

    :math:`\\max_\\ell \\left(\\max_g P(\\hat y = + \\mid g, \\ell) - \\min_g P(\\hat y = + \\mid g, \\ell)\\right)`.

    Examples
    --------
    >>> from strongtree_core.metrics import conditional_statistical_parity_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> level = ['x', 'y', 'x', 'y', 'x', 'y']
    >>> round(conditional_statistical_parity_difference(y_true, y_pred, sensitive_features=group, legitimate_features=level, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("conditional_statistical_parity", y_true, y_pred, sensitive_features=sensitive_features,
                        legitimate_features=legitimate_features, pos_label=pos_label, method=method,
                        sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def conditional_statistical_parity_ratio(y_true, y_pred, *, sensitive_features, legitimate_features=None,
                                         pos_label, method: str = "between_groups",
                                         sample_weight=None) -> float:
    """Statistical parity ratio within each legitimate level, the smallest over levels.

    :math:`\\min_\\ell \\left(\\min_g P(\\hat y = + \\mid g, \\ell) / \\max_g P(\\hat y = + \\mid g, \\ell)\\right)`.

    Examples
    --------
    >>> from strongtree_core.metrics import conditional_statistical_parity_ratio
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> level = ['x', 'y', 'x', 'y', 'x', 'y']
    >>> round(conditional_statistical_parity_ratio(y_true, y_pred, sensitive_features=group, legitimate_features=level, pos_label='yes'), 3)
    0.0
    """
    return fairness_gap("conditional_statistical_parity", y_true, y_pred, sensitive_features=sensitive_features,
                        legitimate_features=legitimate_features, pos_label=pos_label, method=method,
                        sample_weight=sample_weight).ratio


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def predictive_equality_difference(y_true, y_pred, *, sensitive_features, pos_label,
                                   method: str = "between_groups", sample_weight=None) -> float:
    """Largest gap in the false positive rate between protected groups.

    :math:`\\max_g P(\\hat y = + \\mid y \\ne +, g) - \\min_g P(\\hat y = + \\mid y \\ne +, g)`.

    Notes
    -----
    fairlearn's ``false_positive_rate_difference`` measures the same gap and differs
    where a rate is undefined, on purpose: a group with no row outside the positive
    class has no false positive rate and is left out here (as the constraint leaves it
    out), where fairlearn counts it as 0; fewer than two groups with the rate give NaN
    here, 0.0 in fairlearn.

    Examples
    --------
    >>> from strongtree_core.metrics import predictive_equality_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(predictive_equality_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("predictive_equality", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def predictive_equality_ratio(y_true, y_pred, *, sensitive_features, pos_label,
                              method: str = "between_groups", sample_weight=None) -> float:
    """Smallest ratio of the false positive rates of two protected groups.

    :math:`\\min_g P(\\hat y = + \\mid y \\ne +, g) / \\max_g P(\\hat y = + \\mid y \\ne +, g)`.

    Notes
    -----
    fairlearn's ``false_positive_rate_ratio`` differs as
    :func:`predictive_equality_difference` says: a group with no row outside the
    positive class is left out here and counts as 0 there (a ratio of 0.0); fewer than
    two groups with the rate give NaN here, 1.0 in fairlearn.

    Examples
    --------
    >>> from strongtree_core.metrics import predictive_equality_ratio
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(predictive_equality_ratio(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.0
    """
    return fairness_gap("predictive_equality", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).ratio


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def equal_opportunity_difference(y_true, y_pred, *, sensitive_features, pos_label,
                                 method: str = "between_groups", sample_weight=None) -> float:
    """Largest gap in the true positive rate between protected groups.

    :math:`\\max_g P(\\hat y = + \\mid y = +, g) - \\min_g P(\\hat y = + \\mid y = +, g)`.

    Notes
    -----
    fairlearn's ``equal_opportunity_difference`` differs in three cases, on purpose:

    * a group with no row of the positive class has no true positive rate.  Here it
      is left out (:attr:`FairnessGap.excluded <strongtree_core.metrics.FairnessGap>`
      names it), as the equal opportunity constraint leaves it out; fairlearn's
      ``true_positive_rate`` counts it as 0 (scikit-learn's ``zero_division``), as if
      every positive row of the group were missed.  Below, group ``c`` has no positive
      row: 0.5 here (groups ``a`` at 1.0 and ``b`` at 0.5), 1.0 in fairlearn (1.0 - 0);
    * fewer than two groups with a true positive rate give NaN here (nothing is
      compared), 0.0 in fairlearn;
    * ``pos_label`` names the positive label among any labels; fairlearn reads 1 as
      the positive label.

    Examples
    --------
    >>> from strongtree_core.metrics import equal_opportunity_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(equal_opportunity_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5

    A group with no row of the positive class (``c``) is left out here and counts as 0 in fairlearn:

    >>> y_true = ['yes', 'yes', 'yes', 'yes', 'no', 'no']
    >>> y_pred = ['yes', 'yes', 'yes', 'no', 'no', 'yes']
    >>> group = ['a', 'a', 'b', 'b', 'c', 'c']
    >>> float(equal_opportunity_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'))
    0.5
    >>> import warnings
    >>> from fairlearn.metrics import equal_opportunity_difference as fairlearn_difference
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     float(fairlearn_difference([v == 'yes' for v in y_true], [v == 'yes' for v in y_pred], sensitive_features=group))
    1.0
    """
    return fairness_gap("equal_opportunity", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def equal_opportunity_ratio(y_true, y_pred, *, sensitive_features, pos_label,
                            method: str = "between_groups", sample_weight=None) -> float:
    """Smallest ratio of the true positive rates of two protected groups.

    :math:`\\min_g P(\\hat y = + \\mid y = +, g) / \\max_g P(\\hat y = + \\mid y = +, g)`.

    Notes
    -----
    fairlearn's ``equal_opportunity_ratio`` differs where a rate is undefined, on
    purpose (see :func:`equal_opportunity_difference`): a group with no row of the
    positive class is left out here and counts as a rate of 0 in fairlearn (so its
    ratio is 0.0 there); fewer than two groups with the rate give NaN here and 1.0 in
    fairlearn; when no group has a true positive (every rate 0), the ratio 0/0 is NaN
    in both.

    Examples
    --------
    >>> from strongtree_core.metrics import equal_opportunity_ratio
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(equal_opportunity_ratio(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("equal_opportunity", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).ratio


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def equalized_odds_difference(y_true, y_pred, *, sensitive_features, pos_label,
                              method: str = "between_groups", sample_weight=None) -> float:
    """The larger of the true positive rate and false positive rate differences.

    :math:`\\max(\\Delta_{TPR}, \\Delta_{FPR})`, each as in :func:`equal_opportunity_difference`
    and :func:`predictive_equality_difference`.

    Notes
    -----
    fairlearn's ``equalized_odds_difference`` (``agg="worst_case"``, its default)
    differs where a rate is undefined, on purpose: a group with no row of the positive
    class (no true positive rate) or none outside it (no false positive rate) is left
    out of that rate's comparison here, as the constraints leave it out, and counts as
    a rate of 0 in fairlearn (scikit-learn's ``zero_division``); fewer than two groups
    with a rate give NaN for that rate here, 0.0 in fairlearn.  fairlearn's
    ``agg="mean"`` is not offered.

    Examples
    --------
    >>> from strongtree_core.metrics import equalized_odds_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(equalized_odds_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("equalized_odds", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def equalized_odds_ratio(y_true, y_pred, *, sensitive_features, pos_label,
                         method: str = "between_groups", sample_weight=None) -> float:
    """The smaller of the true positive rate and false positive rate ratios.

    :math:`\\min(\\rho_{TPR}, \\rho_{FPR})`, each as in :func:`equal_opportunity_ratio`
    and :func:`predictive_equality_ratio`.

    Notes
    -----
    fairlearn's ``equalized_odds_ratio`` differs where a rate is undefined, on
    purpose: a group with no row of the positive class (or none outside it) is left
    out here and counts as a rate of 0 in fairlearn (so a ratio of 0.0 there).  When
    one of the two ratios is 0/0 (no group has a true positive, say), it is left out
    here and the other ratio is the answer; fairlearn takes Python's ``min`` over the
    two (true positive rate's first), which gives NaN when the true positive rate's
    ratio is the 0/0 one, and the true positive rate's ratio when the false positive
    rate's is.

    Examples
    --------
    >>> from strongtree_core.metrics import equalized_odds_ratio
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(equalized_odds_ratio(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.0
    """
    return fairness_gap("equalized_odds", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).ratio
