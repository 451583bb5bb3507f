"""Every page can be the first thing a session opens (a bookmark, a shared link, a tab
reconnecting after a restart), under either of Streamlit's routers.

The page scripts sit in ``pages/`` beside the main script, so Streamlit's old pages-folder router
runs a page's script alone when its address is a fresh server's first request (see
/work/shared/notes/STREAMLIT.md).  Each page script therefore does its own set-up
(``strongtree_studio.page.show``) and these tests keep them thin, named as the navigation names
them.  The same entrance on a fresh server with both cores busy is checked in a browser by
tests/test_browser_entrances.py (8 addresses x 3 fresh servers, reported in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from strongtree_studio.page.navigation import screen
from strongtree_studio.views.explain import MSG_NO_RUNS, MSG_NO_TABLE, MSG_SOLVE_NO_TABLE
from strongtree_studio.page.navigation import NAMES, PAGE_FOLDER, SCREENS
from strongtree_studio.page.shown import MSG_NO_TREE

ROOT = Path(__file__).resolve().parents[1]
#: Every script Streamlit may be given as the main script.
MAIN_SCRIPTS = (ROOT / "app.py", ROOT / "strongtree_studio" / "entry" / "app.py")
NO_TABLE_SIDEBAR = "No table yet: choose one on the **Data** page."
#: Page -> what it says before a table is chosen (in the page, or in the sidebar every page shares).
FIRST_WORDS = {
    "data": MSG_NO_TABLE,
    "model": NO_TABLE_SIDEBAR,
    "solve": MSG_SOLVE_NO_TABLE,
    "tree": MSG_NO_TREE,
    "fairness": MSG_NO_TREE,
    "tradeoffs": "Choose a table with a protected attribute on the Data page first: a sweep measures fairness "
                 "between its groups.",
    "runs": MSG_NO_RUNS,
    "learn": NO_TABLE_SIDEBAR,
}


@pytest.mark.parametrize("main", MAIN_SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_scripts_sit_beside_every_main_script(main):
    """Both main scripts (the checkout's and the wheel's) have the same pages/ beside them: the one the navigation uses."""
    assert main.is_file()
    assert (main.parent / "pages").resolve() == PAGE_FOLDER == (ROOT / "pages").resolve()
    assert sorted(p.name for p in PAGE_FOLDER.glob("*.py")) == [f"{i}_{name}.py" for i, name in enumerate(NAMES, 1)]


@pytest.mark.parametrize("name", NAMES)
def test_every_page_script_sets_itself_up_and_calls_its_screen(name):
    """Two statements: import show, show("<its name>"); so the old router, running it alone, draws the whole page."""
    tree = ast.parse(Path(screen(name)).read_text(encoding="utf-8"))
    first, second = tree.body
    assert isinstance(first, ast.ImportFrom) and first.module == "strongtree_studio.page"
    assert [alias.name for alias in first.names] == ["show"]
    call = second.value
    assert call.func.id == "show" and [arg.value for arg in call.args] == [name]


def test_every_screen_is_a_page_of_the_navigation_and_nothing_else_is():
    """Each screen has its page (and its address is the page file's name without its number)."""
    assert sorted(p.stem for p in SCREENS.glob("*.py")) == sorted(NAMES) == sorted(FIRST_WORDS)
    assert [Path(screen(name)).stem.split("_", 1) for name in NAMES] == [[str(i), n] for i, n in enumerate(NAMES, 1)]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("STRONGTREE_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.mark.parametrize("page", list(FIRST_WORDS))
def test_a_page_opened_first_without_a_table_says_what_to_do(page, fresh):
    """The page shows itself and says what to do (in the page, or the sidebar's 'No table yet'), no error."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()  # the entrypoint's first run (AppTest needs it before a page switch)
    at.switch_page(screen(page)).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    shown = [m.value for m in [*at.info, *at.markdown, *at.sidebar.markdown]]
    assert FIRST_WORDS[page] in shown, shown
