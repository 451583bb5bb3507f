"""Exact search over every tree of depth at most 2, for any objective and any
side constraint (fairness, recall, precision, specificity, sparsity, min leaf).

The trees of formulation (11) at depth ``d <= 2`` can be counted: the root is
a leaf (``K`` labels) or splits on a feature ``r``, and each child is a leaf or
splits on a feature ``a`` with two labelled leaves.  With ``F`` features and
``K`` classes a child has ``O = K + F * K^2`` options, so there are
``K + F * O^2`` trees (47,098 for 14 features and two classes, 25 million for
116).

The objective is additive over the two subtrees for the weighted accuracies
(accuracy, balanced accuracy, sensitivity: ``row_objective_weights``) and a
minimum of per-class sums for the worst-case accuracy, so the value of each
option on each side of each root split comes from one matrix product over the
patterns, and the ``O x O`` values of a root feature from one outer sum.  The
structural constraints (eq. 8 branching bound, eq. 9 feature bound, eq. 10
minimum leaf) are masks on the same arrays.

The trees are visited from the best value down, in bands of about ``BAND``
trees (a histogram of the values picks each band's lower edge, so memory stays
at ``O^2`` numbers).  A vectorized screen drops trees that break a fairness
bound or a quality floor by more than float rounding; every tree it keeps is decided by the side
constraints' own ``measure`` on its predictions (exact integer arithmetic, the
same counts as the model's rows).  The first tree that passes is optimal:
every tree of larger value was checked and failed.  A search stopped early
still proves a bound: no tree is better than the first one not yet checked.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.fairness_constraints import ParityConstraint
from strongtree_core.formulation.objectives import row_objective_weights, tree_objective
from strongtree_core.formulation.quality_constraints import (
    MinPrecision,
    MinRecall,
    MinSpecificity,
    resolve_positive,
)
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.metrics.constraints import check_constraints
from strongtree_core.structure import LEAF, PRUNED, TreeGraph, TreeStructure

#: Largest number of trees the search takes on: values are computed one root
#: feature at a time, so memory stays at O^2 numbers; time is what grows.
MAX_TREES = 2_000_000_000
#: Trees whose predictions are computed and checked together.
BATCH = 512
#: Trees sorted and visited per band of values (more when values tie).
BAND = 200_000
HISTOGRAM_BINS = 4096

EnumerationStatus = Literal["optimal", "infeasible", "stopped", "unsupported"]

TOO_DEEP = "enumeration covers depth 1 and 2 only (depth {depth} asked)"
TOO_MANY = "{n:,} trees of depth {depth} on {f} features and {k} classes: more than the {limit:,} the search takes on"


@dataclass(frozen=True)
class EnumerationResult:
    """What the exhaustive search found.

    Attributes
    ----------
    status : {"optimal", "infeasible", "stopped", "unsupported"}
        "optimal": ``structure`` is proven optimal; "infeasible": no tree of
        the depth satisfies the constraints (proven); "stopped": the time
        limit or a stop request came first (``structure`` is None and ``bound``
        is still a proven upper bound); "unsupported": see ``reason``.
    structure : TreeStructure or None
    objective : float or None
        The re-scored objective of ``structure``.
    bound : float or None
        No tree of the depth satisfying the constraints has a larger objective.
    n_trees : int
        Trees in the search space.
    n_checked : int
        Trees whose side constraints were measured.
    runtime : float
    reason : str
    """

    status: EnumerationStatus
    structure: TreeStructure | None
    objective: float | None
    bound: float | None
    n_trees: int
    n_checked: int
    runtime: float
    reason: str

    @property
    def certified(self) -> bool:
        return self.status in ("optimal", "infeasible")


def count_trees(depth: int, n_features: int, n_classes: int) -> int:
    """Trees of formulation (11) with maximum depth ``depth`` (1 or 2)."""
    options = n_classes if depth == 1 else n_classes + n_features * n_classes ** 2
    return n_classes + n_features * options ** 2


def supported(data: PatternData, spec: TreeSpec) -> str:
    """Why the search cannot take ``spec`` on ``data`` ("" when it can)."""
    if spec.depth not in (1, 2):
        return TOO_DEEP.format(depth=spec.depth)
    n = count_trees(spec.depth, data.n_features, data.n_classes)
    if n > MAX_TREES:
        return TOO_MANY.format(n=n, depth=spec.depth, f=data.n_features, k=data.n_classes, limit=MAX_TREES)
    return ""


@dataclass(frozen=True)
class _Options:
    """What a child of the root can be: a leaf with a label, or a split on
    feature ``a`` with labels ``(left, right)``; one entry per option."""

    feature: np.ndarray  # (O,) split feature, -1 for a leaf
    left: np.ndarray  # (O,) label of the leaf, or of the split's left leaf
    right: np.ndarray  # (O,) label of the split's right leaf (= left for a leaf)
    predictions: np.ndarray  # (O, P) class each pattern gets from the option

    @property
    def is_split(self) -> np.ndarray:
        return self.feature >= 0


def _child_options(X: np.ndarray, n_classes: int, may_split: bool) -> _Options:
    P, F = X.shape
    K = n_classes
    leaf_f = np.full(K, -1)
    leaf_l = np.arange(K)
    if may_split:
        a, cl, cr = (g.ravel() for g in np.meshgrid(np.arange(F), np.arange(K), np.arange(K), indexing="ij"))
        feature = np.concatenate([leaf_f, a])
        left = np.concatenate([leaf_l, cl])
        right = np.concatenate([leaf_l, cr])
    else:
        feature, left, right = leaf_f, leaf_l, leaf_l
    goes_right = np.zeros((feature.size, P), dtype=bool)
    split = feature >= 0
    goes_right[split] = X[:, feature[split]].T.astype(bool)
    predictions = np.where(goes_right, right[:, None], left[:, None]).astype(np.int16)
    return _Options(feature, left, right, predictions)


def enumerate_solve(
    data: PatternData,
    spec: TreeSpec,
    *,
    time_limit: float = 60.0,
    stop: threading.Event | None = None,
    progress: Callable[[int, float | None], None] | None = None,
) -> EnumerationResult:
    """The optimal tree of depth ``spec.depth <= 2`` by exhaustive search.

    ``progress(n_checked, bound)`` is called after every batch of checked trees.
    """
    t0 = time.perf_counter()
    why = supported(data, spec)
    if why:
        return EnumerationResult("unsupported", None, None, None, 0, 0, 0.0, why)
    X = np.asarray(data.X, dtype=np.uint8)
    opts = _child_options(X, data.n_classes, may_split=spec.depth == 2)
    # sides[s]: (F, P) indicator of the patterns a root split on r sends to side s.
    right_mask = X.T.astype(np.float64)
    sides = (1.0 - right_mask, right_mask)
    parts, root_leaf_value, scale = _side_values(data, spec, opts, sides)
    values, root_values = _tree_values(data, spec, X, opts, sides, parts, root_leaf_value, scale)
    return _first_feasible(data, spec, X, opts, values, root_values, t0, time_limit, stop, progress)


def _side_values(data: PatternData, spec: TreeSpec, opts: _Options, sides) -> tuple[list, np.ndarray, float]:
    """The objective's parts: for each root feature and child option, its value on each side (one pair of
    side sums per class for worst-case accuracy, whose value is the smallest); the root leaf's values; the scale."""
    K = data.n_classes
    per_row = row_objective_weights(data, spec)
    hit = opts.predictions == data.y[None, :]  # (O, P)
    if per_row is not None:
        gain = hit * per_row[None, :]  # (O, P)
        parts = [[s @ gain.T for s in sides]]  # [(F, O), (F, O)]: value of each option on each side
        root_leaf_value = np.array([per_row[data.y == k].sum() for k in range(K)], dtype=float)
        scale = 1.0
    else:  # worst-case accuracy: W * min_k correct_k / W_k, one pair of side sums per class
        class_weight = np.bincount(data.y, weights=data.weight, minlength=K)
        present = np.flatnonzero(class_weight > 0)
        scale = float(data.weight.sum())
        parts = []
        for k in present:
            g = hit * (data.weight * (data.y == k))[None, :] / class_weight[k]
            parts.append([s @ g.T for s in sides])
        root_leaf_value = np.array([scale * min(float(k == j) for j in present) for k in range(K)], dtype=float)
    return parts, root_leaf_value, scale


def _tree_values(data: PatternData, spec: TreeSpec, X: np.ndarray, opts: _Options, sides, parts: list,
                 root_leaf_value: np.ndarray, scale: float) -> tuple[Callable[[int], np.ndarray], np.ndarray]:
    """``values(r)``: the (O, O) values of the trees splitting on r, with the structural constraints
    (eq. 8, 9, 10) as -inf; and the root leaf's value of each class (-inf when not allowed)."""
    F = X.shape[1]
    K = data.n_classes
    O = opts.feature.size
    lam = spec.lambda_
    n_branch = 1 + opts.is_split[:, None].astype(int) + opts.is_split[None, :].astype(int)  # (O, O)
    penalty = lam * n_branch
    root_leaf_value = (1.0 - lam) * root_leaf_value
    always = np.ones((O, O), dtype=bool)
    if spec.max_branching is not None:
        always &= n_branch <= spec.max_branching
    root_allowed = np.ones(K, dtype=bool)
    smallest = None
    if spec.min_leaf > 0:
        count = data.count.astype(np.float64)
        smallest = []  # rows in the smallest leaf of each option on each side: (F, O)
        for s in sides:
            on_side = s @ count  # (F,)
            sub_right = s @ (X * count[:, None])  # (F, F): rows on side s with x_a = 1
            leaf_rows = np.empty((F, O))
            leaf_rows[:, ~opts.is_split] = on_side[:, None]
            a = opts.feature[opts.is_split]
            leaf_rows[:, opts.is_split] = np.minimum(sub_right[:, a], on_side[:, None] - sub_right[:, a])
            smallest.append(leaf_rows)
        root_allowed &= float(data.count.sum()) >= spec.min_leaf
    fl, fr = opts.feature[:, None], opts.feature[None, :]

    def values(r: int) -> np.ndarray:
        """(O, O): value of the tree splitting on r with options (left, right); -inf if not allowed."""
        v = None
        for left, right in parts:
            term = left[r][:, None] + right[r][None, :]
            v = term if v is None else np.minimum(v, term)
        v = (1.0 - lam) * scale * v - penalty
        ok = always
        if spec.max_features_used is not None:
            distinct = 1 + ((fl >= 0) & (fl != r)) + ((fr >= 0) & (fr != r) & (fr != fl))
            ok = ok & (distinct <= spec.max_features_used)
        if smallest is not None:
            ok = ok & (smallest[0][r][:, None] >= spec.min_leaf) & (smallest[1][r][None, :] >= spec.min_leaf)
        return np.where(ok, v, -np.inf)

    return values, np.where(root_allowed, root_leaf_value, -np.inf)


def _first_feasible(data: PatternData, spec: TreeSpec, X: np.ndarray, opts: _Options,
                    values: Callable[[int], np.ndarray], root_values: np.ndarray, t0: float, time_limit: float,
                    stop: threading.Event | None,
                    progress: Callable[[int, float | None], None] | None) -> EnumerationResult:
    """Visit the trees from the best value down, one band of values at a time, and return the first that
    meets the side constraints.  A band holds every tree with value in [low, high); bands are visited from
    the top, so when a tree passes, every tree of larger value has failed."""
    F = X.shape[1]
    K = data.n_classes
    O = opts.feature.size
    n_trees = K + F * O * O
    may_pass = _screen(data, spec)
    checked = 0
    seen: set[bytes] = set()
    y = np.asarray(data.y)
    high = np.inf
    while True:
        low, band_ids, band_values = _next_band(values, F, O, K, root_values, high)
        if band_ids.size == 0:
            break
        order = np.argsort(-band_values, kind="stable")
        band_ids, band_values = band_ids[order], band_values[order]
        for start in range(0, band_ids.size, BATCH):
            if (stop is not None and stop.is_set()) or time.perf_counter() - t0 > time_limit:
                bound = float(band_values[start])
                return EnumerationResult("stopped", None, None, bound, n_trees, checked, time.perf_counter() - t0,
                                         f"stopped after checking {checked:,} of {n_trees:,} trees; none better "
                                         f"than {bound:g} is feasible")
            ids = band_ids[start:start + BATCH]
            preds = _predictions(ids, K, X, opts)
            maybe = may_pass(preds)
            checked += int((~maybe).sum())
            for j, tree_id in enumerate(ids):
                if not maybe[j]:
                    continue
                key = hashlib.blake2b(preds[j].tobytes(), digest_size=16).digest()
                if key in seen:
                    continue
                seen.add(key)
                checked += 1
                results = check_constraints(spec, y, preds[j], data.group, data.legit, count=data.count)
                if all(r.satisfied for r in results):
                    structure = _structure(int(tree_id), spec.depth, K, O, opts)
                    value_found = tree_objective(data, spec, structure)
                    expected = float(band_values[start + j])
                    if abs(value_found - expected) > 1e-6 * max(1.0, abs(value_found)):
                        raise AssertionError(  # pragma: no cover - a bookkeeping error, never a silent answer
                            f"enumeration scored tree {tree_id} at {expected:g} but it re-scores to {value_found:g}"
                        )
                    return EnumerationResult("optimal", structure, value_found, value_found, n_trees, checked,
                                             time.perf_counter() - t0,
                                             f"exhaustive search over all {n_trees:,} trees of depth {spec.depth}: "
                                             f"{checked:,} checked against the side constraints")
            if progress is not None and start + BATCH < band_values.size:
                progress(checked, float(band_values[start + BATCH]))  # the best tree not yet checked
        high = low
    return EnumerationResult("infeasible", None, None, None, n_trees, checked, time.perf_counter() - t0,
                             f"exhaustive search: none of the {n_trees:,} trees of depth {spec.depth} "
                             "satisfies the constraints")


def _screen(data: PatternData, spec: TreeSpec) -> Callable[[np.ndarray], np.ndarray]:
    """A fast test of the fairness bounds and quality floors on a batch of
    prediction vectors that never rejects a tree meeting them (a float margin in
    the tree's favour); the trees it lets through are then decided exactly by
    ``check_constraints``.

    Counts come from matrix products of the "predicted positive" indicators:
    for a parity constraint, every cohort and pair of groups ``(p, q)`` must have
    ``|N_q S_p - N_p S_q| <= delta N_p N_q`` (``formulation/fairness_constraints.py``); the
    floors read ``TP >= C P`` (recall), ``TP >= C (TP + FP)`` (precision) and
    ``N - FP >= C N`` (specificity) (``formulation/quality_constraints.py``).
    """
    parity, floors = [], []
    group = None if data.group is None else np.asarray(data.group, dtype=np.int64)
    count = np.asarray(data.count, dtype=np.float64)
    for constraint in spec.side_constraints:
        if isinstance(constraint, ParityConstraint) and group is not None:
            positive = resolve_positive(constraint.pos_label, spec.pos_label, constraint.name)
            cohorts, _ = constraint.cohorts(data.y, group, data.legit, positive, data.count)
            for cohort in cohorts:
                pairs = cohort.pairs()
                if not pairs:
                    continue
                rows = np.zeros((data.n_patterns, cohort.sizes.size))
                inside = np.flatnonzero(cohort.mask)
                rows[inside, group[inside]] = count[inside]
                parity.append((positive, rows, cohort.sizes.astype(np.float64), pairs, float(constraint.bound)))
        elif isinstance(constraint, (MinRecall, MinPrecision, MinSpecificity)):
            positive = resolve_positive(constraint.pos_label, spec.pos_label, constraint.name)
            is_pos = np.asarray(data.y) == positive
            pos_rows, neg_rows = np.where(is_pos, count, 0.0), np.where(is_pos, 0.0, count)
            floors.append((type(constraint), positive, pos_rows, neg_rows, float(pos_rows.sum()), float(neg_rows.sum()),
                           float(constraint.bound)))

    def may_pass(preds: np.ndarray) -> np.ndarray:
        ok = np.ones(preds.shape[0], dtype=bool)
        for positive, rows, sizes, pairs, delta in parity:
            hits = (preds == positive).astype(np.float64) @ rows  # (B, groups)
            for p, q in pairs:
                limit = delta * sizes[p] * sizes[q]
                ok &= np.abs(sizes[q] * hits[:, p] - sizes[p] * hits[:, q]) <= limit + 1e-7 * max(1.0, limit)
        for kind, positive, pos_rows, neg_rows, P, N, floor in floors:
            said = (preds == positive).astype(np.float64)
            tp, fp = said @ pos_rows, said @ neg_rows
            if kind is MinRecall and P > 0:
                ok &= tp >= floor * P - 1e-7 * max(1.0, P)
            elif kind is MinPrecision:
                ok &= tp >= floor * (tp + fp) - 1e-7 * np.maximum(1.0, tp + fp)
            elif kind is MinSpecificity and N > 0:
                ok &= N - fp >= floor * N - 1e-7 * max(1.0, N)
        return ok

    return may_pass


def _next_band(values, F: int, O: int, K: int, root_values: np.ndarray, high: float):
    """The trees with value in ``[low, high)``, about ``BAND`` of them (more when
    values tie): ``(low, ids, values)``; empty when no finite value is left.

    Two passes over the root features: a histogram of the values below ``high``
    picks ``low``, then the trees in the band are collected.
    """
    below = lambda v: np.isfinite(v) & (v < high)  # noqa: E731
    lo, hi, n = np.inf, -np.inf, 0
    for r in range(F):
        v = values(r)
        v = v[below(v)]
        if v.size:
            lo, hi, n = min(lo, float(v.min())), max(hi, float(v.max())), n + v.size
    rv = root_values[below(root_values)]
    if rv.size:
        lo, hi, n = min(lo, float(rv.min())), max(hi, float(rv.max())), n + rv.size
    if n == 0:
        return -np.inf, np.empty(0, dtype=np.int64), np.empty(0)
    if n <= BAND or hi <= lo:
        low = lo
    else:
        edges = np.linspace(lo, hi, HISTOGRAM_BINS + 1)
        counts = np.zeros(HISTOGRAM_BINS, dtype=np.int64)
        for r in range(F):
            v = values(r)
            counts += np.histogram(v[below(v)], bins=edges)[0]
        counts += np.histogram(rv, bins=edges)[0]
        from_top = np.cumsum(counts[::-1])
        k = int(np.searchsorted(from_top, BAND))  # the top k+1 bins hold at least BAND trees
        low = float(edges[HISTOGRAM_BINS - 1 - min(k, HISTOGRAM_BINS - 1)])
    ids, vals = [], []
    keep = np.flatnonzero(below(root_values) & (root_values >= low))
    ids.append(keep.astype(np.int64))
    vals.append(root_values[keep])
    for r in range(F):
        v = values(r).ravel()
        keep = np.flatnonzero(below(v) & (v >= low))
        ids.append(K + r * O * O + keep)
        vals.append(v[keep])
    return low, np.concatenate(ids), np.concatenate(vals)


def _predictions(ids: np.ndarray, K: int, X: np.ndarray, opts: _Options) -> np.ndarray:
    """Class of every pattern under each tree id (ids < K: a single leaf)."""
    O = opts.feature.size
    out = np.empty((ids.size, X.shape[0]), dtype=np.int16)
    leaf = ids < K
    out[leaf] = ids[leaf][:, None]
    rest = ids[~leaf] - K
    r, o_left, o_right = rest // (O * O), (rest // O) % O, rest % O
    out[~leaf] = np.where(X[:, r].T.astype(bool), opts.predictions[o_right], opts.predictions[o_left])
    return out


def _structure(tree_id: int, depth: int, K: int, O: int, opts: _Options) -> TreeStructure:
    g = TreeGraph(depth)
    feature = np.full(g.n_nodes, PRUNED, dtype=np.int64)
    prediction = np.full(g.n_nodes, -1, dtype=np.int64)
    if tree_id < K:
        feature[0], prediction[0] = LEAF, tree_id
        return TreeStructure(depth, feature, prediction)
    rest = tree_id - K
    r, o_left, o_right = rest // (O * O), (rest // O) % O, rest % O
    feature[0] = r
    for node, o in ((2, o_left), (3, o_right)):
        if opts.feature[o] >= 0:
            feature[node - 1] = opts.feature[o]
            feature[2 * node - 1], prediction[2 * node - 1] = LEAF, opts.left[o]
            feature[2 * node], prediction[2 * node] = LEAF, opts.right[o]
        else:
            feature[node - 1], prediction[node - 1] = LEAF, opts.left[o]
    return TreeStructure(depth, feature, prediction)
