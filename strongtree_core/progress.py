"""The one progress event, from the engine to the screen.

The engine sends :class:`Progress` with ``tree`` the incumbent's
:class:`~strongtree_core.structure.TreeStructure`; the estimator passes the
same event on with ``tree`` made a :class:`~strongtree_core.tree.FittedTree`
(in the table's own terms).  Solver backends report raw solution vectors
(``solvers.ProgressEvent``), which the engine decodes into this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Progress:
    """A snapshot of a solve.

    Attributes
    ----------
    elapsed : float
        Seconds since the solve started.
    objective, bound : float or None
        The incumbent's value and the proven upper bound, in the objective's
        units (weighted correct rows for accuracy).
    gap : float or None
        ``(bound - objective) / objective``.
    nodes : int
        Work done: branch-and-bound nodes of the MIO, or partial trees and
        subproblems of the exact search.
    tree : TreeStructure, FittedTree or None
        The incumbent, only when it just changed.
    message : str
        What happened ("new incumbent", "bound", "searching", "warm start: CART", ...).
    stage : str
        In a fit made of several fits (a promise on new rows), which one this event is of, in
        words ("fit at the training bound 2.31 pp", "half-sample refit 3 of 10"); "" otherwise.
        ``elapsed`` then counts from the start of the whole fit, and an internal fit's last
        event says "stage done", not "certified optimal".
    reading : Reading or None
        While a table too large for memory is read where it lies (out of core, or on a
        cluster): rows read, patterns so far, memory in use.  None during a solve.
    """

    elapsed: float
    objective: float | None
    bound: float | None
    gap: float | None
    nodes: int
    tree: Any = None
    message: str = ""
    stage: str = ""
    reading: "Reading | None" = None


@dataclass(frozen=True)
class Reading:
    """How far the reading of a table is (a pass over its rows, out of core or on a cluster).

    Attributes
    ----------
    stage : str
        The pass: "scan" (column kinds, groups, classes), "thresholds" (the numbers'
        histograms) or "patterns" (the rows merged into weighted patterns).
    rows_read, rows_total : int
        Rows of this pass read so far, and in all (``rows_total`` 0 when not known).
    patterns : int
        Distinct patterns so far (the "patterns" pass), else 0.
    memory : int
        Bytes of memory in use: this process's, or on a cluster the largest worker's.
    """

    stage: str
    rows_read: int
    rows_total: int = 0
    patterns: int = 0
    memory: int = 0


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|bound - objective| / max(|objective|, 1e-9)``, or None when either is unknown (or infinite)."""
    if objective is None or bound is None or not math.isfinite(objective) or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(abs(objective), 1e-9)
