"""A script that starts a local Dask cluster without ``if __name__ == "__main__":`` is told to add it.

A local cluster starts its workers as new Python processes (spawn), and each one runs the
caller's ``__main__`` script again from the top: without the guard, every worker tries to
start a cluster of its own and none starts.
"""

from __future__ import annotations

import ast
import multiprocessing
import sys
from pathlib import Path
from typing import Sequence

from strongtree_core.errors import StrongTreeError

MAIN_GUARD = (
    "A local Dask cluster starts its workers as new Python processes, and each one runs your script {script} "
    "again from the top: that script starts the sweep outside an `if __name__ == \"__main__\":` block, so every "
    "worker tried to start a cluster of its own and none started. Put the code that runs the sweep under "
    "`if __name__ == \"__main__\":` (see the Dask example in the user guide, docs/guide/sweeps.rst)."
)
#: What multiprocessing and Dask say when a worker process re-ran an unguarded script.
BOOTSTRAP_SIGNS = ("finished its bootstrapping phase", "Nanny failed to start")


def unguarded_main_script(main=None) -> str | None:
    """The path of the script Python runs as ``__main__`` (or of ``main``, a module) when it has no
    ``if __name__ == "__main__":`` block (None when it has one, or when it is no script: a console,
    a notebook, ``-c``)."""
    main = sys.modules.get("__main__") if main is None else main
    path = getattr(main, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and "__name__" in ast.unparse(node.test) \
                and "__main__" in ast.unparse(node.test):
            return None
    return str(path)


def says(exc: BaseException | None, signs: Sequence[str]) -> bool:
    """Whether ``exc`` or an exception it came from says one of ``signs``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if any(sign in str(exc) for sign in signs):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def rerun_script():
    """The caller's script as a module, when this process is a spawned worker importing it again
    (None otherwise).  Python's own spawn runs it as ``__mp_main__`` and names it ``__main__`` too;
    the processes of Dask's nanny keep their own ``__main__`` and run it as ``__mp_main__`` beside
    it, with no parent process on record: both are read."""
    main, again = sys.modules.get("__main__"), sys.modules.get("__mp_main__")
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        return again or main
    if again is not None and getattr(again, "__name__", "") == "__mp_main__" \
            and (again is not main or multiprocessing.parent_process() is not None):
        return again
    return None


def refuse_in_a_bootstrapping_worker() -> None:
    """A worker process that is re-running the caller's script (spawn) must not start a cluster of its own."""
    again = rerun_script()
    if again is not None:
        script = unguarded_main_script(again) or getattr(again, "__file__", None) or "your script"
        raise StrongTreeError(MAIN_GUARD.format(script=script))


def guard_failure(exc: BaseException, script: str | None) -> StrongTreeError | None:
    """The message for a local cluster that failed to start because ``script`` (the unguarded main
    script, read by :func:`unguarded_main_script` *before* the start: starting the nanny's
    processes clears ``__main__.__file__`` in this one) lacks the guard; None otherwise."""
    if script is not None and says(exc, BOOTSTRAP_SIGNS):
        return StrongTreeError(MAIN_GUARD.format(script=script))
    return None
