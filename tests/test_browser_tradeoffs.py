"""The Trade-offs page in a real browser: a tiny sweep runs in the background, its frontier
is drawn with proven optima marked, nothing is cut off at 1440x900 or 1280x720, and a
point's tree opens on the Tree page, from the button and by a click on the point.
Screenshots as in test_browser.py."""

import pytest
from test_browser import (  # noqa: F401 (fixtures: a server, a browser and a fresh session on it)
    DESKTOP,
    PROJECTOR,
    browser,
    check_page,
    choose,
    expect,
    nav,
    server,
    settle,
    visit,
)

pytestmark = pytest.mark.slow


def type_in(page, label: str, text: str) -> None:
    """Type into the text or number box labelled ``label`` and commit it (Enter)."""
    settle(page)
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    box.press("Enter")
    settle(page)


def test_a_tiny_sweep_draws_its_frontier_and_opens_a_point(visit):
    page = visit.page
    page.get_by_role("button", name="Use this table").click()  # the hiring table: gender protected
    nav(page, "Trade-offs")
    choose(page, "Fairness notions", "Equalized odds")
    type_in(page, "Bounds δ (percentage points)", "0, 5, 10")
    type_in(page, "Time limit per point (s)", "5")
    expect(page.get_by_text("6 points: 2 notions × 3 bounds")).to_be_visible()
    page.get_by_role("button", name="Run sweep").click()
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("6 of 6 points solved")).to_be_visible(timeout=60_000)
    chart = main.locator('[data-testid="stPlotlyChart"]')
    expect(chart).to_be_visible()
    expect(chart.locator(".scatterlayer path.point").first).to_be_visible()
    markers = chart.locator(".scatterlayer path.point").count()
    assert markers == 12, markers  # six points on the training rows and six on the test rows
    for words in ("Statistical parity frontier", "Equalized odds frontier", "bound δ of the points", "proven optimal"):
        expect(chart.locator(".legend").get_by_text(words)).to_be_visible()
    expect(main.get_by_role("button", name="Open its tree")).to_be_enabled()
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        chart.scroll_into_view_if_needed()  # the screenshot shows the frontier
        check_page(page, "tradeoffs", viewport)
    main.get_by_role("button", name="Open its tree").click()
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible()
    expect(page.locator("svg.strongtree g.node").first).to_be_visible()
    # A click on a point of the frontier opens its tree too.
    nav(page, "Trade-offs")
    chart = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]')
    point = chart.locator(".scatterlayer path.point").first
    expect(point).to_be_visible(timeout=30_000)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()  # plotly's drag layer lies over its markers and takes the click
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible(timeout=30_000)
    expect(page.locator("svg.strongtree g.node").first).to_be_visible()
    # Back on the page, the same point opens it again.
    nav(page, "Trade-offs")
    point = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"] .scatterlayer path.point').first
    expect(point).to_be_visible(timeout=30_000)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible(timeout=30_000)
