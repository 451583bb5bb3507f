"""Checking and aligning the inputs of the metric functions.

Group columns (``sensitive_features``, ``legitimate_features``) may be given as one
label per row (list, tuple, array, Series, Categorical), or as several columns: a
DataFrame, a dict of name to values, a list of Series, or a 2-D array or nested list
of one row per entry (a list of k lists of n values each, k not n, is read as k
columns).  Several columns form one group per combination.  Rows are matched by
position.  ``sample_weight`` weighs every rate; a row of weight 0 counts as absent.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import equals_label, python_scalar
from strongtree_core.encoding.groups import group_text, missing_group_name

#: Error texts (tests assert them).
EMPTY_INPUT = "y_true is empty: pass at least one row"
LENGTH_MISMATCH = "{what} has {got} rows but y_true has {expected}: pass one entry per row of y_true"
POSITIVE_LABEL_UNKNOWN = (
    "pos_label {label!r} occurs in neither y_true nor y_pred and is not of the same kind as their "
    "labels ({seen}): pass one of these labels"
)
POSITIVE_LABEL_ABSENT = (
    "pos_label {label!r} occurs in neither y_true nor y_pred, whose labels are {seen}: pass one of these "
    "labels (rows with no positive label, true or predicted, have no positive rate to measure)"
)
POSITIVE_LABEL_SPELLING = (
    "pos_label {label!r} occurs in neither y_true nor y_pred, which hold {match!r}: labels are compared "
    "exactly, pass pos_label={match!r}"
)
NEED_LEGITIMATE = (
    "conditional statistical parity needs legitimate_features: pass the legitimate factor of every row"
)
NEED_SENSITIVE = "{what} needs sensitive_features: pass the protected attribute of every row"
BAD_SHAPE = (
    "{what} must be one label per row or a table of one row per entry; got an array of shape {shape}: "
    "pass a list, a Series, a DataFrame or a dict of column name to values"
)
WEIGHTS_NOT_NUMBERS = "sample_weight must hold numbers, but holds {examples}"
WEIGHTS_NOT_FINITE = "sample_weight must be a finite number >= 0 in every row; {n} of {total} rows are not (e.g. {examples})"
WEIGHTS_ALL_ZERO = "sample_weight is zero in every row: at least one row needs a positive weight"


@dataclass(frozen=True)
class Prepared:
    """Aligned one-dimensional inputs, rows of weight 0 left out.

    Attributes
    ----------
    y_true, y_pred : ndarray, shape (n,)
        Original labels.
    pos_label : object
    group, legit : ndarray of object or None, shape (n,)
        One label per row ("a=x & b=y" when several named columns were given).
    weight : ndarray of float or None, shape (n,)
        ``sample_weight`` (None: every row weighs 1).
    """

    y_true: np.ndarray
    y_pred: np.ndarray
    pos_label: object
    group: np.ndarray | None
    legit: np.ndarray | None
    weight: np.ndarray | None = None

    @property
    def true_positive(self) -> np.ndarray:
        return equals_label(self.y_true, self.pos_label)

    @property
    def pred_positive(self) -> np.ndarray:
        return equals_label(self.y_pred, self.pos_label)


def _as_columns(values, what: str, n: int) -> pd.DataFrame | np.ndarray:
    """One label per row (1-D) or a table of columns, from any of the accepted forms."""
    if isinstance(values, pd.DataFrame):
        return values
    if isinstance(values, Mapping):
        return pd.DataFrame({str(k): np.asarray(v, dtype=object).reshape(-1) for k, v in values.items()})
    if isinstance(values, (list, tuple)) and values and all(isinstance(v, pd.Series) for v in values):
        return pd.concat([v.reset_index(drop=True).rename(v.name if v.name is not None else j)
                          for j, v in enumerate(values)], axis=1)
    if isinstance(values, (pd.Series, pd.Index, pd.Categorical)):
        return np.asarray(values, dtype=object)
    arr = np.asarray(values, dtype=object)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 1:
        return arr
    if arr.ndim != 2:
        raise ValueError(BAD_SHAPE.format(what=what, shape=arr.shape))
    if arr.shape[0] != n and arr.shape[1] == n:  # a list of columns
        arr = arr.T
    return pd.DataFrame(arr)


def _labels(values, what: str, n: int) -> np.ndarray | None:
    """One hashable label per row; several columns are joined as "col=value & ..." (named) or "value & ..."."""
    if values is None:
        return None
    values = _as_columns(values, what, n)
    if isinstance(values, pd.DataFrame):
        parts = [group_text(values[c]) for c in values.columns]
        named = all(isinstance(c, str) for c in values.columns)
        if len(parts) == 1:
            out = parts[0].to_numpy(dtype=object)
        else:
            joined = parts[0].radd(f"{values.columns[0]}=") if named else parts[0]
            for c, p in zip(values.columns[1:], parts[1:]):
                joined = joined + (f" & {c}=" if named else " & ") + p
            out = joined.to_numpy(dtype=object)
    else:
        series = pd.Series(values, dtype=object)
        present = series.notna()
        missing = missing_group_name(series[present].astype(str).unique())
        out = series.where(present, missing).to_numpy(dtype=object)
    if out.shape[0] != n:
        raise ValueError(LENGTH_MISMATCH.format(what=what, got=out.shape[0], expected=n))
    return out


def _weights(sample_weight, n: int) -> np.ndarray | None:
    """sample_weight as finite floats >= 0, not all zero (None stays None)."""
    if sample_weight is None:
        return None
    raw = np.asarray(sample_weight).reshape(-1)
    if raw.shape[0] != n:
        raise ValueError(LENGTH_MISMATCH.format(what="sample_weight", got=raw.shape[0], expected=n))
    if raw.dtype.kind not in "fiu" or isinstance(sample_weight, (list, tuple)):  # text, True/False, objects: say which
        values = np.asarray(sample_weight, dtype=object).reshape(-1)
        bad = [v for v in values if isinstance(v, (bool, np.bool_, str)) or not isinstance(v, numbers.Real)]
        if bad:
            shown = pd.unique(np.array(bad, dtype=object))[:3]
            raise ValueError(WEIGHTS_NOT_NUMBERS.format(examples=", ".join(repr(python_scalar(v)) for v in shown)))
    weight = raw.astype(float)
    wrong = ~np.isfinite(weight) | (weight < 0)
    if wrong.any():
        examples = ", ".join(repr(float(v)) for v in pd.unique(weight[wrong])[:3])
        raise ValueError(WEIGHTS_NOT_FINITE.format(n=int(wrong.sum()), total=n, examples=examples))
    if not (weight > 0).any():
        raise ValueError(WEIGHTS_ALL_ZERO)
    return weight


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


def positive_present(y_true, y_pred, pos_label) -> bool:
    """Whether ``pos_label`` occurs in ``y_true`` or in ``y_pred``.

    The metrics refuse a positive label that occurs in neither (every rate of it would
    be 0 or undefined); a caller measuring a part of the rows that may hold no positive
    row, true or predicted, asks this first and shows "nothing to measure" instead.

    Examples
    --------
    >>> from strongtree_core.metrics import positive_present
    >>> positive_present(['no', 'no'], ['no', 'yes'], 'yes'), positive_present(['no'], ['no'], 'yes')
    (True, False)
    """
    return bool(np.any(equals_label(_labels_array(y_true), pos_label)) or np.any(equals_label(_labels_array(y_pred), pos_label)))


def _check_positive(pos_label, yt: np.ndarray, yp: np.ndarray) -> None:
    """Refuse a positive label that occurs in neither label array.

    Every rate of a positive label absent from both arrays is 0 or undefined, so every
    gap would read 0 ("fair") for a mistyped label; the message names the labels present,
    or the one that differs from ``pos_label`` only in case or spaces ('Yes' for 'yes').
    """
    if np.any(equals_label(yt, pos_label)) or np.any(equals_label(yp, pos_label)):  # NUL-safe
        return
    seen = sorted({*pd.unique(yt).tolist(), *pd.unique(yp).tolist()}, key=repr)
    if not any(_same_kind(pos_label, v) for v in seen):
        raise ValueError(POSITIVE_LABEL_UNKNOWN.format(label=pos_label, seen=seen))
    if isinstance(pos_label, str):
        folded = pos_label.strip().casefold()
        match = [v for v in seen if isinstance(v, str) and v.strip().casefold() == folded]
        if match:
            raise ValueError(POSITIVE_LABEL_SPELLING.format(label=pos_label, match=match[0]))
    raise ValueError(POSITIVE_LABEL_ABSENT.format(label=pos_label, seen=seen))


def prepare(
    y_true,
    y_pred,
    *,
    pos_label=None,
    sensitive_features=None,
    legitimate_features=None,
    sample_weight=None,
    need_positive: bool = True,
) -> Prepared:
    """Check lengths, weights and the positive label; flatten the group columns; leave out rows of weight 0."""
    yt = _labels_array(y_true)
    yp = _labels_array(y_pred)
    if yt.shape[0] == 0:
        raise ValueError(EMPTY_INPUT)
    if yp.shape[0] != yt.shape[0]:
        raise ValueError(LENGTH_MISMATCH.format(what="y_pred", got=yp.shape[0], expected=yt.shape[0]))
    if need_positive:
        _check_positive(pos_label, yt, yp)
    n = yt.shape[0]
    group = _labels(sensitive_features, "sensitive_features", n)
    legit = _labels(legitimate_features, "legitimate_features", n)
    weight = _weights(sample_weight, n)
    if weight is not None and not weight.all():
        keep = weight > 0
        yt, yp, weight = yt[keep], yp[keep], weight[keep]
        group = None if group is None else group[keep]
        legit = None if legit is None else legit[keep]
    return Prepared(y_true=yt, y_pred=yp, pos_label=pos_label, group=group, legit=legit, weight=weight)
