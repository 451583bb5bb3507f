"""The Trade-offs page in a real browser: a tiny sweep runs in the background, its frontier
is drawn with proven optima marked, nothing is cut off at 1440x900 or 1280x720, and a
point's tree opens on the Tree page, from the button and by a click on the point.
Screenshots as in test_browser.py."""

import re

import pandas as pd
import pytest

from test_browser import (  # noqa: F401 (fixtures: a server, a browser and a fresh session on it)
    DESKTOP,
    PROJECTOR,
    browser,
    check_page,
    choose,
    expect,
    nav,
    served,
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
    expect(page.get_by_role("heading", name="Hiring (teaching data with planted bias)")).to_be_visible()
    nav(page, "Trade-offs")
    choose(page, "Fairness notions", "Equalized odds")
    type_in(page, "Bounds δ (percentage points)", "0, 5, 10")
    type_in(page, "Time limit per point (s)", "5")
    expect(page.get_by_text("6 points: 2 notions × 3 bounds")).to_be_visible()
    page.get_by_role("button", name="Run sweep").click()
    main = page.locator('[data-testid="stMain"]')
    # Six fair points and the same tree without a fairness constraint, for reference.
    expect(main.get_by_text("7 of 7 points solved")).to_be_visible(timeout=60_000)
    chart = main.locator('[data-testid="stPlotlyChart"]')
    # One chart: the rerun that draws it may for a moment still hold the one it replaces (two were seen once).
    expect(chart).to_have_count(1, timeout=30_000)
    expect(chart).to_be_visible()
    expect(chart.locator(".scatterlayer path.point").first).to_be_visible()
    # Six points on the training rows and six on the test rows; the tree without a constraint (a cross) and CART
    # (an open square) at each notion's gap, on both: 12 + 2 x 2 x 2.
    expect(chart.locator(".scatterlayer path.point")).to_have_count(20, timeout=30_000)
    for words in ("Statistical parity frontier", "Equalized odds frontier", "bound δ of the points",
                  "optimal over kept thresholds",  # the points over quantile cuts, in their claims' words
                  "without a fairness constraint", "CART, same depth"):
        expect(chart.locator(".legend").get_by_text(words)).to_be_visible()
    expect(main.get_by_role("button", name="Open its tree")).to_be_enabled()
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        chart.scroll_into_view_if_needed()  # the screenshot shows the frontier
        check_page(page, "tradeoffs", viewport)
    # The CSV says δ and the gaps in pp, as the page does, and what the points were learned on.
    with page.expect_download() as download:
        main.get_by_role("button", name="Table (CSV)").click()
    csv = pd.read_csv(download.value.path())
    assert {"table", "target", "protected", "fairness_bound_pp", "train_gap_pp", "train_accuracy_percent"} <= set(csv)
    assert "fairness_bound" not in csv and set(csv["protected"]) == {"gender"}
    assert sorted(csv["fairness_bound_pp"].dropna().unique()) == [0.0, 5.0, 10.0]
    main.get_by_role("button", name="Open its tree").click()
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
    # The Tree page says which point of which sweep it shows.
    origin = page.locator('[data-testid="stMain"]').get_by_text(re.compile(r"^The tree of point 0 of sweep \d+ \("))
    expect(origin).to_be_visible()
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "tree_from_point", viewport)
    # The Runs page lists the sweep beside the solves.
    nav(page, "Runs")
    expect(page.get_by_role("heading", name="Sweeps")).to_be_visible()
    expect(page.locator('[data-testid="stTable"]').filter(has_text="Sweep ").first).to_be_visible()
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "runs_sweeps", viewport)
    page.get_by_role("button", name="Open on Trade-offs").click()
    expect(page.get_by_role("heading", name="Trade-offs", exact=True)).to_be_visible()
    # A click on a point of the frontier opens its tree too.
    nav(page, "Trade-offs")
    chart = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]')
    point = chart.locator(".scatterlayer path.point").nth(1)  # point 0 lies on the majority line, which takes its hover
    expect(point).to_be_visible(timeout=30_000)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()  # plotly's drag layer lies over its markers and takes the click
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible(timeout=30_000)
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
    # Back on the page, the same point opens it again.
    nav(page, "Trade-offs")
    point = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"] .scatterlayer path.point').nth(1)
    expect(point).to_be_visible(timeout=30_000)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.get_by_role("heading", name="Tree", exact=True)).to_be_visible(timeout=30_000)
