"""What a tree was fitted for, kept in its file: the columns that name the protected
groups and legitimate factors, the positive class, the estimator's settings and, when
the dashboard divided the rows, how; and how coded columns were read.

A report made later from the tree file and its table (``strongtree report TABLE --tree
TREE.json``) reads the roles from here, re-makes the same training and test rows, and
reads coded columns the way the tree learned them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import level_key, python_scalar
from strongtree_core.renames import RENAMED_PARAMETERS, translate_keys

BAD_CONTEXT = "Not a stored fit context: {reason}."
#: How a coded column may be read (the dashboard's column kinds).
CODE_KINDS = ("auto", "number", "category")


def json_value(value: Any) -> Any:
    """``value`` as JSON: numpy scalars as Python values, tuples as lists, non-finite floats as None."""
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, np.generic):
        value = python_scalar(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


@dataclass(frozen=True)
class FitContext:
    """The roles and settings a tree was fitted with.

    Attributes
    ----------
    protected, legitimate : tuple of str
        Names of the columns giving the protected groups and the legitimate factors.
    pos_label : label or None
        The positive class.
    settings : mapping
        The estimator's parameters (``get_params()``), JSON-safe.
    split : mapping or None
        ``test_size``, ``seed`` and ``stratify`` when the table's rows were divided into
        training and test rows before fitting (scikit-learn's ``train_test_split`` after
        dropping rows without a target); None when every row was a training row.
    dataset : str
        The table's name, when known.
    codes : mapping
        Column -> ``{"kind": "auto" | "number" | "category", "labels": {code: label}}``:
        how coded columns of the table were read before fitting (see :func:`apply_codes`).

    Examples
    --------
    >>> from strongtree_core.tree import FitContext
    >>> context = FitContext(protected=('gender',), pos_label='yes', settings={'depth': 2})
    >>> FitContext.from_dict(context.to_dict()) == context
    True
    """

    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    pos_label: Any = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    split: Mapping[str, Any] | None = None
    dataset: str = ""
    codes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected", tuple(str(c) for c in self.protected))
        object.__setattr__(self, "legitimate", tuple(str(c) for c in self.legitimate))
        object.__setattr__(self, "pos_label", python_scalar(self.pos_label) if self.pos_label is not None else None)

    def to_dict(self) -> dict:
        """JSON-safe description; :meth:`from_dict` reads it back."""
        return json_value({
            "protected": list(self.protected), "legitimate": list(self.legitimate), "pos_label": self.pos_label,
            "settings": dict(self.settings), "split": None if self.split is None else dict(self.split),
            "dataset": self.dataset, "codes": {c: dict(v) for c, v in self.codes.items()},
        })

    @classmethod
    def from_dict(cls, data: Mapping) -> "FitContext":
        """Read a context written by :meth:`to_dict`; a malformed one raises ``ValueError`` saying what is wrong."""
        if not isinstance(data, Mapping):
            raise ValueError(BAD_CONTEXT.format(reason="not an object"))
        data = translate_keys(data, {"positive_class": "pos_label", "positive": "pos_label"})  # written before 0.2
        known = {"protected", "legitimate", "pos_label", "settings", "split", "dataset", "codes"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(BAD_CONTEXT.format(reason=f"unknown entries {unknown}"))
        return cls(
            protected=tuple(data.get("protected") or ()), legitimate=tuple(data.get("legitimate") or ()),
            pos_label=data.get("pos_label"),
            settings=translate_keys(dict(data.get("settings") or {}), RENAMED_PARAMETERS), split=data.get("split"),
            dataset=str(data.get("dataset") or ""), codes=dict(data.get("codes") or {}),
        )


def apply_codes(frame: pd.DataFrame, codes: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """``frame`` with its coded columns read as ``codes`` says, as the dashboard read them before fitting.

    ``number``: read as numbers (text that is not a number becomes missing);
    ``category`` or any labels: every value as the text of its code (1, 1.0 and "1" read
    "1"), or its label when it has one; missing values stay missing.
    """
    out = frame.copy()
    for column, reading in codes.items():
        if column not in out.columns:
            continue
        kind = reading.get("kind", "auto")
        labels = {str(k): str(v) for k, v in (reading.get("labels") or {}).items()}
        values = out[column]
        if kind == "number":
            out[column] = pd.to_numeric(values, errors="coerce")
            continue
        if kind != "category" and not labels:
            continue
        present = values.notna()
        named = values[present].map(level_key).map(lambda k: labels.get(k, k))
        result = pd.Series(np.nan, index=values.index, dtype=object)
        result[present] = named.astype(str)
        out[column] = pd.Categorical(result) if kind == "category" else result
    return out
