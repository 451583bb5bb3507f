"""One binary column of an encoded table, and how raw values are read.

A :class:`BinaryFeature` is a yes/no test on one raw column.  Its value is 1
when the test holds (``label`` is true) and 0 otherwise (``negated_label`` is
true); a missing raw value makes every test 0 except ``"missing"``.

The value readers here (:func:`is_missing`, :func:`level_key`,
:func:`flag_value`, :func:`to_number`) use only the standard library, so the
exported Python code of a tree embeds their source and reads rows exactly as
the encoding does.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Literal

import numpy as np

#: The test behind a binary feature.
Test = Literal["is_one", "equals", "at_most", "in_range", "missing"]
TESTS: tuple[str, ...] = ("is_one", "equals", "at_most", "in_range", "missing")

#: A raw column name as pandas gives it (JSON keeps both types).
ColumnName = str | int
#: A category level as stored (JSON-safe scalars only).
Level = str | int | float | bool


@dataclass(frozen=True)
class BinaryFeature:
    """A yes/no test on one raw column; value 1 means ``label`` is true.

    Attributes
    ----------
    source : str or int
        The raw column tested.
    kind : {"is_one", "equals", "at_most", "in_range", "missing"}
        ``is_one``: the column is 1 / True; ``equals``: the column equals
        ``level``; ``at_most``: column <= ``threshold``; ``in_range``:
        ``lower`` < column <= ``threshold`` (None for an open end);
        ``missing``: the value is missing.
    label : str
        Reads true when the value is 1, e.g. ``"age ≤ 35.5"``.
    negated_label : str
        Reads true when the value is 0, e.g. ``"age > 35.5"``.
    threshold : float or None
        Upper bound of ``at_most`` and ``in_range``.
    lower : float or None
        Exclusive lower bound of ``in_range``.
    level : str, int, float, bool or None
        The category of ``equals``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> feature = plan.features[0]
    >>> type(feature).__name__
    'BinaryFeature'
    """

    source: ColumnName
    kind: Test
    label: str
    negated_label: str
    threshold: float | None = None
    lower: float | None = None
    level: Level | None = None


def is_missing(value) -> bool:
    """True for None, NaN, NaT and pandas.NA."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA refuses to be a truth value
        return True


def level_key(value) -> str:
    """Text a category value is matched by: 1, 1.0 and "1" all give "1"."""
    if isinstance(value, str):
        return value
    if type(value).__name__ in ("bool", "bool_"):
        return "True" if value else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    return str(value)


def equals_label(values, label) -> np.ndarray:
    """``values == label`` for every value, exactly.  numpy reads a text ending in a NUL byte ("\\x00",
    "a\\x00") as the text without it when it compares, so "\\x00" matched nothing (or every "");
    such a label is compared value by value, as Python compares text."""
    if isinstance(label, str) and label.endswith("\x00"):
        arr = np.asarray(values, dtype=object)
        return np.fromiter((v == label for v in arr.ravel()), dtype=bool, count=arr.size).reshape(arr.shape)
    return np.asarray(values) == label


def flag_value(value) -> bool:
    """Read a yes/no value: 1 / True / "true" -> True, 0 / False / "false" -> False."""
    key = level_key(value).strip().lower()
    if key in ("1", "true"):
        return True
    if key in ("0", "false"):
        return False
    raise ValueError(f"not a yes/no value: {value!r}")


def to_number(value) -> float:
    """A raw value as a float (numbers written as plain text are read too)."""
    return float(value)


def python_scalar(value):
    """A numpy scalar as the plain Python value (JSON-safe); other values unchanged."""
    item = getattr(value, "item", None)
    if item is not None and not isinstance(value, (str, bytes)):
        return item()
    return value


def format_number(value: float) -> str:
    """Shortest exact text of a threshold: 3.0 -> "3", 35.5 -> "35.5"."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def readable_cut(below: float, above: float) -> float:
    """The roundest number in the middle half of the gap between two neighbouring values.

    The midpoint rounded to the fewest digits that keep it within a quarter
    of the gap from the midpoint (35 and 36 -> 35.5; 30 and 50 -> 40; 29 and
    40 -> 34; 0.12 and 0.9 -> 0.5).  Falls back to the midpoint, or to
    ``below`` when the two are adjacent floats.
    """
    mid = (below + above) / 2.0
    if not math.isfinite(mid):
        return float(below)
    slack = (above - below) / 4.0
    for digits in range(-20, 21):
        cut = round(mid, digits)
        if abs(cut - mid) <= slack and below < cut < above:
            return float(cut)
    return float(mid) if below < mid < above else float(below)
