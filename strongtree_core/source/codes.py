"""The pattern pass: every row becomes a small integer key, rows of equal key are summed.

Under an :class:`~strongtree_core.encoding.EncodingPlan` a row's binary features are a
function of one *code* per raw column: a yes/no column's value (0, 1, or missing), a
category's position among the plan's levels, a number's position among the column's
thresholds (how many thresholds lie below it; one more for a missing number).  With the
class, the protected group and the legitimate level, these codes are the digits of a
mixed-radix number, packed in as few 64-bit words as hold them: two rows are the same
pattern exactly when their keys are equal.  A batch's keys are summed with
:func:`numpy.unique`; summaries of batches merge by the same sum, in any order, so the
patterns of a table are the same whether its rows were read in one process, in batches
of any size, or on a cluster's workers.

:func:`to_patterns` turns the summed keys back into the binary features, as
:meth:`EncodingPlan.transform <strongtree_core.encoding.EncodingPlan.transform>` and
:func:`~strongtree_core.encoding.collapse_patterns` would give them for the whole table
in memory (the order of the patterns aside: here they come in the order of their keys).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from strongtree_core.encoding.binarize import EncodingPlan
from strongtree_core.encoding.columns import ColumnEncoding, read_flags, read_numbers
from strongtree_core.encoding.features import level_key, python_scalar
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.source.bins import class_codes
from strongtree_core.source.scan import positive_rows

_WORD = 1 << 64

UNKNOWN_VALUE = ("The column {column!r} holds a value not seen when the table was first read ({value!r}): the table "
                 "changed while it was read. Read it again once it no longer changes.")


@dataclass(frozen=True)
class Digit:
    """One digit of the key: a plan column (``column``), or the class / group / level (``role``)."""

    name: str
    radix: int
    role: str = "column"  # "column", "class", "protected" or "legitimate"
    column: ColumnEncoding | None = None


@dataclass(frozen=True)
class CodeSpec:
    """How the rows of a table become keys: the digits, their packing in words, the lookups."""

    digits: tuple[Digit, ...]
    words: tuple[tuple[int, ...], ...]  # the digits (indices) of each word, most significant first
    target: str
    classes: tuple
    weight: str | None = None
    protected: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    groups: tuple = ()  # ((combination of values) -> group code) for the protected columns, as pairs
    levels: tuple = ()  # the same for the legitimate columns

    @property
    def columns(self) -> tuple[str, ...]:
        out: list[str] = []
        for name in (*(d.name for d in self.digits if d.role == "column"), self.target,
                     *((self.weight,) if self.weight else ()), *self.protected, *self.legitimate):
            if name not in out:
                out.append(name)
        return tuple(out)


def code_radix(column: ColumnEncoding) -> int:
    """How many codes a plan column's rows take."""
    missing = 1 if column.n_missing else 0
    if column.kind == "binary":
        return 2 + missing
    if column.kind == "categorical":
        return len(column.levels) + missing
    return len(column.cuts) + 1 + missing


def code_spec(plan: EncodingPlan, *, target: str, classes: tuple, weight: str | None = None,
              protected: tuple = (), groups: dict | None = None, legitimate: tuple = (),
              levels: dict | None = None) -> CodeSpec:
    """The key of a plan, with the class, and the group and legitimate level when given
    (``groups`` / ``levels``: each combination of the columns' values, None for missing, to its code)."""
    digits = [Digit(str(c.name), code_radix(c), "column", c) for c in plan.columns]
    digits.append(Digit(target, len(classes), "class"))
    if groups is not None:
        digits.append(Digit("protected", max(1, max(groups.values(), default=0) + 1), "protected"))
    if levels is not None:
        digits.append(Digit("legitimate", max(1, max(levels.values(), default=0) + 1), "legitimate"))
    words: list[list[int]] = [[]]
    product = 1
    for i, digit in enumerate(digits):
        if product * digit.radix > _WORD and words[-1]:
            words.append([])
            product = 1
        words[-1].append(i)
        product *= digit.radix
    return CodeSpec(tuple(digits), tuple(tuple(w) for w in words), target, tuple(classes), weight,
                    tuple(protected), tuple(legitimate), tuple((groups or {}).items()), tuple((levels or {}).items()))


def column_codes(column: ColumnEncoding, series: pd.Series) -> np.ndarray:
    """The code of every row of one plan column (the features are :func:`feature_bits` of it)."""
    if column.kind == "categorical":
        index = {level_key(level): i for i, level in enumerate(column.levels)}
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        lookup = np.empty(len(uniques) + 1, dtype=np.int64)
        for i, value in enumerate(uniques):
            key = level_key(python_scalar(value))
            if key not in index:
                raise ValueError(UNKNOWN_VALUE.format(column=column.name, value=python_scalar(value)))
            lookup[i] = index[key]
        lookup[-1] = len(column.levels)  # missing
        return lookup[codes]
    if column.kind == "binary":
        number = read_flags(series, column.name)
        codes = (number == 1.0).astype(np.int64)
        codes[np.isnan(number)] = 2
        return codes
    number = read_numbers(series, column.name)
    cuts = np.asarray(column.cuts, dtype=np.float64)
    codes = np.searchsorted(cuts, number, side="left").astype(np.int64)  # cuts below the number: x <= cut_j iff j >= code
    codes[np.isnan(number)] = cuts.size + 1
    return codes


def feature_bits(column: ColumnEncoding, codes: np.ndarray) -> np.ndarray:
    """The plan column's binary features (shape (n, len(column.features)), uint8) from its codes."""
    out = np.zeros((codes.size, len(column.features)), dtype=np.uint8)
    if column.kind == "categorical":
        missing_code = len(column.levels)
        index = {level_key(level): i for i, level in enumerate(column.levels)}
        for j, feature in enumerate(column.features):
            out[:, j] = codes == (missing_code if feature.kind == "missing" else index[level_key(feature.level)])
        return out
    if column.kind == "binary":
        for j, feature in enumerate(column.features):
            out[:, j] = codes == (2 if feature.kind == "missing" else 1)
        return out
    n_cuts = len(column.cuts)
    for j, feature in enumerate(column.features):
        out[:, j] = (codes == n_cuts + 1) if feature.kind == "missing" else (codes <= j)
    return out


def _lookup(df: pd.DataFrame, names: tuple, table: tuple) -> np.ndarray:
    """The code of every row's combination of values of ``names`` (``table``: (combination, code) pairs)."""
    known = dict(table)
    per_column = [pd.factorize(df[n], use_na_sentinel=True) for n in names]
    combined = np.zeros(len(df), dtype=np.int64)
    for codes, uniques in per_column:
        combined = combined * (len(uniques) + 1) + (codes + 1)
    distinct, inverse = np.unique(combined, return_inverse=True)
    lookup = np.empty(distinct.size, dtype=np.int64)
    for i, value in enumerate(distinct):
        combo = []
        for codes, uniques in reversed(per_column):
            value, digit = divmod(int(value), len(uniques) + 1)
            combo.append(None if digit == 0 else python_scalar(uniques[digit - 1]))
        combo = tuple(reversed(combo))
        if combo not in known:
            raise ValueError(UNKNOWN_VALUE.format(column=", ".join(names), value=combo))
        lookup[i] = known[combo]
    return lookup[inverse.reshape(-1)]


@dataclass(frozen=True)
class Counts:
    """Summed patterns: distinct keys (rows of ``words``, increasing), their summed weights and row counts."""

    words: np.ndarray  # (n, n_words) uint64
    weight: np.ndarray  # (n,) float
    count: np.ndarray  # (n,) int64

    @property
    def n_patterns(self) -> int:
        return int(self.words.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.words.nbytes + self.weight.nbytes + self.count.nbytes)


def digit_codes(spec: CodeSpec, df: pd.DataFrame) -> list[np.ndarray]:
    """Every digit's code on the rows of ``df`` (already the rows of positive weight)."""
    out = []
    for digit in spec.digits:
        if digit.role == "column":
            out.append(column_codes(digit.column, df[digit.name]))
        elif digit.role == "class":
            codes = class_codes(df[spec.target], spec.classes)
            if (codes < 0).any():
                bad = df[spec.target][codes < 0].iloc[0]
                raise ValueError(UNKNOWN_VALUE.format(column=spec.target, value=python_scalar(bad)))
            out.append(codes)
        elif digit.role == "protected":
            out.append(_lookup(df, spec.protected, spec.groups))
        else:
            out.append(_lookup(df, spec.legitimate, spec.levels))
    return out


def count_batch(spec: CodeSpec, df: pd.DataFrame) -> Counts:
    """The summed patterns of one batch of rows."""
    df, w = positive_rows(df, spec.weight)
    codes = digit_codes(spec, df)
    for digit, code in zip(spec.digits, codes):
        if code.size and int(code.max()) >= digit.radix:  # a missing value where the first pass saw none
            raise ValueError(UNKNOWN_VALUE.format(column=digit.name, value=None))
    words = np.empty((len(df), len(spec.words)), dtype=np.uint64)
    for j, members in enumerate(spec.words):
        key = np.zeros(len(df), dtype=np.uint64)
        for i in members:
            key = key * np.uint64(spec.digits[i].radix) + codes[i].astype(np.uint64)
        words[:, j] = key
    weight = np.ones(len(df)) if w is None else w
    return reduce_counts(words, weight, np.ones(len(df), dtype=np.int64))


def reduce_counts(words: np.ndarray, weight: np.ndarray, count: np.ndarray) -> Counts:
    """Rows of equal keys summed, in increasing order of their keys."""
    if words.shape[0] == 0:
        return Counts(words, weight.astype(float), count.astype(np.int64))
    if words.shape[1] == 1:
        keys, inverse = np.unique(words[:, 0], return_inverse=True)
        inverse = inverse.reshape(-1)
        return Counts(keys[:, None], np.bincount(inverse, weights=weight, minlength=keys.size),
                      np.bincount(inverse, weights=count, minlength=keys.size).round().astype(np.int64))
    order = np.lexsort(words.T[::-1])
    words, weight, count = words[order], weight[order], count[order]
    start = np.flatnonzero(np.r_[True, (words[1:] != words[:-1]).any(axis=1)])
    return Counts(words[start], np.add.reduceat(weight, start), np.add.reduceat(count, start))


def merge_counts(*parts: Counts) -> Counts:
    """The summed patterns of the rows of all the parts (associative and commutative)."""
    parts = tuple(p for p in parts if p.n_patterns)
    if not parts:
        return Counts(np.zeros((0, 1), dtype=np.uint64), np.zeros(0), np.zeros(0, dtype=np.int64))
    if len(parts) == 1:
        return parts[0]
    return reduce_counts(np.concatenate([p.words for p in parts]), np.concatenate([p.weight for p in parts]),
                         np.concatenate([p.count for p in parts]))


def to_patterns(spec: CodeSpec, counts: Counts, plan: EncodingPlan) -> PatternData:
    """The weighted patterns of summed keys: binary features, class, group and level of each."""
    n = counts.n_patterns
    codes: list = [None] * len(spec.digits)
    for j, members in enumerate(spec.words):
        key = counts.words[:, j].copy()
        for i in reversed(members):
            radix = np.uint64(spec.digits[i].radix)
            codes[i] = (key % radix).astype(np.int64)
            key //= radix
    blocks = [feature_bits(d.column, codes[i]) for i, d in enumerate(spec.digits) if d.role == "column"]
    X = np.ascontiguousarray(np.hstack(blocks) if blocks else np.zeros((n, 0), dtype=np.uint8), dtype=np.uint8)
    role = {d.role: codes[i] for i, d in enumerate(spec.digits)}
    return PatternData(
        X=X, y=role["class"], weight=np.asarray(counts.weight, dtype=float), count=np.asarray(counts.count, dtype=np.int64),
        n_classes=len(spec.classes), group=role.get("protected"), legit=role.get("legitimate"),
        row_to_pattern=None, chains=plan.chains,
    )
