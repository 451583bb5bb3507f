"""The ``strongtree`` command's entry point (and ``python -m strongtree_core``), light on purpose.

Two things a command-line program owes its terminal and that :func:`strongtree_core.cli.main`
cannot do alone:

* **Ctrl-C at any moment is exit code 130 and one line**, never a traceback: also while
  the libraries are still being imported (seconds on a loaded machine), which is why this
  module and ``strongtree_core`` itself import nothing heavy before :func:`run` catches it.
* **The process ends when its work is done.**  A HiGHS run that did not answer a Stop
  or its time limit is left to finish its step in the background
  (:mod:`strongtree_core.solvers.highs_run`); at interpreter exit Python would wait for
  it, up to a minute, and then tear down HiGHS's threads under it
  ("terminate called without an active exception", SIGABRT).  The command has written
  everything by then, so it flushes its output and leaves at once.
"""

from __future__ import annotations

import os
import sys

#: Exit code of a program stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
INTERRUPTED_EARLY = "interrupted: nothing was solved or written."


def _solver_runs_left() -> bool:
    """Whether a solver run abandoned after a Stop or its time limit still runs in this process."""
    highs_run = sys.modules.get("strongtree_core.solvers.highs_run")
    return highs_run is not None and any(t.is_alive() for t in getattr(highs_run, "_abandoned", ()))


def _stop_highs_threads() -> None:
    """Stop HiGHS's worker threads while the interpreter still runs: its scheduler, started from a
    thread of a pool that has ended since, aborted the process when static destructors met its
    threads still joinable at exit (seen after a threaded sweep)."""
    highspy = sys.modules.get("highspy")
    if highspy is not None:
        try:
            highspy.Highs.resetGlobalScheduler(True)
        except Exception:  # noqa: BLE001 - an older highspy without it: nothing to stop
            pass


def leave(code: int) -> None:
    """End the process with ``code``: at once when a solver run is still going (after flushing
    the output), else the normal way (exit handlers run) once HiGHS's threads are stopped."""
    if not _solver_runs_left():
        _stop_highs_threads()
    if _solver_runs_left():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def run() -> None:
    """Run the command line of ``sys.argv`` and exit with its code.

    The command's Ctrl-C is handled here, and only here: importing ``strongtree_core`` leaves
    the signal alone (a program of its user's keeps its own ``except KeyboardInterrupt``).  The
    package imports nothing heavy, so the libraries load inside this ``try``.  While they load,
    the signal is noted as well as raised: a KeyboardInterrupt inside numpy's C extensions
    comes out as an ImportError ("PyCapsule_Import could not import module ..."), and an
    import that failed after a Ctrl-C is the Ctrl-C, not a broken install."""
    import signal

    noted: list[int] = []

    def note_and_raise(signum, frame):
        noted.append(signum)
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, note_and_raise)
    try:
        try:
            from strongtree_core.cli import main
        finally:
            signal.signal(signal.SIGINT, before)
        code = main()
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED_EARLY + "\n")
        code = EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - re-raised unless a Ctrl-C cut the import short
        if not noted:
            raise
        sys.stderr.write(INTERRUPTED_EARLY + "\n")
        code = EXIT_INTERRUPTED
    leave(code)
