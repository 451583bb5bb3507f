"""``strongtree app [streamlit run options]``: start the dashboard.

The library never imports the dashboard: this command runs the installed
``strongtree_studio`` package as a program (``python -m strongtree_studio``), which
hands the options to ``streamlit run`` (:mod:`strongtree_studio.launch`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from typing import Sequence

from strongtree_core.cli.messages import EXIT_INPUT

#: The dashboard's package, and what it needs beyond the library.
APP_PACKAGE = "strongtree_studio"
APP_NEEDS = ("streamlit", "plotly")

APP_HELP = "start the dashboard in the browser (needs the app extra: pip install \"strongtree[app]\")"
APP_DESCRIPTION = (
    "Start StrongTree Studio, the dashboard, from any folder. Every option is passed to `streamlit run` "
    "(see `streamlit run --help`), for example --server.port 8600, --server.address 0.0.0.0 or "
    "--server.headless true; the app's own settings (its theme, 50 MB uploads, no full garbage collection "
    "after each run, a minimal toolbar) are passed too, unless given here. The run history and each "
    "browser's work are kept in the user's data folder (STRONGTREE_RUNS_DB sets another place)."
)
MSG_NO_APP = (
    "The dashboard is not installed: {missing} cannot be found. Install it with the library: "
    "pip install \"strongtree[app]\""
)


def add_app_parser(sub) -> None:
    """``strongtree app``: its help (the options themselves go to Streamlit unparsed, see :func:`run_app`)."""
    parser = sub.add_parser("app", help=APP_HELP, description=APP_DESCRIPTION,
                            usage="strongtree app [streamlit run options]")
    parser.add_argument("streamlit_options", nargs=argparse.REMAINDER, metavar="options",
                        help="options of `streamlit run`, passed as given")


def missing_parts() -> list[str]:
    """What the dashboard needs and this environment lacks (looked up, not imported)."""
    return [name for name in (APP_PACKAGE, *APP_NEEDS) if importlib.util.find_spec(name) is None]


def run_app(options: Sequence[str]) -> int:
    """Start the dashboard with ``options``; returns its exit code (on POSIX this process becomes it)."""
    missing = missing_parts()
    if missing:
        print(MSG_NO_APP.format(missing=", ".join(missing)), file=sys.stderr)
        return EXIT_INPUT
    command = [sys.executable, "-m", APP_PACKAGE, *options]
    if os.name == "posix":
        sys.stdout.flush()
        os.execv(sys.executable, command)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:  # pragma: no cover - Windows: the dashboard got the Ctrl-C too and stops
        return 130


def wants_app(argv: Sequence[str]) -> bool:
    """``strongtree app ...`` without ``-h`` / ``--help``: handled before argparse, which would refuse
    Streamlit's options as unknown."""
    return bool(argv) and argv[0] == "app" and not {"-h", "--help"} & set(argv[1:])
