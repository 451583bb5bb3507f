"""Solve a :class:`TreeSpec` on weighted patterns: choose the route, offer a
warm start, run the backend, read back and re-score the tree.

This is the table-free core shared by the estimator, the CLI and the
benchmarks.  Routes:

* ``exact`` (``formulation="auto"``): the exact search of ``accel/search.py``
  (dynamic programming, a Lagrangian bound, branch-and-bound) for every
  objective and side constraint; it returns a certified optimum, a proven
  infeasibility, or at the time limit its best tree with a proven bound;
* ``flow``: FlowOCT (eq. 1, 7 or 11, chosen by :func:`build_model`);
* ``benders``: the BendersOCT master with lazy cuts (Algorithms 1-2);
* ``oct`` / ``binoct``: the baselines of Theorem 1, OCT (Bertsimas and Dunn
  2017, formulation (24)) and BinOCT (Verwer and Zhang 2019), refused for
  what they cannot express;
* ``local_search``: coordinate descent over nodes (``heuristics/``), a
  heuristic recorded with status ``heuristic``, never certified.

A forced MIO (or ``formulation="auto"`` with the exact search off) starts from
the best of CART, single leaves and, with the exact search, the exact search's
tree (found within a short budget), whose proven bound caps the objective:
the solver still has to prove optimality itself.  Before the MIO, the LP
relaxation of the formulation is solved once (time-boxed) and recorded as
``lp_bound``; the cap is added after it, so the value is the formulation's own.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Literal

import numpy as np

from strongtree_core.accel import kernels
from strongtree_core.accel.ladder import ladder_applies
from strongtree_core.accel.search import exact_solve
from strongtree_core.background import run_in_background
from strongtree_core.encoding.patterns import PatternData
from strongtree_core.errors import StrongTreeError
from strongtree_core.formulation import (
    BuiltModel,
    TreeSpec,
    TreeStructure,
    build_model,
    relaxation_arrays,
)
from strongtree_core.formulation.arrays import with_objective_cap
from strongtree_core.formulation.binoct import BINOCT_REFUSED, binoct_unsupported
from strongtree_core.formulation.objectives import tree_objective
from strongtree_core.formulation.oct import OCT_REFUSED, oct_unsupported
from strongtree_core.formulation.quality_constraints import QualityFloor
from strongtree_core.heuristics import (
    LOCAL_SEARCH_REFUSED,
    local_search,
    local_search_unsupported,
)
from strongtree_core.engine.limits import (
    EXACT_FIX,
    EXACT_WHAT,
    MIO_FIX,
    MIO_WHAT,
    TOO_LARGE,
    default_memory_limit,
    exact_search_bytes,
    extrapolate,
    human_bytes,
    mio_bytes,
    subset,
)
from strongtree_core.metrics.constraints import check_constraints
from strongtree_core.progress import Progress, relative_gap
from strongtree_core.solvers import (
    SolveOptions,
    SolveResult,
    SolverUnavailableError,
    Status,
    choose_backend,
    solve,
)
from strongtree_core.solvers.base import StopOrDeadline
from strongtree_core.solvers.relaxation import lp_relaxation
from strongtree_core.engine.starts import candidate_starts, predicted_starts
from strongtree_core.tree.record import HEURISTIC, SolveRecord
from strongtree_core.vocabulary import FORMULATIONS

Formulation = Literal["auto", "flow", "benders", "oct", "binoct", "local_search"]

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
NO_FEASIBLE_START = (
    "The local search found no tree with at least {min_leaf} rows in every leaf: lower the minimum leaf "
    "size, or use formulation='auto' (the exact search proves whether such a tree exists)."
)
#: The LP relaxation gets this share of the time limit, at most LP_MAX_SECONDS; a model
#: with more non-zeros than LP_NONZEROS_PER_SECOND times that box is not even loaded
#: (loading alone would overrun it) and gets no LP bound.
LP_TIME_SHARE = 0.1
LP_MAX_SECONDS = 5.0
LP_NONZEROS_PER_SECOND = 1_000_000
LOCAL_SEARCH_FORMULATION = "local search: coordinate descent over nodes (LST-style), a heuristic"


class NoTreeInTimeError(StrongTreeError):
    """No tree meeting the constraints was found within the time limit (nor any cheap start that meets
    them): the message is :data:`NO_TREE_IN_TIME`.  A type of its own, so that a caller (a sweep's row)
    tells it from other errors by what it is, not by its words."""


class InfeasibleError(StrongTreeError):
    """No tree of the depth satisfies the constraints: proven over the features the search was given
    (the estimator, which knows which thresholds those kept, says so in its own message).

    ``record`` is the proof as a :class:`~strongtree_core.tree.SolveRecord` (status ``infeasible``, the rows and
    the scope) once the estimator has set it (:meth:`with_record`), so that a surface writes it in
    :func:`~strongtree_core.tree.claim.claim`'s words ("No tree fits"); None as the engine raises it."""

    record: SolveRecord | None = None

    def __init__(self, spec: TreeSpec) -> None:
        self._set(spec.depth, _constraint_names(spec), _relaxation_hint(spec))

    def _set(self, depth: int, names: str, hint: str, message: str | None = None,
             record: SolveRecord | None = None) -> None:
        self.depth, self.names, self.hint, self.record = depth, names, hint, record
        super().__init__(message or INFEASIBLE.format(depth=depth, names=names, hint=hint))

    def with_record(self, record: SolveRecord, message: str | None = None) -> "InfeasibleError":
        """The same proof with its record (and the estimator's words, when they say more)."""
        return _infeasible_again(self.depth, self.names, self.hint, message or str(self), record)

    def __reduce__(self):  # pickled from a sweep's worker to the process that started it
        return _infeasible_again, (self.depth, self.names, self.hint, str(self), self.record)


def _infeasible_again(depth: int, names: str, hint: str, message: str | None = None,
                      record: SolveRecord | None = None) -> InfeasibleError:
    """An :class:`InfeasibleError` unpickled: the same depth, names, hint, words and record."""
    error = InfeasibleError.__new__(InfeasibleError)
    error._set(depth, names, hint, message, record)
    return error


@dataclass(frozen=True)
class Solved:
    """A solved tree and the record of how it was obtained (one type from the
    engine to the estimator, which adds its notes to the record)."""

    structure: TreeStructure
    record: SolveRecord
    #: When set, the record's certificate and bound hold over these binary features
    #: only (the exact search's ladder certified a thinned set of thresholds); the
    #: estimator then keeps only them in its encoding.
    features: tuple[int, ...] | None = None


def _choose_method(built_flow_free: TreeSpec, formulation: Formulation, solver: str, data: PatternData) -> tuple[str, str]:
    spec = built_flow_free
    if formulation == "oct":
        refused = oct_unsupported(spec)
        if refused:
            raise StrongTreeError(OCT_REFUSED.format(names=", ".join(refused)))
        return "oct", "OCT (Bertsimas and Dunn 2017, formulation (24)) as asked"
    if formulation == "binoct":
        refused = binoct_unsupported(spec)
        if refused:
            raise StrongTreeError(BINOCT_REFUSED.format(names=", ".join(refused)))
        return "binoct", "BinOCT (Verwer and Zhang 2019) as asked"
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
    if spec.max_features_used is not None:
        names.append(f"at most {spec.max_features_used} features")
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
    n_jobs: int = 1,
    exact_search: bool = True,
    heuristic_start: bool = True,
    progress: Callable[[Progress], None] | None = None,
    stop: threading.Event | None = None,
    memory_limit: int | None = None,
    starts: tuple[tuple[str, TreeStructure], ...] = (),
    stated_limit: float | None = None,
) -> Solved:
    """Find the best tree for ``spec`` on ``data`` within ``time_limit`` seconds.

    ``memory_limit`` (bytes; default half of what the machine allows,
    :func:`~strongtree_core.engine.limits.default_memory_limit`): a solve estimated to
    need more is refused before anything large is built.  ``starts``: named
    trees offered first as incumbents on every route (e.g. CART on the raw
    columns), besides the cheap ones of :func:`~strongtree_core.engine.starts.candidate_starts`.
    ``n_jobs``: threads of the exact search.  ``stated_limit``: the limit messages name (default ``time_limit``), when
    ``time_limit`` is what is left of a caller's own limit (the estimator's,
    after reading the table).

    Raises
    ------
    StrongTreeError
        Infeasible constraints, no tree in time, a solve larger than the memory
        limit, or a backend that cannot take the model (licence too small,
        package missing), with a readable message.
    """
    t0 = time.perf_counter()
    memory_limit = None if memory_limit is None else int(memory_limit)
    stated = time_limit if stated_limit is None else stated_limit
    starts = tuple(starts) if heuristic_start else ()
    if formulation == "local_search":
        return _solve_local_search(data, spec, time_limit, stop, progress, t0, starts)
    _check_exact_memory(data, spec, memory_limit)
    if formulation == "auto" and exact_search:
        return _solve_exact(data, spec, time_limit, stop, progress, t0, starts, stated, n_jobs)
    return _solve_mio(data, spec, formulation, solver, time_limit, threads, exact_search, heuristic_start, progress, stop, t0,
                      memory_limit, starts, stated)


#: An estimate of at most this many bytes is not compared with the default memory limit: the
#: interpreter with numpy, pandas and scikit-learn already holds more than twice as much, so no machine
#: that runs a fit refuses it, and reading the machine's memory (three files) costs 0.1-0.3 ms, a
#: tenth of a whole fit on a small table.
FITS_ANY_MACHINE = 32 * 2**20


def over_limit(need: int, memory_limit: int | None) -> int | None:
    """The limit ``need`` exceeds (``memory_limit``, or the default one when None), else None."""
    if memory_limit is None:
        if need <= FITS_ANY_MACHINE:
            return None
        memory_limit = default_memory_limit()
    return memory_limit if need > memory_limit else None


def _check_exact_memory(data: PatternData, spec: TreeSpec, memory_limit: int | None) -> None:
    """Refuse a table the exact search (also the MIO's start) cannot hold."""
    groups = 1 if data.group is None else int(data.group.max()) + 1
    levels = 1 if data.legit is None else int(data.legit.max()) + 1
    rows = sum(1 if getattr(c, "notion", None) is None else 2 * levels * groups * (groups - 1) // 2
               for c in spec.side_constraints)
    need = exact_search_bytes(data, rows)
    memory_limit = over_limit(need, memory_limit)
    if memory_limit is not None:
        raise StrongTreeError(TOO_LARGE.format(
            need=human_bytes(need), limit=human_bytes(memory_limit),
            what=EXACT_WHAT.format(patterns=data.n_patterns, features=data.n_features), fix=EXACT_FIX))


def _model_size(data: PatternData, arrays_of: Callable[[PatternData], object]) -> tuple[int, int, int]:
    """(rows, columns, non-zeros) of the model ``arrays_of`` builds on ``data``,
    measured on 8 and 16 patterns and extrapolated (every formulation here grows
    linearly in the patterns); exact for up to 64 patterns."""
    P = data.n_patterns
    if P <= 64:
        arrays = arrays_of(data)
        return arrays.n_rows, arrays.n_cols, arrays.A.nnz
    sizes = []
    for n in (8, 16):
        arrays = arrays_of(subset(data, np.arange(n)))
        sizes.append((arrays.n_rows, arrays.n_cols, arrays.A.nnz))
    return extrapolate(sizes[0], sizes[1], 8, 16, P)


def _check_mio_memory(data: PatternData, spec: TreeSpec, method: str, memory_limit: int | None) -> None:
    """Refuse a MIO larger than the memory limit, before building it."""
    rows, cols, nnz = _model_size(data, lambda d: build_model(d, spec, method).arrays)
    need = mio_bytes(rows, cols, nnz)
    memory_limit = over_limit(need, memory_limit)
    if memory_limit is not None:
        what = MIO_WHAT.format(formulation=FORMULATIONS.get(method, method), patterns=data.n_patterns,
                               depth=spec.depth, rows=rows, cols=cols, nnz=nnz)
        raise StrongTreeError(TOO_LARGE.format(need=human_bytes(need), limit=human_bytes(memory_limit), what=what,
                                               fix=MIO_FIX))


def _in_thread(work: Callable[[], object], poll: float, give_up: Callable[[], bool]) -> tuple[bool, object]:
    """Run ``work()`` in a background thread (:mod:`strongtree_core.background`) and wait for it,
    looking every ``poll`` seconds: (True, its result), or (False, None) once ``give_up()`` with the
    work still running (it finishes in the background and its result is dropped)."""
    done: dict = {}

    def run() -> None:
        try:
            done["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            done["error"] = exc

    finished = run_in_background(run)
    while not finished.wait(poll):
        if give_up():
            return False, None
    if "error" in done:
        raise done["error"]
    return True, done["result"]


def _in_time(work: Callable[[], object], stop_at: StopOrDeadline) -> tuple[bool, object]:
    """``work()`` unless a stop or the deadline comes first (see :func:`_in_thread`).
    Building a model of millions of rows takes tens of seconds that no solver limit counts."""
    return _in_thread(work, 0.05, stop_at.is_set)


EXACT_FORMULATION = "exact search: dynamic programming with a Lagrangian bound and branch-and-bound"


#: Seconds the exact search may run past its own limit (or past a Stop) before it is given up:
#: reading a million patterns into its arrays answers no clock.
EXACT_GRACE = 0.2

EXACT_GIVEN_UP = (
    "The exact search was still at work on its {patterns:,} patterns when the time ran out: the best tree it "
    "had found by then is shown. Give more time, or use fewer thresholds per column."
)


class _AnyOf:
    """Set when any of the events is (the search stops at the user's Stop or when it is given up)."""

    def __init__(self, *events) -> None:
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


def _solve_exact(data: PatternData, spec: TreeSpec, time_limit: float, stop, progress, t0: float,
                 given: tuple = (), stated: float | None = None, n_jobs: int = 1) -> Solved:
    """The exact search (``accel/search.py``), re-scored here.

    It runs in a thread that is given up :data:`EXACT_GRACE` seconds past its limit
    (or past a Stop); the best tree it reported by then is returned.  The cheap starts
    (:func:`~strongtree_core.engine.starts.candidate_starts`) are made first unless they can wait
    (:func:`_starts_can_wait`), then only when the search comes back without a tree."""
    # A first look at the compiled kernels, which starts their build in the background when the cache has none
    # (never waits): on a busy machine a first fit can spend its time before the search wants a kernel.
    kernels.available()
    made = [] if _starts_can_wait(data, spec, progress) else predicted_starts(data, spec.depth)
    starts = tuple(tree for _, tree in given) + tuple(tree for _, tree, _ in made)
    # each start's predictions, kept for the give-up path (the given ones are routed only there)
    predicted = (None,) * len(given) + tuple(p for _, _, p in made)
    lazy = not made

    def fallback():  # the starts and their predictions; made now if the search ran without them
        late = predicted_starts(data, spec.depth) if lazy else []
        return starts + tuple(tree for _, tree, _ in late), predicted + tuple(p for _, _, p in late)
    latest: dict = {}  # the search's last incumbent and bound, as reported
    given_up = threading.Event()

    def report(objective, bound, explored, tree, message) -> None:
        if given_up.is_set():
            return  # nothing reaches the caller once the search is given up
        if tree is not None:
            latest["tree"] = tree
        if bound is not None:
            latest["bound"] = bound
        latest["explored"] = explored
        if progress is not None:
            progress(Progress(time.perf_counter() - t0, objective, bound, relative_gap(objective, bound), explored, tree, message))

    def certificate(answer) -> None:  # the ladder's answer if it were stopped now (a rung certified)
        if not given_up.is_set():
            latest["answer"] = answer

    remaining = max(0.05, time_limit - (time.perf_counter() - t0))
    halt = _AnyOf(stop, given_up)

    def search():
        return exact_solve(data, spec, time_limit=remaining, stop=halt, report=report, starts=starts, n_jobs=n_jobs,
                           certificate=certificate)
    if _search_inline(data, spec):
        done, found = True, search()
    else:
        done, found = _within(search, time.perf_counter() + remaining + EXACT_GRACE, stop)
    if not done:
        given_up.set()  # the search stops at its next look at the clock; its result is dropped
        answer = latest.get("answer")
        if answer is None:
            return _exact_given_up(data, spec, latest, fallback, stop, progress, t0,
                                   time_limit if stated is None else stated, lazy)
        # the ladder's last certified rung holds, whatever the rung still at work
        found = replace(answer, runtime=time.perf_counter() - t0,
                        reason=answer.reason + "; the next rung was given up at the time limit")
    if found.status == "infeasible":
        raise InfeasibleError(spec)
    if found.structure is None:  # stopped before the search checked a start (a late ladder on a million rows)
        start, value = _best_feasible_start(*fallback(), data, spec, time_limit if stated is None else stated)
        found = replace(found, structure=start, objective=None,
                        reason=f"{found.reason}; the best feasible start (CART's tree or a single leaf) is returned")
    else:
        value = tree_objective(data, spec, found.structure)
        if lazy and found.status != "optimal":  # stopped without the starts: the better of its tree and theirs
            better = _better_start(fallback, data, spec, value)
            if better is not None:
                found, value = replace(found, structure=better[0], objective=None,
                                       reason=f"{found.reason}; {BETTER_START}"), better[1]
    if found.objective is not None and abs(value - found.objective) > 1e-6 * max(1.0, abs(value)):
        raise StrongTreeError(  # a bookkeeping error in the search, never shown as a result
            f"The exact search scored its tree at {found.objective:g} but it re-scores to {value:g}; "
            "please report this with your data. Use formulation='flow' meanwhile."
        )
    certified = found.status == "optimal"
    if certified:
        status = Status.OPTIMAL
        bound = value
    else:
        status = Status.INTERRUPTED if stop is not None and stop.is_set() else Status.TIME_LIMIT
        bound = None if found.bound is None else max(found.bound, value)
    gap = relative_gap(value, bound)
    if progress is not None:
        progress(Progress(time.perf_counter() - t0, value, bound, gap, found.n_explored, found.structure,
                          "certified optimal" if certified else "stopped"))
    return Solved(found.structure, SolveRecord(
        status=status.value, objective=value, bound=bound, gap=gap, runtime=time.perf_counter() - t0,
        backend="numpy", formulation=EXACT_FORMULATION, method="exact", n_rows=data.n_rows,
        n_patterns=data.n_patterns, choice=f"exact search: {found.reason}", certified=certified,
        nodes=found.n_explored,
    ), found.features)


#: Patterns up to which a search that the dynamic program solves outright runs without the cheap
#: starts (their CART trees cost 0.4-2.4 ms per fit on the paper's tables and never speed that
#: program up); made after it only if it returns no tree, in milliseconds at this size.
LAZY_STARTS_PATTERNS = 100_000


def _solved_outright(data: PatternData, spec: TreeSpec) -> bool:
    """Whether the dynamic program solves the problem outright (an accuracy objective, no constraint,
    no bound on splits or features), on all the features (the ladder of thresholds does not apply)."""
    return (spec.objective in ("accuracy", "balanced_accuracy") and not spec.side_constraints
            and spec.max_branching is None and spec.max_features_used is None and not ladder_applies(data, spec))


def _starts_can_wait(data: PatternData, spec: TreeSpec, progress) -> bool:
    """Whether the search may run without the cheap starts: nobody watches for a first tree
    (``progress`` is None), the dynamic program solves the problem outright (the ladder of
    thresholds, which begins from the starts' features, does not apply), and the table is small."""
    return progress is None and data.n_patterns <= LAZY_STARTS_PATTERNS and _solved_outright(data, spec)


#: Patterns x features up to which a search that the dynamic program solves outright runs in the
#: caller's thread: its arrays are read in about a millisecond, and the compiled program reads the
#: clock and the stop event between slices of its work, so there is nothing to give up. Even a
#: kept thread (:mod:`strongtree_core.background`) costs it the allocator's page faults: ilpd at
#: depth 3, 9.6 ms in the caller's thread, 12.1 ms in a kept thread.
INLINE_CELLS = 1_000_000


def _search_inline(data: PatternData, spec: TreeSpec) -> bool:
    """Whether the exact search runs in the caller's thread (see :data:`INLINE_CELLS`)."""
    return data.n_patterns * data.n_features <= INLINE_CELLS and _solved_outright(data, spec)


def _within(work: Callable[[], object], until: float, stop) -> tuple[bool, object]:
    """``work()``, given up once the clock passes ``until`` or :data:`EXACT_GRACE` after a
    Stop with the thread still running (see :func:`_in_thread`)."""
    stopped_at: list[float] = []

    def give_up() -> bool:
        now = time.perf_counter()
        if not stopped_at and stop is not None and stop.is_set():
            stopped_at.append(now)
        return now >= until or (bool(stopped_at) and now >= stopped_at[0] + EXACT_GRACE)

    return _in_thread(work, 0.02, give_up)


def _feasible_start(tree: TreeStructure, data: PatternData, spec: TreeSpec, predicted=None) -> bool:
    """Whether a cheap tree meets the side constraints, the minimum leaf size and the limits on branching
    nodes and features (``predicted``: its class per pattern, else it is routed)."""
    if spec.max_branching is not None and tree.n_branching > spec.max_branching:
        return False
    if spec.max_features_used is not None and tree.features_used.size > spec.max_features_used:
        return False
    if spec.min_leaf:
        rows = np.bincount(tree.apply(data.X), weights=data.count, minlength=tree.feature.shape[0] + 1)
        if (rows[tree.leaves] < spec.min_leaf).any():
            return False
    if not spec.side_constraints:
        return True
    if predicted is None:
        predicted = tree.predict(data.X)
    return all(c.satisfied for c in check_constraints(spec, data.y, predicted, data.group, data.legit,
                                                      count=data.count))


def _best_feasible_start(starts, predicted, data: PatternData, spec: TreeSpec,
                         limit: float) -> tuple[TreeStructure, float]:
    """The feasible start of the highest objective (the first of equals) and that objective, each
    start routed at most once (``predicted``: the starts' classes per pattern where known, else None);
    none feasible: the search had no time to find a tree."""
    scored = []
    for tree, known in zip(starts, predicted):
        if spec.side_constraints and known is None:
            known = tree.predict(data.X)  # once for the constraints and the objective
        if _feasible_start(tree, data, spec, known):
            scored.append((tree_objective(data, spec, tree, known), tree))
    if not scored:
        raise NoTreeInTimeError(NO_TREE_IN_TIME.format(limit=limit))
    value, structure = max(scored, key=lambda pair: pair[0])
    return structure, value


BETTER_START = "a start (CART's tree or a single leaf) made after the search is better than its tree and is returned"


def _better_start(starts: Callable[[], tuple], data: PatternData, spec: TreeSpec,
                  value: float) -> tuple[TreeStructure, float] | None:
    """The best feasible start and its objective when it beats ``value`` (None otherwise, or when
    no start is feasible)."""
    try:
        start, start_value = _best_feasible_start(*starts(), data, spec, 0.0)
    except StrongTreeError:  # no start meets the minimum leaf size: the search's tree stands
        return None
    return (start, start_value) if start_value > value + 1e-9 * max(1.0, abs(value)) else None


def _exact_given_up(data: PatternData, spec: TreeSpec, latest: dict, starts: Callable[[], tuple], stop, progress,
                    t0: float, stated: float, lazy: bool = False) -> Solved:
    """The exact search did not return in time: its last incumbent, else the best feasible cheap tree
    (``starts()``: the starts and their predictions, see :func:`_best_feasible_start`; ``lazy``: the
    search ran without them, so a start better than its incumbent is returned instead)."""
    structure = latest.get("tree")
    if structure is None:
        structure, value = _best_feasible_start(*starts(), data, spec, stated)
    else:
        value = tree_objective(data, spec, structure)
        better = _better_start(starts, data, spec, value) if lazy else None
        if better is not None:
            structure, value = better
    bound = latest.get("bound")
    bound = None if bound is None else max(bound, value)
    status = Status.INTERRUPTED if stop is not None and stop.is_set() else Status.TIME_LIMIT
    gap = relative_gap(value, bound)
    if progress is not None:
        progress(Progress(time.perf_counter() - t0, value, bound, gap, latest.get("explored", 0), structure, "stopped"))
    return Solved(structure, SolveRecord(
        status=status.value, objective=value, bound=bound, gap=gap, runtime=time.perf_counter() - t0,
        backend="numpy", formulation=EXACT_FORMULATION, method="exact", n_rows=data.n_rows,
        n_patterns=data.n_patterns, choice="exact search: given up at the time limit", certified=False,
        nodes=latest.get("explored", 0), message=EXACT_GIVEN_UP.format(patterns=data.n_patterns),
    ))


def _solve_local_search(data: PatternData, spec: TreeSpec, time_limit: float, stop, progress, t0: float,
                        given: tuple = ()) -> Solved:
    """The local search (``heuristics/local_search.py``) from CART and random starts, re-scored here."""
    refused = local_search_unsupported(spec)
    if refused:
        raise StrongTreeError(LOCAL_SEARCH_REFUSED.format(names=", ".join(refused)))

    def report(objective, tree, n_starts, message) -> None:
        if progress is not None:
            progress(Progress(time.perf_counter() - t0, objective, None, None, n_starts, tree, message))

    starts = [tree for _, tree in tuple(given) + tuple(candidate_starts(data, spec.depth))]
    remaining = max(0.05, time_limit - (time.perf_counter() - t0))
    found = local_search(data, spec, starts=starts, time_limit=remaining, stop=stop, report=report)
    if found.structure is None:
        raise StrongTreeError(NO_FEASIBLE_START.format(min_leaf=spec.min_leaf))
    value = tree_objective(data, spec, found.structure)
    if progress is not None:
        progress(Progress(time.perf_counter() - t0, value, None, None, found.n_starts, found.structure,
                          "heuristic: no optimality claim"))
    return Solved(found.structure, SolveRecord(
        status=HEURISTIC, objective=value, runtime=time.perf_counter() - t0, backend="numpy",
        formulation=LOCAL_SEARCH_FORMULATION, method="local_search", n_rows=data.n_rows,
        n_patterns=data.n_patterns, certified=False,
        choice=f"local search, a heuristic: no bound and no optimality claim ({found.reason})",
    ))


#: Seconds kept between the solver's end and the time limit, for reading the solution back.
SOLVER_MARGIN = 0.3

MODEL_NOT_BUILT = (
    "The model ({method}) was still being built when the time ran out: the best tree found before it is shown. "
    "Give more time, or use formulation='auto'."
)


def _unsolved_start(data, spec, dp_starts, stop, t0, method, choice, given: tuple = (),
                    stated: float | None = None) -> Solved:
    """The MIO never started (stop or time limit while building): the exact
    search's tree if there is one (feasible by construction), else the best
    feasible cheap tree."""
    if dp_starts:
        structure = dp_starts[0][1]
    else:
        feasible = [tree for _, tree in tuple(given) + tuple(candidate_starts(data, spec.depth)) if all(
            c.satisfied for c in check_constraints(spec, data.y, tree.predict(data.X), data.group, data.legit,
                                                   count=data.count))]
        if not feasible:
            raise NoTreeInTimeError(NO_TREE_IN_TIME.format(
                limit=round(time.perf_counter() - t0, 1) if stated is None else stated))
        structure = max(feasible, key=lambda tree: tree_objective(data, spec, tree))
    status = Status.INTERRUPTED if stop is not None and stop.is_set() else Status.TIME_LIMIT
    name = FORMULATIONS.get(method, method)
    return Solved(structure, SolveRecord(
        status=status.value, objective=tree_objective(data, spec, structure), runtime=time.perf_counter() - t0,
        backend="none", formulation=name, method=method, n_rows=data.n_rows, n_patterns=data.n_patterns,
        choice=choice.strip(), message=MODEL_NOT_BUILT.format(method=name),
    ))


def _solve_mio(data, spec, formulation, solver, time_limit, threads, exact_search, heuristic_start, progress, stop, t0,
               memory_limit: int | None, given: tuple = (), stated: float | None = None) -> Solved:
    """FlowOCT, BendersOCT, OCT or BinOCT, started from the best cheap tree (and the exact search's)."""
    method, why = _choose_method(spec, formulation, solver, data)  # refusals before any work
    _check_mio_memory(data, spec, method, memory_limit)
    dp_starts: list[tuple[str, TreeStructure]] = []
    given_starts = tuple(tree for _, tree in given)
    dp_note = ""
    objective_cap: float | None = None
    if exact_search and heuristic_start:
        # A forced MIO still starts from the exact search's tree and takes its
        # proven bound as a cap: the solver then has to prove it (a teacher
        # still sees the bound close).
        found = exact_solve(data, spec, time_limit=min(10.0, time_limit / 4), stop=stop,
                            starts=given_starts + tuple(tree for _, tree in candidate_starts(data, spec.depth)))
        if found.status == "infeasible":
            raise InfeasibleError(spec)
        if found.structure is not None:
            whole = found.status == "optimal" and found.features is None
            label = "the exact search's optimal tree" if whole else "the exact search's best tree"
            dp_starts.append((label, found.structure))
        if found.bound is not None and found.features is None:  # a ladder's bound holds over fewer features
            objective_cap = found.bound
        dp_note = f"started from the exact search ({found.reason}). "

    # Set a little before the deadline: a solver that does not answer a stop within
    # its grace is abandoned, and reading its solution back takes a moment too.
    stop_at = StopOrDeadline(stop, t0 + time_limit - SOLVER_MARGIN)

    def prepare():
        built = build_model(data, spec, method)
        lp_bound = None
        lp_seconds = min(LP_MAX_SECONDS, LP_TIME_SHARE * time_limit, max(0.0, time_limit - (time.perf_counter() - t0)))
        # A Benders master's relaxation is FlowOCT's, much larger: sized before it is built.
        small_enough = _model_size(data, lambda d: relaxation_arrays(d, built))[2] \
            <= LP_NONZEROS_PER_SECOND * lp_seconds
        relaxed = None if stop_at.is_set() or not small_enough else relaxation_arrays(data, built)
        if relaxed is not None and not stop_at.is_set():
            lp_bound = lp_relaxation(relaxed, time_limit=max(lp_seconds, 1e-3), threads=threads, stop=stop_at)
        if objective_cap is not None:
            built = replace(built, arrays=with_objective_cap(built.arrays, objective_cap))
        start = _best_start(built, data, dp_starts + list(given)) if heuristic_start else None
        return built, lp_bound, start

    ready, prepared = _in_time(prepare, stop_at)
    if not ready:
        return _unsolved_start(data, spec, dp_starts, stop, t0, method, dp_note + why, given, stated)
    built, lp_bound, start = prepared
    arrays = built.arrays
    if progress and start is not None:
        value = arrays.objective(start[2])
        progress(Progress(time.perf_counter() - t0, value, objective_cap, relative_gap(value, objective_cap), 0, start[1],
                          f"warm start: {start[0]}"))

    def on_event(ev) -> None:
        if progress is None:
            return
        tree = built.decode(ev.incumbent) if ev.incumbent is not None else None
        bound, gap = ev.bound, ev.gap
        if objective_cap is not None and (bound is None or bound > objective_cap):
            # The exact search's bound is one the solver has not found yet.
            bound = objective_cap
            gap = relative_gap(ev.objective, bound)
        progress(Progress(time.perf_counter() - t0, ev.objective, bound, gap, ev.nodes, tree))

    # The solver's own limit is what is left; a stop request that also fires at
    # the deadline backs it up (a solver loading or presolving may overrun its limit).
    remaining = max(0.05, time_limit - SOLVER_MARGIN - (time.perf_counter() - t0))
    options = SolveOptions(
        time_limit=remaining, threads=threads, warm_start=None if start is None else start[2],
        progress=on_event, stop=stop_at,
    )
    try:
        if stop_at.is_set() and start is not None:
            # Stopped (or out of time) before the solver could start: keep the start.
            result = SolveResult(Status.INTERRUPTED, backend=solver, message="stopped before the solve began")
        else:
            result = solve(arrays, solver, options)
    except SolverUnavailableError as exc:
        raise StrongTreeError(str(exc)) from None
    choice = dp_note + why + ". " + str(result.extra.get("choice", ""))
    common = dict(
        runtime=time.perf_counter() - t0, backend=result.backend, formulation=arrays.name, method=method,
        n_variables=arrays.n_cols, n_constraints=arrays.n_rows, n_nonzeros=int(arrays.A.nnz),
        n_rows=data.n_rows, n_patterns=data.n_patterns,
        build_seconds=built.build_seconds, choice=choice.strip(), lp_bound=lp_bound,
        n_cuts=result.n_cuts if arrays.separator is not None else None, nodes=result.nodes,
    )
    if result.status == Status.INFEASIBLE:
        raise InfeasibleError(spec)
    if result.status.has_solution and result.x is not None:
        structure = built.decode(result.x)
    elif start is not None and result.status in (Status.TIME_LIMIT_NO_TREE, Status.INTERRUPTED, Status.TIME_LIMIT):
        structure = start[1]
    elif result.status == Status.TIME_LIMIT_NO_TREE:
        raise NoTreeInTimeError(NO_TREE_IN_TIME.format(limit=time_limit if stated is None else stated))
    else:
        raise StrongTreeError(f"The solver stopped with an error: {result.message or result.status.value}")
    value = tree_objective(data, spec, structure)
    status = result.status if result.status != Status.TIME_LIMIT_NO_TREE else Status.TIME_LIMIT
    message = result.message
    if status == Status.INTERRUPTED and not stop_at.by_user():
        status = Status.TIME_LIMIT  # the deadline, not the user, stopped it (the backend's words already say so)
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
    return Solved(structure, SolveRecord(status=status.value, objective=value, bound=bound, gap=relative_gap(value, bound),
                                         message=message, certified=certified, **common))


def _relaxation_hint(spec: TreeSpec) -> str:
    hints = []
    floors = [isinstance(c, QualityFloor) for c in spec.side_constraints]
    if not all(floors):
        hints.append("loosen the fairness bound")
    if any(floors):
        hints.append("lower the recall/precision/specificity floors")
    if spec.min_leaf:
        hints.append("lower the minimum leaf size")
    if spec.max_branching is not None or spec.max_features_used is not None:
        hints.append("allow more branching nodes or features")
    hints.append("or allow a deeper tree")
    return "Try to " + ", ".join(hints) + "."
