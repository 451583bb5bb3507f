"""Protected groups and legitimate factors as integer codes.

Several columns combine into one group per distinct combination
("race=Black & sex=F"); a numeric column with many values is bucketed into
quantiles first; a missing value is its own level ("missing").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: Numeric columns with more distinct values than this are bucketed.
MAX_NUMERIC_LEVELS = 10


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


def _column_levels(s: pd.Series, n_buckets: int) -> pd.Series:
    missing = s.isna()
    if pd.api.types.is_bool_dtype(s):
        out = s.astype(object).map(str)
    elif pd.api.types.is_numeric_dtype(s) and s.nunique(dropna=True) > MAX_NUMERIC_LEVELS:
        out = pd.qcut(s, q=n_buckets, duplicates="drop").astype(str)
    elif pd.api.types.is_float_dtype(s) and np.all(np.mod(s.dropna(), 1) == 0):
        out = s.astype("Int64").astype(str)
    else:
        out = s.astype(str)
    out = out.astype(object)
    out[missing] = "missing"
    return out


def encode_groups(values: pd.DataFrame | pd.Series, *, n_buckets: int = 4) -> GroupCoding:
    """Integer-code one or more columns jointly.

    Parameters
    ----------
    values : DataFrame or Series, n_rows long
    n_buckets : int
        Quantile buckets for a numeric column with more than
        ``MAX_NUMERIC_LEVELS`` distinct values.
    """
    frame = values.to_frame() if isinstance(values, pd.Series) else values
    if frame.shape[1] == 0:
        raise ValueError("no columns given for the group")
    parts = [_column_levels(frame[c], n_buckets) for c in frame.columns]
    if len(parts) == 1:
        label = parts[0]
    else:
        label = parts[0].radd(f"{frame.columns[0]}=")
        for c, p in zip(frame.columns[1:], parts[1:]):
            label = label + f" & {c}=" + p
    levels, codes = np.unique(label.to_numpy(dtype=str), return_inverse=True)
    return GroupCoding(name=" & ".join(map(str, frame.columns)), codes=codes.astype(np.int64), levels=tuple(map(str, levels)))
