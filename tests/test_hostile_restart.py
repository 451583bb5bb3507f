"""A server killed mid-solve (kill -9): its run is not lost.

Each solve is written into the history while it runs (its last tree and bound); a server that starts
lists the runs of a server process that is gone as interrupted, and the tab that watched the solve says
that the server stopped, with the run's last tree (it showed "Solving" until reloaded, and the run was
gone without a trace)."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_core.tree import FittedTree
from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.jobs.job_registry import PhaseState
from strongtree_studio.jobs.solve_job import MSG_SERVER_STOPPED, SolveContext, journal_entry
from strongtree_studio.stores.run_history import INTERRUPTED, RUNNING, RunStore, server_alive, server_id
from strongtree_studio.page.shown import MSG_SERVER_WENT_AWAY, MSG_SERVER_WENT_AWAY_NO_TREE

ROOT = Path(__file__).resolve().parents[1]

#: A server as the dashboard wires it (strongtree_studio.page.services), one long solve; it prints the run id
#: once the solve's run holds a tree, then waits to be killed.
STAND_IN = textwrap.dedent("""
    import sys, time
    from strongtree_studio.data.choices import ModelConfig, Roles, SplitConfig, split_table
    from strongtree_studio.data.demo_tables import make_hiring
    from strongtree_studio.jobs.solve_job import SolveContext, solve_spec
    from strongtree_studio.page.services import job_registry

    if __name__ == "__main__":
        frame = make_hiring(800, seed=3)
        roles = Roles(target="hired", protected=("gender",), pos_label="yes")
        model = ModelConfig(depth=4, formulation="flow", solver="highs", time_limit=600.0,
                            fairness=("statistical_parity",), fairness_bound=0.02)
        ctx = SolveContext("hiring.csv", "fp", roles, SplitConfig(), model, split_table(frame, roles, SplitConfig()),
                           owner="session:stand-in")
        registry = job_registry()
        job_id = registry.submit(solve_spec(ctx), ctx)
        while True:
            job = registry.job(job_id)
            if job.journaled is not None and job.journaled.tree is not None:
                print(job.run_id, job_id, flush=True)
            time.sleep(0.3)
""")


def _context() -> SolveContext:
    frame = make_hiring(300, seed=3)
    roles = Roles(target="hired", protected=("gender",), pos_label="yes")
    return SolveContext("hiring.csv", "fp", roles, SplitConfig(), ModelConfig(depth=1, time_limit=10.0),
                        split_table(frame, roles, SplitConfig()), owner="session:test")


def _a_tree(context: SolveContext) -> str:
    from strongtree_core import StrongTreeClassifier

    train = context.tables.train
    clf = StrongTreeClassifier(depth=1, time_limit=10).fit(train[["education", "experience"]], train["hired"])
    return clf.tree_.to_json()


def _gone_server() -> str:
    """This host and process id, started at another time: a process that is no more."""
    return f"{socket.gethostname()}/{os.getpid()}/1.000"


@pytest.mark.timing
def test_kill_9_mid_solve_then_restart_lists_the_run_as_interrupted(tmp_path):
    """A real server process (the dashboard's registry and hooks) solving FlowOCT, killed with SIGKILL once
    its run holds a tree: the next server lists the run as interrupted with that tree and its last bound."""
    path = tmp_path / "runs.sqlite3"
    env = dict(os.environ, STRONGTREE_RUNS_DB=str(path), PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-c", STAND_IN], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 240.0)  # the run holds a tree
        assert ready, "the solve's run never held a tree"
        line = server.stdout.readline()
        run_id, job = int(line.split()[0]), line.split()[1]
        time.sleep(2.5)  # a journal write or two more (bound)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
    finally:
        try:
            os.killpg(server.pid, signal.SIGKILL)  # its solve workers, orphaned by the kill
        except ProcessLookupError:
            pass
        server.stdout.close()
    store = RunStore(path)
    assert len(store.table()) == 0  # still "running" as the killed server left it: not listed
    assert store.recover() == [run_id]  # what a server starting on this history does first
    listed = store.table()
    assert listed["id"].tolist() == [run_id] and listed["status"].tolist() == [INTERRUPTED]
    entry = store.get(run_id)
    tree = FittedTree.from_json(entry.tree)
    assert tree.record.status == INTERRUPTED and not tree.record.certified
    assert tree.record.message == MSG_SERVER_STOPPED
    assert tree.record.bound is not None and tree.record.objective is not None
    assert entry.summary["server_stopped"] is True and entry.summary["bound"] == tree.record.bound
    assert entry.evaluation is not None and entry.evaluation["splits"]["train"]["quality"]["accuracy"] > 0
    assert store.by_job(job).id == run_id
    assert store.recover() == []  # once


def test_a_running_solve_of_a_live_server_is_left_alone(tmp_path):
    """Two servers on one history: the runs another live server is solving stay running (and unlisted)."""
    store = RunStore(tmp_path / "runs.sqlite3")
    context = _context()
    main = PhaseState(history=[{"elapsed": 1.0, "objective": 5.0, "bound": 9.0, "gap": 0.8, "nodes": 1, "message": ""}],
                      tree=_a_tree(context))
    run_id = store.begin(journal_entry(context, main), "job-1", server_id())
    assert store.recover() == [] and len(store.table()) == 0
    assert store.get(run_id).status == RUNNING


@pytest.mark.parametrize("server,alive", [
    ("this process", True), ("this host, a process long gone", False), ("another host", True),
    ("garbage", False), ("none", False)])
def test_server_alive_tells_a_gone_server_from_a_live_one(server, alive):
    """Host, process id and start time: a process id alone is reused."""
    ids = {"this process": server_id(), "this host, a process long gone": _gone_server(),
           "another host": "elsewhere.example/1/1.0", "garbage": "x", "none": None}
    assert server_alive(ids[server]) is alive


def test_the_journal_keeps_the_last_bound_and_marks_the_tree_not_proven(tmp_path):
    """What a killed server leaves: the last incumbent, not proven, the last bound reported; before any tree,
    the settings alone; once the tree is final (the comparison tree still solving), the final tree."""
    context = _context()
    tree = _a_tree(context)
    main = PhaseState(history=[{"elapsed": 2.5, "objective": 180.0, "bound": 201.0, "gap": 0.1, "nodes": 7,
                                "message": ""}], tree=tree)
    entry = journal_entry(context, main)
    record = FittedTree.from_json(entry.tree).record
    assert (record.status, record.bound, record.gap, record.certified) == (INTERRUPTED, 201.0, 0.1, False)
    assert record.message == MSG_SERVER_STOPPED and entry.summary["bound"] == 201.0
    later = replace(main, history=[*main.history, {**main.history[0], "bound": 190.0}])
    again = journal_entry(context, later, entry)
    assert FittedTree.from_json(again.tree).record.bound == 190.0 and again.evaluation is entry.evaluation
    nothing = journal_entry(context, PhaseState())
    assert nothing.tree is None and nothing.summary["depth"] == 1
    final = journal_entry(context, replace(main, result=tree))
    assert FittedTree.from_json(final.tree).record.status == FittedTree.from_json(tree).record.status


def test_a_refit_on_part_of_the_rows_is_neither_the_solves_tree_nor_its_bound():
    """A promise on new rows is several fits in one solve: the fits on every training row, and refits on parts
    of the rows whose trees and bounds count other rows.  The solve's tree so far (shown, and journaled for a
    killed server) is the last tree of a fit on every row, with that fit's bound: a refit's bound written as
    the run's would say "no tree can do better than" a number about other rows."""
    from strongtree_studio.jobs.job_registry import Job, JobRegistry
    from strongtree_studio.jobs.solve_job import solve_spec

    context = _context()
    whole = _a_tree(context)
    part = FittedTree.from_json(whole)
    part = replace(part, record=replace(part.record, objective=60.0)).to_json()
    registry = JobRegistry(max_running=1, prewarm=False)
    try:
        job = Job(solve_spec(context), context, 10.0)

        def event(stage, bound, tree=None, elapsed=1.0):
            registry._apply(job, {"kind": "progress", "phase": "main", "elapsed": elapsed, "objective": 180.0,
                                  "bound": bound, "gap": 0.1, "nodes": 1, "message": "", "stage": stage,
                                  "tree": tree})

        event("fit at δ = 5.0 pp", 201.0, whole)
        event("fit at δ = 5.0 pp", 195.0, elapsed=1.5)
        job.journal_due = False
        event("half-sample refit 1 of 10", 90.0, part, elapsed=2.0)  # half the rows: their tree, their bound
        event("half-sample refit 1 of 10", 85.0, elapsed=2.5)
        main = job.phases["main"]
        assert main.tree == whole and not job.journal_due
        event("fit at the training bound 1.00 pp", 150.0, elapsed=3.0)  # every row, another training bound
        assert job.journal_due
        record = FittedTree.from_json(journal_entry(context, main).tree).record
        assert (record.bound, record.runtime) == (195.0, 3.0)  # the bound of the fit that reported the tree
    finally:
        registry.shutdown()


@pytest.fixture
def history(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    st.cache_resource.clear()
    yield RunStore(tmp_path / "runs.sqlite3")
    st.cache_resource.clear()


@pytest.mark.parametrize("reported", ["a tree", "no tree"])
def test_the_open_tab_says_the_server_went_away(history, reported):
    """The tab of a solve whose server was killed, after the server is back: the Solve page says the server
    stopped during the solve (not "Solving"), the Tree page shows its last tree, the Runs page lists it."""
    context = replace(_context(), owner="")
    main = PhaseState(history=[{"elapsed": 2.0, "objective": 180.0, "bound": 201.0, "gap": 0.1, "nodes": 3,
                                "message": ""}], tree=_a_tree(context) if reported == "a tree" else None)
    run_id = history.begin(journal_entry(context, main), "lost-job", _gone_server())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["job_id"] = "lost-job"
    at.run()
    at.session_state["session_owner"] = ""
    at.switch_page("pages/3_solve.py").run()
    assert not at.exception, at.exception
    expected = MSG_SERVER_WENT_AWAY.format(run_id=run_id) if reported == "a tree" else MSG_SERVER_WENT_AWAY_NO_TREE
    assert expected in [w.value for w in at.warning]
    assert not any("Solving" in str(b.value) for b in at.markdown)
    at.switch_page("pages/4_tree.py").run()
    assert not at.exception
    assert bool(at.get("graphviz_chart")) is (reported == "a tree")
    assert history.get(run_id).status == INTERRUPTED


@pytest.mark.soak
@pytest.mark.timing
def test_kill_9_of_the_dashboard_then_restart_the_tab_says_so(tmp_path):
    """The real thing: streamlit run, a solve in Chromium, kill -9 of the server, a new server on the same
    port: the open tab, reconnected, says the server stopped during the solve; the Runs page lists the run."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:  # pragma: no cover - depends on the machine
        pytest.skip("playwright is not installed")
    import urllib.request

    from test_browser import CHROMIUM, CHROMIUM_ARGS, free_port, long_solve_settings, nav, settle

    port = free_port()
    env = dict(os.environ, STRONGTREE_RUNS_DB=str(tmp_path / "runs.sqlite3"))

    def start() -> subprocess.Popen:
        log = open(tmp_path / f"server-{time.monotonic()}.log", "wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
             str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        return process
            except OSError:
                time.sleep(0.3)
        raise AssertionError("the server did not start")

    server = start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            expect.set_options(timeout=60_000)
            page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
            page.set_default_timeout(60_000)
            page.goto(f"http://127.0.0.1:{port}")
            page.get_by_role("button", name="Use this table").click()
            settle(page)
            long_solve_settings(page)
            nav(page, "Solve")
            page.get_by_role("button", name="Solve", exact=True).click()
            page.get_by_role("tab", name="Best tree").click()
            expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
            time.sleep(3)  # the journal's next write
            os.kill(server.pid, signal.SIGKILL)
            server.wait(30)
            os.killpg(server.pid, signal.SIGKILL)  # its solve workers, orphaned by the kill
            server = start()
            expect(page.get_by_text("The server stopped during this solve").first).to_be_visible(timeout=90_000)
            nav(page, "Runs")
            expect(page.locator('[data-testid="stTable"]').first).to_contain_text("Stopped (not proven)")
            browser.close()
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    stored = RunStore(tmp_path / "runs.sqlite3").table()
    assert stored["status"].tolist() == [INTERRUPTED]
    assert json.loads(json.dumps(stored.iloc[0].to_dict(), default=str))["bound"] is not None
