"""The Learn page in a real browser: a comparison on a tiny table runs live and its table
of formulations appears, with nothing cut off at 1440x900 and at a projector's 1280x720
(screenshots ``learn_1440x900.png`` and ``learn_1280x720.png``).  Same server, browser and
page checks as tests/test_browser.py (skipped with its reason where it is)."""

import pytest
from test_browser import (  # it skips this module where there is no browser
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    PROJECTOR,
    Server,
    Visit,
    check_page,
    expect,
    nav,
    settle,
    sync_playwright,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def learn_visit(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("learn_server"))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            expect.set_options(timeout=30_000)
            session = Visit(browser, server.url, DESKTOP)
            session.page.goto(server.url)
            expect(session.page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
            yield session
            session.close()
            browser.close()
    finally:
        server.close()


def test_a_comparison_runs_and_its_table_reads_at_both_sizes(learn_visit):
    page = learn_visit.page
    nav(page, "Learn")
    rows = page.get_by_label("Rows", exact=True)
    rows.fill("40")
    rows.press("Enter")
    settle(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    # Live: the run that is going, then the table of every formulation side by side.
    expect(page.get_by_text("Solving", exact=True).first).to_be_visible(timeout=30_000)
    table = page.locator('[data-testid="stTable"]').filter(has_text="LP bound")
    expect(table).to_be_visible(timeout=60_000)
    for name in ("OCT", "BinOCT", "FlowOCT", "BendersOCT", "Exact search", "Local search"):
        expect(table.get_by_role("cell", name=name, exact=True)).to_be_visible()
    expect(table.get_by_role("cell", name="Proven optimal", exact=True).first).to_be_visible()
    expect(table.get_by_role("cell", name="Heuristic (no proof)", exact=True)).to_be_visible()
    expect(page.get_by_text("Theorem 1 on this table", exact=False)).to_be_visible()
    settle(page)
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "learn", viewport)
    assert learn_visit.outside_requests() == []
