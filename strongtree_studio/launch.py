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
#: Exit code of an option the dashboard cannot start with (as the library's command line: bad input).
EXIT_INPUT = 2
#: Options whose value is a TCP port.
PORT_OPTIONS = ("server.port", "browser.serverPort")

ERR_UNKNOWN_OPTION = "strongtree app: error: {option} is not an option of `streamlit run` (see streamlit run --help){hint}"
ERR_NO_VALUE = "strongtree app: error: {option} needs a value, e.g. {option} {example}"
ERR_OPTION_VALUE = "strongtree app: error: argument {option}: give {what} (got {value!r})"
#: What each kind of Streamlit option takes, in words.
OPTION_WORDS = {
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    "port": "a port number from 1 to 65535, e.g. 8501",
}
_TRUE_FALSE = {"true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n"}


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


def option_problem(args: Sequence[str], known: dict[str, type] | None = None) -> str | None:
    """What is wrong with the options of ``streamlit run`` in ``args`` (None when nothing is), in this command's
    words: an unknown option, one without its value, or a value of the wrong kind (a port past 65535 made
    Streamlit end in a traceback).  ``known``: option name -> type (default: Streamlit's own options)."""
    from difflib import get_close_matches

    from strongtree_core.numbers import read_integer, read_number

    known = streamlit_options() if known is None else known
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":  # the rest is the script's own arguments
            return None
        if not arg.startswith("--"):
            continue
        option, has_value, value = arg.partition("=")
        name = option[2:]
        if name not in known:
            close = get_close_matches(name, list(known), n=1)
            return ERR_UNKNOWN_OPTION.format(option=option, hint=f"; did you mean --{close[0]}?" if close else "")
        if not has_value:
            if i >= len(args) or args[i].startswith("--"):
                return ERR_NO_VALUE.format(option=option, example="8600" if name in PORT_OPTIONS else "true")
            value = args[i]
            i += 1
        kind = known[name]
        if name in PORT_OPTIONS:
            port = read_integer(value)
            ok, what = port is not None and 1 <= port <= 65535, OPTION_WORDS["port"]
        elif kind is int:
            ok, what = read_integer(value) is not None, OPTION_WORDS[int]
        elif kind is float:
            ok, what = read_number(value) is not None, OPTION_WORDS[float]
        elif kind is bool:
            ok, what = value.strip().lower() in _TRUE_FALSE, OPTION_WORDS[bool]
        else:
            ok, what = True, ""
        if not ok:
            return ERR_OPTION_VALUE.format(option=option, what=what, value=value)
    return None


def streamlit_options() -> dict[str, type]:
    """The options of ``streamlit run`` (its configuration's), each with the type of its value."""
    from streamlit import config

    return {name: option.type for name, option in config._config_options_template.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Start the dashboard; returns Streamlit's exit code (on POSIX the process becomes Streamlit's).
    An option Streamlit cannot start with is refused first, with exit code 2 (:func:`option_problem`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    problem = option_problem(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_INPUT
    command = streamlit_command(args)
    if os.name == "posix":  # Ctrl-C, signals and the exit code go straight to Streamlit
        sys.stdout.flush()
        os.execve(sys.executable, command, environment())
    try:
        return subprocess.call(command, env=environment())
    except KeyboardInterrupt:  # pragma: no cover - Windows: Streamlit got the Ctrl-C too and stops
        return 130
