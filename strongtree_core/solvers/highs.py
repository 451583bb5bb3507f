"""HiGHS (highspy) backend: monolithic models, and Benders masters by re-solving.

HiGHS's lazy-constraint callback is never called from Python (the solve then
returns a wrong optimum), so a Benders master is solved by the loop in
:mod:`strongtree_core.solvers.highs_benders` and ``lazy_constraints`` is False.
HiGHS runs one solve at a time per process (see :mod:`highs_run`).
"""

from __future__ import annotations

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import Capabilities, SolveOptions, SolveResult, Status
from strongtree_core.solvers.errors import SolverUnavailableError
from strongtree_core.solvers.highs_run import HIGHS_BUSY, HighsSession, import_highspy, new_highs, run_highs
from strongtree_core.solvers.outcome import check_warm_start, finish
from strongtree_core.solvers.solver_events import ProgressReporter


class HighsBackend:
    """The HiGHS MIP solver through highspy."""

    name = "highs"
    package = "highspy"

    def available(self) -> tuple[bool, str]:
        try:
            highspy = import_highspy()
        except SolverUnavailableError as exc:
            return False, str(exc)
        return True, f"HiGHS {highspy.HIGHS_VERSION_MAJOR}.{highspy.HIGHS_VERSION_MINOR} (open source)"

    def capabilities(self) -> Capabilities:
        return Capabilities(lazy_constraints=False, warm_start=True, progress=True, interrupt=True)

    def solve(self, model: ModelArrays, options: SolveOptions) -> SolveResult:
        """Solve ``model``; a Benders master goes through the re-solve loop."""
        reporter = ProgressReporter(options.progress, model.sense)
        with HighsSession(wait=options.time_limit) as session:
            if not session.acquired:
                return finish(model, self.name, Status.ERROR, None, None, reporter, message=HIGHS_BUSY)
            with reporter.heartbeat():
                if model.separator is not None:
                    from strongtree_core.solvers.highs_benders import solve_by_resolving

                    return solve_by_resolving(model, options, reporter, session, self.name)
                return self._solve_monolithic(model, options, reporter, session)

    def _solve_monolithic(
        self, model: ModelArrays, options: SolveOptions, reporter: ProgressReporter, session: HighsSession
    ) -> SolveResult:
        h = new_highs(model, options)
        start, start_note = check_warm_start(model, options.warm_start)
        if start is not None:
            reporter.incumbent(start, model.objective(start), None, 0)
        errors: list[str] = []

        def on_tick(out) -> None:
            reporter.tick(out.mip_primal_bound, out.mip_dual_bound, out.mip_node_count)

        def on_incumbent(x, out) -> None:
            reporter.incumbent(x, model.objective(x), out.mip_dual_bound, out.mip_node_count)

        def attempt(highs, first_incumbent):
            return run_highs(
                highs,
                session,
                time_limit=options.time_limit - reporter.elapsed(),
                stop=options.stop,
                on_tick=on_tick,
                on_incumbent=on_incumbent,
                errors=errors,
                start=first_incumbent,
            )

        run = attempt(h, start)
        if start is not None and not _returns_its_objective(model, run) and not run.abandoned:
            # HiGHS 1.16 was seen to report an optimum while returning the start
            # vector: when the returned vector does not have the reported value,
            # solve again without the start.
            run = attempt(new_highs(model, options), None)
        message = "" if run.status != Status.ERROR else f"HiGHS ended with status {run.status_name!r}."
        if run.abandoned:
            message = run.status_name + "."
        if errors:
            message = (message + " " if message else "") + "Callback error: " + errors[0]
        return finish(
            model,
            self.name,
            run.status,
            run.x,
            run.bound if not run.abandoned else reporter.last_bound,
            reporter,
            nodes=run.nodes,
            message=message,
            extra={"solver_status": run.status_name, "warm_start": start_note},
        )


def _returns_its_objective(model: ModelArrays, run) -> bool:
    if run.x is None or run.objective is None:
        return True
    return abs(model.objective(run.x) - run.objective) <= 1e-6 * max(1.0, abs(run.objective))
