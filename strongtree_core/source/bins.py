"""The second pass: the class weights of each continuous column's values, for its thresholds.

A column whose distinct numbers the first pass kept (at most
:data:`~strongtree_core.source.scan.DISTINCT_CAP`) is counted value by value, exactly as
:func:`~strongtree_core.encoding.thresholds.value_classes` counts a table in memory, so the
thresholds chosen from it are the same.  A column with more is counted in *bins*: the
numbers whose 64-bit floating-point codes agree on their first 24 bits (sign, exponent
and 12 bits of the fraction), so a bin spans 1/4096 of a power of two, the bins follow the
data however skewed, and they are found with integer operations only: the same bins on any
machine and in any order of the rows.  Each bin keeps its smallest and largest number, so a
threshold between two bins lies between two numbers that occur, as in memory.

A bin is to the threshold rule what a distinct value is: the rule
(:func:`~strongtree_core.encoding.thresholds.choose_gaps`) cuts between bins, so a cut inside a
bin is never offered; with 4,096 bins per power of two that is a relative resolution of 0.02 %.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from strongtree_core.source.scan import positive_rows

#: Bits dropped from a number's 64-bit code to make its bin (64 - 24 kept).
BIN_SHIFT = 40
_SIGN = np.uint64(1 << 63)


@dataclass(frozen=True)
class HistogramSpec:
    """The columns of the second pass: (name, bits dropped: 0 value by value, else :data:`BIN_SHIFT`)."""

    columns: tuple[tuple[str, int], ...]
    target: str
    classes: tuple
    weight: str | None = None


@dataclass(frozen=True)
class Histogram:
    """One column's bins, in increasing order of their numbers."""

    keys: np.ndarray  # uint64, increasing
    per_class: np.ndarray  # (n_bins, n_classes) float: summed weight of each class
    low: np.ndarray  # smallest number in each bin
    high: np.ndarray  # largest number in each bin


def order_key(x: np.ndarray) -> np.ndarray:
    """64-bit codes of finite floats whose order as unsigned integers is the numbers' order."""
    u = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    negative = (u & _SIGN) != 0
    return np.where(negative, ~u, u | _SIGN)


def class_codes(series: pd.Series, classes: tuple) -> np.ndarray:
    """The index of each label among ``classes`` (-1 for a label not among them)."""
    return pd.Index(list(classes)).get_indexer(series).astype(np.int64)


def histogram_batch(spec: HistogramSpec, df: pd.DataFrame) -> dict:
    """Each column's histogram on one batch of rows: name -> :class:`Histogram`."""
    df, w = positive_rows(df, spec.weight)
    y = class_codes(df[spec.target], spec.classes)
    k = len(spec.classes)
    out = {}
    for name, shift in spec.columns:
        x = pd.to_numeric(df[name], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        finite = np.isfinite(x)
        if not finite.all():
            x, y_, w_ = x[finite], y[finite], None if w is None else w[finite]
        else:
            y_, w_ = y, w
        out[name] = _bins(x, y_, w_, k, shift)
    return out


def _bins(x: np.ndarray, y: np.ndarray, w: np.ndarray | None, k: int, shift: int) -> Histogram:
    """The bins of one batch: its keys hashed (one pass over the rows), then the few distinct ones sorted."""
    x = x + 0.0  # -0.0 is 0.0
    keys = order_key(x) >> np.uint64(shift)
    codes, distinct = pd.factorize(keys, sort=False)
    m = distinct.size
    per_class = np.bincount(codes * k + y, weights=w, minlength=m * k).reshape(m, k).astype(float)
    if shift == 0:
        low = high = np.empty(m)
        low[codes] = x  # one number per key
    else:
        grouped = pd.Series(x).groupby(codes, sort=False)
        low = np.empty(m)
        high = np.empty(m)
        found = grouped.min()
        low[found.index.to_numpy()] = found.to_numpy()
        found = grouped.max()
        high[found.index.to_numpy()] = found.to_numpy()
    order = np.argsort(distinct)
    return Histogram(np.asarray(distinct, dtype=np.uint64)[order], per_class[order], low[order],
                     (low if shift == 0 else high)[order])


def _reduce(keys: np.ndarray, per_class: np.ndarray, low: np.ndarray, high: np.ndarray) -> Histogram:
    """Rows of equal (sorted) keys summed: weights added, the smallest low and largest high kept."""
    if keys.size == 0:
        return Histogram(keys, per_class, low, high)
    start = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return Histogram(keys[start], np.add.reduceat(per_class, start, axis=0), np.minimum.reduceat(low, start),
                     np.maximum.reduceat(high, start))


def merge_histograms(a: dict, b: dict) -> dict:
    """The histograms of the rows of both (associative and commutative)."""
    out = dict(a)
    for name, h in b.items():
        if name not in out:
            out[name] = h
            continue
        g = out[name]
        keys = np.concatenate([g.keys, h.keys])
        order = np.argsort(keys, kind="stable")
        out[name] = _reduce(keys[order], np.concatenate([g.per_class, h.per_class])[order],
                            np.concatenate([g.low, h.low])[order], np.concatenate([g.high, h.high])[order])
    return out
