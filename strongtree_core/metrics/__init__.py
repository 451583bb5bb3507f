"""Classification quality and fairness metrics, per protected group.

Public functions take ``y_true, y_pred`` (any labels) and keyword-only
``sensitive_features``, ``legitimate_features`` and ``positive_label``.
Rates with an empty denominator are NaN and are left out of gaps; every gap
is measured exactly as the constraints of :mod:`strongtree_core.formulation.fairness`
bound it. :func:`check_constraints` re-measures a model's side constraints on
predictions (class indices).
"""

from strongtree_core.metrics.confusion import group_confusion_matrices
from strongtree_core.metrics.constraints import check_constraints
from strongtree_core.metrics.fairness_gaps import (
    FairnessGap,
    conditional_statistical_parity_difference,
    equal_opportunity_difference,
    equalized_odds_difference,
    fairness_gap,
    fairness_report,
    predictive_equality_difference,
    statistical_parity_difference,
)
from strongtree_core.metrics.group_table import GROUP_COLUMNS, group_metrics
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
    "balanced_accuracy",
    "check_constraints",
    "class_accuracies",
    "classification_quality",
    "conditional_statistical_parity_difference",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "fairness_gap",
    "fairness_report",
    "group_confusion_matrices",
    "group_metrics",
    "precision",
    "predictive_equality_difference",
    "recall",
    "specificity",
    "statistical_parity_difference",
    "worst_case_accuracy",
]
