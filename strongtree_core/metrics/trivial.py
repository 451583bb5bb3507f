"""Trees that do no better than guessing: the majority-class baseline and the warning.

A tree is called trivial when its training accuracy is at most :data:`BASELINE_MARGIN`
(one point) above the majority class's share, or when it predicts one class for at
least :data:`ONE_CLASS_SHARE` (95 %) of the training rows.  Under an objective other
than accuracy (balanced or worst-case accuracy, sensitivity) a tree may rightly be
less accurate than the majority class; there the first test reads the balanced
accuracy against that of any constant guess, 1 / (number of classes).  All are
weighted by ``sample_weight`` when fit had one.
"""

from __future__ import annotations

import numpy as np

#: A training accuracy at most this far above the baseline is no better than guessing.
BASELINE_MARGIN = 0.01
#: A tree predicting one class for at least this share of the rows is (nearly) constant.
ONE_CLASS_SHARE = 0.95

TRIVIAL_TREE = (
    "The tree does no better than guessing: {why}. Predicting the majority class {label!r} for every row "
    "scores {baseline:.1%} on the training rows. Loosen the constraints, raise the depth, or report it as "
    "what it is."
)
WHY_ACCURACY = "its training accuracy {accuracy:.1%} is not more than one point above the majority class's {baseline:.1%}"
WHY_BALANCED = (
    "its balanced accuracy {accuracy:.1%} is not more than one point above a constant guess's {baseline:.1%}"
)
WHY_ONE_CLASS = "it predicts {label!r} for {share:.1%} of the training rows"


def baseline_accuracy(y_index: np.ndarray, n_classes: int, weight: np.ndarray | None = None) -> tuple[float, int]:
    """Accuracy of predicting the (weighted) majority class for every row, and that class's index."""
    counts = np.bincount(np.asarray(y_index, dtype=np.int64), weights=weight, minlength=n_classes)
    best = int(np.argmax(counts))
    return float(counts[best] / counts.sum()), best


def trivial_reason(y_index: np.ndarray, pred_index: np.ndarray, classes, weight: np.ndarray | None = None,
                   objective: str = "accuracy") -> str | None:
    """The warning's text when the tree's training predictions are trivial, else None."""
    y_index = np.asarray(y_index, dtype=np.int64)
    pred_index = np.asarray(pred_index, dtype=np.int64)
    w = np.ones(y_index.shape[0]) if weight is None else np.asarray(weight, dtype=float)
    baseline, majority = baseline_accuracy(y_index, len(classes), w)
    accuracy = float(np.sum(w * (y_index == pred_index)) / w.sum())
    shares = np.bincount(pred_index, weights=w, minlength=len(classes)) / w.sum()
    top = int(np.argmax(shares))
    reasons = []
    if objective == "accuracy" and accuracy <= baseline + BASELINE_MARGIN:
        reasons.append(WHY_ACCURACY.format(accuracy=accuracy, baseline=baseline))
    if objective != "accuracy":
        present = np.flatnonzero(np.bincount(y_index, weights=w, minlength=len(classes)) > 0)
        recalls = [np.sum(w * ((y_index == k) & (pred_index == k))) / np.sum(w * (y_index == k)) for k in present]
        balanced = float(np.mean(recalls))
        if balanced <= 1.0 / present.size + BASELINE_MARGIN:
            reasons.append(WHY_BALANCED.format(accuracy=balanced, baseline=1.0 / present.size))
    if shares[top] >= ONE_CLASS_SHARE:
        reasons.append(WHY_ONE_CLASS.format(label=_plain(classes[top]), share=shares[top]))
    if not reasons:
        return None
    return TRIVIAL_TREE.format(why="; ".join(reasons), label=_plain(classes[majority]), baseline=baseline)


def _plain(value):
    return value.item() if hasattr(value, "item") else value
