"""The solver boundary: arrays in, one result type and progress events out.

Every backend reads only a :class:`~strongtree_core.formulation.arrays.ModelArrays`
and returns a :class:`SolveResult` with a status from one vocabulary.  What a
backend can do is declared as :class:`Capabilities` data, never tested with
``if solver == ...``.
"""

from __future__ import annotations

import enum
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.progress import relative_gap  # noqa: F401  (re-exported for the backends)


class Status(str, enum.Enum):
    """How a solve ended.

    Examples
    --------
    >>> from strongtree_core.solvers import Status
    >>> Status.TIME_LIMIT.value, Status.TIME_LIMIT.has_solution
    ('time_limit', True)
    """

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"  # stopped by the time limit with a tree
    TIME_LIMIT_NO_TREE = "time_limit_no_tree"  # stopped by the time limit before any tree
    INFEASIBLE = "infeasible"
    INTERRUPTED = "interrupted"  # stopped by the user (Stop), best tree kept
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        """Whether a solve that ended so returns a tree (optimal, time limit or interrupted)."""
        return self in (Status.OPTIMAL, Status.TIME_LIMIT, Status.INTERRUPTED)


class StopOrDeadline:
    """A stop request that is also set once the clock passes a deadline, and says which ended a run.

    Backends only ask ``is_set()``; a backend that stops because of it reports
    :func:`stop_status` (``INTERRUPTED`` when the user asked, ``TIME_LIMIT`` when the
    deadline passed), so no caller has to read a solver's words to learn why.

    Parameters
    ----------
    stop : threading.Event or None
        The user's stop request.
    at : float
        The deadline, in :func:`time.perf_counter` seconds.
    """

    def __init__(self, stop: threading.Event | None, at: float) -> None:
        self.stop, self.at = stop, at

    def by_user(self) -> bool:
        """Whether the user asked to stop."""
        return self.stop is not None and self.stop.is_set()

    def is_set(self) -> bool:
        return self.by_user() or time.perf_counter() >= self.at


def stop_status(stop: object) -> "Status":
    """How a run that ``stop`` ended counts: ``TIME_LIMIT`` when it is a :class:`StopOrDeadline`
    whose deadline passed without the user asking, else ``INTERRUPTED``."""
    if isinstance(stop, StopOrDeadline) and not stop.by_user():
        return Status.TIME_LIMIT
    return Status.INTERRUPTED


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports, as data.

    Examples
    --------
    >>> from strongtree_core.solvers import BACKENDS
    >>> BACKENDS['highs'].capabilities().lazy_constraints
    False
    """

    lazy_constraints: bool
    warm_start: bool
    progress: bool
    interrupt: bool
    #: Largest model the installed licence accepts (None: unlimited).
    max_variables: int | None = None
    max_constraints: int | None = None
    #: Whether ``SolveOptions.threads`` > 1 makes a difference.
    multithreaded: bool = True


@dataclass(frozen=True)
class ProgressEvent:
    """A snapshot during a solve; ``incumbent`` is the solution vector when a new
    best solution was just found (else None).

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
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.solvers import SolveOptions, solve
    >>> events = []
    >>> result = solve(built.arrays, 'highs', SolveOptions(time_limit=10, progress=events.append))
    >>> all(type(e).__name__ == 'ProgressEvent' for e in events)
    True
    """

    elapsed: float
    objective: float | None
    bound: float | None
    gap: float | None
    nodes: int
    incumbent: np.ndarray | None = None


ProgressCallback = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class SolveOptions:
    """Options every backend honours.

    Parameters
    ----------
    time_limit : float
        Seconds.
    threads : int
        Solver threads (default 1: one core is left for the interface).
    warm_start : ndarray or None
        A feasible solution vector offered as the first incumbent.
    progress : callable or None
        Receives :class:`ProgressEvent` at least every 0.5 s while branching
        where the solver allows, and at every new incumbent.
    stop : threading.Event or None
        When set from another thread the solve stops and returns the best
        solution with status INTERRUPTED.
    mip_gap : float
        Relative gap at which the solve counts as optimal.
    verbose : bool

    Examples
    --------
    >>> from strongtree_core.solvers import SolveOptions
    >>> SolveOptions(time_limit=5, threads=2).time_limit
    5
    """

    time_limit: float = 60.0
    threads: int = 1
    warm_start: np.ndarray | None = None
    progress: ProgressCallback | None = None
    stop: threading.Event | None = None
    mip_gap: float = 1e-6
    verbose: bool = False


@dataclass(frozen=True)
class SolveResult:
    """What every backend returns.

    ``x`` is None unless ``status.has_solution``.  ``objective`` and ``bound``
    are in the model's own sense and units; ``gap`` is relative
    (``|bound - objective| / max(|objective|, 1e-9)``), None when unknown.

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
    >>> built = build_model(data, TreeSpec(depth=1), 'flow')
    >>> from strongtree_core.solvers import SolveOptions, solve
    >>> result = solve(built.arrays, 'highs', SolveOptions(time_limit=10))
    >>> type(result).__name__, result.status.has_solution
    ('SolveResult', True)
    """

    status: Status
    backend: str
    x: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    runtime: float = 0.0
    nodes: int = 0
    message: str = ""
    n_cuts: int = 0
    extra: dict = field(default_factory=dict)


class Backend(Protocol):
    """A solver backend."""

    name: str

    def available(self) -> tuple[bool, str]:
        """(usable, reason in words)."""
        ...

    def capabilities(self) -> Capabilities: ...

    def solve(self, model: ModelArrays, options: SolveOptions) -> SolveResult: ...

