"""Coarse to fine over the thresholds of continuous columns.

A table of many rows and continuous columns has about as many patterns as
rows, and every threshold is a feature: the exact search over all of them at
once can run out of time before it improves its first tree.  Seen through
fewer thresholds, rows merge into far fewer patterns.  So the search climbs a
ladder of nested feature sets ``F_0 ⊂ F_1 ⊂ ... ⊂ F``:

* every rung keeps every feature that is not a threshold of a column
  (yes/no columns, categories, missing-value flags) and the thresholds the
  start trees use (CART's on the raw columns among them);
* rung ``k`` adds, on every *active* column (one the best tree so far, the
  first start or the best tree of depth 2 splits on), every ``2^(K - k)``-th of its
  thresholds (they are spread over the rows), until the column has them all;
* the last rung is ``F`` itself;
* with several starts, a rung before rung 0 keeps only the first start's
  thresholds and the depth-2 tree's (:func:`first_rung`): CART's, the tree the
  answer must never be worse than; the other starts widen rung 0 only.

Each rung is solved exactly by the search on its merged patterns, with the
best tree so far as a start (a tree over ``F_k`` is a tree over every later
rung), so the incumbent only improves.  The ladder stops at the first rung
not finished in time, or before the full problem when even an optimistic
estimate of its time (:func:`full_problem_seconds`) exceeds the time left:
the answer is then the last rung certified, optimal among the trees over its
thresholds (``LadderResult.features`` names them), a proven statement about a
smaller set of thresholds rather than an unproven one about all of them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from strongtree_core.accel import ordered as ordered_kernel
from strongtree_core.accel.dp import Deadline
from strongtree_core.encoding.patterns import PatternData, restrict_features
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import TreeStructure

#: Patterns x features from which a problem with continuous columns climbs the ladder.
LADDER_CELLS = 2_000_000


@dataclass(frozen=True)
class Rung:
    """One solved rung: its features (of the full problem), and what the search returned there."""

    features: np.ndarray
    result: object  # ExactResult, its tree on the full problem's features


def ladder_applies(data: PatternData, spec: TreeSpec) -> bool:
    """Columns with thresholds, and more patterns x features than the search takes at once."""
    return bool(data.chains) and spec.depth >= 2 and data.n_patterns * data.n_features > LADDER_CELLS


def tree_features(structure: TreeStructure) -> set[int]:
    return {int(f) for f in structure.feature if f >= 0}


def remap(structure: TreeStructure, mapping: dict[int, int]) -> TreeStructure:
    """The same tree with feature ``f`` renamed ``mapping[f]``."""
    feature = np.array([mapping[int(f)] if f >= 0 else int(f) for f in structure.feature], dtype=np.int64)
    return TreeStructure(structure.depth, feature, structure.prediction.copy())


def rung_features(data: PatternData, k: int, active: set[int], used: set[int]) -> np.ndarray:
    """Sorted feature indices of rung ``k`` (see the module docstring)."""
    chained = np.zeros(data.n_features, dtype=bool)
    keep = np.zeros(data.n_features, dtype=bool)
    for c, chain in enumerate(data.chains):
        chain = np.asarray(chain, dtype=np.int64)
        chained[chain] = True
        if c in active:
            levels = math.ceil(math.log2(chain.size + 1))
            stride = 2 ** max(0, levels - k)
            keep[chain[(np.arange(chain.size) + 1) % stride == 0]] = True
    keep |= ~chained
    keep[list(used)] = True
    return np.flatnonzero(keep)


def chains_of(data: PatternData, features: set[int]) -> set[int]:
    return {c for c, chain in enumerate(data.chains) if features & set(chain)}


def best_depth_two(data: PatternData) -> set[int]:
    """Features of the most accurate tree of depth 2 (counted from the columns' histograms,
    ``accel/ordered.py``): columns worth refining.  Two classes only (else none)."""
    if data.n_classes != 2 or not ordered_kernel.available():
        return set()
    cols = ordered_kernel.ordered_columns(data.X, data.chains)
    if cols is None:
        return set()
    s = np.zeros((data.n_patterns, 2))
    s[np.arange(data.n_patterns), np.asarray(data.y)] = data.weight
    d = np.ascontiguousarray(s[:, 1] - s[:, 0])
    value, code = ordered_kernel.depth_two_ordered(cols, np.arange(data.n_patterns, dtype=np.int64), d,
                                                   np.ascontiguousarray(s[:, 0]),
                                                   np.asarray(data.count, dtype=np.float64), 0.0, 0)
    return {int(f) for f in code[[0, 1, 4]] if f >= 0}


def first_rung(data: PatternData, starts: tuple[TreeStructure, ...], extra: set[int]) -> np.ndarray | None:
    """The rung before rung 0: the thresholds of the first start (CART's on the raw
    columns, when given) and ``extra`` only, when the other starts would widen rung 0.
    Seen through them alone, rows merge into far fewer patterns (200,000 rows x 30
    columns: 1,925 patterns over 17 features instead of 38,109 over 26), so a first
    certificate comes in a fraction of rung 0's time."""
    if len(starts) < 2:
        return None
    own = tree_features(starts[0]) | extra
    features = rung_features(data, 0, chains_of(data, own), own)
    return features


#: Histogram steps per second of the depth-2 kernel, counted low (a busy machine): its run cannot be cut short.
DEPTH_TWO_STEPS_PER_SECOND = 2e7


def depth_two_seconds(data: PatternData) -> float:
    """A generous estimate of :func:`best_depth_two`'s time: it runs only when that much is left
    (on a million rows it takes seconds, and nothing stops it once begun)."""
    C = len(data.chains) + data.n_features - sum(len(chain) for chain in data.chains)
    return data.n_patterns * (C * (C + 1) / 2) / DEPTH_TWO_STEPS_PER_SECOND


def full_problem_seconds(data: PatternData, rung_seconds: float, rung_cells: int) -> float:
    """An optimistic estimate of the full problem's time from the last rung certified: its
    time scaled by patterns x features (the search grows faster than that).  The ladder
    does not begin the full problem when even this exceeds the time left: on a million
    rows its set-up alone takes seconds that no clock interrupts, the search would be
    given up, and the rung's certificate with it."""
    return rung_seconds * (data.n_patterns * data.n_features) / max(1, rung_cells)


def climb(data: PatternData, spec: TreeSpec, solve, starts: tuple[TreeStructure, ...], deadline: Deadline,
          say=None, on_certified=None) -> tuple[Rung | None, object | None, tuple[float, TreeStructure] | None]:
    """Solve the rungs in turn with ``solve(sub_data, sub_starts, seconds)`` (the exact
    search, returning an ExactResult on ``sub_data``'s features).

    Returns the last certified rung (None if none was), the result of the full
    problem when the ladder reached it (None otherwise), and the best tree found
    on the way with its value (on the full features; None if none: the caller
    then falls back on the best feasible start).  ``say(k, n_features, result,
    result_on_full_features)`` hears every rung's outcome (``k`` = -1 for the
    first start's rung, :func:`first_rung`); ``on_certified(rung, best)`` hears each
    rung certified, with the best tree so far (what the ladder would return if it
    were stopped then).
    """
    used = set().union(*(tree_features(s) for s in starts)) if starts else set()
    depth_two = best_depth_two(data) if deadline.at - time.perf_counter() > depth_two_seconds(data) else set()
    used |= depth_two
    # Columns refined: the first start's (CART's) and the depth-2 tree's, then every best tree's;
    # the other starts' thresholds stay in every rung without refining their columns.
    active = chains_of(data, (tree_features(starts[0]) if starts else set()) | depth_two) or chains_of(data, used)
    best: tuple[float, TreeStructure] | None = None
    certified: Rung | None = None
    ahead = first_rung(data, starts, depth_two)
    k, last_size = (-1, -1) if ahead is not None else (0, -1)
    last_rung: tuple[float, int] | None = None  # (seconds, patterns x features) of the last rung certified
    while True:
        if k < 0:
            features = ahead
            if features.size >= rung_features(data, 0, active, used).size:  # no smaller than rung 0: skip it
                k = 0
                continue
        else:
            features = rung_features(data, k, active, used)
        if features.size == last_size:  # the active columns have every threshold: on to the full problem
            features = np.arange(data.n_features)
        seconds = deadline.at - time.perf_counter()
        if seconds <= 0:  # a rung on a million rows takes seconds to set up: none is begun late
            return certified, None, best
        tries = list(starts) + ([best[1]] if best is not None else [])
        if features.size == data.n_features:
            if certified is not None and last_rung is not None and \
                    full_problem_seconds(data, *last_rung) > seconds:
                return certified, None, best  # begun, it would be given up unfinished, its set-up unstoppable
            return certified, solve(data, tuple(tries), seconds), best
        mapping = {int(f): j for j, f in enumerate(features)}
        back = {j: int(f) for j, f in enumerate(features)}
        sub_starts = tuple(remap(s, mapping) for s in tries if tree_features(s) <= set(mapping))
        sub, _ = restrict_features(data, features)
        began = time.perf_counter()
        result = solve(sub, sub_starts, seconds)
        if result.status == "optimal":
            last_rung = (time.perf_counter() - began, sub.n_patterns * sub.n_features)
        on_full = None if result.structure is None else remap(result.structure, back)
        if on_full is not None and (best is None or result.objective > best[0]):
            best = (result.objective, on_full)
            used |= tree_features(on_full)
            active |= chains_of(data, tree_features(on_full))
        if say is not None:
            say(k, features.size, result, on_full)
        if result.status == "stopped":
            return certified, None, best
        if result.status == "optimal":
            certified = Rung(features, (result, on_full))
            if on_certified is not None:
                on_certified(certified, best)
        last_size = features.size
        k += 1
