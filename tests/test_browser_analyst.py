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
    server,
    settle,
    shoot,
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

pytestmark = pytest.mark.skipif(not COMPAS.exists(), reason="needs ../shared/datasets/fairness/compas")


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
        check_page(page, "data_codebook", viewport)
    page.get_by_role("button", name="Undo the last change").click()
    settle(page)
    expect(main.get_by_text("Edited columns:")).to_have_count(0)
    expect(page.get_by_role("button", name="Undo the last change")).to_be_disabled()
    assert GLUED.findall(main_text(page)) == []
