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

    Examples
    --------
    >>> from strongtree_core.metrics import equal_opportunity_difference
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> group = ['a', 'a', 'a', 'b', 'b', 'b']
    >>> round(equal_opportunity_difference(y_true, y_pred, sensitive_features=group, pos_label='yes'), 3)
    0.5
    """
    return fairness_gap("equal_opportunity", y_true, y_pred, sensitive_features=sensitive_features,
                        pos_label=pos_label, method=method, sample_weight=sample_weight).difference


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def equal_opportunity_ratio(y_true, y_pred, *, sensitive_features, pos_label,
                            method: str = "between_groups", sample_weight=None) -> float:
    """Smallest ratio of the true positive rates of two protected groups.

    :math:`\\min_g P(\\hat y = + \\mid y = +, g) / \\max_g P(\\hat y = + \\mid y = +, g)`.

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
