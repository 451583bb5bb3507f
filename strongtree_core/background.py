"""Daemon threads kept between fits, for the work a fit runs beside its caller.

A large or constrained search runs in a thread (so that a search that overruns its limit can be
given up, see ``engine.INLINE_CELLS`` for the small ones that run in the caller's thread), a second
thread watches its deadline, and ``n_jobs`` workers share the search out. Started anew for each fit,
such threads cost about 0.1 ms each to start, and a new thread gets a fresh allocator arena from
glibc, whose pages are faulted in again on every fit (car-evaluation at depth 3: 5.3 ms per fit
with new threads, 4.0 ms with the work run in the caller's thread). Here a thread that has finished
its work waits :data:`IDLE_SECONDS` for the next piece, so back-to-back fits reuse it.

Each piece of work runs in an empty :mod:`contextvars` context, as in a new thread.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from typing import Callable

#: How long a thread with no work waits for more before it ends.
IDLE_SECONDS = 30.0

_lock = threading.Lock()
_work: queue.SimpleQueue = queue.SimpleQueue()
_idle = 0  # threads waiting for work, less the pieces already queued for them (under _lock)


def run_in_background(work: Callable[[], object]) -> threading.Event:
    """Run ``work()`` in a daemon thread (a waiting one, else a new one); the event is set when it
    has returned or raised. What it returns or raises is dropped: ``work`` keeps its own result."""
    global _idle
    done = threading.Event()
    with _lock:
        if _idle:
            _idle -= 1
            _work.put((work, done))
            return done
    threading.Thread(target=_serve, args=(work, done), name="strongtree-background", daemon=True).start()
    return done


def _serve(work: Callable[[], object], done: threading.Event) -> None:
    global _idle
    while True:
        try:
            contextvars.Context().run(work)
        except BaseException:  # noqa: BLE001 - the work keeps its own errors; this thread serves on
            pass
        finally:
            done.set()
        with _lock:
            _idle += 1
        try:
            work, done = _work.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _lock:  # a piece queued for this thread just now is still served
                try:
                    work, done = _work.get_nowait()
                except queue.Empty:
                    _idle -= 1
                    return


def idle_threads() -> int:
    """Threads waiting for work now (for tests)."""
    with _lock:
        return _idle
