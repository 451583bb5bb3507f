"""``strongtree app``: the dashboard from any folder, with the same options as ``streamlit run``.

``strongtree app [options]`` (or ``python -m strongtree_studio [options]``) runs
``streamlit run <the package's entry script> [options]`` with this interpreter.  The
app's Streamlit settings (:data:`CONFIG`: theme, upload size, garbage collection,
toolbar) are passed as flags, so they hold whichever folder it starts from; an option
the user gives wins over the app's own.  The package's folder goes on ``PYTHONPATH``, so
a checkout that is not installed starts the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, Sequence

PACKAGE = Path(__file__).resolve().parent
#: The script Streamlit runs (alone in its folder: see its docstring).
APP_SCRIPT = PACKAGE / "entry" / "app.py"
#: The app's Streamlit settings; the checkout's ``.streamlit/config.toml`` holds the same.
CONFIG = PACKAGE / "assets" / "config.toml"


def config_options(config: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """The settings of a Streamlit config file as command-line options: ``{"--server.maxUploadSize": "50"}``."""
    options: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            options.update(config_options(value, name))
        else:
            options[f"--{name}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return options


def given_options(args: Sequence[str]) -> set[str]:
    """The options among ``args`` (``--a.b value`` and ``--a.b=value`` both give ``--a.b``)."""
    return {arg.split("=", 1)[0] for arg in args if arg.startswith("--")}


def streamlit_command(args: Sequence[str]) -> list[str]:
    """``python -m streamlit run`` with the app's settings (those the user did not give), the
    entry script, then ``args`` as given."""
    settings = config_options(tomllib.loads(CONFIG.read_text(encoding="utf-8")))
    given = given_options(args)
    flags = [part for option, value in settings.items() if option not in given for part in (f"{option}={value}",)]
    return [sys.executable, "-m", "streamlit", "run", *flags, str(APP_SCRIPT), *args]


def environment() -> dict[str, str]:
    """This process's environment with the package's parent folder first on ``PYTHONPATH``."""
    env = dict(os.environ)
    paths = [str(PACKAGE.parent), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def main(argv: Sequence[str] | None = None) -> int:
    """Start the dashboard; returns Streamlit's exit code (on POSIX the process becomes Streamlit's)."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = streamlit_command(args)
    if os.name == "posix":  # Ctrl-C, signals and the exit code go straight to Streamlit
        sys.stdout.flush()
        os.execve(sys.executable, command, environment())
    try:
        return subprocess.call(command, env=environment())
    except KeyboardInterrupt:  # pragma: no cover - Windows: Streamlit got the Ctrl-C too and stops
        return 130
