"""A sweep's process worker: it runs the engine's tasks, and loads nothing else.

The process that started the sweep reads and encodes the table and measures the trees
(:func:`strongtree_core.sweep.point.plan_point`, :func:`~strongtree_core.sweep.point.finish_point`);
a worker receives a :class:`~strongtree_core.engine.task.SolveTask` (arrays and plain settings) and
returns an :class:`Answer`.  Importing this module, and unpickling a task and a relay, loads numpy,
the engine and its compiled kernels: neither pandas, scikit-learn nor scipy
(``tests/test_sweep_plain.py`` checks it).  A solve that needs more loads it itself (``scipy.sparse``
and a solver for a MIO, HiGHS alone for the Lagrangian bound's cutting planes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from strongtree_core.errors import StrongTreeError

if TYPE_CHECKING:
    from strongtree_core.engine.routes import Solved
    from strongtree_core.engine.task import SolveTask


@dataclass(frozen=True)
class Answer:
    """What a worker returns for one task.

    Attributes
    ----------
    solved : Solved or None
        The engine's tree and record (None when the solve raised).
    error : StrongTreeError or None
        The engine's refusal (infeasible constraints, no tree in time, too large ...).
    fault : tuple of (str, str) or None
        Any other exception, as (its type's name, its text): a fault of one point is reported in its row.
    seconds : float
        Wall time of the solve.
    """

    solved: Solved | None
    error: StrongTreeError | None = None
    fault: tuple[str, str] | None = None
    seconds: float = 0.0


#: The BLAS and OpenMP threads this worker was held to (once per process).
_LIMITED: list[int] = []


def solve_task(task: SolveTask, relay, threads: int, credentials: Mapping[str, str] | None = None) -> Answer | None:
    """Run ``task`` in this worker; None when Stop came before it started.

    ``relay``: the sweep's Stop (:mod:`strongtree_core.relays`); ``threads``: the BLAS and OpenMP
    threads this worker keeps (the cores split between the workers); ``credentials``: the caller's
    Gurobi licence settings."""
    if relay.is_set():
        return None
    if not _LIMITED:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)  # for good: this process is a worker
        _LIMITED.append(threads)
    if credentials:
        from strongtree_core.solvers.licence import apply_credentials

        apply_credentials(credentials)
    started = time.perf_counter()
    try:
        with relay.watching() as stop:
            solved = task.run(stop=stop)
    except StrongTreeError as exc:
        return Answer(None, error=exc, seconds=time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - reported in the point's row, the other points go on
        return Answer(None, fault=(type(exc).__name__, str(exc)), seconds=time.perf_counter() - started)
    return Answer(solved, seconds=time.perf_counter() - started)
