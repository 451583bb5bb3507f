"""Fairness constraints that pystreed enforces exactly, and how to check them.

pystreed's tasks "group-fairness" and "equality-of-opportunity" take the
sensitive attribute as binary feature 0 (never split on) and class 1 as the
positive class.  Each leaf adds to two scores

    group0_score = P(yhat = 1 | g = 0) + P(yhat = 0 | g = 1)
                 = 1 + P(yhat = 1 | g = 0) - P(yhat = 1 | g = 1)
    group1_score = 1 + P(yhat = 1 | g = 1) - P(yhat = 1 | g = 0)

(row counts over the group sizes; for equality of opportunity the same
among rows of class 1), and a tree is feasible when
``max(group0_score, group1_score) - 1 <= limit``, that is

    |P(yhat = 1 | g = 0) - P(yhat = 1 | g = 1)| <= limit,

which is the statistical parity (resp. equal opportunity) constraint of a
binary group with bound ``limit``; the objective is the number of
misclassified rows.  So the optimum is the MIO's for two classes, a binary
group, unit weights and the accuracy objective.

One caveat makes the proof conditional: pystreed compares partial scores
with a tolerance of 1e-4 when discarding dominated partial trees.  Two
scores of the same rows differ by a multiple of ``1 / lcm(G0, G1)``
(``G0``, ``G1`` the group sizes), so when ``lcm(G0, G1) < 10**4`` every
nonzero difference exceeds the tolerance and the comparison is exact; the
result is certified only then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from strongtree_core.encoding.patterns import PatternData
from strongtree_core.formulation.spec import TreeSpec
from strongtree_core.structure import TreeStructure

FairnessKind = Literal["statistical_parity", "equal_opportunity"]
SUPPORTED_FAIRNESS: tuple[str, ...] = ("statistical_parity", "equal_opportunity")

#: pystreed's tolerance on partial fairness scores (GroupFairnessSol::gf_epsilon).
PYSTREED_SCORE_TOLERANCE = 1e-4
#: Added to the bound handed to pystreed so that a gap equal to the bound is not
#: lost to rounding; the exact check afterwards decides feasibility.
BOUND_SLACK = 1e-12

UNSUPPORTED_CONSTRAINT = "unsupported: pystreed has no exact task for the constraint {name!r}"
UNSUPPORTED_SEVERAL = "unsupported: pystreed enforces one fairness constraint at a time, got {names}"
UNSUPPORTED_NO_GROUP = "unsupported: {kind} needs the protected group of every row, and the data has none"
UNSUPPORTED_GROUP_LEVELS = (
    "unsupported: pystreed's fairness tasks need a binary protected group; this group has {n} levels with rows"
)
UNSUPPORTED_CLASSES = "unsupported: pystreed's fairness tasks need exactly two classes, got {n}"
UNSUPPORTED_NO_POSITIVE = "unsupported: {kind} needs a positive class (pos_label=...)"
UNSUPPORTED_EMPTY_GROUP = "unsupported: group level {level} has no rows of the positive class, so {kind} is undefined"
NOT_CERTIFIED_TOLERANCE = (
    "pystreed compares group rates with a tolerance of 1e-4, and with groups of {g0} and {g1} rows "
    "(lcm {lcm} >= 10000) two rates can differ by less than that: the tree is feasible but not proven optimal"
)


@dataclass(frozen=True)
class FairnessRequest:
    """A fairness constraint in pystreed's terms.

    Attributes
    ----------
    kind : {"statistical_parity", "equal_opportunity"}
    bound : float
        The user's bound on the gap.
    positive : int
        Class index of the positive class.
    levels : tuple of int
        The two group codes present, mapped to pystreed's 0 and 1 in this order.
    sizes : tuple of int
        Rows (statistical parity) or positive rows (equal opportunity) per level.
    """

    kind: FairnessKind
    bound: float
    positive: int
    levels: tuple[int, int]
    sizes: tuple[int, int]

    @property
    def exact_comparisons(self) -> bool:
        """pystreed's score tolerance cannot merge two different partial scores."""
        return math.lcm(*self.sizes) * PYSTREED_SCORE_TOLERANCE < 1.0

    def describe(self) -> str:
        return f"{self.kind} gap <= {self.bound:g} between two groups of {self.sizes[0]} and {self.sizes[1]} rows"

    def certification_note(self) -> str:
        g0, g1 = self.sizes
        return NOT_CERTIFIED_TOLERANCE.format(g0=g0, g1=g1, lcm=math.lcm(g0, g1))


def fairness_request(data: PatternData, spec: TreeSpec) -> FairnessRequest | None | str:
    """The single supported fairness constraint of ``spec``, None if there is none,
    or an "unsupported: ..." reason."""
    found = []
    for constraint in spec.side_constraints:
        name = str(getattr(constraint, "name", type(constraint).__name__))
        if name not in SUPPORTED_FAIRNESS:
            return UNSUPPORTED_CONSTRAINT.format(name=name)
        found.append(constraint)
    if not found:
        return None
    if len(found) > 1:
        return UNSUPPORTED_SEVERAL.format(names=", ".join(c.name for c in found))
    constraint = found[0]
    kind: FairnessKind = constraint.name
    if data.n_classes != 2:
        return UNSUPPORTED_CLASSES.format(n=data.n_classes)
    own = getattr(constraint, "pos_label", None)
    positive = own if own is not None else spec.pos_label
    if positive is None:
        return UNSUPPORTED_NO_POSITIVE.format(kind=kind)
    if data.group is None:
        return UNSUPPORTED_NO_GROUP.format(kind=kind)
    rows_per_level = np.bincount(data.group, weights=data.count)
    levels = np.flatnonzero(rows_per_level > 0)
    if levels.size != 2:
        return UNSUPPORTED_GROUP_LEVELS.format(n=int(levels.size))
    eligible = _eligible(data, kind, int(positive))
    sizes = tuple(int(data.count[eligible & (data.group == g)].sum()) for g in levels)
    for g, size in zip(levels, sizes):
        if size == 0:
            return UNSUPPORTED_EMPTY_GROUP.format(level=int(g), kind=kind)
    return FairnessRequest(
        kind=kind, bound=float(constraint.bound), positive=int(positive),
        levels=(int(levels[0]), int(levels[1])), sizes=sizes,  # type: ignore[arg-type]
    )


def _eligible(data: PatternData, kind: FairnessKind, positive: int) -> np.ndarray:
    if kind == "statistical_parity":
        return np.ones(data.n_patterns, dtype=bool)
    return data.y == positive


def exact_gap(data: PatternData, tree: TreeStructure, request: FairnessRequest) -> Fraction:
    """The gap between the two groups' positive-prediction rates, as an exact fraction of row counts."""
    said_pos = tree.predict(data.X) == request.positive
    eligible = _eligible(data, request.kind, request.positive)
    rates = []
    for level, size in zip(request.levels, request.sizes):
        hit = int(data.count[eligible & said_pos & (data.group == level)].sum())
        rates.append(Fraction(hit, size))
    return abs(rates[0] - rates[1])


def satisfies(data: PatternData, tree: TreeStructure, request: FairnessRequest) -> bool:
    """The measured gap is at most the bound (the bound read as the decimal typed)."""
    return exact_gap(data, tree, request) <= Fraction(repr(float(request.bound)))
