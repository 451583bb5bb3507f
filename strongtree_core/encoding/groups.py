"""Protected groups and legitimate factors as integer codes.

Every distinct value of a column is its own group, exactly as the user gave
it: nothing is bucketed here, so the groups a fairness constraint compares
are the groups :mod:`strongtree_core.metrics` measures.  A column with more
than :data:`MAX_GROUPS` values is refused with a message that says how to
bucket it (``pd.cut``) and pass the buckets instead; the buckets are then the
groups.  Several columns combine into one group per distinct combination
("race=Black & sex=F"); a missing value (None, NaN, NaT) is its own group, named
"missing" unless a present value already reads "missing", then "(no value)"
(:func:`missing_group_name`): never merged with a value.  The metrics and the
group summaries name groups with the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from strongtree_core.encoding.errors import EncodingError
from strongtree_core.encoding.features import level_key, python_scalar

#: Most groups a protected attribute (or legitimate factor) may have: every
#: pair of groups is one comparison, so 20 groups are 190 comparisons.
MAX_GROUPS = 20

#: The name of the group of rows whose value is missing, when no present value reads so.
MISSING_GROUP = "missing"

#: The name of that group when a present value reads "missing" (a number is added if that is taken too).
NO_VALUE_GROUP = "(no value)"

#: The words and the ``fit`` argument of each role, for messages.
ROLES = {
    "protected": ("protected attribute", "sensitive_features"),
    "legitimate": ("legitimate factor", "legitimate_features"),
}

# Messages for columns that cannot be groups; tests assert their text.
TOO_MANY_GROUPS = (
    "The {role} {column!r} has {n} distinct values; every distinct value is its own group and at most "
    f"{MAX_GROUPS} groups can be compared. Bucket it explicitly and pass the buckets instead, e.g. "
    "fit(..., {argument}=pd.cut(X[{column!r}], bins=[...])): the buckets are then the groups, "
    "enforced and measured exactly."
)
TOO_MANY_COMBINATIONS = (
    "The {role} columns {columns} have {n} distinct combinations of values; every combination is its own "
    f"group and at most {MAX_GROUPS} groups can be compared. Use fewer columns, or bucket them explicitly "
    "(e.g. pd.cut) and pass the buckets as {argument}."
)
AMBIGUOUS_VALUES = (
    "The {role} {column!r} holds different values that read the same as text ({examples}), so its groups "
    "would be ambiguous. Give the column a single type, e.g. X[{column!r}].astype(str), or rename the values."
)
NO_GROUP_COLUMNS = "{argument} names no column: pass at least one column name (or None for no {role})."


@dataclass(frozen=True)
class GroupCoding:
    """Integer codes of a (possibly combined) categorical attribute.

    Attributes
    ----------
    name : str
        Column name(s), joined with " & ".
    codes : ndarray of int, shape (n_rows,)
    levels : tuple of str
        Readable name of each code.
    """

    name: str
    codes: np.ndarray
    levels: tuple[str, ...]

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    def labels(self) -> np.ndarray:
        """The readable level of every row."""
        return np.asarray(self.levels, dtype=object)[self.codes]


def missing_group_name(present: Iterable[str]) -> str:
    """The name of the group of missing values beside groups named ``present``.

    :data:`MISSING_GROUP` ("missing"), or :data:`NO_VALUE_GROUP` ("(no value)") when a
    present value already reads "missing", then "(no value) 2", ...: never the name of
    a present value, so rows without a value are never merged with rows whose value is
    the text "missing".

    Examples
    --------
    >>> missing_group_name(["f", "m"]), missing_group_name(["f", "missing"])
    ('missing', '(no value)')
    """
    taken = set(present)
    if MISSING_GROUP not in taken:
        return MISSING_GROUP
    name, k = NO_VALUE_GROUP, 1
    while name in taken:
        k += 1
        name = f"{NO_VALUE_GROUP} {k}"
    return name


def group_text(values: pd.Series) -> pd.Series:
    """Every value as text, a missing one as :func:`missing_group_name` of the present ones."""
    column = values.astype(object)
    present = column.notna()
    missing = missing_group_name(column[present].astype(str).unique())
    return column.where(present, missing).astype(str)


def _column_levels(s: pd.Series, column, role: str) -> np.ndarray:
    """The readable group of every row: one per distinct value, :func:`missing_group_name` for a missing one."""
    words, argument = ROLES[role]
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    keys = [level_key(python_scalar(u)) for u in uniques]
    missing = missing_group_name(keys)
    shown = keys + ([missing] if (codes < 0).any() else [])
    if len(set(shown)) < len(shown):
        values = [repr(python_scalar(u)) for u in uniques] + ["a missing value"]
        by_key: dict[str, list[str]] = {}
        for value, key in zip(values, shown):
            by_key.setdefault(key, []).append(value)
        examples = "; ".join(" and ".join(v) for v in by_key.values() if len(v) > 1)
        raise EncodingError(AMBIGUOUS_VALUES.format(role=words, column=column, examples=examples))
    if len(shown) > MAX_GROUPS:
        raise EncodingError(TOO_MANY_GROUPS.format(role=words, column=column, n=len(shown), argument=argument))
    return np.asarray(keys + [missing], dtype=object)[codes]


def encode_groups(values: pd.DataFrame | pd.Series, *, role: str = "protected") -> GroupCoding:
    """Integer-code one or more columns jointly, one group per distinct value (or combination).

    Parameters
    ----------
    values : DataFrame or Series, n_rows long
    role : {"protected", "legitimate"}, default "protected"
        Names the attribute and the ``fit`` argument in messages.

    Raises
    ------
    EncodingError
        No column; a column with more than :data:`MAX_GROUPS` distinct values
        (or columns with more combinations); values that read the same as text
        (1 and "1").
    """
    words, argument = ROLES[role]
    frame = values.to_frame() if isinstance(values, pd.Series) else values
    if frame.shape[1] == 0:
        raise EncodingError(NO_GROUP_COLUMNS.format(argument=argument, role=words))
    parts = [_column_levels(frame.iloc[:, j], c, role) for j, c in enumerate(frame.columns)]
    if len(parts) == 1:
        label = parts[0]
    else:
        label = np.asarray([f"{frame.columns[0]}="], dtype=object) + parts[0]
        for c, p in zip(frame.columns[1:], parts[1:]):
            label = label + f" & {c}=" + p
    levels, codes = np.unique(label.astype(str), return_inverse=True)
    if len(parts) > 1 and levels.size > MAX_GROUPS:
        raise EncodingError(
            TOO_MANY_COMBINATIONS.format(
                role=words, columns=", ".join(map(repr, frame.columns)), n=levels.size, argument=argument
            )
        )
    return GroupCoding(
        name=" & ".join(map(str, frame.columns)), codes=codes.astype(np.int64), levels=tuple(map(str, levels))
    )
