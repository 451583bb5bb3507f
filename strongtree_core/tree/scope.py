"""What a solve's certificate ranges over, kept with its record.

A certificate ("no tree does better", "no tree fits", a bound) is a statement about the
trees the search could build: those of a given depth asking the encoding's questions
of the training rows, under the constraints.  When the encoding kept only some of a
numeric column's thresholds, or the ladder of thresholds (``accel/ladder.py``) certified
a thinner set within the time, the statement holds over those thresholds only: a tree
asking another threshold may do better.  :class:`Scope` records the counts that say
which; :func:`strongtree_core.tree.claim.claim` writes the words from it for every surface.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Mapping

BAD_SCOPE = "Not a stored certificate scope: {reason}."


@dataclass(frozen=True)
class Scope:
    """The trees a certificate is about.

    Attributes
    ----------
    depth : int or None
        The depth of the trees searched.
    thresholds : int or None
        Thresholds (``x ≤ t`` questions on ordinal and numeric columns) the search could
        ask; None when no column has thresholds.
    distinct_thresholds : int or None
        The distinct cuts of those columns among the training rows (a tree over all of
        them is as good as one over every real threshold); None when not counted.
    widest_column : int or None
        The most distinct cuts of one column: that many thresholds per numeric column
        keep every cut.
    questions, encoded_questions : int or None
        The binary questions the search could ask, and those of the encoding before the
        ladder of thresholds thinned them to the finest set it certified within the time
        (equal when it did not).
    training_bound : float or None
        The fairness bound the constraint enforced on the training rows (a share; with a
        promise on new rows, the tightened bound); None without a fairness constraint.

    Examples
    --------
    >>> scope = Scope(depth=2, thresholds=16, distinct_thresholds=57, widest_column=57)
    >>> scope.thinned, Scope.from_dict(scope.to_dict()) == scope
    (True, True)
    """

    depth: int | None = None
    thresholds: int | None = None
    distinct_thresholds: int | None = None
    widest_column: int | None = None
    questions: int | None = None
    encoded_questions: int | None = None
    training_bound: float | None = None

    def __post_init__(self) -> None:
        for name in ("depth", "thresholds", "distinct_thresholds", "widest_column", "questions", "encoded_questions"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, bool) or int(value) != value or value < 0:
                    raise ValueError(BAD_SCOPE.format(reason=f"{name} must be a whole number >= 0, got {value!r}"))
                object.__setattr__(self, name, int(value))
        if self.training_bound is not None:
            bound = float(self.training_bound)
            if not math.isfinite(bound) or bound < 0:
                raise ValueError(BAD_SCOPE.format(reason=f"training_bound must be a share >= 0, got {bound!r}"))
            object.__setattr__(self, "training_bound", bound)

    @property
    def ladder_thinned(self) -> bool:
        """The ladder of thresholds certified fewer questions than the encoding had."""
        return (self.questions is not None and self.encoded_questions is not None
                and self.questions < self.encoded_questions)

    @property
    def thinned(self) -> bool:
        """Some distinct cut of a numeric column was not among the thresholds searched (known)."""
        if self.ladder_thinned:
            return True
        return (self.thresholds is not None and self.distinct_thresholds is not None
                and self.thresholds < self.distinct_thresholds)

    @property
    def unknown(self) -> bool:
        """Whether every threshold was searched is not known (thresholds counted, their distinct cuts not)."""
        return self.thresholds is not None and self.distinct_thresholds is None and not self.ladder_thinned

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> "Scope":
        if not isinstance(data, Mapping):
            raise ValueError(BAD_SCOPE.format(reason="not an object"))
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(BAD_SCOPE.format(reason=f"unknown entries {unknown}"))
        return cls(**dict(data))
