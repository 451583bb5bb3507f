"""From the first passes' summaries to the encoding, the classes and the groups: the same
decisions :class:`~strongtree_core.encoding.TableEncoder` (with ``max_thresholds``) and
``StrongTreeClassifier.fit`` make for the table in memory.

* a column's kind: yes/no (0 / 1 numbers or booleans), categorical (text, categories),
  ordinal (whole numbers with at most ``max_ordinal_levels`` values), continuous;
* a continuous column's thresholds: :func:`~strongtree_core.encoding.thresholds.choose_gaps`
  on its values' class weights (:mod:`~strongtree_core.source.bins`); a table in memory
  also keeps the cuts of CART grown on its raw columns, which a table read where it lies
  does not have (no CART on rows that are not in memory);
* the thresholds' *ladder order* (:func:`ladder_order`): the cut nearest the median first,
  then those nearest the quartiles, the octiles, ...: the first 1, 3, 7, 15 of them are the
  coarse rungs the search climbs (:mod:`~strongtree_core.source.climb`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from strongtree_core.encoding.binarize import EncodingPlan
from strongtree_core.encoding.columns import ColumnEncoding, _level_order, _refuse_separated_numbers
from strongtree_core.encoding.errors import EncodingError
from strongtree_core.encoding.features import readable_cut
from strongtree_core.encoding.groups import GroupCoding, encode_groups
from strongtree_core.encoding.thresholds import choose_gaps, spread_gaps
from strongtree_core.source.bins import BIN_SHIFT, Histogram
from strongtree_core.source.scan import CATEGORY_CAP, Scan

TOO_MANY_LEVELS = ("The column {column!r} holds more than {cap:,} distinct texts: as a categorical column it would "
                   "give as many binary features. Leave it out, or group its values into fewer categories.")
NUMBERS_AS_TEXT = ("The column {column!r} holds numbers written as text (e.g. {example!r}). A table read where it "
                   "lies is read by its types: store the column as numbers.")
TOO_MANY_COMBINATIONS = ("The {role} column(s) {columns} have more than {cap:,} distinct values (or combinations): "
                         "at most 20 groups can be compared. Bucket them into fewer groups.")


def kind_of(name: str, col, max_ordinal_levels: int) -> str:
    """The kind ``infer_kind`` gives the column from what the first pass saw."""
    if col.type == "bool":
        return "binary"
    if col.type == "category":
        return "categorical"
    if col.type == "text":
        if col.levels is None:
            raise EncodingError(TOO_MANY_LEVELS.format(column=name, cap=CATEGORY_CAP))
        values = pd.Series(list(col.levels.values()), dtype=object)
        if len(values) and col.all_flags:
            return "binary"
        parsed = pd.to_numeric(values, errors="coerce")
        if len(values) and not parsed.isna().any():
            raise EncodingError(NUMBERS_AS_TEXT.format(column=name, example=values.iloc[0]))
        _refuse_separated_numbers(values, name)
        return "categorical"
    if col.all_flags:
        return "binary"
    if not col.whole:
        return "continuous"
    return "ordinal" if col.values is not None and col.values.size <= max_ordinal_levels else "continuous"


def fixed_column(name: str, col, kind: str) -> ColumnEncoding:
    """The coding of a column that is not continuous (continuous ones wait for their histogram)."""
    if kind == "binary":
        return ColumnEncoding(name, "binary", n_missing=col.n_missing)
    if kind == "categorical":
        levels = tuple(sorted(col.levels.values(), key=_level_order))
        return ColumnEncoding(name, "categorical", levels=levels, n_missing=col.n_missing)
    cuts = tuple(float(v) for v in col.values[:-1])
    return ColumnEncoding(name, "ordinal", cuts=cuts, n_missing=col.n_missing, n_gaps=len(cuts))


def bin_shift(col) -> int:
    """Value by value (0) when the first pass kept every distinct number, else in bins."""
    return 0 if col.values is not None else BIN_SHIFT


def threshold_gaps(hist: Histogram, max_thresholds: int) -> np.ndarray:
    """The gaps (between bins ``i`` and ``i + 1``) kept as thresholds, in increasing order."""
    return choose_gaps(hist.per_class, max_thresholds)


def gap_cut(hist: Histogram, gap: int) -> float:
    return readable_cut(float(hist.high[gap]), float(hist.low[gap + 1]))


def ladder_order(hist: Histogram, gaps: np.ndarray) -> np.ndarray:
    """``gaps`` in the order the rungs take them: nearest the median of the rows' weight first, then the
    quartiles, ... (:func:`~strongtree_core.encoding.thresholds.spread_gaps`, whose choice of ``n`` is part of
    its choice of ``n + 1``)."""
    cumulative = np.cumsum(hist.per_class.sum(axis=1))
    order: list[int] = []
    for n in range(1, gaps.size + 1):
        chosen = spread_gaps(gaps, cumulative[:-1], n, float(cumulative[-1]))
        order += [int(g) for g in chosen if int(g) not in order]
    return np.asarray(order, dtype=np.int64)


def continuous_column(name: str, col, hist: Histogram, max_thresholds: int) -> tuple[ColumnEncoding, tuple[float, ...]]:
    """A continuous column's coding with every threshold of its budget, and those thresholds in ladder order."""
    gaps = threshold_gaps(hist, max_thresholds)
    ordered = tuple(gap_cut(hist, int(g)) for g in ladder_order(hist, gaps))
    # Counted value by value (no bits dropped), the histogram's bins are the column's distinct values:
    # its distinct cuts are known; binned, they are not (the certificate's words then claim no count).
    n_gaps = max(0, int(hist.keys.size) - 1) if bin_shift(col) == 0 else None
    column = ColumnEncoding(name, "continuous", cuts=tuple(sorted(ordered)), coding="thermometer",
                            n_missing=col.n_missing, n_gaps=n_gaps)
    return column, ordered


def make_plan(columns: list[ColumnEncoding], excluded: tuple, max_thresholds: int, max_ordinal_levels: int) -> EncodingPlan:
    return EncodingPlan(columns=tuple(columns), n_buckets=None, continuous="thermometer",
                        max_ordinal_levels=max_ordinal_levels, excluded=tuple(excluded), max_thresholds=max_thresholds)


def with_cuts(plan: EncodingPlan, cuts: dict) -> EncodingPlan:
    """``plan`` with the continuous columns named in ``cuts`` cut at those thresholds only."""
    from dataclasses import replace

    return replace(plan, columns=tuple(replace(c, cuts=tuple(sorted(cuts[c.name]))) if c.name in cuts else c
                                       for c in plan.columns))


def group_coding(scan: Scan, role: str, names: tuple[str, ...]) -> tuple[GroupCoding, dict]:
    """The groups (or legitimate levels) as ``fit`` codes them, and each combination of values -> its code."""
    combos = scan.groups.get(role)
    if combos is None:
        raise EncodingError(TOO_MANY_COMBINATIONS.format(role=role, columns=", ".join(map(repr, names)),
                                                         cap=CATEGORY_CAP))
    combos = sorted(combos, key=repr)
    frame = pd.DataFrame([[np.nan if v is None else v for v in c] for c in combos], columns=list(names))
    for name, values in zip(names, zip(*combos)):  # keep each column's own type (integers stay integers)
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in present) and \
                len(present) == len(values):
            frame[name] = np.asarray(values, dtype=np.int64)
        elif present and not all(isinstance(v, (int, float, np.integer, np.floating)) for v in present):
            frame[name] = pd.Series([v for v in values], dtype=object)
    coding = encode_groups(frame if len(names) > 1 else frame[names[0]], role=role)
    return coding, {combo: int(code) for combo, code in zip(combos, coding.codes)}
