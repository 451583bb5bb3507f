"""Checking and aligning the inputs of the metric functions."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Error texts (tests assert them).
EMPTY_INPUT = "y_true is empty: pass at least one row"
LENGTH_MISMATCH = "{what} has {got} rows but y_true has {expected}: pass one entry per row of y_true"
POSITIVE_LABEL_UNKNOWN = (
    "positive_label {label!r} occurs in neither y_true nor y_pred and is not of the same kind as their "
    "labels ({seen}): pass one of these labels"
)
NEED_LEGITIMATE = (
    "conditional statistical parity needs legitimate_features: pass the legitimate factor of every row"
)
NEED_SENSITIVE = "{what} needs sensitive_features: pass the protected attribute of every row"


@dataclass(frozen=True)
class Prepared:
    """Aligned one-dimensional inputs.

    Attributes
    ----------
    y_true, y_pred : ndarray, shape (n,)
        Original labels.
    positive_label : object
    group, legit : ndarray of object or None, shape (n,)
        One label per row ("a=x & b=y" when several columns were given).
    """

    y_true: np.ndarray
    y_pred: np.ndarray
    positive_label: object
    group: np.ndarray | None
    legit: np.ndarray | None

    @property
    def true_positive(self) -> np.ndarray:
        return self.y_true == self.positive_label

    @property
    def pred_positive(self) -> np.ndarray:
        return self.y_pred == self.positive_label


def _labels(values, what: str, n: int) -> np.ndarray | None:
    """One hashable label per row; several columns are joined as "col=value & ..."."""
    if values is None:
        return None
    if isinstance(values, pd.DataFrame):
        parts = [values[c].astype(object).where(values[c].notna(), "missing").astype(str) for c in values.columns]
        if len(parts) == 1:
            out = parts[0].to_numpy(dtype=object)
        else:
            joined = parts[0].radd(f"{values.columns[0]}=")
            for c, p in zip(values.columns[1:], parts[1:]):
                joined = joined + f" & {c}=" + p
            out = joined.to_numpy(dtype=object)
    else:
        series = pd.Series(np.asarray(values, dtype=object).reshape(-1) if not isinstance(values, pd.Series) else values)
        out = series.astype(object).where(series.notna(), "missing").to_numpy(dtype=object)
    if out.shape[0] != n:
        raise ValueError(LENGTH_MISMATCH.format(what=what, got=out.shape[0], expected=n))
    return out


def _same_kind(a, b) -> bool:
    """Both strings, both numbers (bool included), or the same type."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str)
    if isinstance(a, (numbers.Number, np.bool_)) and isinstance(b, (numbers.Number, np.bool_)):
        return True
    return type(a) is type(b)


def _labels_array(values) -> np.ndarray:
    """A flat array of labels; object arrays of numbers become numeric (scikit-learn needs that)."""
    out = np.asarray(values).reshape(-1)
    if out.dtype == object:
        out = pd.Series(out).infer_objects().to_numpy()
    return out


def prepare(y_true, y_pred, *, positive_label=None, sensitive_features=None, legitimate_features=None, need_positive: bool = True) -> Prepared:
    """Check lengths and the positive label; flatten the group columns."""
    yt = _labels_array(y_true)
    yp = _labels_array(y_pred)
    if yt.shape[0] == 0:
        raise ValueError(EMPTY_INPUT)
    if yp.shape[0] != yt.shape[0]:
        raise ValueError(LENGTH_MISMATCH.format(what="y_pred", got=yp.shape[0], expected=yt.shape[0]))
    if need_positive and not (np.any(yt == positive_label) or np.any(yp == positive_label)):
        # Absent from both is normal on a small subset (no positive row, none predicted);
        # a label of another kind (1 against "yes") is a mistake.
        seen = sorted({*pd.unique(yt).tolist(), *pd.unique(yp).tolist()}, key=repr)
        if not any(_same_kind(positive_label, v) for v in seen):
            raise ValueError(POSITIVE_LABEL_UNKNOWN.format(label=positive_label, seen=seen))
    n = yt.shape[0]
    return Prepared(
        y_true=yt,
        y_pred=yp,
        positive_label=positive_label,
        group=_labels(sensitive_features, "sensitive_features", n),
        legit=_labels(legitimate_features, "legitimate_features", n),
    )
