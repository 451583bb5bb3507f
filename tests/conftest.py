"""Test-wide hooks: the time each test file took (printed at the end of every run), no process
left behind, no unexpected skip in CI."""

import collections
import os
import time

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (``item.report_call``), so a fixture can
    tell whether its test failed (the browser tests then save a screenshot)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


#: Test modules that end solves early on purpose (short time limits, Stop, the local search
#: heuristic, solves measured against their limit): there a NotProvenWarning is the expected
#: outcome, not news, and is filtered.  Tests of the warning itself use pytest.warns, which
#: sees it regardless.
STOPS_EARLY = {
    "test_time_limits", "test_local_search", "test_baselines", "test_sweep", "test_studio_jobs", "test_app",
    "test_hostile_inputs", "test_comparison", "test_estimator", "test_page_learn", "test_page_tradeoffs",
    "test_worker_memory", "test_exact", "test_oracle", "test_benchmark_harness", "test_studio_views",
    "test_studio_exports", "test_thresholds", "test_quality_fairness", "test_accel", "test_cli",
}


def pytest_collection_modifyitems(items):
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rsplit(".", 1)[-1] in STOPS_EARLY:
            item.add_marker(pytest.mark.filterwarnings("ignore::strongtree_core.NotProvenWarning"))


# -- no unexpected skips in CI -----------------------------------------------------------------------------
#: The environment variable CI sets (.ci/run) so that a skip for any other reason than these fails the run:
#: a test that silently stops running (a missing package, browser or program) is a test CI lost.
STRICT_SKIPS_ENV = "STRONGTREE_FAIL_ON_UNEXPECTED_SKIPS"
#: Skips CI accepts: data that lives beside the project (not in a clean checkout), a commercial licence,
#: a race the test cannot win on a fast machine (the command finished before its Ctrl-C), and
#: scikit-learn's own opt-in check.
EXPECTED_SKIPS = (
    "shared datasets not found",
    "shared fairness",
    "the benchmark data",
    "gurobi",
    "licence",
    "the command finished loading and solving before the signal arrived",
    # scikit-learn's array-API check runs only with SCIPY_ARRAY_API=1; the estimator converts its
    # input to numpy and claims no array-API support.
    "SCIPY_ARRAY_API is not set",
)


def unexpected_skips(reports) -> list[str]:
    """``nodeid: reason`` of each skip whose reason matches none of :data:`EXPECTED_SKIPS`."""
    out = []
    for report in reports:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if not any(expected.lower() in reason.lower() for expected in EXPECTED_SKIPS):
            out.append(f"{report.nodeid}: {reason}")
    return out


def pytest_sessionfinish(session, exitstatus):
    if not os.environ.get(STRICT_SKIPS_ENV):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    found = unexpected_skips(reporter.stats.get("skipped", []) if reporter is not None else [])
    if found:
        print(f"\n{len(found)} unexpected skip(s) ({STRICT_SKIPS_ENV} is set):\n" + "\n".join(found))
        if session.exitstatus == 0:
            session.exitstatus = 1


# -- no process left behind ----------------------------------------------------------------------------------
#: Seconds the processes still there at the end get to finish on their own (a server told to stop).
GRACE_SECONDS = 10.0


def pytest_configure(config):
    from processes import RUN_MARK

    # this run's own mark (a worker of pytest-xdist has its own): every process started inherits it
    os.environ[RUN_MARK] = f"{os.getpid()}-{time.time():.0f}"


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind():
    """Fail the run when a process a test started is still alive at its end (a server, a worker, a kernel
    build): it would go on taking the machine's cores after pytest exits.  Each one is named, then killed.
    Torn down last (set up first), after every other fixture of the run; the pools the library keeps for
    reuse (loky's process workers, idle for minutes on purpose) are shut down first, and the resource
    trackers of this process end with it.  With pytest-xdist each worker checks its own."""
    yield
    import sys

    import psutil

    from processes import RUN_MARK, described, started_by_this_run

    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(reusable, "_executor", None)  # asking for one would start one
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
    if "strongtree_studio.page.services" in sys.modules:
        # the dashboard's job registry keeps a solve worker warm for the next solve; in the app's own tests
        # (AppTest, in this process) no server stops to release it: release it as the server would
        import streamlit as st

        st.cache_resource.clear()
    me = os.getpid()

    def ours() -> list:
        return [p for p in started_by_this_run(os.environ[RUN_MARK])
                if not (_ppid(p) == me and any("resource_tracker" in part for part in _cmdline(p)))]

    left = ours()
    if left:
        psutil.wait_procs(left, timeout=GRACE_SECONDS)
        left = ours()
    if not left:
        return
    named = described(left)
    for process in left:
        try:
            process.kill()
        except psutil.Error:
            pass
    pytest.fail(f"{len(named)} process(es) started by the tests still alive at the end (killed now):\n"
                + "\n".join(named), pytrace=False)


def _ppid(process) -> int | None:
    try:
        return process.ppid()
    except Exception:  # noqa: BLE001 - gone
        return None


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except Exception:  # noqa: BLE001 - gone
        return []


# -- the time each file took ---------------------------------------------------------------------------------
_FILE_SECONDS: dict[str, float] = collections.defaultdict(float)
_FILE_TESTS: collections.Counter = collections.Counter()
_STARTED = time.monotonic()


def pytest_runtest_logreport(report):
    where = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[where] += report.duration
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _FILE_TESTS[where] += 1


def pytest_terminal_summary(terminalreporter):
    """The seconds each test file took (set-up, test and tear-down of its tests), slowest first."""
    if not _FILE_SECONDS:
        return
    total = sum(_FILE_SECONDS.values())
    terminalreporter.section("seconds per test file")
    terminalreporter.write_line(f"{'seconds':>8} {'share':>6} {'tests':>6}  file")
    for where, seconds in sorted(_FILE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.1f} {100 * seconds / total:5.1f}% {_FILE_TESTS[where]:6d}  {where}")
    terminalreporter.write_line(f"{total:8.1f} {100.0:5.1f}% {sum(_FILE_TESTS.values()):6d}  all files "
                                f"({time.monotonic() - _STARTED:.0f} s from the start of the run)")


def _hand_sigint_as_a_terminal() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.fixture(autouse=True)
def _sigint_as_a_terminal_gives_it():
    """Before and after each test, SIGINT in this process is as a shell hands it to a command: Python's
    handler, not blocked.  Commands a test starts inherit both, and a Ctrl-C test needs them.  Before: a
    test run started in the background by a non-interactive shell (``pytest &``) inherits SIGINT ignored,
    and Python then installs no handler; after: a test that changed it must not pass that on."""
    _hand_sigint_as_a_terminal()
    yield
    _hand_sigint_as_a_terminal()
