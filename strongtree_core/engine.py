"""Solve a :class:`TreeSpec` on weighted patterns: choose the route, offer a
warm start, run the backend, read back and re-score the tree.

This is the table-free core shared by the estimator, the CLI and the
benchmarks.  Routes:

* ``dp``: the exact dynamic program (pystreed) for the problems it solves
  exactly; its tree is re-scored here before it is believed;
* ``enumeration``: exhaustive search over every tree of depth 1 or 2, for any
  objective and side constraint (``accel/enumeration.py``); a search cut short
  by its time budget still proves a bound, used as the MIO's objective cap;
* ``flow``: FlowOCT (eq. 1, 7 or 11, chosen by :func:`build_model`);
* ``benders``: the BendersOCT master with lazy cuts (Algorithms 1-2).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Literal

import numpy as np

from strongtree_core.accel.enumeration import enumerate_solve
from strongtree_core.accel.enumeration import supported as enumeration_refusal
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.errors import StrongTreeError
from strongtree_core.formulation import BuiltModel, TreeSpec, TreeStructure, build_model
from strongtree_core.formulation.arrays import with_objective_cap
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.solvers import SolveOptions, SolverUnavailableError, Status, choose_backend, solve
from strongtree_core.starts import candidate_starts, one_vs_rest_fair_starts

Formulation = Literal["auto", "flow", "benders"]

#: Largest feasibility violation for a warm start to be offered.
START_TOLERANCE = 1e-6

NO_TREE_IN_TIME = (
    "No tree was found within the time limit of {limit:g} s. Raise the time limit, lower the depth, "
    "or relax the constraints."
)
INFEASIBLE = (
    "No tree of depth {depth} satisfies all the constraints together ({names}). {hint}"
)
BENDERS_COUPLED = (
    "BendersOCT cannot enforce {names}: these constraints couple datapoints (paper, Section 4.4). "
    "Use formulation='flow' or 'auto'."
)


@dataclass(frozen=True)
class EngineProgress:
    """One progress snapshot: objective and bound in the model's units."""

    elapsed: float
    objective: float | None
    bound: float | None
    gap: float | None
    nodes: int
    structure: TreeStructure | None
    message: str = ""


@dataclass(frozen=True)
class EngineResult:
    """A solved tree with the record of how it was obtained."""

    structure: TreeStructure
    status: str
    objective: float
    bound: float | None
    gap: float | None
    runtime: float
    backend: str
    formulation: str
    method: str
    n_variables: int
    n_constraints: int
    n_rows: int
    n_patterns: int
    build_seconds: float
    message: str
    choice: str
    certified: bool


def _accelerator():
    try:
        from strongtree_core.accel import streed_solve
    except ImportError:  # the optional dependency is missing
        return None
    return streed_solve


def _choose_method(built_flow_free: TreeSpec, formulation: Formulation, solver: str, data: PatternData) -> tuple[str, str]:
    spec = built_flow_free
    if formulation == "benders":
        if spec.couples_datapoints:
            raise StrongTreeError(BENDERS_COUPLED.format(names=_constraint_names(spec)))
        return "benders", "BendersOCT as asked"
    if formulation == "flow":
        return "flow", "FlowOCT as asked"
    if spec.couples_datapoints:
        return "flow", "FlowOCT (the constraints couple datapoints, so Benders' decomposition does not apply)"
    # Benders' master keeps one variable per pattern and no flow rows: it fits
    # Gurobi's size-limited licence where FlowOCT does not, and SCIP runs it with
    # lazy cuts.  FlowOCT on HiGHS is the fallback.
    master = build_model(data, spec, "benders").arrays
    try:
        backend, reason = choose_backend(master, solver)
    except SolverUnavailableError:
        return "flow", "FlowOCT (no backend with lazy constraints is available)"
    if backend.capabilities().lazy_constraints:
        return "benders", f"BendersOCT with lazy cuts on {backend.name}"
    return "flow", f"FlowOCT ({backend.name} has no lazy constraints)"


def _constraint_names(spec: TreeSpec) -> str:
    names = [c.name for c in spec.side_constraints]
    if spec.min_leaf:
        names.append(f"min leaf {spec.min_leaf}")
    if spec.max_branching is not None:
        names.append(f"at most {spec.max_branching} branching nodes")
    if spec.max_features is not None:
        names.append(f"at most {spec.max_features} features")
    if spec.objective != "accuracy":
        names.append(f"objective {spec.objective}")
    return ", ".join(names) or "the tree structure"


def _best_start(built: BuiltModel, data: PatternData, extra: list[tuple[str, TreeStructure]]) -> tuple[str, TreeStructure, np.ndarray] | None:
    best = None
    for name, tree in extra + candidate_starts(data, built.spec.depth):
        x = built.start(tree, data)
        if built.arrays.max_violation(x) > START_TOLERANCE:
            continue
        value = built.arrays.objective(x)
        if best is None or value > best[3] + 1e-9:
            best = (name, tree, x, value)
    return None if best is None else best[:3]


def solve_tree(
    data: PatternData,
    spec: TreeSpec,
    *,
    formulation: Formulation = "auto",
    solver: str = "auto",
    time_limit: float = 60.0,
    threads: int = 1,
    accelerator: bool = True,
    warm_start: bool = True,
    progress: Callable[[EngineProgress], None] | None = None,
    stop: threading.Event | None = None,
) -> EngineResult:
    """Find the best tree for ``spec`` on ``data`` within ``time_limit`` seconds.

    Raises
    ------
    StrongTreeError
        Infeasible constraints, no tree in time, or a backend that cannot take
        the model (licence too small, package missing), with a readable message.
    """
    t0 = time.perf_counter()
    streed = _accelerator() if accelerator else None
    dp_starts: list[tuple[str, TreeStructure]] = []
    dp_note = ""
    objective_cap: float | None = None
    relaxed_optimum: TreeStructure | None = None
    if streed is not None:
        res = streed(data, spec, time_limit=min(time_limit, 30.0) if formulation != "auto" else time_limit)
        if formulation != "auto":
            # A forced MIO still starts from the dynamic program's tree: the solver
            # then has to prove it (a teacher still sees the bound close).
            if res.structure is not None:
                dp_starts.append(("the dynamic program's tree", res.structure))
        else:
            if res.supported and res.certified and res.structure is not None:
                value = tree_objective(data, spec, res.structure)
                if abs(value - res.objective) <= 1e-6 * max(1.0, abs(value)):
                    return _certified_by_dp(res.structure, value, data, t0, progress, f"dynamic programming: {res.reason}")
                dp_note = f"the dynamic program's tree re-scored to {value:g}, not its claimed {res.objective:g}; solved by MIO instead. "
            elif res.status == "infeasible" and res.certified:
                raise StrongTreeError(
                    INFEASIBLE.format(depth=spec.depth, names=_constraint_names(spec), hint=_relaxation_hint(spec))
                )
            else:
                dp_note = f"dynamic programming not used: {res.reason}. "
            if res.structure is not None and not res.certified:
                dp_starts.append(("the dynamic program's tree (not proven optimal)", res.structure))
        # Without its side constraints the problem is often one the dynamic program
        # solves: its optimum is a start to check for feasibility and, being a
        # relaxation, an upper bound on the constrained optimum.
        if spec.side_constraints:
            dp_starts += one_vs_rest_fair_starts(data, spec, streed, time_budget=min(5.0, time_limit / 8))
            relaxed = replace(spec, side_constraints=())
            res = streed(data, relaxed, time_limit=min(10.0, time_limit / 4))
            if res.supported and res.structure is not None:
                dp_starts.append(("optimal tree without the side constraints", res.structure))
                if res.certified:
                    relaxed_value = tree_objective(data, relaxed, res.structure)
                    if abs(relaxed_value - res.objective) <= 1e-6 * max(1.0, abs(relaxed_value)):
                        objective_cap = relaxed_value
                        relaxed_optimum = res.structure

    if accelerator and (formulation == "auto" or warm_start) and not enumeration_refusal(data, spec):
        # Depth 1-2: every tree can be visited.  In auto mode a finished search is
        # the answer (or proves infeasibility); one cut short by its budget still
        # proves that no tree beats the first one it did not check.  A forced MIO
        # only starts from the tree, so that it still has a gap to close.
        elapsed = time.perf_counter() - t0
        budget = max(0.5, (time_limit - elapsed) / 2) if formulation == "auto" else min(10.0, time_limit / 4)

        def searched(n_checked: int, bound: float | None) -> None:
            if progress is not None:
                progress(EngineProgress(time.perf_counter() - t0, None, bound, None, 0, None,
                                        f"exhaustive search: {n_checked:,} trees checked"))

        found = enumerate_solve(data, spec, time_limit=budget, stop=stop, progress=searched)
        if formulation == "auto":
            if found.status == "optimal":
                return _certified_by_search(found.structure, found.objective, data, t0, progress, dp_note + found.reason)
            if found.status == "infeasible":
                raise StrongTreeError(
                    INFEASIBLE.format(depth=spec.depth, names=_constraint_names(spec), hint=_relaxation_hint(spec))
                )
            if found.bound is not None:
                objective_cap = found.bound if objective_cap is None else min(objective_cap, found.bound)
            dp_note += f"exhaustive search {found.reason}. "
        if found.structure is not None:
            dp_starts.insert(0, ("the exhaustive search's optimal tree", found.structure))

    method, why = _choose_method(spec, formulation, solver, data)
    built = build_model(data, spec, method)
    if objective_cap is not None:
        built = replace(built, arrays=with_objective_cap(built.arrays, objective_cap))
    arrays = built.arrays
    if formulation == "auto" and relaxed_optimum is not None:
        # The optimum without the side constraints may already satisfy them: then
        # it is optimal for the constrained problem too (a relaxation's optimum
        # that is feasible), and no search is needed.
        x = built.start(relaxed_optimum, data)
        if arrays.max_violation(x) <= START_TOLERANCE and tree_objective(data, spec, relaxed_optimum) >= objective_cap - 1e-9:
            return _certified_by_dp(
                relaxed_optimum, objective_cap, data, t0, progress,
                "dynamic programming: the optimal tree without the side constraints satisfies them",
            )
    if accelerator and warm_start and spec.depth > 2 and not enumeration_refusal(data, replace(spec, depth=2)):
        # The best tree of depth 2 is a tree of this depth too: under side
        # constraints a start that often beats CART and the single leaves by far.
        found = enumerate_solve(data, replace(spec, depth=2), time_limit=min(10.0, time_limit / 4), stop=stop)
        if found.structure is not None:
            dp_starts.append(("the best tree of depth 2 (exhaustive search)", found.structure.with_depth(spec.depth)))
    start = _best_start(built, data, dp_starts) if warm_start else None
    if progress and start is not None:
        value = arrays.objective(start[2])
        gap = None if objective_cap is None else abs(objective_cap - value) / max(abs(value), 1e-9)
        progress(EngineProgress(time.perf_counter() - t0, value, objective_cap, gap, 0, start[1], f"warm start: {start[0]}"))

    def on_event(ev) -> None:
        if progress is None:
            return
        tree = built.decode(ev.incumbent) if ev.incumbent is not None else None
        bound, gap = ev.bound, ev.gap
        if objective_cap is not None and (bound is None or bound > objective_cap):
            # The relaxation's optimum is a bound the solver has not found yet.
            bound = objective_cap
            gap = None if ev.objective is None else abs(bound - ev.objective) / max(abs(ev.objective), 1e-9)
        progress(EngineProgress(time.perf_counter() - t0, ev.objective, bound, gap, ev.nodes, tree))

    remaining = max(0.5, time_limit - (time.perf_counter() - t0))
    options = SolveOptions(
        time_limit=remaining, threads=threads, warm_start=None if start is None else start[2],
        progress=on_event, stop=stop,
    )
    try:
        result = solve(arrays, solver, options)
    except SolverUnavailableError as exc:
        raise StrongTreeError(str(exc)) from None
    choice = dp_note + why + ". " + str(result.extra.get("choice", ""))
    common = dict(
        runtime=time.perf_counter() - t0, backend=result.backend, formulation=arrays.name, method=method,
        n_variables=arrays.n_cols, n_constraints=arrays.n_rows, n_rows=data.n_rows, n_patterns=data.n_patterns,
        build_seconds=built.build_seconds, choice=choice.strip(),
    )
    if result.status == Status.INFEASIBLE:
        raise StrongTreeError(
            INFEASIBLE.format(depth=spec.depth, names=_constraint_names(spec), hint=_relaxation_hint(spec))
        )
    if result.status.has_solution and result.x is not None:
        structure = built.decode(result.x)
    elif start is not None and result.status in (Status.TIME_LIMIT_NO_TREE, Status.INTERRUPTED, Status.TIME_LIMIT):
        structure = start[1]
    elif result.status == Status.TIME_LIMIT_NO_TREE:
        raise StrongTreeError(NO_TREE_IN_TIME.format(limit=time_limit))
    else:
        raise StrongTreeError(f"The solver stopped with an error: {result.message or result.status.value}")
    value = tree_objective(data, spec, structure)
    status = result.status if result.status != Status.TIME_LIMIT_NO_TREE else Status.TIME_LIMIT
    message = result.message
    if result.objective is not None and abs(result.objective - value) > 1e-5 * max(1.0, abs(value)):
        message = (message + " " if message else "") + (
            f"The solver reported objective {result.objective:g}; the tree re-scores to {value:g} (shown)."
        )
    bound = result.bound
    if objective_cap is not None:
        bound = objective_cap if bound is None else min(bound, objective_cap)
    certified = status == Status.OPTIMAL and (bound is None or value >= bound - 1e-6 * max(1.0, abs(bound)) - 1e-9)
    if status == Status.OPTIMAL and not certified:
        status = Status.TIME_LIMIT
    gap = None if bound is None else abs(bound - value) / max(abs(value), 1e-9)
    return EngineResult(structure=structure, status=status.value, objective=value, bound=bound, gap=gap,
                        message=message, certified=certified, **common)


def _certified_by_dp(structure: TreeStructure, value: float, data: PatternData, t0: float, progress, choice: str) -> EngineResult:
    return _certified(structure, value, data, t0, progress, choice, method="dp", backend="pystreed",
                      formulation="dynamic programming (STreeD)", how="certified by dynamic programming")


def _certified_by_search(structure: TreeStructure, value: float, data: PatternData, t0: float, progress, choice: str) -> EngineResult:
    return _certified(structure, value, data, t0, progress, choice, method="enumeration", backend="numpy",
                      formulation="exhaustive search of all trees of depth <= 2", how="certified by exhaustive search")


def _certified(structure, value, data, t0, progress, choice, *, method, backend, formulation, how) -> EngineResult:
    if progress:
        progress(EngineProgress(time.perf_counter() - t0, value, value, 0.0, 0, structure, how))
    return EngineResult(
        structure=structure, status=Status.OPTIMAL.value, objective=value, bound=value, gap=0.0,
        runtime=time.perf_counter() - t0, backend=backend, formulation=formulation,
        method=method, n_variables=0, n_constraints=0, n_rows=data.n_rows, n_patterns=data.n_patterns,
        build_seconds=0.0, message="", certified=True, choice=choice,
    )


def _relaxation_hint(spec: TreeSpec) -> str:
    hints = []
    if spec.side_constraints:
        hints.append("loosen the fairness bound or lower the recall/precision/specificity floors")
    if spec.min_leaf:
        hints.append("lower the minimum leaf size")
    if spec.max_branching is not None or spec.max_features is not None:
        hints.append("allow more branching nodes or features")
    hints.append("or allow a deeper tree")
    return "Try to " + ", ".join(hints) + "."
