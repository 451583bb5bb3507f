"""A solve as a plain value: the weighted patterns, the spec and the engine's settings.

The estimator reads and encodes the table, then hands the engine a :class:`SolveTask`; it runs
where it is (``fit``) or in another process (a sweep's worker), which needs only numpy, the
engine and its compiled kernels: neither pandas nor scikit-learn.  Every field is a plain value
(arrays, numbers, strings, frozen dataclasses), so that a task pickles small and alike
everywhere, and :meth:`SolveTask.run` gives the same :class:`~strongtree_core.engine.routes.Solved`
wherever it runs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from strongtree_core.encoding.patterns import PatternData
    from strongtree_core.engine.routes import Solved
    from strongtree_core.formulation.spec import TreeSpec
    from strongtree_core.progress import Progress
    from strongtree_core.structure import TreeStructure


@dataclass(frozen=True)
class SolveTask:
    """The arguments of :func:`~strongtree_core.engine.routes.solve_tree` but ``progress`` and ``stop``."""

    data: PatternData
    spec: TreeSpec
    formulation: str
    solver: str
    time_limit: float
    threads: int
    n_jobs: int
    exact_search: bool
    heuristic_start: bool
    memory_limit: int | None
    starts: tuple[tuple[str, TreeStructure], ...]
    stated_limit: float

    def run(self, progress: Callable[[Progress], None] | None = None,
            stop: threading.Event | None = None) -> Solved:
        """Solve (raises the engine's errors: infeasible constraints, no tree in time, ...)."""
        from strongtree_core.engine.routes import solve_tree

        return solve_tree(
            self.data, self.spec, formulation=self.formulation, solver=self.solver, time_limit=self.time_limit,
            threads=self.threads, n_jobs=self.n_jobs, exact_search=self.exact_search,
            heuristic_start=self.heuristic_start, memory_limit=self.memory_limit, starts=self.starts,
            stated_limit=self.stated_limit, progress=progress, stop=stop,
        )
