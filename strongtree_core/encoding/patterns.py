"""Identical rows collapse into weighted patterns.

Two rows with the same binary features, label, protected group and legitimate
level are indistinguishable to every formulation, so each distinct combination
becomes one *pattern* whose weight is the number (or summed sample weight) of
the rows behind it.  Every formulation takes these weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PatternData:
    """Weighted binary training patterns, the input of every formulation.

    Attributes
    ----------
    X : ndarray of uint8, shape (n_patterns, n_features)
        Binary features; 1 sends a pattern right at a node splitting on that feature.
    y : ndarray of int, shape (n_patterns,)
        Class index in ``0 .. n_classes - 1``.
    weight : ndarray of float, shape (n_patterns,)
        Summed sample weight of the rows behind each pattern (the objective's weight).
    count : ndarray of int, shape (n_patterns,)
        Number of rows behind each pattern (for leaf sizes and group sizes).
    n_classes : int
    group : ndarray of int or None, shape (n_patterns,)
        Protected-group level of each pattern (``0 .. n_groups - 1``).
    legit : ndarray of int or None, shape (n_patterns,)
        Legitimate-factor level of each pattern (conditional statistical parity).
    row_to_pattern : ndarray of int, shape (n_rows,)
        Which pattern each original row became.
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    n_classes: int
    group: np.ndarray | None = None
    legit: np.ndarray | None = None
    row_to_pattern: np.ndarray | None = None

    @property
    def n_patterns(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.count.sum())

    @property
    def integral_weights(self) -> bool:
        return bool(np.all(np.abs(self.weight - np.round(self.weight)) < 1e-9))


def collapse_patterns(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    sample_weight: np.ndarray | None = None,
    group: np.ndarray | None = None,
    legit: np.ndarray | None = None,
) -> PatternData:
    """Merge identical (features, label, group, legit) rows into weighted patterns.

    Parameters
    ----------
    X : array of 0/1, shape (n_rows, n_features)
    y : array of int, shape (n_rows,)
    n_classes : int
    sample_weight : array of float, shape (n_rows,), optional
        Defaults to 1 per row.  Rows of weight 0 still appear in ``row_to_pattern``.
    group, legit : array of int, shape (n_rows,), optional
    """
    X = np.asarray(X, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    n_rows = X.shape[0]
    weight = np.ones(n_rows) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    extra = [y[:, None]]
    if group is not None:
        extra.append(np.asarray(group, dtype=np.int64)[:, None])
    if legit is not None:
        extra.append(np.asarray(legit, dtype=np.int64)[:, None])
    key = np.hstack([X.astype(np.int64)] + extra)
    if n_rows == 0:
        uniq, first, inverse = key, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    else:
        uniq, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    # Keep patterns in order of first appearance so results are stable.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inverse = rank[inverse]
    first = first[order]
    w = np.bincount(inverse, weights=weight, minlength=first.size)
    count = np.bincount(inverse, minlength=first.size).astype(np.int64)
    return PatternData(
        X=X[first],
        y=y[first],
        weight=w,
        count=count,
        n_classes=int(n_classes),
        group=None if group is None else np.asarray(group, dtype=np.int64)[first],
        legit=None if legit is None else np.asarray(legit, dtype=np.int64)[first],
        row_to_pattern=inverse,
    )
