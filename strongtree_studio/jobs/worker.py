"""The solve worker: runs in its own process (spawn context), so a solver crash or
hang cannot take the server down and each solve gets a fresh process.

A worker is started ahead of time and imports the engine while it waits, so the
first tree of a solve reaches the page quickly.  It runs at a lower scheduling
priority than the server (:data:`NICENESS`), so pages stay quick while every
core solves, and its address space is capped (:func:`cap_worker_memory`), so one
solve cannot take the host's memory: past the cap it ends with a message.  It
then receives one :class:`SolveSpec` on its inbox, fits, and sends small
picklable dicts down its outbox pipe:

* ``{"kind": "ready"}`` once the engine is imported;
* ``{"kind": "progress", "phase", "elapsed", "objective", "bound", "gap", "nodes",
  "message", "tree"}``; ``tree`` is the JSON of the incumbent tree when it changed
  since the last message of the phase, else None;
* ``{"kind": "result", "phase", "tree"}`` with the fitted tree's JSON (which carries
  its solve record);
* ``{"kind": "error", "phase", "message", "user_error", "record"}`` with a readable message; ``record`` is
  the :class:`~strongtree_core.tree.SolveRecord` (as a dict) of a proof that no tree meets the constraints
  (the phase's result: there is no tree to carry it), else None;
* ``{"kind": "point", "phase", "row", "done", "total", "elapsed"}`` for each finished
  point of a sweep (:class:`SweepSpec`; ``row`` is the point's row of
  :func:`strongtree_core.sweep.sweep`), then ``{"kind": "result", "phase", "tree": None}``
  once the sweep has run every point, or stopped;
* ``{"kind": "done"}`` last.

Phases are ``"main"`` (the requested tree) and ``"baseline"`` (the same settings
without fairness constraints, for comparison).  Setting the shared stop flag ends
the running phase; the flag is cleared between phases.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

import pandas as pd

from strongtree_studio.jobs.protocol import MSG_CRASH, Outbox, Phases, crash_message, finite_number

__all__ = ["MSG_CRASH", "SolveSpec", "SweepSpec", "worker_main"]

#: Seconds between two progress messages without a new tree.
PROGRESS_INTERVAL = 0.2
#: How much lower than the server's the worker's scheduling priority is (Unix ``nice``).
NICENESS = 10


@dataclass(frozen=True)
class SolveSpec:
    """Everything a worker needs for one solve (picklable)."""

    X: pd.DataFrame
    y: pd.Series
    params: dict[str, Any]
    sensitive: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    baseline_params: dict[str, Any] | None = None

    def time_budget(self) -> float:
        """Seconds the solve may take by its time limits (the comparison solve's included)."""
        budget = float(self.params.get("time_limit", 60.0))
        if self.baseline_params is not None:
            budget += float(self.baseline_params.get("time_limit", 60.0))
        return budget

    def run(self, outbox: Outbox, phases: Phases) -> None:
        """The requested tree, then (if asked) the same settings without fairness constraints."""
        _fit(self, self.params, "main", outbox, phases.event)
        if self.baseline_params is not None:
            _fit(self, self.baseline_params, "baseline", outbox, phases.next_phase())


#: Seconds allowed per point of a sweep beyond its time limit (building, measuring).
POINT_OVERHEAD = 5.0


@dataclass(frozen=True)
class SweepSpec:
    """A sweep for a worker (picklable): the estimator's settings, the grid over them
    and the folds, run one point after another (:func:`strongtree_core.sweep.iter_sweep`)."""

    X: pd.DataFrame
    y: pd.Series
    params: dict[str, Any]
    grid: dict[str, list[Any]] | list[dict[str, list[Any]]]
    cv: list[tuple[Any, ...]] | None = None
    sensitive: tuple[str, ...] = ()
    legitimate: tuple[str, ...] = ()
    baseline_params: None = None  # a sweep has no comparison phase

    @property
    def n_points(self) -> int:
        grids = [self.grid] if isinstance(self.grid, dict) else list(self.grid)
        return sum(math.prod(len(v) for v in g.values()) for g in grids) * (len(self.cv) if self.cv else 1)

    def time_budget(self) -> float:
        """Seconds the sweep may take: every point at its time limit, plus a little each."""
        return self.n_points * (float(self.params.get("time_limit", 60.0)) + POINT_OVERHEAD)

    def run(self, outbox: Outbox, phases: Phases) -> None:
        """Every point, one after another."""
        _sweep(self, outbox, phases.event)


_number = finite_number


class _StopBridge:
    """Mirror a process-shared stop flag into a fresh ``threading.Event`` per phase."""

    def __init__(self, flag: Any) -> None:
        self._flag = flag
        self.event = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="stop-bridge").start()

    def _watch(self) -> None:
        while True:
            if self._flag.wait(0.1):
                self.event.set()
                time.sleep(0.05)

    def next_phase(self) -> threading.Event:
        self._flag.clear()
        self.event = threading.Event()
        return self.event


class _ProgressSender:
    """The ``progress=`` callback: every new tree, best value or bound is sent (the log lists
    each step); reports that change none of them are thinned to one per PROGRESS_INTERVAL."""

    def __init__(self, outbox: Any, phase: str) -> None:
        self._outbox = outbox
        self._phase = phase
        self._last_tree: str | None = None
        self._last_values: tuple = (None, None)
        self._last_sent = 0.0
        self._last_stage = ""

    def __call__(self, progress: Any) -> None:
        tree_json = progress.tree.to_json() if progress.tree is not None else None
        new_tree = tree_json is not None and tree_json != self._last_tree
        now = time.monotonic()
        values = (_number(progress.objective), _number(progress.bound))
        stage = str(getattr(progress, "stage", "") or "")
        marks = stage != self._last_stage or progress.message == "stage done"  # a stage's start and end: always
        if not new_tree and not marks and values == self._last_values and now - self._last_sent < PROGRESS_INTERVAL:
            return  # a step that changes nothing shown is sent at most every PROGRESS_INTERVAL
        self._last_values = values
        self._last_stage = stage
        if new_tree:
            self._last_tree = tree_json
        self._last_sent = now
        self._outbox.send(
            {
                "kind": "progress",
                "phase": self._phase,
                "elapsed": float(progress.elapsed),
                "objective": _number(progress.objective),
                "bound": _number(progress.bound),
                "gap": _number(progress.gap),
                "nodes": int(progress.nodes or 0),
                "message": str(progress.message or ""),
                "stage": stage,
                "tree": tree_json if new_tree else None,
            }
        )


def _fit(spec: SolveSpec, params: dict[str, Any], phase: str, outbox: Any, stop: threading.Event) -> None:
    from strongtree_core import StrongTreeClassifier, StrongTreeError
    from strongtree_core.encoding import EncodingError
    from strongtree_core.engine.routes import InfeasibleError

    try:
        model = StrongTreeClassifier(**params)
        model.fit(
            spec.X,
            spec.y,
            sensitive_features=list(spec.sensitive) or None,
            legitimate_features=list(spec.legitimate) or None,
            progress=_ProgressSender(outbox, phase),
            stop=stop,
        )
    except InfeasibleError as err:  # a proof that no tree fits: its record says so on every surface
        record = err.record.to_dict() if err.record is not None else None
        outbox.send({"kind": "error", "phase": phase, "message": str(err), "user_error": True, "record": record})
        return
    except (StrongTreeError, EncodingError) as err:  # the user can fix these: the message says how
        outbox.send({"kind": "error", "phase": phase, "message": str(err), "user_error": True})
        return
    except MemoryError:  # past the worker's address-space cap (cap_worker_memory)
        outbox.send({"kind": "error", "phase": phase, "message": out_of_memory(), "user_error": True})
        return
    except Exception as err:  # the process boundary: any failure becomes a message
        traceback.print_exc(file=sys.stderr)
        outbox.send({"kind": "error", "phase": phase, "message": crash_message(err), "user_error": False})
        return
    outbox.send({"kind": "result", "phase": phase, "tree": model.tree_.to_json()})


def _sweep(spec: SweepSpec, outbox: Any, stop: threading.Event) -> None:
    """Run the sweep point after point, each finished point's row sent as it comes; Stop keeps them."""
    from strongtree_core import StrongTreeClassifier, StrongTreeError
    from strongtree_core.encoding import EncodingError
    from strongtree_core.sweep import iter_sweep

    try:
        for event in iter_sweep(
            StrongTreeClassifier(**spec.params), spec.X, spec.y, sensitive_features=list(spec.sensitive) or None,
            legitimate_features=list(spec.legitimate) or None, grid=spec.grid, cv=spec.cv, stop=stop,
        ):
            outbox.send({"kind": "point", "phase": "main", "row": event.row, "done": event.done,
                         "total": event.total, "elapsed": event.elapsed})
    except (StrongTreeError, EncodingError) as err:  # the user can fix these: the message says how
        outbox.send({"kind": "error", "phase": "main", "message": str(err), "user_error": True})
        return
    except MemoryError:  # past the worker's address-space cap (cap_worker_memory)
        outbox.send({"kind": "error", "phase": "main", "message": out_of_memory(), "user_error": True})
        return
    except Exception as err:  # the process boundary: any failure becomes a message
        traceback.print_exc(file=sys.stderr)
        outbox.send({"kind": "error", "phase": "main", "message": crash_message(err), "user_error": False})
        return
    outbox.send({"kind": "result", "phase": "main", "tree": None})


#: Modules a solve imports, loaded while the worker waits (seconds on a busy machine).
PREWARM_MODULES = (
    "strongtree_core.estimator.classifier",
    "strongtree_core.engine.routes",
    "strongtree_core.accel",
    "strongtree_core.metrics",
    "highspy",
)


def prewarm() -> None:
    """Import what a solve needs and detect the Gurobi licence, before the solve is asked for."""
    for name in PREWARM_MODULES:
        importlib.import_module(name)
    from strongtree_core.solvers import gurobi_licence

    gurobi_licence()


def worker_memory_cap() -> int:
    """Bytes of address space a worker may use: the default memory limit with headroom."""
    from strongtree_core.engine.limits import WORKER_HEADROOM, default_memory_limit

    return int(WORKER_HEADROOM * default_memory_limit())


def cap_worker_memory() -> bool:
    """Cap this process's address space (:func:`worker_memory_cap`): one solve cannot take the host."""
    from strongtree_core.engine.limits import cap_address_space

    return cap_address_space(worker_memory_cap())


def out_of_memory() -> str:
    from strongtree_core.engine.limits import OUT_OF_MEMORY, human_bytes

    return OUT_OF_MEMORY.format(limit=human_bytes(worker_memory_cap()))


def lower_priority() -> None:
    """Yield the CPU to the server first (where the platform allows it)."""
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # pragma: no cover - Windows, or not permitted
        pass


class _Outbox:
    """The writing end of the pipe, one message at a time (progress may come from a solver's thread)."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._connection.send(message)


def worker_main(inbox: Any, outbox: Any, stop_flag: Any) -> None:
    """Process entry point: lower priority, prewarm, wait for one job (a :class:`SolveSpec`, a
    :class:`SweepSpec`, a comparison of formulations :class:`strongtree_studio.jobs.comparison_job.CompareSpec`:
    any :class:`strongtree_studio.jobs.protocol.WorkerJob`) and run it.

    ``outbox`` is the writing end of a pipe; the server reads the other end.
    """
    outbox = _Outbox(outbox)
    lower_priority()
    cap_worker_memory()
    try:
        prewarm()
    except Exception as err:  # the process boundary
        traceback.print_exc(file=sys.stderr)
        outbox.send({"kind": "ready", "failed": f"{type(err).__name__}: {err}"})
    else:
        outbox.send({"kind": "ready"})
    spec = inbox.get()
    if spec is None:
        return
    spec.run(outbox, _StopBridge(stop_flag))
    outbox.send({"kind": "done"})
