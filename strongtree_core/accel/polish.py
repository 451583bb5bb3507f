"""A feasible tree improved one subtree at a time: the incumbent's local search.

The branch-and-bound (``accel/search.py``) meets feasible trees in the order of
their *relaxed* value, which under constraints such as conditional statistical
parity can be far from their value: on German credit at depth 4 it held a tree
of 552 correct rows for minutes while trees of 569 existed.  This module looks
near the incumbent instead.  For each node of the tree with at most two levels
below it (or a leaf with room for two), every subtree of depth <= 2 that would
do better there is listed (``accel/subtrees.py``, the same lists the
branch-and-bound completes its paths with), and the best one with which the
*whole* tree keeps every constraint row (the rest of the tree's quantities
plus the subtree's, within ``lo`` .. ``hi``), its bound on branching nodes
and on features, and its leaf sizes, replaces the old subtree.  The caller
repeats until no node improves.

Nothing here bounds the optimum: it finds better incumbents, which the
branch-and-bound then uses to prune.  Only for one objective part (accuracy,
balanced accuracy, sensitivity: the value is linear in the subtree's
quantities); the worst-case accuracy is left to the search.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from strongtree_core.accel.dp import Deadline, GainDP, Tree, tree_branchings
from strongtree_core.accel.lagrange import TreeQuantities, leaf_sizes_ok, measure_tree, satisfies
from strongtree_core.accel.problem import LinearProblem
from strongtree_core.accel.subtrees import subtree_list

#: Largest node, in patterns x features^2 (the cost of its list), that is looked at.
MAX_NODE_WORK = 200_000_000
#: Candidates of one list whose whole tree is checked (the list is best first).
MAX_CHECKED = 64


def applies(problem: LinearProblem) -> bool:
    """A constrained problem with a value linear in the subtrees' quantities."""
    return problem.constrained and problem.n_parts == 1


class Polisher:
    """Better trees near a feasible one, for one problem (its program's cache is kept
    between calls).

    At a node, the dynamic program first says how well any subtree of depth <= 2 can
    do there, ignoring the constraints (``top``); a node where that does not beat the
    subtree in place is passed over.  Otherwise the subtrees are listed from ``top``
    down in widening bands (the list of every better subtree can be huge when the one
    in place is poor), and the first band holding one that keeps the whole tree
    feasible gives the answer: the best such subtree.
    """

    def __init__(self, problem: LinearProblem, deadline: Deadline | None = None) -> None:
        self.p = problem
        self.deadline = deadline
        lam = problem.lambda_
        self.theta = np.concatenate([[1.0 - lam], np.zeros(problem.n_rows)])
        self._dp: GainDP | None = None

    @property
    def dp(self) -> GainDP:
        if self._dp is None:
            p = self.p
            self._dp = GainDP(p.X, p.count, (1.0 - p.lambda_) * p.G[:, :, 0], p.lambda_, p.min_leaf, self.deadline,
                              p.ones, p.ordered)
        return self._dp

    def better_tree(self, current: TreeQuantities) -> TreeQuantities | None:
        """A feasible tree better than ``current`` that differs from it in one subtree of
        depth <= 2, or ``None`` when no node has one (``current`` is a local optimum)."""
        p = self.p
        lam = p.lambda_
        check = None if self.deadline is None else self.deadline.check
        value = p.value(current.parts, current.n_branching)
        step = p.unit if p.integral else 1e-9 * max(1.0, abs(value))
        for path, idx, sub in _nodes(p, current.tree):
            if idx.size * p.n_features ** 2 > MAX_NODE_WORK:
                continue
            if check is not None:
                check()
            own = _sums(p, sub, idx)
            own_nb = tree_branchings(sub)
            want = (1.0 - lam) * float(own[0]) - lam * own_nb + step
            slack = 1e-9 * max(1.0, abs(want))
            top = self.dp.value(idx, 2, want - 2 * slack)
            if top is None:  # no subtree does better here, even without the constraints
                continue
            width = max(step, 1e-3 * max(1.0, abs(top)))
            while True:
                tau = max(want, top - width)
                found = subtree_list(p.X[idx], p.V[idx], p.count[idx], 2, self.theta, lam, p.min_leaf, 1,
                                     tau - slack, keep_features=p.max_features_used is not None, check=check)
                winner = self._first_fitting(current, path, own, own_nb, found, value + step * 0.5)
                if winner is not None:
                    return winner
                if tau <= want:
                    break
                width *= 4
        return None

    def _first_fitting(self, current: TreeQuantities, path, own: np.ndarray, own_nb: int, found,
                       at_least: float) -> TreeQuantities | None:
        """The best listed subtree with which the whole tree keeps every constraint."""
        p = self.p
        if len(found) == 0:
            return None
        q = (current.q - own[1:])[None, :] + found.q
        fits = np.all((q >= p.lo - 1e-9) & (q <= p.hi + 1e-9), axis=1)
        if p.max_branching is not None:
            fits &= current.n_branching - own_nb + found.nb <= p.max_branching
        for j in np.flatnonzero(fits)[:MAX_CHECKED]:
            tree = _replace(current.tree, path, found.tree(int(j)))
            m = measure_tree(p, tree)
            if satisfies(p, m) and leaf_sizes_ok(p, tree) and p.value(m.parts, m.n_branching) >= at_least:
                return m
        return None


def _nodes(p: LinearProblem, tree: Tree) -> Iterator[tuple[tuple[int, ...], np.ndarray, Tree]]:
    """(path from the root, patterns, subtree) of every node whose subtree may be any of
    depth <= 2: two levels left, or a leaf with two or more; not the root of a tree of
    depth <= 2 (listing every tree there is what the branch-and-bound does)."""
    stack = [((), np.arange(p.n_patterns), p.depth, tree)]
    while stack:
        path, idx, left, t = stack.pop()
        if not path and left <= 2:
            return  # the whole tree is one list: the branch-and-bound's own
        if left == 2 or (left > 2 and not isinstance(t, tuple)):
            yield path, idx, t
        elif left > 2:
            right = p.X[idx, t[0]] > 0.5
            stack.append((path + (1,), idx[right], left - 1, t[2]))
            stack.append((path + (0,), idx[~right], left - 1, t[1]))


def _sums(p: LinearProblem, t: Tree, idx: np.ndarray) -> np.ndarray:
    """The quantities (objective part, then the rows) a subtree adds up to on ``idx``."""
    if isinstance(t, tuple):
        right = p.X[idx, t[0]] > 0.5
        return _sums(p, t[1], idx[~right]) + _sums(p, t[2], idx[right])
    return p.V[idx, t].sum(axis=0)


def _replace(t: Tree, path: tuple[int, ...], sub: Tree) -> Tree:
    if not path:
        return sub
    kids = [t[1], t[2]]
    kids[path[0]] = _replace(kids[path[0]], path[1:], sub)
    return (t[0], kids[0], kids[1])
