"""Thresholds of a continuous column chosen from the training data.

A split ``x <= t`` on a column only matters through the training rows it
sends each way, so every threshold strictly between two neighbouring
distinct training values ``u_i < u_{i+1}`` is the same split: a column with
``m`` distinct values has ``m - 1`` distinct cuts ("gaps"), and a tree over
all of them is as good as a tree over every real threshold.

When a column has more gaps than the budget (``max_thresholds``), the cuts
are chosen in this order:

1. CART's cuts (scikit-learn's tree of the same depth fitted on the raw
   columns), always, even beyond the budget: CART's tree is then one of the
   trees the search may return, so the best tree is never worse than CART's
   on the training rows (under a short time limit CART may be grown on a
   sample of the rows: :mod:`~strongtree_core.encoding.reference`);
2. boundary points (Fayyad and Irani 1992): a gap is not a boundary when
   every row of both neighbouring values has one and the same class.  For a
   split just above two leaves an optimal threshold always lies on a boundary
   (moving it across rows of one class changes the count one way only);
   higher splits can need other gaps, which is why every gap is kept when the
   budget allows;
3. among the boundary points, those nearest to the ``k / (s + 1)`` quantiles of
   the rows' weight, ``s`` the budget left, so the cuts follow the data.

Each cut is moved to a readable number strictly inside its gap
(:func:`~strongtree_core.encoding.features.readable_cut`).
"""

from __future__ import annotations

import numpy as np

from strongtree_core.encoding.features import readable_cut

#: Thresholds per continuous column the estimator chooses from the data unless told otherwise.
DEFAULT_MAX_THRESHOLDS = 16


def value_classes(values: np.ndarray, target: np.ndarray, weight: np.ndarray | None, n_classes: int):
    """The distinct values of a column and their class weights.

    Parameters
    ----------
    values : ndarray of float, shape (n,)
        Finite training values.
    target : ndarray of int, shape (n,)
        Class index of each row.
    weight : ndarray of float, shape (n,), optional
        Row weights (rows of weight 0 are absent).

    Returns
    -------
    distinct : ndarray of float, shape (m,)
    per_class : ndarray of float, shape (m, n_classes)
    inverse : ndarray of int, shape (n,)
        Position of each row's value in ``distinct``.
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    w = np.ones(values.size) if weight is None else np.asarray(weight, dtype=float)
    per_class = np.bincount(inverse * n_classes + np.asarray(target, dtype=np.int64), weights=w,
                            minlength=distinct.size * n_classes).reshape(distinct.size, n_classes)
    return distinct, per_class, inverse


def boundary_gaps(per_class: np.ndarray) -> np.ndarray:
    """Boolean (m - 1,): gap ``i`` (between values ``i`` and ``i + 1``) is a boundary point,
    i.e. not both neighbouring values pure of the same class."""
    if per_class.shape[0] < 2:
        return np.zeros(0, dtype=bool)
    present = per_class > 0
    pure = present.sum(axis=1) == 1
    cls = np.argmax(per_class, axis=1)
    same = pure[:-1] & pure[1:] & (cls[:-1] == cls[1:])
    return ~same


def spread_gaps(candidates: np.ndarray, cumulative: np.ndarray, n: int, total: float | None = None) -> np.ndarray:
    """``n`` of the ``candidates`` (sorted gap indices), spread over the weight:
    the candidates nearest to the median, then to the quartiles, the octiles, ...
    (``cumulative[i]`` is the weight of the values up to gap ``i``, ``total`` all
    of it, by default ``cumulative[-1]``).  The choice
    for ``n`` is part of the choice for ``n + 1``, so more thresholds never
    lose a cut."""
    if n <= 0 or candidates.size == 0:
        return np.zeros(0, dtype=np.int64)
    if candidates.size <= n:
        return candidates
    if total is None:
        total = float(cumulative[-1]) if cumulative.size else 1.0
    at = cumulative[candidates]
    chosen: list[int] = []
    seen = np.zeros(candidates.size, dtype=bool)
    level = 1
    while len(chosen) < n:
        targets = total * (2 * np.arange(2 ** (level - 1)) + 1) / 2 ** level
        pos = np.clip(np.searchsorted(at, targets), 1, candidates.size - 1)
        nearest = np.where(targets - at[pos - 1] <= at[pos] - targets, pos - 1, pos)
        for j in nearest:
            if not seen[j]:
                seen[j] = True
                chosen.append(int(j))
                if len(chosen) == n:
                    break
        if 2 ** level > 4 * candidates.size:  # finer levels name no new candidate: take the rest in order
            chosen += [int(j) for j in np.flatnonzero(~seen)[: n - len(chosen)]]
        level += 1
    return np.sort(candidates[np.array(chosen, dtype=np.int64)])


def choose_gaps(per_class: np.ndarray, budget: int, required: np.ndarray | None = None) -> np.ndarray:
    """The gap indices kept for a column (sorted), following the module docstring.

    Parameters
    ----------
    per_class : ndarray (m, K)
        Class weights of each distinct value (:func:`value_classes`).
    budget : int
        Largest number of cuts chosen besides the required ones.
    required : ndarray of int, optional
        Gaps always kept (CART's).
    """
    m = per_class.shape[0]
    if m < 2:
        return np.zeros(0, dtype=np.int64)
    required = np.zeros(0, dtype=np.int64) if required is None else np.unique(np.asarray(required, dtype=np.int64))
    if m - 1 <= max(budget, required.size):
        return np.arange(m - 1, dtype=np.int64)
    candidates = np.flatnonzero(boundary_gaps(per_class))
    candidates = candidates[~np.isin(candidates, required)]
    cumulative = np.cumsum(per_class.sum(axis=1))
    chosen = spread_gaps(candidates, cumulative[:-1], budget - required.size, float(cumulative[-1]))
    return np.union1d(required, chosen).astype(np.int64)


def gap_cuts(distinct: np.ndarray, gaps: np.ndarray) -> tuple[float, ...]:
    """The readable cut of each gap."""
    return tuple(readable_cut(float(distinct[i]), float(distinct[i + 1])) for i in gaps)
