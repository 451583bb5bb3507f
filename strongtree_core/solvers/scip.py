"""SCIP (PySCIPOpt) backend: monolithic models and Benders masters with lazy cuts.

Loading: the arrays are written as an MPS file by HiGHS (from the CSR arrays in
one call) and read by SCIP's own reader; on COMPAS FlowOCT at depth 3 (30,030
rows, 183k non-zeros) this took 0.33 s against 1.9 s for ``addCons`` row by row.
Solving always goes through ``optimizeNogil`` so other threads (the interface)
keep running.  Progress comes from an event handler; Stop calls
``interruptSolve`` from the handler and from a watcher thread (see
:func:`watch_stop`).  SCIP's pip build has no parallel
branch-and-bound: ``threads`` makes no difference.
"""

from __future__ import annotations

import os
import tempfile
import threading
from typing import Any

import numpy as np

from strongtree_core.formulation.arrays import ModelArrays
from strongtree_core.solvers.base import Capabilities, SolveOptions, SolveResult, Status
from strongtree_core.solvers.errors import SolverUnavailableError, import_solver
from strongtree_core.solvers.highs_run import import_highspy, load_arrays, quiet_highs
from strongtree_core.solvers.outcome import check_warm_start, finish
from strongtree_core.solvers.solver_events import ProgressReporter
from strongtree_core.solvers.scip_lazy import install_lazy_cuts

#: SCIP status (``getStatus()``) -> the shared vocabulary; anything else is ERROR.
SCIP_STATUS: dict[str, Status] = {
    "optimal": Status.OPTIMAL,
    "gaplimit": Status.OPTIMAL,  # the requested relative gap was reached
    "timelimit": Status.TIME_LIMIT,
    "infeasible": Status.INFEASIBLE,
    "inforunbd": Status.INFEASIBLE,  # every column here is bounded
    "userinterrupt": Status.INTERRUPTED,
}
#: Seconds between two looks at the Stop event while SCIP solves.
STOP_POLL = 0.05
#: Non-zeros SCIP reads per second, at the slow end of what was measured (1.4-2.6 million
#: through an MPS file on a loaded 2-core machine). The read holds the interpreter and
#: cannot be interrupted: a model that cannot be read in the time left is not started.
READ_NONZEROS_PER_SECOND = 1_000_000
NO_TIME_TO_READ = (
    "SCIP was not started: reading a model of {nnz:,} non-zeros takes about {need:.0f} s, "
    "more than the {left:.1f} s left, and cannot be interrupted"
)


def import_pyscipopt() -> Any:
    """The ``pyscipopt`` module, or :class:`SolverUnavailableError` naming the package."""
    return import_solver("pyscipopt", "SCIP")


def load_scip(scip: Any, model: ModelArrays) -> list:
    """Read ``model`` into ``scip`` through an MPS file; return its variables in
    column order.  The objective offset is left out (added back by the caller)."""
    writer = quiet_highs()
    load_arrays(writer, model, with_offset=False)
    with tempfile.TemporaryDirectory(prefix="strongtree-") as folder:
        path = os.path.join(folder, "model.mps")
        writer.writeModel(path)
        scip.readProblem(path)
    variables = scip.getVars()
    # HiGHS names unnamed columns c0, c1, ...; SCIP may list them in another order.
    order = np.argsort([int(v.name[1:]) for v in variables])
    variables = [variables[k] for k in order]
    if len(variables) != model.n_cols:
        raise RuntimeError(f"SCIP read {len(variables)} variables for {model.n_cols} columns")
    return variables


def _load_or_give_up(scip: Any, model: ModelArrays, options: SolveOptions, reporter: ProgressReporter) -> list | None:
    """:func:`load_scip` in a thread, given up (None) when a stop is requested or
    the time limit passes first: reading a model of millions of non-zeros takes
    seconds that SCIP's own time limit does not count.  A thread given up on
    finishes reading in the background and its model is then dropped."""
    done: dict = {}

    def load() -> None:
        try:
            done["variables"] = load_scip(scip, model)
        except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread
            done["error"] = exc

    thread = threading.Thread(target=load, name="scip-load", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(STOP_POLL)
        stopped = options.stop is not None and options.stop.is_set()
        if thread.is_alive() and (stopped or reporter.elapsed() > options.time_limit):
            return None
    if "error" in done:
        raise done["error"]
    return done["variables"]


def make_progress_handler(pyscipopt: Any, variables: list, offset: float, reporter: ProgressReporter, stop, errors: list[str]) -> Any:
    """An ``Eventhdlr`` sending progress (throttled), new incumbents and Stop."""
    E = pyscipopt.SCIP_EVENTTYPE

    class ProgressEvents(pyscipopt.Eventhdlr):
        def eventinit(self):
            for kind in (E.BESTSOLFOUND, E.DUALBOUNDIMPROVED, E.NODESOLVED, E.LPSOLVED):
                self.model.catchEvent(kind, self)

        def eventexit(self):
            for kind in (E.BESTSOLFOUND, E.DUALBOUNDIMPROVED, E.NODESOLVED, E.LPSOLVED):
                self.model.dropEvent(kind, self)

        def eventexec(self, event):
            try:
                scip = self.model
                if stop is not None and stop.is_set():
                    try:
                        scip.interruptSolve()
                    except Exception:  # noqa: BLE001 - not allowed in this stage: the stop watcher retries
                        pass
                    return {}
                bound = scip.getDualbound() + offset
                nodes = scip.getNNodes()
                if event.getType() == E.BESTSOLFOUND:
                    # getPrimalbound() is not yet updated inside this event.
                    sol = scip.getBestSol()
                    x = np.array([scip.getSolVal(sol, v) for v in variables])
                    reporter.incumbent(x, scip.getSolObjVal(sol) + offset, bound, nodes)
                elif reporter.due():
                    objective = scip.getPrimalbound() + offset if scip.getNSols() else None
                    reporter.tick(objective, bound, nodes)
            except Exception as exc:  # noqa: BLE001 - an exception here aborts the solve
                errors.append(f"progress handler: {type(exc).__name__}: {exc}")
            return {}

    return ProgressEvents()


def watch_stop(scip: Any, stop: threading.Event | None) -> threading.Event:
    """Call ``interruptSolve`` from a watcher thread as soon as ``stop`` is set.

    The event handler alone can miss a Stop for many seconds (18 s measured)
    while SCIP is in a phase without events; the call only sets SCIP's
    interrupt flag.  Set the returned event to end the watcher.
    """
    done = threading.Event()
    if stop is None:
        return done

    def watch() -> None:
        while not done.wait(STOP_POLL):
            if stop.is_set():
                try:
                    scip.interruptSolve()
                    return
                except Exception:  # noqa: BLE001 - not allowed in this stage yet: retry
                    continue

    threading.Thread(target=watch, name="scip-stop-watcher", daemon=True).start()
    return done


class ScipBackend:
    """SCIP through PySCIPOpt."""

    name = "scip"
    package = "pyscipopt"

    def available(self) -> tuple[bool, str]:
        try:
            pyscipopt = import_pyscipopt()
            import_highspy()
        except SolverUnavailableError as exc:
            return False, str(exc)
        return True, f"SCIP (PySCIPOpt {pyscipopt.__version__}, open source)"

    def capabilities(self) -> Capabilities:
        return Capabilities(lazy_constraints=True, warm_start=True, progress=True, interrupt=True, multithreaded=False)

    def solve(self, model: ModelArrays, options: SolveOptions) -> SolveResult:
        pyscipopt = import_pyscipopt()
        reporter = ProgressReporter(options.progress, model.sense)
        errors: list[str] = []
        left = options.time_limit - reporter.elapsed()
        need = model.A.nnz / READ_NONZEROS_PER_SECOND
        if need > left:
            return SolveResult(Status.TIME_LIMIT_NO_TREE, backend=self.name, runtime=reporter.elapsed(),
                               message=NO_TIME_TO_READ.format(nnz=model.A.nnz, need=need, left=max(left, 0.0)))
        scip = pyscipopt.Model()
        scip.hideOutput(not options.verbose)
        variables = _load_or_give_up(scip, model, options, reporter)
        if variables is None:
            status = Status.INTERRUPTED if options.stop is not None and options.stop.is_set() else Status.TIME_LIMIT_NO_TREE
            return SolveResult(status, backend=self.name, runtime=reporter.elapsed(),
                               message="stopped while SCIP was reading the model")
        if model.branch_priority is not None:
            for j in np.flatnonzero(model.branch_priority):
                scip.chgVarBranchPriority(variables[j], int(model.branch_priority[j]))
        offset = float(model.obj_offset)
        handler = None
        if model.separator is not None:
            handler = install_lazy_cuts(pyscipopt, scip, model, variables, errors)
        scip.includeEventhdlr(
            make_progress_handler(pyscipopt, variables, offset, reporter, options.stop, errors),
            "strongtree_progress", "progress events and Stop",
        )
        scip.setParam("limits/gap", float(options.mip_gap))
        start, start_note = check_warm_start(model, options.warm_start)
        if start is not None:
            sol = scip.createSol()
            for v, value in zip(variables, start):
                scip.setSolVal(sol, v, float(value))
            accepted = scip.addSol(sol)
            start_note += "" if accepted else " (SCIP rejected it)"
            # Solutions added before the solve fire no event: report it here.
            reporter.incumbent(start, model.objective(start), None, 0)
        scip.setParam("limits/time", max(options.time_limit - reporter.elapsed(), 1e-3))
        watcher = watch_stop(scip, options.stop)
        try:
            with reporter.heartbeat():
                scip.optimizeNogil()
        finally:
            watcher.set()
        name = scip.getStatus()
        status = SCIP_STATUS.get(name, Status.ERROR)
        x = None
        if scip.getNSols() > 0:
            best = scip.getBestSol()
            x = np.array([scip.getSolVal(best, v) for v in variables])
        bound = scip.getDualbound() + offset if status != Status.INFEASIBLE else None
        message = "" if status != Status.ERROR else f"SCIP ended with status {name!r}."
        if errors:
            status = Status.ERROR
            message = (message + " " if message else "") + "Callback error: " + errors[0]
        n_cuts = handler.n_cuts if handler is not None else 0
        nodes = scip.getNNodes()
        scip.freeProb()
        return finish(
            model,
            self.name,
            status,
            x,
            bound,
            reporter,
            nodes=nodes,
            message=message,
            n_cuts=n_cuts,
            extra={"solver_status": name, "warm_start": start_note},
        )
