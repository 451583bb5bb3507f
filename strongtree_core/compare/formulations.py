"""The paper's comparison on one table: every formulation on the same data, side by side.

OCT, BinOCT, FlowOCT and BendersOCT each solve the table alone (no exact
search behind them, as in the paper), then the exact search and the local
search; each run keeps its record (model size, LP relaxation, time, nodes,
Benders cuts, status) and its tree, and every run's value is set against the
best certified one.  A formulation that cannot take the settings keeps its
refusal in words instead of a record.  This is what a teaching page shows:
one call, then one table row per run (:meth:`FormulationRun.row`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from strongtree_core import vocabulary
from strongtree_core.tree.claim import claim
from strongtree_core.errors import StrongTreeError
from strongtree_core.estimator.classifier import StrongTreeClassifier
from strongtree_core.progress import Progress
from strongtree_core.compare.root_lp import RootLP
from strongtree_core.tree import FittedTree, SolveRecord

#: The runs of a comparison, in the order the paper introduces them.
COMPARED: tuple[str, ...] = ("oct", "binoct", "flow", "benders", "auto", "local_search")


@dataclass(frozen=True)
class FormulationRun:
    """One formulation's run on the table.

    Attributes
    ----------
    formulation : str
        The vocabulary word (``"oct"``, ..., ``"auto"`` for the exact search).
    label : str
        Its name for people (``vocabulary.FORMULATIONS``).
    record : SolveRecord or None
        None when the formulation refused the settings or the solve failed.
    tree : FittedTree or None
    error : str
        Why there is no record (a refusal in words, or why a stopped run has no
        tree), else "".
    stopped : bool
        Stop came before this run had a tree (its row says "interrupted", not "refused").
    gap_to_optimum : float or None
        ``(optimum - objective) / optimum`` against the best certified objective
        of the comparison (0 for a run that found it); None when no run
        certified an optimum or this run has no tree.
    """

    formulation: str
    label: str
    record: SolveRecord | None
    tree: FittedTree | None
    error: str = ""
    gap_to_optimum: float | None = None
    stopped: bool = False
    root_bound: float | None = None

    @property
    def lp_bound(self) -> float | None:
        """The formulation's LP bound: the comparison's root LP (solved with its own time
        box), else the run's own (which gets only a share of the run's time)."""
        if self.root_bound is not None:
            return self.root_bound
        return None if self.record is None else self.record.lp_bound

    def row(self) -> dict[str, Any]:
        """Plain values for one table row (None where a value does not apply); ``claim`` and
        ``claim_words`` are :func:`~strongtree_core.tree.claim.claim`'s label and words for the run's
        outcome (over the thresholds the encoding kept: "Optimal over kept thresholds" where it
        left some cut out)."""
        r = self.record
        if r is None:
            status = "interrupted" if self.stopped else "refused" if self.error else "failed"
            return {"formulation": self.label, "status": status, "note": self.error}
        said = claim(r)
        return {
            "formulation": self.label,
            "status": r.status,
            "claim": said.label,
            "claim_words": said.words,
            "certified": r.certified,
            "variables": r.n_variables or None,
            "constraints": r.n_constraints or None,
            "nonzeros": r.n_nonzeros or None,
            "lp_bound": self.lp_bound,
            "objective": r.objective,
            "bound": r.bound,
            "gap": r.gap,
            "gap_to_optimum": self.gap_to_optimum,
            "seconds": r.runtime,
            "nodes": r.nodes,
            "cuts": r.n_cuts,
            "backend": r.backend,
            "note": r.choice,
        }


def compare_formulations(
    X,
    y,
    *,
    depth: int = 2,
    formulations: Sequence[str] = COMPARED,
    time_limit: float = 60.0,
    solver: str = "auto",
    solvers: Mapping[str, str] | None = None,
    heuristic_start: bool = False,
    progress: Callable[[str, Progress], None] | None = None,
    stop: threading.Event | None = None,
    sample_weight=None,
    root_lp: RootLP | None = None,
    **params: Any,
) -> list[FormulationRun]:
    """Fit every formulation in ``formulations`` on (X, y), one after the other.

    Parameters
    ----------
    X, y, sample_weight
        As for :meth:`StrongTreeClassifier.fit`.
    depth, time_limit, solver, **params
        Passed to every :class:`StrongTreeClassifier` (``time_limit`` is per run;
        ``solver`` applies to the MIO formulations).
    solvers : mapping of str to str, optional
        A backend for some formulations (``{"flow": "highs", "benders": "scip"}``),
        in place of ``solver`` for those.
    heuristic_start : bool, default=False
        Whether the MIO formulations start from CART; False measures each
        formulation alone, as the paper's comparison does.
    progress : callable, optional
        ``progress(formulation, event)`` during each run (as ``fit``'s progress).
    stop : threading.Event, optional
        Stops the current run (it keeps its best tree) and skips the rest.
    root_lp : RootLP, optional
        The root LPs of these formulations on this table (:func:`strongtree_core.compare.root_lp.root_relaxations`,
        same parameters): each run's LP bound is taken from it where it has one.

    Returns
    -------
    list of FormulationRun, in the order of ``formulations``.
    """
    fitted: list[tuple[str, StrongTreeClassifier | None, str, bool]] = []
    for word in formulations:
        if stop is not None and stop.is_set():
            break
        mio = word in vocabulary.MIO_FORMULATIONS
        clf = StrongTreeClassifier(
            depth=depth, formulation=word, solver=(solvers or {}).get(word, solver) if mio else "auto",
            time_limit=time_limit,
            exact_search=not mio, heuristic_start=heuristic_start or not mio, **params,
        )
        relay = None if progress is None else (lambda event, word=word: progress(word, event))
        try:
            clf.fit(X, y, sample_weight=sample_weight, progress=relay, stop=stop)
        except StrongTreeError as err:
            fitted.append((word, None, str(err), stop is not None and stop.is_set()))
            continue
        fitted.append((word, clf, "", False))
    root = {} if root_lp is None else {r.formulation: r.value for r in root_lp.relaxations}
    certified = [clf.record_.objective for _, clf, _, _ in fitted if clf is not None and clf.record_.certified]
    optimum = max(certified) if certified else None
    runs = []
    for word, clf, error, stopped in fitted:
        gap = None
        if clf is not None and optimum is not None and clf.record_.objective is not None:
            gap = max(0.0, (optimum - clf.record_.objective) / max(abs(optimum), 1e-9))
        runs.append(FormulationRun(
            word, vocabulary.FORMULATIONS[word], None if clf is None else clf.record_,
            None if clf is None else clf.tree_, error, gap, stopped, root.get(word),
        ))
    return runs
