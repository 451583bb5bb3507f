"""Test-wide hooks."""

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
