"""Coarse to fine over the thresholds of a table read where it lies.

On a table of tens of millions of rows, a continuous column cut at all of its thresholds
makes nearly every row its own pattern; cut once, its rows merge.  So the patterns are
summed first with each continuous column cut at one threshold (the one nearest its
median), the search solves that rung exactly, and only the columns the best tree splits
on are cut finer for the next rung: 1, 3, 7, 15 thresholds, then every one of the
column's budget (``max_thresholds``), each set containing the one before
(:func:`~strongtree_core.source.plan.ladder_order`).  A column the best tree does not
split on keeps its coarse cuts, and the certificate covers those only: the record says
how many thresholds were kept of how many.  Each rung is one more pass over the rows (only the patterns
are kept, never the rows), and its search starts from the best tree so far, so the tree
only improves.

The climb ends when no column the best tree uses has thresholds left to add, when the next
rung's patterns would need more memory than ``memory_limit`` allows (the pass is stopped
as its patterns pass the cap: the limit is kept, not only checked), when the time left
would not cover another pass and search, at a Stop, or when a rung is not certified in
time.  The answer is the last rung certified: optimal among the trees over its thresholds
(:class:`Climbed` says which, of how many), a proven statement about the thresholds kept
rather than an unproven one about all of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np

from strongtree_core.encoding.binarize import EncodingPlan
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.source.codes import code_spec, count_batch, merge_counts, to_patterns
from strongtree_core.source.plan import with_cuts
from strongtree_core.source.reader import ReadStopped, TooManyPatterns, Watch
from strongtree_core.structure import TreeStructure


def feature_key(plan: EncodingPlan) -> list[tuple]:
    """A key naming each binary feature of ``plan`` (the same feature has the same key in every rung)."""
    return [(f.source, f.kind, f.threshold, f.lower, repr(f.level)) for f in plan.features]


def carry(tree: TreeStructure, old: EncodingPlan, new: EncodingPlan) -> TreeStructure | None:
    """``tree`` over ``old``'s features as a tree over ``new``'s (None if a feature is not in ``new``)."""
    where = {key: j for j, key in enumerate(feature_key(new))}
    keys = feature_key(old)
    feature = []
    for f in tree.feature:
        if f < 0:
            feature.append(int(f))
        elif keys[int(f)] in where:
            feature.append(where[keys[int(f)]])
        else:
            return None
    return TreeStructure(tree.depth, np.asarray(feature, dtype=np.int64), tree.prediction.copy())


def split_columns(tree: TreeStructure, plan: EncodingPlan) -> set:
    """The continuous columns ``tree`` splits on."""
    features = plan.features
    return {features[int(f)].source for f in tree.feature if f >= 0 and features[int(f)].kind == "at_most"}


@dataclass(frozen=True)
class Rung:
    """One rung: its plan (the thresholds it kept), its patterns, the solve, the pass's and the search's seconds."""

    plan: EncodingPlan
    data: PatternData
    solved: object  # engine.Solved
    read_seconds: float
    solve_seconds: float


@dataclass(frozen=True)
class Climbed:
    """What the climb returns: the rung answered with (the last certified, else the last with a tree),
    every rung's size, and why the climb ended."""

    answer: Rung
    rungs: tuple = ()  # (thresholds kept, patterns, features, certified, read s, solve s) per rung
    ended: str = ""
    thresholds_total: int = 0
    features_total: int = 0
    notes: tuple = field(default_factory=tuple)


def climb(plan: EncodingPlan, ordered: dict, read: Callable, solve: Callable, watch: Watch,
          max_patterns: Callable[[int], int]) -> Climbed:
    """Climb the rungs.

    ``plan``: every column's coding, continuous ones at their whole budget; ``ordered``: each continuous
    column's thresholds in ladder order; ``read(plan, watch)``: the summed patterns of the table under
    ``plan`` (a :class:`~strongtree_core.encoding.PatternData`; raises ``ReadStopped`` / ``TooManyPatterns``);
    ``solve(data, starts)``: the engine's :class:`~strongtree_core.engine.routes.Solved` on ``data``;
    ``max_patterns(n_features)``: the most patterns a search over that many features may hold.
    """
    level = {name: 1 for name, cuts in ordered.items() if cuts}
    total = sum(len(c) for c in ordered.values())
    best: Rung | None = None
    certified: Rung | None = None
    rungs: list = []
    ended = ""
    notes: list = []
    while True:
        cuts = {name: ordered[name][: 2 ** level.get(name, 0) - 1] for name in ordered}
        rung_plan = with_cuts(plan, cuts)
        watch.max_patterns = max_patterns(rung_plan.n_binary)
        began = time.perf_counter()
        try:
            data = read(rung_plan, watch)
        except TooManyPatterns as over:
            if best is None:  # not even the coarsest rung fits: nothing to answer with
                raise
            ended = "memory"
            notes.append(f"the next rung ({sum(len(c) for c in cuts.values())} thresholds) passed "
                         f"{over.patterns:,} patterns, more than memory_limit allows, and was not solved")
            break
        except ReadStopped:
            ended = "stopped"
            break
        read_seconds = time.perf_counter() - began
        starts = []
        for rung in (certified, best):
            if rung is not None:
                moved = carry(rung.solved.structure, rung.plan, rung_plan)
                if moved is not None:
                    starts.append(("the best tree of the rung before", moved))
        began = time.perf_counter()
        solved = solve(data, tuple(starts[:1]))
        rung = Rung(rung_plan, data, solved, read_seconds, time.perf_counter() - began)
        rungs.append((sum(len(c) for c in cuts.values()), data.n_patterns, data.n_features,
                      bool(solved.record.certified), rung.read_seconds, rung.solve_seconds))
        if best is None or _value(solved) > _value(best.solved):
            best = rung
        if not solved.record.certified or solved.features is not None:
            ended = "time" if not solved.record.certified else "inner ladder"
            if solved.record.certified:
                certified = rung
            break
        certified = rung
        refine = [name for name in split_columns(solved.structure, rung_plan)
                  if name in level and 2 ** level[name] - 1 < len(ordered[name])]
        if not refine:
            ended = "complete"
            break
        left = watch.deadline - time.perf_counter()
        if left < 1.5 * (rung.read_seconds + rung.solve_seconds):
            ended = "time"
            notes.append("the time left would not cover another pass over the rows and its search")
            break
        for name in refine:
            level[name] += 1
    if best is None:
        raise ReadStopped()
    answer = certified if certified is not None else best
    if certified is not None and best is not certified and _value(best.solved) > _value(certified.solved):
        notes.append(f"over more thresholds the search reached {_value(best.solved):g} without a proof")
    return Climbed(answer, tuple(rungs), ended, total, plan.n_binary, tuple(notes))


def _value(solved) -> float:
    value = solved.record.objective
    return -np.inf if value is None else float(value)


def read_patterns(reader, plan: EncodingPlan, watch: Watch, **roles) -> PatternData:
    """The table's patterns under ``plan`` through ``reader`` (local or cluster)."""
    spec = code_spec(plan, **roles)
    counts = reader.run("patterns", spec.columns, partial(count_batch, spec), merge_counts, watch,
                        size=lambda c: c.n_patterns)
    return to_patterns(spec, counts, plan)


