"""Classification quality: recall, precision, specificity, balanced and worst-case accuracy.

scikit-learn computes each of them, weighted by ``sample_weight`` when given; an
empty denominator gives NaN (not 0), as in :mod:`strongtree_core.metrics.rates`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.metrics import accuracy_score, balanced_accuracy_score, precision_score, recall_score

from strongtree_core.metrics._inputs import prepare
from strongtree_core.renames import RENAMED_METRIC_ARGUMENTS, refuses_renamed


def _binary(y_true, y_pred, pos_label, sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    prep = prepare(y_true, y_pred, pos_label=pos_label, sample_weight=sample_weight)
    return prep.true_positive.astype(int), prep.pred_positive.astype(int), prep.weight


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def recall(y_true, y_pred, *, pos_label, sample_weight=None) -> float:
    """Share of rows of ``pos_label`` predicted ``pos_label`` (NaN if there are none).

    Examples
    --------
    >>> from strongtree_core.metrics import recall
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> round(recall(y_true, y_pred, pos_label='yes'), 3)
    0.667
    """
    t, p, w = _binary(y_true, y_pred, pos_label, sample_weight)
    return float(recall_score(t, p, pos_label=1, zero_division=np.nan, sample_weight=w))


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def precision(y_true, y_pred, *, pos_label, sample_weight=None) -> float:
    """Share of rows predicted ``pos_label`` that are (NaN if none is predicted so).

    Examples
    --------
    >>> from strongtree_core.metrics import precision
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> round(precision(y_true, y_pred, pos_label='yes'), 3)
    0.667
    """
    t, p, w = _binary(y_true, y_pred, pos_label, sample_weight)
    return float(precision_score(t, p, pos_label=1, zero_division=np.nan, sample_weight=w))


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def specificity(y_true, y_pred, *, pos_label, sample_weight=None) -> float:
    """Share of rows of other labels not predicted ``pos_label`` (NaN if there are none).

    Examples
    --------
    >>> from strongtree_core.metrics import specificity
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> round(specificity(y_true, y_pred, pos_label='yes'), 3)
    0.667
    """
    t, p, w = _binary(y_true, y_pred, pos_label, sample_weight)
    return float(recall_score(t, p, pos_label=0, zero_division=np.nan, sample_weight=w))


def class_accuracies(y_true, y_pred, *, sample_weight=None) -> dict:
    """Accuracy within each label present in ``y_true`` (its recall), by label.

    Examples
    --------
    >>> from strongtree_core.metrics import class_accuracies
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> class_accuracies(y_true, y_pred)
    {'no': 0.6666666666666666, 'yes': 0.6666666666666666}
    """
    prep = prepare(y_true, y_pred, need_positive=False, sample_weight=sample_weight)
    labels = np.unique(prep.y_true)
    per_class = recall_score(prep.y_true, prep.y_pred, labels=labels, average=None, zero_division=np.nan,
                             sample_weight=prep.weight)
    return {label: float(r) for label, r in zip(labels.tolist(), per_class)}


def balanced_accuracy(y_true, y_pred, *, sample_weight=None) -> float:
    """Mean accuracy over the labels present in ``y_true`` (scikit-learn's definition).

    Examples
    --------
    >>> from strongtree_core.metrics import balanced_accuracy
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> round(balanced_accuracy(y_true, y_pred), 3)
    0.667
    """
    prep = prepare(y_true, y_pred, need_positive=False, sample_weight=sample_weight)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="y_pred contains classes not in y_true")
        warnings.filterwarnings("ignore", message="A single label was found")
        return float(balanced_accuracy_score(prep.y_true, prep.y_pred, sample_weight=prep.weight))


def worst_case_accuracy(y_true, y_pred, *, sample_weight=None) -> float:
    """Smallest accuracy over the labels present in ``y_true`` (paper, Section 4.2).

    Examples
    --------
    >>> from strongtree_core.metrics import worst_case_accuracy
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> round(worst_case_accuracy(y_true, y_pred), 3)
    0.667
    """
    return float(min(class_accuracies(y_true, y_pred, sample_weight=sample_weight).values()))


@refuses_renamed(RENAMED_METRIC_ARGUMENTS)
def classification_quality(y_true, y_pred, *, pos_label, sample_weight=None) -> dict[str, float]:
    """accuracy, balanced_accuracy, worst_case_accuracy, recall, precision, specificity.

    Examples
    --------
    >>> from strongtree_core.metrics import classification_quality
    >>> y_true = ['yes', 'no', 'yes', 'no', 'yes', 'no']
    >>> y_pred = ['yes', 'no', 'no', 'no', 'yes', 'yes']
    >>> {k: round(v, 3) for k, v in classification_quality(y_true, y_pred, pos_label='yes').items()}
    {'accuracy': 0.667, 'balanced_accuracy': 0.667, 'worst_case_accuracy': 0.667, 'recall': 0.667, 'precision': 0.667, 'specificity': 0.667}
    """
    prep = prepare(y_true, y_pred, pos_label=pos_label, sample_weight=sample_weight)
    weighted = dict(sample_weight=sample_weight)
    return {
        "accuracy": float(accuracy_score(prep.y_true, prep.y_pred, sample_weight=prep.weight)),
        "balanced_accuracy": balanced_accuracy(y_true, y_pred, **weighted),
        "worst_case_accuracy": worst_case_accuracy(y_true, y_pred, **weighted),
        "recall": recall(y_true, y_pred, pos_label=pos_label, **weighted),
        "precision": precision(y_true, y_pred, pos_label=pos_label, **weighted),
        "specificity": specificity(y_true, y_pred, pos_label=pos_label, **weighted),
    }
