"""Checking and aligning the inputs of the metric functions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Error texts (tests assert them).
EMPTY_INPUT = "y_true is empty: pass at least one row"
LENGTH_MISMATCH = "{what} has {got} rows but y_true has {expected}: pass one entry per row of y_true"
POSITIVE_LABEL_UNKNOWN = (
    "positive_label {label!r} occurs in neither y_true nor y_pred (labels seen: {seen}): pass one of these labels"
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


def prepare(y_true, y_pred, *, positive_label=None, sensitive_features=None, legitimate_features=None, need_positive: bool = True) -> Prepared:
    """Check lengths and the positive label; flatten the group columns."""
    yt = np.asarray(y_true).reshape(-1)
    yp = np.asarray(y_pred).reshape(-1)
    if yt.shape[0] == 0:
        raise ValueError(EMPTY_INPUT)
    if yp.shape[0] != yt.shape[0]:
        raise ValueError(LENGTH_MISMATCH.format(what="y_pred", got=yp.shape[0], expected=yt.shape[0]))
    if need_positive and not (np.any(yt == positive_label) or np.any(yp == positive_label)):
        seen = sorted({*pd.unique(yt).tolist(), *pd.unique(yp).tolist()}, key=repr)
        raise ValueError(POSITIVE_LABEL_UNKNOWN.format(label=positive_label, seen=seen))
    n = yt.shape[0]
    return Prepared(
        y_true=yt,
        y_pred=yp,
        positive_label=positive_label,
        group=_labels(sensitive_features, "sensitive_features", n),
        legit=_labels(legitimate_features, "legitimate_features", n),
    )
