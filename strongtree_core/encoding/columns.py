"""How one raw column becomes binary columns.

* binary (0/1 numbers or booleans): one column, labelled with the column name;
* categorical (text, pandas category): one column per level (``race = Caucasian``),
  a single column for a two-level attribute;
* ordinal (integers with few distinct values): thermometer columns ``x ≤ level``;
* continuous: quantile cuts, thermometer coded (``age ≤ 35.5``) or one column
  per bucket (``age in (30, 40]``);
* any column with missing training values gets an ``income missing`` column;
  a missing value is 0 in every other column of its attribute.

Text whose every value reads as a number is numeric, and integer codes of
nominal attributes look ordinal: declare such columns' kind explicitly
(``kinds={"zip": "categorical"}``) or give them the pandas ``category`` dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from strongtree_core.encoding.errors import (
    DECIMAL_COMMA,
    NOT_BINARY,
    NOT_NUMERIC,
    NUMERIC_AS_TEXT,
    UNKNOWN_KIND,
    EncodingError,
    MixedColumnError,
)
from strongtree_core.encoding.features import (
    BinaryFeature,
    ColumnName,
    equals_label,
    Level,
    flag_value,
    format_number,
    level_key,
    python_scalar,
    readable_cut,
)
from strongtree_core.numbers import read_decimal_comma, read_integer, thousands_comma
from strongtree_core.words import shown_name

ColumnKind = Literal["binary", "categorical", "ordinal", "continuous"]
KINDS: tuple[str, ...] = ("binary", "categorical", "ordinal", "continuous")
Coding = Literal["thermometer", "onehot"]


@dataclass(frozen=True)
class ColumnEncoding:
    """The fitted coding of one raw column.

    Attributes
    ----------
    name : str or int
        The raw column.
    kind : {"binary", "categorical", "ordinal", "continuous"}
    cuts : tuple of float
        Thresholds of an ordinal or continuous column, increasing.
    levels : tuple
        Categories seen in training (categorical), sorted.
    coding : {"thermometer", "onehot"}
        How a continuous column's buckets are coded.
    n_missing : int
        Missing training values.
    n_gaps : int or None
        Of an ordinal or continuous column: its distinct cuts among the training rows (the
        gaps between neighbouring distinct finite values, each one split of the rows), of
        which ``cuts`` keeps some or all; None for other kinds, and for plans stored before
        it was counted.
    features : tuple of BinaryFeature
        The binary columns, derived from the fields above.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> column = plan.columns[0]
    >>> column.name, column.kind
    ('a', 'binary')
    """

    name: ColumnName
    kind: ColumnKind
    cuts: tuple[float, ...] = ()
    levels: tuple[Level, ...] = ()
    coding: Coding = "thermometer"
    n_missing: int = 0
    # a fact about the training rows, not about how rows are encoded: two codings that encode alike are equal
    n_gaps: int | None = field(default=None, compare=False)
    features: tuple[BinaryFeature, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EncodingError(UNKNOWN_KIND.format(kind=self.kind, column=self.name))
        object.__setattr__(self, "features", tuple(_features(self)))

    @property
    def one_hot_levels(self) -> tuple[Level, ...]:
        """Levels that get a column: all of them, or the second of two."""
        return self.levels[1:] if len(self.levels) == 2 else self.levels

    def encode(self, values: pd.Series) -> np.ndarray:
        """Binary columns of ``values``, shape (n_rows, len(features)), uint8."""
        missing = values.isna().to_numpy()
        out = np.zeros((len(values), len(self.features)), dtype=np.uint8)
        if self.kind == "categorical":
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
            keys = np.array([level_key(u) for u in uniques], dtype=object)
            for j, feature in enumerate(self.features):
                if feature.kind == "equals":
                    hit = np.flatnonzero(equals_label(keys, level_key(feature.level)))
                    out[:, j] = np.isin(codes, hit)
                else:
                    out[:, j] = missing
            return out
        if self.kind == "binary":
            number = read_flags(values, self.name)
        else:
            number = read_numbers(values, self.name)
        present = ~missing
        for j, feature in enumerate(self.features):
            if feature.kind == "is_one":
                hit = number == 1.0
            elif feature.kind == "at_most":
                hit = number <= feature.threshold
            elif feature.kind == "in_range":
                hit = np.ones(len(values), dtype=bool)
                if feature.lower is not None:
                    hit &= number > feature.lower
                if feature.threshold is not None:
                    hit &= number <= feature.threshold
            else:
                out[:, j] = missing
                continue
            out[:, j] = hit & present
        return out


def fit_column(
    values: pd.Series,
    name: ColumnName,
    *,
    n_buckets: int,
    coding: Coding,
    max_ordinal_levels: int,
    kind: str | None = None,
    weight: np.ndarray | None = None,
) -> ColumnEncoding:
    """Choose the kind of a raw column (unless given) and fit its coding.

    ``weight`` (one number > 0 per row, optional) weights the quantiles of a
    continuous column, so that a row of weight 2 counts as the row twice.
    """
    if kind is not None and kind not in KINDS:
        raise EncodingError(UNKNOWN_KIND.format(kind=kind, column=name))
    n_missing = int(values.isna().sum())
    notna = values.notna().to_numpy()
    present = values[notna]
    kind = kind or infer_kind(present, name, max_ordinal_levels)
    if kind == "categorical":
        by_key: dict[str, Level] = {}
        for value in pd.unique(present):
            by_key.setdefault(level_key(value), python_scalar(value))
        levels = tuple(sorted(by_key.values(), key=_level_order))
        return ColumnEncoding(name, "categorical", levels=levels, n_missing=n_missing)
    if kind == "binary":
        read_flags(present, name)
        return ColumnEncoding(name, "binary", n_missing=n_missing)
    number = read_numbers(present, name)
    finite = np.isfinite(number)
    number = number[finite]
    if kind == "ordinal":
        cuts = tuple(float(v) for v in np.unique(number)[:-1])
        return ColumnEncoding(name, "ordinal", cuts=cuts, n_missing=n_missing, n_gaps=len(cuts))
    w = None if weight is None else np.asarray(weight, dtype=float)[notna][finite]
    counted = number if w is None else number[w > 0]  # rows of weight 0 are absent
    return ColumnEncoding(
        name, "continuous", cuts=quantile_cuts(number, n_buckets, w), coding=coding, n_missing=n_missing,
        n_gaps=max(0, int(np.unique(counted).size) - 1),
    )


def infer_kind(present: pd.Series, name: ColumnName, max_ordinal_levels: int) -> ColumnKind:
    """The kind of a column from its non-missing values."""
    if pd.api.types.is_bool_dtype(present.dtype):
        return "binary"
    if isinstance(present.dtype, pd.CategoricalDtype):
        return "categorical"
    if not pd.api.types.is_numeric_dtype(present.dtype):
        # Decided on the distinct values (reading a million texts as numbers took 2 s; a column has few).
        distinct_values = pd.Series(pd.unique(present), dtype=object)
        if len(present) and all(type(v).__name__ in ("bool", "bool_") for v in distinct_values):
            return "binary"
        parsed = pd.to_numeric(distinct_values, errors="coerce")
        if len(present) == 0 or parsed.isna().any():
            _refuse_separated_numbers(distinct_values, name)
            _refuse_numbers_among_text(present, distinct_values, parsed.notna().to_numpy(), name)
            return "categorical"
        present = pd.to_numeric(present, errors="coerce")
    number = present.to_numpy(dtype=float)
    finite = number[np.isfinite(number)]
    # Decided in passes over the rows, without sorting them (a million rows: 5 ms, not 70).
    if finite.size == number.size and ((finite == 0.0) | (finite == 1.0)).all():
        return "binary"
    if not (finite == np.round(finite)).all():
        return "continuous"
    return "ordinal" if pd.unique(finite).size <= max_ordinal_levels else "continuous"


#: A text column whose distinct values are mostly numbers, at least this many of them, is refused: read as
#: categories it would be one yes/no question per number (and a binary matrix as wide as the rows are many).
MIXED_MIN_NUMBERS = 20
#: ... when the numbers are at least this share of its distinct values.
MIXED_NUMBER_SHARE = 0.9


def _refuse_numbers_among_text(present: pd.Series, distinct_values: pd.Series, is_number: np.ndarray,
                               name: ColumnName) -> None:
    """Raise when a column of numbers holds a few texts (``'?'``, ``'unknown'``, a stray ``'1,5'``): read as
    categories, every distinct number would become a category of its own."""
    numbers = int(is_number.sum())
    if numbers < MIXED_MIN_NUMBERS or numbers < MIXED_NUMBER_SHARE * len(distinct_values):
        return
    texts = distinct_values[~is_number]
    examples = ", ".join(repr(v) for v in texts.iloc[:3])
    rows = int(present.isin(set(texts)).sum())
    raise MixedColumnError(name, examples, rows, len(distinct_values))


def quantile_cuts(values: np.ndarray, n_buckets: int, weight: np.ndarray | None = None) -> tuple[float, ...]:
    """Thresholds at the ``k / n_buckets`` quantiles of ``values`` (finite
    training values, one per row), each moved to a readable number strictly
    between two neighbouring distinct values; duplicates removed, so a value
    repeated in many rows gives fewer buckets.

    The quantile of level p is the smallest value whose rows hold at least
    p of the total weight (numpy's ``inverted_cdf``; every row weighs 1 unless
    ``weight`` says otherwise), so a row of weight k gives the cuts of that row
    repeated k times, and rows of weight 0 count as absent.
    """
    if weight is not None:
        keep = np.asarray(weight, dtype=float) > 0
        values, weight = values[keep], np.asarray(weight, dtype=float)[keep]
    distinct = np.unique(values)
    if distinct.size < 2:
        return ()
    q = np.quantile(values, np.arange(1, n_buckets) / n_buckets, weights=weight, method="inverted_cdf")
    cuts = set()
    for value in q:
        i = int(np.searchsorted(distinct, value, side="right")) - 1
        if 0 <= i < distinct.size - 1:
            cuts.add(readable_cut(float(distinct[i]), float(distinct[i + 1])))
    return tuple(sorted(cuts))


def read_numbers(values: pd.Series, name: ColumnName) -> np.ndarray:
    """Values as floats (NaN where missing); text that is not a number is an error."""
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype=float, na_value=np.nan)
    parsed = pd.to_numeric(values, errors="coerce")
    bad = parsed.isna() & values.notna()
    if bad.any():
        _refuse_separated_numbers(values[bad], name)
        examples = ", ".join(repr(v) for v in pd.unique(values[bad])[:3])
        raise EncodingError(NOT_NUMERIC.format(column=name, examples=examples))
    return parsed.to_numpy(dtype=float, na_value=np.nan)


def read_flags(values: pd.Series, name: ColumnName) -> np.ndarray:
    """Yes/no values as 1.0 / 0.0 (NaN where missing)."""
    if pd.api.types.is_bool_dtype(values.dtype) and not values.isna().any():
        return values.to_numpy(dtype=float)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    read = np.empty(len(uniques) + 1)
    read[-1] = np.nan
    bad = []
    for i, u in enumerate(uniques):
        try:
            read[i] = 1.0 if flag_value(u) else 0.0
        except ValueError:
            bad.append(u)
    if bad:
        examples = ", ".join(repr(python_scalar(v)) for v in bad[:3])
        raise EncodingError(NOT_BINARY.format(column=name, examples=examples))
    return read[codes]


def _refuse_separated_numbers(text: pd.Series, name: ColumnName) -> None:
    """Raise when the values are numbers written with commas: between groups of three digits (thousands
    separators, ``1,200``), or as the decimal mark (``51,26``; the advice to drop the commas made 5126 of it)."""
    as_text = pd.Series(pd.unique(text.astype(str)), dtype=object).str.strip()
    has_comma = as_text.str.contains(",", regex=False)
    with_comma = as_text[has_comma]
    if with_comma.empty:
        return
    stripped = pd.to_numeric(as_text.str.replace(",", "", regex=False), errors="coerce")
    if with_comma.map(thousands_comma).all() and stripped.notna().all():
        raise EncodingError(NUMERIC_AS_TEXT.format(column=name, example=with_comma.iloc[0]))
    if with_comma.map(read_decimal_comma).notna().all() and as_text[~has_comma].map(read_integer).notna().all():
        telling = with_comma[~with_comma.map(thousands_comma)]  # not also a number with thousands separators
        raise EncodingError(DECIMAL_COMMA.format(column=name, example=telling.iloc[0]))


def _level_order(level) -> tuple:
    """Numbers first, in numeric order, then text, alphabetically."""
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        return (0, float(level), "")
    return (1, 0.0, level_key(level))


def _features(column: ColumnEncoding) -> list[BinaryFeature]:
    name = column.name
    shown = shown_name(name)
    features: list[BinaryFeature] = []
    if column.kind == "binary":
        features.append(BinaryFeature(name, "is_one", shown, f"not {shown}"))
    elif column.kind == "categorical":
        for level in column.one_hot_levels:
            text = shown_name(level_key(level))
            features.append(
                BinaryFeature(name, "equals", f"{shown} = {text}", f"{shown} ≠ {text}", level=level)
            )
    elif column.coding == "onehot" and column.kind == "continuous" and column.cuts:
        bounds = (None,) + column.cuts + (None,)
        for lower, upper in zip(bounds[:-1], bounds[1:]):
            if lower is None:
                label, negated = f"{shown} ≤ {format_number(upper)}", f"{shown} > {format_number(upper)}"
            elif upper is None:
                label, negated = f"{shown} > {format_number(lower)}", f"{shown} ≤ {format_number(lower)}"
            else:
                span = f"({format_number(lower)}, {format_number(upper)}]"
                label, negated = f"{shown} in {span}", f"{shown} not in {span}"
            features.append(BinaryFeature(name, "in_range", label, negated, threshold=upper, lower=lower))
    else:
        for cut in column.cuts:
            text = format_number(cut)
            features.append(
                BinaryFeature(name, "at_most", f"{shown} ≤ {text}", f"{shown} > {text}", threshold=cut)
            )
    if column.n_missing:
        features.append(BinaryFeature(name, "missing", f"{shown} missing", f"{shown} not missing"))
    return features
