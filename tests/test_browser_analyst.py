"""The analyst's path in a real browser, on COMPAS: a codebook names every coded column at once
(and is undone), the groups are summarised before solving, the tree is summarised in sentences,
the cost of fairness is one number, and the report opens offline from file:// with nothing
fetched.  Screenshots at 1440x900 and 1280x720 as in test_browser.py."""

import re
from pathlib import Path

import pytest

from test_browser import (  # noqa: F401 (fixtures: a server, a browser and a fresh session on it)
    DESKTOP,
    PROJECTOR,
    browser,
    check_page,
    choose,
    expect,
    main_text,
    nav,
    served,
    server,
    settle,
    shoot,
    slide,
    solve_and_wait,
    visit,
)

ROOT = Path(__file__).resolve().parents[1]
COMPAS = ROOT.parent / "shared" / "datasets" / "fairness" / "compas" / "compas.csv"
BOOK = """column,code,label
race,1,African-American
race,2,Caucasian
race,3,Hispanic
race,4,Other
target,1,no recidivism
target,2,recidivism
"""
#: A class name (a code) right before a count, as in "1 225 · 2 525".
GLUED = re.compile(r"(?<![\d,.:])\b\d+ \d{3}\b")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not COMPAS.exists(), reason="needs ../shared/datasets/fairness/compas")]


def upload_compas(page) -> None:
    page.get_by_role("tab", name="Upload a file").click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(COMPAS))
    expect(page.get_by_role("heading", name="compas.csv")).to_be_visible()
    settle(page)


def apply_book(page, text: str) -> None:
    page.get_by_role("tab", name="Types & labels").click()
    expander = page.get_by_text("Codebook: name the codes of every column at once")
    if not page.get_by_role("button", name="Apply codebook").is_visible():
        expander.click()
    box = page.get_by_label("Or paste it here")
    box.fill(text)
    box.press("Control+Enter")
    settle(page)
    page.get_by_role("button", name="Apply codebook").click()
    settle(page)


def test_a_codebook_names_compas_at_once_and_is_undone(visit):
    page = visit.page
    upload_compas(page)
    apply_book(page, BOOK)
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("Named the codes of 2 columns: race, target.")).to_be_visible()
    expect(main.get_by_text("Edited columns:")).to_be_visible()
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        main.get_by_text("Named the codes of 2 columns").evaluate("e => e.scrollIntoView({block: 'center'})")
        check_page(page, "data_codebook", viewport)
    page.get_by_role("button", name="Undo the last change").click()
    settle(page)
    expect(main.get_by_text("Edited columns:")).to_have_count(0)
    expect(page.get_by_role("button", name="Undo the last change")).to_be_disabled()
    assert GLUED.findall(main_text(page)) == []


def test_the_groups_are_summarised_before_solving(visit):
    page = visit.page
    upload_compas(page)
    apply_book(page, BOOK)
    choose(page, "Protected attribute(s)", "race")
    main = page.locator('[data-testid="stMain"]')
    heading = main.get_by_role("heading", name="Protected groups")
    expect(heading).to_be_visible()
    table = main.locator('[data-testid="stTable"]').filter(has_text="training rows").first
    for group in ("African-American", "Caucasian", "Hispanic", "Other"):
        expect(table.get_by_text(group, exact=True)).to_be_visible()
    expect(main.get_by_text("4 groups: the largest is African-American")).to_be_visible()
    expect(main.get_by_text("fewer than 30")).to_be_visible()  # the threshold is said
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        heading.scroll_into_view_if_needed()
        check_page(page, "data_groups", viewport)
    assert GLUED.findall(main_text(page)) == []


def test_a_fair_compas_tree_is_told_in_words_its_cost_in_one_number_and_reported(visit, browser, tmp_path):
    """COMPAS with its codes named, race protected, depth 2 with statistical parity at 5 pp."""
    page = visit.page
    upload_compas(page)
    apply_book(page, BOOK)
    choose(page, "Protected attribute(s)", "race")
    nav(page, "Model")
    choose(page, "Fairness notions", "Statistical parity")
    solve_and_wait(page)
    nav(page, "Tree")
    main = page.locator('[data-testid="stMain"]')
    heading = main.get_by_role("heading", name="The tree in words")
    expect(heading).to_be_visible()
    words = main.locator("li").filter(has_text="The tree predicts target from")
    expect(words).to_be_visible()
    expect(main.locator("li").filter(has_text=re.compile(r"^Rows .* are predicted "))).not_to_have_count(0)
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        heading.evaluate("e => e.scrollIntoView()")
        check_page(page, "tree_words", viewport)
    text = main_text(page)
    assert GLUED.findall(text) == [], GLUED.findall(text)
    drawn = page.locator('[data-testid="stGraphVizChart"] svg').first.text_content()
    assert "no recidivism: " in drawn  # class apart from its count

    nav(page, "Fairness & performance")
    page.get_by_role("tab", name="Cost of fairness").click()
    for label in ("Cost of fairness", "Cost of readability", "Above the majority class"):
        expect(main.locator('[data-testid="stMetric"]').filter(has_text=label)).to_be_visible()
    headline = main.get_by_text(re.compile(r"^On the test rows, fairness costs"))
    expect(headline).to_be_visible()
    assert re.search(r"readability costs (nothing|no accuracy|\d+\.\d points?)", headline.inner_text())
    table = main.locator('[data-testid="stTable"]').filter(has_text="logistic regression (not a tree)")
    expect(table).to_be_visible()
    expect(table.get_by_text("majority class", exact=True)).to_be_visible()
    for viewport in (DESKTOP, PROJECTOR):
        page.set_viewport_size(viewport)
        main.locator('[data-testid="stMetric"]').first.evaluate("e => e.scrollIntoView()")
        check_page(page, "fairness_cost", viewport)

    # The report: one click, then opened from file:// with the network cut off.
    nav(page, "Fairness & performance")
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Report (HTML)").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.name == "report-compas-run-1.html"
    open_report_offline(browser, path, headline.inner_text().splitlines()[0])


def open_report_offline(browser, path: Path, headline: str) -> None:
    """The report from disk, every request recorded and any that leaves the file refused; screenshots and a PDF."""
    context = browser.new_context(viewport=DESKTOP)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
    context.set_offline(True)
    report = context.new_page()
    report.goto(path.as_uri())
    expect(report.get_by_role("heading", name="At a glance")).to_be_visible()
    assert report.title().startswith("compas.csv: a fair decision tree of depth 2")
    for words in ("The table and its groups", "Settings", "The certificate", "The tree", "Each group's rates",
                  "The cost of fairness"):
        expect(report.get_by_role("heading", name=words, exact=True)).to_be_visible()
    body = report.locator("body").inner_text()
    assert headline in body  # the same cost as the Fairness page
    assert "African-American" in body and "no recidivism" in body and GLUED.findall(body) == []
    drawing = report.locator(".drawing svg")
    expect(drawing).to_be_visible()
    box = drawing.bounding_box()
    assert box["width"] > 200 and box["height"] > 100
    for viewport in (DESKTOP, PROJECTOR):
        report.set_viewport_size(viewport)
        report.evaluate("window.scrollTo(0, 0)")
        shoot(report, f"report_{viewport['width']}x{viewport['height']}")
        report.locator("#tree h2").evaluate("e => e.scrollIntoView()")
        shoot(report, f"report_tree_{viewport['width']}x{viewport['height']}")
        report.locator("#cost h2").evaluate("e => e.scrollIntoView()")
        shoot(report, f"report_cost_{viewport['width']}x{viewport['height']}")
        overflow = report.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (viewport, overflow)  # nothing wider than the window
        panel, tree = report.locator(".drawing").bounding_box(), drawing.bounding_box()
        assert panel["x"] <= tree["x"] and tree["x"] + tree["width"] <= panel["x"] + panel["width"] + 0.5, (panel, tree)
    pdf = report.pdf(format="A4", print_background=True)
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert pdf.startswith(b"%PDF") and pages >= 4, pages  # the tree, the rates and the cost each start a page
    outside = [u for u in requests if not u.startswith("file://")]
    assert outside == [], outside
    assert requests == [path.as_uri()], requests  # the page itself, nothing else
    context.close()


def test_the_small_words_read_plainly(visit):
    """Column types and the encoding in words, conditional parity only with a legitimate factor, and the examples
    speaking of every group when there are more than two."""
    page = visit.page
    upload_compas(page)
    apply_book(page, BOOK)
    choose(page, "Protected attribute(s)", "race")
    main = page.locator('[data-testid="stMain"]')
    page.get_by_role("tab", name="Encoding").click()  # (the grids are drawn on a canvas: AppTest reads their cells)
    settle(page)
    expect(main.get_by_text("questions in total")).to_be_visible()
    text = main_text(page)
    for jargon in ("object", "int64", "n_binary", "thermometer", "coding)"):
        assert jargon not in text, jargon
    nav(page, "Model")
    expect(main.get_by_text("Conditional statistical parity is offered once a legitimate factor")).to_be_visible()
    box = page.get_by_role("combobox", name="Fairness notions", exact=True)
    box.click()
    options = page.get_by_role("option").all_inner_texts()
    box.press("Escape")
    assert "Statistical parity" in options and "Conditional statistical parity" not in options, options
    example = main.get_by_text(re.compile(r"between 35% and 45% of the rows of every other group \(Caucasian, "
                                          r"Hispanic and Other\) must be, and all within 5 percentage points"))
    expect(example.first).to_be_visible()
    assert "whose the" not in main_text(page)
    for viewport in (DESKTOP, PROJECTOR):
        check_page(page, "model_words", viewport)
