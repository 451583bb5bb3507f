"""Progress events from inside a solve: throttled, de-duplicated, never raising.

Solver callbacks run inside the solver; an exception escaping from them aborts
the solve (SCIP) or is lost (HiGHS, Gurobi).  :class:`ProgressReporter` is the
one place that calls the user's callback, measures elapsed time from the start
of the backend's ``solve`` and keeps the best incumbent seen.  While the solver
is silent (long LP solves at the root were measured at up to 4 s), a heartbeat
thread repeats the last known objective, bound and node count every
``interval`` seconds so that the elapsed time keeps moving.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator

import numpy as np

from strongtree_core.solvers.base import ProgressCallback, ProgressEvent, relative_gap

#: Seconds between two progress events that bring no new incumbent.
PROGRESS_INTERVAL = 0.5
#: Objective values or bounds this large mean "none yet" (SCIP's infinity is 1e20).
INFINITE_BOUND = 1e19


class ProgressReporter:
    """Sends :class:`ProgressEvent` to ``callback`` at most every ``interval``
    seconds, plus one event per improving incumbent.

    Parameters
    ----------
    callback : callable or None
        The user's progress callback; None makes every method a cheap no-op
        apart from bookkeeping of the best incumbent.
    sense : {"max", "min"}
        Direction in which an incumbent counts as an improvement.
    interval : float
        Minimum seconds between events without a new incumbent.
    """

    def __init__(self, callback: ProgressCallback | None, sense: str, interval: float = PROGRESS_INTERVAL) -> None:
        self._callback = callback
        self._sign = 1.0 if sense == "max" else -1.0
        self._interval = interval
        self._t0 = time.perf_counter()
        self._last_emit = -np.inf
        self._last_elapsed = 0.0
        self._last_values: tuple[float | None, float | None, int] = (None, None, 0)
        self._state = threading.Lock()
        self._calling = threading.Lock()
        self._closed = False
        self.best_objective: float | None = None
        self.best_x: np.ndarray | None = None
        #: First exception raised by the user's callback (reported, never re-raised).
        self.callback_error: str | None = None

    def elapsed(self) -> float:
        """Seconds since the reporter was created (the start of the solve)."""
        return time.perf_counter() - self._t0

    def due(self) -> bool:
        """True when a throttled event may be sent now."""
        return self._callback is not None and self.elapsed() - self._last_emit >= self._interval

    def improves(self, objective: float) -> bool:
        """True when ``objective`` beats the best incumbent reported so far."""
        return self.best_objective is None or self._sign * (objective - self.best_objective) > 1e-9

    @property
    def last_bound(self) -> float | None:
        """The most recent bound the solver reported (None before any)."""
        return self._last_values[1]

    def incumbent(self, x: np.ndarray, objective: float, bound: float | None, nodes: int) -> None:
        """Record a feasible solution; send an event if it improves the best one."""
        with self._state:
            if not self.improves(objective):
                return
            self.best_objective = float(objective)
            self.best_x = np.array(x, dtype=float)
        self._remember(self.best_objective, bound, nodes)
        self._send(*self._last_values, self.best_x)

    def tick(self, objective: float | None, bound: float | None, nodes: int) -> None:
        """Remember a snapshot; send it if the throttle allows."""
        self._remember(objective, bound, nodes)
        if self.due():
            self._send(*self._last_values, None)

    def close(self) -> None:
        """Send nothing more (the solve has returned)."""
        with self._calling:
            self._closed = True

    def _remember(self, objective: float | None, bound: float | None, nodes: int) -> None:
        with self._state:
            self._last_values = (_finite(objective), _finite(bound), int(nodes))

    @contextlib.contextmanager
    def heartbeat(self) -> Iterator[None]:
        """While the block runs, repeat the last snapshot whenever the solver has
        been silent for ``interval`` seconds."""
        if self._callback is None:
            yield
            return
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self._interval / 5):
                if self.due():
                    self._send(*self._last_values, None)

        thread = threading.Thread(target=beat, name="progress-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _send(self, objective: float | None, bound: float | None, nodes: int, x: np.ndarray | None) -> None:
        if self._callback is None:
            return
        with self._calling:
            if self._closed:
                return
            with self._state:
                elapsed = max(self.elapsed(), self._last_elapsed)
                self._last_elapsed = self._last_emit = elapsed
            event = ProgressEvent(
                elapsed=elapsed,
                objective=objective,
                bound=bound,
                gap=relative_gap(objective, bound),
                nodes=int(nodes),
                incumbent=None if x is None else x.copy(),
            )
            try:
                self._callback(event)
            except Exception as exc:  # noqa: BLE001 - an exception here would abort or be lost in the solver
                if self.callback_error is None:
                    self.callback_error = f"the progress callback raised {type(exc).__name__}: {exc}"


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) and abs(value) < INFINITE_BOUND else None
