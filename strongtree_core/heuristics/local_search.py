"""Local search over trees: coordinate descent over nodes, in the spirit of
LST (Bertsimas and Dunn's local search for optimal trees, the heuristic the
paper compares against in its Section 5 and Table "LST").

From a start (CART, CART with balanced classes, then random trees of full
depth), the nodes of the current tree are visited in random order; at each
node the subtree below it is replaced by the best of

* a leaf,
* its left or its right child's subtree (the split is deleted),
* the same children under another split feature (or, at a leaf above the
  maximum depth, a new split into two leaves),

judged on the datapoints that reach the node only (the rest of the tree does
not change), each with its leaves relabelled to their best class.  A
replacement is taken when it improves the objective and keeps the
constraints (minimum leaf size, branching and feature bounds); passes repeat
until none improves (a local optimum), then the next start begins.  The best
tree over all starts is returned.

The objective is the library's: ``(1 - lambda) * sum_i weight_i [i correct]
- lambda * branchings`` with the per-row weights of accuracy, balanced
accuracy or sensitivity.  Nothing here bounds the optimum: the result is a
heuristic's tree, never certified.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.objectives import row_objective_weights
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

#: The local search refuses what it cannot keep; tests assert this text.
LOCAL_SEARCH_REFUSED = (
    "The local search keeps a minimum leaf size and bounds on branching nodes and features, for accuracy, "
    "balanced accuracy and sensitivity; it cannot take {names}. Use formulation='auto' (the exact search) instead."
)
#: Random starts after the given ones.
RANDOM_STARTS = 100
#: Split features tried with their leaves relabelled at each node, best estimate first.
SPLIT_TRIES = 5
#: Smallest improvement taken (objective units).
IMPROVEMENT = 1e-9

Report = Callable[[float, TreeStructure, int, str], None]


def local_search_unsupported(spec: TreeSpec) -> list[str]:
    """What ``spec`` asks that the local search cannot keep (empty when it takes it).

    Examples
    --------
    >>> from strongtree_core.formulation import TreeSpec
    >>> from strongtree_core.heuristics import local_search_unsupported
    >>> local_search_unsupported(TreeSpec(depth=2))
    []
    """
    names = [c.name for c in spec.side_constraints]
    if spec.objective == "worst_case_accuracy":
        names.append("the objective worst_case_accuracy")
    return names


@dataclass(frozen=True)
class LocalSearchResult:
    """The best tree found and how.

    Attributes
    ----------
    structure : TreeStructure or None
        None only when no tree keeps the constraints from any start.
    objective : float or None
        Its value (the caller re-scores it).
    n_starts : int
        Starts run to a local optimum (or cut short by the limit).
    n_moves : int
        Improving replacements taken over all starts.
    reason : str
        What was done, in words.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> from strongtree_core.heuristics import local_search
    >>> type(local_search(data, TreeSpec(depth=1), n_random=2, seed=0)).__name__
    'LocalSearchResult'
    """

    structure: TreeStructure | None
    objective: float | None
    n_starts: int
    n_moves: int
    reason: str


class _Search:
    """The data, objective and constraints of one local search."""

    def __init__(self, data: PatternData, spec: TreeSpec) -> None:
        per_row = row_objective_weights(data, spec)
        if per_row is None:
            raise ValueError(LOCAL_SEARCH_REFUSED.format(names="the objective worst_case_accuracy"))
        self.data = data
        self.spec = spec
        self.graph = TreeGraph(spec.depth)
        self.X = data.X.astype(bool)
        self.Xf = data.X.astype(float)
        self.scale = 1.0 - spec.lambda_
        self.per_row = np.asarray(per_row, dtype=float)
        # class_weight[i, k]: pattern i's objective weight if predicted k.
        self.class_weight = np.zeros((data.n_patterns, data.n_classes))
        self.class_weight[np.arange(data.n_patterns), data.y] = self.per_row

    # -- the objective and the constraints --------------------------------------------------------
    def value(self, tree: TreeStructure, rows: np.ndarray | None = None) -> float:
        """Objective over ``rows`` (all patterns by default), branchings of the whole tree included."""
        rows = np.arange(self.data.n_patterns) if rows is None else rows
        correct = tree.predict(self.data.X[rows]) == self.data.y[rows]
        return self.scale * float(self.per_row[rows][correct].sum()) - self.spec.lambda_ * tree.n_branching

    def feasible(self, tree: TreeStructure) -> bool:
        spec = self.spec
        if spec.max_branching is not None and tree.n_branching > spec.max_branching:
            return False
        if spec.max_features_used is not None and tree.features_used.size > spec.max_features_used:
            return False
        if spec.min_leaf > 0:
            rows = np.bincount(tree.apply(self.data.X), weights=self.data.count, minlength=tree.feature.size + 1)
            if rows[tree.leaves].min() < spec.min_leaf:
                return False
        return True

    # -- trees ------------------------------------------------------------------------------------
    def relabel(self, feature: np.ndarray, prediction: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Leaves reached by ``rows`` predict their best class (others keep theirs)."""
        prediction = prediction.copy()
        tree = TreeStructure(self.spec.depth, feature, prediction)
        leaf = tree.apply(self.data.X[rows])
        sums = np.zeros((feature.size + 1, self.data.n_classes))
        np.add.at(sums, leaf, self.class_weight[rows])
        reached = np.unique(leaf)
        prediction[reached - 1] = sums[reached].argmax(axis=1)
        return prediction

    def random_tree(self, rng: np.random.Generator) -> TreeStructure:
        g = self.graph
        feature = np.full(g.n_nodes, LEAF, dtype=np.int64)
        if g.n_branching and self.data.n_features:
            feature[: g.n_branching] = rng.integers(0, self.data.n_features, g.n_branching)
        else:
            feature[1:] = PRUNED
        prediction = np.where(feature == LEAF, 0, -1).astype(np.int64)
        return TreeStructure(g.depth, feature, self.relabel(feature, prediction, np.arange(self.data.n_patterns)))

    def single_leaf(self) -> TreeStructure:
        best = int(self.class_weight.sum(axis=0).argmax())
        return TreeStructure.single_leaf(self.spec.depth, best)

    # -- one node ---------------------------------------------------------------------------------
    def improve_at(self, tree: TreeStructure, n: int, current: float) -> TreeStructure | None:
        """The best replacement of the subtree at ``n`` that improves the tree and keeps the
        constraints, or None.  Only the datapoints reaching ``n`` can change class, so
        each replacement is judged on them (with the whole tree's branchings)."""
        rows = np.flatnonzero((tree.path_nodes(self.data.X) == n).any(axis=1))
        here = self.value(tree, rows)
        options: list[tuple[float, TreeStructure]] = []

        def relabelled(feature: np.ndarray, prediction: np.ndarray) -> TreeStructure:
            return TreeStructure(self.spec.depth, feature, self.relabel(feature, prediction, rows))

        f0 = int(tree.feature[n - 1])
        if f0 >= 0:
            for cand in (relabelled(*_as_leaf(tree, n)), *(relabelled(*_moved(tree, c, n)) for c in (2 * n, 2 * n + 1))):
                options.append((self.value(cand, rows) - here, cand))
        if int(np.floor(np.log2(n))) < self.spec.depth and rows.size:
            # Estimated gain of each split feature (exact at a leaf; a lower bound with kept
            # children, whose leaves are relabelled afterwards): the SPLIT_TRIES best that
            # keep the constraints are candidates.
            extra = 0 if f0 >= 0 else 1
            estimate = self.scale * self._split_scores(tree, n, rows) - self.spec.lambda_ * (tree.n_branching + extra) - here
            tried = 0
            for f in np.argsort(-estimate, kind="stable"):
                if tried == SPLIT_TRIES or (estimate[f] <= IMPROVEMENT and tried):
                    break
                if f == f0:
                    continue
                cand = relabelled(*_with_split(tree, n, int(f)))
                if self.feasible(cand):
                    options.append((self.value(cand, rows) - here, cand))
                    tried += 1
        for gain, cand in sorted(options, key=lambda o: -o[0]):
            if gain > IMPROVEMENT and self.feasible(cand) and self.value(cand) > current + IMPROVEMENT:
                return cand
        return None

    def _split_scores(self, tree: TreeStructure, n: int, rows: np.ndarray) -> np.ndarray:
        """Objective weight of ``rows`` classified correctly with a split on each feature at
        ``n``, shape (F,): the children's current predictions kept (a lower bound, as their
        leaves are relabelled afterwards), or, at a leaf or above two leaves, two leaves
        of their best classes (exact)."""
        X = self.Xf[rows]
        children_are_leaves = tree.feature[n - 1] >= 0 and all(tree.feature[c - 1] == LEAF for c in (2 * n, 2 * n + 1))
        if tree.feature[n - 1] >= 0 and not children_are_leaves:
            Xr = self.data.X[rows]
            left = TreeStructure(self.spec.depth, *_moved(tree, 2 * n, n)).predict(Xr)
            right = TreeStructure(self.spec.depth, *_moved(tree, 2 * n + 1, n)).predict(Xr)
            y, w = self.data.y[rows], self.per_row[rows]
            return (w * (left == y)) @ (1.0 - X) + (w * (right == y)) @ X
        cw = self.class_weight[rows]  # (m, K)
        on_right = cw.T @ X  # (K, F)
        on_left = cw.sum(axis=0)[:, None] - on_right
        return on_right.max(axis=0) + on_left.max(axis=0)

    # -- one start --------------------------------------------------------------------------------
    def descend(self, tree: TreeStructure, rng: np.random.Generator, deadline: float, stop) -> tuple[TreeStructure, int, bool]:
        """Coordinate descent from ``tree`` to a local optimum; (tree, moves, cut short)."""
        current = self.value(tree)
        moves = 0
        improved = True
        while improved:
            improved = False
            nodes = np.flatnonzero(tree.feature != PRUNED) + 1
            for n in rng.permutation(nodes):
                if time.perf_counter() > deadline or (stop is not None and stop.is_set()):
                    return tree, moves, True
                if tree.feature[n - 1] == PRUNED:
                    continue  # removed by an earlier move of this pass
                better = self.improve_at(tree, int(n), current)
                if better is not None:
                    tree, current, moves, improved = better, self.value(better), moves + 1, True
        return tree, moves, False


def local_search(
    data: PatternData,
    spec: TreeSpec,
    *,
    starts: Sequence[TreeStructure] = (),
    n_random: int = RANDOM_STARTS,
    seed: int = 0,
    time_limit: float = 60.0,
    stop: threading.Event | None = None,
    report: Report | None = None,
) -> LocalSearchResult:
    """Coordinate descent over nodes from ``starts`` and ``n_random`` random trees.

    Parameters
    ----------
    data : PatternData
    spec : TreeSpec
        Objective (not worst-case accuracy), lambda, ``min_leaf``,
        ``max_branching``, ``max_features_used``; no side constraints.
    starts : sequence of TreeStructure
        Trees to start from first (e.g. CART); one that breaks a constraint is
        replaced by a single leaf.
    n_random : int
        Random trees of full depth started from afterwards (seeded by ``seed``).
    time_limit : float
        Seconds; the best tree so far is returned when they run out or on Stop.
    report : callable, optional
        ``report(objective, tree, n_starts, message)`` at every new best tree.

    Raises
    ------
    ValueError
        :data:`LOCAL_SEARCH_REFUSED` for side constraints or the worst-case accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from strongtree_core.encoding import TableEncoder, collapse_patterns
    >>> X = pd.DataFrame({'a': [0, 1, 0, 1, 1, 0], 'b': [1, 1, 0, 0, 1, 0]})
    >>> y = np.array([0, 1, 0, 1, 1, 1])
    >>> plan = TableEncoder().fit(X)
    >>> data = collapse_patterns(plan.transform(X), y, 2)
    >>> from strongtree_core.formulation import TreeSpec, build_model
    >>> from strongtree_core.heuristics import local_search
    >>> found = local_search(data, TreeSpec(depth=1), n_random=5, seed=0)
    >>> found.objective
    5.0
    """
    refused = local_search_unsupported(spec)
    if refused:
        raise ValueError(LOCAL_SEARCH_REFUSED.format(names=", ".join(refused)))
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    search = _Search(data, spec)
    rng = np.random.default_rng(seed)
    best: TreeStructure | None = None
    best_value = -np.inf
    n_starts = moves = 0
    cut_short = False
    queue = [("start", s.with_depth(spec.depth) if s.depth < spec.depth else s) for s in starts]
    queue += [("random", None)] * n_random
    for kind, start in queue:
        tree = search.random_tree(rng) if start is None else start
        if not search.feasible(tree):
            tree = search.single_leaf()
            if not search.feasible(tree):
                continue
        tree, done, cut_short = search.descend(tree, rng, deadline, stop)
        n_starts += 1
        moves += done
        value = search.value(tree)
        if value > best_value + IMPROVEMENT:
            best, best_value = tree, value
            if report is not None:
                report(value, tree, n_starts, f"local optimum from a {kind} tree")
        if cut_short:
            break
    ending = "stopped by the time limit or Stop" if cut_short else "every start ran to a local optimum"
    reason = (f"coordinate descent over nodes from {len(starts)} given and {n_random} random start(s); "
              f"{n_starts} run, {moves} improving move(s), {ending}")
    return LocalSearchResult(best, None if best is None else float(best_value), n_starts, moves, reason)


# -- subtree surgery on the node arrays ---------------------------------------------------------------
def _subtree(node: int, depth: int):
    """(level offset k, node numbers at that level) of the subtree at ``node``."""
    level = int(np.floor(np.log2(node)))
    for k in range(depth - level + 1):
        yield k, node * 2**k + np.arange(2**k)


def _moved(tree: TreeStructure, src: int, dst: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of ``tree`` with the subtree at ``dst`` replaced by the one at ``src`` (a descendant)."""
    feature, prediction = tree.feature.copy(), tree.prediction.copy()
    for _, nodes in _subtree(dst, tree.depth):
        feature[nodes - 1], prediction[nodes - 1] = PRUNED, -1
    src_levels = dict(_subtree(src, tree.depth))
    for k, nodes in _subtree(dst, tree.depth):
        if k in src_levels:
            feature[nodes - 1] = tree.feature[src_levels[k] - 1]
            prediction[nodes - 1] = tree.prediction[src_levels[k] - 1]
    return feature, prediction


def _as_leaf(tree: TreeStructure, n: int) -> tuple[np.ndarray, np.ndarray]:
    feature, prediction = tree.feature.copy(), tree.prediction.copy()
    for _, nodes in _subtree(n, tree.depth):
        feature[nodes - 1], prediction[nodes - 1] = PRUNED, -1
    feature[n - 1], prediction[n - 1] = LEAF, 0
    return feature, prediction


def _with_split(tree: TreeStructure, n: int, f: int) -> tuple[np.ndarray, np.ndarray]:
    """``tree`` splitting on ``f`` at ``n``: the children are kept, or two new leaves at a leaf."""
    feature, prediction = tree.feature.copy(), tree.prediction.copy()
    if feature[n - 1] == LEAF:
        for child in (2 * n, 2 * n + 1):
            feature[child - 1], prediction[child - 1] = LEAF, prediction[n - 1]
        prediction[n - 1] = -1
    feature[n - 1] = f
    return feature, prediction
