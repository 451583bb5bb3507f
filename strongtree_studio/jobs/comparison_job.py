"""The Learn page's job: every formulation of the paper on one small table, in a
solve worker (:mod:`strongtree_studio.jobs.worker`), so it survives page changes, can be stopped,
and takes one of the server's solve slots like any solve.

The worker runs :func:`strongtree_core.compare.formulations.compare_formulations` and sends
the registry's usual messages, with two conventions of its own:

* ``progress`` messages carry, as ``message``, the formulation word of the run
  they belong to (``"oct"``, ``"flow"``, ...), and their ``elapsed`` counts from
  that run's start;
* the ``result`` message's ``tree`` is the JSON of :class:`ComparisonResult`
  (one row per run, :meth:`strongtree_core.compare.formulations.FormulationRun.row`).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from strongtree_core.compare.formulations import COMPARED
from strongtree_studio.jobs.protocol import Outbox, Phases, crash_message, finite_number

#: Most rows a comparison takes (a random sample above it): OCT and BinOCT grow with
#: rows x binary features and, at depth 3, rarely finish within a short limit beyond it.
MAX_ROWS = 200
#: Thresholds per numeric column (the estimator's ``n_buckets``): few, so the MIOs stay small.
N_BUCKETS = 4
#: Seconds allowed per run beyond its time limit (encoding, building, the LP relaxation).
RUN_OVERHEAD = 5.0
#: Seconds each root LP may take (solved once per MIO formulation before the runs, for the
#: LP bounds and the drawing of the root LP): about 1.5 s for all four on 200 rows at depth 2.
ROOT_LP_SECONDS = 20.0
#: Seconds between two progress messages that change nothing shown.
PROGRESS_INTERVAL = 0.2


@dataclass(frozen=True)
class CompareSpec:
    """A comparison for a worker (picklable): the rows, the depth and the settings every run shares."""

    X: pd.DataFrame
    y: pd.Series
    depth: int
    time_limit: float
    regularization: float = 0.0
    formulations: tuple[str, ...] = COMPARED
    n_buckets: int = N_BUCKETS
    #: (formulation, backend) pairs that fix a backend for some runs (the others choose their own).
    solvers: tuple[tuple[str, str], ...] = ()
    baseline_params: None = None  # a comparison has no second phase

    def time_budget(self) -> float:
        """Seconds the comparison may take: every run at its time limit, plus a little each."""
        from strongtree_core.compare.root_lp import READABLE

        # Each root LP may wait for HiGHS and then solve, each within ROOT_LP_SECONDS (about 1.5 s for all
        # four in practice): the budget is the hang limit, not the expected time.
        root = 2 * ROOT_LP_SECONDS * sum(word in READABLE for word in self.formulations)
        return len(self.formulations) * (self.time_limit + RUN_OVERHEAD) + root

    def run(self, outbox: Outbox, phases: Phases) -> None:
        """Every formulation, one after another (:func:`run_comparison`)."""
        run_comparison(self, outbox, phases.event)


@dataclass(frozen=True)
class ComparisonResult:
    """What a finished (or stopped) comparison reports."""

    rows: tuple[dict[str, Any], ...]
    n_rows: int
    formulations: tuple[str, ...] = field(default=COMPARED)
    #: The root LPs (:meth:`strongtree_core.compare.root_lp.RootLP.to_dict`), when they were solved.
    root: dict[str, Any] | None = None

    def to_json(self) -> str:
        return json.dumps({"rows": list(self.rows), "n_rows": self.n_rows, "formulations": list(self.formulations),
                           "root": self.root}, default=_plain)

    @classmethod
    def from_json(cls, text: str) -> ComparisonResult:
        data = json.loads(text)
        return cls(tuple(data["rows"]), int(data["n_rows"]), tuple(data["formulations"]), data.get("root"))


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (for JSON)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON-ready: {type(value).__name__}")


_number = finite_number


class _RunProgress:
    """``compare_formulations``' progress callback: sends each run's best value and bound
    as they change (reports that change nothing are thinned to one per PROGRESS_INTERVAL)."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox
        self._last: tuple = ()
        self._sent = 0.0

    def __call__(self, word: str, event: Any) -> None:
        shown = (word, _number(event.objective), _number(event.bound))
        now = time.monotonic()
        if shown == self._last and now - self._sent < PROGRESS_INTERVAL:
            return
        self._last, self._sent = shown, now
        self._outbox.send({
            "kind": "progress", "phase": "main", "elapsed": float(event.elapsed), "objective": shown[1],
            "bound": shown[2], "gap": _number(event.gap), "nodes": int(event.nodes or 0), "message": word,
            "tree": None,
        })


def run_comparison(spec: CompareSpec, outbox: Any, stop: threading.Event) -> None:
    """Worker side: compare the formulations, report each run's progress, then every row.

    A run a formulation refuses keeps its refusal in its row; Stop ends the running
    run (its best tree is kept) and skips the rest.
    """
    from strongtree_core import StrongTreeError
    from strongtree_core.compare.formulations import compare_formulations
    from strongtree_core.encoding import EncodingError
    from strongtree_core.compare.root_lp import READABLE, root_relaxations

    try:
        readable = [word for word in spec.formulations if word in READABLE]
        root = None if not readable else root_relaxations(
            spec.X, spec.y, depth=spec.depth, formulations=readable, time_limit=ROOT_LP_SECONDS,
            regularization=spec.regularization, n_buckets=spec.n_buckets, stop=stop)
        runs = compare_formulations(
            spec.X, spec.y, depth=spec.depth, formulations=spec.formulations, time_limit=spec.time_limit,
            regularization=spec.regularization, n_buckets=spec.n_buckets, solvers=dict(spec.solvers),
            progress=_RunProgress(outbox), stop=stop, root_lp=root,
        )
    except (StrongTreeError, EncodingError) as err:  # the user can fix these: the message says how
        outbox.send({"kind": "error", "phase": "main", "message": str(err), "user_error": True})
        return
    except Exception as err:  # noqa: BLE001 - the process boundary: any failure becomes a message
        traceback.print_exc(file=sys.stderr)
        outbox.send({"kind": "error", "phase": "main", "message": crash_message(err), "user_error": False})
        return
    rows = tuple({**run.row(), "word": run.formulation} for run in runs)
    result = ComparisonResult(rows, len(spec.y), tuple(spec.formulations), None if root is None else root.to_dict())
    outbox.send({"kind": "result", "phase": "main", "tree": result.to_json()})
