"""A :class:`TreeSpec` on weighted patterns, seen as linear quantities of the
predictions: the input of the exact search (``accel/search.py``).

Write ``yhat[i, k]`` for "pattern ``i`` is predicted class ``k``" (one class
per pattern).  Every objective and side constraint the estimator accepts is
made of sums of ``yhat`` with per-pattern coefficients:

* the objective parts ``o_j = sum_{i,k} G[i, k, j] yhat[i, k]``: one part,
  the weighted correct rows, for accuracy, balanced accuracy and sensitivity
  (``row_objective_weights``); one part per class for the worst-case accuracy,
  which is the smallest of them.  The value of a tree is
  ``(1 - lambda) * min_j o_j - lambda * b`` (eq. 7 / 11), ``b`` its branching nodes;
* the constraint quantities ``q_r = sum_{i,k} U[i, k, r] yhat[i, k]``, one per
  row ``lo_r <= q_r <= hi_r`` of formulation (11): the rows are taken from the
  side constraints themselves (``add_rows``), so the fairness rows
  ``|(N_q / g) S_p - (N_p / g) S_q| <= floor(delta N_p N_q / g)``, the recall
  and specificity floors and eq. (12) for precision are the very integers the
  MIO enforces.

A leaf that predicts ``k`` for the patterns ``D`` contributes
``sum_{i in D} G[i, k]`` and ``sum_{i in D} U[i, k]``; a tree is a partition
of the patterns into leaves, so these vectors add up over leaves and subtrees.
That additivity is what the dynamic program and its Lagrangian bound use.
The structural constraints (eq. 8 branching bound, eq. 9 feature bound,
eq. 10 minimum leaf size) are kept as numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from strongtree_core.accel.kernels import ones_of
from strongtree_core.accel.ordered import OrderedColumns, ordered_columns
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.objectives import row_objective_weights
from strongtree_core.formulation.spec import TreeSpec


@dataclass(frozen=True)
class LinearProblem:
    """The search's view of a specification.

    Attributes
    ----------
    X : ndarray of float64, shape (P, F)
        Binary features of the patterns (1 goes right).
    count : ndarray of float64, shape (P,)
        Rows behind each pattern (leaf sizes, eq. 10).
    G : ndarray of float64, shape (P, K, J)
        Objective parts per pattern and predicted class.
    U : ndarray of float64, shape (P, K, R)
        Constraint quantities per pattern and predicted class (integers).
    lo, hi : ndarray of float64, shape (R,)
        Row bounds (``-inf`` / ``inf`` where one side is free).
    row_names : tuple of str
    depth, lambda_, min_leaf, max_branching, max_features_used
        As in :class:`TreeSpec`.
    integral : bool
        Every tree's value is an integer multiple of ``unit`` (used to round bounds down).
    unit : float
    """

    X: np.ndarray
    count: np.ndarray
    G: np.ndarray
    U: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    row_names: tuple[str, ...]
    depth: int
    lambda_: float
    min_leaf: int
    max_branching: int | None
    max_features_used: int | None
    integral: bool
    unit: float
    chains: tuple[tuple[int, ...], ...] = ()

    @cached_property
    def ordered(self) -> OrderedColumns | None:
        """The features as chains of thresholds (``accel/ordered.py``), when some are."""
        if not self.chains:
            return None
        return ordered_columns(self.X, self.chains)

    @cached_property
    def V(self) -> np.ndarray:
        """Objective parts then constraint quantities per pattern and class, shape (P, K, J + R):
        what a subtree adds up to (``accel/subtrees.py``), computed once."""
        return np.concatenate([self.G, self.U], axis=2)

    @cached_property
    def ones(self) -> tuple[np.ndarray, np.ndarray]:
        """The ones of ``X`` as CSR (for the compiled kernel), computed once."""
        return ones_of(self.X)

    @property
    def n_patterns(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return int(self.G.shape[1])

    @property
    def n_parts(self) -> int:
        return int(self.G.shape[2])

    @property
    def n_rows(self) -> int:
        return int(self.U.shape[2])

    @property
    def constrained(self) -> bool:
        """Anything the plain dynamic program does not enforce by itself."""
        return self.n_rows > 0 or self.n_parts > 1 or self.max_branching is not None or self.max_features_used is not None

    def value(self, parts: np.ndarray, n_branching: int) -> float:
        """Objective of a tree with objective parts ``parts`` (J,) and ``n_branching`` branchings."""
        return (1.0 - self.lambda_) * float(np.min(parts)) - self.lambda_ * n_branching

    def feasible(self, q: np.ndarray) -> bool:
        """Constraint quantities ``q`` (R,) within their rows."""
        return bool(np.all(q >= self.lo) and np.all(q <= self.hi))

    def scores(self, alpha: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """Per-pattern, per-class gain of the Lagrangian relaxation, shape (P, K).

        ``alpha`` (J,) weighs the objective parts (a point of the simplex: the
        minimum of the parts is at most any weighted mean of them); ``nu`` (R,)
        prices the constraint quantities.
        """
        s = (1.0 - self.lambda_) * (self.G @ alpha)
        if self.n_rows:
            s = s - self.U @ nu
        return s


class _Counts:
    """Stands in for formulation (11)'s columns when a side constraint writes
    its rows: ``linear_count`` returns "columns" ``k * P + i`` of ``yhat[i, k]``."""

    def __init__(self, data: PatternData, pos_label: int | None) -> None:
        self.data = data
        self.pos_label = pos_label

    def linear_count(self, k: int, mask: np.ndarray, *, use_weight: bool = False) -> tuple[np.ndarray, np.ndarray]:
        mult = self.data.weight if use_weight else self.data.count.astype(float)
        sel = np.flatnonzero(mask)
        return int(k) * self.data.n_patterns + sel, mult[sel]


class _Rows:
    """Collects the rows a side constraint adds, as dense coefficient vectors."""

    def __init__(self, n_columns: int) -> None:
        self.n_columns = n_columns
        self.coefs: list[np.ndarray] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.names: list[str] = []

    def add(self, name: str, cols, coefs, lower, upper) -> None:
        cols = np.atleast_2d(np.asarray(cols))
        coefs = np.broadcast_to(np.atleast_2d(np.asarray(coefs, dtype=float)), cols.shape)
        lower = np.broadcast_to(np.asarray(lower, dtype=float), (cols.shape[0],))
        upper = np.broadcast_to(np.asarray(upper, dtype=float), (cols.shape[0],))
        for r in range(cols.shape[0]):
            row = np.zeros(self.n_columns)
            np.add.at(row, cols[r], coefs[r])
            self.coefs.append(row)
            self.lo.append(float(lower[r]))
            self.hi.append(float(upper[r]))
            self.names.append(name)


def linear_problem(data: PatternData, spec: TreeSpec) -> LinearProblem:
    """The objective and constraints of ``spec`` on ``data`` as linear quantities."""
    P, K = data.n_patterns, data.n_classes
    y = np.asarray(data.y)
    per_row = row_objective_weights(data, spec)
    if per_row is not None:
        G = np.zeros((P, K, 1))
        G[np.arange(P), y, 0] = per_row
        integral = bool(np.all(np.abs(per_row - np.round(per_row)) < 1e-9)) and spec.objective == "accuracy"
    else:  # worst-case accuracy: W * (correct weight of class j) / W_j, one part per present class
        class_weight = np.bincount(y, weights=data.weight, minlength=K)
        present = np.flatnonzero(class_weight > 0)
        total = float(data.weight.sum())
        G = np.zeros((P, K, present.size))
        for j, k in enumerate(present):
            rows = np.flatnonzero(y == k)
            G[rows, k, j] = total * data.weight[rows] / class_weight[k]
        integral = False
    collected = _Rows(P * K)
    counts = _Counts(data, spec.pos_label)
    for constraint in spec.side_constraints:
        constraint.add_rows(counts, collected)
    R = len(collected.coefs)
    U = np.zeros((P, K, R))
    for r, row in enumerate(collected.coefs):
        U[:, :, r] = row.reshape(K, P).T
    lam = float(spec.lambda_)
    unit = 1.0
    if integral and lam > 0:
        # (1 - lambda) * correct - lambda * b: integral in units of gcd-like steps only
        # when lambda is rational with a small denominator; keep it simple and exact.
        integral = False
    return LinearProblem(
        X=np.ascontiguousarray(data.X, dtype=np.float64),
        count=np.asarray(data.count, dtype=np.float64),
        G=G,
        U=U,
        lo=np.asarray(collected.lo, dtype=float),
        hi=np.asarray(collected.hi, dtype=float),
        row_names=tuple(collected.names),
        depth=int(spec.depth),
        lambda_=lam,
        min_leaf=int(spec.min_leaf),
        max_branching=None if spec.max_branching is None else int(spec.max_branching),
        max_features_used=None if spec.max_features_used is None else int(spec.max_features_used),
        integral=integral,
        unit=unit,
        chains=data.chains,
    )


def round_bound(problem: LinearProblem, bound: float) -> float:
    """A proven upper bound rounded down to the lattice of possible values
    (integers for unit-weight accuracy), with a margin for float sums."""
    if problem.integral and math.isfinite(bound):
        return float(math.floor(bound + 1e-7))
    return bound
