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
    chains : tuple of tuple of int
        Features that are thresholds of one raw column, lowest threshold first
        (``x <= t_0``, ``x <= t_1``, ...: each one's rows are among the next one's);
        the exact search counts such features from histograms
        (``accel/ordered.py``).  Empty when unknown.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> type(data).__name__, data.n_rows, data.n_patterns
    ('PatternData', 6, 5)
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    n_classes: int
    group: np.ndarray | None = None
    legit: np.ndarray | None = None
    row_to_pattern: np.ndarray | None = None
    chains: tuple[tuple[int, ...], ...] = ()

    @property
    def n_patterns(self) -> int:
        """How many distinct patterns (rows of ``X``)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """How many binary features (columns of ``X``)."""
        return int(self.X.shape[1])

    @property
    def n_rows(self) -> int:
        """How many table rows the patterns stand for (the sum of ``count``)."""
        return int(self.count.sum())

    @property
    def integral_weights(self) -> bool:
        """Whether every pattern's weight is a whole number (to within 1e-9)."""
        return bool(np.all(np.abs(self.weight - np.round(self.weight)) < 1e-9))


def _unique_rows(X: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First row of each distinct (X row, extra row), and which one every row is.

    The 0/1 features are packed 64 to a word, so a row is a few integers and
    one ``lexsort`` over those columns groups identical rows (``np.unique``
    with ``axis=0`` compares whole rows and took 16 s on a million rows).
    """
    n = X.shape[0]
    packed = np.packbits(X.astype(bool), axis=1)
    width = -(-packed.shape[1] // 8) * 8
    if width:
        padded = np.zeros((n, width), dtype=np.uint8)  # whole words: zero bits after the last feature
        padded[:, : packed.shape[1]] = packed
        packed = padded
        words = packed.view(">u8").astype(np.uint64)  # (n, width / 8), big-endian keeps the bit order
    else:
        words = np.zeros((n, 0), dtype=np.uint64)
    columns = [extra[:, j].astype(np.int64) for j in range(extra.shape[1])] + [words[:, j] for j in range(words.shape[1])]
    order = np.lexsort(columns[::-1]) if columns else np.arange(n)
    new = np.ones(n, dtype=bool)
    for col in columns:
        s = col[order]
        new[1:] &= s[1:] == s[:-1]
    new = ~new
    new[0] = True
    group_of_sorted = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group_of_sorted
    # first row of each group: stable order keeps the smallest row index first
    first = order[new]
    return first, inverse


def collapse_patterns(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    sample_weight: np.ndarray | None = None,
    group: np.ndarray | None = None,
    legit: np.ndarray | None = None,
    chains: tuple[tuple[int, ...], ...] = (),
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
    chains : tuple of tuple of int, optional
        Thresholds of one column, lowest first (:attr:`PatternData.chains`).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> data.n_rows, data.n_patterns
    (6, 5)
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
    if n_rows == 0:
        first, inverse = np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    else:
        first, inverse = _unique_rows(X, np.hstack(extra))
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
        chains=tuple(tuple(int(f) for f in chain) for chain in chains),
    )


def restrict_features(data: PatternData, features: np.ndarray) -> tuple[PatternData, np.ndarray]:
    """The patterns seen through ``features`` only (sorted indices of ``data``'s
    columns): patterns that now agree on every kept feature (and label, group,
    legitimate level) merge, their weights and row counts added.

    Returns the merged data (its chains re-indexed to the kept features) and,
    for every pattern of ``data``, the merged pattern it became.
    """
    features = np.asarray(features, dtype=np.int64)
    X = data.X[:, features]
    extra = [np.asarray(data.y, dtype=np.int64)[:, None]]
    for codes in (data.group, data.legit):
        if codes is not None:
            extra.append(np.asarray(codes, dtype=np.int64)[:, None])
    if data.n_patterns == 0:
        first, inverse = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        first, inverse = _unique_rows(X, np.hstack(extra))
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inverse = rank[inverse]
    first = first[order]
    where = {int(f): j for j, f in enumerate(features)}
    chains = tuple(kept for kept in (tuple(where[f] for f in chain if f in where) for chain in data.chains)
                   if len(kept) > 1)
    merged = PatternData(
        X=np.ascontiguousarray(X[first]),
        y=np.asarray(data.y)[first],
        weight=np.bincount(inverse, weights=data.weight, minlength=first.size),
        count=np.bincount(inverse, weights=data.count, minlength=first.size).round().astype(np.int64),
        n_classes=data.n_classes,
        group=None if data.group is None else np.asarray(data.group)[first],
        legit=None if data.legit is None else np.asarray(data.legit)[first],
        row_to_pattern=None,
        chains=chains,
    )
    return merged, inverse
