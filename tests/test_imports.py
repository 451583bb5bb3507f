"""Importing the library has no side effects: no signal handler, no heavy library, names a type
checker can see.

A user's program that imports ``strongtree_core`` keeps its own Ctrl-C (the command line's
handling lives in :mod:`strongtree_core.command` alone), ``import strongtree_core`` costs
milliseconds, and ``from strongtree_core import StrongTreeClassifier`` (the README's import) is
the class to mypy, not ``Any``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from strongtree_core.command import INTERRUPTED_EARLY

ROOT = Path(__file__).resolve().parents[1]
#: CPU seconds ``import strongtree_core`` may take in a new interpreter.
LIGHT_IMPORT_CPU = 0.3
#: Libraries that the package's own import must not load: each costs a tenth of a second or more.
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "numba", "psutil", "streamlit", "highspy", "pyscipopt")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def test_importing_the_package_loads_no_heavy_library_sets_no_handler_and_costs_little_cpu():
    code = textwrap.dedent(f"""
        import json, signal, sys, threading, time
        handler = signal.getsignal(signal.SIGINT)
        started = time.process_time()
        import strongtree_core
        cpu = time.process_time() - started
        print(json.dumps({{"cpu": cpu, "loaded": [m for m in {HEAVY!r} if m in sys.modules],
                           "same_handler": signal.getsignal(signal.SIGINT) is handler,
                           "threads": threading.active_count()}}))
    """)
    # as a script, and from a package's __init__ under `python -m` (Python sets sys.argv[0] to "-m"
    # while it imports the package: a library that looked at it took Ctrl-C from its user)
    for argv in (["-c", code], ["-m", "light_import_probe"]):
        result = _run_probe(argv, code)
        assert result["loaded"] == [], result
        assert result["same_handler"], result
        assert result["threads"] == 1, result
        assert result["cpu"] < LIGHT_IMPORT_CPU, result


def _run_probe(argv: list[str], code: str) -> dict:
    """Run ``code`` in a new interpreter (``-c``, or as the ``__init__`` of a package run with ``-m``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        if argv[0] == "-m":
            package = Path(folder) / argv[1]
            package.mkdir()
            (package / "__init__.py").write_text(code)
            (package / "__main__.py").write_text("")
        env = _env()
        env["PYTHONPATH"] = os.pathsep.join([folder, env["PYTHONPATH"]])
        done = subprocess.run([sys.executable, *argv], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


#: The package's __init__: Python imports it with sys.argv[0] == "-m".
USER_PACKAGE_INIT = """
    import strongtree_core
    from strongtree_core import StrongTreeClassifier  # the library's heavy part loads too
"""
USER_PACKAGE_MAIN = """
    import atexit
    import sys
    import time

    from userpkg import StrongTreeClassifier

    atexit.register(lambda: print("atexit ran", flush=True))
    try:
        print("ready", StrongTreeClassifier.__name__, flush=True)
        time.sleep(120)
    except KeyboardInterrupt:
        print("its own except ran", flush=True)
        sys.exit(3)
    finally:
        print("its own finally ran", flush=True)
"""


def test_a_user_package_run_with_python_m_keeps_its_own_ctrl_c(tmp_path):
    """``python -m userpkg``, whose package imports strongtree_core: Ctrl-C reaches the user's
    ``except KeyboardInterrupt``, ``finally`` and exit handlers, and its own exit code."""
    package = tmp_path / "userpkg"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(USER_PACKAGE_INIT))
    (package / "__main__.py").write_text(textwrap.dedent(USER_PACKAGE_MAIN))
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    process = subprocess.Popen([sys.executable, "-m", "userpkg"], cwd=tmp_path, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = _first_line(process, timeout=120)
        assert ready.startswith("ready StrongTreeClassifier"), ready
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 3, (out, err)
    assert out.splitlines() == ["its own except ran", "its own finally ran", "atexit ran"], (out, err)
    assert INTERRUPTED_EARLY not in err


def _first_line(process: subprocess.Popen, timeout: float) -> str:
    """The first line the process prints (read in a thread, so that a silent process fails the test)."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert lines and lines[0], f"no line within {timeout} s: {process.poll()!r}"
    return lines[0].strip()


USER_SCRIPT = """
    from strongtree_core import FittedTree, NotProvenWarning, StrongTreeClassifier

    clf = StrongTreeClassifier(depth=2)
    reveal_type(clf)
    reveal_type(clf.fit)
    reveal_type(FittedTree.from_json)
    reveal_type(NotProvenWarning)
    StrongTreeClassifier(depth="two")
"""


def test_type_checkers_see_the_readme_s_names(tmp_path):
    """mypy on a user's script importing the README's way: the real classes, and a wrong argument caught."""
    mypy = pytest.importorskip("mypy.api")
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(USER_SCRIPT))
    previous = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(ROOT)
    try:
        out, err, _ = mypy.run(["--no-incremental", "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent",
                                "--no-error-summary", str(script)])
    finally:
        if previous is None:
            os.environ.pop("MYPYPATH", None)
        else:
            os.environ["MYPYPATH"] = previous
    lines = [line.split(": ", 1)[1] for line in out.splitlines() if ": " in line]
    assert 'note: Revealed type is "strongtree_core.estimator.classifier.StrongTreeClassifier"' in lines, out + err
    assert any(line.startswith('note: Revealed type is "def (') and "strongtree_core.estimator.classifier.StrongTreeClassifier"
               in line for line in lines[1:2]), out
    assert any("strongtree_core.tree.fitted.FittedTree" in line for line in lines[2:3]), out
    assert any("strongtree_core.not_proven.NotProvenWarning" in line for line in lines[3:4]), out
    assert ('error: Argument "depth" to "StrongTreeClassifier" has incompatible type "str"; expected "int"  '
            '[arg-type]') in lines, out
