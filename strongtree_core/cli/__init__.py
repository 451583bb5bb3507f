"""The command line: ``strongtree fit | sweep | predict | export | report | app`` (also ``python -m strongtree_core``).

``fit`` learns a tree from a CSV file (``-``: standard input) and prints its rules and
how it was obtained, or with ``--json`` one JSON object; ``--output`` writes the tree
(``-``: standard output).  ``sweep`` fits a tree at every point of a grid (notions,
bounds, depths, lambdas, folds) on local workers or a Dask cluster and writes one row
per point.  ``predict`` adds a prediction column to a CSV file;
``export`` writes a stored tree as rules, JSON, DOT, SQL or Python; ``report`` writes a
self-contained HTML report of a stored tree on its table; ``app`` starts the dashboard
(options as for ``streamlit run``).  Input is checked
before any solve: a problem there (a file, an option's value) is a message and exit code 2; a
problem the solve finds (settings that do not go together, infeasible constraints) exit code 1; a fault of the program exit
code 3, in one line; Ctrl-C exit code 130, with the best tree so far reported and written.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Sequence

from strongtree_core.cli.dashboard import run_app, wants_app
from strongtree_core.cli.files import output_problem as _output_problem
from strongtree_core.cli.files import read_table
from strongtree_core.cli.fit import run_fit
from strongtree_core.cli.messages import *  # noqa: F403 - the messages tests assert
from strongtree_core.cli.messages import EXIT_FAULT, EXIT_INTERRUPTED, INTERNAL_ERROR, INTERRUPTED_OUTSIDE_SOLVE
from strongtree_core.cli.parser import build_parser
from strongtree_core.cli.report import run_report
from strongtree_core.cli.sweep import run_sweep
from strongtree_core.cli.use import run_export, run_predict
from strongtree_core.errors import BackendLostWarning, NotProvenWarning

COMMANDS = {"fit": run_fit, "sweep": run_sweep, "predict": run_predict, "export": run_export, "report": run_report}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code.

    Examples
    --------
    >>> from strongtree_core.cli import main
    >>> main(["fit", "hiring.csv", "--target", "hired", "--output", "tree.json"])  # doctest: +SKIP
    0
    >>> main(["export", "--tree", "tree.json", "--format", "sql"])  # doctest: +SKIP
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if wants_app(argv):
        return run_app(argv[1:])
    args = build_parser().parse_args(argv)
    # The reports say how every solve ended (status, gap, certified): the warning would repeat them.
    warnings.filterwarnings("ignore", category=NotProvenWarning)
    warnings.showwarning = _notes(warnings.showwarning)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:  # Ctrl-C outside a solve (reading, writing): one line, no traceback
        print(INTERRUPTED_OUTSIDE_SOLVE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of standard output went away (e.g. `| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAULT
    except Exception as exc:  # a fault of the program: one line, no traceback
        print(INTERNAL_ERROR.format(kind=type(exc).__name__, detail=exc), file=sys.stderr)
        return EXIT_FAULT


def _notes(show):
    """``warnings.showwarning`` that prints what happened to a sweep's backend as one line, "note: ..."
    (not Python's file and line), and every other warning as before (installed once per process)."""
    if getattr(show, "notes_as_lines", False):
        return show

    def shown(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, BackendLostWarning):
            print(f"note: {message}", file=sys.stderr)
            return
        show(message, category, filename, lineno, file, line)

    shown.notes_as_lines = True
    return shown


__all__ = ["main", "read_table", "COMMANDS"]
