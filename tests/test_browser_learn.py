"""The Learn page in a real browser: Compare pressed with the defaults (the first preset)
runs live, its table of formulations appears, Theorem 1 shows on it (FlowOCT's LP bound
tighter than OCT's and BinOCT's by at least 2 % of the rows), with nothing cut off at
1440x900 and at a projector's 1280x720 (screenshots ``learn_1440x900.png`` and
``learn_1280x720.png``).  Same server, browser and page checks as tests/test_browser.py
(skipped with its reason where it is)."""

import re

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


#: The least difference, in % of the rows, the default preset must show between the LP bounds.
VISIBLY_TIGHTER = 2.0


def test_compare_with_the_defaults_shows_theorem_1_and_its_table_reads_at_both_sizes(learn_visit):
    page = learn_visit.page
    nav(page, "Learn")
    expect(page.get_by_text("Preset: FlowOCT's relaxation is tighter.", exact=False)).to_be_visible()
    page.get_by_role("button", name="Compare", exact=True).click()
    # Live: the run that is going, then the table of every formulation side by side.
    expect(page.get_by_text("Solving", exact=True).first).to_be_visible(timeout=30_000)
    table = page.locator('[data-testid="stTable"]').filter(has_text="LP bound")
    expect(table).to_be_visible(timeout=60_000)
    for name in ("OCT", "BinOCT", "FlowOCT", "BendersOCT", "Exact search", "Local search"):
        expect(table.get_by_role("cell", name=name, exact=True)).to_be_visible()
    expect(table.get_by_role("cell", name="Proven optimal", exact=True).first).to_be_visible()
    expect(table.get_by_role("cell", name="Heuristic (no proof)", exact=True)).to_be_visible()
    theorem = page.get_by_text("Theorem 1 on this table", exact=False)
    expect(theorem).to_be_visible()
    sentence = theorem.inner_text()
    for name in ("OCT", "BinOCT"):
        found = re.search(rf"tighter than {name}'s \(([\d.,]+)\) by ([\d.,]+) \(([\d.]+) ?% of the 200 rows\)", sentence)
        assert found, sentence
        assert float(found.group(3)) >= VISIBLY_TIGHTER, sentence
    # The root LP drawn: the split values side by side, one row's flow, OCT's big-M rows, in words.
    expect(page.get_by_text("The root LP, drawn", exact=True)).to_be_visible()
    expect(page.get_by_text("FlowOCT: the row's flow, source to sink", exact=True)).to_be_visible()
    expect(page.get_by_text("That is Theorem 1 at work", exact=False)).to_be_visible()
    expect(page.get_by_role("button", name="Table as CSV")).to_be_visible()
    expect(page.get_by_role("button", name="Table as LaTeX")).to_be_visible()
    settle(page)
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "learn", viewport)
    assert learn_visit.outside_requests() == []
