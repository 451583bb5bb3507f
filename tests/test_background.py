"""The daemon threads that a fit's search and its deadline's watch run on, kept between fits."""

from __future__ import annotations

import contextvars
import threading
import time

import numpy as np
import pytest

from strongtree_core import StrongTreeClassifier, background


def _wait_for_idle(count: int) -> None:
    waited = time.monotonic() + 5.0
    while background.idle_threads() < count and time.monotonic() < waited:
        time.sleep(0.001)


@pytest.mark.timing
def test_back_to_back_work_starts_no_thread_and_an_error_does_not_end_one(monkeypatch) -> None:
    # Threads left by earlier tests may still be running a given-up search (they join the idle ones
    # when it returns) or be near the end of their wait (they leave). Give every waiting thread a
    # piece at once, so that each waits again with a long time, then count from there.
    monkeypatch.setattr(background, "IDLE_SECONDS", 600.0)
    waiting = max(background.idle_threads(), 1)
    together = threading.Barrier(waiting + 1)
    for _ in range(waiting):
        background.run_in_background(lambda: together.wait(5.0))
    together.wait(5.0)
    _wait_for_idle(waiting)
    idle = background.idle_threads()
    assert idle >= 1
    started: list[str] = []
    start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda thread: (started.append(thread.name), start(thread)))
    seen: list[int] = []

    def fail() -> None:
        seen.append(threading.get_ident())
        raise RuntimeError("the work keeps its own errors")

    for _ in range(idle + 2):  # more pieces than waiting threads: a thread that an error ended is not replaced
        assert background.run_in_background(fail).wait(5.0)
        _wait_for_idle(idle)
    assert started == [] and background.idle_threads() >= idle
    assert threading.get_ident() not in seen


def test_work_runs_in_an_empty_context_as_in_a_new_thread() -> None:
    var = contextvars.ContextVar("var", default="unset")
    var.set("the caller's")
    leaked = contextvars.ContextVar("leaked", default="unset")
    seen: list[str] = []
    assert background.run_in_background(lambda: (seen.append(var.get()), leaked.set("set by work"))).wait(5.0)
    assert background.run_in_background(lambda: seen.append(leaked.get())).wait(5.0)
    assert seen == ["unset", "unset"]


@pytest.mark.timing
def test_pieces_given_together_all_run_and_idle_threads_end(monkeypatch) -> None:
    monkeypatch.setattr(background, "IDLE_SECONDS", 0.05)
    waiting = background.idle_threads()  # each takes one piece, then waits for the next with the short time
    together = threading.Barrier(waiting + 1)
    for _ in range(waiting):
        background.run_in_background(lambda: together.wait(5.0))
    together.wait(5.0)
    gate = threading.Event()
    ran: list[int] = []
    lock = threading.Lock()

    def piece(i: int):
        def run() -> None:
            gate.wait(5.0)
            with lock:
                ran.append(i)
        return run

    ended = [background.run_in_background(piece(i)) for i in range(6)]  # more than are waiting: new threads
    gate.set()
    assert all(e.wait(5.0) for e in ended)
    assert sorted(ran) == list(range(6))
    # pieces given while threads end at their idle time are still run (the race of a queued piece and a
    # thread that times out is settled under the lock)
    for _ in range(20):
        time.sleep(0.045)
        assert background.run_in_background(lambda: None).wait(5.0)
    stop_waiting = time.monotonic() + 5.0
    while background.idle_threads() and time.monotonic() < stop_waiting:
        time.sleep(0.02)
    assert background.idle_threads() == 0


@pytest.mark.timing
def test_back_to_back_fits_start_no_thread(monkeypatch) -> None:
    """A fit's search and the watch of its deadline run on threads that earlier fits used (before,
    every fit started two). Each fit waits for the last one's watch to be back to waiting: on a busy
    machine a fit may begin before that, and then one more thread is started and kept."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(200, 6))
    y = X[:, 0] ^ X[:, 1]
    StrongTreeClassifier(depth=2, time_limit=10).fit(X, y)
    _wait_for_idle(1)
    idle = background.idle_threads()
    started: list[str] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    for _ in range(20):
        assert StrongTreeClassifier(depth=2, time_limit=10).fit(X, y).record_.certified
        _wait_for_idle(idle)
    assert started == []
