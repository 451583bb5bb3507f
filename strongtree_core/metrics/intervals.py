"""Confidence intervals for group rates, their differences and a notion's gap.

Every function is vectorised over arrays of counts ``k`` (rows of the cohort
predicted positive) and ``n`` (rows of the cohort: the rate's denominator).

Rates
-----
``method="wilson"`` (default): the Wilson score interval, the set of ``p`` with
``|k/n - p| <= z sqrt(p (1 - p) / n)``, ``z`` the ``1 - alpha/2`` normal quantile:

    centre = (k + z^2/2) / (n + z^2),   half = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4).

It is never empty or degenerate (``k = 0`` gives ``[0, z^2/(n + z^2)]``) and its
coverage stays close to nominal down to small ``n`` (Brown, Cai and DasGupta 2001);
it is approximate, not guaranteed.  ``method="exact"``: the Clopper-Pearson
interval from the beta quantiles, whose coverage is at least nominal for every
``p`` and ``n`` (it inverts two exact binomial tests).

Differences of two independent rates
------------------------------------
``method="wilson"``: Newcombe's hybrid score interval (Newcombe 1998, method 10),
the MOVER construction with Wilson components ``(l_a, u_a)``, ``(l_b, u_b)`` at the
same level, ``d = p_a - p_b``:

    L = d - sqrt((p_a - l_a)^2 + (u_b - p_b)^2),   U = d + sqrt((u_a - p_a)^2 + (p_b - l_b)^2).

``method="exact"``: the same recovery with Clopper-Pearson components (not a
finite-sample guarantee either; :func:`difference_bounds_exact` is one).

A notion's gap
--------------
A notion compares K differences ``d_1 .. d_K`` (every pair of groups with rows in
every cohort: one cohort for statistical parity, true- and false-positive rates for
equalized odds, each legitimate level for conditional statistical parity); its gap
is ``G = max_k |d_k|``.  :func:`gap_interval` gives each difference an interval
``[l_k, u_k]`` at level ``1 - alpha/K`` (Bonferroni), maps it to an interval of
``|d_k|``,

    a_k = 0 if l_k <= 0 <= u_k else min(|l_k|, |u_k|),    b_k = max(|l_k|, |u_k|),

and returns ``[max_k a_k, max_k b_k]``.

*Why this covers G with probability at least 1 - alpha (when each difference
interval has its nominal coverage).*  By the union bound, the event E that every
``d_k`` lies in its ``[l_k, u_k]`` has probability at least ``1 - K alpha/K = 1 - alpha``.
On E, ``|d_k|`` lies in ``[a_k, b_k]`` for every k (the absolute value of a number in
an interval lies between the smallest and largest absolute value the interval
holds, and the smallest is 0 when the interval holds 0).  The maximum is
non-decreasing in each argument, so on E
``max_k a_k <= max_k |d_k| = G <= max_k b_k``.  Hence
``P(G in [max a_k, max b_k]) >= P(E) >= 1 - alpha``.  The argument needs no
independence between the K differences (they share groups); the only
approximation is that of each difference's interval, exact (>= nominal) only for
:func:`difference_bounds_exact`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import beta, norm

IntervalMethod = Literal["wilson", "exact"]
INTERVAL_METHODS: tuple[str, ...] = ("wilson", "exact")

#: Error texts (tests assert them).
BAD_CONFIDENCE = "confidence must be a number strictly between 0 and 1 (e.g. 0.95), got {value!r}"
BAD_INTERVAL_METHOD = "unknown interval method {method!r}: choose 'wilson' (score intervals) or 'exact' (Clopper-Pearson)"
BAD_COUNTS = "counts must satisfy 0 <= k <= n: got k={k!r}, n={n!r}"


def check_confidence(confidence) -> float:
    """``confidence`` as a float in (0, 1), or a ValueError that says so."""
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, (int, float, np.floating, np.integer)):
        raise ValueError(BAD_CONFIDENCE.format(value=confidence))
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ValueError(BAD_CONFIDENCE.format(value=confidence))
    return value


def _check_method(method: str) -> None:
    if method not in INTERVAL_METHODS:
        raise ValueError(BAD_INTERVAL_METHOD.format(method=method))


def _counts(k, n) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(k < 0) or np.any(k > n + 1e-9):
        bad = np.flatnonzero(np.broadcast_to((k < 0) | (k > n + 1e-9), np.broadcast(k, n).shape).ravel())[0]
        kb, nb = np.broadcast_arrays(k, n)
        raise ValueError(BAD_COUNTS.format(k=float(kb.ravel()[bad]), n=float(nb.ravel()[bad])))
    return k, n


def wilson_interval(k, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilson score interval of a proportion; NaN where ``n == 0``.

    Parameters
    ----------
    k, n : array-like of float, broadcastable
        Successes and trials (real numbers are allowed: effective counts).
    confidence : float in (0, 1)

    Returns
    -------
    low, high : ndarray

    Examples
    --------
    >>> from strongtree_core.metrics import wilson_interval
    >>> low, high = wilson_interval(7, 10)
    >>> round(float(low), 3), round(float(high), 3)
    (0.397, 0.892)
    """
    k, n = _counts(k, n)
    z = norm.ppf(0.5 + check_confidence(confidence) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * np.sqrt(np.maximum(k * (n - k) / n, 0.0) + z * z / 4)
        low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k >= n, 1.0, np.clip(centre + half, 0.0, 1.0))
    empty = n <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def clopper_pearson_interval(k, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper-Pearson (exact) interval; coverage >= ``confidence`` for every p; NaN where ``n == 0``.

    Examples
    --------
    >>> from strongtree_core.metrics import clopper_pearson_interval
    >>> low, high = clopper_pearson_interval(7, 10)
    >>> round(float(low), 3), round(float(high), 3)
    (0.348, 0.933)
    """
    k, n = _counts(k, n)
    alpha = 1.0 - check_confidence(confidence)
    return _cp_lower(k, n, alpha / 2), _cp_upper(k, n, alpha / 2)


def _cp_lower(k: np.ndarray, n: np.ndarray, alpha) -> np.ndarray:
    """One-sided lower Clopper-Pearson bound: P(p < bound) <= alpha for every p."""
    with np.errstate(invalid="ignore", divide="ignore"):
        low = beta.ppf(alpha, np.maximum(k, 1e-300), np.maximum(n - k + 1, 1e-300))
    low = np.where(k <= 0, 0.0, low)
    return np.where(n <= 0, np.nan, low)


def _cp_upper(k: np.ndarray, n: np.ndarray, alpha) -> np.ndarray:
    """One-sided upper Clopper-Pearson bound: P(p > bound) <= alpha for every p."""
    with np.errstate(invalid="ignore", divide="ignore"):
        high = beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1e-300))
    high = np.where(k >= n, 1.0, high)
    return np.where(n <= 0, np.nan, high)


def proportion_interval(k, n, confidence: float = 0.95, method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Interval of a proportion by ``method`` ("wilson" or "exact")."""
    _check_method(method)
    return (wilson_interval if method == "wilson" else clopper_pearson_interval)(k, n, confidence)


def difference_interval(k_a, n_a, k_b, n_b, confidence: float = 0.95,
                        method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Interval of ``k_a/n_a - k_b/n_b`` for independent groups (MOVER, see the module docstring).

    Returns
    -------
    low, high : ndarray, within [-1, 1]; NaN where a denominator is 0.

    Examples
    --------
    >>> from strongtree_core.metrics import difference_interval
    >>> low, high = difference_interval(7, 10, 3, 10)
    >>> round(float(low), 3), round(float(high), 3)
    (-0.029, 0.672)
    """
    _check_method(method)
    k_a, n_a = _counts(k_a, n_a)
    k_b, n_b = _counts(k_b, n_b)
    l_a, u_a = proportion_interval(k_a, n_a, confidence, method)
    l_b, u_b = proportion_interval(k_b, n_b, confidence, method)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a, p_b = k_a / n_a, k_b / n_b
        d = p_a - p_b
        low = d - np.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2)
        high = d + np.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def difference_bounds_exact(k_a, n_a, k_b, n_b, alpha) -> tuple[np.ndarray, np.ndarray]:
    """One-sided bounds of ``d = p_a - p_b`` with a finite-sample guarantee.

    ``upper = U_a - L_b`` and ``lower = L_a - U_b`` from one-sided Clopper-Pearson
    bounds at level ``alpha/2`` each, so ``P(d > upper) <= P(p_a > U_a) + P(p_b < L_b)
    <= alpha`` for every ``p_a, p_b`` (and likewise ``P(d < lower) <= alpha``); no
    independence between the groups is needed.
    """
    k_a, n_a = _counts(k_a, n_a)
    k_b, n_b = _counts(k_b, n_b)
    half = np.asarray(alpha, dtype=float) / 2
    upper = _cp_upper(k_a, n_a, half) - _cp_lower(k_b, n_b, half)
    lower = _cp_lower(k_a, n_a, half) - _cp_upper(k_b, n_b, half)
    return lower, upper


def absolute_interval(low, high) -> tuple[np.ndarray, np.ndarray]:
    """Where ``|d|`` lies when ``d`` lies in ``[low, high]``."""
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    straddles = (low <= 0) & (high >= 0)
    a = np.where(straddles, 0.0, np.minimum(np.abs(low), np.abs(high)))
    b = np.maximum(np.abs(low), np.abs(high))
    return a, b


@dataclass(frozen=True)
class GapInterval:
    """A notion's gap and its simultaneous interval.

    Attributes
    ----------
    gap : float
        ``max_k |d_k|`` (NaN when nothing is compared).
    low, high : float
        The interval of the gap (see the module docstring).
    n_differences : int
        K, the differences compared (each interval at level ``1 - alpha/K``).
    confidence : float
    method : str
    """

    gap: float
    low: float
    high: float
    n_differences: int
    confidence: float
    method: str


def gap_interval(k_a, n_a, k_b, n_b, confidence: float = 0.95, method: str = "wilson") -> GapInterval:
    """Interval of ``max_k |k_a/n_a - k_b/n_b|`` over the K differences given (one entry per difference).

    The arrays hold, for each compared difference k, the counts of its two
    groups; each difference's interval is at level ``1 - (1 - confidence)/K``.

    Examples
    --------
    >>> from strongtree_core.metrics import gap_interval
    >>> gap = gap_interval([7], [10], [3], [10])
    >>> type(gap).__name__
    'GapInterval'
    """
    confidence = check_confidence(confidence)
    _check_method(method)
    k_a, n_a, k_b, n_b = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (k_a, n_a, k_b, n_b))
    K = int(k_a.size)
    if K == 0:
        nan = float("nan")
        return GapInterval(nan, nan, nan, 0, confidence, method)
    level = 1.0 - (1.0 - confidence) / K
    low, high = difference_interval(k_a, n_a, k_b, n_b, level, method)
    a, b = absolute_interval(low, high)
    gap = np.abs(k_a / n_a - k_b / n_b)
    return GapInterval(float(gap.max()), float(a.max()), float(b.max()), K, confidence, method)


def gap_interval_many(k_a, n_a, k_b, n_b, confidence: float = 0.95,
                      method: str = "wilson") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`gap_interval` for many draws at once: arrays of shape (draws, K); returns (gap, low, high) per draw."""
    confidence = check_confidence(confidence)
    k_a, n_a, k_b, n_b = (np.asarray(v, dtype=float) for v in (k_a, n_a, k_b, n_b))
    K = k_a.shape[-1]
    level = 1.0 - (1.0 - confidence) / K
    low, high = difference_interval(k_a, n_a, k_b, n_b, level, method)
    a, b = absolute_interval(low, high)
    gap = np.abs(k_a / n_a - k_b / n_b)
    return gap.max(axis=-1), a.max(axis=-1), b.max(axis=-1)
