"""The Lagrangian relaxation of a constrained tree problem, and its dual.

With the quantities of :class:`~strongtree_core.accel.problem.LinearProblem`,
a tree ``T`` has objective parts ``p(T)`` (J,), constraint quantities ``q(T)``
(R,) and ``b(T)`` branching nodes, and the problem is

    max_T (1 - lambda) min_j p_j(T) - lambda b(T)
    s.t.  lo <= q(T) <= hi,   b(T) <= B.

For ``alpha`` in the simplex (J,) and prices ``mu_hi, mu_lo, mu_b >= 0``

    L(y) = max_T (1 - lambda) alpha . p(T) + mu_hi . (hi - q(T)) + mu_lo . (q(T) - lo)
                 + mu_b (B - b(T)) - lambda b(T)

is at least the value of every feasible tree (each added term is >= 0 there,
and ``min_j p_j <= alpha . p``), so ``L(y)`` is an upper bound on the
optimum for every ``y``.  The inner maximum is a tree problem with a gain
per pattern and class, ``s = (1 - lambda) G alpha - U (mu_hi - mu_lo)``, and a
penalty ``lambda + mu_b`` per branching: the dynamic program solves it
exactly.  ``L`` is convex and piecewise linear in ``y``, one piece per tree;
:func:`optimize_dual` minimizes it by a cutting-plane method with a trust
region (each solved tree adds its piece), first with trees of depth <= 2
(cheap, and their pieces stay valid under-estimates at any depth), then at
the full depth.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from strongtree_core.accel.dp import Deadline, GainDP, SearchStopped, Tree, tree_branchings
from strongtree_core.accel.problem import LinearProblem


#: Largest trust region, in units of a price that moves one pattern's gain by its largest objective weight.
MAX_RADIUS = 1e4


@dataclass(frozen=True)
class Prices:
    """A point ``y`` of the dual: objective weights and constraint prices."""

    alpha: np.ndarray  # (J,)
    mu_hi: np.ndarray  # (R,)
    mu_lo: np.ndarray  # (R,)
    mu_b: float = 0.0

    def theta(self, problem: LinearProblem) -> np.ndarray:
        """Price of each quantity (J objective parts, then R constraint quantities)."""
        return np.concatenate([(1.0 - problem.lambda_) * self.alpha, -(self.mu_hi - self.mu_lo)])

    def scores(self, problem: LinearProblem) -> np.ndarray:
        return problem.scores(self.alpha, self.mu_hi - self.mu_lo)

    def penalty(self, problem: LinearProblem) -> float:
        return problem.lambda_ + self.mu_b

    def constant(self, problem: LinearProblem) -> float:
        """The terms of ``L`` that do not depend on the tree."""
        c = 0.0
        hi_ok = np.isfinite(problem.hi)
        lo_ok = np.isfinite(problem.lo)
        c += float(self.mu_hi[hi_ok] @ problem.hi[hi_ok])
        c -= float(self.mu_lo[lo_ok] @ problem.lo[lo_ok])
        if problem.max_branching is not None:
            c += self.mu_b * problem.max_branching
        return c


@dataclass(frozen=True)
class TreeQuantities:
    """What a tree adds up to on the patterns."""

    tree: Tree
    parts: np.ndarray
    q: np.ndarray
    n_branching: int
    features: frozenset


def measure_tree(problem: LinearProblem, tree: Tree, leaves: list | None = None) -> TreeQuantities:
    """Objective parts, constraint quantities and structure of ``tree``; with a list
    ``leaves``, the patterns of each leaf are appended to it, rightmost leaf first."""
    P = problem.n_patterns
    parts = np.zeros(problem.n_parts)
    q = np.zeros(problem.n_rows)
    feats: set[int] = set()
    stack = [(tree, np.arange(P))]
    while stack:
        t, idx = stack.pop()
        if isinstance(t, tuple):
            feats.add(int(t[0]))
            right = problem.X[idx, t[0]] > 0.5
            stack += [(t[1], idx[~right]), (t[2], idx[right])]
        else:
            if leaves is not None:
                leaves.append(idx)
            parts += problem.G[idx, t].sum(axis=0)
            if problem.n_rows:  # no constraint row: nothing to add up
                q += problem.U[idx, t].sum(axis=0)
    return TreeQuantities(tree, parts, q, tree_branchings(tree), frozenset(feats))


def leaf_sizes_ok(problem: LinearProblem, tree: Tree) -> bool:
    """Every leaf holds at least ``min_leaf`` rows (eq. 10)."""
    if problem.min_leaf <= 0:
        return True
    stack = [(tree, np.arange(problem.n_patterns))]
    while stack:
        t, idx = stack.pop()
        if isinstance(t, tuple):
            right = problem.X[idx, t[0]] > 0.5
            stack += [(t[1], idx[~right]), (t[2], idx[right])]
        elif problem.count[idx].sum() < problem.min_leaf:
            return False
    return True


def satisfies(problem: LinearProblem, m: TreeQuantities) -> bool:
    """The tree meets every constraint the search enforces (leaf sizes aside)."""
    if problem.max_branching is not None and m.n_branching > problem.max_branching:
        return False
    if problem.max_features_used is not None and len(m.features) > problem.max_features_used:
        return False
    return problem.feasible(m.q)


@dataclass
class DualResult:
    """The best prices found and what was learned on the way."""

    prices: Prices
    bound: float  # L(prices), an upper bound on the optimum
    n_solves: int
    trees: list[TreeQuantities] = field(default_factory=list)
    stopped: bool = False


def _cut(problem: LinearProblem, m: TreeQuantities) -> tuple[np.ndarray, float]:
    """The piece of L belonging to one tree: ``a . y + c`` with y = (alpha, mu_hi, mu_lo, mu_b)."""
    lam = problem.lambda_
    hi = np.where(np.isfinite(problem.hi), problem.hi, 0.0)
    lo = np.where(np.isfinite(problem.lo), problem.lo, 0.0)
    B = problem.max_branching if problem.max_branching is not None else 0
    a = np.concatenate([(1.0 - lam) * m.parts, hi - m.q, m.q - lo, [B - m.n_branching]])
    return a, -lam * m.n_branching


def optimize_dual(
    problem: LinearProblem,
    deadline: Deadline,
    *,
    max_solves: int = 60,
    full_depth_solves: int = 12,
    seconds: float = math.inf,
    feasibility: bool = False,
    on_tree: Callable[[TreeQuantities], None] | None = None,
    on_bound: Callable[[float], None] | None = None,
    enough: Callable[[], bool] | None = None,
) -> DualResult:
    """Minimize ``L`` over the prices (see the module docstring).

    ``on_tree`` sees every tree the dynamic program returns (to keep the
    feasible ones); ``on_bound`` every proven bound ``L(y)`` at full depth;
    ``enough()`` true ends the search (an incumbent already meets the bound).
    With ``feasibility``, the objective is left out (``alpha = 0``; pass a
    problem with ``lambda_ = 0``) and the prices are scaled to sum to one (in
    units of the largest gain): then ``L(y) = max_T y . slack(T)``, which is at
    least 0 for a feasible tree, so a value below 0 proves that no tree meets
    the constraints, and the prices point at the constraints that are hard to meet.

    The prices are first tuned on trees of depth 2, 3, ... (cheaper, and
    their pieces stay valid under-estimates of ``L`` at any larger depth),
    then at the full depth; the shallower stages share half of ``seconds``.
    Stops early at the deadline with the best prices so far.
    """
    J, R = problem.n_parts, problem.n_rows
    hi_free = ~np.isfinite(problem.hi)
    lo_free = ~np.isfinite(problem.lo)
    has_b = problem.max_branching is not None
    n = J + 2 * R + 1
    # Scale of each price: one unit moves the gain of a pattern by at most the
    # largest objective gain of a pattern.
    gain_scale = max(float(np.abs(problem.G).max()) if problem.G.size else 1.0, 1e-12)
    row_scale = np.array([max(float(np.abs(problem.U[:, :, r]).max()), 1e-12) for r in range(R)])
    cap = np.concatenate([np.ones(J), gain_scale / row_scale, gain_scale / row_scale, [gain_scale]])
    upper = np.full(n, np.inf)
    upper[J:J + R][hi_free] = 0.0
    upper[J + R:J + 2 * R][lo_free] = 0.0
    if not has_b:
        upper[-1] = 0.0
    # The prices are normalized: alpha in the simplex, or (feasibility) the scaled prices sum to one.
    eq = np.zeros(n)
    if feasibility:
        upper[:J] = 0.0
        eq[J:] = np.where(upper[J:] > 0, 1.0 / cap[J:], 0.0)
    else:
        eq[:J] = 1.0

    def unpack(y: np.ndarray) -> Prices:
        return Prices(y[:J].copy(), y[J:J + R].copy(), y[J + R:J + 2 * R].copy(), float(y[-1]))

    cuts_a: list[np.ndarray] = []
    cuts_c: list[float] = []
    trees: list[TreeQuantities] = []
    n_solves = 0

    def evaluate(y: np.ndarray, depth: int) -> float:
        nonlocal n_solves
        prices = unpack(y)
        dp = GainDP(problem.X, problem.count, prices.scores(problem), prices.penalty(problem), problem.min_leaf, deadline,
                    problem.ones, problem.ordered)
        value, tree = dp.exact(np.arange(problem.n_patterns), depth)
        n_solves += 1
        if not math.isfinite(value):
            return math.inf  # no tree keeps every leaf at min_leaf rows
        m = measure_tree(problem, tree)
        trees.append(m)
        if on_tree is not None:
            on_tree(m)
        a, c = _cut(problem, m)
        cuts_a.append(a)
        cuts_c.append(c)
        return value + prices.constant(problem)

    y0 = np.zeros(n)
    if feasibility:
        active = np.flatnonzero(eq > 0)
        if active.size == 0:
            return DualResult(unpack(y0), 0.0, 0, [], False)
        y0[active] = 1.0 / (active.size * eq[active])
    else:
        y0[:J] = 1.0 / J
    best_y, best_full = y0, math.inf
    stopped = False
    t_start = time.perf_counter()
    stages = list(range(min(problem.depth, 2), problem.depth + 1))
    try:
        for stage, depth in enumerate(stages):
            at_full = depth == problem.depth
            budget = full_depth_solves if (at_full and problem.depth > 2) else max_solves
            # shallow stages: an equal share of half the time; full depth: what is left
            stage_end = t_start + (seconds if at_full else seconds * 0.5 * (stage + 1) / max(1, len(stages) - 1))
            center = best_y
            f_center = evaluate(center, depth)
            if at_full:
                best_full = f_center
                if on_bound is not None and math.isfinite(f_center):
                    on_bound(f_center)
            radius = 1.0
            for _ in range(budget):
                deadline.check()
                if at_full and enough is not None and enough():
                    break
                if time.perf_counter() > stage_end:
                    break
                y, model = _master(np.array(cuts_a), np.array(cuts_c), eq, center, radius * cap, upper)
                if y is None:
                    break
                if f_center - model <= 1e-7 * max(1.0, abs(f_center)):
                    if radius >= MAX_RADIUS:
                        break
                    radius *= 4  # the model is flat in the box: look further
                    continue
                f_y = evaluate(y, depth)
                if at_full and f_y < best_full:
                    best_full = f_y
                    best_y = y
                    if on_bound is not None:
                        on_bound(f_y)
                if f_y <= f_center - 0.1 * (f_center - model):
                    center, f_center = y, f_y
                    radius = min(radius * 2, MAX_RADIUS)
                else:
                    radius = max(radius / 2, 1e-4)
            if not at_full:
                best_y = center
    except SearchStopped:
        stopped = True
    if not math.isfinite(best_full):
        best_y = y0
    return DualResult(unpack(best_y), best_full, n_solves, trees, stopped)


def _master(A: np.ndarray, c: np.ndarray, eq: np.ndarray, center: np.ndarray, radius: np.ndarray, upper: np.ndarray):
    """Minimize the cutting-plane model ``max_t A_t . y + c_t`` over the box
    ``|y - center| <= radius`` within the domain (``y >= 0``, ``y <= upper``,
    ``eq . y = 1``: the normalization of the prices)."""
    n = A.shape[1]
    normalized = eq > 0
    lo = np.where(normalized, 0.0, np.maximum(0.0, center - radius))
    hi = np.where(normalized, np.minimum(upper, np.where(eq > 0, 1.0 / np.where(eq > 0, eq, 1.0), 0.0)),
                  np.minimum(upper, center + radius))
    hi = np.maximum(hi, lo)
    # variables (y, z): minimize z  s.t.  A y - z <= -c
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    A_ub = np.hstack([A, -np.ones((A.shape[0], 1))])
    A_eq = np.zeros((1, n + 1))
    A_eq[0, :n] = eq
    from strongtree_core.highs_lp import minimize  # here: a search that never needs the dual's cutting planes never loads HiGHS

    x = minimize(cost, A_ub, -c, A_eq, np.ones(1), np.append(lo, -np.inf), np.append(hi, np.inf))
    if x is None:
        return None, None
    y = into_domain(x[:n], lo, hi, eq)
    return (None, None) if y is None else (y, float(x[-1]))


def into_domain(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, eq: np.ndarray) -> np.ndarray | None:
    """``y`` moved into ``lo <= y <= hi``, ``eq . y = 1``: the LP meets its bounds and rows only within the
    solver's tolerance (answers up to 3.2e-4 outside their bounds were seen), and ``L`` is an upper bound at
    every point of the domain, and only there: a price a little below 0, or above 0 on a side a row does not
    have, would make it no bound. Clipped to the bounds, then the normalized prices (``eq > 0``) rescaled
    (``hi`` of those is 0 or above the scaled value: the domain's ``upper`` is 0 or infinite). None when
    nothing normalized is left above 0."""
    y = np.clip(y, lo, hi)
    normalized = eq > 0
    total = float(eq @ y)
    if normalized.any():
        if not total > 0:
            return None
        y[normalized] /= total
    return y
