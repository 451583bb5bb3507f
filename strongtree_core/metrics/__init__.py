"""Classification quality and fairness metrics, per protected group.

Public functions take ``y_true, y_pred`` (any labels) and keyword-only
``sensitive_features``, ``legitimate_features``, ``pos_label`` and
``sample_weight``.  Groups may be one label per row (a list, array or Series)
or several columns (a DataFrame, a dict, a list of Series, a 2-D array).
Rates with an empty denominator are NaN and are left out of gaps; every gap
is measured exactly as the constraints of :mod:`strongtree_core.formulation.fairness_constraints`
bound it.  Each notion has a difference and a ratio, between groups or to the
overall rate (``method="to_overall"``). :func:`check_constraints` re-measures
a model's side constraints on predictions (class indices).
"""

from typing import TYPE_CHECKING

from strongtree_core.lazy import lazy_names

if TYPE_CHECKING:  # the lazy names below, as type checkers should see them
    from strongtree_core.metrics.confusion import group_confusion_matrices
    from strongtree_core.metrics._inputs import positive_present
    from strongtree_core.metrics.constraints import check_constraints
    from strongtree_core.metrics.disparities import (
        conditional_statistical_parity_difference,
        conditional_statistical_parity_ratio,
        equal_opportunity_difference,
        equal_opportunity_ratio,
        equalized_odds_difference,
        equalized_odds_ratio,
        predictive_equality_difference,
        predictive_equality_ratio,
        statistical_parity_difference,
        statistical_parity_ratio,
    )
    from strongtree_core.metrics.fairness_gaps import METHODS, FairnessGap, fairness_gap, fairness_report
    from strongtree_core.metrics.gap_intervals import INTERVAL_COLUMNS, fairness_intervals
    from strongtree_core.metrics.group_table import GROUP_COLUMNS, group_metrics
    from strongtree_core.metrics.intervals import (
        clopper_pearson_interval,
        difference_interval,
        gap_interval,
        wilson_interval,
    )
    from strongtree_core.metrics.quality import (
        balanced_accuracy,
        class_accuracies,
        classification_quality,
        precision,
        recall,
        specificity,
        worst_case_accuracy,
    )

__all__ = [
    "FairnessGap",
    "GROUP_COLUMNS",
    "METHODS",
    "balanced_accuracy",
    "check_constraints",
    "class_accuracies",
    "classification_quality",
    "conditional_statistical_parity_difference",
    "conditional_statistical_parity_ratio",
    "equal_opportunity_difference",
    "equal_opportunity_ratio",
    "equalized_odds_difference",
    "equalized_odds_ratio",
    "fairness_gap",
    "fairness_intervals",
    "INTERVAL_COLUMNS",
    "clopper_pearson_interval",
    "difference_interval",
    "gap_interval",
    "wilson_interval",
    "fairness_report",
    "group_confusion_matrices",
    "group_metrics",
    "positive_present",
    "precision",
    "predictive_equality_difference",
    "predictive_equality_ratio",
    "recall",
    "specificity",
    "statistical_parity_difference",
    "statistical_parity_ratio",
    "worst_case_accuracy",
]

#: Loaded on first use: the constraint checks alone (what the engine reads) need neither pandas nor fairlearn.
__getattr__, __dir__ = lazy_names(__name__, {
    "group_confusion_matrices": "strongtree_core.metrics.confusion",
    "positive_present": "strongtree_core.metrics._inputs",
    "check_constraints": "strongtree_core.metrics.constraints",
    "conditional_statistical_parity_difference": "strongtree_core.metrics.disparities",
    "conditional_statistical_parity_ratio": "strongtree_core.metrics.disparities",
    "equal_opportunity_difference": "strongtree_core.metrics.disparities",
    "equal_opportunity_ratio": "strongtree_core.metrics.disparities",
    "equalized_odds_difference": "strongtree_core.metrics.disparities",
    "equalized_odds_ratio": "strongtree_core.metrics.disparities",
    "predictive_equality_difference": "strongtree_core.metrics.disparities",
    "predictive_equality_ratio": "strongtree_core.metrics.disparities",
    "statistical_parity_difference": "strongtree_core.metrics.disparities",
    "statistical_parity_ratio": "strongtree_core.metrics.disparities",
    "METHODS": "strongtree_core.metrics.fairness_gaps",
    "FairnessGap": "strongtree_core.metrics.fairness_gaps",
    "fairness_gap": "strongtree_core.metrics.fairness_gaps",
    "fairness_report": "strongtree_core.metrics.fairness_gaps",
    "INTERVAL_COLUMNS": "strongtree_core.metrics.gap_intervals",
    "fairness_intervals": "strongtree_core.metrics.gap_intervals",
    "GROUP_COLUMNS": "strongtree_core.metrics.group_table",
    "group_metrics": "strongtree_core.metrics.group_table",
    "clopper_pearson_interval": "strongtree_core.metrics.intervals",
    "difference_interval": "strongtree_core.metrics.intervals",
    "gap_interval": "strongtree_core.metrics.intervals",
    "wilson_interval": "strongtree_core.metrics.intervals",
    "balanced_accuracy": "strongtree_core.metrics.quality",
    "class_accuracies": "strongtree_core.metrics.quality",
    "classification_quality": "strongtree_core.metrics.quality",
    "precision": "strongtree_core.metrics.quality",
    "recall": "strongtree_core.metrics.quality",
    "specificity": "strongtree_core.metrics.quality",
    "worst_case_accuracy": "strongtree_core.metrics.quality",
})
