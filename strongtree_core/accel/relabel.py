"""The best class for every leaf of a fixed tree shape, under the constraints.

A tree the dynamic program returns for some prices often misses a fairness
bound or a quality floor by a few rows; its shape is still good.  With the
splits fixed, the leaves' classes are the only choice left, and each leaf
adds its own objective parts and constraint quantities for the class it
predicts (``LinearProblem.G``, ``U``).  With ``L`` leaves and ``K`` classes
there are ``K^L`` labellings: up to ``MAX_LABELLINGS`` of them are all
scored at once, and the best feasible one is an incumbent for the search.
"""

from __future__ import annotations

import numpy as np

from strongtree_core.accel.dp import Tree
from strongtree_core.accel.problem import LinearProblem

#: Largest number of labellings scored (two classes: trees with up to 16 leaves).
MAX_LABELLINGS = 2 ** 16


def _leaves(problem: LinearProblem, tree: Tree) -> list[np.ndarray]:
    """Pattern indices reaching each leaf, in left-to-right order."""
    out: list[np.ndarray] = []

    def walk(t: Tree, idx: np.ndarray) -> None:
        if isinstance(t, tuple):
            right = problem.X[idx, t[0]] > 0.5
            walk(t[1], idx[~right])
            walk(t[2], idx[right])
        else:
            out.append(idx)

    walk(tree, np.arange(problem.n_patterns))
    return out


def _with_labels(tree: Tree, labels: list[int]) -> Tree:
    it = iter(labels)

    def walk(t: Tree) -> Tree:
        if isinstance(t, tuple):
            left = walk(t[1])
            return (t[0], left, walk(t[2]))
        return int(next(it))

    return walk(tree)


def _exact_sums(parts: np.ndarray) -> bool:
    """Every part a whole number, and any sum of one per leaf below 2^53 in size: float sums of them are exact."""
    return bool(np.all(parts == np.round(parts))) and float(np.abs(parts).max(axis=1).sum()) < 2.0 ** 53


def best_labels(problem: LinearProblem, tree: Tree, n_branching: int, leaves: list | None = None) -> Tree | None:
    """The feasible labelling of ``tree``'s leaves with the largest objective,
    or None (no feasible labelling, or too many to score).  ``leaves``: the patterns
    of each leaf, left to right, when the caller has them already."""
    leaves = _leaves(problem, tree) if leaves is None else leaves
    L, K = len(leaves), problem.n_classes
    if K ** L > MAX_LABELLINGS:
        return None
    parts = np.stack([problem.G[idx].sum(axis=0) for idx in leaves])  # (L, K, J)
    if problem.n_rows == 0 and problem.n_parts == 1 and _exact_sums(parts):
        # One objective part and no constraint row: a labelling's value is the sum of its
        # leaves' parts, computed exactly here (whole numbers), so the first best of the
        # K^L labellings in the order below is each leaf's first best class.
        return _with_labels(tree, np.argmax(parts[:, :, 0], axis=1).tolist())
    q = np.stack([problem.U[idx].sum(axis=0) for idx in leaves])  # (L, K, R)
    labels = np.indices((K,) * L).reshape(L, -1).T  # (K^L, L)
    total_parts = np.zeros((labels.shape[0], problem.n_parts))
    total_q = np.zeros((labels.shape[0], problem.n_rows))
    for leaf in range(L):
        total_parts += parts[leaf, labels[:, leaf]]
        total_q += q[leaf, labels[:, leaf]]
    ok = np.all(total_q >= problem.lo, axis=1) & np.all(total_q <= problem.hi, axis=1)
    if not ok.any():
        return None
    value = np.where(ok, total_parts.min(axis=1), -np.inf)
    return _with_labels(tree, labels[int(np.argmax(value))].tolist())
