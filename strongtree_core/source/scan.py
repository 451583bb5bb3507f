"""The first pass over a table read where it lies: what each column holds.

A pass is a function of one batch of rows (a pandas DataFrame: a Parquet row group, a
CSV block, a Dask partition) returning a summary, and a merge of two summaries that is
associative and commutative, so that any split of the rows into batches, read in any
order, on one machine or on a cluster's workers, gives the same summary.  This pass
finds, over the rows of positive weight:

* each feature column's type, missing values, whether its values are 0 / 1, whole
  numbers, their distinct values (up to :data:`DISTINCT_CAP`), the categories of text;
* the target's distinct labels (over every row, as ``fit`` reads ``y``) and missing labels;
* the weights' problems (missing, infinite, negative) and range;
* the distinct values (combinations) of the protected and legitimate columns.

:func:`~strongtree_core.source.plan.plan_from_scan` then decides each column's coding
exactly as :class:`~strongtree_core.encoding.TableEncoder` decides it for a table in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from strongtree_core.encoding.features import level_key, python_scalar

#: Distinct numbers of a column kept exactly; a column with more is read through bins (``histogram``).
DISTINCT_CAP = 65_536
#: Distinct categories of a text column, labels of the target, and groups kept; more is refused.
CATEGORY_CAP = 1_000


@dataclass(frozen=True)
class ScanSpec:
    """The columns of a pass and their roles."""

    features: tuple[str, ...]
    target: str
    weight: str | None = None
    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column read (each once)."""
        out: list[str] = []
        for name in (*self.features, self.target, *((self.weight,) if self.weight else ()),
                     *self.protected, *self.legitimate):
            if name not in out:
                out.append(name)
        return tuple(out)


@dataclass(frozen=True)
class ColumnScan:
    """What one feature column holds (over the rows of positive weight)."""

    type: str  # "number", "bool", "category" or "text": the column's type as read
    n_missing: int = 0
    n_present: int = 0
    all_flags: bool = True  # every present value is 0 or 1 (numbers), or a yes/no value
    whole: bool = True  # every finite value is a whole number
    has_posinf: bool = False
    has_neginf: bool = False
    values: np.ndarray | None = None  # sorted distinct finite numbers; None past DISTINCT_CAP
    low: float = np.inf  # smallest and largest finite number
    high: float = -np.inf
    levels: dict | None = field(default=None)  # level_key -> first value seen (text, category, bool); None past the cap


@dataclass(frozen=True)
class Scan:
    """The merged summary of the first pass."""

    rows: int = 0  # rows of positive weight
    rows_read: int = 0  # every row
    columns: dict = field(default_factory=dict)  # name -> ColumnScan
    labels: dict | None = field(default_factory=dict)  # the target's level_key -> value; None past the cap
    target_missing: int = 0
    weight_problems: tuple = (0, 0, 0, 0)  # rows with a missing, infinite, negative weight; text weights
    weight_min: float = np.inf  # the smallest weight (negative ones included)
    weight_low: float = np.inf  # smallest and largest positive weight
    weight_high: float = 0.0
    weight_total: float = 0.0
    groups: dict = field(default_factory=dict)  # role -> set of tuples of values (None for missing); None past the cap


def column_type(series: pd.Series) -> str:
    """The type of a column as read: "bool", "category", "number" or "text"."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if isinstance(dtype, pd.CategoricalDtype):
        # texts read as categories (the readers do, for speed) are texts, as in a table read whole
        categories = dtype.categories
        return "text" if categories.dtype == object or pd.api.types.is_string_dtype(categories.dtype) else "category"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "text"


def positive_rows(df: pd.DataFrame, weight: str | None) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The rows of positive weight and their weights (every row, weights None, without a weight column).
    Missing, infinite and negative weights are left to the first pass to report; here they count as absent."""
    if weight is None:
        return df, None
    w = pd.to_numeric(df[weight], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    keep = np.isfinite(w) & (w > 0)
    if keep.all():
        return df, w
    return df.loc[keep].reset_index(drop=True), w[keep]


def scan_batch(spec: ScanSpec, df: pd.DataFrame) -> Scan:
    """The first pass's summary of one batch of rows."""
    labels, target_missing = _levels(df[spec.target])
    problems, smallest, low, high, total = (0, 0, 0, 0), np.inf, np.inf, 0.0, 0.0
    if spec.weight is not None:
        problems, smallest, low, high, total = _weight_summary(df[spec.weight])
    rows_read = len(df)
    df, _ = positive_rows(df, spec.weight)
    columns = {name: column_scan(df[name]) for name in spec.features}
    groups = {}
    for role, names in (("protected", spec.protected), ("legitimate", spec.legitimate)):
        if names:
            groups[role] = _combinations(df, names)
    return Scan(len(df), rows_read, columns, labels, target_missing, problems, smallest, low, high, total, groups)


def _levels(series: pd.Series) -> tuple[dict | None, int]:
    """The distinct present values of a column by their level key, and its missing count."""
    if isinstance(series.dtype, pd.CategoricalDtype):  # the categories present, not every one declared
        codes = np.unique(series.cat.codes.to_numpy())
        uniques = series.cat.categories.to_numpy()[codes[codes >= 0]]
    else:
        uniques = pd.unique(series.dropna())
    levels: dict = {}
    for value in uniques:
        levels.setdefault(level_key(python_scalar(value)), python_scalar(value))
    return (levels if len(levels) <= CATEGORY_CAP else None), int(series.isna().sum())


def _weight_summary(series: pd.Series) -> tuple[tuple, float, float, float, float]:
    """Rows with a missing, infinite, negative or non-number weight; the smallest weight; the smallest,
    largest and summed positive finite weights."""
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return (0, 0, 0, len(series)), np.inf, np.inf, 0.0, 0.0
    w = series.to_numpy(dtype=float, na_value=np.nan)
    positive = w[np.isfinite(w) & (w > 0)]
    problems = (int(np.isnan(w).sum()), int(np.isinf(w).sum()), int((w < 0).sum()), 0)
    smallest = float(np.nanmin(w)) if (~np.isnan(w)).any() else np.inf
    if positive.size == 0:
        return problems, smallest, np.inf, 0.0, 0.0
    return problems, smallest, float(positive.min()), float(positive.max()), float(positive.sum())


def _combinations(df: pd.DataFrame, names: tuple[str, ...]) -> set | None:
    """The distinct combinations of values of ``names`` (None for a missing value)."""
    frame = df[list(names)].drop_duplicates()
    if len(frame) > CATEGORY_CAP:
        return None
    return {tuple(None if pd.isna(v) else python_scalar(v) for v in row)
            for row in frame.itertuples(index=False, name=None)}


def column_scan(series: pd.Series) -> ColumnScan:
    """What one batch of a feature column holds."""
    kind = column_type(series)
    n_missing = int(series.isna().sum())
    n_present = len(series) - n_missing
    if kind != "number":
        levels, _ = _levels(series)
        flags = kind == "bool" or (levels is not None and all(type(v).__name__ in ("bool", "bool_") for v in levels.values()))
        return ColumnScan(kind, n_missing, n_present, all_flags=flags, levels=levels)
    x = series.to_numpy(dtype=float, na_value=np.nan)
    present = x[~np.isnan(x)] if n_missing else x
    distinct = np.unique(present + 0.0)  # sorted (numpy's sort beats hashing here); -0.0 is 0.0
    finite = distinct[np.isfinite(distinct)]
    return ColumnScan(
        "number", n_missing, n_present,
        all_flags=finite.size == distinct.size and bool(((finite == 0.0) | (finite == 1.0)).all()),
        whole=bool((finite == np.round(finite)).all()),
        has_posinf=bool(distinct.size and np.isposinf(distinct[-1])),
        has_neginf=bool(distinct.size and np.isneginf(distinct[0])),
        values=finite if finite.size <= DISTINCT_CAP else None,
        low=float(finite[0]) if finite.size else np.inf, high=float(finite[-1]) if finite.size else -np.inf,
    )


def merge_columns(a: ColumnScan, b: ColumnScan) -> ColumnScan:
    values = None
    if a.values is not None and b.values is not None:
        values = np.union1d(a.values, b.values)
        if values.size > DISTINCT_CAP:
            values = None
    return replace(
        a, type=a.type if a.type == b.type else "text", n_missing=a.n_missing + b.n_missing,
        n_present=a.n_present + b.n_present, all_flags=a.all_flags and b.all_flags, whole=a.whole and b.whole,
        has_posinf=a.has_posinf or b.has_posinf, has_neginf=a.has_neginf or b.has_neginf, values=values,
        low=min(a.low, b.low), high=max(a.high, b.high), levels=_merge_levels(a.levels, b.levels),
    )


def _merge_levels(a: dict | None, b: dict | None) -> dict | None:
    if a is None or b is None:
        return None
    out = dict(a)
    for key, value in b.items():
        out.setdefault(key, value)
    return out if len(out) <= CATEGORY_CAP else None


def merge_scans(a: Scan, b: Scan) -> Scan:
    """The summary of the rows of both (associative and commutative)."""
    columns = dict(a.columns)
    for name, col in b.columns.items():
        columns[name] = merge_columns(columns[name], col) if name in columns else col
    groups = dict(a.groups)
    for role, combos in b.groups.items():
        mine = groups.get(role, set())
        if mine is None or combos is None:
            groups[role] = None
        else:
            union = mine | combos
            groups[role] = union if len(union) <= CATEGORY_CAP else None
    return Scan(
        a.rows + b.rows, a.rows_read + b.rows_read, columns, _merge_levels(a.labels, b.labels),
        a.target_missing + b.target_missing, tuple(x + y for x, y in zip(a.weight_problems, b.weight_problems)),
        min(a.weight_min, b.weight_min), min(a.weight_low, b.weight_low), max(a.weight_high, b.weight_high), a.weight_total + b.weight_total, groups,
    )
