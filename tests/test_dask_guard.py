"""A script that starts a local Dask cluster without `if __name__ == "__main__":` gets a message that says
so (run for real in a subprocess: the workers re-run the script, and the cluster never starts)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")

from strongtree_core.sweep import main_guard  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BODY = '''
import pandas as pd
from strongtree_core import StrongTreeClassifier
from strongtree_core.sweep import sweep
X = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0, 1, 0], "b": [1, 1, 0, 0, 1, 0, 0, 1]})
y = [0, 1, 0, 1, 1, 0, 1, 1]
'''
CALL = 'print(sweep(StrongTreeClassifier(time_limit=5), X, y, grid={"depth": [1]}, backend="dask", n_jobs=1))\n'


def test_a_script_without_the_main_guard_is_told_to_add_it(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(BODY + CALL, encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=240)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last == "strongtree_core.errors.StrongTreeError: " + main_guard.MAIN_GUARD.format(script=script)


def test_the_guard_is_read_from_the_script(tmp_path, monkeypatch):
    guarded = tmp_path / "guarded.py"
    guarded.write_text(BODY + 'if __name__ == "__main__":\n    ' + CALL, encoding="utf-8")
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(BODY + CALL, encoding="utf-8")
    for path, expected in ((guarded, None), (unguarded, str(unguarded))):
        monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__file__=str(path), __name__="__main__"))
        assert main_guard.unguarded_main_script() == expected
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__name__="__main__"))  # a console
    assert main_guard.unguarded_main_script() is None


def test_the_signs_are_read_along_the_chain_of_exceptions():
    try:
        try:
            raise RuntimeError("An attempt has been made to start a new process before the current process has "
                               "finished its bootstrapping phase.")
        except RuntimeError as inner:
            raise RuntimeError("Nanny failed to start.") from inner
    except RuntimeError as outer:
        assert main_guard.says(outer, ("finished its bootstrapping phase",))
    assert not main_guard.says(RuntimeError("address in use"), main_guard.BOOTSTRAP_SIGNS)
