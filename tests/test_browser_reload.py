"""A reload (F5), and a tab closed and opened again, bring the work back in a real browser;
another browser (a fresh browser context: no cookie) sees none of it.

The browser's token travels only in a cookie (strongtree_studio.page.restore): the test
also checks that no page address ever carries it.
"""

from __future__ import annotations

import pytest
from test_browser import (  # it skips this module where there is no browser
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    Server,
    Visit,
    choose,
    expect,
    nav,
    settle,
    shoot,
    slide,
    solve_and_wait,
    sync_playwright,
    upload,
)

from strongtree_studio.data.demo_tables import make_hiring
from strongtree_studio.page.restore import COOKIE

pytestmark = pytest.mark.slow

TABLE = "applicants.csv"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = Server(tmp_path_factory.mktemp("reload_server"))
    yield started.url
    started.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        expect.set_options(timeout=30_000)
        yield launched
        launched.close()


def pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the select box ``label`` and wait until it shows it."""
    box = page.get_by_role("combobox", name=label, exact=True)
    for _ in range(3):
        settle(page)
        if box.input_value() == option:
            return
        box.click()
        page.get_by_role("option", name=option, exact=True).click()
    raise AssertionError(f"{label} never showed {option}")


def check_work_is_back(page, run_label: str) -> None:
    """The table, its roles and edit, the split, the model settings, the solve and the run list."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text(TABLE)).to_be_visible()
    expect(sidebar.get_by_text("protected: gender")).to_be_visible()
    nav(page, "Data")
    expect(page.get_by_role("heading", name=TABLE)).to_be_visible()
    protected = page.get_by_role("combobox", name="Protected attribute(s)")
    expect(page.locator('[data-testid="stMultiSelect"]').filter(has=protected).get_by_text("gender")).to_be_visible()
    page.get_by_role("tab", name="Types & labels").click()
    expect(page.get_by_text("Edited columns:")).to_be_visible()
    expect(page.get_by_text("gender (", exact=False).first).to_be_visible()
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Test share").get_by_role("slider")
    expect(slider).to_have_attribute("aria-valuetext", "0.30")
    nav(page, "Model")
    depth = page.locator('[data-testid="stSlider"]').filter(has_text="Maximum depth").get_by_role("slider")
    expect(depth).to_have_attribute("aria-valuetext", "3")
    expect(page.get_by_label("Time limit (seconds)", exact=True)).to_have_value("17")
    nav(page, "Solve")
    banner = page.locator('[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentInfo"], '
                          '[data-testid="stAlertContentWarning"]').filter(
        has_text="best tree")
    expect(banner.first).to_contain_text(run_label)
    nav(page, "Tree")
    expect(page.locator('[data-testid="stGraphVizChart"] svg g.node').first).to_be_visible()
    nav(page, "Fairness & performance")
    page.get_by_role("tab", name="Confusion matrices").click()
    shown = page.locator('[data-testid="stMain"]').get_by_text("woman", exact=True).filter(visible=True)
    expect(shown.first).to_be_visible()  # the value label applied
    nav(page, "Runs")
    expect(page.locator('[data-testid="stTable"]').get_by_text(TABLE).first).to_be_visible()


def test_reload_and_reopen_bring_the_work_back_and_another_browser_sees_none(server, browser):
    visit = Visit(browser, server, DESKTOP)
    try:
        page = visit.page
        page.goto(server)
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        upload(page, TABLE, make_hiring(300, seed=5))
        choose(page, "Protected attribute(s)", "gender")
        page.get_by_role("tab", name="Types & labels").click()
        pick(page, "Column", "gender")
        page.get_by_role("textbox", name="female", exact=True).fill("woman")
        page.get_by_role("button", name="Apply to the table").click()
        expect(page.get_by_text("Edited columns:")).to_be_visible()
        settle(page)
        slide(page, "Test share", "0.30", "ArrowRight")
        nav(page, "Model")
        slide(page, "Maximum depth", "3", "ArrowRight")
        limit = page.get_by_label("Time limit (seconds)", exact=True)
        limit.fill("17")
        limit.press("Enter")
        settle(page)
        choose(page, "Fairness notions", "Statistical parity")
        banner = solve_and_wait(page)
        run_label = banner.split("·")[1].strip()  # "run 1"
        assert run_label.startswith("run "), banner

        cookies = {c["name"]: c for c in visit.context.cookies()}
        token = cookies[COOKIE]["value"]
        assert cookies[COOKIE]["sameSite"] == "Strict" and cookies[COOKIE]["expires"] > 0

        page.reload()  # F5 on the Solve page
        expect(page.get_by_role("heading", name="Solve", exact=True)).to_be_visible()
        check_work_is_back(page, run_label)
        shoot(page, "reload_runs_1440x900")

        page.close()  # the tab closed, and opened again on the app's address
        visit.page = visit.context.new_page()
        visit.page.goto(server)
        expect(visit.page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        check_work_is_back(visit.page, run_label)
        assert not [u for u in visit.requests if token in u]  # the token is never in an address
    except Exception:
        shoot(visit.page, "failure_reload")
        raise
    finally:
        visit.close()

    stranger = Visit(browser, server, DESKTOP)  # another browser: no cookie
    try:
        page = stranger.page
        page.goto(server)
        expect(page.get_by_text("Choose a built-in table or upload one to begin")).to_be_visible()
        expect(page.locator('[data-testid="stSidebar"]').get_by_text("No table yet")).to_be_visible()
        nav(page, "Runs")
        expect(page.get_by_text("No runs yet")).to_be_visible()
        nav(page, "Solve")
        expect(page.get_by_text("Choose a table on the Data page first")).to_be_visible()
        assert {c["name"]: c["value"] for c in stranger.context.cookies()}[COOKIE] != token
    finally:
        stranger.close()
