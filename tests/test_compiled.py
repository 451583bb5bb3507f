"""Compiled kernels built once per installation (strongtree_core/accel/compiled.py).

Each case runs in a fresh process with its own, new cache folders, as a first
process after an installation would: nothing is compiled inside a fit, a
background build fills the cache, and later processes load the built library
without numba.  A small library of test kernels (one calls another) keeps the
builds short; one slow test builds the real kernels and checks them against
the numpy kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from strongtree_core.accel import compiled
from strongtree_core.errors import StrongTreeError

ROOT = Path(__file__).resolve().parents[1]

TOY_KERNELS = '''
import numpy as np
from strongtree_core.accel.compiled import KernelLibrary

library = KernelLibrary(__name__)


@library.kernel("f8(f8[:])")
def total(values):
    s = 0.0
    for v in values:
        s += v
    return s


@library.kernel("Tuple((f8, i8[:]))(f8[:], i8)")
def scaled_total(values, k):
    out = np.zeros(3, dtype=np.int64)
    out[0] = k
    return total(values) * k, out


@library.kernel("f8(i8)")
def spin(n):
    s = 0.0
    for i in range(n):
        s = s * 0.999999 + 1.0
    return s


library.preload()
'''


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(compiled.MODE_VARIABLE, None)
    env[compiled.CACHE_VARIABLE] = str(tmp_path / "cache")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra)
    return env


def _run(tmp_path: Path, script: str, **extra: str) -> dict:
    """Run ``script`` in a fresh Python; it prints one JSON line last."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                         env=_env(tmp_path, **extra), cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _wait_built(folder_glob: str, root: Path, seconds: float = 240) -> Path:
    """Wait for the background build (its lock gone and a result there)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        folders = list((root / "cache" / "kernels").glob(folder_glob))
        if folders and not (folders[0] / compiled.LOCK_FILE).exists() and any(
                p.suffix in (".so", ".pyd") or p.name == compiled.JIT_READY_FILE for p in folders[0].iterdir()):
            return folders[0]
        time.sleep(0.5)
    raise AssertionError(f"no build in {seconds} s: {list((root / 'cache').rglob('*'))}")


TOY_STATE = """
import json, sys, time
import numpy as np
import toy_kernels as k
t = time.perf_counter()
ready = k.library.ready()
waited = time.perf_counter() - t
print(json.dumps({"ready": ready, "tier": k.library.tier, "numba": "numba" in sys.modules, "waited": waited}))
"""


@pytest.mark.slow
@pytest.mark.timing
def test_a_fresh_install_never_compiles_in_the_process_and_builds_in_the_background(tmp_path) -> None:
    """First process: not ready, numba not even imported, a build under way; it lands as a
    library later processes load without numba, and its kernels (one calling another) are right."""
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    first = _run(tmp_path, TOY_STATE)
    assert first["ready"] is False and first["tier"] is None and first["numba"] is False
    folder = _wait_built("toy_kernels-*", tmp_path)
    assert not (folder / compiled.FAILED_FILE).exists(), (folder / compiled.FAILED_FILE).read_text()
    later = _run(tmp_path, TOY_STATE.replace(
        'print(json.dumps({', 'v, out = k.scaled_total(np.array([1.0, 2.5]), 3)\nprint(json.dumps({"v": v, "out": out.tolist(), '))
    assert later["ready"] is True and later["tier"] == "aot" and later["numba"] is False
    assert later["v"] == 10.5 and later["out"] == [3, 0, 0]
    free = _run(tmp_path, LOCK_FREE)
    assert free["tier"] == "aot" and free["kernel_s"] > 0.1, free  # a hundred of the thread's 1 ms looks
    # a kernel that held the interpreter's lock would stop this thread for its whole run
    assert free["longest_pause_s"] < free["kernel_s"] / 2, free


LOCK_FREE = """
import json, threading, time
import toy_kernels as k
assert k.library.ready()
t = time.perf_counter(); k.spin(10_000_000); per = (time.perf_counter() - t) / 10_000_000
n = int(0.8 / max(per, 1e-10))  # about 0.8 s as calibrated: shorter when the machine frees up meanwhile
done = []
worker = threading.Thread(target=lambda: done.append(k.spin(n)))
started = last = time.perf_counter(); longest = 0.0
worker.start()
while worker.is_alive():
    now = time.perf_counter(); longest = max(longest, now - last); last = now
    time.sleep(0.001)
print(json.dumps({"tier": k.library.tier, "kernel_s": time.perf_counter() - started, "longest_pause_s": longest}))
"""


@pytest.mark.slow
@pytest.mark.timing
def test_two_processes_that_start_together_start_one_build(tmp_path) -> None:
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    script = TOY_STATE.replace("ready = k.library.ready()", "ready = k.library.ready()\nstarted = k.library.build_started")
    script = script.replace('print(json.dumps({', 'print(json.dumps({"started": started, ')
    env = _env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE, text=True,
                              env=env, cwd=tmp_path) for _ in range(2)]
    rows = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert sorted(r["started"] for r in rows) == [False, True]
    _wait_built("toy_kernels-*", tmp_path)


@pytest.mark.slow
def test_a_failed_ahead_of_time_build_fills_numbas_cache_instead(tmp_path) -> None:
    """No C compiler (or no numba.pycc): the build is recorded as failed once, numba's JIT cache is
    filled, and later processes use the JIT kernels."""
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    built = _run(tmp_path, """
        import json
        from pathlib import Path
        import toy_kernels as k
        from strongtree_core.accel import compiled
        folder = k.library.folder()
        folder.mkdir(parents=True)
        (folder / compiled.FAILED_FILE).write_text("CompileError: no C compiler\\n")
        print(json.dumps({"tier": k.library.build(), "numba_files": len(list(Path(r"%s").rglob("*.nbi"))),
                          "kernels": len(k.library.kernels)}))
    """ % (tmp_path / "numba"))
    assert built == {"tier": "jit", "numba_files": 3, "kernels": 3}  # one cache index per toy kernel
    later = _run(tmp_path, TOY_STATE)
    assert later["ready"] is True and later["tier"] == "jit"


def test_a_kernel_called_before_it_is_built_compiles_here(tmp_path) -> None:
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    out = _run(tmp_path, """
        import json
        import numpy as np
        import toy_kernels as k
        v, _ = k.scaled_total(np.array([1.0, 2.0]), 2)
        print(json.dumps({"v": v, "tier": k.library.tier}))
    """, STRONGTREE_KERNELS="numpy")
    assert out == {"v": 6.0, "tier": "jit"}


def test_numpy_mode_never_builds(tmp_path) -> None:
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    out = _run(tmp_path, TOY_STATE, STRONGTREE_KERNELS="numpy")
    assert out["ready"] is False and out["numba"] is False
    assert not (tmp_path / "cache").exists()


def test_a_bad_mode_is_refused_with_its_message(monkeypatch) -> None:
    monkeypatch.setenv(compiled.MODE_VARIABLE, "fast")
    with pytest.raises(StrongTreeError) as err:
        compiled.mode()
    assert str(err.value) == "STRONGTREE_KERNELS='fast' is not one of auto, jit, numpy: unset it, or pick one of those."


def test_the_cache_folder_follows_the_platform_and_the_variable(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(compiled.CACHE_VARIABLE, str(tmp_path / "here"))
    assert compiled.cache_root() == tmp_path / "here"
    monkeypatch.delenv(compiled.CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert compiled.cache_root() == tmp_path / "xdg" / "strongtree"


def test_a_lock_of_a_dead_build_is_taken_over_and_a_live_one_is_not(tmp_path) -> None:
    import socket

    lock = tmp_path / compiled.LOCK_FILE
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(f"{socket.gethostname()} {dead.pid} {time.time()}\n")
    assert compiled._take_lock(lock)
    assert lock.read_text().split()[1] == str(os.getpid())
    assert not compiled._take_lock(lock)  # this process holds it


def test_the_key_changes_with_the_source(tmp_path) -> None:
    """A new version of a kernel module is a new library: an old build is never loaded for it."""
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    script = "import json, toy_kernels as k\nprint(json.dumps({'key': k.library.key()}))"
    first = _run(tmp_path, script)
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS.replace("s = 0.0", "s = 0.0  # changed"))
    assert _run(tmp_path, script)["key"] != first["key"]


@pytest.mark.slow
def test_the_built_library_of_the_real_kernels_equals_the_numpy_kernel(tmp_path) -> None:
    """``python -m strongtree_core.accel.prepare`` builds the exact search's kernels ahead of time; a
    new process loads them without numba, and they agree with the numpy kernel on random subproblems.

    The installation's own cache folder: ``scripts/test.sh`` has built it before the suite (this then
    finds it built), so the real kernels are compiled once per run; the toy library above is the one
    built from nothing in a fresh folder."""
    installed = {compiled.CACHE_VARIABLE: str(compiled.cache_root())}
    out = subprocess.run([sys.executable, "-m", "strongtree_core.accel.prepare"], capture_output=True, text=True,
                         env=_env(tmp_path, **installed), cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "ahead-of-time module" in out.stdout
    result = _run(tmp_path, """
        import json, sys
        import numpy as np
        from strongtree_core.accel import kernels
        from strongtree_core.accel.dp import depth_two
        tier, numba = kernels.library.tier, "numba" in sys.modules
        rng = np.random.default_rng(7)
        worst = 0.0
        for trial in range(200):
            n, F = int(rng.integers(2, 60)), int(rng.integers(1, 12))
            X = (rng.random((n, F)) < rng.uniform(0.1, 0.9)).astype(float)
            s = rng.normal(size=(n, 2))
            count = rng.integers(1, 4, n).astype(float)
            indptr, indices = kernels.ones_of(X)
            sub = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
            min_leaf = int(rng.choice([0, 2, 5]))
            kernels.DENSE_SPEEDUP = 1e-9 if trial % 2 else 1e9
            value, code = kernels.depth_two_binary(X, indptr, indices, sub, s[:, 1] - s[:, 0], s[:, 0].copy(),
                                                   count, 0.3, min_leaf)
            expected, _ = depth_two(X[sub], s[sub], count[sub], 2, 0.3, min_leaf)
            if np.isfinite(expected) or np.isfinite(value):
                worst = max(worst, abs(value - expected))
        print(json.dumps({"tier": tier, "numba": numba, "worst": worst}))
    """, **installed)
    assert result["tier"] == "aot" and result["numba"] is False
    assert result["worst"] < 1e-9


def test_the_build_lock_names_the_builder_not_the_process_that_started_it(tmp_path, monkeypatch) -> None:
    """The process that starts a build may end at once (a one-line script); a second process must then
    still see the lock as held by the live builder, not as stale (seen on a busy CI machine: two builds)."""
    builder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        monkeypatch.setattr(compiled.subprocess, "Popen", lambda *args, **kwargs: builder)
        library = compiled.KernelLibrary("toy_lock_module")
        library._start_build(tmp_path)
        host, pid, _ = (tmp_path / compiled.LOCK_FILE).read_text().split()
        assert int(pid) == builder.pid and int(pid) != os.getpid()
        assert not compiled._stale(tmp_path / compiled.LOCK_FILE)
        assert not compiled._take_lock(tmp_path / compiled.LOCK_FILE)  # a second process starts no build
    finally:
        builder.kill()
        builder.wait()
    assert compiled._stale(tmp_path / compiled.LOCK_FILE)  # the builder gone: the lock is stale


@pytest.mark.slow
def test_a_build_reports_each_kernel_then_the_machine_code_and_its_status_follows(tmp_path) -> None:
    """The steps a page or a terminal shows: one per kernel in their order, then the module's machine
    code and link, then done; the progress file says the same; the status goes from not built to ready."""
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    out = _run(tmp_path, """
        import json
        import toy_kernels as k
        from strongtree_core.accel import compiled
        before = k.library.status().state
        steps = []
        tier = k.library.build(report=lambda done, total, stage: steps.append([done, total, stage]))
        written = json.loads((k.library.folder() / compiled.PROGRESS_FILE).read_text())
        print(json.dumps({"before": before, "tier": tier, "steps": steps, "after": k.library.status().state,
                          "file": [written["done"], written["total"], written["stage"]]}))
    """)
    assert out["before"] == "not built" and out["tier"] == "aot" and out["after"] == "ready"
    assert out["steps"] == [[0, 4, "starting"], [0, 4, "compiling total"], [1, 4, "compiling scaled_total"],
                            [2, 4, "compiling spin"], [3, 4, "optimizing, writing the machine code and linking"],
                            [4, 4, "done"]]
    assert out["file"] == [4, 4, "done"]


def test_a_running_build_is_read_from_its_lock_and_progress_file(tmp_path, monkeypatch) -> None:
    """What a waiting page shows while another process builds: its steps and seconds so far; a lock
    whose builder is gone is no build."""
    (tmp_path / "toy_status.py").write_text(TOY_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(compiled.CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.delenv(compiled.MODE_VARIABLE, raising=False)
    import toy_status

    folder = toy_status.library.folder()
    folder.mkdir(parents=True)
    import socket

    (folder / compiled.LOCK_FILE).write_text(f"{socket.gethostname()} {os.getpid()} {time.time()}\n")
    (folder / compiled.PROGRESS_FILE).write_text(json.dumps({"done": 2, "total": 4, "stage": "compiling spin",
                                                             "started": time.time() - 30}))
    status = toy_status.library.status()
    assert (status.state, status.done, status.total) == ("building", 2, 4) and 29 <= status.seconds < 3600
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (folder / compiled.LOCK_FILE).write_text(f"{socket.gethostname()} {dead.stdout.strip()} {time.time()}\n")
    assert toy_status.library.status().state == "not built"


def test_the_preparation_in_words() -> None:
    from strongtree_core.accel.compiled import LibraryStatus
    from strongtree_core.accel.prepare import Preparation

    going = Preparation((LibraryStatus("kernels", "ready"), LibraryStatus("ordered", "ready"),
                         LibraryStatus("treedp", "building", 12, 33, 41.4)))
    assert not going.ready
    assert going.words() == (
        "Preparing the exact search's compiled code, once on this machine (about a minute; longer when the "
        "machine is busy): 2 of 3 parts ready; treedp: 12 of 33 steps, 41 s so far."
    )
    done = Preparation((LibraryStatus("kernels", "ready"), LibraryStatus("ordered", "not used")))
    assert done.ready and done.words() == "The exact search's compiled code is ready."


@pytest.mark.slow
def test_a_real_deprecation_of_numba_pycc_takes_numbas_jit_cache_and_says_why(tmp_path) -> None:
    """numba's maintainers deprecate ``numba.pycc`` for real only once its replacement exists: from then
    on the build fills numba's JIT cache instead (the kernels are the same) and records why."""
    (tmp_path / "toy_kernels.py").write_text(TOY_KERNELS)
    out = _run(tmp_path, """
        import importlib, json, warnings
        from numba.core.errors import NumbaDeprecationWarning
        import toy_kernels as k
        from strongtree_core.accel import compiled
        real = importlib.import_module

        def deprecated(name, *args):
            if name == "numba.pycc":
                warnings.warn(NumbaDeprecationWarning("numba.pycc is deprecated: use its replacement"))
            return real(name, *args)

        compiled.importlib.import_module = deprecated
        tier = k.library.build()
        compiled.importlib.import_module = real
        print(json.dumps({"tier": tier, "why": (k.library.folder() / compiled.FAILED_FILE).read_text()}))
    """)
    assert out["tier"] == "jit"
    assert out["why"].startswith("NumbaDeprecationWarning: ") and "numba.pycc is deprecated" in out["why"]


def test_the_installed_numba_pycc_is_only_pending_deprecation(tmp_path) -> None:
    """What the build silences (docs/compiled-kernels.md): a pending deprecation, nothing more.  A numba
    whose ``pycc`` warns otherwise fails here first: read numba's deprecation notices then."""
    out = _run(tmp_path, """
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import numba.pycc
        print(json.dumps(sorted({type(w.message).__name__ for w in caught})))
    """)
    assert out == ["NumbaPendingDeprecationWarning"]
