"""Test-wide hooks."""

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (``item.report_call``), so a fixture can
    tell whether its test failed (the browser tests then save a screenshot)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
