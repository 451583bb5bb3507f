"""Ctrl-C belongs to the process that started a sweep, never to its workers (this module is outside
:mod:`strongtree_core.sweep`, whose package loads pandas and scikit-learn: a process worker runs
:func:`ignore_sigint` as it starts, and loads only this module for it).

A terminal sends SIGINT to its whole foreground process group, and worker processes
(joblib's loky workers, a local Dask cluster's workers) are in that group: each one
would die of its own KeyboardInterrupt, and the parent would see a broken pool and
lose its finished points.  So workers are started with SIGINT blocked (a blocked
signal mask is inherited through ``fork`` and ``exec``, so no window exists in which a
new worker could be killed by it) and then ignore it; the parent stops them through
the sweep's Stop relay and shuts them down itself.  Loky's own resource tracker is
started the same way.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

_HAVE_SIGMASK = hasattr(signal, "pthread_sigmask")


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while workers (and the threads that will start
    more of them) are created: they inherit the blocked mask."""
    if not _HAVE_SIGMASK:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def block_sigint_in_this_thread() -> None:
    """For a thread that only works (never the main thread): SIGINT is delivered elsewhere,
    and every thread and process it starts inherits the blocked mask."""
    if _HAVE_SIGMASK and threading.current_thread() is not threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def ignore_sigint() -> None:
    """In a worker process: ignore SIGINT (then unblock it, so a blocked one pending is
    discarded).  Only the main thread may set a handler; elsewhere nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _HAVE_SIGMASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def kill_worker_processes() -> list[int]:
    """Kill every process this one started, and theirs (sweep workers that ignore Ctrl-C), before
    this process quits at once; resource trackers are left to clean up after it, as they do when
    their parent ends.  Returns the pids killed.

    psutil walks the process tree and kills (SIGKILL on POSIX, ``TerminateProcess`` on Windows,
    which has no SIGKILL)."""
    import psutil

    try:
        found = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    killed = []
    for process in found:
        try:
            if any("resource_tracker" in part for part in process.cmdline()):
                continue
            process.kill()
            killed.append(process.pid)
        except psutil.Error:  # gone already, or not ours to see
            pass
    return killed
