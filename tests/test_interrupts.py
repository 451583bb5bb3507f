"""Ctrl-C, a lost worker and Stop as contracts on every sweep backend and every fit route.

The command line runs for real in its own process group (as a terminal runs it), and a real
SIGINT goes to the whole group, workers included, as a terminal's Ctrl-C does; workers are
killed with SIGKILL.  Each case checks the exit code, what was written, that standard error
holds no traceback, and that no process of the group is left behind.

The whole matrix (every backend, every fit route, workers killed under the command line) costs
minutes; the suite runs the cases that were reported broken, and ``python -m pytest -m soak
tests/test_interrupts.py`` runs the rest.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest

from strongtree_core import cli
from strongtree_core.command import INTERRUPTED_EARLY
from strongtree_core.sweep import backends
from strongtree_core.tree import FittedTree

ROOT = Path(__file__).resolve().parents[1]


# -- processes of a group, through psutil -----------------------------------------------------------------
def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the live processes of a process group."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                found.append((process.pid, " ".join(process.cmdline())[:160]))
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return found


def children_of(pid: int) -> list[int]:
    """Every live descendant of ``pid``."""
    try:
        descendants = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for process in descendants:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                out.append(process.pid)
        except psutil.Error:
            continue
    return out


def ignores_sigint(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGINT, or blocks it (a worker still starting, before its
    initializer ignores it): its SigIgn and SigBlk masks in /proc/<pid>/status (psutil does not read
    signal masks)."""
    deaf = False
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigIgn:", "SigBlk:")):
            deaf |= bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return deaf


class Command:
    """``python -m strongtree_core ...`` in its own process group, standard error in a file."""

    def __init__(self, args: list[str], folder: Path) -> None:
        self.err_path = folder / "stderr.txt"
        self._err = self.err_path.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "strongtree_core", *map(str, args)], cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=self._err, start_new_session=True)
        self.pgid = self.process.pid

    @property
    def err(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait_for(self, ready, timeout: float = 240) -> None:
        """Wait until ``ready(stderr so far)`` is true (the command must still run)."""
        deadline = time.monotonic() + timeout
        while not ready(self.err):
            assert self.process.poll() is None, f"ended early ({self.process.returncode}):\n{self.err}"
            assert time.monotonic() < deadline, f"not ready after {timeout} s:\n{self.err}"
            time.sleep(0.05)

    def ctrl_c(self) -> None:
        os.killpg(self.pgid, signal.SIGINT)

    def finish(self, timeout: float = 120) -> tuple[int, float]:
        """Wait for the exit; the exit code and the seconds it took.  Nothing of the group may be left."""
        started = time.monotonic()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"no exit within {timeout} s:\n{self.err}")
        took = time.monotonic() - started
        deadline = time.monotonic() + 15  # workers told to stop get a moment to go
        while group_members(self.pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = group_members(self.pgid)
        self.kill()
        assert not left, f"left behind: {left}"
        return code, took

    def kill(self) -> None:
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self._err.close()


def points_done(err: str) -> int:
    """Points reported finished so far (one line per point when standard error is no terminal)."""
    return sum(1 for line in err.splitlines() if line.split("/", 1)[0].strip().isdigit() and "/" in line.split()[0])


def rows_of(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def hiring_csv(tmp_path_factory) -> Path:
    from strongtree_core.datasets import make_hiring

    path = tmp_path_factory.mktemp("interrupts") / "hiring.csv"
    make_hiring(n_rows=400).to_csv(path, index=False)
    return path


def sweep_args(data: Path, out: Path, backend: str, bounds: int = 12) -> list:
    """Points of one or two seconds each: FlowOCT alone on HiGHS, stopped by its time limit."""
    return ["sweep", data, "--target", "hired", "--protected", "gender", "--pos-label", "yes",
            "--fairness", "statistical_parity", "--fairness-bound", *[b / 100 for b in range(bounds)],
            "--formulation", "flow", "--no-exact-search", "--solver", "highs", "--time-limit", "2",
            "--backend", backend, "--n-jobs", "2", "--output", out]


# -- Ctrl-C on every sweep backend ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("backend", [pytest.param("serial", marks=pytest.mark.soak),
                                     pytest.param("threads", marks=pytest.mark.soak), "processes", "dask"])
@pytest.mark.timing
def test_ctrl_c_on_a_sweep_writes_the_finished_points_and_exits_130_with_no_process_left(backend, hiring_csv,
                                                                                        tmp_path):
    """The terminal's SIGINT reaches the whole process group; workers ignore it, the command stops them:
    every finished point written, exit code 130, no traceback, no process left."""
    out = tmp_path / "sweep.csv"
    command = Command(sweep_args(hiring_csv, out, backend), tmp_path)
    command.wait_for(lambda err: points_done(err) >= 1)
    command.ctrl_c()
    code, took = command.finish()
    err = command.err
    assert code == 130, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert cli.SWEEP_STOPPING in err
    rows = rows_of(out)
    assert 1 <= len(rows) < 12
    assert len({r["point"] for r in rows}) == len(rows)
    assert all(r["tree"] for r in rows), [r["error"] for r in rows]
    assert f"stopped: {len(rows)} of 12 points finished; they are kept." in err
    assert {r["status"] for r in rows} <= {"optimal", "time_limit", "interrupted"}


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.parametrize("backend", ["processes", "dask"])
@pytest.mark.timing
def test_a_second_ctrl_c_quits_at_once_and_ends_the_workers(backend, hiring_csv, tmp_path):
    """Ctrl-C twice: the command quits without writing, and takes its worker processes with it."""
    out = tmp_path / "sweep.csv"
    command = Command(sweep_args(hiring_csv, out, backend), tmp_path)
    command.wait_for(lambda err: points_done(err) >= 1)
    command.ctrl_c()
    command.wait_for(lambda err: cli.SWEEP_STOPPING in err, timeout=30)
    command.ctrl_c()
    code, took = command.finish(timeout=30)
    assert code == 130
    assert cli.SWEEP_QUIT_NOW in command.err and "Traceback" not in command.err
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.parametrize("backend", ["processes", "dask"])
@pytest.mark.timing
def test_a_worker_killed_under_the_command_line_loses_no_point(backend, hiring_csv, tmp_path):
    """SIGKILL to a worker process of `strongtree sweep`: every point is written once, with its tree."""
    out = tmp_path / "sweep.csv"
    command = Command(sweep_args(hiring_csv, out, backend, bounds=6), tmp_path)
    command.wait_for(lambda err: points_done(err) >= 1)
    workers = [pid for pid in children_of(command.process.pid)
               if "resource_tracker" not in " ".join(psutil.Process(pid).cmdline())]
    assert workers
    os.kill(workers[-1], signal.SIGKILL)
    code, _ = command.finish(timeout=400)
    assert code == 0, command.err
    rows = rows_of(out)
    assert sorted(int(r["point"]) for r in rows) == list(range(6))
    assert all(r["tree"] for r in rows), [r["error"] for r in rows]


# -- workers never take the terminal's Ctrl-C --------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.timing
def test_process_workers_ignore_sigint_also_when_started_again_after_a_crash():
    """Workers start with SIGINT blocked (loky starts them on submit, which the sweep does with SIGINT
    blocked) and then ignore it; so do the workers of the pool that replaces a broken one."""
    from strongtree_core.signals import sigint_blocked

    def run_some() -> list[int]:
        pool = backends.process_pool(2)
        with sigint_blocked():  # as backends.process_rows submits
            list(pool.map(abs, range(4)))
        return list(pool._processes)

    pids = run_some()
    assert pids and all(ignores_sigint(pid) for pid in pids)
    os.kill(pids[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while True:  # the broken pool is replaced by a new one (a map may still succeed before loky notices)
        try:
            fresh = run_some()
            if pids[0] not in fresh and len(fresh) == 2:
                break
        except Exception:  # noqa: BLE001 - BrokenProcessPool while loky notices the death
            pass
        assert time.monotonic() < deadline, "the pool was not replaced"
        time.sleep(0.2)
    assert set(fresh) != set(pids) and all(ignores_sigint(pid) for pid in fresh)


@pytest.mark.slow
@pytest.mark.soak
@pytest.mark.timing
def test_dask_workers_of_a_sweep_s_local_cluster_ignore_sigint_also_when_restarted():
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.distributed")
    from strongtree_core.sweep.dask_backend import RESTART_WAIT, WORKER_MALLOC, dask_client

    def allocator_settings() -> dict:
        return {name: os.environ.get(name) for name in WORKER_MALLOC}

    settings = {name: str(value) for name, value in WORKER_MALLOC.items()}
    with dask.config.set({"distributed.deploy.lost-worker-timeout": RESTART_WAIT}), dask_client(None, 2) as client:
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2 and all(ignores_sigint(pid) for pid in pids)
        # the allocator's settings of WORKER_MALLOC, not Dask's (every large array mapped and unmapped)
        assert list(client.run(allocator_settings).values()) == [settings, settings]
        os.kill(pids[0], signal.SIGKILL)
        deadline = time.monotonic() + 300
        while True:
            now = list(client.run(os.getpid, on_error="ignore").values())
            if len(now) == 2 and pids[0] not in now:
                break
            assert time.monotonic() < deadline, "the killed worker was not replaced"
            time.sleep(0.5)
        assert all(ignores_sigint(pid) for pid in now)
        assert list(client.run(allocator_settings).values()) == [settings, settings]


# -- Ctrl-C on every fit route ---------------------------------------------------------------------------
FIT_ROUTES = {
    "exact search": ["--depth", "4"],
    "FlowOCT on HiGHS": ["--depth", "3", "--formulation", "flow", "--no-exact-search", "--solver", "highs"],
    "FlowOCT on SCIP": ["--depth", "3", "--formulation", "flow", "--no-exact-search", "--solver", "scip"],
    "BendersOCT on SCIP": ["--depth", "3", "--formulation", "benders", "--no-exact-search", "--solver", "scip"],
    "BendersOCT on HiGHS": ["--depth", "3", "--formulation", "benders", "--no-exact-search", "--solver", "highs"],
    "local search": ["--depth", "4", "--formulation", "local_search"],
}


@pytest.fixture(scope="module")
def hard_csv(tmp_path_factory) -> Path:
    """A table no route proves in a minute at depth 3-4 (noisy labels on 12 numeric columns)."""
    rng = np.random.default_rng(5)
    n = 1500
    X = pd.DataFrame(rng.normal(size=(n, 12)).round(2), columns=[f"x{j}" for j in range(12)])
    X["y"] = np.where(X.sum(axis=1) + rng.normal(0, 2, n) > 0, "yes", "no")
    path = tmp_path_factory.mktemp("interrupts") / "hard.csv"
    X.to_csv(path, index=False)
    return path


@pytest.mark.slow
@pytest.mark.soak  # in the suite: tests/test_cli.py's Ctrl-C on FlowOCT/HiGHS, the route that died of SIGABRT
@pytest.mark.parametrize("route", list(FIT_ROUTES))
@pytest.mark.timing
def test_ctrl_c_on_every_fit_route_writes_the_best_tree_and_exits_130(route, hard_csv, tmp_path):
    """Once the solve reports progress, Ctrl-C to the group: the best tree so far written and readable,
    exit code 130 within a few seconds, no traceback, nothing left running."""
    tree = tmp_path / "tree.json"
    command = Command(["fit", hard_csv, "--target", "y", "--time-limit", "300", "--output", tree,
                       *FIT_ROUTES[route]], tmp_path)
    command.wait_for(lambda err: "s  " in err)  # a progress line: the solve is going
    command.ctrl_c()
    code, took = command.finish(timeout=60)
    err = command.err
    assert code == 130, err
    assert "Traceback" not in err and "terminate called" not in err, err
    fitted = FittedTree.from_json(tree.read_text(encoding="utf-8"))
    assert fitted.depth >= 1


@pytest.mark.slow
@pytest.mark.timing
def test_ctrl_c_while_the_libraries_load_is_one_line_and_exit_130(hiring_csv, tmp_path):
    """Ctrl-C before the command has even loaded numpy (seconds on a loaded machine): no traceback."""
    tree = tmp_path / "tree.json"
    command = Command(["fit", hiring_csv, "--target", "hired", "--output", tree], tmp_path)
    deadline = time.monotonic() + 60
    while True:  # the handler is in place once the package starts to load its libraries
        try:
            if any("numpy" in m.path for m in psutil.Process(command.process.pid).memory_maps(grouped=False)):
                break
        except (OSError, psutil.Error):
            pass
        assert time.monotonic() < deadline
        time.sleep(0.005)
    command.ctrl_c()
    code, _ = command.finish(timeout=30)
    if code == 0:
        pytest.skip("the command finished loading and solving before the signal arrived")
    assert code == 130, command.err
    assert command.err.strip().splitlines()[-1] == INTERRUPTED_EARLY, command.err
    assert not tree.exists()


class _CutShort:
    """A ``strongtree_core.cli`` whose loading meets a Ctrl-C the way numpy's C extensions do: the
    KeyboardInterrupt is caught inside and an ImportError comes out."""

    def __getattr__(self, name):
        try:
            signal.raise_signal(signal.SIGINT)
            for _ in range(1000):  # the handler runs between two steps of the interpreter
                pass
        except KeyboardInterrupt as exc:
            raise ImportError('PyCapsule_Import could not import module "datetime"') from exc
        raise AssertionError("the command installed no handler of its own for the Ctrl-C")


def test_an_import_cut_short_by_ctrl_c_is_the_ctrl_c_not_a_broken_install(monkeypatch, capsys):
    from strongtree_core import command

    monkeypatch.setitem(sys.modules, "strongtree_core.cli", _CutShort())
    with pytest.raises(SystemExit) as ended:
        command.run()
    assert ended.value.code == 130
    assert capsys.readouterr().err == INTERRUPTED_EARLY + "\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back once loaded


def test_an_import_that_fails_without_a_ctrl_c_is_not_called_one(monkeypatch):
    from strongtree_core import command

    class Broken:
        def __getattr__(self, name):
            raise ImportError("numpy is missing")

    monkeypatch.setitem(sys.modules, "strongtree_core.cli", Broken())
    with pytest.raises(ImportError, match="numpy is missing"):
        command.run()


@pytest.mark.timing
def test_a_solver_run_left_behind_does_not_hold_the_command_at_exit(tmp_path):
    """A HiGHS run abandoned after Stop or its limit (it cannot be interrupted inside presolve) made the
    command wait up to a minute at exit, then die of SIGABRT as HiGHS's threads were torn down under
    it; the command leaves at once once its output is flushed."""
    script = tmp_path / "left_behind.py"
    script.write_text(textwrap.dedent("""
        import sys, threading, time
        from strongtree_core.solvers import highs_run
        from strongtree_core.command import leave
        run = threading.Thread(target=time.sleep, args=(120,), daemon=True)
        run.start()
        highs_run._abandoned.append(run)
        print("written", flush=False)
        leave(130)
    """), encoding="utf-8")
    started = time.monotonic()
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=100,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 130 and out.stdout == "written\n"
    assert time.monotonic() - started < 30  # atexit would have joined the run for 60 s


def test_stop_before_highs_starts_does_not_start_it():
    """A Stop that came while the model was built: HiGHS is not started (a run started then was left
    behind in presolve, which answers no Stop)."""
    import threading

    from strongtree_core.solvers import highs_run
    from strongtree_core.solvers.base import Status

    stop = threading.Event()
    stop.set()
    outcome = highs_run.run_highs(object(), None, time_limit=10, stop=stop, on_tick=print, on_incumbent=print,
                                  errors=[])
    assert outcome.status is Status.INTERRUPTED and outcome.status_name == highs_run.NOT_STARTED
    assert outcome.abandoned and outcome.x is None  # no solution of its own, and no second attempt


def test_a_second_ctrl_c_kills_the_workers_and_their_children_but_spares_resource_trackers(tmp_path):
    """``kill_worker_processes`` (the command's second Ctrl-C): every descendant is killed through
    psutil, a grandchild too, and a process whose command names a resource tracker is left to end
    on its own.  Run in a process of its own: in this one it would kill the suite's own helpers."""
    script = tmp_path / "killer.py"
    script.write_text(textwrap.dedent("""
        import json, subprocess, sys, time
        import psutil
        from strongtree_core.signals import kill_worker_processes
        sleeper = "import time; time.sleep(120)"
        parent = subprocess.Popen([sys.executable, "-c",
                                   "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
                                   + repr(sleeper) + "]); time.sleep(120)"])
        tracker = subprocess.Popen([sys.executable, "-c", sleeper, "resource_tracker"])
        deadline = time.monotonic() + 60
        while len(psutil.Process(parent.pid).children()) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        grandchild = psutil.Process(parent.pid).children()[0].pid
        killed = kill_worker_processes()
        parent.wait(timeout=30)
        gone = psutil.wait_procs([psutil.Process(grandchild)], timeout=30)[0] if psutil.pid_exists(grandchild) else []
        alive = tracker.poll() is None
        tracker.kill()
        print(json.dumps({"killed": sorted(killed), "expected": sorted([parent.pid, grandchild]),
                          "parent": parent.returncode, "grandchild_gone": not psutil.pid_exists(grandchild)
                          or bool(gone), "tracker_alive": alive}))
    """), encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=200,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["killed"] == result["expected"], result
    assert result["parent"] == -signal.SIGKILL and result["grandchild_gone"], result
    assert result["tracker_alive"], result
